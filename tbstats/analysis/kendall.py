"""Kendall statistics between two orders of the players of many groups at once (pair by pair in small groups,
in O(n log n) in large ones).

Everything rests on :func:`pair_counts`: per group, the pairs of members ordered oppositely by two orders
(discordant), and the pairs tied in each and in both. Groups of at most :data:`SEGMENT_PAIRS` members (players
tied on points, most events) are counted pair by pair in one compiled pass. In larger ones the discordant pairs
are the inversions of one order sorted by the other, counted by a merge sort run on every such group at once
(one numpy pass per doubling of the block width, so about log2 of the largest group's size passes over their
rows); ties are runs of equal values after a sort. No pairs of players are ever listed there, so a 500-player
event costs about what 500 rows do, not 125,000 pairs, and no group is padded to the size of the largest.

- :func:`tau_b`: Kendall's tau-b per group (``tbstats evaluate``, ``tbstats simulate``);
- :func:`kendall_distances`: the normalised Kendall distance between rankings with ties (``tbstats compare``):
  only the segments where two rankings can differ are counted, pair by pair when they are small (at most
  :data:`SEGMENT_PAIRS` players, in a compiled pass), else by the merge sort.

Both are exact: the counts are integers, and each result is the same floating-point expression of them
the pair-by-pair definition gives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from tbstats.analysis.segments import group_pair_counts, segment_counts
from tbstats.model.cached import cached_property

#: segments (groups) of at most this many players are counted pair by pair (:func:`segment_counts`,
#: :func:`group_pair_counts`), larger ones by the merge sort of :func:`_inversions`
SEGMENT_PAIRS = 128


class PairCounts(NamedTuple):
    """Per group: pairs of members ordered oppositely by ``x`` and ``y``, tied in ``x``, tied in ``y``, tied in
    both (int64 arrays of length ``n_groups``)."""

    discordant: np.ndarray
    tied_x: np.ndarray
    tied_y: np.ndarray
    tied_both: np.ndarray


def codes(values: np.ndarray) -> np.ndarray:
    """Whole numbers from 0 in the order of ``values``, equal where they are equal (whole numbers are shifted,
    others ranked among their distinct values)."""
    if values.dtype.kind in "iub":
        return values.astype(np.int64) - (int(values.min()) if len(values) else 0)
    return np.unique(values, return_inverse=True)[1].reshape(-1).astype(np.int64)


def _sorted(group: np.ndarray, x: np.ndarray, y: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, ...]]:
    """The items sorted by group, then ``x``, then ``y`` (codes of :func:`codes`): their groups, their ``y``,
    and arrays that are equal on two items exactly when their ``x`` and ``y`` are. One sort of a combined key
    (group, x and y in bit fields), read back from the sorted key, when it fits in 63 bits; else a lexsort."""
    if len(group):
        bx, by = int(x.max()).bit_length(), int(y.max()).bit_length()
        if int(group.max()).bit_length() + bx + by < 63:
            key = np.sort((group << (bx + by)) | (x << by) | y, kind="stable")   # timsort: runs in order are cheap
            return key >> (bx + by), key & ((1 << by) - 1), (key,)
    order = np.lexsort((y, x, group))
    return group[order], y[order], (x[order], y[order])


def _group_sums(group: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
    """Per group, the sum of ``values`` (whole numbers, int64) over the items of ``group``."""
    # float sums are exact below 2 ** 53 (pairs of a group of 90 million)
    return np.bincount(group, weights=values, minlength=n_groups).astype(np.int64)


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
    ``w`` items, and each pair of neighbouring blocks is merged by one sort of the whole array by (pair of
    blocks, value, side), the left block first among equals. The ``i``-th item of a right block (0-based),
    at place ``m`` of its merged pair, has ``m - i`` items of the (full) left block at or below it, so
    ``w - m + i`` above it; summed over a right block of ``r`` items that is ``r w + r (r - 1) / 2`` (known
    from the group's size) less the places of its items. A group leaves once one block holds it all, so the
    many small groups cost a pass or two and only the large ones go on.

    >>> _inversions(np.array([0, 0, 0, 1, 1]), np.array([2, 0, 1, 0, 1]), 2).tolist()
    [2, 0]
    """
    size = np.bincount(group, minlength=n_groups)
    n = len(group)
    span = int(values.max()) + 1 if n else 1
    dtype = np.int32 if 2 * (n + 1) * span < np.iinfo(np.int32).max else np.int64
    largest = int(size.max()) if n_groups else 0
    # the groups largest first (a radix sort of 16-bit keys below 65,536 items): the groups still merging at
    # a level are then a prefix, of the groups here and of the rows below (a slice, no copy)
    by_size = np.argsort((largest - size).astype(np.uint16 if largest < 1 << 16 else np.int64), kind="stable")
    sizes = size[by_size]
    found_by_size = np.zeros(n_groups, dtype=np.int64)
    width = 1
    while width < largest:   # the counts from the sizes alone, level by level (groups larger than the width)
        k = int(np.searchsorted(-sizes, -width, "left"))
        full, rest = np.divmod(sizes[:k], 2 * width)
        r = np.clip(rest - width, 0, None)
        found_by_size[:k] += full * (width * width + width * (width - 1) // 2) + r * width + r * (r - 1) // 2
        width *= 2
    found = np.empty(n_groups, dtype=np.int64)
    found[by_size] = found_by_size
    ends = np.cumsum(sizes)
    start = np.zeros(n_groups, dtype=np.int64)
    start[by_size] = ends - sizes
    position = np.arange(n) - (np.cumsum(size) - size)[group]
    at = start[group] + position
    v: np.ndarray = np.empty(n, dtype=dtype)
    first: np.ndarray = np.empty(n, dtype=dtype)
    pos: np.ndarray = np.empty(n, dtype=dtype)
    v[at], first[at], pos[at] = values, start[group], position
    places: np.ndarray = np.zeros(n, dtype=dtype)    # per row: the places of right-block items merged there
    level = 0
    while True:
        k = int(np.searchsorted(-sizes, -(1 << level), "left"))   # groups larger than a block
        if not k:
            break
        rows = int(ends[k - 1])
        f, p, u = first[:rows], pos[:rows], v[:rows]
        base = (f + (p >> (level + 1))) * span   # one number per pair of blocks, in row order
        # (each block is already a sorted run: numpy's stable sort, a timsort, merges runs; 6-19% less here)
        merged = np.sort(((base + u) << 1) | ((p >> level) & 1), kind="stable")
        v[:rows] = (merged >> 1) - base
        places[:rows] += (merged & 1) * (p & ((2 << level) - 1))
        level += 1
    found -= np.bincount(group, weights=places[at], minlength=n_groups).astype(np.int64)
    return found


def pair_counts(x: np.ndarray, y: np.ndarray, group: np.ndarray, n_groups: int) -> PairCounts:
    """The :class:`PairCounts` of every group (``group`` in ``0 .. n_groups - 1``, items in any order).

    >>> counts = pair_counts(np.array([1, 2, 3, 1, 1]), np.array([3, 3, 1, 1, 2]), np.array([0, 0, 0, 1, 1]), 2)
    >>> [c.tolist() for c in counts]   # discordant, tied in x, tied in y, tied in both
    [[2, 0], [0, 1], [1, 0], [0, 0]]
    """
    return Against(y, group, n_groups).counts(x)


def _discordant(group: np.ndarray, x: np.ndarray, y: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Per group, the pairs ordered oppositely by the codes ``x`` and ``y``, and the pairs tied in both."""
    g, ys, same = _sorted(group, x, y)
    # sorted by x (ties by y): a pair ordered oppositely by y is an inversion of y, and one tied in x is not
    return _inversions(g, ys, n_groups), _tied_pairs(g, same, n_groups)


def _tied_in(group: np.ndarray, codes: np.ndarray, n_groups: int) -> np.ndarray:
    """Per group, the pairs of items with equal ``codes``."""
    g, _, same = _sorted(group, codes, np.zeros_like(group))
    return _tied_pairs(g, same, n_groups)


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


class Against:
    """One side of :func:`pair_counts` (``values`` per item of many groups) prepared once to be paired with
    many others: its codes, its ties and the groups' pairs do not depend on the other side (``tbstats evaluate``
    pairs every configuration's standings with one strength).

    Groups of at most :data:`SEGMENT_PAIRS` items (players tied on points, most events) are counted pair by pair
    in one compiled pass (:func:`tbstats.analysis.segments.group_pair_counts`), the larger ones by the merge sort
    (:func:`_discordant`): the merge sort's passes over every item cost more than the pairs of small groups."""

    def __init__(self, values: np.ndarray, group: np.ndarray, n_groups: int) -> None:
        self.values = np.asarray(values)
        self.group = np.asarray(group, dtype=np.int64)
        self.n_groups = n_groups
        self.codes = codes(self.values)
        self.tied = _tied_in(self.group, self.codes, n_groups)
        m = np.bincount(self.group, minlength=n_groups)
        self.pairs = m * (m - 1) // 2
        # the items by group for the compiled pass, and the items of the groups left to the merge sort
        g = self.group
        self._by_group = None if not len(g) or bool((g[1:] >= g[:-1]).all()) else np.argsort(g, kind="stable")
        self._bounds = np.zeros(n_groups + 1, dtype=np.int64)
        np.cumsum(m, out=self._bounds[1:])
        self._y = self._in_groups(self.codes)
        large = m > SEGMENT_PAIRS
        self._large = np.flatnonzero(large[g]) if large.any() else None

    def _in_groups(self, codes: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(codes if self._by_group is None else codes[self._by_group], dtype=np.int64)

    def counts(self, x: np.ndarray) -> PairCounts:
        """The :class:`PairCounts` of ``x`` (the x side) against these values (the y side)."""
        xs = codes(np.asarray(x))
        discordant, tied_x, tied_both = (np.zeros(self.n_groups, dtype=np.int64) for _ in range(3))
        group_pair_counts(self._bounds, self._in_groups(xs), self._y, SEGMENT_PAIRS, discordant, tied_x, tied_both)
        if self._large is not None:
            group, xl = self.group[self._large], xs[self._large]
            d, both = _discordant(group, xl, self.codes[self._large], self.n_groups)
            discordant += d
            tied_both += both
            tied_x += _tied_in(group, xl, self.n_groups)
        return PairCounts(discordant, tied_x, self.tied, tied_both)

    def tau_b(self, rank: np.ndarray) -> np.ndarray:
        """Kendall's tau-b per group between ``-rank`` (1 = best) and these values, a strength (:func:`tau_b`)."""
        rank = np.asarray(rank)
        x = -(rank if rank.dtype.kind == "i" else rank.astype(np.float64))
        c = self.counts(x)
        n0, n1, n2 = self.pairs, c.tied_x, c.tied_y
        num = (n0 - n1 - n2 + c.tied_both - 2 * c.discordant).astype(np.float64)
        denom = np.sqrt((n0 - n1) * (n0 - n2).astype(np.float64))
        out = np.where(denom > 0, num / np.where(denom > 0, denom, 1), np.nan)
        out[_undefined(x.astype(np.float64), self.group, self.n_groups) | self.undefined] = np.nan
        return out

    @cached_property
    def undefined(self) -> np.ndarray:
        """Groups where these values leave the order of some pair undefined (:func:`_undefined`)."""
        return _undefined(self.values.astype(np.float64), self.group, self.n_groups)


def tau_b(rank: np.ndarray, strength: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    """Kendall's tau-b per group between ``-rank`` (1 = best) and ``strength``; NaN where undefined (a group
    whose members are all tied in either, or a strength that is NaN). Many rankings against one strength:
    :class:`Against`.

    >>> tau_b(np.array([1, 2, 3, 1, 1]), np.array([3., 2., 1., 1., 2.]), np.array([0, 0, 0, 1, 1]), 2)
    array([ 1., nan])
    """
    return Against(np.asarray(strength).astype(np.float64), group, n_groups).tau_b(rank)


def kendall_distances(ranks: Sequence[np.ndarray], pairs: Sequence[tuple[int, int]], need: np.ndarray,
                      tix: np.ndarray, T: int) -> np.ndarray:
    """[pairs, T] normalised Kendall distances between ``ranks[a]`` and ``ranks[b]`` for each pair ``(a, b)``.

    A pair of players ordered oppositely counts 1, a pair tied in one ranking only counts ½; the sum is
    divided by the number of pairs of players (0 = same order, 1 = reversed). Only tournaments where ``need``
    ([pairs, T]) is set are paired (the others are 0, as rankings that agree are).

    Two rankings of one event usually differ only inside groups (those tied on points): wherever the players
    above a place are the same in both and neither ranking ties across it, every pair across the place is in
    the same strict order in both and counts nothing. So each ranking is sorted once, each pair of rankings
    cuts its events at those places, and only the segments between cuts of two or more players are counted:
    in one compiled pass (:func:`tbstats.analysis.segments.segment_counts`), pair by pair in segments of up to
    :data:`SEGMENT_PAIRS` players, by the merge sort of :func:`_discordant` in larger ones.

    >>> a, b = np.array([1, 2, 3]), np.array([3, 2, 1])
    >>> kendall_distances([a, b], [(0, 1)], np.ones((1, 1), bool), np.zeros(3, int), 1).tolist()
    [[1.0]]
    """
    tix = np.asarray(tix, dtype=np.int64)
    n = np.bincount(tix, minlength=T)
    out = np.zeros((len(pairs), T))
    rows = len(tix)
    at = np.arange(rows)
    by: dict[int, tuple[np.ndarray, ...]] = {}
    for c in sorted({c for pair in pairs for c in pair}):
        code = codes(np.asarray(ranks[c]))
        # by event, then rank (players tied in a ranking in any order): one sort of a combined key if it fits
        bits = int(code.max()).bit_length() if rows else 0
        order = np.argsort((tix << bits) | code) if (T - 1).bit_length() + bits < 63 else np.lexsort((code, tix))
        place = np.empty(rows, dtype=np.int64)
        place[order] = at
        r, t = code[order], tix[order]
        edge = np.ones(rows, dtype=bool)   # the players at places <= k all rank strictly above those after k
        edge[:-1] = (r[1:] != r[:-1]) | (t[1:] != t[:-1])
        by[c] = code, order, place, edge, _tied_pairs(t, (r,), T), r, t
    for p, (a, b) in enumerate(pairs):
        code_a, order, _, edge_a, tied_a, in_order, t = by[a]
        code_b, _, place_b, edge_b, tied_b, _, _ = by[b]
        # the segments between cuts, pair by pair in one compiled pass where they are small (the usual case)
        per_event = np.zeros(T, dtype=np.int64)
        large = np.zeros(rows, dtype=np.uint8)
        need_p = np.ascontiguousarray(need[p], dtype=np.uint8)
        if segment_counts(order, place_b, edge_a.view(np.uint8), edge_b.view(np.uint8), code_a, code_b, need_p,
                          tix, SEGMENT_PAIRS, per_event, large):
            # larger segments by the merge sort: a cut after place k has the same players above it in both
            # rankings, and neither ties across it
            cut = (np.maximum.accumulate(place_b[order]) == at) & edge_a & edge_b
            starts = np.concatenate([[True], cut[:-1]])        # a segment starts here
            keep = large.view(bool)
            new = starts[keep]
            local = np.cumsum(new) - 1
            # a pair tied in a ranking is never cut apart: the ties of the whole events, the rest in the segments
            discordant, tied_both = _discordant(local, in_order[keep], code_b[order[keep]], int(new.sum()))
            per_event += np.bincount(t[keep][new], weights=discordant - tied_both, minlength=T).astype(np.int64)
        weight = 2 * per_event + tied_a + tied_b
        out[p] = weight / 2 / np.maximum(n * (n - 1) / 2, 1)
    return np.where(need, out, 0.0)


def kendall_distance(a: np.ndarray, b: np.ndarray, tix: np.ndarray, T: int) -> np.ndarray:
    """Normalised Kendall distance per tournament between two rankings with ties (players sorted by tix).

    >>> kendall_distance(np.array([1, 1, 3]), np.array([1, 2, 3]), np.zeros(3, int), 1).round(4).tolist()
    [0.1667]
    """
    return kendall_distances([a, b], [(0, 1)], np.ones((1, T), dtype=bool), tix, T)[0]
