"""US Chess rule 34E tie-breaks (rules.md Section 6); each carries the ``uscf`` unplayed-round rules."""

from __future__ import annotations

import numpy as np

from tbstats.engine.tiebreaks.base import Context, Values, cut_elements
from tbstats.engine.tiebreaks.results import progressive
from tbstats.model.dense import DRAW, LOSS, WIN
from tbstats.model.spec import TieBreakSpec

US = "uscf"


def _solkoff_elements(ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    el = ctx.elements(US)
    return el.present, el.oppscore


def _cut_sum(ctx: Context, low: int, high: int) -> np.ndarray:
    present, score = _solkoff_elements(ctx)
    keep = cut_elements(present, score, score, np.zeros_like(present), low, high, by_oppscore=False)
    return np.where(keep, score, 0).sum(axis=1)


def _wide(ctx: Context) -> np.ndarray:
    """Two cuts instead of one from 9 rounds on (34E1, 34E4)."""
    return ctx.dense.per_player(ctx.dense.n) >= 9


def solkoff(ctx: Context, spec: TieBreakSpec, edition: str) -> Values:
    """USCF-SOLKOFF (34E2): sum of adjusted opponent scores, own unplayed rounds as 0."""
    return Values(_cut_sum(ctx, 0, 0), ctx.unit(), ctx.everyone())


def median(ctx: Context, spec: TieBreakSpec, edition: str) -> Values:
    """USCF-MEDIAN (34E4): Solkoff less the highest and lowest (two of each from 9 rounds)."""
    value = np.where(_wide(ctx), _cut_sum(ctx, 2, 2), _cut_sum(ctx, 1, 1))
    return Values(value, ctx.unit(), ctx.everyone())


def modified_median(ctx: Context, spec: TieBreakSpec, edition: str) -> Values:
    """USCF-MM (34E1): plus score drops the lowest, even score both, minus score the highest (x2 from 9 rounds)."""
    d = ctx.dense
    el = ctx.elements(US)
    doubled, half_max = 2 * el.score, d.per_player(d.n * d.W)
    k = np.where(_wide(ctx), 2, 1)
    plus, even = doubled > half_max, doubled == half_max
    value = np.zeros(d.players, dtype=np.int64)
    for cuts in (1, 2):
        rows = k == cuts
        low = np.where(plus | even, _cut_sum(ctx, cuts, 0), 0)
        value = np.where(rows & plus, low, value)
        value = np.where(rows & even, _cut_sum(ctx, cuts, cuts), value)
        value = np.where(rows & ~plus & ~even, _cut_sum(ctx, 0, cuts), value)
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
