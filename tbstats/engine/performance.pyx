# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The Perfect Tournament Performance's search, compiled (:mod:`tbstats.engine.tiebreaks.rating`, C.07 10.3).

In numpy each step of the search looked up the expected score of every cell of the view, a dozen steps for every
player at once: PTP alone cost 12 times BH (benchmarks/RESULTS.md, session of 2026-12-05). Here each player's search
runs over its own games only, one table lookup per game and step, without the GIL.

Checked against a plain Python loop over the same steps by tests/test_performance.py.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport free, malloc


ctypedef fused rating_t:
    int32_t
    int64_t


def perfect_ratings(const rating_t[:, :] ratings, const uint8_t[:, :] played, const int64_t[::1] halves,
                    const int64_t[::1] expected, int64_t none, int64_t[::1] out) -> None:
    """Per player, the lowest whole rating whose expected score against the opponents of its games (``played``:
    their ``ratings``) reaches its score (``halves``: half points): the sum over its games of the hundredths that
    ``expected`` gives for the rating's difference from the opponent's, ``expected[span + diff]`` for a ``diff``
    from ``-span`` to ``span`` (beyond: the end's), 0 (a sure loss) to 100 (a sure win). The search runs from 800
    below the lowest opponent to 736 above the highest, halving the range; a zero score gives 800 below the lowest
    opponent (10.3). A player without games gets ``none``."""
    cdef Py_ssize_t P = ratings.shape[0], R = ratings.shape[1], span = (expected.shape[0] - 1) // 2, i, j, k, g
    cdef int64_t lo, hi, mid, target, total, diff, low_opp, high_opp
    cdef int64_t *own
    if played.shape[0] != P or played.shape[1] != R or halves.shape[0] != P or out.shape[0] != P:
        raise ValueError("perfect_ratings: played, halves and out must match the ratings' rows")
    if expected.shape[0] % 2 != 1 or expected[0] != 0 or expected[2 * span] != 100:
        raise ValueError("perfect_ratings: the expected scores must run from 0 to 100 over differences -span..span")
    own = <int64_t *>malloc(max(R, 1) * sizeof(int64_t))
    if own == NULL:
        raise MemoryError()
    try:
        with nogil:
            for i in range(P):
                g = 0
                for j in range(R):
                    if played[i, j]:
                        own[g] = ratings[i, j]
                        g += 1
                if g == 0:
                    out[i] = none
                    continue
                low_opp, high_opp = own[0], own[0]
                for k in range(1, g):
                    low_opp = own[k] if own[k] < low_opp else low_opp
                    high_opp = own[k] if own[k] > high_opp else high_opp
                lo, hi, target = low_opp - 800, high_opp + 736, 50 * halves[i]
                if halves[i] == 0:
                    out[i] = lo
                    continue
                while lo < hi:   # the expected score grows with the rating: the lowest that reaches the score
                    mid = lo + (hi - lo) // 2   # (hi - lo > 0: the floor of the midpoint)
                    total = 0
                    for k in range(g):
                        diff = mid - own[k]
                        diff = span if diff > span else -span if diff < -span else diff
                        total += expected[span + diff]
                    if total >= target:
                        hi = mid
                    else:
                        lo = mid + 1
                out[i] = lo
    finally:
        free(own)
