# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Direct Encounter's compiled passes (:mod:`tbstats.engine.standings`, C.07 6), each one pass without the GIL.

In numpy each took several passes over every game or every tied player, each with a temporary as large as them
(DE right after points, where most players are tied, cost twice BH: benchmarks/RESULTS.md, session of 2026-12-05):

- :func:`group_games`: the cells of the games played over the board between two members of one group;
- :func:`pair_sums`: the direct games as pairs of players, each pair once, with its points and games (6.1.2);
- :func:`group_scores`: each player's points and opponents met among its group's members, keeping the pairs still
  inside an open group;
- :func:`all_met`: the open groups where every member has met every other (6.2);
- :func:`place_from_top`: each open group's members placed from the top while one stays alone there whatever its
  missing games give (6.3).

Each is checked against the numpy it replaced by tests/test_encounters.py.
"""

from libc.stdint cimport INT64_MAX, int32_t, int64_t, uint8_t
from libc.stdlib cimport calloc, free, malloc

from tbstats.model.keyrows cimport KeyRow, sort_rows


cdef bint _players(const int64_t[::1] a, const int64_t[::1] b, Py_ssize_t n, Py_ssize_t P) noexcept nogil:
    """Whether the first ``n`` entries of ``a`` and of ``b`` are all players, 0 .. ``P`` - 1."""
    cdef Py_ssize_t k
    for k in range(n):
        if a[k] < 0 or a[k] >= P or b[k] < 0 or b[k] >= P:
            return False
    return True


def group_games(const int32_t[:, :] opp, const uint8_t[:, :] played, const int64_t[::1] group,
                const uint8_t[::1] among, int64_t[::1] out) -> int:
    """The flat cells (row x rounds + round, ascending) of the games played over the board (``played``) by a
    player of ``among`` against an opponent (``opp``: its row; none outside the rows) of the same ``group``,
    written to ``out`` (room for every cell); returns how many."""
    cdef Py_ssize_t P = opp.shape[0], R = opp.shape[1], p, r, m = 0
    cdef int32_t o
    if played.shape[0] != P or played.shape[1] != R or group.shape[0] != P or among.shape[0] != P:
        raise ValueError("group_games: opp, played, group and among differ in shape")
    if out.shape[0] < P * R:
        raise ValueError("group_games: out has no room for every cell")
    with nogil:
        for p in range(P):
            if not among[p]:
                continue
            for r in range(R):
                o = opp[p, r]
                if played[p, r] and 0 <= o < P and group[o] == group[p]:
                    out[m] = p * R + r
                    m += 1
    return m


def pair_sums(const int64_t[::1] i, const int64_t[::1] j, const int64_t[::1] pts, Py_ssize_t P,
              int64_t[::1] owner, int64_t[::1] partner, int64_t[::1] total, int64_t[::1] games) -> int:
    """The games ``i`` against ``j`` (players 0 .. ``P`` - 1; ``pts``: the points of ``i``) as pairs, each (owner,
    partner) once: ``total`` their points, ``games`` how many, grouped by owner in ascending order (the partners of
    one owner in the order of their first game). Written to the four outputs (room for every game); returns how
    many pairs."""
    cdef Py_ssize_t n = i.shape[0], k, a, b, m = 0, q, first
    cdef int64_t o
    cdef int64_t* start
    cdef int64_t* slot
    if j.shape[0] != n or pts.shape[0] != n:
        raise ValueError("pair_sums: i, j and pts differ in length")
    if owner.shape[0] < n or partner.shape[0] < n or total.shape[0] < n or games.shape[0] < n:
        raise ValueError("pair_sums: the outputs have no room for every game")
    if not _players(i, j, n, P):
        raise ValueError("pair_sums: a player out of range")
    if n == 0:
        return 0
    start = <int64_t*>malloc((P + 1) * sizeof(int64_t))
    slot = <int64_t*>malloc(n * sizeof(int64_t))
    if start == NULL or slot == NULL:
        free(start)
        free(slot)
        raise MemoryError()
    with nogil:
        for q in range(P + 1):
            start[q] = 0
        for k in range(n):   # a counting sort of the games by owner
            start[i[k] + 1] += 1
        for q in range(P):
            start[q + 1] += start[q]
        for k in range(n):
            o = i[k]
            slot[start[o]] = k
            start[o] += 1   # at last the end of the owner's games
        a = 0
        for q in range(P):
            b = start[q]
            first = m   # the owner's first pair
            while a < b:
                k = slot[a]
                for o in range(first, m):   # a few partners: looked for in turn
                    if partner[o] == j[k]:
                        total[o] += pts[k]
                        games[o] += 1
                        break
                else:
                    owner[m] = q
                    partner[m] = j[k]
                    total[m] = pts[k]
                    games[m] = 1
                    m += 1
                a += 1
    free(start)
    free(slot)
    return m


def group_scores(const int64_t[::1] labels, const uint8_t[::1] active, int64_t[::1] owner, int64_t[::1] partner,
                 int64_t[::1] score, Py_ssize_t n, int64_t[::1] points, int64_t[::1] met) -> int:
    """Of the first ``n`` pairs (``owner`` against ``partner``, ``score`` the owner's points), those whose owner is
    ``active`` and whose partner has the owner's label, moved to the front of the three arrays in their order;
    ``points`` and ``met`` (per player, set here) are each owner's sum of their scores and their count. Returns how
    many pairs were kept."""
    cdef Py_ssize_t P = labels.shape[0], k, m = 0
    cdef int64_t o, q
    if active.shape[0] != P or points.shape[0] != P or met.shape[0] != P:
        raise ValueError("group_scores: labels, active, points and met differ in length")
    if n > owner.shape[0] or n > partner.shape[0] or n > score.shape[0]:
        raise ValueError("group_scores: fewer pairs than n")
    if not _players(owner, partner, n, P):
        raise ValueError("group_scores: a player out of range")
    with nogil:
        for k in range(P):
            points[k] = 0
            met[k] = 0
        for k in range(n):
            o, q = owner[k], partner[k]
            if active[o] and labels[o] == labels[q]:
                points[o] += score[k]
                owner[m] = o
                partner[m] = q
                score[m] = score[k]
                met[o] += 1
                m += 1
    return m


def all_met(const int64_t[::1] labels, const uint8_t[::1] active, const int64_t[::1] met,
            const int64_t[::1] size, const uint8_t[::1] round_robin, uint8_t[::1] out) -> None:
    """``out``: the ``active`` players whose group (by label, a position 0 .. P - 1) has no active member outside a
    round robin that has met fewer than the other ``size`` - 1 members."""
    cdef Py_ssize_t P = labels.shape[0], p
    cdef uint8_t* missing
    cdef bint bad = False
    if not (active.shape[0] == met.shape[0] == size.shape[0] == round_robin.shape[0] == out.shape[0] == P):
        raise ValueError("all_met: the arrays differ in length")
    with nogil:
        for p in range(P):
            if labels[p] < 0 or labels[p] >= P:
                bad = True
                break
    if bad:
        raise ValueError("all_met: a label out of range")
    missing = <uint8_t*>malloc(P * sizeof(uint8_t) + 1)
    if missing == NULL:
        raise MemoryError()
    with nogil:
        for p in range(P):
            missing[p] = 0
        for p in range(P):
            if active[p] and met[p] != size[p] - 1 and not round_robin[p]:
                missing[labels[p]] = 1
        for p in range(P):
            out[p] = active[p] and not missing[labels[p]]
    free(missing)


def place_from_top(const int64_t[::1] labels, const int64_t[::1] score, const int64_t[::1] best,
                   const uint8_t[::1] candidates, const int64_t[::1] size, int64_t[::1] sub,
                   uint8_t[::1] nothing) -> None:
    """C.07 6.3 over every group at once: the ``candidates`` of each group (by label, a position 0 .. P - 1; ``size``
    members) sorted by ``score`` from the top (equal scores in any order: neither can be alone on top), each is
    placed while it and every one above it beat the ``best`` case of every member below them; when all but one are
    placed, the last is placed too. ``sub``: a placed candidate's place from the top (0 ..), an unplaced one's group
    size, 0 for the others; ``nothing``: the candidates of the groups where none was placed.

    The last member of a group has nobody below it: it beats a floor below every candidate's best."""
    cdef Py_ssize_t P = labels.shape[0], p, c = 0, a, b, k, placed
    cdef int64_t floor = INT64_MAX, below
    cdef bint bad = False
    cdef KeyRow* items
    cdef int64_t* end
    cdef int64_t* under
    if not (score.shape[0] == best.shape[0] == candidates.shape[0] == size.shape[0] == sub.shape[0]
            == nothing.shape[0] == P):
        raise ValueError("place_from_top: the arrays differ in length")
    with nogil:
        for p in range(P):
            sub[p] = 0
            nothing[p] = 0
            if candidates[p]:
                if labels[p] < 0 or labels[p] >= P:
                    bad = True
                    break
                c += 1
                if best[p] < floor:
                    floor = best[p]
    if bad:
        raise ValueError("place_from_top: a label out of range")
    if c == 0:
        return
    floor -= 1   # (a best at INT64_MIN cannot occur: scores and bests are sums of points)
    items = <KeyRow*>malloc(c * sizeof(KeyRow))
    end = <int64_t*>calloc(P + 1, sizeof(int64_t))
    under = <int64_t*>malloc(c * sizeof(int64_t))
    if items == NULL or end == NULL or under == NULL:
        free(items)
        free(end)
        free(under)
        raise MemoryError()
    with nogil:
        for p in range(P):   # the candidates of each group together, in label order
            if candidates[p]:
                end[labels[p] + 1] += 1
        for p in range(P):
            end[p + 1] += end[p]
        for p in range(P):
            if candidates[p]:
                k = end[labels[p]]
                items[k].label = labels[p]
                items[k].key = -score[p]
                items[k].at = p
                end[labels[p]] = k + 1   # at last the end of the group
        a = 0
        while a < c:
            b = end[items[a].label]
            sort_rows(items + a, b - a)
            below = floor   # the best case of the members below each one
            for k in range(b - 1, a - 1, -1):
                under[k] = below
                if best[items[k].at] > below:
                    below = best[items[k].at]
            placed = 0
            while a + placed < b and score[items[a + placed].at] > under[a + placed]:
                placed += 1
            for k in range(a, b):
                p = items[k].at
                sub[p] = k - a if k - a < placed or placed >= size[p] - 1 else size[p]
                nothing[p] = placed == 0
            a = b
    free(items)
    free(end)
    free(under)
