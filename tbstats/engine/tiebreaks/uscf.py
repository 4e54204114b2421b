"""US Chess rule 34E tie-breaks (rules.md Section 6); each carries the ``uscf`` unplayed-round rules."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tbstats.engine.tiebreaks.base import Context, Values
from tbstats.engine.tiebreaks.results import progressive
from tbstats.model.dense import DRAW, LOSS, WIN
from tbstats.model.grid import row_sum
from tbstats.model.spec import TieBreakSpec

US = "uscf"


def _solkoff_sums(ctx: Context) -> Callable[[np.ndarray | int, np.ndarray | int], np.ndarray]:
    """``sums(low, high)``: per player, the sum of its Solkoff elements (adjusted opponent scores, own unplayed
    rounds as 0) less its ``low`` lowest and then its ``high`` highest (per player or for all; fewer when it
    has fewer; 34E has no VUR preferences). One sort of each row and its running sums serve every cut that
    USCF-MM and USCF-MEDIAN make: the sum left is the same whichever of equal values a cut takes."""
    el = ctx.elements(US)
    present, values = el.present, el.oppscore
    P, R = present.shape
    count = row_sum(present)
    ordered = np.sort(np.where(present, values, np.iinfo(values.dtype).max), axis=1).astype(np.int64)
    ordered[np.arange(R)[None, :] >= count[:, None]] = 0   # absent elements sort last: nothing to add
    running = np.zeros((P, R + 1), dtype=np.int64)        # column j: the sum of the j lowest
    np.cumsum(ordered, axis=1, out=running[:, 1:])
    rows = np.arange(P)

    def sums(low: np.ndarray | int, high: np.ndarray | int) -> np.ndarray:
        lowest = np.minimum(low, count)
        out: np.ndarray = running[rows, count - np.minimum(high, count - lowest)] - running[rows, lowest]
        return out

    return sums


def _cuts(ctx: Context) -> np.ndarray:
    """Two cuts instead of one from 9 rounds on (34E1, 34E4)."""
    return np.where(ctx.dense.per_player(ctx.dense.n) >= 9, 2, 1)


def solkoff(ctx: Context, spec: TieBreakSpec, edition: str) -> Values:
    """USCF-SOLKOFF (34E2): sum of adjusted opponent scores, own unplayed rounds as 0."""
    el = ctx.elements(US)
    return Values(row_sum(el.oppscore, el.present), ctx.unit(), ctx.everyone())


def median(ctx: Context, spec: TieBreakSpec, edition: str) -> Values:
    """USCF-MEDIAN (34E4): Solkoff less the highest and lowest (two of each from 9 rounds)."""
    k = _cuts(ctx)
    return Values(_solkoff_sums(ctx)(k, k), ctx.unit(), ctx.everyone())


def modified_median(ctx: Context, spec: TieBreakSpec, edition: str) -> Values:
    """USCF-MM (34E1): plus score drops the lowest, even score both, minus score the highest (x2 from 9 rounds)."""
    d = ctx.dense
    doubled, half_max = 2 * ctx.elements(US).score, d.per_player(d.n * d.W)
    k, sums = _cuts(ctx), _solkoff_sums(ctx)
    value = np.where(doubled > half_max, sums(k, 0), np.where(doubled == half_max, sums(k, k), sums(0, k)))
    return Values(value, ctx.unit(), ctx.everyone())


def cumulative(ctx: Context, spec: TieBreakSpec, edition: str) -> Values:
    """USCF-CUM (34E3): progressive score less W per unplayed win / full-point bye and D per half-point bye."""
    d = ctx.dense
    ps = progressive(ctx, TieBreakSpec("PS"), edition)
    full = d.is_type(("pab", "full_bye", "forfeit_win")).sum(axis=1)
    half = d.is_type(("half_bye",)).sum(axis=1)
    value = ps.num - full * d.per_player(d.W) - half * d.per_player(d.D)
    return Values(value, ps.den, ps.defined)


def opponents_cumulative(ctx: Context, spec: TieBreakSpec, edition: str) -> Values:
    """USCF-OPPCUM (34E9): sum of the cumulative scores of the opponents actually played."""
    d = ctx.dense
    cum = ctx.values(TieBreakSpec("USCF-CUM"), US, cumulative)
    value = np.where(d.played, cum.num[np.where(d.played, d.opp, 0)], 0).sum(axis=1)
    return Values(value, ctx.unit(), ctx.everyone())


def kashdan(ctx: Context, spec: TieBreakSpec, edition: str) -> Values:
    """USCF-KASHDAN (34E7): 4 per win, 2 per draw, 1 per loss, 0 per unplayed game."""
    d = ctx.dense
    table = np.zeros(3, dtype=np.int64)
    table[[LOSS, DRAW, WIN]] = [1, 2, 4]
    value = np.where(d.played, table[d.outcome], 0).sum(axis=1)
    return Values(value, ctx.ones(), ctx.everyone())


def sonneborn_berger(ctx: Context, spec: TieBreakSpec, edition: str) -> Values:
    """USCF-SB (34E8): adjusted scores of opponents beaten plus half of those drawn; own unplayed rounds 0."""
    from tbstats.engine.tiebreaks.opponents import sonneborn_berger as sb

    return sb(ctx, TieBreakSpec("SB"), US)
