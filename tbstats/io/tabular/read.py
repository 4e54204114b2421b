"""Reading the columnar model: directory datasets, part files, flat files (CSV parsed into the schema)."""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterator
from pathlib import Path

import polars as pl

from tbstats.errors import FormatError, SchemaError
from tbstats.io import check
from tbstats.io import flat as flat_checks
from tbstats.io.tabular import sparse
from tbstats.io.tabular.layout import (
    _RENAMES_FLAT,
    ANY_ID,
    EXTENSIONS,
    FLAT_COLUMNS,
    FLAT_OPTIONAL,
    FLAT_RENAMES,
    TABLES,
    Format,
    _parts,
    _table_source,
    cast_flat,
    check_flat_schema,
    flat_names,
    model_format,
)
from tbstats.model.batch import Batch
from tbstats.model.games import OPTIONAL, SCHEMAS, check_schema, empty, stack

# ----------------------------------------------------------------------------------------------- reading

def read_model(path: str | Path) -> Batch:
    """Read a batch from a directory dataset or a single flat file (Parquet, Arrow IPC or CSV).

    Raises :class:`SchemaError` when a table lacks a column or has one of the wrong type.
    """
    p = Path(path)
    if p.is_dir():
        return _read_dir(p)
    fmt = model_format(p)
    if fmt is None:
        raise SchemaError(f"{p}: not a tbstats model file (expected a directory or one of "
                          f"{', '.join(EXTENSIONS)})")
    if sparse.is_sparse(str(p), fmt):
        return sparse.split_sparse(str(p), fmt, *ANY_ID, True, str(p))
    return split_flat(_read_file(p, fmt, _flat_types()), where=str(p))


def iter_model(path: str | Path) -> Iterator[Batch]:
    """Read a model part by part when every table is a part directory with the same parts, else whole."""
    p = Path(path)
    sources = {t: _table_source(p, t) for t in TABLES} if p.is_dir() else {}
    dirs = [s for s in sources.values() if s is not None]
    names = [[q.name for q in _parts(s)] if s.is_dir() else None for s in dirs]
    if len(dirs) >= 3 and all(n is not None and n == names[0] for n in names):
        for part in names[0] or []:
            tables = {t: _read_table(s / part, t) if s is not None else empty(t)
                      for t, s in sources.items()}
            check.raise_problems(check.check_model(tables))
            yield Batch(tables["tournaments"], tables["players"], tables["games"], tables["warnings"])
    else:
        yield read_model(p)


def _read_dir(directory: Path) -> Batch:
    """A directory dataset, checked: proven clean without the rows' location when it can be, else located and
    checked row by row (see :func:`tbstats.io.check.proven_clean`)."""
    frames: dict[str, list[tuple[str, pl.DataFrame]]] = {}
    for table in TABLES:
        src = _table_source(directory, table)
        if src is None:
            if table == "warnings":
                frames[table] = []
                continue
            raise SchemaError(f"{directory}: no {table} table (expected {table}.parquet, {table}.arrow, "
                              f"{table}.csv or a {table}/ directory of part files)")
        # optional columns may be in some part files only
        frames[table] = [(str(q), _read_schema(q, table)) for q in (_parts(src) if src.is_dir() else [src])]
    tables = {t: stack([f for _, f in found]) if found else empty(t) for t, found in frames.items()}
    if not check.proven_clean(tables):
        check.raise_problems(check.check_model({t: stack([check.locate(f, path) for path, f in found]) if found
                                                else empty(t) for t, found in frames.items()}))
    return Batch(tables["tournaments"], tables["players"], tables["games"], tables["warnings"])


def _read_table(path: Path, table: str) -> pl.DataFrame:
    """One table file, checked against the schema, with the rows' location (see :mod:`tbstats.io.check`)."""
    return check.locate(_read_schema(path, table), str(path))


def _read_schema(path: Path, table: str) -> pl.DataFrame:
    """One table file, checked against the schema."""
    fmt = model_format(path)
    assert fmt is not None
    return check_schema(table, _read_file(path, fmt, {**SCHEMAS[table], **OPTIONAL[table]}), where=str(path))


def _read_file(path: Path, fmt: Format, types: dict[str, pl.DataType]) -> pl.DataFrame:
    """Read one file; CSV cells are parsed into ``types`` (unknown columns stay strings)."""
    try:
        if fmt == "parquet":
            return pl.read_parquet(path)
        if fmt == "arrow":
            return pl.read_ipc(path)
        raw = pl.read_csv(path, infer_schema=False)
    except (pl.exceptions.PolarsError, OSError) as exc:
        if fmt == "csv":
            long_row(path, exc)
        raise SchemaError(f"{path}: not a readable {fmt} file ({_first_line(exc)})") from None
    _check_last_row(path, raw.height, raw.columns)
    return _parse_csv(raw, types, str(path))


def _check_last_row(path: Path, height: int, columns: list[str]) -> None:
    """A CSV file (of ``height`` data rows under the header ``columns``) whose last row has fewer fields than
    the header was cut mid-row: raise FormatError."""
    if not height:
        return
    with path.open("rb") as f:
        f.seek(max(0, f.seek(0, os.SEEK_END) - 65536))
        tail = f.read().decode("utf-8", errors="replace")
    lines = [line for line in tail.splitlines() if line.strip()]
    if not lines:
        return
    fields = next(csv.reader([lines[-1]]), [])
    if len(fields) < len(columns):
        raise FormatError(str(path), height + 1, columns[len(fields) - 1] if fields else None,
                          f"the file ends inside a row ({len(fields)} of {len(columns)} fields): it was cut short")


def long_row(path: Path, exc: BaseException) -> None:
    """Where the CSV reader failed on a row with more fields than the header (``exc``: its error), raise
    FormatError naming that row's line; else return."""
    if not isinstance(exc, pl.exceptions.ComputeError) or "more fields" not in str(exc):
        return
    from tbstats.io.csvrows import first_long_row

    try:
        columns = len(pl.read_csv(path, infer_schema=False, n_rows=0).columns)
        found = first_long_row(str(path), columns)
    except (pl.exceptions.PolarsError, OSError):
        return
    if found is not None:
        row, fields = found
        raise FormatError(str(path), row + 1, None, f"a row of {fields} fields, where the header has {columns} (a "
                                                   "separator too many, or a quote not closed)")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _flat_types() -> dict[str, pl.DataType]:
    return {**{flat: SCHEMAS[table][col] for flat, (table, col) in FLAT_COLUMNS.items()},
            **{flat: OPTIONAL[table][col] for flat, (table, col) in FLAT_OPTIONAL.items()}}


def _parse_csv(raw: pl.DataFrame, types: dict[str, pl.DataType], where: str) -> pl.DataFrame:
    """Parse the string cells of a CSV table into the model's types; the first bad cell raises.

    A ``_row`` column (a run of a file: each row's data row in the file) gives the line a bad cell is on; it is
    kept as it is."""
    rows = raw["_row"] if "_row" in raw.columns else pl.int_range(raw.height, eager=True)
    out = []
    for name in raw.columns:
        text = raw[name]
        dtype = types.get(name)
        if dtype is None or dtype == pl.String():
            out.append(text)
            continue
        value = _parse_column(text, dtype)
        if value is None:
            bad = None
        else:
            failed = (text.is_not_null() & value.is_null()).arg_true()
            bad = int(failed[0]) if failed.len() else None
        if value is None or bad is not None:
            bad = bad if bad is not None else _first_bad_json(text)
            raise SchemaError(f"{where}: column '{name}' line {rows[bad] + 2}: {text[bad]!r} is not a "
                              f"{_kind(dtype)}")
        out.append(value)
    return pl.DataFrame(out)


def _parse_column(text: pl.Series, dtype: pl.DataType) -> pl.Series | None:
    """Parsed values (null where a cell does not parse), or None when the column as a whole does not."""
    if dtype.is_integer():
        return text.str.strip_chars().cast(dtype, strict=False)
    if dtype == pl.Date():
        return text.str.to_date("%Y-%m-%d", strict=False)
    if dtype == pl.Boolean():
        return text.str.to_lowercase().replace_strict({"true": True, "false": False}, default=None,
                                                      return_dtype=pl.Boolean)
    if isinstance(dtype, pl.Enum):
        return text.cast(dtype, strict=False)
    if isinstance(dtype, pl.List):
        try:
            return text.str.json_decode(dtype)
        except pl.exceptions.PolarsError:
            return None
    return text.cast(dtype, strict=False)


def _first_bad_json(text: pl.Series) -> int:
    for i, cell in enumerate(text.to_list()):
        if cell is None:
            continue
        try:
            value = json.loads(cell)
        except ValueError:
            return i
        if value is not None and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            return i
    return 0


def _kind(dtype: pl.DataType) -> str:
    if dtype.is_integer():
        return "whole number"
    if isinstance(dtype, pl.Enum):
        return f"value of {', '.join(dtype.categories.to_list())}"
    if isinstance(dtype, pl.List):
        return "JSON array of strings"
    return {pl.Date(): "date (YYYY-MM-DD)", pl.Boolean(): "boolean (true or false)"}.get(dtype, str(dtype))


def split_flat(flat: pl.DataFrame | pl.LazyFrame, *, where: str = "") -> Batch:
    """Split a flat table (one row per player and round) back into a :class:`Batch`.

    A lazy scan is split table by table, each reading only its own columns (so a run of a large flat file
    costs about what its three tables do); each table's rows are checked once read (:mod:`tbstats.io.check`,
    with the hidden ``_file``/``_row`` columns when the scan has them, else rows counted from 0 in ``where``).
    Raises :class:`SchemaError` naming the flat column when one is missing or of the wrong type, and
    :class:`tbstats.io.check.ModelCheckError` listing the rows that break the model.
    """
    prefix = f"{where}: " if where else ""
    lazy = flat.lazy()
    schema = lazy.collect_schema()
    check_flat_schema(schema, prefix)
    if "_file" not in schema:
        lazy = check.locate(lazy, where)

    def read(table: str, *extra: str) -> pl.DataFrame:
        """The flat columns of a table (and ``extra``) on every row, read now and cast to the model's types."""
        return cast_flat(lazy.select(list(dict.fromkeys(
            [*flat_names(table, schema).values(), *extra, "_file", "_row"]))).collect(), prefix)

    def columns(table: str) -> list[pl.Expr]:
        return [pl.col(f).alias(c) for c, f in flat_names(table, schema).items()] + [pl.col("_file"), pl.col("_row")]

    tid = pl.col("tournament")
    found = [flat_checks.check_orphans(lazy.select("tournament", "start_no", "round", "_file", "_row").collect())]
    rows = read("tournaments")
    found.append(flat_checks.check_repeats(rows, ("tournament",), tuple(
        c for c in _RENAMES_FLAT["tournaments"] if c not in ("tournament", "records"))))
    rows = rows.filter(tid.is_not_null())
    records = rows.group_by("tournament", maintain_order=True).agg(pl.col("records").drop_nulls().first())
    tournaments = rows.unique("tournament", keep="first", maintain_order=True).drop("records").join(
        records, on="tournament", how="left", maintain_order="left").select(columns("tournaments"))
    rows = read("players")
    found.append(flat_checks.check_repeats(rows, ("tournament", "start_no"), tuple(
        c for c in _RENAMES_FLAT["players"] if c != "start_no")))
    players = rows.filter(tid.is_not_null() & pl.col("start_no").is_not_null()).unique(
        ["tournament", "start_no"], keep="first", maintain_order=True).select(columns("players"))
    del rows
    games = read("games", "tournament").filter(tid.is_not_null() & pl.col("round").is_not_null()).select(
        columns("games"))
    warnings = read("warnings", "tournament").filter(tid.is_null()).select(columns("warnings"))
    check.raise_problems(pl.concat(found))
    tables = dict(zip(TABLES, (tournaments, players, games, warnings), strict=True))
    check.raise_problems(check.check_model(tables, FLAT_RENAMES))
    return Batch(*(check_schema(t, df, where=where) for t, df in tables.items()))
