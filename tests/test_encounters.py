"""Direct Encounter's compiled passes (tbstats.engine.encounters) against plain Python loops over the same arrays.

- ``group_games``: the cells of the games played over the board by a player of ``among`` against a member of its
  own group, ascending; an opponent outside the rows is no game;
- ``pair_sums``: each (player, opponent) pair once with its points and games, grouped by player;
- ``group_scores``: the pairs still inside an open group kept, in order, and each player's points and opponents;
- ``all_met``: the open groups where every member outside a round robin has met every other;
- ``place_from_top`` (C.07 6.3): each group sorted by score from the top, placed while each beats the best case
  of everyone below it, the last one placed once all the others are;
- and whatever the arguments, bad ones raise instead of reading or writing out of bounds.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tbstats.engine import encounters
from tbstats.engine.standings import place_from_top


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 30), st.integers(1, 9), st.integers(0, 2 ** 32 - 1), st.integers(1, 6))
def test_group_games_are_the_played_games_inside_a_group(P: int, R: int, seed: int, n_groups: int) -> None:
    rng = np.random.default_rng(seed)
    opp = rng.integers(-1, P + 2, (P, R)).astype(np.int32)   # some outside the rows
    played = rng.random((P, R)) < 0.7
    group = rng.integers(0, n_groups, P).astype(np.int64)
    among = rng.random(P) < 0.8
    out = np.empty(P * R, dtype=np.int64)
    n = encounters.group_games(opp, played.view(np.uint8), group, among.view(np.uint8), out)
    expected = [p * R + r for p in range(P) for r in range(R)
                if among[p] and played[p, r] and 0 <= opp[p, r] < P and group[opp[p, r]] == group[p]]
    assert out[:n].tolist() == expected


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 25), st.integers(0, 120), st.integers(0, 2 ** 32 - 1))
def test_pair_sums_count_each_pair_once(P: int, games: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    i, j = (rng.integers(0, P, games).astype(np.int64) for _ in range(2))
    pts = rng.integers(0, 3, games).astype(np.int64)
    out = [np.full(games, -7, dtype=np.int64) for _ in range(4)]
    n = encounters.pair_sums(i, j, pts, P, *out)
    owner, partner, total, count = (a[:n].tolist() for a in out)
    expected: dict[tuple[int, int], list[int]] = defaultdict(lambda: [0, 0])
    for a, b, p in zip(i.tolist(), j.tolist(), pts.tolist(), strict=True):
        expected[a, b][0] += p
        expected[a, b][1] += 1
    assert {(o, q): [t, c] for o, q, t, c in zip(owner, partner, total, count, strict=True)} == expected
    assert n == len(expected) and owner == sorted(owner)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 25), st.integers(0, 80), st.integers(0, 2 ** 32 - 1), st.integers(1, 5))
def test_group_scores_keep_the_pairs_inside_open_groups(P: int, pairs: int, seed: int, n_groups: int) -> None:
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, min(n_groups, P), P).astype(np.int64)   # positions: below P
    active = rng.random(P) < 0.7
    owner, partner = (rng.integers(0, P, pairs).astype(np.int64) for _ in range(2))
    score = rng.integers(0, 50, pairs).astype(np.int64)
    keep = [k for k in range(pairs) if active[owner[k]] and labels[owner[k]] == labels[partner[k]]]
    expected_points, expected_met = [0] * P, [0] * P
    for k in keep:
        expected_points[owner[k]] += int(score[k])
        expected_met[owner[k]] += 1
    kept = [(int(owner[k]), int(partner[k]), int(score[k])) for k in keep]
    points, met = np.full(P, -1, dtype=np.int64), np.full(P, -1, dtype=np.int64)
    n = encounters.group_scores(labels, active.view(np.uint8), owner, partner, score, pairs, points, met)
    assert list(zip(owner[:n].tolist(), partner[:n].tolist(), score[:n].tolist(), strict=True)) == kept
    assert (points.tolist(), met.tolist()) == (expected_points, expected_met)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 30), st.integers(0, 2 ** 32 - 1), st.integers(1, 6))
def test_all_met_is_every_member_having_met_the_others(P: int, seed: int, n_groups: int) -> None:
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, min(n_groups, P), P).astype(np.int64)   # positions: below P
    size = np.bincount(labels, minlength=P)[labels]
    active = (rng.random(P) < 0.8) & (size > 1)
    met = np.where(rng.random(P) < 0.6, size - 1, rng.integers(0, 4, P)).astype(np.int64)
    rr = rng.random(P) < 0.2
    out = np.zeros(P, dtype=bool)
    encounters.all_met(labels, active.view(np.uint8), met, size, rr.view(np.uint8), out.view(np.uint8))
    missing = {int(labels[p]) for p in range(P) if active[p] and met[p] != size[p] - 1 and not rr[p]}
    assert out.tolist() == [bool(active[p]) and int(labels[p]) not in missing for p in range(P)]


def _placed(labels: np.ndarray, score: np.ndarray, best: np.ndarray, candidates: np.ndarray,
            size: np.ndarray) -> tuple[list[int], list[bool]]:
    """C.07 6.3 group by group, as the rules say it: from the top, a player is placed while it and everyone above
    it beat the best case of every member below; once all but one are placed, the last one is too."""
    sub, nothing = [0] * len(labels), [False] * len(labels)
    members: dict[int, list[int]] = defaultdict(list)
    for p in np.flatnonzero(candidates).tolist():
        members[int(labels[p])].append(p)
    for group in members.values():
        order = sorted(group, key=lambda p: -int(score[p]))
        placed = 0
        floor = int(best[candidates].min()) - 1   # nobody below the last one
        while placed < len(order) and score[order[placed]] > max(
                [int(best[q]) for q in order[placed + 1:]], default=floor):
            placed += 1
        for k, p in enumerate(order):
            sub[p] = k if k < placed or placed >= size[p] - 1 else int(size[p])
            nothing[p] = placed == 0
    return sub, nothing


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 30), st.integers(0, 2 ** 32 - 1), st.integers(1, 6), st.integers(1, 8))
def test_place_from_top_follows_the_rule_group_by_group(P: int, seed: int, n_groups: int, spread: int) -> None:
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, min(n_groups, P), P).astype(np.int64)   # positions: below P
    size = np.bincount(labels, minlength=P)[labels]
    score = rng.integers(0, spread, P).astype(np.int64)   # small spreads: equal scores
    best = score + rng.integers(0, 2, P) * rng.integers(0, spread, P)
    candidates = rng.random(P) < 0.8
    sub, nothing = place_from_top(labels, score, best, candidates, size)
    assert (sub.tolist(), nothing.tolist()) == _placed(labels, score, best, candidates, size)


def test_bad_arguments_raise() -> None:
    one, two = np.zeros(1, dtype=np.int64), np.zeros(2, dtype=np.int64)
    flag = np.ones(1, dtype=np.uint8)
    with pytest.raises(ValueError, match="out of range"):
        encounters.pair_sums(np.array([3]), np.array([0]), one, 2, two, two, two, two)
    with pytest.raises(ValueError, match="room"):
        encounters.pair_sums(two, two, two, 2, one, one, one, one)
    with pytest.raises(ValueError, match="room"):
        encounters.group_games(np.zeros((1, 2), dtype=np.int32), np.ones((1, 2), dtype=np.uint8), one, flag, one)
    with pytest.raises(ValueError, match="out of range"):
        encounters.group_scores(one, flag, np.array([5]), one.copy(), one.copy(), 1, one.copy(), one.copy())
    with pytest.raises(ValueError, match="out of range"):
        encounters.all_met(np.array([4]), flag, one, one, flag, flag.copy())
    with pytest.raises(ValueError, match="out of range"):
        encounters.place_from_top(np.array([4]), one, one, flag, one, one.copy(), flag.copy())
    with pytest.raises(ValueError, match="differ"):
        encounters.place_from_top(two, one, one, flag, one, one.copy(), flag.copy())
