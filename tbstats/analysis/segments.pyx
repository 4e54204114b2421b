# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The compiled loops of :mod:`tbstats.analysis.kendall`, pair by pair where groups are small:

- :func:`segment_counts` (:func:`~tbstats.analysis.kendall.kendall_distances`): one pass over two rankings of many
  events, counting the pairs of players they order differently inside the segments where they can differ;
- :func:`group_pair_counts` (:class:`~tbstats.analysis.kendall.Against`): per group of items, the pairs ordered
  oppositely by two orders and the pairs tied in one and in both.

Checked against the merge-sort counts of :mod:`tbstats.analysis.kendall` and the pair-by-pair definition by
tests/test_kendall.py.
"""

from libc.stdint cimport int64_t, uint8_t


def segment_counts(const int64_t[::1] order_a, const int64_t[::1] place_b, const uint8_t[::1] edge_a,
                   const uint8_t[::1] edge_b, const int64_t[::1] code_a, const int64_t[::1] code_b,
                   const uint8_t[::1] need, const int64_t[::1] event_of, Py_ssize_t largest,
                   int64_t[::1] per_event, uint8_t[::1] large) -> int:
    """Per event, the pairs of players ordered oppositely by rankings ``a`` and ``b`` less the pairs tied in both,
    added to ``per_event``, counted pair by pair within each segment of at most ``largest`` players.

    The players are taken in ``a``'s order (``order_a``: the player at each place; players sorted by event, then
    ``a``). A segment ends at place ``k`` when the players at places up to ``k`` are the same in ``b``'s order
    (``place_b``: each player's place there; their largest place is ``k``) and neither ranking ties across it
    (``edge_a[k]``, ``edge_b[k]``: the player at place ``k + 1`` ranks strictly below, or is of another event).
    Pairs across segments are in the same strict order in both and count nothing. ``code_a`` and ``code_b``:
    each player's rank code (equal where tied); ``event_of``: each player's event; only events with ``need`` set
    are counted. The places of larger segments are marked in ``large`` instead (for the merge sort); returns how
    many places were marked."""
    cdef Py_ssize_t n = order_a.shape[0], T = need.shape[0], k, i, j, start = 0, marked = 0
    cdef int64_t top = -1, p, ai, bi, aj, bj, found, t
    if not (place_b.shape[0] == edge_a.shape[0] == edge_b.shape[0] == code_a.shape[0] == code_b.shape[0]
            == event_of.shape[0] == large.shape[0] == n) or per_event.shape[0] != T:
        raise ValueError("segment_counts: the arrays' lengths differ")
    for k in range(n):
        if order_a[k] < 0 or order_a[k] >= n or place_b[k] < 0 or place_b[k] >= n or event_of[k] < 0 \
                or event_of[k] >= T:
            raise ValueError("segment_counts: a place, player or event out of range")
    with nogil:
        for k in range(n):
            p = place_b[order_a[k]]
            if p > top:
                top = p
            if top != k or not edge_a[k] or not edge_b[k]:
                continue
            t = event_of[order_a[k]]
            if k > start and need[t]:
                if k - start + 1 > largest:
                    for i in range(start, k + 1):
                        large[i] = 1
                    marked += k - start + 1
                else:
                    found = 0
                    for i in range(start, k + 1):
                        ai = code_a[order_a[i]]
                        bi = code_b[order_a[i]]
                        for j in range(i + 1, k + 1):
                            aj = code_a[order_a[j]]
                            bj = code_b[order_a[j]]
                            found += ((ai < aj) & (bi > bj)) | ((ai > aj) & (bi < bj))
                            found -= (ai == aj) & (bi == bj)
                    per_event[t] += found
            start = k + 1
    return marked


def group_pair_counts(const int64_t[::1] bounds, const int64_t[::1] x, const int64_t[::1] y, Py_ssize_t largest,
                      int64_t[::1] discordant, int64_t[::1] tied_x, int64_t[::1] tied_both) -> int:
    """Per group of at most ``largest`` items, pair by pair: the pairs ordered oppositely by ``x`` and ``y``
    (``discordant``), tied in ``x`` (``tied_x``) and tied in both (``tied_both``), added to those arrays. The
    items are sorted by group: group ``g`` holds items ``bounds[g]`` to ``bounds[g + 1] - 1``. Larger groups are
    left as they are; returns how many items they hold."""
    cdef Py_ssize_t G = bounds.shape[0] - 1, n = x.shape[0], g, i, j, a, b, left = 0
    cdef int64_t xi, yi, xj, yj, d, tx, tb
    if G < 0 or y.shape[0] != n or discordant.shape[0] != G or tied_x.shape[0] != G or tied_both.shape[0] != G:
        raise ValueError("group_pair_counts: the arrays' lengths differ")
    for g in range(G):
        if bounds[g] < 0 or bounds[g + 1] < bounds[g] or bounds[g + 1] > n:
            raise ValueError("group_pair_counts: the bounds are not increasing within the items")
    with nogil:
        for g in range(G):
            a, b = bounds[g], bounds[g + 1]
            if b - a > largest:
                left += b - a
                continue
            d = tx = tb = 0
            for i in range(a, b):
                xi, yi = x[i], y[i]
                for j in range(i + 1, b):
                    xj, yj = x[j], y[j]
                    d += ((xi < xj) & (yi > yj)) | ((xi > xj) & (yi < yj))
                    tx += xi == xj
                    tb += (xi == xj) & (yi == yj)
            discordant[g] += d
            tied_x[g] += tx
            tied_both[g] += tb
    return left
