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


def test_two_versions_side_by_side(tmp_path: Path) -> None:
    """benchmarks/ab.py runs the last commit and the working tree in alternating rounds, with their outputs
    compared (the same code here: byte-identical), and refuses revisions it cannot run."""
    ab = [sys.executable, str(ROOT / "benchmarks" / "ab.py")]
    done = subprocess.run([*ab, "HEAD", "--rounds", "2", "--", "compute", str(ROOT / "data" / "examples"), "-t", "BH",
                           "--rules", "fide-2026", "-o", "{out}.csv"], cwd=tmp_path,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    rows = [line.split(" | ")[0].lstrip("| ") for line in done.stdout.splitlines() if line.startswith("| ")]
    assert rows == ["version", "HEAD", "working tree", "new / old"]
    assert "2 alternating rounds" in done.stdout and "byte-identical in every round" in done.stdout
    assert not list(tmp_path.iterdir())   # written in the tool's own directory, and removed
    bad = subprocess.run([*ab, "no-such-revision", "--rounds", "1", "--", "compute", str(ROOT / "data" / "examples")],
                         capture_output=True, text=True, check=False)
    assert bad.returncode != 0 and "no-such-revision" in bad.stderr
