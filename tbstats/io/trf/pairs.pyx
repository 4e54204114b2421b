# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The TRF reader's compiled pairing pass (Cython, without the GIL): every round block checked against its
opponent's block and classified in one loop, where numpy made some thirty passes over every block.

:func:`pair_blocks` takes the blocks :func:`tbstats.io.trf.fields.round_blocks` read and the opponent's block
of each (:func:`tbstats.io.trf.games._opponent_blocks`); it gives each block's failed checks and notes as
bits (in the order of ``games._CHECKS`` and ``games._NOTES``), whether it is a game still to be played, its
result read as a bye where it has no opponent, its game type and its points.

Checked against the plain numpy reading it replaced by tests/test_trf_pairs.py.
"""

from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t

cdef enum:
    # the bits of ``problems``: the checks of games._CHECKS, in its order
    BAD_OPPONENT = 1 << 0     # the opponent field is neither blank nor a number
    BAD_COLOUR = 1 << 1       # the colour is not a TRF colour code
    STRAY = 1 << 2            # a character where the block has a blank (given: the first such block of a line)
    CUT = 1 << 3              # the line ends inside a block that has an opponent
    RESULT_WITH = 1 << 4      # not a result code for a game
    RESULT_WITHOUT = 1 << 5   # not a result code for a round without opponent
    SELF = 1 << 6             # paired with themself
    MISSING = 1 << 7          # the opponent has no player line
    NOT_BACK = 1 << 8         # the opponent's block names another player
    NOT_COMPLEMENT = 1 << 9   # the two results do not complement each other
    # the bits of ``notes``: games._NOTES, in its order
    SAME_COLOUR = 1 << 0      # both players have the same colour (once a pair: on the lower rank's block)
    BYE_ALIAS = 1 << 1        # a game result without opponent, read as the matching bye
    # colour ids (games.COLOURS): 1 white, 2 black, 4 any other character
    WHITE = 1
    BLACK = 2
    OTHER_COLOUR = 4


def pair_blocks(const int64_t[::1] row, const uint8_t[::1] found, const uint8_t[::1] exists,
                const int16_t[::1] opp, const uint8_t[::1] has_opp, const uint8_t[::1] opp_ok,
                const uint8_t[::1] opp_blank, const int8_t[::1] colour, const int8_t[::1] result,
                const uint8_t[::1] first_stray, const int16_t[::1] me, const uint8_t[::1] me_ok,
                const int16_t[::1] length, const int16_t[::1] at, const int32_t[::1] event,
                const uint8_t[::1] pair_ok, const uint8_t[::1] with_opponent, const uint8_t[::1] without_opponent,
                const uint8_t[::1] pending_codes, const uint8_t[::1] bye_aliases, const int8_t[::1] bye_of,
                const int8_t[::1] game_type_of, const int8_t[::1] kind_of, const int32_t[::1] points,
                int64_t kinds, uint16_t[::1] problems, uint8_t[::1] notes, uint8_t[::1] pending,
                int8_t[::1] result_out, int8_t[::1] game_type, int32_t[::1] points_out) -> None:
    """Check and classify every block ``i`` (all arrays per block unless said):

    - ``row[i]``: the opponent's block in the same round, read where ``found[i]``; ``exists[i]``: the opponent
      has a player line; ``opp``, ``has_opp``: the opponent's starting rank (0 without one) and whether there
      is one; ``opp_ok``, ``opp_blank``: the opponent field is a number, is blank; ``colour``, ``result``: the
      colour and result ids (``games.COLOURS``, ``games.RESULTS``); ``first_stray``: the block is the first of
      its line out of line; ``me``, ``me_ok``: the player's starting rank and whether it is one; ``length``,
      ``at``: the line's length and the block's first column (0-based); ``event``: the block's event.
    - Tables by result id (``r`` results): ``pair_ok`` (``r x r``, flat: the player's and the opponent's
      results complement each other), ``with_opponent`` and ``without_opponent`` (a code allowed with and
      without an opponent), ``pending_codes`` (no result yet), ``bye_aliases`` and ``bye_of`` (a game result
      without opponent and the bye it reads as); ``game_type_of`` and ``kind_of`` by (has an opponent, result,
      opponent's result) as ``(h * r + result) * r + opponent's result``; ``points``: per event ``kinds + 1``
      units, the scoring kind's (the last a zero: no points).

    Out, per block: ``problems`` and ``notes`` (the bits above), ``pending`` (a game without result, on the
    lower rank's block only), ``result_out`` (``bye_of`` the result where there is no opponent), ``game_type``
    and ``points_out``. Raises ValueError when the arrays differ in length or the tables do not fit."""
    cdef Py_ssize_t n = row.shape[0], i, r = pair_ok.shape[0], codes = with_opponent.shape[0]
    cdef int64_t o_row, combo
    cdef int8_t res, ores, col, ocol, kind
    cdef int16_t o, m, back
    cdef bint h, f, back_ok, own, points_back
    cdef uint16_t bits
    cdef uint8_t note
    cdef int64_t events = points.shape[0] // (kinds + 1) if kinds >= 0 else 0
    sizes = (found.shape[0], exists.shape[0], opp.shape[0], has_opp.shape[0], opp_ok.shape[0], opp_blank.shape[0],
             colour.shape[0], result.shape[0], first_stray.shape[0], me.shape[0], me_ok.shape[0], length.shape[0],
             at.shape[0], event.shape[0], problems.shape[0], notes.shape[0], pending.shape[0], result_out.shape[0],
             game_type.shape[0], points_out.shape[0])
    if any(size != n for size in sizes):
        raise ValueError("the per-block arrays differ in length")
    if r != codes * codes or without_opponent.shape[0] != codes or pending_codes.shape[0] != codes or \
            bye_aliases.shape[0] != codes or bye_of.shape[0] != codes or game_type_of.shape[0] != 2 * r or \
            kind_of.shape[0] != 2 * r:
        raise ValueError("the result tables do not fit their number of result ids")
    with nogil:
        for i in range(n):
            res, col, o, m = result[i], colour[i], opp[i], me[i]
            h, own, f = has_opp[i] != 0, me_ok[i] != 0, found[i] != 0
            if res < 0 or res >= codes:
                with gil:
                    raise ValueError(f"result id {res} at block {i} is not in the tables")
            ores, ocol, back_ok, back = 0, 0, False, 0
            if f:
                o_row = row[i]
                if o_row < 0 or o_row >= n:
                    with gil:
                        raise ValueError(f"block {i}: opponent's block {o_row} out of range")
                ores, ocol, back_ok, back = result[o_row], colour[o_row], has_opp[o_row] != 0, opp[o_row]
                if ores < 0 or ores >= codes:
                    with gil:
                        raise ValueError(f"result id {ores} at block {o_row} is not in the tables")
            points_back = back_ok and own and back == m
            bits = 0
            if opp_ok[i] == 0 and opp_blank[i] == 0:
                bits |= BAD_OPPONENT
            if col == OTHER_COLOUR:
                bits |= BAD_COLOUR
            if first_stray[i]:
                bits |= STRAY
            if h and (length[i] < at[i] + 6 or (length[i] < at[i] + 8 and f and ores != 0)):
                bits |= CUT
            if h and not with_opponent[res]:
                bits |= RESULT_WITH
            if not h and not without_opponent[res]:
                bits |= RESULT_WITHOUT
            if h and own and o == m:
                bits |= SELF
            if h and not exists[i]:
                bits |= MISSING
            if exists[i] and own and (not back_ok or back != m) and o != m:
                bits |= NOT_BACK
            if points_back and not pair_ok[res * codes + ores]:
                bits |= NOT_COMPLEMENT
            problems[i] = bits
            note = 0
            if points_back and col == ocol and (col == WHITE or col == BLACK) and m < o:
                note |= SAME_COLOUR
            if not h and bye_aliases[res]:
                note |= BYE_ALIAS
            notes[i] = note
            pending[i] = h and pending_codes[res] and own and m < o
            if not h:
                res = bye_of[res]
            result_out[i] = res
            combo = (h * codes + res) * codes + ores
            game_type[i] = game_type_of[combo]
            kind = kind_of[combo]
            if event[i] < 0 or event[i] >= events or kind < 0 or kind > kinds:
                with gil:
                    raise ValueError(f"block {i}: event {event[i]} or scoring kind {kind} out of range")
            points_out[i] = points[event[i] * (kinds + 1) + kind]
