# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The TRF reader's compiled front (Cython): each file's characters, the batch's buffer and its lines.

:func:`utf8_characters` takes what most files are, ASCII or UTF-8 text, in one pass over each file's bytes: ASCII
as is, UTF-8 decoded by the C API, to one byte a character when every character is below 256 (names with accents);
:func:`tbstats.io.trf.buffer.character_codes` would check, decode (and the buffer encode again) each in a few Python
steps. Any other file (UTF-16, Windows-1252 or Latin-1 bytes, empty or binary files) gets None and is decoded as
before, with its note or its error.

:func:`join_codes` puts files as bytes and as text in one code array as wide as its widest character, each copied
or widened into its place. :func:`split_codes` finds the lines of such a buffer
(:func:`tbstats.io.trf.buffer.split_lines`): its line ends, eight bytes at a time skipped while they hold none, then
each line's file, number and length without its trailing whitespace.

Checked against the Python reading by tests/test_trf_text.py.
"""

import numpy as np

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memchr, memcpy

ctypedef fused code_t:
    uint8_t
    uint16_t
    uint32_t

cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void* PyUnicode_DATA(object)
    Py_ssize_t PyUnicode_GET_LENGTH(object)


cdef enum:
    HEAD = 4096     # bytes checked for NUL (character_codes: UTF-16 or binary data)
    TABLE = 65536   # whitespace table's entries (tbstats.io.trf.buffer.IS_WHITESPACE): a wider code is none


cdef Py_ssize_t _ascii_run(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    """The length of the run of ASCII bytes at the start of ``p`` (eight bytes at a time)."""
    cdef Py_ssize_t i = 0
    cdef uint64_t word
    while i + 8 <= n:
        memcpy(&word, p + i, 8)
        if word & 0x8080808080808080ULL:
            break
        i += 8
    while i < n and p[i] < 0x80:
        i += 1
    return i


cdef inline bint _is_ws(uint32_t c, const uint8_t* is_ws) noexcept nogil:
    """Whether code ``c`` is whitespace by the table ``is_ws`` (codes below 65,536; a wider code is not)."""
    return c < TABLE and is_ws[c] != 0


cdef inline bint _ascii_space(uint8_t c) noexcept nogil:
    return c == 32 or 9 <= c <= 13   # bytes.isspace()


cdef object _characters(bytes raw):
    cdef const uint8_t* p = <const uint8_t*>PyBytes_AS_STRING(raw)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(raw), i, start
    if n == 0 or memchr(p, 0, n if n < HEAD else HEAD) != NULL:
        return None   # empty, or UTF-16 / binary: the Python reading says which
    i = _ascii_run(p, n)
    if i == n:
        while i > 0 and _ascii_space(p[i - 1]):
            i -= 1
        return raw if i > 0 else None   # (whitespace only: the Python reading's error)
    start = 3 if n >= 3 and p[0] == 0xEF and p[1] == 0xBB and p[2] == 0xBF else 0   # a UTF-8 byte order mark
    try:
        text = PyUnicode_DecodeUTF8(<const char*>p + start, n - start, NULL)
    except UnicodeDecodeError:
        return None   # not UTF-8
    if PyUnicode_KIND(text) == 1:   # every character below 256: its own storage, one byte each
        return PyBytes_FromStringAndSize(<const char*>PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text))
    return text


def utf8_characters(list raws):
    """Per file's bytes: the bytes themselves when they are ASCII text, the text's characters as one byte each
    (Latin-1) when they are UTF-8 (with or without a byte order mark) whose every character is below 256, the text
    (``str``) of other UTF-8, else None: what :func:`tbstats.io.trf.buffer.character_codes` gives such files, without
    their note (they have none); None files (and anything but ``bytes``) are left to it (they are other text, or
    not text)."""
    return [_characters(raw) if type(raw) is bytes else None for raw in raws]


cdef inline int64_t _next_break(const code_t* p, int64_t i, int64_t n) noexcept nogil:
    """The first line break (CR or LF) at or after ``i``, ``n`` when there is none before it: eight bytes at a time
    skipped while none of their characters is a control character up to CR (a lane below 14 makes the word's
    test nonzero, and only such a lane)."""
    cdef uint64_t word, ones, high
    cdef int64_t lanes = 8 // sizeof(code_t), end
    if sizeof(code_t) == 1:
        ones, high = 0x0101010101010101ULL, 0x8080808080808080ULL
    elif sizeof(code_t) == 2:
        ones, high = 0x0001000100010001ULL, 0x8000800080008000ULL
    else:
        ones, high = 0x0000000100000001ULL, 0x8000000080000000ULL
    while True:
        while i + lanes <= n:
            memcpy(&word, p + i, 8)
            if (word - ones * 14) & ~word & high:
                break
            i += lanes
        end = i + lanes if i + lanes < n else n
        while i < end:
            if p[i] == 10 or p[i] == 13:
                return i
            i += 1
        if i >= n:
            return n


def split_codes(const code_t[::1] buf, const int64_t[::1] offsets, const uint8_t[::1] is_ws):
    """The non-blank lines of a buffer of files (:func:`tbstats.io.trf.buffer.build_buffer`: each file followed by a
    line feed, blanks after the last; one, two or four bytes a character): each line's file and 1-based line number
    (int32), start and length without trailing whitespace (int64; ``is_ws``: whether each code below 65,536 is
    whitespace, wider codes are not). A line ends at a carriage return, a line feed, or both (CRLF: the line ends
    at its CR, and its LF ends no line of its own)."""
    cdef Py_ssize_t files = offsets.shape[0] - 1
    if files < 1:
        raise ValueError("offsets must hold at least one file")
    if is_ws.shape[0] != TABLE:
        raise ValueError(f"is_ws must have {TABLE} entries")
    cdef int64_t n = offsets[files]
    if n < 1 or n >= buf.shape[0] or buf[n - 1] != 10:
        raise ValueError("the buffer must end each file with a line feed and have blanks after the last")
    cdef const code_t* p = &buf[0]
    cdef Py_ssize_t cap = 1024, count = 0, kept = 0
    cdef int64_t* ends = <int64_t*>malloc(cap * sizeof(int64_t))
    cdef int64_t* grown
    cdef int64_t at = 0
    cdef int32_t[::1] f_v, l_v
    cdef int64_t[::1] s_v, n_v
    if ends == NULL:
        raise MemoryError()
    try:
        with nogil:
            # every line's end: a CR, or a LF not right after a CR (CRLF ends at its CR)
            while True:
                at = _next_break(p, at, n)
                if at >= n:
                    break
                if count == cap:
                    grown = <int64_t*>realloc(ends, 2 * cap * sizeof(int64_t))
                    if grown == NULL:
                        break
                    ends, cap = grown, 2 * cap
                ends[count] = at
                count += 1
                at += 2 if p[at] == 13 and p[at + 1] == 10 else 1
        if at < n:
            raise MemoryError()
        file_of = np.empty(count, dtype=np.int32)   # (count >= 1: the buffer ends with a line feed)
        line_of = np.empty(count, dtype=np.int32)
        starts = np.empty(count, dtype=np.int64)
        lengths = np.empty(count, dtype=np.int64)
        f_v, l_v, s_v, n_v = file_of, line_of, starts, lengths
        with nogil:
            kept = _fill(p, ends, count, &offsets[0], files, &is_ws[0], &f_v[0], &l_v[0], &s_v[0], &n_v[0])
        return file_of[:kept], line_of[:kept], starts[:kept], lengths[:kept]
    finally:
        free(ends)


cdef Py_ssize_t _fill(const code_t* p, const int64_t* ends, Py_ssize_t count, const int64_t* offsets,
                      Py_ssize_t files, const uint8_t* is_ws, int32_t* file_of, int32_t* line_of, int64_t* starts,
                      int64_t* lengths) noexcept nogil:
    """Each line from its end: its start (after the end before, and its LF when that was a CRLF), file (the last
    whose first character is at or before it), number within the file, and length stripped; blank lines left
    out; how many are left."""
    cdef Py_ssize_t k, out = 0
    cdef int64_t start = 0, length, f = 0, first = 0, end
    for k in range(count):
        end = ends[k]
        while f + 1 < files and start >= offsets[f + 1]:
            f += 1
            first = k
        length = end - start
        while length > 0 and _is_ws(p[start + length - 1], is_ws):
            length -= 1
        if length > 0:
            file_of[out] = <int32_t>f
            line_of[out] = <int32_t>(k - first + 1)
            starts[out] = start
            lengths[out] = length
            out += 1
        start = end + 1 + (1 if p[end] == 13 and p[end + 1] == 10 else 0)
    return out


def join_codes(list parts, Py_ssize_t pad):
    """The code array of files given as bytes (one byte a character) and as text (``str``), each followed by a
    line feed, then ``pad`` blanks: one byte a character when every text fits in Latin-1, else two, or four beyond
    the Basic Multilingual Plane (a text's own storage tells: no character is looked at twice). Each file is copied
    or widened into its place; no text of the whole batch is made."""
    cdef Py_ssize_t k, size = 0, width = 1, at = 0, n
    cdef int kind
    cdef object part
    for part in parts:
        if type(part) is bytes:
            size += PyBytes_GET_SIZE(part) + 1
        elif type(part) is str:
            size += PyUnicode_GET_LENGTH(part) + 1
            width = max(width, PyUnicode_KIND(part))
        else:
            raise TypeError(f"a file's characters are bytes or str, not {type(part).__name__}")
    out = np.empty(size + pad, dtype=np.uint8 if width == 1 else np.uint16 if width == 2 else np.uint32)
    if size + pad == 0:
        return out
    cdef uint8_t[::1] raw = out.view(np.uint8)
    cdef uint8_t* base = &raw[0]
    for part in parts:
        if type(part) is bytes:
            n = PyBytes_GET_SIZE(part)
            _put(<const uint8_t*>PyBytes_AS_STRING(part), n, base, at, width)
        else:
            n = PyUnicode_GET_LENGTH(part)
            kind = PyUnicode_KIND(part)
            if kind == 1:
                _put(<const uint8_t*>PyUnicode_DATA(part), n, base, at, width)
            elif kind == 2:
                _put(<const uint16_t*>PyUnicode_DATA(part), n, base, at, width)
            else:
                _put(<const uint32_t*>PyUnicode_DATA(part), n, base, at, width)
        at += n
        _set(base, at, width, 10)
        at += 1
    for k in range(pad):
        _set(base, at + k, width, 32)
    return out


cdef void _put(const code_t* src, Py_ssize_t n, uint8_t* base, Py_ssize_t at, Py_ssize_t width) noexcept nogil:
    """Copy (widen) ``n`` codes to code ``at`` of an output of ``width`` bytes a code (never narrower than them)."""
    cdef Py_ssize_t j
    cdef uint16_t* o2
    cdef uint32_t* o4
    if width == sizeof(code_t):
        memcpy(base + at * width, src, n * width)
    elif width == 2:
        o2 = <uint16_t*>base + at
        for j in range(n):
            o2[j] = <uint16_t>src[j]
    else:
        o4 = <uint32_t*>base + at
        for j in range(n):
            o4[j] = <uint32_t>src[j]


cdef inline void _set(uint8_t* base, Py_ssize_t at, Py_ssize_t width, uint32_t code) noexcept nogil:
    if width == 1:
        base[at] = <uint8_t>code
    elif width == 2:
        (<uint16_t*>base)[at] = <uint16_t>code
    else:
        (<uint32_t*>base)[at] = code


def strip_spans(const code_t[::1] buf, int64_t[::1] at, int64_t[::1] counts, const uint8_t[::1] is_ws):
    """Each span of ``counts[i]`` characters from ``at[i]`` without its leading and trailing characters that
    ``is_ws`` marks (by code below 65,536; a wider code is kept), in place: what ``str.strip`` of those characters
    leaves of its text. Raises ValueError for a span past the buffer."""
    cdef Py_ssize_t n = at.shape[0], i
    cdef int64_t size = buf.shape[0], a, b
    if counts.shape[0] != n:
        raise ValueError("at and counts differ in length")
    if is_ws.shape[0] != TABLE:
        raise ValueError(f"is_ws must have {TABLE} entries")
    for i in range(n):
        if counts[i] < 0 or (counts[i] and (at[i] < 0 or at[i] + counts[i] > size)):
            raise ValueError("a span runs past the buffer")
    cdef const uint8_t* ws = &is_ws[0]
    with nogil:
        for i in range(n):
            a, b = at[i], at[i] + counts[i]
            while a < b and _is_ws(buf[a], ws):
                a += 1
            while b > a and _is_ws(buf[b - 1], ws):
                b -= 1
            at[i], counts[i] = a, b - a
