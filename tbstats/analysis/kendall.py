"""Kendall distances between rankings with ties, per tournament, for many rankings at once.

Each ranking's sign matrix (the order of every pair of players of a tournament) is computed once per
tournament and shared by every pair of rankings that needs it, so the cost grows with the number of rankings,
not with the number of pairs times a full recomputation.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

_PAD = np.iinfo(np.int64).max // 4


def _padded(ranks: np.ndarray, tix: np.ndarray, T: int, small: bool = False) -> np.ndarray:
    """[T, Pmax] rank matrix padded with a large rank (padding pairs are equal in every ranking); int16 when
    ``small`` (every rank below 2**14, the pad)."""
    counts = np.bincount(tix, minlength=T)
    width = int(counts.max()) if T else 0
    start = np.concatenate([[0], np.cumsum(counts)[:-1]])
    col = np.arange(len(tix)) - start[tix]
    out = np.full((T, width), 2**14 if small else _PAD, dtype=np.int16 if small else np.int64)
    out[tix, col] = ranks
    return out


def kendall_distances(ranks: Sequence[np.ndarray], pairs: Sequence[tuple[int, int]], need: np.ndarray,
                      tix: np.ndarray, T: int, chunk_cells: int = 8_000_000) -> np.ndarray:
    """[pairs, T] normalised Kendall distances between ``ranks[a]`` and ``ranks[b]`` for each pair ``(a, b)``.

    Players are sorted by ``tix``. A pair of players ordered oppositely counts 1, a pair tied in one ranking
    only counts ½; the sum is divided by the number of pairs of players (0 = same order, 1 = reversed).
    Only tournaments where ``need`` ([pairs, T]) is set for some pair are paired (the others are 0, as
    rankings that agree are). Tournaments are bucketed by size (powers of two) so one large event does not
    pad every small one.

    >>> a, b = np.array([1, 2, 3]), np.array([3, 2, 1])
    >>> kendall_distances([a, b], [(0, 1)], np.ones((1, 1), bool), np.zeros(3, int), 1).tolist()
    [[1.0]]
    """
    n = np.bincount(tix, minlength=T)
    out = np.zeros((len(pairs), T))
    wanted = need.any(axis=0) if len(pairs) else np.zeros(T, dtype=bool)
    used = sorted({c for pair in pairs for c in pair})
    small = max((int(ranks[c].max(initial=0)) for c in used), default=0) < 2**14
    bucket = np.ceil(np.log2(np.maximum(n, 2))).astype(np.int64)
    for k in np.unique(bucket[wanted]):
        chosen = np.nonzero(wanted & (bucket == k))[0]
        rows = np.isin(tix, chosen)
        local = np.searchsorted(chosen, tix[rows])
        # small ints: a quarter of the memory traffic
        padded = {c: _padded(ranks[c][rows], local, len(chosen), small) for c in used}
        width = next(iter(padded.values())).shape[1]
        i, j = np.triu_indices(width, 1)
        weight = np.zeros((len(pairs), len(chosen)), dtype=np.int64)
        step = max(1, chunk_cells // max(len(i) * len(used), 1))
        for lo in range(0, len(chosen), step):
            signs = {c: np.sign(m[lo:lo + step, i] - m[lo:lo + step, j]).astype(np.int8) for c, m in padded.items()}
            for p, (a, b) in enumerate(pairs):
                sa, sb = signs[a], signs[b]
                weight[p, lo:lo + step] = 2 * ((sa * sb) < 0).sum(axis=1) + ((sa == 0) != (sb == 0)).sum(axis=1)
        m = n[chosen]
        out[:, chosen] = weight / 2 / np.maximum(m * (m - 1) / 2, 1)
    return np.where(need, out, 0.0)


def kendall_distance(a: np.ndarray, b: np.ndarray, tix: np.ndarray, T: int, chunk_cells: int = 8_000_000) -> np.ndarray:
    """Normalised Kendall distance per tournament between two rankings with ties (players sorted by tix).

    >>> kendall_distance(np.array([1, 1, 3]), np.array([1, 2, 3]), np.zeros(3, int), 1).round(4).tolist()
    [0.1667]
    """
    return kendall_distances([a, b], [(0, 1)], np.ones((1, T), dtype=bool), tix, T, chunk_cells)[0]
