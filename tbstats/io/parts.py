"""Columnar models read lazily, as parts of whole tournaments (:class:`TablePart`) that each read on their own.

A model (a directory dataset, with tables as single files or as directories of part files, hive-partitioned
ones such as ``games/year=2024/part-0.parquet`` included; or one flat file) is planned without reading its
data: only the ``tournament`` column is scanned to list the tournament ids, which, sorted, are cut into
parts (a stream asks for parts of :func:`~tbstats.io.batches.unit_size` tournaments: whole batches, at least
:data:`~tbstats.io.batches.UNIT_TOURNAMENTS`, cut into batches once read by :func:`~tbstats.io.batches.runs`).
In each Parquet/Arrow file whose rows are in tournament order (``ingest`` writes them so, in row groups of whole
tournaments) the plan finds the rows each part covers, and a part reads that slice, from the row groups that
hold it (a Parquet file whose statistics put all its ids in one part is that part's whole slice, its ids not
read: a part file per batch, as ingest writes); another file is read through the filter
``lo <= tournament <= hi``, which skips the row groups whose statistics lie outside it. A part holds paths,
bounds and row numbers only: it travels to a worker process, which reads its own data.

CSV models have no row groups: the plan scans each file's ``tournament`` column (as text) once and, when
every table is in tournament order (a flat file may have rows without a tournament: its warnings), gives each
part the data rows it covers in each file, and their bytes in a file that several parts read; a part then
parses only those rows (:mod:`tbstats.io.csvruns`). Other CSV models are read whole, then cut into runs in
memory.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np
import polars as pl

from tbstats.errors import SchemaError
from tbstats.io import check, csvruns, flat, tabular
from tbstats.io.tabular import TABLES, Format, proof
from tbstats.model.batch import Batch
from tbstats.model.games import OPTIONAL, SCHEMAS, check_schema, empty, stack


@dataclass(frozen=True)
class TablePart:
    """A run of whole tournaments of one model: where to read it, never its data.

    ``files`` holds, per table (``flat`` for a single-file model), the files to scan and the directory
    hive partitions are relative to; ``lo``..``hi`` are the tournament ids of the run (inclusive);
    ``warnings`` tells whether this run carries the model's warnings (the first run does).
    """

    name: str
    format: Format
    files: tuple[tuple[str, str, tuple[str, ...]], ...]   # (table, base directory, files)
    lo: int
    hi: int
    tournaments: int
    warnings: bool
    rows: tuple[tuple[str, tuple[tuple[int, int], ...]], ...] = ()   # per file (CSV: each; else those in
    #                                                                  tournament order), its rows [r0, r1)
    spans: tuple[tuple[str, int, tuple[tuple[int, int], ...]], ...] = ()   # CSV files read by several parts: the
    #                                                  header's end and, for each of ``rows``, its bytes [b0, b1)


def _files(source: Path) -> tuple[str, tuple[str, ...]]:
    """The base directory and files of a table: one file, or every model file below a part directory."""
    if source.is_file():
        return str(source.parent), (str(source),)
    found = sorted(str(p) for p in source.rglob("*") if p.is_file() and p.suffix.lower() in tabular.EXTENSIONS
                   and not any(part.startswith(".") for part in p.relative_to(source).parts))
    return str(source), tuple(found)


def _layout(path: Path) -> tuple[Format, tuple[tuple[str, str, tuple[str, ...]], ...]]:
    """The format and table files of a model, checked for one format throughout."""
    if path.is_dir():
        tables = []
        for table in TABLES:
            source = tabular._table_source(path, table)
            if source is None:
                if table == "warnings":
                    continue
                raise SchemaError(f"{path}: no {table} table (expected {table}.parquet, {table}.arrow, "
                                  f"{table}.csv or a {table}/ directory of part files)")
            base, files = _files(source)
            tables.append((table, base, files))
    else:
        tables = [("flat", str(path.parent), (str(path),))]
    formats = {tabular.model_format(f) for _, _, files in tables for f in files}
    if len(formats) > 1:
        raise SchemaError(f"{path}: tables in more than one format ({', '.join(sorted(map(str, formats)))})")
    fmt = formats.pop() if formats else "parquet"
    assert fmt is not None
    return fmt, tuple(tables)


def _scan(files: tuple[str, ...], fmt: Format) -> pl.LazyFrame:
    """A lazy scan of a table's files (hive directories are walked; their keys are expected in the files too).

    Files may differ in their optional columns (:data:`tbstats.model.games.OPTIONAL`): missing ones read as null.
    """
    if len(files) > 1:
        return pl.concat([_scan((f,), fmt) for f in files], how="diagonal_relaxed")
    if fmt == "parquet":
        return pl.scan_parquet(list(files), hive_partitioning=False)
    return pl.scan_ipc(list(files), hive_partitioning=False)


def _tournament_ids(files: tuple[str, ...], fmt: Format, where: str, *, streaming: bool) -> np.ndarray:
    """The distinct tournament ids of a table: only that column is scanned; by the streaming engine for a table
    of games (a flat file), where the column alone may be large; a tournaments table is not (and the streaming
    engine's start, about 20 ms, is more than its read)."""
    try:
        scan = _scan(files, fmt)
        dtype = scan.collect_schema().get("tournament")
        if dtype is None:
            raise SchemaError(f"{where}: no column 'tournament'")
        if not dtype.is_integer():
            raise SchemaError(f"{where}: column 'tournament' has type {dtype} (expected Int64)")
        ids = scan.select(pl.col("tournament").drop_nulls().unique()).collect(
            engine="streaming" if streaming else "in-memory")
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise SchemaError(f"{where}: not a readable {fmt} file ({tabular._first_line(exc)})") from None
    return np.sort(ids["tournament"].to_numpy())


def plan_model(path: str, name: str, batch_size: int) -> list[TablePart] | None:
    """Parts of ``batch_size`` tournaments of a model (:func:`~tbstats.io.batches.unit_size` of a stream's batch
    size), or None when it is read whole (CSV).

    Each Parquet/Arrow file whose rows are in tournament order gives each part the rows it covers (one
    slice, read from the row groups holding it); other files are read with a filter on the part's ids.
    Raises :class:`SchemaError` when the model cannot be listed (unreadable file, no tournament column).
    """
    p = Path(path)
    fmt, tables = _layout(p)
    if fmt == "csv":
        return _plan_csv(name, tables, batch_size)
    lead = next(t for t in tables if t[0] in ("tournaments", "flat"))
    ids = _tournament_ids(lead[2], fmt, name, streaming=lead[0] == "flat")
    if not len(ids):
        return [TablePart(name, fmt, tables, tabular.ANY_ID[0], tabular.ANY_ID[1], 0, True)]
    # each file's id range and, where its statistics count no null id, its rows: one footer read per file (they
    # are cached a few at a time)
    facts = {f: (_bounds(f, fmt), flat.rows_with_ids(f, fmt)) for table, _, files in tables if table != "warnings"
             for f in files}
    bounds = {f: b for f, (b, _) in facts.items()}
    firsts = [int(ids[k]) for k in range(0, len(ids), batch_size)]
    # the parts tile every id, so that a row whose tournament the tournaments table lacks is read with
    # some part and reported by the model's checker, never skipped
    los, his = np.array([tabular.ANY_ID[0], *firsts[1:]]), np.array([f - 1 for f in firsts[1:]] + [tabular.ANY_ID[1]])
    index = {}   # file -> the first and end row of each part in it, when its rows are in tournament order
    for table, _, files in tables:
        for f in files if table not in ("warnings", "flat") else ():
            whole = _whole_file(*facts[f], los, his)
            if whole is not None:   # (as ingest writes a model: a part file per batch, none cut)
                index[f] = whole
            elif (at := _sorted_ids(f, fmt)) is not None:
                index[f] = (np.searchsorted(at, los, "left"), np.searchsorted(at, his, "right"))
    out = []
    for k, lo, hi in zip(range(len(firsts)), los.tolist(), his.tolist(), strict=True):
        chosen = tuple((table, base, files if table == "warnings" else tuple(
            f for f in files if bounds[f] is None or (bounds[f][0] <= hi and bounds[f][1] >= lo)))  # type: ignore[index]
            for table, base, files in tables)
        rows = tuple((f, ((int(index[f][0][k]), int(index[f][1][k])),))
                     for _, _, files in chosen for f in files if f in index)
        out.append(TablePart(name, fmt, chosen, lo, hi, min(batch_size, len(ids) - k * batch_size), k == 0, rows))
    return out


def _whole_file(bounds: tuple[int, int] | None, rows: int | None, los: np.ndarray, his: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray] | None:
    """The rows of each part in a Parquet file whose tournament ids all lie in one part (``bounds``, from its row
    groups' statistics; ``rows``, known when they count no null id): the whole file in that part, none in the
    others. Its rows need not be read to be found; None when the statistics do not tell (:func:`_sorted_ids`
    then reads the column)."""
    if bounds is None or rows is None:
        return None
    k = int(np.searchsorted(his, bounds[0], "left"))   # the part holding the smallest id
    if k >= len(los) or not los[k] <= bounds[1] <= his[k]:
        return None
    first, end = np.zeros(len(los), dtype=np.int64), np.zeros(len(los), dtype=np.int64)
    end[k] = rows
    return first, end


def _sorted_ids(file: str, fmt: Format) -> np.ndarray | None:
    """A file's tournament column when it has no nulls and is in order (None otherwise, or unreadable)."""
    try:
        ids = _scan((file,), fmt).select("tournament").collect()["tournament"]
    except (pl.exceptions.PolarsError, OSError):
        return None
    if ids.null_count() or not ids.dtype.is_integer():
        return None
    values = ids.to_numpy()
    return values if len(values) < 2 or (values[1:] >= values[:-1]).all() else None


def _plan_csv(name: str, tables: tuple[tuple[str, str, tuple[str, ...]], ...], batch_size: int
              ) -> list[TablePart] | None:
    """Runs of a CSV model with each file's data rows, or None when it is to be read whole: a file that
    cannot be scanned, a table out of tournament order, a tournament cell that is not a whole number (or
    empty, except in a flat file), an id used twice by the tournaments table or missing from it (the whole
    read reports these as it always has)."""
    ids_of: dict[str, np.ndarray] = {}    # file -> the ids of its rows that have one, in file order
    at_of: dict[str, np.ndarray] = {}     # file -> the data rows those ids are on
    loose: dict[str, np.ndarray] = {}     # file -> its rows without a tournament (a flat file's warnings)
    try:
        for table, _, files in tables:
            for file in files if table != "warnings" else ():
                text, ids = csvruns.csv_ids(file)
                if (text.is_not_null() & ids.is_null()).any() or (table != "flat" and ids.null_count()):
                    return None
                values = ids.drop_nulls().to_numpy()
                if len(values) > 1 and (np.diff(values) < (1 if table == "tournaments" else 0)).any():
                    return None
                ids_of[file], at_of[file] = values, ids.is_not_null().arg_true().to_numpy()
                loose[file] = ids.is_null().arg_true().to_numpy()
    except (pl.exceptions.PolarsError, OSError):
        return None
    lead = next(t for t in tables if t[0] in ("tournaments", "flat"))
    known = np.unique(np.concatenate([ids_of[f] for f in lead[2]])) if lead[2] else np.zeros(0, dtype=np.int64)
    if lead[0] == "tournaments" and len(known) != sum(len(ids_of[f]) for f in lead[2]):
        return None
    if not all(np.isin(values, known).all() for values in ids_of.values()):
        return None
    runs = []
    for k in range(0, max(len(known), 1), batch_size):
        lo, hi = (int(known[k]), int(known[min(k + batch_size, len(known)) - 1])) if len(known) else (0, -1)
        rows = []
        for file, values in ids_of.items():
            a, b = int(np.searchsorted(values, lo, "left")), int(np.searchsorted(values, hi, "right"))
            ranges = [(int(at_of[file][a]), int(at_of[file][b - 1]) + 1)] if b > a else []
            if k == 0:   # the rows without a tournament (a flat file's warnings) go with the first run
                ranges = csvruns.merged(ranges + [(int(r), int(r) + 1) for r in loose[file]])
            rows.append((file, tuple(ranges)))
        runs.append((lo, hi, min(batch_size, len(known) - k), k == 0, tuple(rows)))
    starts = csvruns.row_starts([rows for *_, rows in runs])
    return [TablePart(name, "csv", tables, lo, hi, n, first, rows, tuple(
        (f, starts[f][0], tuple((starts[f][1][r0], starts[f][1][r1]) for r0, r1 in ranges))
        for f, ranges in rows if f in starts)) for lo, hi, n, first, rows in runs]


def sliced(run: TablePart) -> bool:
    """Whether every file of the run (but the warnings) is read by the rows the plan found in it."""
    rows = dict(run.rows)
    return all(f in rows for table, _, files in run.files if table != "warnings" for f in files)




def _checked(table: str, frame: pl.DataFrame, where: str) -> pl.DataFrame:
    """A located table checked against the model's schema, its hidden location columns kept."""
    return check_schema(table, frame, where=where).with_columns(frame["_file"], frame["_row"])


def _read_csv_part(part: TablePart) -> Batch:
    """Read one run of a CSV model (see :func:`_plan_csv`)."""
    rows = dict(part.rows)
    spans = {file: (header, byte_spans) for file, header, byte_spans in part.spans}
    tables: dict[str, pl.DataFrame] = {}
    for table, base, files in part.files:
        if table == "flat":
            return tabular.split_flat(csvruns.read_rows(files[0], rows[files[0]], tabular.read._flat_types(),
                                                        files[0], drop_loose=not part.warnings,
                                                        spans=spans.get(files[0]), ids=(part.lo, part.hi)),
                                      where=files[0])
        types = {**SCHEMAS[table], **OPTIONAL[table]}
        if table == "warnings":
            frames = [tabular.read._read_table(Path(f), table) for f in files] if part.warnings else []
        else:
            frames = [csvruns.read_rows(f, rows[f], types, f, drop_loose=False, spans=spans.get(f),
                                        ids=(part.lo, part.hi)) for f in files]
        where = files[0] if len(files) == 1 else base
        frame = stack(frames) if frames else check.locate(empty(table), where)
        tables[table] = _checked(table, frame, where)
    check.raise_problems(check.check_model(tables))
    return Batch(tables["tournaments"], tables["players"], tables["games"], tables.get("warnings", empty("warnings")))


def _bounds(path: str, fmt: Format) -> tuple[int, int] | None:
    """The smallest and largest tournament id of a Parquet file from its row-group statistics, if known."""
    groups = flat.group_ids(path, fmt)
    if groups is None or any(g is None for g in groups):
        return None
    found = [g for g in groups if g is not None]
    return (min(g[0] for g in found), max(g[1] for g in found)) if found else (0, -1)


def read_part(part: TablePart) -> Batch:
    """Read one part of whole tournaments; the model's ids are kept (the caller renumbers).

    Raises :class:`SchemaError` naming the file and column when a table does not fit the model.
    """
    if part.format == "csv":
        return _read_csv_part(part)
    run = pl.col("tournament").is_between(part.lo, part.hi)
    rows = dict(part.rows)
    # every file sliced: the tables are read without the rows' location, which is added only when neither the
    # proofs the writer recorded (tbstats.io.tabular.proof) nor the checker's proof (check.proven_clean) hold
    plain = sliced(part)
    tables: dict[str, pl.DataFrame] = {}
    pieces: dict[str, list[tuple[str, int, pl.DataFrame]]] = {}
    for table, base, files in part.files:
        where = files[0] if len(files) == 1 else base
        try:
            if table == "flat":
                return _split_flat_run(part, files[0], where)
            if table == "warnings" and not part.warnings:
                frames = [_located(files[0], part.format).head(0).collect()] if files else []
            elif table == "warnings":
                frames = [_located(f, part.format).collect() for f in files]
            elif plain:
                pieces[table] = [(f, r0, _slice(table, f, part.format, r0, r1)) for f in files
                                 for r0, r1 in rows[f] if r1 > r0]
                found = [frame for _, _, frame in pieces[table]]
                tables[table] = check_schema(table, stack(found), where=where) if found else empty(table)
                continue
            else:   # file by file: part files may differ in optional columns
                frames = [frame for f in files for frame in _rows_of(f, part.format, rows.get(f), run)]
            frame = stack(frames) if frames else check.locate(empty(table), where)
        except (pl.exceptions.PolarsError, OSError) as exc:
            raise SchemaError(f"{where}: not a readable {part.format} file ({tabular._first_line(exc)})") from None
        tables[table] = _checked(table, frame, where)
    if not plain:
        check.raise_problems(check.check_model(tables))
    elif not (proof.vouched(f for piece in pieces.values() for f, _, _ in piece) or check.proven_clean(tables)):
        located = {}
        for table, base, files in part.files:
            if table in pieces:
                where = files[0] if len(files) == 1 else base
                frame = stack([check.locate(x, f, r0) for f, r0, x in pieces[table]]) if pieces[table] else (
                    check.locate(empty(table), where))
                located[table] = _checked(table, frame, where)
        check.raise_problems(check.check_model(located))
    return Batch(tables["tournaments"], tables["players"], tables["games"], tables.get("warnings", empty("warnings")))


def _slice(table: str, file: str, fmt: Format, r0: int, r1: int) -> pl.DataFrame:
    """Rows ``r0:r1`` of one file of a table, in the model's types; a failure names the file (``exc.file``),
    so that a run can be read again without it (:mod:`tbstats.io.recover`)."""
    with _naming(file, fmt):
        return check_schema(table, _scan((file,), fmt).slice(r0, r1 - r0).collect(), where=file)


@contextlib.contextmanager
def _naming(file: str, fmt: Format) -> Iterator[None]:
    """A failure to read one file of a table raised as a :class:`SchemaError` whose ``file`` is that file."""
    try:
        yield
    except SchemaError as exc:
        exc.file = file
        raise
    except (pl.exceptions.PolarsError, OSError) as exc:
        error = SchemaError(f"{file}: not a readable {fmt} file ({tabular._first_line(exc)})")
        error.file = file
        raise error from None


def _rows_of(file: str, fmt: Format, ranges: tuple[tuple[int, int], ...] | None, run: pl.Expr
             ) -> list[pl.DataFrame]:
    """A file's rows of a part: the row ranges the plan found (slices, read from the row groups holding
    them), or without them the rows that ``run`` keeps."""
    with _naming(file, fmt):
        if ranges is None:
            return [_located(file, fmt).filter(run).collect()]
        return [_located(file, fmt).slice(r0, r1 - r0).collect() for r0, r1 in ranges if r1 > r0]


#: A run of a flat file is split this many tournaments at a time (when its row groups cannot be read one by
#: one, :func:`_split_flat_run`): a flat row repeats its tournament's and its player's columns, so each table is
#: read for a few rows at once.
FLAT_TOURNAMENTS: Final = 250



def _split_flat_run(part: TablePart, file: str, where: str) -> Batch:
    """A run of a flat Parquet/Arrow file split into the model (lazily, table by table, each read checked once
    collected), a few tournaments at a time: the run's row groups one by one when their statistics show them
    to hold whole tournaments (each is then read once per table), else slices of whole tournaments when the
    file's rows are in tournament order (:func:`tbstats.io.flat.id_rows`: an Arrow file, whose record batches a
    slice decodes alone, where a filter decodes the whole file), else :data:`FLAT_TOURNAMENTS` at a time. The
    rows without a tournament (the warnings) go with the model's first run. A sparse file (``ingest``'s) is
    read at once, its repeated columns decoded for the first rows only (:func:`tbstats.io.tabular.split_sparse`)."""
    if tabular.is_sparse(file, part.format):
        return tabular.split_sparse(file, part.format, part.lo, part.hi, part.warnings, where)
    scan = _located(file, part.format)
    tid = pl.col("tournament")
    bounds = flat.group_bounds(file, part.format, part.lo, part.hi)
    index = flat.id_rows(file, part.format) if bounds is None else None
    if index is not None:   # (an Arrow file: no statistics, but its rows in tournament order): read by slices
        loose = index[3] if part.warnings else []   # (the rows of no tournament: with the first range)
        got = []
        for k, (r0, r1) in enumerate(flat.run_ranges(index, part.lo, part.hi) or [(0, 0)]):
            rows = [scan.slice(r0, r1 - r0).filter(tid.is_not_null()), *(
                scan.slice(a, b - a) for a, b in (loose if not k else ()))]
            got.append(tabular.split_flat(pl.concat(rows).collect(), where=where))
        return Batch.stacked(got)
    if bounds is None:
        run = tid.is_between(part.lo, part.hi)
        ids = scan.select(tid).filter(run).unique(maintain_order=True).collect()["tournament"]
        bounds = [(int(ids[k]), int(ids[min(k + FLAT_TOURNAMENTS, len(ids)) - 1]))
                  for k in range(0, len(ids), FLAT_TOURNAMENTS)]
    if len(bounds) <= 1:
        run = tid.is_between(part.lo, part.hi)
        return tabular.split_flat(scan.filter(run | tid.is_null() if part.warnings else run), where=where)
    got = []
    for k, (lo, hi) in enumerate(bounds):
        these = tid.is_between(lo, hi)
        got.append(tabular.split_flat(scan.filter(these | tid.is_null() if part.warnings and not k else these),
                                      where=where))
    return Batch.stacked(got)


def _located(file: str, fmt: Format) -> pl.LazyFrame:
    """A lazy scan of one file with each row's file and row in it (``_file``, ``_row``, counted from the file's
    start before any filter; see :mod:`tbstats.io.check`)."""
    scan = (pl.scan_parquet(file, hive_partitioning=False, row_index_name="_row") if fmt == "parquet"
            else pl.scan_ipc(file, hive_partitioning=False, row_index_name="_row"))
    return scan.with_columns(pl.lit(file, check.FILE).alias("_file"), pl.col("_row").cast(check.ROW))
