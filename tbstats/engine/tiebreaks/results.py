"""A participant's own results: points and type B tie-breaks (C.07 Art. 7)."""

from __future__ import annotations

import numpy as np

from tbstats.engine.tiebreaks.base import Context, Values
from tbstats.model.dense import NO_OPP, WIN
from tbstats.model.fingerprint import mix64
from tbstats.model.grid import row_count_equal, row_sum
from tbstats.model.rules import get_ruleset
from tbstats.model.spec import TieBreakSpec


def _count(ctx: Context, mask: np.ndarray) -> Values:
    return Values(row_sum(mask), ctx.ones(), ctx.everyone())


def points(ctx: Context, spec: TieBreakSpec, edition: str) -> Values:
    """PTS: the score, as awarded, with the changes of 299 records (:mod:`tbstats.model.adjust`)."""
    d = ctx.dense
    return Values(d.adjusted_score, ctx.unit(), ctx.everyone())


def wins(ctx: Context, spec: TieBreakSpec, edition: str) -> Values:
    """WIN: rounds scored as a win, with or without playing (C.07 7.1)."""
    d = ctx.dense
    return Values(row_count_equal(d.pts, d.per_player(d.W), d.counted), ctx.ones(), ctx.everyone())


def games_won(ctx: Context, spec: TieBreakSpec, edition: str) -> Values:
    """WON: games won over the board (C.07 7.2)."""
    d = ctx.dense
    return _count(ctx, d.played & (d.outcome == WIN))


def games_with_black(ctx: Context, spec: TieBreakSpec, edition: str) -> Values:
    """BPG: games played over the board with black (C.07 7.3)."""
    d = ctx.dense
    return _count(ctx, d.played & d.black)


def wins_with_black(ctx: Context, spec: TieBreakSpec, edition: str) -> Values:
    """BWG: games won over the board with black (C.07 7.4)."""
    d = ctx.dense
    return _count(ctx, d.played & d.black & (d.outcome == WIN))


def progressive(ctx: Context, spec: TieBreakSpec, edition: str) -> Values:
    """PS: sum of the running scores after each round; /Cn leaves out the first n of them (C.07 7.5, 14.1.2c).

    Round c's points (from 0) enter the running scores of rounds max(c, n)..N-1 of an event of N counted
    rounds: PS = N x score - sum of points_c x max(c, n), one weighted row sum (0 when N <= n: no running
    score is left).
    """
    d = ctx.dense
    n = d.per_player(d.n)
    weight = np.maximum(np.arange(d.rounds), spec.cut_low)
    fits = d.max_abs_points * int(weight.sum()) < 2 ** 31   # then int32 accumulates exactly
    dtype = np.int32 if fits else np.int64
    later = np.einsum("ij,j->i", d.points, weight.astype(dtype), dtype=dtype).astype(np.int64)
    return Values(np.where(n > spec.cut_low, n * d.score - later, 0), ctx.unit(), ctx.everyone())


def rounds_elected(ctx: Context, spec: TieBreakSpec, edition: str) -> Values:
    """REP: rounds less half-point byes, zero-point byes and forfeit losses (C.07 7.6, 15.2).

    A round without opponent written blank or ``Z`` is a zero-point bye (rules.md 2.2), in a round robin too,
    where it is the free round of an odd field: it reduces REP, as FIDE's checker counts it. A forfeit loss in
    a round robin is a regular game under editions whose pre-determined rules keep forfeits as games for type B
    (2024, legacy), an unplayed round otherwise (rules.md 4.6).
    """
    d = ctx.dense
    rules = get_ruleset(edition)
    byes = d.is_type(("half_bye", "zero_bye", "absent"))
    forfeit_lost = d.is_type(("forfeit_loss", "double_forfeit"))
    if rules.predetermined and not rules.rr_forfeit_loss_unplayed:   # round robins' forfeit losses are games
        forfeit_lost &= ~d.per_player(d.round_robin)[:, None]
    return _count(ctx, d.counted & ~byes & ~forfeit_lost)


def standard_points(ctx: Context, spec: TieBreakSpec, edition: str) -> Values:
    """STD: 1 per round scoring more than the scheduled opponent (or than a draw, unplayed), ½ per equal (C.07 7.7)."""
    d = ctx.dense
    has_opp = d.opp != NO_OPP
    cols = np.arange(d.rounds)[None, :]
    other = np.where(has_opp, d.pts[d.opp_row, cols], d.per_player(d.D)[:, None])
    halves = np.where(d.pts > other, 2, np.where(d.pts == other, 1, 0))
    return Values(np.where(d.counted, halves, 0).sum(axis=1), ctx.constant(2), ctx.everyone())


def pairing_number(ctx: Context, spec: TieBreakSpec, edition: str) -> Values:
    """TPN: the tournament pairing number; lower ranks higher unless /R (C.07 7.8)."""
    d = ctx.dense
    return Values(d.start_no.copy(), ctx.ones(), ctx.everyone())


def drawing_of_lots(ctx: Context, spec: TieBreakSpec, edition: str) -> Values:
    """LOTS: a seeded drawing of lots (C.07 4.2: remaining ties "should be broken by drawing of lots").

    Each player draws a 62-bit number from (seed, tournament key, start number) through splitmix64, so a
    draw does not depend on which other tournaments share the batch: the key is the context's
    (:attr:`Context.lots_keys`: the event's fingerprint in a context made from a batch, the same from its TRF
    file or a model, under any name).
    """
    d = ctx.dense
    with np.errstate(over="ignore"):
        x = (np.full(d.players, ctx.lots_seed, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
             + ctx.lots_keys[d.tix] * np.uint64(0xBF58476D1CE4E5B9)
             + d.start_no.astype(np.uint64) * np.uint64(0x94D049BB133111EB))
        x = mix64(x)
    return Values((x >> np.uint64(2)).astype(np.int64), ctx.ones(), ctx.everyone())
