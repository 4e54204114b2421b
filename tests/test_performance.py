"""The Perfect Tournament Performance's compiled search (tbstats.engine.performance) against the rule read plainly.

PTP (C.07 10.3): the lowest whole rating whose expected score against the opponents met over the board reaches the
player's score there; 800 below the lowest opponent for a zero score. The plain version walks up one rating point at
a time with the expected scores of tests/reference.py (FIDE's table, full scale); the search must land on the same
rating, for ratings of either width, masks of any strides, and rows without games (which get the value given).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import expected_score

from tbstats.engine.performance import perfect_ratings
from tbstats.engine.tiebreaks.rating import EXPECTED_BY_DIFF

NONE = -12345


def plain_ptp(opponents: list[int], halves: int) -> int:
    """The lowest rating whose expected score reaches ``halves`` half points, walked up one point at a time."""
    if halves == 0:
        return min(opponents) - 800
    rating = min(opponents) - 800
    while 2 * sum((expected_score(rating - o) for o in opponents), Fraction(0)) < halves:
        rating += 1
    return rating


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 6), st.integers(0, 7), st.integers(0, 2 ** 32 - 1), st.sampled_from([np.int32, np.int64]),
       st.booleans())
def test_the_search_lands_where_the_plain_walk_does(P: int, R: int, seed: int, dtype: type,
                                                    transposed: bool) -> None:
    rng = np.random.default_rng(seed)
    ratings = rng.integers(1000, 2800, (P, R)).astype(dtype)
    if P and R:   # some opponents far apart: the expected score's ends (a sure win, a sure loss)
        ratings.reshape(-1)[rng.integers(0, P * R, 2)] = (1001, 2799)
    played = rng.random((P, R)) < 0.75
    if transposed:
        played = np.ascontiguousarray(played.T).T
    games = played.sum(axis=1)
    halves = np.array([rng.integers(0, 2 * g + 1) for g in games], dtype=np.int64)
    out = np.empty(P, dtype=np.int64)
    perfect_ratings(ratings, played.view(np.uint8), halves, EXPECTED_BY_DIFF, NONE, out)
    for i in range(P):
        opponents = [int(r) for r, p in zip(ratings[i], played[i], strict=True) if p]
        assert out[i] == (plain_ptp(opponents, int(halves[i])) if opponents else NONE)


@pytest.mark.parametrize(("opponents", "halves", "want"), [
    ([1800], 2, 1800 + 736),            # a perfect score: 736 above the highest opponent (rules.md 5.5)
    ([1800, 2000], 4, 2000 + 736),
    ([1800, 2000], 0, 1800 - 800),      # a zero score: 800 below the lowest
    ([2000, 2000], 2, 1997),            # half the points: the .50 band reaches 3 points below the opponents
])
def test_the_rule_s_fixed_points(opponents: list[int], halves: int, want: int) -> None:
    out = np.empty(1, dtype=np.int64)
    perfect_ratings(np.array([opponents], dtype=np.int32), np.ones((1, len(opponents)), dtype=np.uint8),
                    np.array([halves], dtype=np.int64), EXPECTED_BY_DIFF, NONE, out)
    assert out[0] == want == plain_ptp(opponents, halves)


def test_bad_arguments_raise() -> None:
    ratings = np.full((2, 3), 2000, dtype=np.int32)
    played = np.ones((2, 3), dtype=np.uint8)
    halves = np.ones(2, dtype=np.int64)
    out = np.empty(2, dtype=np.int64)
    with pytest.raises(ValueError, match="match the ratings' rows"):
        perfect_ratings(ratings, played[:1], halves, EXPECTED_BY_DIFF, NONE, out)
    with pytest.raises(ValueError, match="match the ratings' rows"):
        perfect_ratings(ratings, played, halves, EXPECTED_BY_DIFF, NONE, out[:1])
    with pytest.raises(ValueError, match="from 0 to 100"):
        perfect_ratings(ratings, played, halves, EXPECTED_BY_DIFF[1:], NONE, out)
