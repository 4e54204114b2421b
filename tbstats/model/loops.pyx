# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The dense view's compiled loops (Cython): each is one pass over memory, run without the GIL, where numpy
needed many passes (each a temporary as large as the data) for the same work.

Over the games (:func:`tbstats.model.dense.build_buckets`):

- :func:`place_games` puts each game row in its player's cell of its round, or in the spare ``trash`` cell when
  the round is not counted or the player is none of the event's; with it go the opponent's row in the bucket
  (``NO_OPP`` when the opponent is none of the event's players), the points, the game type, black, and the
  round's outcome: by the result for a game played over the board, else by the points awarded (C.07 16.3.1).
  It reads the columns' Arrow buffers as they are (:mod:`tbstats.model.placing`);
- :func:`game_hash_sums` sums a hash of each game row per tournament (:mod:`tbstats.model.fingerprint`).

Over the rows of a players x rounds view (rows are a tournament's rounds: too short for numpy's row-wise
reductions): :func:`row_sums`, :func:`row_matches`, :func:`row_cut_one`, :func:`row_cuts` (:mod:`tbstats.model.grid`),
:func:`opponents_values` and :func:`opponents_sums` (:meth:`tbstats.model.dense.Dense.through`,
:meth:`~tbstats.model.dense.Dense.opponents_sum`) and :func:`round_categories` (C.07 16.2,
:mod:`tbstats.engine.unplayed`).

Over the players: :func:`half_up_quotients`, the averages' rounding (:func:`tbstats.engine.tiebreaks.base.round_half_up`),
:func:`decimals`, the exact values as decimals for output (:meth:`tbstats.engine.tiebreaks.base.Values.as_float`),
:func:`scatter_rows`, a block's values put in the batch's order (:class:`tbstats.engine.tiebreaks.base.Context`),
and :func:`kept_rows`, numpy's boolean index without a branch per row (:func:`tbstats.engine.standings.refine_tied`).

Over the players of a standings step: :func:`refine_groups` splits the tied groups by a key
(:func:`tbstats.engine.standings.refine`), each group sorted on its own (they are small) instead of the whole
batch's tied players at once.

Each is checked against a plain Python loop by tests/test_loops.py.
"""

from libc.math cimport NAN, floor
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc

from tbstats.model.keyrows cimport INSERTION_MAX, KeyRow, sort_rows

cdef enum:
    NO_OPP = -1   # tbstats.model.dense.NO_OPP
    LOSS = 0      # the outcome codes of tbstats.model.games
    DRAW = 1
    WIN = 2

#: The codes compiled in, checked against the model's by the tests.
CODES = {"NO_OPP": NO_OPP, "LOSS": LOSS, "DRAW": DRAW, "WIN": WIN}


cdef void _check_runs(const int64_t[::1] run_t, const int64_t[::1] run_len, Py_ssize_t T, Py_ssize_t n_games,
                      str name) except *:
    """Raise ValueError unless the runs (``run_t``: a tournament's row, below ``T``; ``run_len``: its rows)
    cover the ``n_games`` rows of the games exactly."""
    cdef Py_ssize_t k, total = 0
    if run_len.shape[0] != run_t.shape[0]:
        raise ValueError(f"{name}: run_t and run_len differ in length")
    for k in range(run_t.shape[0]):
        if run_t[k] < 0 or run_t[k] >= T or run_len[k] < 0:
            raise ValueError(f"{name}: a run names no tournament")
        total += run_len[k]
    if total != n_games:
        raise ValueError(f"{name}: the runs do not cover the games")


cdef inline bint _bit(const uint8_t* bitmap, Py_ssize_t bit) noexcept nogil:
    """Bit ``bit`` of an Arrow validity bitmap (least significant bit first); every bit when there is none."""
    return bitmap == NULL or (bitmap[bit >> 3] >> (bit & 7)) & 1


cdef const uint8_t* _bitmap(const uint8_t[::1] valid, Py_ssize_t bit_offset, Py_ssize_t n, str name) except? NULL:
    """The bitmap's first byte (NULL when ``valid`` is empty: no nulls), after checking that it holds rows
    ``bit_offset`` .. ``bit_offset + n``."""
    if valid.shape[0] == 0:
        return NULL
    if bit_offset < 0 or valid.shape[0] * 8 < bit_offset + n:
        raise ValueError(f"{name}: a validity bitmap is too short")
    return &valid[0]


def place_games(const int64_t[::1] run_t, const int64_t[::1] run_len,
                const int32_t[::1] player, const int16_t[::1] rnd, const int32_t[::1] points,
                const uint8_t[::1] gtype, const int32_t[::1] opponent, const uint8_t[::1] opp_valid,
                Py_ssize_t opp_bit, const uint8_t[:, ::1] views, const uint8_t[::1] res_valid, Py_ssize_t res_bit,
                const int8_t[::1] table, const uint8_t[::1] colour, const uint8_t[::1] col_valid,
                Py_ssize_t col_bit, int black, uint8_t played,
                const int64_t[::1] first_cell, const int64_t[::1] stride, const int64_t[::1] players,
                const int64_t[::1] first_local, const int64_t[::1] counted, const int64_t[::1] win,
                const int64_t[::1] draw,
                int32_t[::1] out_opp, int32_t[::1] out_pts, int8_t[::1] out_type, int8_t[::1] out_outcome,
                uint8_t[::1] out_black) -> None:
    """Place the games, given as runs of consecutive rows of one tournament (``run_t``: its row in the
    per-tournament arrays, ``run_len``: how many rows), in the flat buffers ``out_*`` (their last cell is
    the trash cell).

    The games' columns are read as Arrow lays them out (:mod:`tbstats.model.placing`), each column once:
    ``player``, ``rnd``, ``points`` and ``gtype`` (game type codes) without nulls; ``opponent`` (a null is
    none), the result codes as Arrow string views (``views``, 16 bytes a row: an outcome by ``table`` of the
    code's byte when it has one byte, else a loss; a null is a loss) and the colours' codes (``black``: the
    code of black; a null is white), each with its validity bitmap (empty: no nulls) and the bit of its first row.

    Players and opponents are numbered 1..``players[t]`` within their tournament (start numbers, or
    positions among the event's start numbers); opponent 0 is none. Per tournament: ``first_cell``, the
    first player's first cell; ``stride``, the cells per player; ``first_local``, the first player's row in
    its bucket; ``counted``, the rounds counted; ``win`` / ``draw``, the points of a win and a draw. The
    round's outcome is the result's for a game played over the board (``gtype`` = ``played``), else by the
    points awarded (C.07 16.3.1).
    """
    cdef Py_ssize_t n_games = player.shape[0]
    cdef Py_ssize_t trash = out_opp.shape[0] - 1
    cdef Py_ssize_t k, i = 0, end, cell
    cdef int64_t t, base, step, count, local0, n, w, d
    cdef int32_t p, o, pts
    cdef int16_t r
    cdef uint8_t g
    cdef int8_t outcome
    if (rnd.shape[0] != n_games or points.shape[0] != n_games or gtype.shape[0] != n_games
            or opponent.shape[0] != n_games or views.shape[0] != n_games or colour.shape[0] != n_games):
        raise ValueError("place_games: the games' columns differ in length")
    if views.shape[1] != 16 or table.shape[0] != 256:
        raise ValueError("place_games: views of 16 bytes per row and a table of 256 entries expected")
    cdef const uint8_t* o_valid = _bitmap(opp_valid, opp_bit, n_games, "place_games")
    cdef const uint8_t* r_valid = _bitmap(res_valid, res_bit, n_games, "place_games")
    cdef const uint8_t* c_valid = _bitmap(col_valid, col_bit, n_games, "place_games")
    if not (out_pts.shape[0] == out_type.shape[0] == out_outcome.shape[0] == out_black.shape[0] == trash + 1):
        raise ValueError("place_games: the flat buffers differ in length")
    cdef Py_ssize_t T = first_cell.shape[0]
    if not (stride.shape[0] == players.shape[0] == first_local.shape[0] == counted.shape[0] == win.shape[0]
            == draw.shape[0] == T):
        raise ValueError("place_games: the per-tournament arrays differ in length")
    _check_runs(run_t, run_len, T, n_games, "place_games")
    if n_games == 0:
        return
    # raw pointers: the int8 stores below may alias anything, so the memoryviews' fields would be read again
    # after each of them
    cdef const int32_t* g_player = &player[0]
    cdef const int32_t* g_opp = &opponent[0]
    cdef const int16_t* g_round = &rnd[0]
    cdef const int32_t* g_points = &points[0]
    cdef const uint8_t* g_type = &gtype[0]
    cdef const uint8_t* g_view = &views[0, 0]
    cdef const int8_t* g_table = &table[0]
    cdef const uint8_t* g_colour = &colour[0]
    cdef int32_t* f_opp = &out_opp[0]
    cdef int32_t* f_pts = &out_pts[0]
    cdef int8_t* f_type = &out_type[0]
    cdef int8_t* f_outcome = &out_outcome[0]
    cdef uint8_t* f_black = &out_black[0]
    cdef const uint8_t* view
    i = 0
    with nogil:
        for k in range(run_t.shape[0]):
            t = run_t[k]
            base, step, count, local0 = first_cell[t], stride[t], players[t], first_local[t]
            n, w, d = counted[t], win[t], draw[t]
            if n > step:
                n = step
            end = i + run_len[k]
            while i < end:
                p, r, o = g_player[i], g_round[i], g_opp[i]
                if not _bit(o_valid, opp_bit + i):
                    o = 0
                cell = base + (p - 1) * step + (r - 1)
                if not (1 <= r <= n and 1 <= p <= count and 0 <= cell < trash):
                    cell = trash
                f_opp[cell] = <int32_t>(local0 + o - 1) if 1 <= o <= count else NO_OPP
                pts = g_points[i]
                f_pts[cell] = pts
                g = g_type[i]
                f_type[cell] = <int8_t>g
                if g == played:
                    view = g_view + 16 * i   # (a one-byte code: length 1 (an int32), its byte inline after it)
                    if (<const int32_t*>view)[0] == 1 and _bit(r_valid, res_bit + i):
                        outcome = g_table[view[4]]
                    else:
                        outcome = LOSS
                else:
                    outcome = WIN if pts >= w else DRAW if pts >= d else LOSS
                f_outcome[cell] = outcome
                # (no branch: black and white alternate as no predictor learns)
                f_black[cell] = <uint8_t>((g_colour[i] == black) & _bit(c_valid, col_bit + i))
                i += 1


# --- over the rows of a players x rounds array

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


cdef int64_t _EXACT = 1LL << 52
#: Quotients whose numerator is below this in size are found by a floating-point division, exactly
DIVIDE_EXACT = _EXACT


def half_up_quotients(const int64_t[::1] num, const int64_t[::1] den, int64_t[::1] out) -> None:
    """``out[i]``: ``num[i] / den[i]`` rounded to the nearest integer, .5 up: ``floor((2 num + den) / (2 den))``,
    for any signs (``2 num + den`` within int64; a zero ``den`` raises).

    Where ``2 num + den`` is below :data:`DIVIDE_EXACT` in size and ``den`` positive (every average of ratings or
    points), by one floating-point division, which is exact there: a quotient ``a / b`` that is no integer lies
    at least ``1 / b`` from one, and its rounding error is below ``|a / b| / 2**53 < 1 / (2 b)``. Elsewhere by
    integer division (several times slower: numpy's ``floor_divide`` of two arrays took 1.2 ms for 143,000
    players, this pass about a fifth of that)."""
    cdef Py_ssize_t n = num.shape[0], i
    cdef int64_t a, b, q
    cdef bint zero = False
    if den.shape[0] != n or out.shape[0] != n:
        raise ValueError("half_up_quotients: num, den and out differ in length")
    with nogil:
        for i in range(n):
            a = 2 * num[i] + den[i]
            b = 2 * den[i]
            if b > 0 and -_EXACT < a < _EXACT:
                out[i] = <int64_t>floor(<double>a / <double>b)
            elif b == 0:
                zero = True
                out[i] = 0
            else:
                q = a / b   # (C: toward zero; floor below)
                if (a % b != 0) and ((a < 0) != (b < 0)):
                    q -= 1
                out[i] = q
    if zero:
        raise ZeroDivisionError("half_up_quotients: a zero denominator")


def decimals(const int64_t[::1] num, const int64_t[::1] den, const uint8_t[::1] defined, double[::1] out) -> None:
    """``out[i]``: ``num[i] / den[i]`` as the nearest double (numpy's true division: both converted, then
    divided), NaN where not ``defined``: one pass, where numpy converted both arrays through buffers first."""
    cdef Py_ssize_t n = num.shape[0], i
    if den.shape[0] != n or defined.shape[0] != n or out.shape[0] != n:
        raise ValueError("decimals: num, den, defined and out differ in length")
    with nogil:
        for i in range(n):
            out[i] = <double>num[i] / <double>den[i] if defined[i] else NAN


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


def kept_rows(const int64_t[::1] rows, const uint8_t[::1] keep, int64_t[::1] out) -> int:
    """Write the ``rows`` whose ``keep`` is set to the front of ``out``, in order, and return how many: numpy's
    ``rows[keep]`` without a branch per row (a standings step's still tied players, kept or not as no predictor
    learns: ten times faster)."""
    cdef Py_ssize_t n = rows.shape[0], i, k = 0
    if keep.shape[0] != n or out.shape[0] < n:
        raise ValueError("kept_rows: rows and keep differ in length, or out is shorter")
    with nogil:
        for i in range(n):
            out[k] = rows[i]
            k += keep[i] != 0
    return k


cdef void _assign(const KeyRow* items, Py_ssize_t n, const int64_t[::1] tied, int64_t[::1] out,
                  uint8_t[::1] still) noexcept nogil:
    """The new labels of a group sorted by key: its label plus the position of the first of its key's run; a
    member stays tied when its run has another member."""
    cdef Py_ssize_t i, first = 0
    for i in range(n):
        if items[i].key != items[first].key:
            first = i
        out[tied[items[i].at]] = items[i].label + first
        still[items[i].at] = i > first or (i + 1 < n and items[i + 1].key == items[i].key)


def refine_groups(const int64_t[::1] labels, const int64_t[::1] key, const int64_t[::1] tied,
                  int64_t[::1] out, uint8_t[::1] still, bint few) -> None:
    """Split the groups of the players ``tied`` (rows; a group: the players of one label) by ``key`` (one per
    player of ``tied``, in its order): each member's ``out`` is its label plus the number of its group's members
    with a smaller key (equal keys, equal labels), and ``still`` (by place in ``tied``) whether another member has
    its key (it stays tied). Labels are positions (0 .. P-1, P players); the other rows of ``out`` are left as
    they are.

    The groups are put together by a counting sort of their labels (unless ``tied`` lists them together already,
    in label order: the first step's events), then each is sorted, or, when its keys span fewer values than twice
    its size (points), counted; with ``few`` (few players tied), they are sorted all at once instead (no pass
    over every label)."""
    cdef Py_ssize_t P = labels.shape[0], n = tied.shape[0], t, a, b, i, at
    cdef int64_t r, lab, lo, hi
    cdef uint64_t span, k
    cdef int64_t* end = NULL
    cdef int64_t* count = NULL
    cdef KeyRow* items
    cdef bint bad = False, grouped = True
    if out.shape[0] != P or key.shape[0] != n or still.shape[0] != n:
        raise ValueError("refine_groups: labels and out (or tied, key and still) differ in length")
    if n == 0:
        return
    with nogil:
        lab = 0
        for t in range(n):
            r = tied[t]
            if r < 0 or r >= P or labels[r] < 0 or labels[r] >= P:
                bad = True
                break
            grouped = grouped and labels[r] >= lab   # the groups already together, in label order
            lab = labels[r]
    if bad:
        raise ValueError("refine_groups: a tied row or its label is out of range")
    with nogil:
        items = <KeyRow*>malloc(n * sizeof(KeyRow))
        if not few:
            if not grouped:
                end = <int64_t*>calloc(P + 1, sizeof(int64_t))
            count = <int64_t*>malloc((2 * n + 1) * sizeof(int64_t))
        bad = items == NULL or (not few and ((end == NULL and not grouped) or count == NULL))
    if bad:
        free(end)
        free(count)
        free(items)
        raise MemoryError()
    with nogil:
        if few:
            for t in range(n):
                r = tied[t]
                items[t].label = labels[r]
                items[t].key = key[t]
                items[t].at = t
            sort_rows(items, n)
            a = 0
            while a < n:
                b = a + 1
                while b < n and items[b].label == items[a].label:
                    b += 1
                _assign(items + a, b - a, tied, out, still)
                a = b
        else:
            if grouped:   # (the first step: each event's players, in row order)
                for t in range(n):
                    items[t].label = labels[tied[t]]
                    items[t].key = key[t]
                    items[t].at = t
            else:
                for t in range(n):   # the members of each group together, in label order
                    end[labels[tied[t]] + 1] += 1
                for i in range(P):
                    end[i + 1] += end[i]
                for t in range(n):
                    r = tied[t]
                    lab = labels[r]
                    at = end[lab]
                    items[at].label = lab
                    items[at].key = key[t]
                    items[at].at = t
                    end[lab] = at + 1   # at last the end of the group
            a = 0
            while a < n:
                if grouped:
                    b = a + 1
                    while b < n and items[b].label == items[a].label:
                        b += 1
                else:
                    b = end[items[a].label]
                lo = hi = items[a].key
                for i in range(a + 1, b):
                    lo = min(lo, items[i].key)
                    hi = max(hi, items[i].key)
                span = <uint64_t>hi - <uint64_t>lo   # (exact: hi >= lo)
                if b - a > INSERTION_MAX and span < <uint64_t>(2 * (b - a)):
                    # a member's place: the members with a smaller key, counted (no sort)
                    for i in range(<Py_ssize_t>span + 2):
                        count[i] = 0
                    for i in range(a, b):
                        count[<uint64_t>items[i].key - <uint64_t>lo + 1] += 1
                    for i in range(<Py_ssize_t>span + 1):
                        count[i + 1] += count[i]
                    for i in range(a, b):
                        k = <uint64_t>items[i].key - <uint64_t>lo
                        out[tied[items[i].at]] = items[i].label + count[k]
                        still[items[i].at] = count[k + 1] - count[k] > 1
                else:
                    sort_rows(items + a, b - a)
                    _assign(items + a, b - a, tied, out, still)
                a = b
        free(end)
        free(count)
        free(items)


# --- over the games: what each event's draw of lots is keyed on

cdef inline uint64_t _mix(uint64_t x) noexcept nogil:
    """splitmix64's finaliser: every bit of the result depends on every bit of ``x``."""
    x = (x ^ (x >> 30)) * <uint64_t>0xBF58476D1CE4E5B9ULL
    x = (x ^ (x >> 27)) * <uint64_t>0x94D049BB133111EBULL
    return x ^ (x >> 31)


def game_hash_sums(const int64_t[::1] run_t, const int64_t[::1] run_len, const int32_t[::1] player,
                   const int32_t[::1] opponent, const int16_t[::1] rnd, const int32_t[::1] points,
                   const uint8_t[::1] gtype, const uint8_t[::1] colour, uint64_t[::1] out) -> None:
    """Add to ``out[t]`` (wrapping) a 64-bit hash of each game row of tournament ``t``: of its player,
    opponent, round, points, game type and colour. The games are given as runs of consecutive rows of one
    tournament (``run_t``: its row in ``out``, ``run_len``: how many rows), as :func:`place_games` takes them; a
    sum does not depend on the order of its rows."""
    cdef Py_ssize_t n_games = player.shape[0], T = out.shape[0], k, i = 0, end
    cdef uint64_t a, b, total
    if (opponent.shape[0] != n_games or rnd.shape[0] != n_games or points.shape[0] != n_games
            or gtype.shape[0] != n_games or colour.shape[0] != n_games):
        raise ValueError("game_hash_sums: the games' columns differ in length")
    _check_runs(run_t, run_len, T, n_games, "game_hash_sums")
    with nogil:
        for k in range(run_t.shape[0]):
            end = i + run_len[k]
            total = 0
            while i < end:
                a = <uint64_t><uint32_t>player[i] | (<uint64_t><uint32_t>opponent[i] << 32)
                b = (<uint64_t><uint16_t>rnd[i] | (<uint64_t><uint32_t>points[i] << 16)
                     | (<uint64_t>gtype[i] << 48) | (<uint64_t>colour[i] << 56))
                total += _mix(_mix(a) + b)
                i += 1
            out[run_t[k]] += total
