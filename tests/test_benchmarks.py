"""Smoke test of the benchmark suite: a tiny run completes and writes nothing (its figures are never checked)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from helpers import ROOT


def test_tiny_benchmark_run_completes(tmp_path: Path) -> None:
    results = tmp_path / "RESULTS.md"
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick", "--sizes", "12", "--no-shapes",
         "--no-peers", "--stages", "dense,standings", "--repeat", "1", "--workdir", str(tmp_path / "work"),
         "--no-write", "--results", str(results)],
        capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    table = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    stages = [line.split(" | ")[0].lstrip("| ") for line in table]
    assert stages[1:] == ["ingest (CLI)", "dense view", "standings"]
    assert all(f"| 12 | {12 * 25 * 9:,} |" in line for line in table[1:])
    assert not results.exists()
