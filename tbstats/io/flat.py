"""Flat model files: the checks of rows that belong to no tournament or player and of rows of one tournament or
one player that disagree about it (:func:`tbstats.io.tabular.split_flat` reports both, with the rows'
location), and the row groups, or row ranges, a run of whole tournaments is read by (:mod:`tbstats.io.parts`)."""

from __future__ import annotations

import functools
import os
from typing import Any, Final

import numpy as np
import polars as pl

from tbstats.io.check import LEDGER_SCHEMA, Check, _problems
from tbstats.model.columns import ranges

#: The rows of a flat file split at once when read by row groups (groups smaller than this are joined).
FLAT_ROWS: Final = 1 << 17


def check_orphans(flat: pl.DataFrame) -> pl.DataFrame:
    """Rows of a flat file that belong nowhere: player or game data without a tournament, game data without a
    start number. ``flat`` needs ``tournament``, ``start_no``, ``round`` and the hidden ``_file``/``_row``."""
    tid = pl.col("tournament")
    orphan: list[Check] = [
        (tid.is_null() & (pl.col("start_no").is_not_null() | pl.col("round").is_not_null()), "tournament",
         pl.lit("tournament id is empty on a player or game row")),
        (tid.is_not_null() & pl.col("start_no").is_null() & pl.col("round").is_not_null(), "start_no",
         pl.lit("start number is empty on a game row")),
    ]
    found = _problems(flat, orphan, {})
    return pl.concat(found) if found else pl.DataFrame(schema=LEDGER_SCHEMA)


def _list_differs(values: pl.Series) -> pl.Series:
    """Per row, whether its list differs from the row before's (nulls equal only to nulls), element by element
    in the flattened values: a list column compared to its shifted self would copy and compare every list."""
    lengths = values.list.len()
    length = lengths.fill_null(0).to_numpy().astype(np.int64)
    differs = lengths.ne_missing(lengths.shift(1)).fill_null(False).to_numpy().copy()
    differs[:1] = False
    offsets = np.concatenate([[0], np.cumsum(length)])
    rows = np.flatnonzero(~differs & (length > 0))
    rows = rows[rows > 0]
    if len(rows):
        n = length[rows]
        here = ranges(offsets[rows], n)
        flat = values.explode(empty_as_null=False, keep_nulls=False)
        unequal = flat.gather(here).ne_missing(flat.gather(here - np.repeat(offsets[rows] - offsets[rows - 1], n)))
        differs[rows] |= np.add.reduceat(unequal.to_numpy(), np.cumsum(n) - n) > 0
    return pl.Series(differs)


def _in_key_order(df: pl.DataFrame, keys: tuple[str, ...]) -> bool:
    """Whether the rows are sorted by ``keys`` (then each key's rows are together), found without hashing."""
    if not df[keys[0]].is_sorted():
        return False
    earlier = [pl.col(k) == pl.col(k).shift(1) for k in keys[:-1]]
    if not earlier:
        return True
    return not df.select((pl.all_horizontal(earlier) & (pl.col(keys[-1]) < pl.col(keys[-1]).shift(1))).any()).item()


def check_repeats(flat: pl.DataFrame, keys: tuple[str, ...], columns: tuple[str, ...]) -> pl.DataFrame:
    """Rows of a flat file that disagree about one tournament (``keys`` ``("tournament",)``) or one player
    (``("tournament", "start_no")``) in the flat ``columns`` of that part of a row (``records`` excluded: it is
    set on a tournament's first row only). ``flat`` has those columns and the hidden ``_file``/``_row``."""
    tid = pl.col("tournament")
    part = flat
    if any(part[k].null_count() for k in keys):   # (a copy of every column: only when some rows have no key)
        part = part.filter(pl.all_horizontal(pl.col(k).is_not_null() for k in keys))
    same = pl.all_horizontal(pl.col(k) == pl.col(k).shift(1) for k in keys).fill_null(False)
    if not _in_key_order(part, keys):
        runs = part.select((~same).sum()).item()
        if runs != part.select(keys).n_unique():  # a key's rows are not together: bring them together
            part = part.sort(*keys, "_row")
    # each row against the one before it of the same key: one pass, no hashing of wide rows
    checks: list[Check] = []
    lists = {}
    for col in columns:
        reason = (pl.format("rows of tournament {} disagree about {}", tid, pl.lit(col)) if len(keys) == 1
                  else pl.format("rows of player {} of tournament {} disagree about {}", pl.col("start_no"),
                                 tid, pl.lit(col)))
        if isinstance(part.schema[col], pl.List):
            lists[f"_differs_{col}"] = _list_differs(part[col])
            checks.append((same & pl.col(f"_differs_{col}"), col, reason))
        else:
            checks.append((same & pl.col(col).ne_missing(pl.col(col).shift(1)), col, reason))
    found = _problems(part.with_columns(**lists) if lists else part, checks, {})
    return pl.concat(found) if found else pl.DataFrame(schema=LEDGER_SCHEMA)


def footer(path: str) -> Any:
    """The footer (``pyarrow.parquet.FileMetaData``) of a Parquet file, read once while the file is unchanged
    (a run of a flat file asks for it several times); None when it cannot be read."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return _footer(path, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=16)
def _footer(path: str, mtime: int, size: int) -> Any:
    import pyarrow.parquet as pq

    try:
        return pq.read_metadata(path)
    except (OSError, ValueError):
        return None


def group_ids(path: str, fmt: str) -> list[tuple[int, int, int] | None] | None:
    """Per row group of a Parquet file, from its statistics: the smallest and largest tournament id and the rows
    (None for a group without tournament ids); None when a group has no statistics or the file is not Parquet."""
    stats = _id_statistics(path, fmt)
    if stats is None:
        return None
    return [(int(s.min), int(s.max), rows) if s.has_min_max else None for s, rows in stats]


def rows_with_ids(path: str, fmt: str) -> int | None:
    """The rows of a Parquet file when its row groups' statistics show a tournament id on every one (no null
    counted); None when they do not say, or the file is not Parquet."""
    stats = _id_statistics(path, fmt)
    if stats is None or any(not s.has_null_count or s.null_count for s, _ in stats):
        return None
    return sum(rows for _, rows in stats)


def _id_statistics(path: str, fmt: str) -> list[tuple[Any, int]] | None:
    """Each row group's statistics of the tournament column of a Parquet file, and its rows; None when a group
    has none, or the file is not Parquet (or has no such column)."""
    meta = footer(path) if fmt == "parquet" else None
    if meta is None:
        return None
    try:
        column = meta.schema.names.index("tournament")
        stats = [(meta.row_group(k).column(column).statistics, meta.row_group(k).num_rows)
                 for k in range(meta.num_row_groups)]
    except (OSError, ValueError):
        return None
    return None if any(s is None for s, _ in stats) else stats


def group_bounds(file: str, fmt: str, lo: int, hi: int) -> list[tuple[int, int]] | None:
    """The tournament ids of the run ``lo``..``hi`` as ranges of whole row groups of a Parquet file, about
    :data:`FLAT_ROWS` rows each; None unless the statistics show the groups in tournament order (then no
    tournament is cut between two ranges)."""
    groups = group_ids(file, fmt)
    if groups is None:
        return None
    out: list[list[int]] = []   # [first id, last id, rows]
    previous = None
    for group in groups:
        if group is None:   # no tournament (the warnings' rows): read with the first range
            continue
        first, last, rows = group
        if previous is not None and first <= previous:
            return None
        previous = last
        first, last = max(first, lo), min(last, hi)
        if first > last:
            continue
        if out and out[-1][2] + rows <= FLAT_ROWS:
            out[-1][1:] = [last, out[-1][2] + rows]
        else:
            out.append([first, last, rows])
    return [(a, b) for a, b, _ in out]


#: A row group's first row, rows, smallest and largest tournament id, and values per column (:func:`group_counts`).
Group = tuple[int, int, int | None, int | None, tuple[int, ...]]


def group_counts(path: str, fmt: str, columns: list[str]) -> list[Group] | None:
    """Per row group of a Parquet file in tournament order, from its statistics: its first row, its rows, its
    smallest and largest tournament id (None for a group without any) and the values of each of ``columns``
    (non-null cells; of a list column, its non-null elements); None when the file is not Parquet, a group lacks
    a statistic or the groups are out of order."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return _group_counts(path, fmt, tuple(columns), stat.st_mtime_ns, stat.st_size) if fmt == "parquet" else None


@functools.lru_cache(maxsize=16)
def _group_counts(path: str, fmt: str, columns: tuple[str, ...], mtime: int, size: int) -> list[Group] | None:
    groups = group_ids(path, fmt)
    meta = footer(path)
    if groups is None or meta is None:
        return None
    try:
        leaves = [meta.schema.column(j).path.split(".")[0] for j in range(meta.num_columns)]
        at = [leaves.index(c) for c in columns]
    except (OSError, ValueError):
        return None
    out: list[Group] = []
    first, previous = 0, None
    for k, group in enumerate(groups):
        chunk = meta.row_group(k)
        stats = [chunk.column(j).statistics for j in at]
        if any(s is None for s in stats):
            return None
        if group is not None:
            if previous is not None and group[0] <= previous:
                return None
            previous = group[1]
        out.append((first, chunk.num_rows, None if group is None else group[0], None if group is None else group[1],
                    tuple(int(s.num_values) for s in stats)))
        first += chunk.num_rows
    return out


#: A flat file's tournaments in order (:func:`id_rows`): each id, its rows' first and end row in the file (rows of
#: other tournaments never among them; rows of none may be), and the runs of rows of no tournament (the warnings).
IdRows = tuple[np.ndarray, np.ndarray, np.ndarray, list[tuple[int, int]]]


def id_rows(path: str, fmt: str) -> IdRows | None:
    """Where each tournament's rows lie in a flat Parquet or Arrow file, from its tournament column alone (read
    once while the file is unchanged); None when the ids are out of order, or the file is CSV. What a run of a
    flat file without statistics (an Arrow file) is read by: slices, which decode the record batches that hold
    them, where a filter decodes the whole file each time."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return _id_rows(path, fmt, stat.st_mtime_ns, stat.st_size) if fmt in ("parquet", "arrow") else None


@functools.lru_cache(maxsize=4)
def _id_rows(path: str, fmt: str, mtime: int, size: int) -> IdRows | None:
    scan = pl.scan_parquet(path, hive_partitioning=False) if fmt == "parquet" else pl.scan_ipc(
        path, hive_partitioning=False)
    try:
        column = scan.select("tournament").collect()["tournament"]
    except (pl.exceptions.PolarsError, OSError):
        return None   # (the reader names what is wrong with the file)
    if not column.dtype.is_integer():
        return None
    valid = column.is_not_null().to_numpy()
    rows = np.flatnonzero(valid)
    ids = column.drop_nulls().to_numpy().astype(np.int64, copy=False)
    if len(ids) and bool((ids[1:] < ids[:-1]).any()):
        return None
    new = np.flatnonzero(np.diff(ids) != 0) + 1 if len(ids) else np.zeros(0, dtype=np.int64)
    first = np.concatenate([[0], new]) if len(ids) else new
    last = np.concatenate([new - 1, [len(ids) - 1]]) if len(ids) else new
    loose = np.flatnonzero(~valid)
    breaks = np.flatnonzero(np.diff(loose) != 1) + 1
    runs = [(int(r[0]), int(r[-1]) + 1) for r in np.split(loose, breaks) if len(r)]
    return ids[first], rows[first], rows[last] + 1, runs


def run_ranges(index: IdRows, lo: int, hi: int) -> list[tuple[int, int]]:
    """The rows of the tournaments ``lo``..``hi`` of a flat file in tournament order (its :func:`id_rows`), as row
    ranges of whole tournaments of about :data:`FLAT_ROWS` rows each."""
    ids, first, end, _ = index
    a, b = int(np.searchsorted(ids, lo, "left")), int(np.searchsorted(ids, hi, "right"))
    out: list[tuple[int, int]] = []
    k = a
    while k < b:   # (a range ends at the first tournament that brings it to FLAT_ROWS rows)
        j = min(int(np.searchsorted(end[k:b], first[k] + FLAT_ROWS, "left")) + k, b - 1)
        out.append((int(first[k]), int(end[j])))
        k = j + 1
    return out
