# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The games' compiled loops (Cython): each is one pass over the game rows, run without the GIL, where numpy
needed many passes (each a temporary as large as the data) for the same work.

- :func:`place_games` puts each game row in its player's cell of its round, or in the spare ``trash`` cell when
  the round is not counted or the player is none of the event's; with it go the opponent's row in the bucket
  (``NO_OPP`` when the opponent is none of the event's players), the points, the game type, black, and the
  round's outcome: by the result for a game played over the board, else by the points awarded (C.07 16.3.1).
  It reads the columns' Arrow buffers as they are (:mod:`tbstats.model.placing`, for
  :func:`tbstats.model.dense.build_buckets`);
- :func:`game_hash_sums` sums a hash of each game row per tournament (:mod:`tbstats.model.fingerprint`).

The loops over the players x rounds view are :mod:`tbstats.model.rows`; the standings' and the exact values' are
:mod:`tbstats.engine.ranks` and :mod:`tbstats.engine.exact`. Each is checked against a plain Python loop by
tests/test_loops.py.
"""

from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t

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
