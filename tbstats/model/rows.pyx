# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The compiled loops over the rows of a players x rounds view (Cython): rows are a tournament's rounds, too
short for numpy's row-wise reductions, so each loop is one pass over memory, run without the GIL.

- :func:`row_sums`, :func:`row_matches`, :func:`row_products`, :func:`row_cut_one` and :func:`row_cuts`
  (:mod:`tbstats.model.grid`: masked sums, counts, dot products, and the cuts of C.07 14 and 16.5);
- :func:`opponents_values`, :func:`opponents_sums` and :func:`opponents_flagged_sums` (each round's opponent's
  per-player value: :meth:`tbstats.model.dense.Dense.through`, :meth:`~tbstats.model.dense.Dense.opponents_sum`);
- :func:`round_categories`, each round's C.07 16.2 category (:mod:`tbstats.engine.unplayed`);
- :func:`scatter_rows`, a block's per-player values put in the batch's order (:func:`tbstats.model.grid.put_rows`).

Each is checked against numpy or a plain Python loop by tests/test_rows.py.
"""

from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc

ctypedef fused cell_t:
    uint8_t
    int8_t
    int16_t
    int32_t
    int64_t


def row_sums(const cell_t[:, :] values, const uint8_t[:, :] mask, int64_t[::1] out) -> None:
    """``out[i]``: the sum of row ``i`` of ``values`` where ``mask`` (every cell when ``mask`` has no rows).

    Masked cells are added times 0 or 1, not behind a branch (a mask's cells do not follow a pattern that
    branch prediction learns: 2.4 times faster); rows of adjacent cells, the usual case, are read through a
    pointer, whose unit step the compiler knows."""
    cdef Py_ssize_t P = values.shape[0], R = values.shape[1], i, j
    cdef bint masked = mask.shape[0] > 0
    cdef int64_t acc
    cdef const cell_t *v
    cdef const uint8_t *m
    if out.shape[0] != P or (masked and (mask.shape[0] != P or mask.shape[1] != R)):
        raise ValueError("row_sums: the mask and the output must match the values' shape")
    cdef bint adjacent = R > 0 and values.strides[1] == sizeof(cell_t) and (not masked or mask.strides[1] == 1)
    with nogil:
        if adjacent and masked:
            for i in range(P):
                v, m, acc = &values[i, 0], &mask[i, 0], 0
                for j in range(R):
                    acc += v[j] * (m[j] != 0)
                out[i] = acc
        elif adjacent:
            for i in range(P):
                v, acc = &values[i, 0], 0
                for j in range(R):
                    acc += v[j]
                out[i] = acc
        else:
            for i in range(P):
                acc = 0
                for j in range(R):
                    acc += values[i, j] * ((not masked) or mask[i, j] != 0)
                out[i] = acc


def row_matches(const cell_t[:, :] values, const int64_t[::1] target, const uint8_t[:, :] mask,
                int64_t[::1] out) -> None:
    """``out[i]``: the number of cells of row ``i`` of ``values`` equal to ``target[i]`` where ``mask`` (WIN: the
    rounds scored as a win, without the comparison's players x rounds array); counted as 0 or 1, not branched."""
    cdef Py_ssize_t P = values.shape[0], R = values.shape[1], i, j
    cdef int64_t acc, want
    if target.shape[0] != P or mask.shape[0] != P or mask.shape[1] != R or out.shape[0] != P:
        raise ValueError("row_matches: the mask must match the values' shape, target and out have one per row")
    with nogil:
        for i in range(P):
            acc, want = 0, target[i]
            for j in range(R):
                acc += (values[i, j] == want) & (mask[i, j] != 0)
            out[i] = acc


def row_products(const cell_t[:, :] left, const cell_t[:, :] right, const uint8_t[:, :] mask,
                 int64_t[::1] out) -> None:
    """``out[i]``: the sum over row ``i`` of ``left * right`` where ``mask``, each product in int64 (SB's sum of
    opponent scores times points, without the products' array)."""
    cdef Py_ssize_t P = left.shape[0], R = left.shape[1], i, j
    cdef int64_t acc
    if (right.shape[0] != P or right.shape[1] != R or mask.shape[0] != P or mask.shape[1] != R
            or out.shape[0] != P):
        raise ValueError("row_products: the arrays must have one shape and the output one entry per row")
    with nogil:
        for i in range(P):
            acc = 0
            for j in range(R):
                acc += <int64_t>left[i, j] * right[i, j] * (mask[i, j] != 0)
            out[i] = acc


def row_cut_one(const cell_t[:, :] values, const uint8_t[:, :] mask, const uint8_t[:, :] vur, bint highest,
                int64_t[::1] total, int64_t[::1] count) -> None:
    """One cut, in place: where ``count[i]`` > 0, ``count[i]`` less one and ``total[i]`` less the value the cut
    removes from row ``i``'s elements (``mask``): its highest (``highest``), else its lowest VUR element's
    (``vur`` where ``mask``) when it has one (C.07 16.5: a VUR is cut when it is the least significant value
    and when it is not lower than it, and it never is), else its lowest. ``vur`` with no rows: none is a VUR.

    The single cut of ``tbstats.engine.tiebreaks.base.cut_sum``: a row's extreme and its VUR elements' in one pass,
    the sums passed in (:func:`row_cuts` finds which element each of several cuts removes, and sums what is left)."""
    cdef Py_ssize_t P = values.shape[0], R = values.shape[1], i, j
    cdef bint vurs = vur.shape[0] > 0
    cdef bint seen, any_vur
    cdef int64_t x, best, best_vur
    if mask.shape[0] != P or mask.shape[1] != R or total.shape[0] != P or count.shape[0] != P or (
            vurs and (vur.shape[0] != P or vur.shape[1] != R)):
        raise ValueError("row_cut_one: the masks and the sums must match the values' shape")
    with nogil:
        for i in range(P):
            if count[i] <= 0:
                continue
            best, best_vur, seen, any_vur = 0, 0, False, False
            for j in range(R):
                if mask[i, j] == 0:
                    continue
                x = values[i, j]
                if not seen or (x > best if highest else x < best):
                    best, seen = x, True
                if vurs and vur[i, j] != 0 and (not any_vur or x < best_vur):
                    best_vur, any_vur = x, True
            total[i] -= best_vur if (any_vur and not highest) else best
            count[i] -= 1


cdef inline bint _lower(const cell_t[:, :] values, const cell_t[:, :] scores, Py_ssize_t i, Py_ssize_t j,
                        Py_ssize_t k, bint by_score) noexcept nogil:
    """Whether element ``j`` of row ``i`` is less significant than element ``k`` (strictly): by score then value
    (``by_score``), else by value."""
    if by_score and scores[i, j] != scores[i, k]:
        return scores[i, j] < scores[i, k]
    return values[i, j] < values[i, k]


def row_cuts(const cell_t[:, :] values, const cell_t[:, :] scores, const uint8_t[:, :] mask,
             const uint8_t[:, :] vur, Py_ssize_t low, Py_ssize_t high, bint by_score, int64_t[::1] total,
             int64_t[::1] count) -> None:
    """Per row, the sum of ``values`` (``total``) and the number (``count``) of the elements (``mask``) left after
    ``low`` least and then ``high`` most significant cuts (C.07 14, 16.5), one element a cut, in the order and with
    the choices of ``tbstats.engine.tiebreaks.base.cut_order``:

    - the least significant element is the lowest value, or with ``by_score`` the lowest ``scores`` then the
      lowest value (SB: the lowest-scored opponent); in a row with a VUR cell (``vur``, anywhere in the row) ties
      go to a VUR element; then to the earliest round;
    - when the row's least significant element is not a VUR and a VUR element is left, the VUR element of the
      lowest value (then score, then round) is cut instead, unless its value is lower (16.5);
    - the most significant element is the highest (score, then) value, ties to the earliest round.

    A cut with no element left cuts nothing. Every array must have the rows and columns of ``values``."""
    cdef Py_ssize_t P = values.shape[0], R = values.shape[1], i, j, step, pick, v
    cdef bint any_vur
    cdef int64_t acc, n
    cdef uint8_t *keep
    if (scores.shape[0] != P or scores.shape[1] != R or mask.shape[0] != P or mask.shape[1] != R
            or vur.shape[0] != P or vur.shape[1] != R or total.shape[0] != P or count.shape[0] != P):
        raise ValueError("row_cuts: the scores, masks and sums must match the values' shape")
    if low < 0 or high < 0:
        raise ValueError("row_cuts: the numbers of cuts must not be negative")
    keep = <uint8_t *>malloc(max(R, 1))
    if keep == NULL:
        raise MemoryError()
    try:
        with nogil:
            for i in range(P):
                any_vur = False
                for j in range(R):
                    keep[j] = mask[i, j] != 0
                    any_vur = any_vur or vur[i, j] != 0
                for step in range(low + high):
                    pick = -1
                    if step < low:
                        for j in range(R):
                            if keep[j] and (pick < 0 or _lower(values, scores, i, j, pick, by_score) or (
                                    any_vur and vur[i, j] and not vur[i, pick]
                                    and not _lower(values, scores, i, pick, j, by_score))):
                                pick = j
                        if pick >= 0 and any_vur and not vur[i, pick]:
                            v = -1
                            for j in range(R):
                                if keep[j] and vur[i, j] and (v < 0 or values[i, j] < values[i, v] or (
                                        values[i, j] == values[i, v] and scores[i, j] < scores[i, v])):
                                    v = j
                            if v >= 0 and values[i, v] >= values[i, pick]:
                                pick = v
                    else:
                        for j in range(R):
                            if keep[j] and (pick < 0 or _lower(values, scores, i, pick, j, by_score)):
                                pick = j
                    if pick < 0:   # nothing left to cut
                        break
                    keep[pick] = 0
                acc, n = 0, 0
                for j in range(R):
                    acc += values[i, j] * keep[j]
                    n += keep[j]
                total[i], count[i] = acc, n
    finally:
        free(keep)


cdef inline Py_ssize_t _opponent_row(int32_t o, uint8_t use, Py_ssize_t n) noexcept nogil:
    """The opponent ``o`` as a row of a per-player array of ``n`` rows where ``use``, else -1 (none: -1, or out of
    range), chosen by selection, not by a branch (``use`` follows no pattern that branch prediction learns)."""
    cdef bint ok = (use != 0) & (<uint64_t><int64_t>o < <uint64_t>n)
    return o if ok else -1


def opponents_values(const cell_t[::1] values, const int32_t[:, :] opp, const uint8_t[:, :] use, cell_t pad,
                     cell_t[:, :] out) -> None:
    """``out[i, j]``: the per-player ``values`` of the opponent ``opp[i, j]`` where ``use`` (and the opponent is
    a row of ``values``), ``pad`` elsewhere. Both choices are made by selection, not by branches (``use`` follows
    no pattern that branch prediction learns)."""
    cdef Py_ssize_t P = opp.shape[0], R = opp.shape[1], n = values.shape[0], i, j, k
    if use.shape[0] != P or use.shape[1] != R or out.shape[0] != P or out.shape[1] != R:
        raise ValueError("opponents_values: the mask and the output must match the opponents' shape")
    with nogil:
        for i in range(P):
            for j in range(R):
                k = _opponent_row(opp[i, j], use[i, j], n)
                out[i, j] = values[k if k >= 0 else 0] if k >= 0 else pad


def opponents_sums(const cell_t[::1] values, const int32_t[:, :] opp, const uint8_t[:, :] use,
                   int64_t[::1] out) -> None:
    """``out[i]``: the sum of the per-player ``values`` of the opponents ``opp[i, j]`` where ``use`` (and the
    opponent is a row of ``values``): :func:`opponents_values` summed along each row, without its array."""
    cdef Py_ssize_t P = opp.shape[0], R = opp.shape[1], n = values.shape[0], i, j, k
    cdef int64_t total
    if use.shape[0] != P or use.shape[1] != R or out.shape[0] != P:
        raise ValueError("opponents_sums: the mask and the output must match the opponents' shape")
    with nogil:
        for i in range(P):
            total = 0
            for j in range(R):
                k = _opponent_row(opp[i, j], use[i, j], n)
                total += values[k if k >= 0 else 0] if k >= 0 else 0
            out[i] = total


def opponents_flagged_sums(const uint8_t[::1] flag, const int32_t[:, :] opp, const uint8_t[:, :] use,
                           const cell_t[:, :] values, int64_t[::1] out) -> None:
    """``out[i]``: the sum of ``values[i, j]`` over the rounds where ``use`` and the opponent ``opp[i, j]`` (a row
    of ``flag``) has its ``flag``: ``row_sums`` of ``values`` masked by :func:`opponents_values` of ``flag``, without
    that mask's array (products by 0 or 1, not branches)."""
    cdef Py_ssize_t P = opp.shape[0], R = opp.shape[1], n = flag.shape[0], i, j, k
    cdef int64_t total
    if (use.shape[0] != P or use.shape[1] != R or values.shape[0] != P or values.shape[1] != R
            or out.shape[0] != P):
        raise ValueError("opponents_flagged_sums: the mask, the values and the output must match the opponents'"
                         " shape")
    if n == 0:   # no opponent is a row (and ``flag[0]`` below must exist)
        out[:] = 0
        return
    with nogil:
        for i in range(P):
            total = 0
            for j in range(R):
                k = _opponent_row(opp[i, j], use[i, j], n)
                total += values[i, j] * ((flag[k if k >= 0 else 0] != 0) & (k >= 0))
            out[i] = total


def round_categories(const int8_t[:, :] gtype, const uint8_t[:, :] counted, const int8_t[::1] by_type,
                     const uint8_t[::1] requested, const uint8_t[::1] vur, int8_t followed, int8_t trailing,
                     int8_t not_counted, int8_t[:, :] out) -> None:
    """The category of every round of every row: ``not_counted`` outside the counted rounds; for a requested
    bye (``requested`` by game type), ``followed`` when a counted round that is not a VUR (``vur`` by game
    type) comes after it in the row, else ``trailing``; ``by_type`` of the game type for every other round."""
    cdef Py_ssize_t P = gtype.shape[0], R = gtype.shape[1], T = by_type.shape[0], i, j, last
    cdef int8_t g
    cdef bint bad = False
    if (counted.shape[0] != P or counted.shape[1] != R or out.shape[0] != P or out.shape[1] != R
            or requested.shape[0] != T or vur.shape[0] != T):
        raise ValueError("round_categories: the arrays' shapes differ")
    with nogil:
        for i in range(P):
            last = -1
            for j in range(R - 1, -1, -1):
                g = gtype[i, j]
                if g < 0 or g >= T:
                    bad = True
                elif counted[i, j] and not vur[g]:
                    last = j
                    break
            for j in range(R):
                g = gtype[i, j]
                if g < 0 or g >= T:
                    bad = True
                    out[i, j] = not_counted
                elif not counted[i, j]:
                    out[i, j] = not_counted
                elif requested[g]:
                    out[i, j] = followed if j < last else trailing
                else:
                    out[i, j] = by_type[g]
    if bad:
        raise ValueError("round_categories: a game type code out of range")


ctypedef fused item_t:
    uint8_t
    int64_t


def scatter_rows(const item_t[::1] values, const int64_t[::1] rows, item_t[::1] out) -> None:
    """``out[rows[i]] = values[i]``: a part's per-player values put in the batch's player order (rows checked in
    range first, then written in one pass, where numpy checks each one as it goes)."""
    cdef Py_ssize_t n = rows.shape[0], P = out.shape[0], i
    cdef bint bad = False
    if values.shape[0] != n:
        raise ValueError("scatter_rows: values and rows differ in length")
    with nogil:
        for i in range(n):
            if rows[i] < 0 or rows[i] >= P:
                bad = True
                break
        if not bad:
            for i in range(n):
                out[rows[i]] = values[i]
    if bad:
        raise ValueError("scatter_rows: a row out of range")
