# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The compiled passes of the archive fit (:mod:`tbstats.analysis.strength`) over the game sides: the terms of the
log posterior's gradient and Hessian at the strengths ``r``, and the product of that Hessian with a vector.

A side ``k`` is player ``i[k]`` against ``j[k]`` scoring ``s[k]`` (1, 0.5, 0); its expected score is
``p = 1 / (1 + exp(-c (r[i] - r[j])))`` with ``c = ln 10 / 400`` (the Elo curve). Each pass reads the sides once,
in their order (the fit orders them by player), and adds into the player's cell in that order, so its sums are
the same from run to run. Checked against the numpy expressions they replace by tests/test_fairness.py.
"""

from libc.math cimport exp
from libc.stdlib cimport free, malloc, qsort
from libc.stdint cimport int64_t, uint8_t


def side_terms(const double[::1] r, const int64_t[::1] i, const int64_t[::1] j, const double[::1] s,
               const double[::1] games, double c, double[::1] w, double[::1] surplus, double[::1] weight,
               Py_ssize_t lo=0, Py_ssize_t hi=-1, int64_t first=0, int64_t last=-1) -> None:
    """For every row (``games[k]`` games of ``i[k]`` against ``j[k]`` scoring ``s[k]`` in all; a side is a row of
    one game): ``w[k] = c² games p (1 - p)`` (the row's weight in the Hessian); per player, the sums over his
    rows of ``s - games p`` added to ``surplus`` and of ``w`` to ``weight`` (both zero, or what is to be added
    to). Only rows ``lo .. hi - 1`` (all: ``hi`` -1), whose players must lie in ``first .. last - 1`` (``last`` -1:
    any), so that threads can each take rows of their own players. Raises ValueError when the lengths differ or
    a row names a player out of range."""
    cdef Py_ssize_t m = s.shape[0], n = r.shape[0], k, bad = -1
    cdef int64_t a, b
    cdef double p, c2 = c * c
    hi, last = m if hi < 0 else hi, n if last < 0 else last
    if i.shape[0] != m or j.shape[0] != m or w.shape[0] != m or games.shape[0] != m or surplus.shape[0] != n \
            or weight.shape[0] != n or not 0 <= lo <= hi <= m or not 0 <= first <= last <= n:
        raise ValueError("side_terms: the arrays' lengths differ, or the range is out of them")
    with nogil:
        for k in range(lo, hi):
            a, b = i[k], j[k]
            if a < first or a >= last or b < 0 or b >= n:
                bad = k
                break
            p = 1.0 / (1.0 + exp(-c * (r[a] - r[b])))
            surplus[a] += s[k] - games[k] * p
            w[k] = c2 * games[k] * p * (1.0 - p)
            weight[a] += w[k]
    if bad >= 0:
        raise ValueError(f"side_terms: side {bad} names a player out of range ({first}..{last - 1}, 0..{n - 1})")


def hessian_product(const int64_t[::1] i, const int64_t[::1] j, const double[::1] w, const double[::1] diag,
                    const double[::1] q, double[::1] out, Py_ssize_t lo=0, Py_ssize_t hi=-1, int64_t first=0,
                    int64_t last=-1) -> None:
    """``out = H q`` for ``H = diag(diag) - A``, where ``A`` holds ``w[k]`` at ``(i[k], j[k])`` for every side; or
    only its players ``first .. last - 1`` from rows ``lo .. hi - 1``, which must be all their rows and only theirs
    (threads then each take players of their own; -1: all). Raises ValueError when the lengths differ or a side
    names a player out of range."""
    cdef Py_ssize_t m = w.shape[0], n = q.shape[0], k, bad = -1
    cdef int64_t a, b
    hi, last = m if hi < 0 else hi, n if last < 0 else last
    if i.shape[0] != m or j.shape[0] != m or diag.shape[0] != n or out.shape[0] != n or not 0 <= lo <= hi <= m \
            or not 0 <= first <= last <= n:
        raise ValueError("hessian_product: the arrays' lengths differ, or the range is out of them")
    with nogil:
        for k in range(first, last):
            out[k] = diag[k] * q[k]
        for k in range(lo, hi):
            a, b = i[k], j[k]
            if a < first or a >= last or b < 0 or b >= n:
                bad = k
                break
            out[a] -= w[k] * q[b]
    if bad >= 0:
        raise ValueError(f"hessian_product: side {bad} names a player out of range ({first}..{last - 1}, 0..{n - 1})")


def owner_terms(const double[::1] x, const int64_t[::1] owner, const double[::1] rj, const double[::1] s,
                const double[::1] n, double c, double[::1] surplus, double[::1] weight) -> None:
    """The refit's pass (one unknown ``x[o]`` per owner ``o``; a row is ``n`` games against one opponent of strength
    ``rj`` scoring ``s`` in all): per owner, the sums over his rows of ``s - n p`` added to ``surplus`` and of
    ``n p (1 - p)`` to ``weight``, where ``p = 1 / (1 + exp(-c (x[owner] - rj)))``. Raises ValueError when the
    lengths differ or an owner is out of range."""
    cdef Py_ssize_t m = s.shape[0], size = x.shape[0], k, bad = -1
    cdef int64_t a
    cdef double p
    if owner.shape[0] != m or rj.shape[0] != m or n.shape[0] != m or surplus.shape[0] != size \
            or weight.shape[0] != size:
        raise ValueError("owner_terms: the arrays' lengths differ")
    with nogil:
        for k in range(m):
            a = owner[k]
            if a < 0 or a >= size:
                bad = k
                break
            p = 1.0 / (1.0 + exp(-c * (x[a] - rj[k])))
            surplus[a] += s[k] - n[k] * p
            weight[a] += n[k] * p * (1.0 - p)
    if bad >= 0:
        raise ValueError(f"owner_terms: row {bad} names an owner out of range (0..{size - 1})")


cdef inline double _sigma(double u) noexcept nogil:
    """The logistic curve at ``u`` (an argument beyond +-700 gives 0 or 1 without overflow)."""
    if u < -700.0:
        return 0.0
    if u > 700.0:
        return 1.0
    return 1.0 / (1.0 + exp(-u))


def chebyshev_sums(const int64_t[::1] players, const int64_t[::1] first, const int64_t[::1] many,
                   const int64_t[::1] opponent, const double[::1] n, const double[::1] r, const double[::1] nodes,
                   const double[:, ::1] basis, double width, double c, double[:, ::1] coef_a,
                   double[:, ::1] coef_d) -> None:
    """For each player ``p = players[k]``, the Chebyshev coefficients (``coef_a[k]``, ``coef_d[k]``) on
    ``r[p] +- width`` of ``A(x) = sum n σ(c (x - r[j]))`` and ``D(x) = sum n σ (1 - σ)`` over his groups
    ``first[p] .. first[p] + many[p]`` (opponent ``j = opponent[g]``, ``n[g]`` games): their values at the points
    ``r[p] + width * nodes[t]`` taken into ``basis[m, t]`` (the discrete cosine transform of the nodes).
    Raises ValueError when the lengths differ or an index is out of range."""
    cdef Py_ssize_t P = players.shape[0], M = nodes.shape[0], N = r.shape[0], G = opponent.shape[0]
    cdef Py_ssize_t k, g, t, m, bad = -1
    cdef int64_t p, lo, hi, j
    cdef double z, sg, acc_a, acc_d
    cdef double[64] fa, fd, scale
    if M > 64 or basis.shape[0] != M or basis.shape[1] != M or coef_a.shape[0] != P or coef_d.shape[0] != P \
            or coef_a.shape[1] != M or coef_d.shape[1] != M or n.shape[0] != G or first.shape[0] != N \
            or many.shape[0] != N:
        raise ValueError("chebyshev_sums: the arrays' shapes differ")
    with nogil:
        for t in range(M):   # σ(c (x_t - r_j)) = 1 / (1 + z scale[t]), z = exp(-c (r[p] - r_j)): no exp per node
            scale[t] = exp(-c * width * nodes[t])
        for k in range(P):
            p = players[k]
            if p < 0 or p >= N or first[p] < 0 or first[p] + many[p] > G:
                bad = k
                break
            lo, hi = first[p], first[p] + many[p]
            for t in range(M):
                fa[t] = 0.0
                fd[t] = 0.0
            for g in range(lo, hi):
                j = opponent[g]
                if j < 0 or j >= N:
                    bad = k
                    break
                z = exp(min(700.0, max(-700.0, -c * (r[p] - r[j]))))
                for t in range(M):
                    sg = 1.0 / (1.0 + z * scale[t])
                    fa[t] += n[g] * sg
                    fd[t] += n[g] * sg * (1.0 - sg)
            if bad >= 0:
                break
            for m in range(M):
                acc_a = 0.0
                acc_d = 0.0
                for t in range(M):
                    acc_a += basis[m, t] * fa[t]
                    acc_d += basis[m, t] * fd[t]
                coef_a[k, m] = acc_a
                coef_d[k, m] = acc_d
    if bad >= 0:
        raise ValueError(f"chebyshev_sums: player {bad} names a group or an opponent out of range")


cdef inline double _clenshaw(const double[:, ::1] coef, Py_ssize_t k, double t) noexcept nogil:
    """``sum coef[k, m] T_m(t)`` (Clenshaw's recurrence)."""
    cdef Py_ssize_t m
    cdef double b1 = 0.0, b2 = 0.0, b0
    for m in range(coef.shape[1] - 1, 0, -1):
        b0 = 2.0 * t * b1 - b2 + coef[k, m]
        b2 = b1
        b1 = b0
    return t * b1 - b2 + coef[k, 0]


def refit_pairs(const int64_t[::1] row, const double[::1] center, const double[:, ::1] coef_a,
                const double[:, ::1] coef_d, const double[::1] surplus, const int64_t[::1] side_start,
                const int64_t[::1] side_count, const double[::1] side_r, const int64_t[::1] co_start,
                const int64_t[::1] co_count, const double[::1] co_n, const double[::1] co_v, const double[::1] co_r,
                double width, double c, double prior_var, double tol, int64_t steps, double[::1] out,
                uint8_t[::1] failed) -> None:
    """Newton's method for each pair ``q`` (a player without one event) on its one unknown, from ``center[q]``
    (his whole-fit strength): the gradient ``c (surplus[q] - A(x)) - x / prior_var``, where ``A`` is the sum of
    his expected scores over every game (the Chebyshev series ``coef_a[row[q]]`` on ``center[q] +- width``) less
    those of his sides in the event left out (``side_r[side_start[q]:][:side_count[q]]``, the opponents'
    strengths), and, for his games elsewhere against an opponent who also played in that event, ``co_n`` games
    at that opponent's strength ``co_v`` instead of ``co_r`` (``co_start[q]:][:co_count[q]]``). The curvature
    likewise from ``coef_d``. Steps clipped to 200, until one is below ``tol`` (at most ``steps``); ``failed[q]``
    where the iterate leaves the series' interval (``out[q]`` is then to be found otherwise).
    Raises ValueError when the lengths differ or an index is out of range."""
    cdef Py_ssize_t Q = row.shape[0], q, k, it, bad = -1
    cdef int64_t a, b
    cdef double x, t, A, D, sg, sv, d
    if center.shape[0] != Q or surplus.shape[0] != Q or side_start.shape[0] != Q or side_count.shape[0] != Q \
            or co_start.shape[0] != Q or co_count.shape[0] != Q or out.shape[0] != Q or failed.shape[0] != Q \
            or coef_d.shape[0] != coef_a.shape[0] or coef_d.shape[1] != coef_a.shape[1] \
            or co_v.shape[0] != co_n.shape[0] or co_r.shape[0] != co_n.shape[0]:
        raise ValueError("refit_pairs: the arrays' lengths differ")
    with nogil:
        for q in range(Q):
            if row[q] < 0 or row[q] >= coef_a.shape[0] or side_start[q] < 0 \
                    or side_start[q] + side_count[q] > side_r.shape[0] or co_start[q] < 0 \
                    or co_start[q] + co_count[q] > co_n.shape[0]:
                bad = q
                break
            x = center[q]
            failed[q] = 0
            for it in range(steps):
                t = (x - center[q]) / width
                if t < -1.0 or t > 1.0:
                    failed[q] = 1
                    break
                A = _clenshaw(coef_a, row[q], t)
                D = _clenshaw(coef_d, row[q], t)
                for k in range(side_start[q], side_start[q] + side_count[q]):
                    sg = _sigma(c * (x - side_r[k]))
                    A -= sg
                    D -= sg * (1.0 - sg)
                for k in range(co_start[q], co_start[q] + co_count[q]):
                    sv = _sigma(c * (x - co_v[k]))
                    sg = _sigma(c * (x - co_r[k]))
                    A += co_n[k] * (sv - sg)
                    D += co_n[k] * (sv * (1.0 - sv) - sg * (1.0 - sg))
                d = (c * (surplus[q] - A) - x / prior_var) / (c * c * D + 1.0 / prior_var)
                d = min(200.0, max(-200.0, d))
                x += d
                if -tol < d < tol:
                    break
            if (x - center[q]) / width < -1.0 or (x - center[q]) / width > 1.0:
                failed[q] = 1
            out[q] = x
    if bad >= 0:
        raise ValueError(f"refit_pairs: pair {bad} names a row, side or correction out of range")


cdef inline Py_ssize_t _gallop(const int64_t[::1] a, Py_ssize_t lo, Py_ssize_t hi, int64_t value) noexcept nogil:
    """The first position in ``a[lo:hi]`` (ascending) whose value is at least ``value`` (``hi`` if none), found
    by steps doubling from ``lo`` and then halving: cheap when it lies near ``lo``, as in a merge."""
    cdef Py_ssize_t step = 1, top = lo, mid
    while top < hi and a[top] < value:
        lo = top + 1
        top = lo + step
        step *= 2
    if top > hi:
        top = hi
    while lo < top:
        mid = lo + (top - lo) // 2
        if a[mid] < value:
            lo = mid + 1
        else:
            top = mid
    return lo


def co_rows(const int64_t[::1] player, const int64_t[::1] event, const int64_t[::1] first,
            const int64_t[::1] many, const int64_t[::1] opponent, const int64_t[::1] at_start,
            const int64_t[::1] at_count, const int64_t[::1] at_player, int64_t[::1] counts, int64_t[::1] out_group,
            int64_t[::1] out_at) -> None:
    """For each pair ``q`` (``player[q]`` without ``event[q]``): his groups (``first[p] .. + many[p]``, opponents
    ascending) whose opponent is among the players refit without that event (ascending by player:
    ``at_player[at_start[e]:][:at_count[e]]``), by a merge of the two that steps through the shorter and gallops
    through the longer. ``counts[q]`` gets how many; where ``out_group`` is not empty, each one's group and
    position in ``at_player`` are written from ``sum(counts[:q])`` on.
    Raises ValueError when the lengths differ or an index is out of range."""
    cdef Py_ssize_t Q = player.shape[0], q, w = 0, bad = -1
    cdef int64_t p, e, lo, hi, a_lo, a_hi
    cdef bint fill = out_group.shape[0] > 0
    if event.shape[0] != Q or counts.shape[0] != Q or many.shape[0] != first.shape[0] \
            or at_count.shape[0] != at_start.shape[0] or out_at.shape[0] != out_group.shape[0]:
        raise ValueError("co_rows: the arrays' lengths differ")
    with nogil:
        for q in range(Q):
            p, e = player[q], event[q]
            if p < 0 or p >= first.shape[0] or e < 0 or e >= at_start.shape[0] or first[p] < 0 \
                    or first[p] + many[p] > opponent.shape[0] or at_start[e] < 0 \
                    or at_start[e] + at_count[e] > at_player.shape[0]:
                bad = q
                break
            lo, hi = first[p], first[p] + many[p]
            a_lo, a_hi = at_start[e], at_start[e] + at_count[e]
            counts[q] = 0
            while lo < hi and a_lo < a_hi:
                if hi - lo <= a_hi - a_lo:   # the longer list gallops to the shorter one's value
                    a_lo = _gallop(at_player, a_lo, a_hi, opponent[lo])
                else:
                    lo = _gallop(opponent, lo, hi, at_player[a_lo])
                if lo >= hi or a_lo >= a_hi:
                    break
                if opponent[lo] != at_player[a_lo]:   # one is past the other: the smaller steps on
                    if opponent[lo] < at_player[a_lo]:
                        lo += 1
                    else:
                        a_lo += 1
                    continue
                if fill:
                    if w >= out_group.shape[0]:
                        bad = q
                        break
                    out_group[w], out_at[w] = lo, a_lo
                    w += 1
                counts[q] += 1
                lo += 1
                a_lo += 1
            if bad >= 0:
                break
    if bad >= 0:
        raise ValueError(f"co_rows: pair {bad} names a player, event or group out of range, or the output is short")


cdef struct Side:
    int64_t opponent
    int64_t side


cdef int _by_opponent(const void* a, const void* b) noexcept nogil:
    cdef const Side* x = <const Side*>a
    cdef const Side* y = <const Side*>b
    if x.opponent != y.opponent:
        return -1 if x.opponent < y.opponent else 1
    return -1 if x.side < y.side else (1 if x.side > y.side else 0)


def side_groups(const int64_t[::1] order, const int64_t[::1] start, const int64_t[::1] n_games,
                const uint8_t[::1] wanted, const int64_t[::1] j, const double[::1] s, int64_t[::1] first,
                int64_t[::1] many, int64_t[::1] opponent, double[::1] count, double[::1] score,
                int64_t[::1] of_side) -> int:
    """The groups of the wanted players' sides: all a player's games against one opponent, in every event. A
    player's sides are ``order[start[p]:start[p] + n_games[p]]``; his groups are written from ``first[p]`` on
    (``many[p]`` of them, opponents ascending; players not wanted get none), each with its opponent, games and
    score, and ``of_side[k]`` is side ``k``'s group (left as it is for the others). Returns the number of groups.
    Raises ValueError when the lengths differ or an index is out of range."""
    cdef Py_ssize_t n = start.shape[0], m = j.shape[0], p, k, g = 0, bad = -1, longest = 0
    cdef int64_t side
    cdef Side* buffer
    if n_games.shape[0] != n or wanted.shape[0] != n or first.shape[0] != n or many.shape[0] != n \
            or s.shape[0] != m or of_side.shape[0] != m or count.shape[0] != opponent.shape[0] \
            or score.shape[0] != opponent.shape[0]:
        raise ValueError("side_groups: the arrays' lengths differ")
    for p in range(n):
        if wanted[p] and n_games[p] > longest:
            longest = n_games[p]
    buffer = <Side*>malloc(max(longest, 1) * sizeof(Side))
    if buffer == NULL:
        raise MemoryError()
    try:
        with nogil:
            for p in range(n):
                first[p] = g
                many[p] = 0
                if not wanted[p]:
                    continue
                if start[p] < 0 or start[p] + n_games[p] > order.shape[0]:
                    bad = p
                    break
                for k in range(n_games[p]):
                    side = order[start[p] + k]
                    if side < 0 or side >= m or j[side] < 0 or j[side] >= n:
                        bad = p
                        break
                    buffer[k].opponent = j[side]
                    buffer[k].side = side
                if bad >= 0:
                    break
                qsort(buffer, n_games[p], sizeof(Side), _by_opponent)
                for k in range(n_games[p]):
                    if k == 0 or buffer[k].opponent != buffer[k - 1].opponent:
                        if g >= opponent.shape[0]:
                            bad = p
                            break
                        opponent[g] = buffer[k].opponent
                        count[g] = 0.0
                        score[g] = 0.0
                        many[p] += 1
                        g += 1
                    count[g - 1] += 1.0
                    score[g - 1] += s[buffer[k].side]
                    of_side[buffer[k].side] = g - 1
                if bad >= 0:
                    break
    finally:
        free(buffer)
    if bad >= 0:
        raise ValueError(f"side_groups: player {bad}'s sides name a side or opponent out of range, or the output is short")
    return g
