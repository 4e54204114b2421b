# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Where the lines of a CSV file start (Cython): one pass over the file, without the GIL, chunk by chunk.

A run of a CSV model (a flat file above all: one table of the whole archive) is read by its rows. Asking the CSV
reader to skip the rows before a run parses every one of them again, so each run cost as much as the rows before
it and a file read in runs cost the square of its length. :func:`line_starts` finds, once, the byte where each
wanted line starts, so that every run reads its own bytes only (:mod:`tbstats.io.csvruns`).

Lines end as a CSV reader ends them: at a newline outside a quoted field (RFC 4180: a quoted field starts and
ends with the quote character, a quote inside it is doubled, a newline inside it belongs to it). A line that is
empty is a line (polars reads it as a row of nulls). A quote inside a field that is not quoted breaks the count
(files written by CSV writers have none): whoever uses the offsets checks what it reads from them.
"""

import numpy as np

from libc.stdint cimport int64_t, uint8_t
from libc.string cimport memchr

#: Bytes read at a time.
CHUNK = 1 << 23


cdef Py_ssize_t _scan(const uint8_t[::1] data, Py_ssize_t size, int64_t base, int *quoted, int64_t *line,
                      const int64_t[::1] wanted, Py_ssize_t k, int64_t[::1] out, uint8_t quote) noexcept nogil:
    """Scan ``size`` bytes at offset ``base`` of the file, inside a quoted field or not (``quoted``), in line
    ``line``; record where the wanted lines from the ``k``-th on start; return the next wanted line's index.

    A newline ends a line when the quotes before it are even in number: a quoted field holds an even number
    (its two, and two for each quote it holds). ``memchr`` finds the newlines and the quotes between them."""
    cdef const char *at = <const char *> &data[0]
    cdef const char *end = at + size
    cdef const char *stop
    cdef const char *q
    cdef const char *nl
    cdef int inside = quoted[0]
    cdef int64_t n = line[0]
    cdef Py_ssize_t m = wanted.shape[0]
    while at < end:
        nl = <const char *> memchr(at, 10, end - at)
        stop = nl if nl != NULL else end
        q = <const char *> memchr(at, quote, stop - at)
        while q != NULL:
            inside ^= 1
            q = <const char *> memchr(q + 1, quote, stop - q - 1)
        if nl == NULL:
            break
        at = nl + 1
        if not inside:
            n += 1
            while k < m and wanted[k] == n:
                out[k] = base + (at - <const char *> &data[0])
                k += 1
            if k == m:
                break
    quoted[0] = inside
    line[0] = n
    return k


def line_starts(str path, lines, str quote='"'):
    """The byte offsets at which the lines ``lines`` (ascending, 0 the header) of a CSV file start; a line past
    the last starts at the file's end."""
    cdef int64_t[::1] wanted = np.ascontiguousarray(lines, dtype=np.int64)
    found = np.zeros(wanted.shape[0], dtype=np.int64)
    cdef int64_t[::1] out = found
    cdef int quoted = 0
    cdef int64_t line = 0
    cdef int64_t base = 0
    cdef Py_ssize_t k = 0, m = wanted.shape[0], size
    cdef uint8_t q = ord(quote)
    buffer = bytearray(CHUNK)
    cdef const uint8_t[::1] data = buffer
    while k < m and wanted[k] == 0:
        k += 1   # (the header starts the file)
    with open(path, "rb", buffering=0) as handle:
        while k < m:
            size = handle.readinto(buffer)
            if not size:
                break
            with nogil:
                k = _scan(data, size, base, &quoted, &line, wanted, k, out, q)
            base += size
        if k < m:
            found[k:] = base   # (past the last line: the end of the file)
    return found


def first_long_row(str path, Py_ssize_t fields, str separator=",", str quote='"'):
    """The first row of a CSV file (0 the header) with more than ``fields`` fields, and its number of fields;
    None when there is none. Rows and fields end as :func:`line_starts` tells them (separators inside a quoted
    field are text). Byte by byte: for the error it names, never on a file that reads."""
    cdef uint8_t sep = ord(separator), q = ord(quote), c
    cdef int inside = 0
    cdef int64_t row = 0, count = 1
    cdef Py_ssize_t i, size
    buffer = bytearray(CHUNK)
    cdef const uint8_t[::1] data = buffer
    with open(path, "rb", buffering=0) as handle:
        while True:
            size = handle.readinto(buffer)
            if not size:
                break
            for i in range(size):
                c = data[i]
                if c == q:
                    inside ^= 1
                elif inside:
                    continue
                elif c == sep:
                    count += 1
                elif c == 10:
                    if count > fields:
                        return row, count
                    row += 1
                    count = 1
    return (row, count) if count > fields else None
