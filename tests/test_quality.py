"""The type checker and the linter are part of the test run (pyproject.toml configures both)."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from helpers import ROOT


@pytest.mark.parametrize("command", [
    [sys.executable, "-m", "mypy"],
    [sys.executable, "-m", "ruff", "check", "tbstats", "tests", "benchmarks", "setup.py"],
])
def test_clean(command: list[str]) -> None:
    if shutil.which(command[0]) is None:  # pragma: no cover - the interpreter itself is always there
        pytest.fail(f"{command[0]} not found")
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_import_stays_light() -> None:
    """Importing the library does not pull in plotting or progress-bar packages."""
    code = ("import sys, tbstats.engine.compute, tbstats.io.trf; "
            "print(','.join(m for m in ('matplotlib', 'tqdm') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""
