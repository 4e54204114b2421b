"""Sparse flat files: each tournament's columns on its first row only, each player's on his first row only.

A flat file repeats its tournament's and its player's columns (about 40) on every game row; reading them back
cost about eight times what the three tables of a directory do. ``ingest`` (:class:`ArchiveWriter`) therefore
writes a flat Parquet or Arrow file *sparse*: those columns are null on the other rows (which Parquet stores
almost for free, and compressed Arrow nearly so), a column :data:`FIRST` marks the first rows (2: the
tournament's, which is also its first player's; 1: another player's), and the schema metadata
:data:`SPARSE_MARK` says so. Files without the mark (older files, hand-made ones, CSV) are read as they always
were (:func:`tbstats.io.tabular.split_flat`).

A run of a sparse file (the tournaments ``lo``..``hi``, whole: parts and recovery read whole tournaments) is
read in four scans (of an Arrow file, which has no statistics to skip by, of its run's rows read once by a slice:
:func:`_run_rows`), each filtered by the Parquet reader while it decodes: the game columns of its rows with a
round, the few rows without one, the tournament columns of the tournaments' first rows (and the rows without a
tournament: the warnings), and the player columns of the marked rows. So the repeated columns are built for
the first rows only, and not at all where the row groups' statistics show a column empty; the list columns are
JSON text, since decoding a nested column costs, for every row, null or not, about what a dozen flat ones do.

What is read is checked. No row that is not its tournament's (player's) first may hold a value in a
tournament (player) column: the statistics count each column's values in each row group, and when the rows
read hold them all (the usual case: a comparison of counts) no other row can; otherwise the run's rows of the
row groups whose counts differ (all of them without statistics) are read whole to name the rows, by file, row
and column, as the model's checker names a problem. A row without a round is the only row of its player (or of
an event without players), so it must be marked. A marker missing elsewhere leaves out a player or a
tournament that the checker then finds named by other rows; a marker on a later row takes that row's values.
"""

from __future__ import annotations

import functools
import json
import os

import numpy as np
import polars as pl

from tbstats.errors import SchemaError
from tbstats.io import check
from tbstats.io import flat as flat_checks
from tbstats.io.check import LEDGER_SCHEMA, Check
from tbstats.io.tabular import proof
from tbstats.io.tabular.layout import (
    FIRST,
    FLAT_RENAMES,
    SPARSE_COLUMNS,
    SPARSE_MARK,
    TABLES,
    TEXT_LISTS,
    Format,
    cast_flat,
    check_flat_schema,
    flat_names,
)
from tbstats.model.batch import Batch
from tbstats.model.games import check_schema

_TID, _NO = pl.col("tournament"), pl.col("start_no")


def first_rows(tid: pl.Expr = _TID, start_no: pl.Expr = _NO) -> pl.Expr:
    """The marker of each row of a flat table whose tournaments' rows are together, and each player's: 2 on a
    tournament's first row, 1 on a player's other first row, null elsewhere (and on rows without a tournament)."""
    new_t = tid.is_not_null() & tid.ne_missing(tid.shift(1))
    new_p = tid.is_not_null() & start_no.is_not_null() & (new_t | start_no.ne_missing(start_no.shift(1)))
    return pl.when(new_t).then(pl.lit(2, pl.Int8)).when(new_p).then(pl.lit(1, pl.Int8)).otherwise(
        pl.lit(None, pl.Int8))


def sparsify(flat: pl.DataFrame) -> pl.DataFrame:
    """A flat table (as :func:`tbstats.io.tabular.flatten` makes it: each tournament's rows together, each
    player's too) made sparse: the tournament and player columns on first rows only, the list columns as JSON
    arrays (:data:`TEXT_LISTS`), and the :data:`FIRST` column. Rows without a tournament (the warnings) keep
    theirs."""
    out = flat.with_columns(first_rows().alias(FIRST))
    marked = pl.col(FIRST)
    keep = {"tournaments": (marked == 2) | _TID.is_null(), "players": marked.is_not_null() | _TID.is_null()}
    out = out.with_columns(pl.when(keep[table]).then(pl.col(c)).alias(c)
                           for table, columns in SPARSE_COLUMNS.items() for c in columns if c in out.columns)
    texts = []
    for c in TEXT_LISTS:   # only the tournaments' first rows have one: encoded one by one, in Python
        at = out[c].is_not_null().arg_true()
        values = [json.dumps(v, ensure_ascii=False) for v in out[c].gather(at).to_list()]
        texts.append(pl.Series(c, [None] * out.height, pl.String).scatter(at, pl.Series(values, dtype=pl.String)))
    return out.with_columns(texts)


def is_sparse(path: str, fmt: Format) -> bool:
    """Whether a flat Parquet/Arrow file carries the sparse mark; a mark this version does not know raises."""
    if fmt == "csv":
        return False
    import pyarrow as pa
    import pyarrow.ipc as ipc

    if fmt == "parquet":
        footer = flat_checks.footer(path)
        meta = footer.metadata or {} if footer is not None else {}
    else:
        try:
            with pa.memory_map(path) as source:
                meta = ipc.open_file(source).schema.metadata or {}
        except (OSError, pa.ArrowException):
            return False   # (the reader names what is wrong with the file)
    marks = {k.decode(errors="replace"): v.decode(errors="replace") for k, v in meta.items()
             if k.decode(errors="replace") in SPARSE_MARK}
    if not marks:
        return False
    if marks != SPARSE_MARK:
        raise SchemaError(f"{path}: flat layout {marks} is not one this tbstats reads (expected {SPARSE_MARK}; "
                          "written by a newer tbstats?)")
    return True


def split_sparse(file: str, fmt: Format, lo: int, hi: int, warnings: bool, where: str) -> Batch:
    """The tournaments ``lo``..``hi`` of a sparse flat file (and its warnings, with ``warnings``) as a
    :class:`Batch`, checked (see the module docstring).

    Raises :class:`SchemaError` naming a flat column that is missing or of the wrong type, and
    :class:`tbstats.io.check.ModelCheckError` listing the rows that break the model.
    """
    prefix = f"{where}: " if where else ""
    scan = _scan(file, fmt)
    index = flat_checks.id_rows(file, fmt) if fmt != "parquet" else None
    if index is not None:   # (no statistics: the run's rows read once by a slice, then filtered in memory)
        scan = _run_rows(scan, index, lo, hi, warnings)
    schema = scan.collect_schema()
    for c in TEXT_LISTS:
        if c in schema and schema[c] != pl.String():
            raise SchemaError(f"{prefix}column '{c}' has type {schema[c]} (expected String: JSON arrays in a "
                              "sparse flat file)")
    check_flat_schema(pl.Schema({**schema, **{c: pl.List(pl.String) for c in TEXT_LISTS if c in schema}}), prefix)
    if FIRST not in schema or not schema[FIRST].is_integer():
        raise SchemaError(f"{prefix}a sparse flat file needs an integer column '{FIRST}'"
                          + (f" (found {schema[FIRST]})" if FIRST in schema else ""))
    names = {t: flat_names(t, schema) for t in TABLES}
    own = {t: [c for c in columns if c in schema] for t, columns in SPARSE_COLUMNS.items()}
    run, marked = _TID.is_between(lo, hi), pl.col(FIRST)
    groups = flat_checks.group_counts(file, fmt, [*own["tournaments"], *own["players"]]) if fmt == "parquet" else None
    touched = [g for g in groups or () if g[2] is not None and _ids(g)[0] <= hi and _ids(g)[1] >= lo]
    # the marked rows are read from whole row groups (their counts are checked against the statistics)
    bounds = (min(_ids(g)[0] for g in touched), max(_ids(g)[1] for g in touched)) if touched else (lo, hi)
    span = _TID.is_between(*bounds)

    # the Parquet reader applies each filter while decoding: the sparse columns are decoded for the marked rows
    # only, and not at all where the statistics show them empty
    empty = _empty(groups, touched, [*own["tournaments"], *own["players"]])
    games = scan.filter(run & pl.col("round").is_not_null()).select([*names["games"].values(), "_row"]).collect()
    bare = scan.filter(run & pl.col("round").is_null()).select("tournament", "start_no", FIRST, "_row").collect()
    events = _with_nulls(scan.filter((marked == 2) & span | _TID.is_null()).select(list(dict.fromkeys(
        ["tournament", "start_no", "round", FIRST, *(c for c in own["tournaments"] if c not in empty),
         *names["warnings"].values(), "_row"]))).collect(), own["tournaments"], schema)
    people = _with_nulls(scan.filter(marked.is_not_null() & span).select(
        "tournament", "start_no", FIRST, *(c for c in own["players"] if c not in empty), "_row").collect(),
        own["players"], schema)
    located = pl.lit(file, check.FILE).alias("_file")
    loose = events.filter(_TID.is_null()).with_columns(located) if warnings else events.clear().with_columns(located)

    # (the run's rows all have a tournament: of the orphan checks only a game row without a start number can
    # fail there, looked for before the rows are located)
    orphans = [loose.select("tournament", "start_no", "round", "_row", "_file")]
    if games["start_no"].null_count():
        orphans.insert(0, games.select("tournament", "start_no", "round", "_row").with_columns(located))
    found = [flat_checks.check_orphans(pl.concat(orphans)), _unmarked(bare.with_columns(located))]
    bad = _unread_values(events, people, groups, touched, own)
    if bad is not None:   # some row group has a value on a row not read: find it among this run's rows
        at = pl.any_horizontal(pl.col("_row").is_between(g[0], g[0] + g[1] - 1) for g in bad) if bad else pl.lit(True)
        rest = scan.filter(run & at).select("tournament", "start_no", FIRST, *own["tournaments"], *own["players"],
                                            "_row").with_columns(located).collect()
        found.append(_strays(rest, own))
    check.raise_problems(pl.concat(found))

    def table(name: str, df: pl.DataFrame) -> pl.DataFrame:
        """The model table of its flat columns in ``df`` (renamed: a select would copy the games' chunks)."""
        wanted = [*names[name].values(), "_row"]
        return cast_flat(df if df.columns == wanted else df.select(wanted), prefix).rename(
            {f: c for c, f in names[name].items()})

    first = events.filter(run & (marked == 2))
    tables = {"tournaments": table("tournaments", first.with_columns(_decoded(first, c, prefix) for c in TEXT_LISTS
                                                                      if c in first.columns)),
              "players": table("players", _players(people, lo, hi)),
              "games": table("games", games),
              "warnings": table("warnings", loose)}
    batch = {t: check_schema(t, df, where=where) for t, df in tables.items()}
    if not (proof.vouched_flat(file) or check.proven_clean(batch)):
        check.raise_problems(check.check_model({t: df.with_columns(located) for t, df in tables.items()}, FLAT_RENAMES))
    return Batch(batch["tournaments"], batch["players"], batch["games"], batch["warnings"])


def _scan(file: str, fmt: Format) -> pl.LazyFrame:
    """The file's rows, numbered (``_row``), as one lazy scan while the file is unchanged: polars keeps in a scan
    the footer and schema it has read, so the runs of a file share them. A new scan for each run read the footer
    again at each of its collects: on the 100k mix's flat file (740 row groups, a footer of 4.8 MB) a third of a
    run's time, and more with every row group the file grows by."""
    stat = os.stat(file)
    return _file_scan(file, fmt, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=4)
def _file_scan(file: str, fmt: Format, mtime: int, size: int) -> pl.LazyFrame:
    return (pl.scan_parquet(file, hive_partitioning=False, row_index_name="_row") if fmt == "parquet"
            else pl.scan_ipc(file, hive_partitioning=False, row_index_name="_row"))


def _run_rows(scan: pl.LazyFrame, index: flat_checks.IdRows, lo: int, hi: int, warnings: bool) -> pl.LazyFrame:
    """The rows of the tournaments ``lo``..``hi`` of a flat file in tournament order (and its rows of no tournament,
    with ``warnings``), read at once by slices, which decode only the record batches of an Arrow file that hold
    them (a filter decodes the whole file, and a run of a sparse file is filtered four times)."""
    ids, first, end, loose = index
    a, b = int(np.searchsorted(ids, lo, "left")), int(np.searchsorted(ids, hi, "right"))
    ranges = [(int(first[a]), int(end[b - 1]))] if b > a else []
    parts = [scan.slice(r0, r1 - r0).filter(_TID.is_not_null()) for r0, r1 in ranges]
    parts += [scan.slice(r0, r1 - r0) for r0, r1 in (loose if warnings else [])]
    return (pl.concat(parts) if parts else scan.head(0)).collect().lazy()


def _players(people: pl.DataFrame, lo: int, hi: int) -> pl.DataFrame:
    """The marked rows of players of the tournaments ``lo``..``hi`` (a slice when they are in id order, as
    ``ingest`` writes them: a filter would copy every column)."""
    ids = people["tournament"]
    if ids.is_sorted():
        a, b = int(ids.search_sorted(lo, "left")), int(ids.search_sorted(hi, "right"))
        people = people.slice(a, b - a)
    else:
        people = people.filter(_TID.is_between(lo, hi))
    return people.filter(_NO.is_not_null()) if people["start_no"].null_count() else people


def _decoded(df: pl.DataFrame, column: str, prefix: str) -> pl.Series:
    """A list column of a sparse file (JSON arrays of strings) decoded; one that is not raises, naming it."""
    text = df[column]
    try:
        value = text.str.json_decode(pl.List(pl.String))
    except pl.exceptions.PolarsError:
        value = None
    if value is None or (text.is_not_null() & value.is_null()).any():
        bad = next(k for k, v in enumerate(text.to_list()) if v is not None and not _is_array(v))
        raise SchemaError(f"{prefix}column '{column}' row {df['_row'][bad] + 1}: {text[bad]!r} is not a JSON array "
                          "of strings")
    return value


def _is_array(text: str) -> bool:
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _ids(group: flat_checks.Group) -> tuple[int, int]:
    """The smallest and largest tournament id of a row group that has some."""
    assert group[2] is not None and group[3] is not None
    return group[2], group[3]


def _unmarked(bare: pl.DataFrame) -> pl.DataFrame:
    """Rows without a round (a player without games, an event without players: the only row of either) whose
    :data:`FIRST` marker is empty. (A marker missing on another row leaves a player or tournament out, which
    the model's checker reports by the rows that name it; a value on an unmarked row is a stray.)"""
    checks: list[Check] = [(pl.col(FIRST).is_null(), FIRST, pl.format(
        "marker is empty on the only row of {} (2 marks a tournament's first row, 1 a player's)",
        pl.when(_NO.is_null()).then(pl.format("tournament {}", _TID)).otherwise(
            pl.format("player {} of tournament {}", _NO, _TID))))]
    found = check._problems(bare, checks, {})
    return pl.concat(found) if found else pl.DataFrame(schema=LEDGER_SCHEMA)


def _empty(groups: list[flat_checks.Group] | None, touched: list[flat_checks.Group], columns: list[str]) -> set[str]:
    """The columns without a value in any row group the run touches (by the statistics: none without them)."""
    if not groups or not touched:
        return set()
    return {c for k, c in enumerate(columns) if not any(g[4][k] for g in touched)}


def _with_nulls(df: pl.DataFrame, columns: list[str], schema: pl.Schema) -> pl.DataFrame:
    """``df`` with the ``columns`` it lacks (left unread: empty) as nulls of the file's types."""
    return df.with_columns(pl.lit(None, schema[c]).alias(c) for c in columns if c not in df.columns)


def _strays(df: pl.DataFrame, own: dict[str, list[str]]) -> pl.DataFrame:
    """Rows of ``df`` with a value in a tournament column though not their tournament's first row, or in a
    player column though not their player's first row."""
    marked = pl.col(FIRST)
    checks: list[Check] = [
        (marked.ne_missing(2) & pl.col(c).is_not_null(), c,
         pl.format("{} is set on a row of tournament {} that is not its first (a sparse flat file sets it there "
                   "only)", pl.lit(c), _TID)) for c in own["tournaments"]]
    checks += [
        (marked.is_null() & _NO.is_not_null() & pl.col(c).is_not_null(), c,
         pl.format("{} is set on a row of player {} of tournament {} that is not his first (a sparse flat file "
                   "sets it there only)", pl.lit(c), _NO, _TID)) for c in own["players"]]
    found = check._problems(df, checks, {})
    return pl.concat(found) if found else pl.DataFrame(schema=LEDGER_SCHEMA)


def _unread_values(events: pl.DataFrame, people: pl.DataFrame, groups: list[flat_checks.Group] | None,
                   touched: list[flat_checks.Group], own: dict[str, list[str]]) -> list[flat_checks.Group] | None:
    """The row groups the run touches whose statistics count more values in a sparse column than the rows read
    hold (``events``: the tournaments' first rows and those without a tournament; ``people``: the marked rows;
    both in file order); None when there is none, an empty list (all rows) when the file has no usable
    statistics. The rows read are some of each group's, so their values are at most its count: the sums over the
    touched groups are compared first, and group by group only when they differ."""
    if groups is None:
        return []
    if not touched:
        return None

    def values(lo: int, hi: int) -> tuple[int, ...]:
        """The values of the sparse columns in the rows read that lie in the file's rows ``lo:hi``."""
        out: list[int] = []
        for df, columns in ((events, own["tournaments"]), (people, own["players"])):
            a, b = np.searchsorted(df["_row"].to_numpy(), [lo, hi])
            part = df.slice(int(a), int(b - a)).select(columns)
            out += [part.height - k for k in part.null_count().row(0)]
        return tuple(out)

    total = tuple(int(sum(column)) for column in zip(*(g[4] for g in touched), strict=True))
    if values(touched[0][0], touched[-1][0] + touched[-1][1]) == total:
        return None
    return [g for g in touched if values(g[0], g[0] + g[1]) != g[4]] or None
