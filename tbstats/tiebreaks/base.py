"""What kernels share: exact values, the per-batch context with its caches, and row-wise cut helpers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tbstats.dense import Dense
from tbstats.rules import get_ruleset
from tbstats.spec import TieBreakSpec
from tbstats.unplayed import Elements, apply_rules, categories, fore_view

_BIG = np.iinfo(np.int64).max // 4


@dataclass(frozen=True)
class Values:
    """One tie-break value per player, exact: ``num / den``; ``defined`` False means undefined (null).

    Within a tournament all players share ``den``, so ranking compares ``num`` directly.
    """

    num: np.ndarray      # int64
    den: np.ndarray      # int64, per player
    defined: np.ndarray  # bool

    def as_float(self) -> np.ndarray:
        """Decimal values for output (exact for the usual scales), NaN when undefined."""
        out = self.num / self.den
        return np.where(self.defined, out, np.nan)


def round_half_up(num: np.ndarray, den: np.ndarray | int) -> np.ndarray:
    """``num / den`` rounded to the nearest integer, .5 up, for non-negative and negative values alike."""
    return np.floor_divide(2 * num + den, 2 * np.asarray(den))


@dataclass
class Context:
    """A batch's dense view plus caches, so that each edition's stage and each spec run once."""

    dense: Dense
    edition_of: np.ndarray                 # [T] resolved edition name per tournament (for 'auto')
    unrated_rating: int | None = None
    lots_seed: int = 0                      # the seed of the drawing of lots (LOTS)
    _elements: dict[tuple[str, bool], Elements] = field(default_factory=dict)
    _values: dict[tuple[str, str], Values] = field(default_factory=dict)
    _fore: Dense | None = None
    _categories: dict[bool, np.ndarray] = field(default_factory=dict)
    #: rankings per configuration (filled by :func:`tbstats.compare.standings`)
    standings_cache: dict[str, object] = field(default_factory=dict)

    def fore(self) -> Dense:
        if self._fore is None:
            self._fore = fore_view(self.dense)
        return self._fore

    def elements(self, edition: str, fore: bool = False) -> Elements:
        """The unplayed-round stage of ``edition`` (on the Fore Buchholz view when ``fore``), cached."""
        key = (edition, fore)
        if key not in self._elements:
            dense = self.fore() if fore else self.dense
            if fore not in self._categories:
                self._categories[fore] = categories(dense)
            self._elements[key] = apply_rules(dense, get_ruleset(edition), self._categories[fore])
        return self._elements[key]

    def values(self, spec: TieBreakSpec, edition: str,
               kernel: Callable[[Context, TieBreakSpec, str], Values]) -> Values:
        """Values of ``spec`` under ``edition`` ('auto' picks each tournament's own edition), cached."""
        edition = spec.edition or edition
        key = (str(spec.without_edition()), edition)
        if key in self._values:
            return self._values[key]
        if edition == "auto":
            per_player = self.edition_of[self.dense.tix]
            parts = {e: self.values(spec.without_edition(), str(e), kernel) for e in np.unique(self.edition_of)}
            num = np.zeros(self.dense.players, dtype=np.int64)
            den = np.ones(self.dense.players, dtype=np.int64)
            defined = np.zeros(self.dense.players, dtype=bool)
            for e, v in parts.items():
                rows = per_player == e
                num[rows], den[rows], defined[rows] = v.num[rows], v.den[rows], v.defined[rows]
            result = Values(num, den, defined)
        else:
            result = kernel(self, spec, edition)
        self._values[key] = result
        return result

    def unit(self, power: int = 1) -> np.ndarray:
        """Per-player denominator of points (``scale``), squared for products of points."""
        return self.dense.per_player(self.dense.scale) ** power


# ----------------------------------------------------------------------------------- row-wise selection

def pick(mask: np.ndarray, keys: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise lexicographic arg-min of ``keys`` over ``mask``; ties go to the earliest column.

    Returns (column index, row has a candidate). The keys are folded into one int64 when their ranges
    allow it (one masked arg-min), else compared one after the other.
    """
    has = np.asarray(mask.any(axis=1), dtype=bool)
    combined = np.zeros(mask.shape, dtype=np.int64)
    span = 1
    for key in keys:
        lo, hi = (int(key.min()), int(key.max())) if key.size else (0, 0)
        width = hi - lo + 1
        if span * width >= _BIG // 4:
            return _pick_lexicographic(mask, keys), has
        combined = combined * width + (key - lo)
        span *= width
    return np.where(mask, combined, _BIG).argmin(axis=1), has


def _pick_lexicographic(mask: np.ndarray, keys: list[np.ndarray]) -> np.ndarray:
    cand = mask.copy()
    for key in keys:
        vals = np.where(cand, key, _BIG)
        cand &= vals == vals.min(axis=1, keepdims=True)
    return cand.argmax(axis=1)


#: Why an element was cut (explain): the least significant value, a VUR cut first (16.5), the most significant.
CUT_LOWEST, CUT_VUR, CUT_HIGHEST = 1, 2, 3


def cut_order(present: np.ndarray, contribution: np.ndarray, oppscore: np.ndarray, vur: np.ndarray,
              low: int, high: int, by_oppscore: bool) -> tuple[np.ndarray, np.ndarray]:
    """Which elements ``low`` least and ``high`` most significant cuts remove, in order (C.07 14, 16.5).

    Least significant value: the lowest contribution (BH), or the contribution of the lowest-scored
    opponent (SB: ``by_oppscore``); ties prefer a VUR element, then the earliest round. When the player
    still has a VUR element and the LSV is not one, the lowest VUR contribution is cut instead as long as
    it is not lower than the LSV (16.5.1, 16.5.2). High cuts remove the most significant value.
    Returns ``columns`` and ``reasons`` of shape [P, low + high]; reason 0 means nothing was left to cut.
    """
    keep = present.copy()
    rows = np.arange(present.shape[0])
    not_vur = (~vur).astype(np.int64)
    columns = np.zeros((present.shape[0], low + high), dtype=np.int64)
    reasons = np.zeros((present.shape[0], low + high), dtype=np.int8)
    any_vur = bool(vur.any())
    for step in range(low + high):
        if step < low:
            keys = [oppscore, contribution, not_vur] if by_oppscore else [contribution, not_vur]
            lsv, has = pick(keep, keys)
            if any_vur:
                v, has_vur = pick(keep & vur, [contribution, oppscore])
                use_v = has_vur & ~vur[rows, lsv] & (contribution[rows, v] >= contribution[rows, lsv])
            else:
                v, use_v = lsv, np.zeros(len(rows), dtype=bool)
            col = np.where(use_v, v, lsv)
            reason = np.where(use_v, CUT_VUR, CUT_LOWEST)
        else:
            col, has = pick(keep, [-oppscore, -contribution] if by_oppscore else [-contribution])
            reason = np.full(len(rows), CUT_HIGHEST)
        keep[rows[has], col[has]] = False
        columns[:, step] = col
        reasons[:, step] = np.where(has, reason, 0)
    return columns, reasons


def cut_elements(present: np.ndarray, contribution: np.ndarray, oppscore: np.ndarray, vur: np.ndarray,
                 low: int, high: int, by_oppscore: bool) -> np.ndarray:
    """The element mask left after the cuts of :func:`cut_order`."""
    keep = present.copy()
    if low + high == 0:
        return keep
    columns, reasons = cut_order(present, contribution, oppscore, vur, low, high, by_oppscore)
    rows = np.repeat(np.arange(present.shape[0]), low + high).reshape(columns.shape)
    done = reasons > 0
    keep[rows[done], columns[done]] = False
    return keep
