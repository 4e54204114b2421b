"""Smoke test of the benchmark suite: a tiny run completes and writes nothing (its figures are never checked)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT


@pytest.mark.parametrize("archive", ["mix", "club", "uniform"])
def test_tiny_benchmark_run_completes(tmp_path: Path, archive: str) -> None:
    results = tmp_path / "RESULTS.md"
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick", "--sizes", "12", "--no-shapes",
         "--no-peers", "--stages", "dense,standings", "--repeat", "1", "--workdir", str(tmp_path / "work"),
         "--no-write", "--results", str(results), *([] if archive == "mix" else [f"--{archive}"])],
        capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    table = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    stages = [line.split(" | ")[0].lstrip("| ") for line in table]
    assert stages[1:] == ["ingest (CLI)", "dense view", "standings"]
    meta = json.loads((tmp_path / "work" / ("size-12" if archive == "uniform" else f"{archive}-12") / "meta.json"
                        ).read_text())
    if archive == "uniform":
        assert meta["game_rows"] == 12 * 25 * 9
    else:
        assert meta["profile"] == archive
    assert all(f"| 12 | {meta['game_rows']:,} |" in line for line in table[1:])
    heading = next(line for line in done.stdout.splitlines() if line.startswith("### Stages by archive size"))
    assert (f"{archive} archive" in heading) == (archive != "uniform")
    assert not results.exists()
