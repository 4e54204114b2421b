# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The TRF reader's compiled field loops (Cython, without the GIL): one pass over the character buffer where
numpy copied every window of characters, then classified and parsed the copies column by column.

:func:`round_blocks` reads the round blocks of '001' player lines (rules.md 2.1): per block its opponent
field parsed as a number, its colour and result looked up, and whether it holds a character where a block
has a blank (a block out of line), for every kind of buffer (one, two or four bytes a character).

Over the fixed columns of player lines (:func:`tbstats.io.trf.players.player_fields`): :func:`fixed_fields`
finds where each field's text starts and ends once stripped, and reads it as an integer, all fields of a line
in one pass; :func:`decimal_field` reads such a stripped text (declared points) as a plain decimal number;
:func:`gather_utf8` copies the characters of many fields out of the buffer at once as UTF-8, for their text.

Checked against a plain Python reading of the text by tests/test_trf_fields.py.
"""

import numpy as np

from libc.math cimport NAN, pow
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t

ctypedef fused code_t:
    uint8_t
    uint16_t
    uint32_t

cdef enum:
    SPACE = 32
    BLOCK = 10      # characters of a round block
    OPP = 4         # of them the opponent's starting rank
    TABLE = 65536   # the lookup tables' size: a wider code reads as their last entry

cdef inline uint32_t _at(const code_t* buf, int64_t pos, int64_t j, int64_t room) noexcept nogil:
    """The character ``j`` of a window at ``pos``: a blank from ``room`` on (past the line's end)."""
    return buf[pos + j] if j < room else SPACE


cdef inline bint _blank(uint32_t c, const uint8_t* is_ws) noexcept nogil:
    return c == SPACE or (9 <= c <= 13) or (c >= 0x85 and is_ws[c if c < TABLE else TABLE - 1] != 0)


cdef inline int64_t _extent(const code_t* buf, int64_t pos, int64_t room, int64_t width, const uint8_t* ws,
                            int64_t* last) noexcept nogil:
    """The first non-blank character of the field of ``width`` at ``pos`` (-1 when it is blank); one past its last
    in ``last``. Found from both ends (past the line's end, at ``room``, every character is a blank)."""
    cdef int64_t a = 0, b = min(width, room)
    while a < b and _blank(buf[pos + a], ws):
        a += 1
    if a >= b:
        last[0] = 0
        return -1
    while _blank(buf[pos + b - 1], ws):
        b -= 1
    last[0] = b
    return a


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
    cdef int j, first, last
    cdef uint32_t c
    cdef uint32_t ch[BLOCK]
    cdef bint blank[BLOCK]
    cdef bint ok, blank_field
    cdef const uint8_t* ws
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
    ws = &is_ws[0]
    with nogil:
        for i in range(n_lines):
            for k in range(n_blocks[i]):
                pos = line_start[i] + first_column + BLOCK * k
                room = line_length[i] - first_column - BLOCK * k
                for j in range(BLOCK):   # the block's characters, and which are blanks
                    c = buf[pos + j] if j < room else SPACE
                    ch[j] = c
                    blank[j] = _blank(c, ws)
                # the opponent: blanks, an optional sign, digits, blanks
                first, last = -1, -1
                for j in range(OPP):
                    if not blank[j]:
                        if first < 0:
                            first = j
                        last = j
                blank_field = first < 0
                ok = not blank_field
                value, sign = 0, 1
                if ok:
                    if ch[first] == 43 or ch[first] == 45:
                        sign = -1 if ch[first] == 45 else 1
                        first += 1
                        ok = first <= last
                    for j in range(first, last + 1):
                        if not ok:
                            break
                        if 48 <= ch[j] <= 57:
                            value = value * 10 + (ch[j] - 48)
                        else:
                            ok = False
                opp[b] = <int32_t>(sign * value) if ok else 0
                opp_ok[b] = ok
                opp_blank[b] = blank_field
                colour[b] = colour_id[ch[5] if ch[5] < TABLE else TABLE - 1]
                result[b] = 0 if blank[7] else result_id[ch[7] if ch[7] < TABLE else TABLE - 1]
                stray[b] = not (blank[4] and blank[6] and blank[8] and blank[9])
                b += 1

cdef int _check_lines(Py_ssize_t size, const int64_t[::1] line_start, const int64_t[::1] line_length,
                      int64_t hi, const uint8_t[::1] is_ws) except -1:
    """Raise ValueError unless every line's characters up to column ``hi`` lie in a buffer of ``size``, and the
    whitespace table is whole."""
    cdef Py_ssize_t i
    if is_ws.shape[0] != TABLE:
        raise ValueError("the lookup table must hold 65,536 codes")
    if line_length.shape[0] != line_start.shape[0]:
        raise ValueError("line_start and line_length differ in length")
    for i in range(line_start.shape[0]):
        if line_start[i] < 0 or line_start[i] + min(line_length[i], hi) > size:
            raise ValueError("a line runs past the buffer")
    return 0


cdef inline void _field(const code_t* text, int64_t pos, int64_t room, int64_t width, const uint8_t* ws,
                        bint number, int16_t* first, int16_t* last, int64_t* value, uint8_t* ok) noexcept nogil:
    """One field of one line (see :func:`fixed_fields`): its stripped extent and, with ``number``, its value."""
    cdef int64_t j, a, b, v
    cdef uint32_t c
    cdef bint good
    a = max(_extent(text, pos, room, width, ws, &b), 0)
    first[0] = <int16_t>a
    last[0] = <int16_t>b
    if not number:
        return
    v, good = 0, b > a
    if good:
        c = _at(text, pos, a, room)
        if c == 43 or c == 45:
            a += 1
            good = b > a
        for j in range(a, b):
            c = _at(text, pos, j, room)
            if not 48 <= c <= 57:
                good = False
                break
            v = v * 10 + (c - 48)
        if good and _at(text, pos, first[0], room) == 45:
            v = -v
    value[0] = v if good else 0
    ok[0] = good


def fixed_fields(const code_t[::1] buf, const int64_t[::1] line_start, const int64_t[::1] line_length,
                 const int64_t[:, ::1] spans, const uint8_t[::1] numbers, const uint8_t[::1] is_ws,
                 int16_t[:, ::1] first, int16_t[:, ::1] last, int64_t[:, ::1] value, uint8_t[:, ::1] ok) -> None:
    """Fixed fields of each line, all of a line's fields while its characters are at hand: field ``f`` at columns
    ``spans[f, 0]`` to ``spans[f, 1] - 1`` (blank past the line's stripped ``line_length``). Out, fields x lines:
    ``first`` and ``last``, the field's first and one-past-last non-blank column counted from its first (both 0
    when it is blank); where ``numbers[f]``, ``value`` and ``ok``, its text read as polars casts stripped text to
    an integer (an optional sign, then ASCII digits; 0 and not ok otherwise; a number field is at most 18
    columns wide; elsewhere they are left as they were)."""
    cdef Py_ssize_t n = line_start.shape[0], n_fields = spans.shape[0], i, f
    cdef int64_t hi = 0, lo
    cdef const uint8_t* ws
    cdef const code_t* text
    if spans.shape[1] != 2 or numbers.shape[0] != n_fields:
        raise ValueError("spans must hold (first, past last) columns of each field, numbers one flag each")
    for f in range(n_fields):
        if not 0 <= spans[f, 0] < spans[f, 1] or spans[f, 1] - spans[f, 0] > 32767 or (
                numbers[f] and spans[f, 1] - spans[f, 0] > 18):
            raise ValueError("a field is 1 to 32,767 columns, a number at most 18")
        hi = max(hi, spans[f, 1])
    shapes = ((first.shape[0], first.shape[1]), (last.shape[0], last.shape[1]), (value.shape[0], value.shape[1]),
              (ok.shape[0], ok.shape[1]))
    if any(shape != (n_fields, n) for shape in shapes):
        raise ValueError(f"the outputs must hold {n_fields} x {n} fields")
    _check_lines(buf.shape[0], line_start, line_length, hi, is_ws)
    ws = &is_ws[0]
    text = &buf[0]
    with nogil:
        for i in range(n):
            for f in range(n_fields):
                lo = spans[f, 0]
                _field(text, line_start[i] + lo, line_length[i] - lo, spans[f, 1] - lo, ws, numbers[f],
                       &first[f, i], &last[f, i], &value[f, i], &ok[f, i])


cdef inline int _widest(Py_ssize_t code_size) noexcept nogil:
    """UTF-8 bytes of the widest code point a code of ``code_size`` bytes holds (Latin-1, BMP, any)."""
    return 2 if code_size == 1 else 3 if code_size == 2 else 4


cdef inline int64_t _encode(const code_t[::1] src, int64_t lo, int64_t hi, uint8_t* out, int64_t at,
                            bint* surrogate) noexcept nogil:
    """Write the code points ``src[lo:hi]`` as UTF-8 from ``out[at]``; the position after them (``surrogate`` set
    when one of them is a surrogate)."""
    cdef int64_t j
    cdef uint32_t c
    for j in range(lo, hi):
        c = src[j]
        if c < 0x80:
            out[at] = <uint8_t>c
            at += 1
        elif c < 0x800:
            out[at] = <uint8_t>(0xC0 | (c >> 6))
            out[at + 1] = <uint8_t>(0x80 | (c & 0x3F))
            at += 2
        elif c < 0x10000:
            surrogate[0] |= 0xD800 <= c <= 0xDFFF
            out[at] = <uint8_t>(0xE0 | (c >> 12))
            out[at + 1] = <uint8_t>(0x80 | ((c >> 6) & 0x3F))
            out[at + 2] = <uint8_t>(0x80 | (c & 0x3F))
            at += 3
        else:
            out[at] = <uint8_t>(0xF0 | (c >> 18))
            out[at + 1] = <uint8_t>(0x80 | ((c >> 12) & 0x3F))
            out[at + 2] = <uint8_t>(0x80 | ((c >> 6) & 0x3F))
            out[at + 3] = <uint8_t>(0x80 | (c & 0x3F))
            at += 4
    return at


def gather_utf8(const code_t[::1] buf, const int64_t[::1] at, const int64_t[::1] counts):
    """The ``counts[i]`` characters (code points: decoded text) of the buffer from each position ``at[i]``, one
    range after the other, as UTF-8: the bytes (uint8) and the byte offset where each range starts (int64,
    ``n + 1``: the last is the bytes' length), in one pass. Raises ValueError for a range past the buffer and for
    a surrogate code (decoded text holds none)."""
    cdef Py_ssize_t n = at.shape[0], i
    cdef int64_t total = 0, size = buf.shape[0]
    cdef bint surrogate = False
    if counts.shape[0] != n:
        raise ValueError("at and counts differ in length")
    for i in range(n):
        if counts[i] < 0 or (counts[i] and (at[i] < 0 or at[i] + counts[i] > size)):
            raise ValueError("a range runs past the buffer")
        total += counts[i]
    offsets = np.empty(n + 1, dtype=np.int64)
    data = np.empty(total * _widest(sizeof(code_t)), dtype=np.uint8)   # (pages never written are never touched)
    cdef int64_t[::1] off = offsets
    cdef uint8_t[::1] room = data
    cdef uint8_t* out = &room[0] if room.shape[0] else NULL
    total = 0
    with nogil:
        off[0] = 0
        for i in range(n):
            total = _encode(buf, at[i], at[i] + counts[i], out, total, &surrogate)
            off[i + 1] = total
    if surrogate:
        raise ValueError("a surrogate code point has no UTF-8")
    return data[:total], offsets


def decimal_field(const code_t[::1] buf, const int64_t[::1] at, const int16_t[::1] first,
                  const int16_t[::1] last, double[::1] value, uint8_t[::1] state) -> None:
    """A field's stripped text (characters ``at[i] + first[i]`` to ``at[i] + last[i] - 1`` of the buffer, as
    :func:`fixed_fields` finds them; blank when ``last[i]`` is 0) read as a plain decimal number: an optional sign,
    ASCII digits with at most one ``.`` or ``,`` among them (``state`` 1, ``value`` the number: the digits as a
    whole number divided by 10 to the digits after the separator, negated after a ``-``); ``state`` 0 when the
    field is blank, 2 for any other text (``value`` NaN: the caller reads it another way)."""
    cdef Py_ssize_t n = at.shape[0], i
    cdef int64_t j, a, whole, digits, frac, seps
    cdef uint32_t c, head
    cdef bint plain
    if first.shape[0] != n or last.shape[0] != n:
        raise ValueError("at, first and last differ in length")
    if value.shape[0] != n or state.shape[0] != n:
        raise ValueError(f"the outputs must hold {n} lines")
    for i in range(n):
        if last[i] and (at[i] < 0 or first[i] < 0 or first[i] >= last[i] or at[i] + last[i] > buf.shape[0]):
            raise ValueError("a field runs past the buffer")
    with nogil:
        for i in range(n):
            value[i] = NAN
            if not last[i]:
                state[i] = 0
                continue
            a = at[i] + first[i]
            head = buf[a]
            if head == 43 or head == 45:
                a += 1
            plain, whole, digits, frac, seps = True, 0, 0, 0, 0
            for j in range(a, at[i] + last[i]):
                c = buf[j]
                if 48 <= c <= 57:
                    whole = whole * 10 + (c - 48)
                    digits += 1
                    if seps:
                        frac += 1
                elif c == 46 or c == 44:
                    seps += 1
                else:
                    plain = False
                    break
            if plain and seps <= 1 and digits > 0:
                value[i] = whole / pow(10.0, frac)
                if head == 45:
                    value[i] = -value[i]
                state[i] = 1
            else:
                state[i] = 2
