"""The sort-based Kendall and Spearman statistics equal slow pair-by-pair references on random groups with ties.

The fast versions (:mod:`tbstats.analysis.kendall`, :func:`tbstats.analysis.quality.spearman`) count pairs
by sorts over every group at once; the references below look at every pair of members of every group, in
plain Python, and turn the counts into the result by the same floating-point expression, so tau-b and the
Kendall distance must be equal to the last bit.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tbstats.analysis import kendall
from tbstats.analysis.kendall import kendall_distances, pair_counts, tau_b
from tbstats.analysis.quality import average_ranks, spearman

# Few distinct values, so that ties are common; NaN and infinities now and then.
STRENGTHS = st.sampled_from([0.0, 1.0, 1.5, 2.0, -3.0, 1500.0, 1510.0, math.inf, -math.inf, math.nan])


@st.composite
def groups(draw: st.DrawFn, *, odd_values: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Rows in any order of up to 8 groups (some empty): group, rank (1 = best, ties frequent), strength."""
    n_groups = draw(st.integers(1, 8))
    n = draw(st.integers(0, 60))
    group = draw(st.lists(st.integers(0, n_groups - 1), min_size=n, max_size=n))
    top = draw(st.integers(1, 12))
    rank = draw(st.lists(st.integers(1, top), min_size=n, max_size=n))
    values = STRENGTHS if odd_values else st.sampled_from([0.0, 1.0, 1.5, 2.0, -3.0, 1500.0])
    strength = draw(st.lists(values, min_size=n, max_size=n))
    return (np.array(group, dtype=np.int64), np.array(rank, dtype=np.int64), np.array(strength, dtype=np.float64),
            n_groups)


def _members(group: np.ndarray, g: int) -> list[int]:
    return [i for i in range(len(group)) if group[i] == g]


def _sign(v: float) -> float:
    return math.nan if math.isnan(v) else float((v > 0) - (v < 0))


def slow_tau_b(rank: np.ndarray, strength: np.ndarray, group: np.ndarray, n_groups: int) -> list[float]:
    """Kendall's tau-b per group between -rank and strength, pair by pair (NaN where undefined)."""
    out = []
    for g in range(n_groups):
        members = _members(group, g)
        num, n0, n1, n2 = 0.0, 0, 0, 0
        for a, i in enumerate(members):
            for j in members[a + 1:]:
                dr = _sign(float(rank[j]) - float(rank[i]))     # -rank[i] - -rank[j]
                ds = _sign(float(strength[i]) - float(strength[j]))
                num += dr * ds
                n0 += 1
                n1 += dr == 0
                n2 += ds == 0
        denom = math.sqrt((n0 - n1) * float(n0 - n2))
        out.append(num / denom if denom > 0 else math.nan)
    return out


def slow_distance(a: np.ndarray, b: np.ndarray, group: np.ndarray, n_groups: int) -> list[float]:
    """Normalised Kendall distance per group: opposite pairs count 1, pairs tied in one ranking only ½."""
    out = []
    for g in range(n_groups):
        members = _members(group, g)
        weight = 0
        for k, i in enumerate(members):
            for j in members[k + 1:]:
                sa, sb = _sign(float(a[i] - a[j])), _sign(float(b[i] - b[j]))
                weight += 2 * (sa * sb < 0) + ((sa == 0) != (sb == 0))
        m = len(members)
        out.append(weight / 2 / max(m * (m - 1) / 2, 1))
    return out


def slow_average_ranks(values: np.ndarray, group: np.ndarray) -> list[float]:
    """1-based average rank within the group: the members below, plus the mean place among the equal ones."""
    out = []
    for i in range(len(values)):
        mates = _members(group, int(group[i]))
        below = sum(1 for j in mates if values[j] < values[i])
        equal = sum(1 for j in mates if values[j] == values[i])
        out.append(below + (equal + 1) / 2)
    return out


def slow_spearman(rank: np.ndarray, strength: np.ndarray, group: np.ndarray, n_groups: int) -> list[float]:
    """Spearman's rho per group: Pearson's correlation of the average ranks (NaN when one side is constant)."""
    ar, as_ = slow_average_ranks(-rank.astype(np.float64), group), slow_average_ranks(strength, group)
    out = []
    for g in range(n_groups):
        members = _members(group, g)
        if not members:
            out.append(math.nan)
            continue
        mr = sum(ar[i] for i in members) / len(members)
        ms = sum(as_[i] for i in members) / len(members)
        cov = sum((ar[i] - mr) * (as_[i] - ms) for i in members)
        var = sum((ar[i] - mr) ** 2 for i in members) * sum((as_[i] - ms) ** 2 for i in members)
        out.append(cov / math.sqrt(var) if var > 0 else math.nan)
    return out


def _same(fast: np.ndarray, slow: list[float]) -> bool:
    return np.array_equal(fast, np.array(slow, dtype=np.float64), equal_nan=True)


@given(groups())
def test_tau_b_equals_the_pair_by_pair_definition(case: tuple[np.ndarray, np.ndarray, np.ndarray, int]) -> None:
    group, rank, strength, n_groups = case
    assert _same(tau_b(rank, strength, group, n_groups), slow_tau_b(rank, strength, group, n_groups))


@given(groups(odd_values=False), st.integers(1, 12))
def test_pair_counts_and_distance_equal_the_pair_by_pair_counts(
        case: tuple[np.ndarray, np.ndarray, np.ndarray, int], top: int) -> None:
    group, rank, strength, n_groups = case
    other = (strength * 7).astype(np.int64) % top   # a second ranking with its own ties
    counts = pair_counts(rank, other, group, n_groups)
    for g in range(n_groups):
        members = _members(group, g)
        pairs = [(i, j) for k, i in enumerate(members) for j in members[k + 1:]]
        assert counts.discordant[g] == sum((rank[i] - rank[j]) * (other[i] - other[j]) < 0 for i, j in pairs)
        assert counts.tied_x[g] == sum(rank[i] == rank[j] for i, j in pairs)
        assert counts.tied_y[g] == sum(other[i] == other[j] for i, j in pairs)
        assert counts.tied_both[g] == sum(rank[i] == rank[j] and other[i] == other[j] for i, j in pairs)
    order = np.argsort(group, kind="stable")
    need = np.ones((1, n_groups), dtype=bool)
    fast = kendall_distances([rank[order], other[order]], [(0, 1)], need, group[order], n_groups)[0]
    assert _same(fast, slow_distance(rank[order], other[order], group[order], n_groups))


@given(groups(odd_values=False), st.sampled_from([0, 1, 3, 1 << 20]))
def test_pair_counts_whatever_groups_are_counted_pair_by_pair(case: tuple[np.ndarray, np.ndarray, np.ndarray, int],
                                                               largest: int) -> None:
    """Groups of at most SEGMENT_PAIRS members counted pair by pair (compiled), the larger by the merge sort: every
    threshold, none or all of the groups on either side, gives the pair-by-pair counts (items in any order)."""
    group, rank, strength, n_groups = case
    kept = kendall.SEGMENT_PAIRS
    try:
        kendall.SEGMENT_PAIRS = largest
        counts = pair_counts(rank, strength, group, n_groups)
    finally:
        kendall.SEGMENT_PAIRS = kept
    for g in range(n_groups):
        members = _members(group, g)
        pairs = [(i, j) for k, i in enumerate(members) for j in members[k + 1:]]
        assert counts.discordant[g] == sum((rank[i] - rank[j]) * (strength[i] - strength[j]) < 0 for i, j in pairs)
        assert counts.tied_x[g] == sum(rank[i] == rank[j] for i, j in pairs)
        assert counts.tied_both[g] == sum(rank[i] == rank[j] and strength[i] == strength[j] for i, j in pairs)


@given(groups(odd_values=False), st.integers(0, 3), st.lists(st.booleans(), min_size=8, max_size=8))
def test_distances_of_many_rankings_equal_the_pair_by_pair_counts_whatever_segments_are_counted_how(
        case: tuple[np.ndarray, np.ndarray, np.ndarray, int], swaps: int, wanted: list[bool]) -> None:
    """Rankings that agree outside a few places (as tie-break lists do: they differ within groups tied on
    points), each pair's segments counted pair by pair (compiled) up to SEGMENT_PAIRS players and by the merge
    sort above it: every way gives the pair-by-pair distances, 0 where a tournament is not needed."""
    group, rank, strength, n_groups = case
    order = np.argsort(group, kind="stable")
    group, rank = group[order], rank[order]
    other = rank * 2 + (strength[order] > 1)                 # ties of ``rank`` split by a second key
    moved = other.copy()
    for k in range(min(swaps, len(moved) - 1)):             # a few places exchanged
        moved[[k, len(moved) - 1 - k]] = moved[[len(moved) - 1 - k, k]]
    ranks = [rank, other, moved]
    pairs = [(0, 1), (0, 2), (1, 2), (2, 0)]
    need = np.array([[wanted[(g + p) % 8] for g in range(n_groups)] for p in range(len(pairs))], dtype=bool)
    slow = [np.where(need[p], slow_distance(ranks[a], ranks[b], group, n_groups), 0.0)
            for p, (a, b) in enumerate(pairs)]
    kept = kendall.SEGMENT_PAIRS
    try:
        for largest in (0, 1, 3, kept):
            kendall.SEGMENT_PAIRS = largest
            fast = kendall_distances(ranks, pairs, need, group, n_groups)
            assert all(_same(fast[p], list(slow[p])) for p in range(len(pairs))), largest
    finally:
        kendall.SEGMENT_PAIRS = kept


@given(groups(odd_values=False))
def test_spearman_and_average_ranks_equal_the_definition(case: tuple[np.ndarray, np.ndarray, np.ndarray, int]
                                                          ) -> None:
    group, rank, strength, n_groups = case
    assert average_ranks(strength, group).tolist() == slow_average_ranks(strength, group)
    fast = spearman(rank, strength, group, n_groups)
    slow = np.array(slow_spearman(rank, strength, group, n_groups))
    assert np.array_equal(np.isnan(fast), np.isnan(slow))
    assert np.allclose(fast[~np.isnan(fast)], slow[~np.isnan(slow)], rtol=1e-12, atol=1e-12)


def test_large_groups_take_many_merge_levels() -> None:
    """Groups of 1,000 and 3 members side by side (the merge runs 10 levels; the small group is done after 2)."""
    rng = np.random.default_rng(7)
    group = np.repeat([0, 1], [1000, 3])
    rank = rng.integers(1, 200, len(group))
    strength = rng.integers(0, 50, len(group)).astype(np.float64)
    assert _same(tau_b(rank, strength, group, 2), slow_tau_b(rank, strength, group, 2))
