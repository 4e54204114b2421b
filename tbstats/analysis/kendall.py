"""Kendall statistics between two orders of the players of many groups at once, in O(n log n) per group.

Everything rests on :func:`pair_counts`: per group, the pairs of members ordered oppositely by two orders
(discordant), and the pairs tied in each and in both. The discordant pairs are the inversions of one order
sorted by the other, counted by a merge sort run on every group at once (one numpy pass per doubling of the
block width, so about log2 of the largest group's size passes over all the rows); ties are runs of equal
values after a sort. No pairs of players are ever listed, so a 500-player event costs about what 500 rows do,
not 125,000 pairs, and no group is padded to the size of the largest.

- :func:`tau_b`: Kendall's tau-b per group (``tbstats evaluate``, ``tbstats simulate``);
- :func:`kendall_distances`: the normalised Kendall distance between rankings with ties (``tbstats compare``).

Both are exact: the counts are integers, and each result is the same floating-point expression of them
the pair-by-pair definition gives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np


class PairCounts(NamedTuple):
    """Per group: pairs of members ordered oppositely by ``x`` and ``y``, tied in ``x``, tied in ``y``, tied in
    both (int64 arrays of length ``n_groups``)."""

    discordant: np.ndarray
    tied_x: np.ndarray
    tied_y: np.ndarray
    tied_both: np.ndarray


def _dense(values: np.ndarray) -> np.ndarray:
    """Each value's rank among the distinct values (0, 1, ...): equal values get the same rank."""
    return np.unique(values, return_inverse=True)[1].reshape(-1).astype(np.int64)


def _group_sums(group: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
    """Per group, the sum of ``values`` (int64, exact) over the items of ``group`` (sorted)."""
    total = np.concatenate([[0], np.cumsum(values, dtype=np.int64)])
    ids = np.arange(n_groups)
    return total[np.searchsorted(group, ids, "right")] - total[np.searchsorted(group, ids, "left")]


def _tied_pairs(group: np.ndarray, keys: Sequence[np.ndarray], n_groups: int) -> np.ndarray:
    """Per group, the pairs of items with equal ``keys``: items sorted by group and then by the keys."""
    n = len(group)
    new = np.ones(n, dtype=bool)
    new[1:] = group[1:] != group[:-1]
    for key in keys:
        new[1:] |= key[1:] != key[:-1]
    starts = np.flatnonzero(new)
    length = np.diff(np.append(starts, n))
    return _group_sums(group[starts], length * (length - 1) // 2, n_groups)


def _inversions(group: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
    """Per group, the pairs of items ``i`` before ``j`` with ``values[i] > values[j]`` (items sorted by group;
    ``values`` non-negative integers).

    A bottom-up merge sort of every group at once: at block width ``w`` each group is in sorted blocks of
    ``w`` items; each item of a right block counts the items of its left neighbour above it (one
    ``searchsorted`` in the left blocks' keys, which are in order across the whole array), then each pair of
    blocks is merged by one stable sort of (pair of blocks, value).

    >>> _inversions(np.array([0, 0, 0, 1, 1]), np.array([2, 0, 1, 0, 1]), 2).tolist()
    [2, 0]
    """
    n = len(group)
    size = np.bincount(group, minlength=n_groups)
    first = (np.cumsum(size) - size)[group]
    position = np.arange(n) - first
    span = int(values.max()) + 1 if n else 1
    counted = np.zeros(n, dtype=np.int64)   # per position: the inversions found there
    v = values.astype(np.int64)
    width = 1
    widest = int(size.max()) if n else 0
    while width < widest:
        pair = first + position // (2 * width)   # one id per pair of blocks, increasing along the rows
        key = pair * span + v
        right = (position // width) % 2 == 1
        left_keys = key[~right]
        counted[right] += (np.searchsorted(left_keys, (pair[right] + 1) * span, "left")
                           - np.searchsorted(left_keys, key[right], "right"))
        v = v[np.argsort(key, kind="stable")]
        width *= 2
    return _group_sums(group, counted, n_groups)


def pair_counts(x: np.ndarray, y: np.ndarray, group: np.ndarray, n_groups: int) -> PairCounts:
    """The :class:`PairCounts` of every group (``group`` in ``0 .. n_groups - 1``, items in any order).

    >>> counts = pair_counts(np.array([1, 2, 3, 1, 1]), np.array([3, 3, 1, 1, 2]), np.array([0, 0, 0, 1, 1]), 2)
    >>> [c.tolist() for c in counts]   # discordant, tied in x, tied in y, tied in both
    [[2, 0], [0, 1], [1, 0], [0, 0]]
    """
    g = np.asarray(group, dtype=np.int64)
    xs, ys = _dense(np.asarray(x)), _dense(np.asarray(y))
    order = np.lexsort((ys, xs, g))
    g_xy, x_xy, y_xy = g[order], xs[order], ys[order]
    by_y = np.lexsort((ys, g))
    return PairCounts(
        # sorted by x (ties by y): a pair ordered oppositely by y is an inversion of y, and one tied in x is not
        _inversions(g_xy, y_xy, n_groups),
        _tied_pairs(g_xy, (x_xy,), n_groups),
        _tied_pairs(g[by_y], (ys[by_y],), n_groups),
        _tied_pairs(g_xy, (x_xy, y_xy), n_groups))


def _undefined(values: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    """Groups where the order of some pair by ``values`` is undefined: a NaN, or an infinity held twice."""
    bad = np.isnan(values)
    inf = np.isinf(values)
    if inf.any():
        order = np.lexsort((values, group))
        g, v = group[order], values[order]
        same = (g[1:] == g[:-1]) & (v[1:] == v[:-1]) & np.isinf(v[1:])
        bad[order[1:][same]] = True
    return np.bincount(group[bad], minlength=n_groups) > 0


def tau_b(rank: np.ndarray, strength: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    """Kendall's tau-b per group between ``-rank`` (1 = best) and ``strength``; NaN where undefined (a group
    whose members are all tied in either, or a strength that is NaN).

    >>> tau_b(np.array([1, 2, 3, 1, 1]), np.array([3., 2., 1., 1., 2.]), np.array([0, 0, 0, 1, 1]), 2)
    array([ 1., nan])
    """
    x = -np.asarray(rank).astype(np.float64)
    y = np.asarray(strength).astype(np.float64)
    g = np.asarray(group, dtype=np.int64)
    counts = pair_counts(x, y, g, n_groups)
    m = np.bincount(g, minlength=n_groups)
    n0 = m * (m - 1) // 2
    n1, n2 = counts.tied_x, counts.tied_y
    num = (n0 - n1 - n2 + counts.tied_both - 2 * counts.discordant).astype(np.float64)
    denom = np.sqrt((n0 - n1) * (n0 - n2).astype(np.float64))
    out = np.where(denom > 0, num / np.where(denom > 0, denom, 1), np.nan)
    out[_undefined(x, g, n_groups) | _undefined(y, g, n_groups)] = np.nan
    return out


def kendall_distances(ranks: Sequence[np.ndarray], pairs: Sequence[tuple[int, int]], need: np.ndarray,
                      tix: np.ndarray, T: int) -> np.ndarray:
    """[pairs, T] normalised Kendall distances between ``ranks[a]`` and ``ranks[b]`` for each pair ``(a, b)``.

    A pair of players ordered oppositely counts 1, a pair tied in one ranking only counts ½; the sum is
    divided by the number of pairs of players (0 = same order, 1 = reversed). Only tournaments where ``need``
    ([pairs, T]) is set are paired (the others are 0, as rankings that agree are).

    >>> a, b = np.array([1, 2, 3]), np.array([3, 2, 1])
    >>> kendall_distances([a, b], [(0, 1)], np.ones((1, 1), bool), np.zeros(3, int), 1).tolist()
    [[1.0]]
    """
    n = np.bincount(tix, minlength=T)
    out = np.zeros((len(pairs), T))
    for p, (a, b) in enumerate(pairs):
        rows = np.nonzero(need[p][tix])[0]
        if not len(rows):
            continue
        c = pair_counts(ranks[a][rows], ranks[b][rows], tix[rows], T)
        weight = 2 * c.discordant + (c.tied_x - c.tied_both) + (c.tied_y - c.tied_both)
        out[p] = weight / 2 / np.maximum(n * (n - 1) / 2, 1)
    return np.where(need, out, 0.0)


def kendall_distance(a: np.ndarray, b: np.ndarray, tix: np.ndarray, T: int) -> np.ndarray:
    """Normalised Kendall distance per tournament between two rankings with ties (players sorted by tix).

    >>> kendall_distance(np.array([1, 1, 3]), np.array([1, 2, 3]), np.zeros(3, int), 1).round(4).tolist()
    [0.1667]
    """
    return kendall_distances([a, b], [(0, 1)], np.ones((1, T), dtype=bool), tix, T)[0]
