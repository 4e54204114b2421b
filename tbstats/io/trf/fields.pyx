# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The TRF reader's compiled field loops (Cython, without the GIL): one pass over the character buffer where
numpy copied every window of characters, then classified and parsed the copies column by column.

:func:`round_blocks` reads the round blocks of '001' player lines (rules.md 2.1): per block its opponent
field parsed as a number, its colour and result looked up, and whether it holds a character where a block
has a blank (a block out of line). It gives what :func:`tbstats.io.trf.buffer.repeated_windows`,
:func:`~tbstats.io.trf.buffer.is_whitespace` and :func:`~tbstats.io.trf.buffer.parse_int` gave
:func:`tbstats.io.trf.games.games`, for every kind of buffer (one, two or four bytes a character).

Checked against those numpy functions by tests/test_trf_fields.py.
"""

from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t

ctypedef fused code_t:
    uint8_t
    uint16_t
    uint32_t

cdef enum:
    SPACE = 32
    BLOCK = 10      # characters of a round block
    OPP = 4         # of them the opponent's starting rank
    TABLE = 65536   # the lookup tables' size: a wider code reads as their last entry

cdef enum Class:
    OTHER = 0
    DIGIT = 1
    BLANK = 2
    PLUS = 3
    MINUS = 4


cdef inline uint32_t _at(const code_t[::1] buf, int64_t pos, int64_t j, int64_t room) noexcept nogil:
    """The character ``j`` of a window at ``pos``: a blank from ``room`` on (past the line's end)."""
    return buf[pos + j] if j < room else SPACE


cdef inline bint _blank(uint32_t c, const uint8_t[::1] is_ws) noexcept nogil:
    return c == SPACE or (9 <= c <= 13) or (c >= 0x85 and is_ws[c if c < TABLE else TABLE - 1] != 0)


cdef inline int _class(uint32_t c, const uint8_t[::1] is_ws) noexcept nogil:
    if 48 <= c <= 57:
        return DIGIT
    if _blank(c, is_ws):
        return BLANK
    if c == 43:
        return PLUS
    if c == 45:
        return MINUS
    return OTHER


def round_blocks(const code_t[::1] buf, const int64_t[::1] line_start, const int64_t[::1] line_length,
                 const int64_t[::1] n_blocks, int64_t first_column, const uint8_t[::1] is_ws,
                 const int8_t[::1] colour_id, const int8_t[::1] result_id,
                 int32_t[::1] opp, uint8_t[::1] opp_ok, uint8_t[::1] opp_blank, int8_t[::1] colour,
                 int8_t[::1] result, uint8_t[::1] stray) -> None:
    """Read the ``n_blocks[i]`` round blocks of each line ``i`` (at columns ``first_column``, ``first_column +
    10``, ...; blank past the line's stripped ``line_length``), block after block, into the ``out`` arrays:

    - ``opp``, ``opp_ok``: the opponent field (4 columns) read as polars casts stripped text to an integer
      (an optional sign, then digits only; 0 and not ok otherwise), ``opp_blank``: the field is blank;
    - ``colour``: ``colour_id`` of column 6; ``result``: ``result_id`` of column 8, 0 when it is blank;
    - ``stray``: a character in column 5, 7, 9 or 10, where a block has a blank.

    Blank is Unicode White_Space as polars strips it (``is_ws``, by code). Raises ValueError when the arrays
    do not fit (the total of ``n_blocks`` is the outputs' length; the tables hold 65,536 codes)."""
    cdef Py_ssize_t n_lines = line_start.shape[0], i, b = 0, total = 0
    cdef int64_t k, pos, room, value, sign
    cdef int j, cls, first, last
    cdef uint32_t c
    cdef bint ok, blank_field
    if line_length.shape[0] != n_lines or n_blocks.shape[0] != n_lines:
        raise ValueError("line_start, line_length and n_blocks differ in length")
    if is_ws.shape[0] != TABLE or colour_id.shape[0] != TABLE or result_id.shape[0] != TABLE:
        raise ValueError("the lookup tables must hold 65,536 codes")
    for i in range(n_lines):
        if n_blocks[i] < 0:
            raise ValueError("a negative number of blocks")
        if n_blocks[i] and (line_start[i] < 0 or line_start[i] + min(line_length[i], first_column
                                                                       + BLOCK * n_blocks[i]) > buf.shape[0]):
            raise ValueError("a line runs past the buffer")
        total += n_blocks[i]
    for out_len in (opp.shape[0], opp_ok.shape[0], opp_blank.shape[0], colour.shape[0], result.shape[0],
                    stray.shape[0]):
        if out_len != total:
            raise ValueError(f"the outputs must hold {total} blocks")
    with nogil:
        for i in range(n_lines):
            for k in range(n_blocks[i]):
                pos = line_start[i] + first_column + BLOCK * k
                room = line_length[i] - first_column - BLOCK * k
                # the opponent: blanks, an optional sign, digits, blanks
                first, last = -1, -1
                blank_field = True
                for j in range(OPP):
                    if not _blank(_at(buf, pos, j, room), is_ws):
                        blank_field = False
                        if first < 0:
                            first = j
                        last = j
                ok = not blank_field
                value, sign = 0, 1
                if ok:
                    c = _at(buf, pos, first, room)
                    cls = _class(c, is_ws)
                    if cls == PLUS or cls == MINUS:
                        sign = -1 if cls == MINUS else 1
                        first += 1
                        ok = first <= last
                    for j in range(first, last + 1):
                        if not ok:
                            break
                        c = _at(buf, pos, j, room)
                        if 48 <= c <= 57:
                            value = value * 10 + (c - 48)
                        else:
                            ok = False
                opp[b] = <int32_t>(sign * value) if ok else 0
                opp_ok[b] = ok
                opp_blank[b] = blank_field
                c = _at(buf, pos, 5, room)
                colour[b] = colour_id[c if c < TABLE else TABLE - 1]
                c = _at(buf, pos, 7, room)
                result[b] = 0 if _blank(c, is_ws) else result_id[c if c < TABLE else TABLE - 1]
                stray[b] = not (_blank(_at(buf, pos, 4, room), is_ws) and _blank(_at(buf, pos, 6, room), is_ws)
                                and _blank(_at(buf, pos, 8, room), is_ws) and _blank(_at(buf, pos, 9, room), is_ws))
                b += 1
