"""Rating-based tie-breaks (C.07 Art. 10): ARO, TPR, PTP, APRO, APPO, RTNG.

Only games played over the board count. When a tournament has unrated participants and no rating for
them is configured (``/U<rating>`` or the run's option), every value of that tournament is undefined.
"""

from __future__ import annotations

import numpy as np

from tbstats.engine.performance import perfect_ratings
from tbstats.engine.tiebreaks.base import Context, Values, cut_sum, round_half_up
from tbstats.model.grid import loop_view, row_sum
from tbstats.model.spec import TieBreakSpec

#: dp for p = 0..50 per cent (FIDE Rating Regulations; rules.md 5.5); dp(100 - p) = -dp(p).
_DP_LOW = np.array([
    -800, -677, -589, -538, -501, -470, -444, -422, -401, -383, -366, -351, -336, -322, -309, -296, -284,
    -273, -262, -251, -240, -230, -220, -211, -202, -193, -184, -175, -166, -158, -149, -141, -133, -125,
    -117, -110, -102, -95, -87, -80, -72, -65, -57, -50, -43, -36, -29, -21, -14, -7, 0], dtype=np.int64)
DP = np.concatenate([_DP_LOW, -_DP_LOW[:-1][::-1]])  # index p = 0..100

#: Upper bounds of rating differences for expected scores .50, .51, ..., .99; >= 736 gives 1.00.
_EXPECT_UPPER = np.array([
    3, 10, 17, 25, 32, 39, 46, 53, 61, 68, 76, 83, 91, 98, 106, 113, 121, 129, 137, 145, 153, 162, 170, 179,
    188, 197, 206, 215, 225, 235, 245, 256, 267, 278, 290, 302, 315, 328, 344, 357, 374, 391, 411, 432, 456,
    484, 517, 559, 619, 735], dtype=np.int64)


def expected_hundredths(diff: np.ndarray) -> np.ndarray:
    """Expected score in hundredths for a rating difference (own minus opponent), full scale (no 400 cut)."""
    higher = 50 + np.searchsorted(_EXPECT_UPPER, np.abs(diff), side="left")
    return np.where(diff >= 0, higher, 100 - higher)


def _ratings(ctx: Context, spec: TieBreakSpec) -> tuple[np.ndarray, np.ndarray]:
    """Ratings with the configured rating for unrated players, and the tournaments where they are usable."""
    d = ctx.dense
    fallback = spec.unrated if spec.unrated is not None else ctx.unrated_rating
    rating = d.rating.copy()
    if fallback is not None:
        rating[rating <= 0] = fallback
    unrated = np.zeros(len(d.n), dtype=bool)
    unrated[d.tix[rating <= 0]] = True   # (the events with an unrated player)
    return rating, ~unrated[d.tix]


def _opponent_ratings(ctx: Context, spec: TieBreakSpec) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The opponent's rating in each game played over the board (0 elsewhere; int32 when ratings fit), the
    games, and the players whose ratings are usable."""
    d = ctx.dense
    rating, usable = _ratings(ctx, spec)
    if int(np.abs(rating).max(initial=0)) < 2 ** 31:
        rating = rating.astype(np.int32)
    return d.through(rating), d.played, usable


def average_rating_opponents(ctx: Context, spec: TieBreakSpec, edition: str) -> Values:
    """ARO: average rating of the opponents played over the board, cuts on ratings, rounded half up (10.1)."""
    d = ctx.dense
    if spec.cut_low or spec.cut_high:
        r, played, usable = _opponent_ratings(ctx, spec)
        total, count = cut_sum(played, r, r, np.zeros_like(played), spec.cut_low, spec.cut_high, by_oppscore=False,
                               count=d.games)
    else:   # the sum alone: one pass, without the opponents' ratings as a players x rounds array
        rating, usable = _ratings(ctx, spec)
        total, count = d.opponents_sum(rating), d.games
    num = round_half_up(total, np.maximum(count, 1))
    return Values(num, ctx.ones(), usable & (count > 0))


def _percentage(ctx: Context) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """OTB score in half points, OTB games, and p = round_half_up(100 x score / games)."""
    d = ctx.dense
    halves = row_sum(d.outcome, d.played)
    games = d.games
    p = round_half_up(100 * halves, 2 * np.maximum(games, 1))
    return halves, games, p


def performance(ctx: Context, spec: TieBreakSpec, edition: str) -> Values:
    """TPR: ARO + dp(p), p the percentage scored over the board (C.07 10.2)."""
    aro = ctx.values(TieBreakSpec("ARO", unrated=spec.unrated), edition, average_rating_opponents)
    _, games, p = _percentage(ctx)
    return Values(aro.num + DP[p], aro.den, aro.defined & (games > 0))


#: Expected score in hundredths by the rating difference from -736 to 736 (a sure loss and a sure win from there
#: on), ``EXPECTED_BY_DIFF[736 + diff]``: the table the compiled search looks up
EXPECTED_BY_DIFF = expected_hundredths(np.arange(-_EXPECT_UPPER[-1] - 1, _EXPECT_UPPER[-1] + 2))

#: PTP of a player without a game over the board (never shown: such a value is undefined)
_NO_GAMES = np.iinfo(np.int64).max // 4 - 800


def perfect_performance(ctx: Context, spec: TieBreakSpec, edition: str) -> Values:
    """PTP: the lowest rating whose expected score reaches the OTB score (C.07 10.3), by bisection per player
    over its own games (compiled: :func:`tbstats.engine.performance.perfect_ratings`)."""
    narrow, played, usable = _opponent_ratings(ctx, spec)
    halves, games, _ = _percentage(ctx)
    value = np.empty(len(halves), dtype=np.int64)
    perfect_ratings(narrow, loop_view(played), np.ascontiguousarray(halves, dtype=np.int64), EXPECTED_BY_DIFF,
                    _NO_GAMES, value)
    return Values(value, ctx.ones(), usable & (games > 0))


def _average_of_opponents(ctx: Context, spec: TieBreakSpec, edition: str, name: str) -> Values:
    from tbstats.engine.tiebreaks import kernel_of

    d = ctx.dense
    inner = ctx.values(TieBreakSpec(name, unrated=spec.unrated), edition, kernel_of(name))
    count = d.opponents_sum(inner.defined)
    num = round_half_up(d.opponents_sum(np.where(inner.defined, inner.num, 0)), np.maximum(count, 1))
    _, usable = _ratings(ctx, spec)
    return Values(num, ctx.ones(), usable & (count > 0))


def average_performance_opponents(ctx: Context, spec: TieBreakSpec, edition: str) -> Values:
    """APRO: average TPR of the opponents played over the board, rounded half up (C.07 10.4)."""
    return _average_of_opponents(ctx, spec, edition, "TPR")


def average_perfect_performance_opponents(ctx: Context, spec: TieBreakSpec, edition: str) -> Values:
    """APPO: average PTP of the opponents played over the board, rounded half up (C.07 10.5)."""
    return _average_of_opponents(ctx, spec, edition, "PTP")


def own_rating(ctx: Context, spec: TieBreakSpec, edition: str) -> Values:
    """RTNG: the participant's own rating; higher first unless /R (C.07 10.6)."""
    rating, usable = _ratings(ctx, spec)
    return Values(rating, ctx.ones(), usable)
