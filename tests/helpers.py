"""Shared test helpers: where the read-only reference material lives, small loaders, and the element mask that
the engine's cut order leaves (the reference of the compiled cuts)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tbstats.engine.tiebreaks.base import cut_order
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


def cut_elements(present: np.ndarray, contribution: np.ndarray, oppscore: np.ndarray, vur: np.ndarray,
                 low: int, high: int, by_oppscore: bool) -> np.ndarray:
    """The element mask left after the cuts of :func:`tbstats.engine.tiebreaks.base.cut_order` (``present`` itself
    without cuts), element by element: what the compiled cuts of ``cut_sum`` must leave."""
    if low + high == 0:
        return present
    keep = present.copy()
    columns, reasons = cut_order(present, contribution, oppscore, vur, low, high, by_oppscore)
    rows = np.repeat(np.arange(present.shape[0]), low + high).reshape(columns.shape)
    done = reasons > 0
    keep[rows[done], columns[done]] = False
    return keep
