# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The compiled passes of the archive fit (:mod:`tbstats.analysis.strength`) over the game sides: the terms of the
log posterior's gradient and Hessian at the strengths ``r``, and the product of that Hessian with a vector.

A side ``k`` is player ``i[k]`` against ``j[k]`` scoring ``s[k]`` (1, 0.5, 0); its expected score is
``p = 1 / (1 + exp(-c (r[i] - r[j])))`` with ``c = ln 10 / 400`` (the Elo curve). Each pass reads the sides once,
in their order (the fit orders them by player), and adds into the player's cell in that order, so its sums are
the same from run to run. Checked against the numpy expressions they replace by tests/test_fairness.py.
"""

from libc.math cimport exp
from libc.stdint cimport int64_t


def side_terms(const double[::1] r, const int64_t[::1] i, const int64_t[::1] j, const double[::1] s, double c,
               double[::1] w, double[::1] surplus, double[::1] weight) -> None:
    """For every side: ``w[k] = c² p (1 - p)`` (the side's weight in the Hessian); per player, the sums over his
    sides of ``s - p`` added to ``surplus`` and of ``w`` to ``weight`` (both zero, or what is to be added to).
    Raises ValueError when the lengths differ or a side names a player out of range."""
    cdef Py_ssize_t m = s.shape[0], n = r.shape[0], k, bad = -1
    cdef int64_t a, b
    cdef double p, c2 = c * c
    if i.shape[0] != m or j.shape[0] != m or w.shape[0] != m or surplus.shape[0] != n or weight.shape[0] != n:
        raise ValueError("side_terms: the arrays' lengths differ")
    with nogil:
        for k in range(m):
            a, b = i[k], j[k]
            if a < 0 or a >= n or b < 0 or b >= n:
                bad = k
                break
            p = 1.0 / (1.0 + exp(-c * (r[a] - r[b])))
            surplus[a] += s[k] - p
            w[k] = c2 * p * (1.0 - p)
            weight[a] += w[k]
    if bad >= 0:
        raise ValueError(f"side_terms: side {bad} names a player out of range (0..{n - 1})")


def hessian_product(const int64_t[::1] i, const int64_t[::1] j, const double[::1] w, const double[::1] diag,
                    const double[::1] q, double[::1] out) -> None:
    """``out = H q`` for ``H = diag(diag) - A``, where ``A`` holds ``w[k]`` at ``(i[k], j[k])`` for every side.
    Raises ValueError when the lengths differ or a side names a player out of range."""
    cdef Py_ssize_t m = w.shape[0], n = q.shape[0], k, bad = -1
    cdef int64_t a, b
    if i.shape[0] != m or j.shape[0] != m or diag.shape[0] != n or out.shape[0] != n:
        raise ValueError("hessian_product: the arrays' lengths differ")
    with nogil:
        for k in range(n):
            out[k] = diag[k] * q[k]
        for k in range(m):
            a, b = i[k], j[k]
            if a < 0 or a >= n or b < 0 or b >= n:
                bad = k
                break
            out[a] -= w[k] * q[b]
    if bad >= 0:
        raise ValueError(f"hessian_product: side {bad} names a player out of range (0..{n - 1})")


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
