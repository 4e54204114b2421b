"""The character buffer of a batch of TRF files: decoding, lines, fixed-width fields (rules.md 2.1, 2.5).

Every file of a batch goes into one numpy array of character codes (one element per *character*, so TRF
character columns are array offsets even for UTF-8 names): ``uint8`` when every character is below 256,
else ``uint16``/``uint32``. Lines are found by a compiled pass (:mod:`tbstats.io.trf.text`), record codes by numpy
over all lines at once; fixed fields by compiled loops over the buffer (:mod:`tbstats.io.trf.fields`: where a
field's stripped text lies, and the numbers in it); only the fields that are text are turned into strings, one
column at a time. Whitespace follows polars' ``strip_chars`` (Unicode White_Space), as the reader always did.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import polars as pl
import pyarrow as pa

from tbstats.errors import FormatError
from tbstats.io.trf.fields import decimal_field, fixed_fields, gather_utf8
from tbstats.io.trf.text import join_codes, split_codes
from tbstats.model.batch import arrow_series
from tbstats.model.columns import ranges

#: The characters ``str.strip_chars`` removes (Rust's ``char::is_whitespace``; not Python's \x1c-\x1f).
WHITESPACE: Final = ("\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(chr(c) for c in range(0x2000, 0x200B))
                     + "\u2028\u2029\u202f\u205f\u3000")
#: Whether each code below 65,536 is whitespace (a wider code is not).
IS_WHITESPACE: Final = np.zeros(65536, dtype=bool)
IS_WHITESPACE[[ord(c) for c in WHITESPACE]] = True
SPACE: Final = 32
PAD: Final = 128  # blank characters after the last file, so that fixed-width windows never run off the end


def decode(path: str, raw: bytes) -> tuple[str, str | None]:
    """Decode TRF bytes: UTF-16 (a BOM, or text whose every other byte is NUL, as Windows tools save it),
    UTF-8 (BOM or not), else cp1252, else Latin-1; return text and a note.

    Raises :class:`FormatError` for empty files and bytes that are not text.

    >>> decode("x.trf", "012 Open".encode("utf-16")), decode("x.trf", "012 Open".encode("utf-16-be"))
    (('012 Open', 'UTF-16: decoded'), ('012 Open', 'UTF-16: decoded'))
    """
    utf16 = _utf16(raw)
    if utf16 is not None:
        try:
            text = raw.decode(utf16)
        except UnicodeDecodeError:
            raise FormatError(path, None, None, "not a TRF text file (it starts as UTF-16 but does not decode "
                                                "as UTF-16)") from None
        check_text(path, text.removeprefix("\ufeff").encode("utf-8"))
        return text.removeprefix("\ufeff"), "UTF-16: decoded"
    check_text(path, raw)
    if raw.startswith(b"\xef\xbb\xbf"):
        return raw[3:].decode("utf-8", errors="strict"), None
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError:
        pass
    try:
        return raw.decode("cp1252"), "not UTF-8: decoded as Windows-1252"
    except UnicodeDecodeError:
        return raw.decode("latin-1"), "not UTF-8 or Windows-1252: decoded as Latin-1"


def _utf16(raw: bytes) -> str | None:
    """The codec of UTF-16 bytes (by their BOM, or by NULs in every other byte of the start), else None."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    if raw.find(b"\x00", 0, 4096) < 0:   # (UTF-16 without a BOM has a NUL in every other byte)
        return None
    head = raw[:4096]
    if len(head) >= 8 and len(head) % 2 == 0:
        if head[1::2].count(0) == len(head) // 2 and head[0::2].count(0) == 0:
            return "utf-16-le"
        if head[0::2].count(0) == len(head) // 2 and head[1::2].count(0) == 0:
            return "utf-16-be"
    return None


def check_text(path: str, raw: bytes) -> None:
    """Raise :class:`FormatError` for empty files and for binary data (NUL bytes near the start)."""
    if not raw or raw.isspace():
        raise FormatError(path, None, None, "empty file (expected TRF records such as '001' player lines)")
    if raw.find(b"\x00", 0, 4096) >= 0:
        raise FormatError(path, None, None, "binary data, not a TRF text file (NUL bytes found)")


def character_codes(path: str, raw: bytes) -> tuple[bytes | str, str | None]:
    """The characters of a file: the bytes themselves when they are ASCII, else its decoded text
    (:func:`build_buffer` makes the codes of all files at once)."""
    if raw.isascii() and _utf16(raw) is None:   # (UTF-16 text without a BOM is ASCII with NULs near the start)
        check_text(path, raw)
        return raw, None
    return decode(path, raw)


def is_whitespace(codes: np.ndarray) -> np.ndarray:
    """Whether each character code is whitespace (as polars strips it), by comparisons (no table gather)."""
    ws = (codes == 32) | ((codes >= 9) & (codes <= 13))
    if codes.dtype == np.uint8:
        if not (codes >= 0x85).any():
            return ws
        return ws | (codes == 0x85) | (codes == 0xA0)
    high = np.flatnonzero(codes >= 0x85)   # (few: letters beyond ASCII) looked up alone, not the whole window
    if len(high):
        np.put(ws, high, IS_WHITESPACE[np.minimum(np.take(codes, high), 65535)])   # (flat positions, any layout)
    return ws


@dataclass(frozen=True)
class Lines:
    """Every non-blank line of a batch: its file, 1-based line number, start in ``buf`` and stripped length."""

    buf: np.ndarray       # character codes of every file, each followed by a line break
    file: np.ndarray      # int32
    line: np.ndarray      # int32
    start: np.ndarray     # int64
    length: np.ndarray    # int64: characters after removing trailing whitespace (> 0)

    def code_is(self, code: str) -> np.ndarray:
        """Lines whose record code (first three characters, upper-cased) is ``code`` (digits only)."""
        ok = self.length >= 3
        for i, ch in enumerate(code):
            ok &= self.buf[self.start + i] == ord(ch)
        return ok

    def subset(self, mask: np.ndarray) -> Lines:
        return Lines(self.buf, self.file[mask], self.line[mask], self.start[mask], self.length[mask])

    def texts(self) -> list[str]:
        """The lines as Python strings (for the few header records of each event)."""
        if not len(self.start):
            return []
        idx = ranges(self.start, self.length + 1)  # one character past each line: a line break
        codes = self.buf[idx]
        codes[np.cumsum(self.length + 1) - 1] = 10
        return _as_text(codes).split("\n")[:-1]

    def field(self, columns: tuple[int, int], *, number: bool = False) -> Field:
        """The fixed field at ``columns`` (0-based, the end excluded) of every line, blank past its end: where
        its stripped text lies and, with ``number``, that text read as an integer (:meth:`fields`)."""
        return self.fields([columns], [number])[0]

    def fields(self, spans: list[tuple[int, int]], numbers: list[bool]) -> list[Field]:
        """:meth:`field` of several fields, read in one pass over the lines
        (:func:`tbstats.io.trf.fields.fixed_fields`); ``numbers[k]``: field ``k`` is read as an integer."""
        n, k = len(self.start), len(spans)
        first, last = np.empty((k, n), dtype=np.int16), np.empty((k, n), dtype=np.int16)
        value, ok = np.empty((k, n), dtype=np.int64), np.empty((k, n), dtype=bool)
        fixed_fields(self.buf, self.start, self.length, np.array(spans, dtype=np.int64).reshape(k, 2),
                     np.array(numbers, dtype=np.uint8), IS_WHITESPACE.view(np.uint8), first, last, value,
                     ok.view(np.uint8))
        return [Field(lo, first[f], last[f], value[f] if number else None, ok[f] if number else None)
                for f, ((lo, _), number) in enumerate(zip(spans, numbers, strict=True))]

    def decimal(self, field: Field) -> tuple[np.ndarray, np.ndarray]:
        """A field's stripped text (:meth:`field`) read as polars reads it as a float (a ``,`` for a ``.``):
        values (NaN where absent) and whether each is one. Plain decimals are read by a compiled loop
        (:func:`tbstats.io.trf.fields.decimal_field`); any other text (exponents, ``inf``...) by polars."""
        n = len(self.start)
        value, state = np.empty(n, dtype=np.float64), np.empty(n, dtype=np.uint8)
        decimal_field(self.buf, self.start + field.lo, field.first, field.last, value, state)
        ok = state == 1
        other = np.flatnonzero(state == 2)
        if other.size:
            parsed = self.text(field, "t", other).str.replace(",", ".").cast(pl.Float64, strict=False)
            ok[other] = parsed.is_not_null().to_numpy()
            value[other] = parsed.fill_null(np.nan).to_numpy()
        return np.where(ok, value, np.nan), ok

    def text(self, field: Field, name: str, rows: np.ndarray | None = None, *, blank_null: bool = False) -> pl.Series:
        """The stripped text of a field of every line (or of ``rows``), as a String column; with ``blank_null``
        a blank field is null, not ``""``."""
        at, counts = self.start + field.lo + field.first, field.last - field.first
        if rows is not None:
            at, counts = at[rows], counts[rows]
        return text_at(self.buf, at, counts, name, blank_null=blank_null)


@dataclass(frozen=True)
class Field:
    """A fixed field of some lines (:meth:`Lines.field`): the first and one-past-last column of its stripped
    text, counted from the field's first column ``lo`` (both 0 when it is blank), and for a number its text
    read as an integer (``value``, 0 where not ``ok``)."""

    lo: int
    first: np.ndarray   # int16
    last: np.ndarray    # int16
    value: np.ndarray | None = None   # int64
    ok: np.ndarray | None = None      # bool

    @property
    def filled(self) -> np.ndarray:
        """Whether each line's field holds any character but blanks."""
        return self.last > 0

    def subset(self, rows: np.ndarray) -> Field:
        """The field of some lines (as :meth:`Lines.subset`)."""
        return Field(self.lo, self.first[rows], self.last[rows], None if self.value is None else self.value[rows],
                     None if self.ok is None else self.ok[rows])


def _as_text(codes: np.ndarray) -> str:
    if codes.dtype == np.uint8:
        return codes.tobytes().decode("latin-1")
    return codes.astype("<u4").tobytes().decode("utf-32-le")


def windows(buf: np.ndarray, at: np.ndarray, width: int, room: np.ndarray) -> np.ndarray:
    """``width`` characters from each position ``at`` (one column each, so ``width`` x positions); blank
    from ``room`` characters on (the line's end). For the few fields a message quotes: one gather per column."""
    start = np.minimum(at, len(buf) - width)
    out = np.empty((width, len(start)), dtype=buf.dtype)
    for j in range(width):  # (one index array, moved on in place)
        np.take(buf, start, out=out[j])
        start += 1
    return _blank_past_end(out, room)


def _blank_past_end(out: np.ndarray, room: np.ndarray) -> np.ndarray:
    """Blank the characters of each window (a column of ``out``) from ``room`` on: past the line's end come
    blanks, not the next line."""
    width = out.shape[0]
    short = np.flatnonzero(room < width)
    if short.size:
        left = room[short]
        for j in range(max(int(left.min()), 0), width):
            out[j, short[left <= j]] = SPACE
    return out


def build_buffer(parts: list[bytes | str]) -> tuple[np.ndarray, np.ndarray]:
    """One code array of all files, each followed by a line feed, and each file's start in it (in characters):
    a file as bytes is one byte a character (ASCII, or Latin-1: :func:`tbstats.io.trf.text.utf8_characters`), a file
    as text is decoded (:func:`character_codes`).

    ``PAD`` blanks follow the last file (its line feed included) so windows never run past the end. The array
    has one byte a character when every text fits in Latin-1, else two (or four, beyond the Basic Multilingual
    Plane), each file copied or widened into its place by a compiled loop (:func:`tbstats.io.trf.text.join_codes`;
    no text of the whole piece is made).
    """
    sizes = np.array([len(p) + 1 for p in parts], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return join_codes(parts, PAD), offsets


def split_lines(buf: np.ndarray, offsets: np.ndarray) -> Lines:
    """Non-blank lines of every file (line ends CR, LF or CRLF), trailing whitespace removed, in one compiled pass
    over the buffer (:func:`tbstats.io.trf.text.split_codes`)."""
    if len(offsets) == 1:
        empty = np.zeros(0, dtype=np.int64)
        return Lines(buf, empty.astype(np.int32), empty.astype(np.int32), empty, empty)
    return Lines(buf, *split_codes(buf, np.ascontiguousarray(offsets, dtype=np.int64), IS_WHITESPACE.view(np.uint8)))


# ------------------------------------------------------------------------------------- fixed fields

def stripped(win: np.ndarray, ws: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """First and one-past-last non-blank column of each position of a window (both 0 when blank).

    ``ws`` is :func:`is_whitespace` of the window when already known.
    """
    k = win.shape[0]
    solid = ~(is_whitespace(win) if ws is None else ws)
    if not k:
        return np.zeros(win.shape[1], dtype=np.int64), np.zeros(win.shape[1], dtype=np.int64)
    if k <= 12:  # a few columns: one pass each
        first = np.zeros(win.shape[1], dtype=np.int64)
        last = np.zeros(win.shape[1], dtype=np.int64)
        for j in range(k - 1, -1, -1):
            first[solid[j]] = j
        for j in range(k):
            last[solid[j]] = j + 1
        return first, last
    weights = np.arange(1, k + 1, dtype=np.uint8 if k < 255 else np.int64)[:, None]
    last = (solid * weights).max(axis=0).astype(np.int64)
    first = k - (solid * weights[::-1]).max(axis=0).astype(np.int64)
    return np.where(last > 0, first, 0), last


def text_column(win: np.ndarray, name: str, ws: np.ndarray | None = None, *, blank_null: bool = False) -> pl.Series:
    """The stripped text of each position of a window, as a polars String column (no Python per row); with
    ``blank_null`` a blank field is null, not ``""``."""
    a, b = stripped(win, ws)
    n = win.shape[1]
    counts = (b - a).astype(np.int64)
    col = ranges(a, counts)
    codes = win.reshape(-1)[col * n + np.repeat(np.arange(n, dtype=np.int64), counts)]
    at = np.zeros(n, dtype=np.int64)   # (the fields' characters one after the other)
    np.cumsum(counts[:-1], out=at[1:])
    return text_at(codes, at, counts, name, blank_null=blank_null)


def text_at(buf: np.ndarray, at: np.ndarray, counts: np.ndarray, name: str, *, blank_null: bool = False) -> pl.Series:
    """The texts of ``counts[i]`` characters of the buffer from each position ``at[i]``, as a polars String
    column (Arrow buffers of their UTF-8); with ``blank_null`` an empty text is null."""
    counts = np.ascontiguousarray(counts, dtype=np.int64)
    data, offsets = gather_utf8(buf, np.ascontiguousarray(at, dtype=np.int64), counts)   # (compiled)
    blank = int(np.count_nonzero(counts == 0)) if blank_null else 0
    valid = pa.py_buffer(np.packbits(counts > 0, bitorder="little")) if blank else None
    arr = pa.LargeStringArray.from_buffers(len(counts), pa.py_buffer(offsets), pa.py_buffer(data), valid, blank)
    return arrow_series(name, arr)


def int_column(name: str, values: np.ndarray, dtype: type[np.signedinteger[Any]], null: np.ndarray) -> pl.Series:
    """An integer column of ``values`` cast by numpy to ``dtype`` (polars' own cast is several times slower;
    the values are small fixed-width fields), null where ``null`` holds (an Arrow validity bitmap: cheaper
    than scattering nulls, most of all when a field is blank throughout)."""
    data = np.ascontiguousarray(values, dtype=dtype)
    missing = int(np.count_nonzero(null))
    if not missing:
        return pl.Series(name, data)
    valid = pa.py_buffer(np.packbits(~null, bitorder="little"))
    return arrow_series(name, pa.Array.from_buffers(pa.from_numpy_dtype(data.dtype), len(data),
                                                    [valid, pa.py_buffer(data)], null_count=missing))


def texts_of(win: np.ndarray, rows: np.ndarray) -> list[str]:
    """Stripped text of a few rows of a window as Python strings (for messages)."""
    if not len(rows):
        return []
    return text_column(win[:, rows], "t").to_list()
