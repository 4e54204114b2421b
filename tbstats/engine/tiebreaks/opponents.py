"""Opponent-based tie-breaks: Buchholz family, Sonneborn-Berger, Koya (C.07 Art. 8, 9, 16)."""

from __future__ import annotations

import numpy as np

from tbstats.engine.tiebreaks.base import Context, Values, cut_sum, round_half_up
from tbstats.model.grid import row_dot, row_sum
from tbstats.model.spec import TieBreakSpec


def buchholz(ctx: Context, spec: TieBreakSpec, edition: str) -> Values:
    """BH: sum of the opponents' scores, unplayed rounds per edition, with C/M cuts (C.07 8.1, 14, 16)."""
    return _buchholz(ctx, spec, edition, fore=False)


def fore_buchholz(ctx: Context, spec: TieBreakSpec, edition: str) -> Values:
    """FB: Buchholz as if every paired game of the final round had been drawn (C.07 8.3)."""
    return _buchholz(ctx, spec, edition, fore=True)


def _buchholz(ctx: Context, spec: TieBreakSpec, edition: str, fore: bool) -> Values:
    if fore and not (spec.cut_low or spec.cut_high):   # FB's sum alone, from the edition's stage
        return Values(ctx.elements(edition, forfeits=spec.forfeits).fore_total, ctx.unit(), ctx.everyone())
    el = ctx.elements(edition, fore=fore, forfeits=spec.forfeits)
    total, _ = cut_sum(el.present, el.oppscore, el.oppscore, el.vur, spec.cut_low, spec.cut_high,
                       by_oppscore=False, total=el.oppscore_total, count=el.elements)
    return Values(total, ctx.unit(), ctx.everyone())


def sonneborn_berger(ctx: Context, spec: TieBreakSpec, edition: str) -> Values:
    """SB: sum of opponent score times points scored against them, with C/M cuts (C.07 9.1, 14.1.2, 16.5)."""
    el = ctx.elements(edition, forfeits=spec.forfeits)
    if not (spec.cut_low or spec.cut_high):   # the sum alone: one pass, without the contributions' array
        return Values(row_dot(el.oppscore, el.pts, el.present), ctx.unit(2), ctx.everyone())
    contribution = el.sb_contribution
    total, _ = cut_sum(el.present, contribution, el.oppscore, el.vur, spec.cut_low, spec.cut_high,
                       by_oppscore=True, total=row_sum(contribution, el.present), count=el.elements)
    return Values(total, ctx.unit(2), ctx.everyone())


def average_opponents_buchholz(ctx: Context, spec: TieBreakSpec, edition: str) -> Values:
    """AOB: average of the BH (or FB with /F) of the opponents played over the board, 2 decimals (C.07 8.2)."""
    from tbstats.engine.tiebreaks import kernel_of

    name = "FB" if spec.fore else "BH"
    bh = ctx.values(TieBreakSpec(name), edition, kernel_of(name))
    d = ctx.dense
    total = d.opponents_sum(bh.num)
    count = d.games
    hundredths = round_half_up(100 * total, np.maximum(count, 1) * ctx.unit())
    return Values(hundredths, ctx.constant(100), count > 0)


def koya(ctx: Context, spec: TieBreakSpec, edition: str) -> Values:
    """KS: points scored against opponents with at least 50% of the maximum score, limit L±k (C.07 9.2, 14.5)."""
    d = ctx.dense
    pts = d.points
    score = d.score
    scheduled = d.has_opp
    # the maximum: W x rounds in which a participant could be scheduled (n; in round robins, games per player)
    rounds = d.n
    if d.round_robin.any():   # (players sorted by tournament: each one's largest by one reduceat)
        starts = np.flatnonzero(np.diff(d.tix, prepend=-1))
        per_t_sched = np.zeros(len(d.n), dtype=np.int64)
        per_t_sched[d.tix[starts]] = np.maximum.reduceat(row_sum(scheduled), starts) if len(starts) else 0
        rounds = np.where(d.round_robin, per_t_sched, d.n)
    max_units = d.per_player(rounds * d.W)
    limit = (spec.limit or 0) * ctx.unit()  # k half points = k * scale / 2 units, compared doubled
    qualifies = 2 * score >= max_units + limit
    num = d.sum_against(qualifies, pts, scheduled=True)
    return Values(num, ctx.unit(), ctx.everyone())
