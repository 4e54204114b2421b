"""The games table's columns as arrays for the dense view (:mod:`tbstats.model.dense`): integers and Enum codes
with their nulls filled, strings by their first characters, each game's tournament, and searches of a sorted
column in place.

Each is read from the column's Arrow buffers, not through polars' expressions: ``fill_null``, ``to_physical``,
``str.starts_with`` run polars' query engine, about 0.25 ms a call whatever the column's size, which on a batch
of a few events was a third of the engine's time (benchmarks/RESULTS.md, session of 2026-12-04 17:12)."""

from __future__ import annotations

from typing import Literal

import numpy as np
import polars as pl
import pyarrow as pa


def is_value(column: pl.Series, value: str) -> np.ndarray:
    """Whether each value of an Enum or String column is ``value`` (null: no); an Enum's from its codes, a numpy
    comparison (a polars comparison and its boolean column's conversion run under the GIL)."""
    dtype = column.dtype   # (made from polars' own each time it is asked: 5 us)
    if isinstance(dtype, pl.Enum):
        categories = dtype.categories.to_list()
        if value not in categories:
            return np.zeros(len(column), dtype=bool)
        code = categories.index(value)
        # nulls as any other code (0 costs no pass of its own); int8 where the codes fit: the copy of a games
        # column's codes is then an eighth of int64's
        codes = integers(column, np.int8 if len(categories) < 128 else np.int32, fill=0 if code else 1)
        out: np.ndarray = codes == code
        return out
    out = (column.cast(pl.String) == value).fill_null(False).to_numpy()
    return out


def integers(column: pl.Series, dtype: type, fill: int = 0) -> np.ndarray:
    """An integer column's values, or an Enum column's codes (its categories' positions), as a new numpy array of
    ``dtype``, nulls as ``fill``."""
    arr = _one_array(column)
    if pa.types.is_dictionary(arr.type):
        arr = arr.indices
    if not pa.types.is_integer(arr.type):
        raise TypeError(f"column {column.name!r} is {column.dtype}, not integers or an Enum")
    values = stored_integers(arr)
    if not arr.null_count:
        return values.astype(dtype)
    # nulls as products, not a masked assignment (0.3 against 1.1 ms on a million rows)
    valid = valid_mask(arr)
    out: np.ndarray = np.multiply(values, valid, dtype=dtype, casting="unsafe")
    if fill:
        out += np.multiply(~valid, fill, dtype=dtype, casting="unsafe")
    return out


def stored_integers(arr: pa.Array) -> np.ndarray:
    """An integer Arrow array's values as stored, from its first row: a view of its buffer, no copy (a null's
    slot holds any value)."""
    if not pa.types.is_integer(arr.type):
        raise TypeError(f"{arr.type} values, not integers")
    if not len(arr):
        return np.zeros(0, dtype=arr.type.to_pandas_dtype())
    values = np.frombuffer(arr.buffers()[1], dtype=arr.type.to_pandas_dtype(), count=arr.offset + len(arr))
    return values[arr.offset:]


def starts_with(strings: pa.Array, prefix: bytes) -> np.ndarray:
    """Whether each string of an Arrow string array begins with ``prefix`` (at most 4 bytes; null: no), from the
    first bytes of each (a string view holds them inline)."""
    if len(prefix) > 4:
        raise ValueError(f"starts_with: a prefix of at most 4 bytes, not {prefix!r}")
    n = len(strings)
    if not n:
        return np.zeros(0, dtype=bool)
    if pa.types.is_string_view(strings.type):
        views = string_views(strings)
        hit = views[:, :4].copy().view("<i4").reshape(-1) >= len(prefix)
        for k, byte in enumerate(prefix):
            hit &= views[:, 4 + k] == byte
    else:
        offsets, data = _offsets_and_data(strings)
        hit = (offsets[1:] - offsets[:-1]) >= len(prefix)
        for k, byte in enumerate(prefix):
            hit &= data[np.minimum(offsets[:-1] + k, len(data) - 1)] == byte
    if strings.null_count:
        hit &= valid_mask(strings)
    return hit


def lists_with(lists: pl.Series, prefixes: tuple[bytes, ...]) -> np.ndarray:
    """Per row of a column of lists of strings (the tournaments' ``records``), whether one of its strings begins with
    one of ``prefixes`` (:func:`starts_with`; a null list: no)."""
    out = np.zeros(len(lists), dtype=bool)
    arr = lists.to_arrow(compat_level=pl.CompatLevel.newest())
    at = 0
    for chunk in arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]:
        n = len(chunk)
        if n:
            offsets = np.asarray(chunk.offsets, dtype=np.int64)   # (of the chunk's rows, sliced as it is)
            lo = int(offsets[0])
            strings = chunk.values.slice(lo, int(offsets[-1]) - lo)
            hit = np.zeros(len(strings), dtype=bool)
            for prefix in prefixes:
                hit |= starts_with(strings, prefix)
            hits = np.zeros(len(hit) + 1, dtype=np.int64)
            np.cumsum(hit, out=hits[1:])
            found = hits[offsets[1:] - lo] > hits[offsets[:-1] - lo]
            out[at:at + n] = found & valid_mask(chunk) if chunk.null_count else found
        at += n
    return out


def _one_array(column: pl.Series) -> pa.Array:
    """A column as one Arrow array (its chunks joined, when it has several)."""
    arr = column.to_arrow(compat_level=pl.CompatLevel.newest())
    return arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr


def string_views(strings: pa.Array) -> np.ndarray:
    """The 16-byte views of an Arrow string-view array, one row each (an int32 length, then the string's bytes
    inline up to 12, or its first 4 and where the rest is)."""
    return np.frombuffer(strings.buffers()[1], dtype=np.uint8).reshape(-1, 16)[
        strings.offset:strings.offset + len(strings)]


def _offsets_and_data(strings: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """The offsets (one more than the rows, int64) and the bytes of an Arrow string array that has offsets (other
    string types cast to large strings first: pyarrow.compute is then imported, never for polars' own views)."""
    if not (pa.types.is_string(strings.type) or pa.types.is_large_string(strings.type)):
        strings = strings.cast(pa.large_string())
    _, off_buf, data_buf = strings.buffers()
    wide = np.int64 if pa.types.is_large_string(strings.type) else np.int32
    offsets = np.frombuffer(off_buf, dtype=wide)[strings.offset: strings.offset + len(strings) + 1].astype(np.int64)
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None and len(data_buf) else np.zeros(
        1, dtype=np.uint8)
    return offsets, data


def valid_mask(arr: pa.Array) -> np.ndarray:
    """The validity bitmap of ``arr`` as a bool mask, unpacked with numpy (``is_valid`` would import
    ``pyarrow.compute``, a tenth of a second in a fresh process)."""
    bits = np.frombuffer(arr.buffers()[0], dtype=np.uint8)
    mask: np.ndarray = np.unpackbits(bits, bitorder="little")[arr.offset: arr.offset + len(arr)].view(np.bool_)
    return mask


def ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenated ``arange(s, s + n)`` for every start and length, without a Python loop.

    >>> ranges(np.array([5, 0, 9]), np.array([2, 0, 3])).tolist()
    [5, 6, 9, 10, 11]
    """
    lengths = lengths.astype(np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(lengths)
    base = np.repeat(starts.astype(np.int64) - (ends - lengths), lengths)
    return base + np.arange(total, dtype=np.int64)


def rows_of(keys: np.ndarray, sorted_ids: np.ndarray) -> np.ndarray:
    """Positions of ``keys`` in the sorted unique ``sorted_ids`` (an offset when the ids are consecutive)."""
    if len(sorted_ids) and int(sorted_ids[-1]) - int(sorted_ids[0]) == len(sorted_ids) - 1:
        return np.subtract(keys, sorted_ids[0], dtype=np.intp)
    return np.searchsorted(sorted_ids, keys)


def player_rows(tix: np.ndarray, start_no: np.ndarray, t_rows: np.ndarray, numbers: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """The player row of each (tournament row, start number) pair among players sorted by (``tix``,
    ``start_no``), and whether it is one of them (where not, the row is any valid one)."""
    keys = (tix.astype(np.int64) << 24) | start_no
    want = (t_rows.astype(np.int64) << 24) | numbers.astype(np.int64)
    rows = np.searchsorted(keys, want).clip(0, max(len(keys) - 1, 0))
    found = (keys[rows] == want) if len(keys) else np.zeros(len(want), dtype=bool)
    return rows, found


class PerGame:
    """Each game's tournament: when the table lists the tournaments in order (as the readers write it), how
    many rows each has (``counts``; no row-to-tournament array is made), else each row's tournament row
    (``rows``). ``t_ids``: the tournaments' ids, sorted."""

    def __init__(self, tournament: pl.Series, t_ids: np.ndarray) -> None:
        self.counts: np.ndarray | None = None
        chunks = SortedChunks.of(tournament) if len(t_ids) else None
        if chunks is not None:
            # each tournament's first row by a binary search per id in each of the column's own chunks (polars'
            # rle runs its query engine: 0.14 ms a call on any size); a tournament's rows run to the next one's
            # first, and they are all its own only when the last of them is (the column is sorted): then every
            # row is a game of one of the tournaments (ids sorted and distinct)
            counts = np.zeros(len(t_ids), dtype=np.int64)
            ok = True
            for view in chunks.views:
                first = np.searchsorted(view, t_ids, "left")
                end = np.append(first[1:], len(view))
                some = end > first
                ok = ok and int(first[0]) == 0 and bool((view[end[some] - 1] == t_ids[some]).all())
                counts += end - first
            if ok:
                self.counts = counts
        self._rows = None if self.counts is not None else rows_of(tournament.to_numpy(), t_ids).astype(
            np.intp, copy=False)

    @property
    def rows(self) -> np.ndarray:
        """Every games row's tournament row (intp)."""
        if self._rows is None:
            assert self.counts is not None
            self._rows = np.repeat(np.arange(len(self.counts), dtype=np.intp), self.counts)
        return self._rows

    def runs(self) -> tuple[np.ndarray, np.ndarray]:
        """The games as runs of consecutive rows of one tournament: each run's tournament row and length (int64),
        as the compiled loops over the games take them; one run per tournament when the table is in order."""
        if self.counts is not None:
            return np.arange(len(self.counts), dtype=np.int64), self.counts
        return runs_of(self.rows)


def runs_of(g_tix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The runs of consecutive games rows of one tournament (``g_tix``: each row's tournament row): each run's
    tournament row and length."""
    if not len(g_tix):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.diff(g_tix, prepend=g_tix[0] - 1))
    return g_tix[starts].astype(np.int64), np.diff(starts, append=len(g_tix)).astype(np.int64)


class SortedChunks:
    """A sorted polars column without nulls searched through numpy views of its chunks (no copy of the column;
    polars' own search of a column of many chunks measured 0.1-1 ms a call here, this 0.05 ms)."""

    def __init__(self, column: pl.Series) -> None:
        self.views = [chunk.to_numpy() for chunk in column.get_chunks() if chunk.len()]
        self.lasts = np.array([v[-1] for v in self.views])
        self.starts = np.cumsum([0, *(len(v) for v in self.views)])

    @staticmethod
    def of(column: pl.Series) -> SortedChunks | None:
        """The searches of ``column`` when it is sorted and has no nulls, else None."""
        return SortedChunks(column) if not column.null_count() and column.is_sorted() else None

    def search(self, value: int, side: Literal["left", "right"]) -> int:
        """The row where ``value`` would go in the column (numpy's ``searchsorted``)."""
        k = int(np.searchsorted(self.lasts, value, side))
        if k == len(self.views):
            return int(self.starts[-1])
        return int(self.starts[k] + np.searchsorted(self.views[k], value, side))

    def search_all(self, values: np.ndarray, side: Literal["left", "right"]) -> np.ndarray:
        """:meth:`search` of each of ``values`` (int64), a binary search per chunk for the values that fall in it."""
        k = np.searchsorted(self.lasts, values, side)
        out = np.full(len(values), self.starts[-1], dtype=np.int64)
        for j in np.unique(k[k < len(self.views)]).tolist():
            mine = k == j
            out[mine] = self.starts[j] + np.searchsorted(self.views[j], values[mine], side)
        return out

    def value(self, row: int) -> int:
        """The column's value at ``row``."""
        k = int(np.searchsorted(self.starts, row, "right")) - 1
        return int(self.views[k][row - self.starts[k]])
