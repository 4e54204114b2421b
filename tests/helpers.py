"""Shared test helpers: where the read-only reference material lives, and small loaders."""

from __future__ import annotations

from pathlib import Path

import pytest

from tbstats.io.trf import read_trf
from tbstats.model.batch import Batch

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
FIXTURES = SHARED / "data" / "fixtures"
REAL = SHARED / "data" / "trf"


def requires_shared() -> pytest.MarkDecorator:
    return pytest.mark.skipif(not SHARED.is_dir(), reason="../shared (reference data) is not beside the checkout")


def load_trf(path: Path) -> Batch:
    result = read_trf([(str(path), path.read_bytes())])
    assert result.errors.is_empty(), result.errors
    return result.batch
