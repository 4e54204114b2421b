"""The columnar model to and from Parquet, Arrow IPC and CSV, as a directory of tables or one flat file.

**Directory dataset** (``DIR/``): one file per table, ``tournaments.<ext>``, ``players.<ext>``,
``games.<ext>`` and ``warnings.<ext>`` (optional on read), with the columns of
:data:`tbstats.games.SCHEMAS`. Any table may instead be a sub-directory of part files
(``games/part-00000.parquet``, ...), read in name order: :class:`ArchiveWriter` writes every table that way,
one part per appended batch, so that an archive larger than memory can be written batch by batch and read
back part by part (:func:`iter_model`).

**Single file** (``archive.parquet``, ``.arrow``/``.ipc``/``.feather``, ``.csv``): one flat, denormalised
table with one row per player and round, built from the three tables (:data:`FLAT_COLUMNS`, in that order):

- tournament columns, renamed where they would collide: ``name`` -> ``event_name``,
  ``federation`` -> ``event_federation``; the others keep their names (``tournament``, ``source``, ``city``,
  ``start_date``, ..., ``pts_win``, ..., ``records``); ``records`` (verbatim header lines, hundreds in a team
  event) is set on the first row of each tournament only and null on its other rows;
- player columns: ``start_no``, ``name``, ``sex``, ..., ``declared_rank``, and ``line`` -> ``player_line``;
- game columns: ``round``, ``opponent``, ``colour``, ``result``, ``points``, ``played``, ``game_type``
  (the games table's ``player`` is ``start_no``);
- warning columns ``warning_line``, ``warning_field``, ``warning_message``;
- then the optional columns a batch carries (:data:`tbstats.games.OPTIONAL`, e.g. the players' ``strength``
  in simulated archives), under their own names.

A player without any round still has a row (``round`` null); an event without players has one row
(``start_no`` null). A warning is a row of its own whose ``tournament`` is null, ``source`` is the warning's
source and only the ``warning_*`` columns are set.

In CSV files (either layout) list columns (``records``, ``tiebreaks``, ``standings_tiebreaks``) are JSON
arrays, dates are ISO ``YYYY-MM-DD``, booleans ``true``/``false``; an empty cell is null and ``""`` is an
empty string. Every table is checked against the model's schema on read: a missing column or a column of the
wrong type (in CSV: a value that does not parse) raises :class:`tbstats.errors.SchemaError` naming the file
and the column.
"""

from __future__ import annotations

import csv
import itertools
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Literal

import polars as pl

from tbstats.errors import FormatError, SchemaError, TbstatsError
from tbstats.games import OPTIONAL, SCHEMAS, Batch, cast_checked, check_schema, empty
from tbstats.io import check

Format = Literal["parquet", "arrow", "csv"]

#: Model file formats by file extension (lower case).
EXTENSIONS: Final[dict[str, Format]] = {
    ".parquet": "parquet", ".arrow": "arrow", ".ipc": "arrow", ".feather": "arrow", ".csv": "csv",
}
#: The extension each format is written with.
SUFFIX: Final[dict[Format, str]] = {"parquet": ".parquet", "arrow": ".arrow", "csv": ".csv"}
TABLES: Final = ("tournaments", "players", "games", "warnings")

_RENAMES: Final[dict[str, dict[str, str]]] = {
    "tournaments": {"name": "event_name", "federation": "event_federation"},
    "players": {"line": "player_line"},
    "games": {"player": "start_no"},
    "warnings": {"line": "warning_line", "field": "warning_field", "message": "warning_message"},
}
#: Flat column -> (model table, model column), in the order of the flat file.
FLAT_COLUMNS: Final[dict[str, tuple[str, str]]] = {
    **{_RENAMES["tournaments"].get(c, c): ("tournaments", c) for c in SCHEMAS["tournaments"]},
    **{_RENAMES["players"].get(c, c): ("players", c) for c in SCHEMAS["players"] if c != "tournament"},
    **{_RENAMES["games"].get(c, c): ("games", c) for c in SCHEMAS["games"]
       if c not in ("tournament", "player")},
    **{_RENAMES["warnings"].get(c, c): ("warnings", c) for c in SCHEMAS["warnings"] if c != "source"},
}
#: The flat columns of each table's own columns (tournament columns first, as in the flat file).
_RENAMES_FLAT: Final[dict[str, tuple[str, ...]]] = {
    t: tuple(f for f, (table, _) in FLAT_COLUMNS.items() if table == t) for t in ("tournaments", "players")}
#: Optional flat columns (:data:`tbstats.games.OPTIONAL`), written after the others when a batch has them.
FLAT_OPTIONAL: Final[dict[str, tuple[str, str]]] = {
    c: (table, c) for table, columns in OPTIONAL.items() for c in columns}
#: Columns a flat file must have to be taken for a tbstats model when found in a directory walk.
FLAT_SIGNATURE: Final = ("tournament", "source", "start_no", "round", "game_type")


# ----------------------------------------------------------------------------------------------- paths

def model_format(path: str | Path) -> Format | None:
    """The format a model file's extension names, or None.

    >>> model_format("x/archive.Parquet"), model_format("a.feather"), model_format("a.trf")
    ('parquet', 'arrow', None)
    """
    return EXTENSIONS.get(Path(path).suffix.lower())


def _table_source(directory: Path, table: str) -> Path | None:
    """The file or part directory holding ``table`` in a directory dataset, or None."""
    found = [p for p in (directory / f"{table}{ext}" for ext in EXTENSIONS) if p.is_file()]
    if (directory / table).is_dir():
        found.append(directory / table)
    if len(found) > 1:
        raise SchemaError(f"{directory}: table {table} is stored more than once "
                          f"({', '.join(p.name for p in found)}); keep one")
    return found[0] if found else None


def is_model_dir(path: str | Path) -> bool:
    """Whether ``path`` is a directory dataset: it holds a ``tournaments`` table file or part directory."""
    p = Path(path)
    return p.is_dir() and (any((p / f"tournaments{ext}").is_file() for ext in EXTENSIONS)
                           or ((p / "tournaments").is_dir() and any(
                               q.is_file() and q.suffix.lower() in EXTENSIONS for q in (p / "tournaments").rglob("*"))))


def _parts(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir() if p.is_file() and p.suffix.lower() in EXTENSIONS
                  and not p.name.startswith("."))


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
    tables: dict[str, pl.DataFrame] = {}
    for table in TABLES:
        src = _table_source(directory, table)
        if src is None:
            if table == "warnings":
                tables[table] = empty(table)
                continue
            raise SchemaError(f"{directory}: no {table} table (expected {table}.parquet, {table}.arrow, "
                              f"{table}.csv or a {table}/ directory of part files)")
        if src.is_dir():
            parts = [_read_table(q, table) for q in _parts(src)]   # optional columns may be in some parts only
            tables[table] = pl.concat(parts, how="diagonal_relaxed") if parts else empty(table)
        else:
            tables[table] = _read_table(src, table)
    check.raise_problems(check.check_model(tables))
    return Batch(tables["tournaments"], tables["players"], tables["games"], tables["warnings"])


def _read_table(path: Path, table: str) -> pl.DataFrame:
    """One table file, checked against the schema, with the rows' location (see :mod:`tbstats.io.check`)."""
    fmt = model_format(path)
    assert fmt is not None
    return check.locate(check_schema(table, _read_file(path, fmt, {**SCHEMAS[table], **OPTIONAL[table]}),
                                     where=str(path)), str(path))


def _read_file(path: Path, fmt: Format, types: dict[str, pl.DataType]) -> pl.DataFrame:
    """Read one file; CSV cells are parsed into ``types`` (unknown columns stay strings)."""
    try:
        if fmt == "parquet":
            return pl.read_parquet(path)
        if fmt == "arrow":
            return pl.read_ipc(path)
        raw = pl.read_csv(path, infer_schema=False)
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise SchemaError(f"{path}: not a readable {fmt} file ({_first_line(exc)})") from None
    _check_last_row(path, raw)
    return _parse_csv(raw, types, str(path))


def _check_last_row(path: Path, raw: pl.DataFrame) -> None:
    """A CSV file whose last row has fewer fields than the header was cut mid-row: raise FormatError."""
    if raw.is_empty():
        return
    with path.open("rb") as f:
        f.seek(max(0, f.seek(0, os.SEEK_END) - 65536))
        tail = f.read().decode("utf-8", errors="replace")
    lines = [line for line in tail.splitlines() if line.strip()]
    if not lines:
        return
    fields = next(csv.reader([lines[-1]]), [])
    if len(fields) < raw.width:
        raise FormatError(str(path), raw.height + 1, raw.columns[len(fields) - 1] if fields else None,
                          f"the file ends inside a row ({len(fields)} of {raw.width} fields): it was cut short")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _flat_types() -> dict[str, pl.DataType]:
    return {**{flat: SCHEMAS[table][col] for flat, (table, col) in FLAT_COLUMNS.items()},
            **{flat: OPTIONAL[table][col] for flat, (table, col) in FLAT_OPTIONAL.items()}}


def _parse_csv(raw: pl.DataFrame, types: dict[str, pl.DataType], where: str) -> pl.DataFrame:
    """Parse the string cells of a CSV table into the model's types; the first bad cell raises."""
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
            raise SchemaError(f"{where}: column '{name}' line {bad + 2}: {text[bad]!r} is not a "
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
    missing = [c for c in FLAT_COLUMNS if c not in schema]
    if missing:
        raise SchemaError(f"{prefix}flat model table lacks column(s) {', '.join(missing)}")
    for name, (table, col) in FLAT_COLUMNS.items():
        probe = empty(table).with_columns(pl.Series(col, [], dtype=schema[name]))
        try:
            check_schema(table, probe)
        except SchemaError:
            raise SchemaError(f"{prefix}column '{name}' has type {schema[name]} "
                              f"(expected {SCHEMAS[table][col]})") from None
    if "_file" not in schema:
        lazy = check.locate(lazy, where)

    def names(table: str) -> dict[str, str]:
        """Model column -> flat column of a table."""
        out = {c: _RENAMES[table].get(c, c) for c in SCHEMAS[table]}
        out.update({c: c for c in OPTIONAL[table] if c in schema})
        return out

    def read(table: str, *extra: str) -> pl.DataFrame:
        """The flat columns of a table (and ``extra``) on every row, read now and cast to the model's types."""
        df = lazy.select(list(dict.fromkeys([*names(table).values(), *extra, "_file", "_row"]))).collect()
        return df.with_columns(cast_checked(df[n], SCHEMAS[t][c], f"{prefix}column '{n}'")
                               for n, (t, c) in FLAT_COLUMNS.items() if n in df.columns)

    def columns(table: str) -> list[pl.Expr]:
        return [pl.col(f).alias(c) for c, f in names(table).items()] + [pl.col("_file"), pl.col("_row")]

    tid = pl.col("tournament")
    found = [check.check_orphans(lazy.select("tournament", "start_no", "round", "_file", "_row").collect())]
    rows = read("tournaments")
    found.append(check.check_repeats(rows, ("tournament",), tuple(
        c for c in _RENAMES_FLAT["tournaments"] if c not in ("tournament", "records"))))
    rows = rows.filter(tid.is_not_null())
    records = rows.group_by("tournament", maintain_order=True).agg(pl.col("records").drop_nulls().first())
    tournaments = rows.unique("tournament", keep="first", maintain_order=True).drop("records").join(
        records, on="tournament", how="left", maintain_order="left").select(columns("tournaments"))
    rows = read("players")
    found.append(check.check_repeats(rows, ("tournament", "start_no"), tuple(
        c for c in _RENAMES_FLAT["players"] if c != "start_no")))
    players = rows.filter(tid.is_not_null() & pl.col("start_no").is_not_null()).unique(
        ["tournament", "start_no"], keep="first", maintain_order=True).select(columns("players"))
    del rows
    games = read("games", "tournament").filter(tid.is_not_null() & pl.col("round").is_not_null()).select(
        columns("games"))
    warnings = read("warnings", "tournament").filter(tid.is_null()).select(columns("warnings"))
    check.raise_problems(pl.concat(found))
    tables = dict(zip(TABLES, (tournaments, players, games, warnings), strict=True))
    check.raise_problems(check.check_model(tables, _RENAMES))
    return Batch(*(check_schema(t, df, where=where) for t, df in tables.items()))


# ----------------------------------------------------------------------------------------------- writing

def flatten(batch: Batch, *, json_lists: bool = False) -> pl.DataFrame:
    """The flat table of a batch: one row per player and round, then one row per warning.

    With ``json_lists`` the list columns are JSON strings (as in CSV files).

    >>> from tbstats.games import Batch, empty
    >>> flatten(Batch(empty("tournaments"), empty("players"), empty("games"))).columns[:4]
    ['tournament', 'source', 'event_name', 'city']
    """
    t = batch.tournaments.rename(_RENAMES["tournaments"])
    t = _json_lists(t) if json_lists else t
    p = batch.players.rename(_RENAMES["players"])
    g = batch.games.rename(_RENAMES["games"])
    w = batch.warnings.rename(_RENAMES["warnings"])
    rows = t.join(p, on="tournament", how="left", maintain_order="left").join(
        g, on=["tournament", "start_no"], how="left", maintain_order="left").with_columns(
        pl.when(pl.col("tournament").is_first_distinct()).then(pl.col("records")).alias("records"))
    extra = [c for c in FLAT_OPTIONAL if c in rows.columns]
    return pl.concat([rows, w], how="diagonal").select([*FLAT_COLUMNS, *extra])


def write_model(batch: Batch, path: str | Path, *, format: Format | None = None) -> Path:
    """Write a batch as a single flat file (path with a model extension) or a directory dataset; return path.

    A directory dataset is written in ``format`` (default Parquet), one file per table; existing table files
    of the same names are replaced.
    """
    p = Path(path)
    fmt, single = _target(p, format)
    if single:
        p.parent.mkdir(parents=True, exist_ok=True)
        flat = flatten(batch, json_lists=fmt == "csv")
        if fmt == "csv":
            flat.write_csv(p)
        else:
            _write_file(flat, p, fmt)
        return p
    p.mkdir(parents=True, exist_ok=True)
    for table in TABLES:
        if (p / table).is_dir():
            raise TbstatsError(f"{p}: already holds a {table}/ part directory (written by ArchiveWriter); "
                               "write to a new directory")
        _write_file(getattr(batch, table), p / f"{table}{SUFFIX[fmt]}", fmt)
    return p


def _target(path: Path, format: Format | None) -> tuple[Format, bool]:
    """Format and whether the target is a single file."""
    by_ext = model_format(path)
    if format is not None and format not in SUFFIX:
        raise TbstatsError(f"unknown model format {format!r} (expected one of {', '.join(SUFFIX)})")
    if by_ext is not None and not path.is_dir():
        if format is not None and format != by_ext:
            raise TbstatsError(f"{path}: extension {path.suffix} does not match format {format!r}")
        return by_ext, True
    return format or "parquet", False


def _json_lists(df: pl.DataFrame) -> pl.DataFrame:
    """List columns as JSON arrays (CSV cells)."""
    lists = [c for c, t in df.schema.items() if isinstance(t, pl.List)]
    return df.with_columns(pl.Series(c, [None if v is None else json.dumps(v, ensure_ascii=False)
                                         for v in df[c].to_list()], dtype=pl.String) for c in lists)


#: Row groups hold whole tournaments and about this many rows (one group when a tournament is larger).
ROW_GROUP_ROWS: Final = 1 << 17


def _row_groups(df: pl.DataFrame) -> list[tuple[int, int]]:
    """Offsets and lengths of row groups of whole tournaments (rows sorted by tournament)."""
    if "tournament" not in df.columns or df.height <= ROW_GROUP_ROWS:
        return [(0, df.height)]
    ends = df.with_row_index("_i").group_by("tournament", maintain_order=True).agg(pl.col("_i").max() + 1)["_i"]
    out, lo = [], 0
    for end in ends.to_list():
        if end - lo >= ROW_GROUP_ROWS:
            out.append((lo, end - lo))
            lo = end
    if lo < df.height:
        out.append((lo, df.height - lo))
    return out


def _write_file(df: pl.DataFrame, path: Path, fmt: Format) -> None:
    if fmt == "parquet":
        groups = _row_groups(df)
        if len(groups) == 1:
            df.write_parquet(path)
            return
        import pyarrow.parquet as pq

        table = df.to_arrow()
        with pq.ParquetWriter(str(path), table.schema) as writer:
            for lo, n in groups:
                writer.write_table(table.slice(lo, n), row_group_size=n)
    elif fmt == "arrow":
        df.write_ipc(path, compression="zstd")
    else:
        _json_lists(df).write_csv(path)


def _sorted(batch: Batch) -> Batch:
    """The batch's tables in tournament order (stable: players and rounds keep their order within one)."""
    def sort(df: pl.DataFrame) -> pl.DataFrame:
        return df if df["tournament"].is_sorted() else df.sort("tournament", maintain_order=True)

    return Batch(sort(batch.tournaments), sort(batch.players), sort(batch.games), batch.warnings)


def renumber(batch: Batch, first_id: int) -> Batch:
    """The batch with tournament ids ``first_id, first_id + 1, ...`` in the order of its tournaments table.

    >>> from tbstats.games import Batch, empty
    >>> renumber(Batch(empty("tournaments"), empty("players"), empty("games")), 5).n_tournaments
    0
    """
    ids = batch.tournaments["tournament"]
    new = pl.int_range(first_id, first_id + len(ids), eager=True, dtype=pl.Int64)
    if ids.equals(new, check_names=False):
        return batch
    mapping = pl.DataFrame({"tournament": ids, "_new": new})

    def apply(df: pl.DataFrame) -> pl.DataFrame:
        return df.join(mapping, on="tournament", how="left", maintain_order="left").with_columns(
            pl.col("_new").alias("tournament")).drop("_new")

    return Batch(apply(batch.tournaments), apply(batch.players), apply(batch.games), batch.warnings)


class ArchiveWriter:
    """Write batches one after another into one model, keeping tournament ids unique across batches.

    A directory target gets one part file per table and batch (``games/part-00000.parquet``, ...); with
    ``append=True`` an existing part directory dataset is continued. A single-file target (``.parquet``,
    ``.arrow``, ``.csv``) gets the flat table, streamed batch by batch; its optional columns
    (:data:`tbstats.games.OPTIONAL`) are those of the first batch: later batches without them get nulls,
    and optional columns the first batch lacked are left out (a directory keeps each part's own). Leaving a
    ``with`` block on an exception removes what this writer created.
    """

    def __init__(self, path: str | Path, format: Format | None = None, *, append: bool = False) -> None:
        self.path = Path(path)
        self.format, self.single = _target(self.path, format)
        self.tournaments_written = 0
        self._next_id = 0
        self._part = 0
        self._created: list[Path] = []
        self._writer: Any = None
        self._schema: Any = None
        self._columns: list[str] | None = None
        self._closed = False
        if self.single:
            if append:
                raise TbstatsError(f"{self.path}: cannot append to a single-file model; write a directory")
            self.path.parent.mkdir(parents=True, exist_ok=True)
            return
        if self.path.exists() and any(self.path.iterdir()):
            if not append:
                raise TbstatsError(f"{self.path}: directory is not empty (append to it, or choose a new one)")
            self._resume()
        elif not self.path.exists():
            self._created.append(self.path)
        self.path.mkdir(parents=True, exist_ok=True)

    def _resume(self) -> None:
        src = _table_source(self.path, "tournaments")
        if src is None or not src.is_dir():
            raise TbstatsError(f"{self.path}: not a part-file dataset written by ArchiveWriter, "
                               "so it cannot be appended to")
        parts = _parts(src)
        self._part = len(parts)
        ids = pl.concat([_read_table(q, "tournaments")["tournament"] for q in parts]) if parts else None
        top = None if ids is None else ids.max()
        self._next_id = top + 1 if isinstance(top, int) else 0

    def write(self, batch: Batch) -> None:
        """Append a batch: its tournaments get the next free ids."""
        if self._closed:
            raise TbstatsError(f"{self.path}: writer is closed")
        batch = _sorted(renumber(batch, self._next_id))
        self._next_id += batch.n_tournaments
        self.tournaments_written += batch.n_tournaments
        if self.single:
            self._write_flat(flatten(batch, json_lists=self.format == "csv"))
            return
        name = f"part-{self._part:05d}{SUFFIX[self.format]}"
        for table in TABLES:
            directory = self.path / table
            if not directory.exists():
                directory.mkdir()
                self._created.append(directory)
            self._created.append(directory / name)
            _write_file(getattr(batch, table), directory / name, self.format)
        self._part += 1

    def _write_flat(self, flat: pl.DataFrame) -> None:
        if self._columns is None:
            self._columns = flat.columns
        elif flat.columns != self._columns:   # optional columns follow the first batch (class docstring)
            flat = flat.select([pl.col(c) if c in flat.columns else pl.lit(None).alias(c) for c in self._columns])
        if self.format == "csv":
            first = self._writer is None
            if first:
                self._created.append(self.path)
                self._writer = self.path.open("w", encoding="utf-8", newline="")
            flat.write_csv(self._writer, include_header=first)
            return
        import pyarrow.ipc as ipc
        import pyarrow.parquet as pq

        table = flat.to_arrow()
        if self._writer is None:
            self._created.append(self.path)
            self._schema = table.schema
            self._writer = (pq.ParquetWriter(str(self.path), table.schema) if self.format == "parquet"
                            else ipc.new_file(str(self.path), table.schema,
                                              options=ipc.IpcWriteOptions(compression="zstd")))
        table = table.cast(self._schema)
        if self.format != "parquet":
            self._writer.write_table(table)
            return
        starts = [lo for lo, _ in _row_groups(flat.filter(pl.col("tournament").is_not_null()))]
        for lo, hi in itertools.pairwise([*starts, flat.height]):   # the warnings rows join the last group
            self._writer.write_table(table.slice(lo, hi - lo), row_group_size=max(hi - lo, 1))

    def close(self) -> None:
        """Finish the files; a writer that wrote nothing leaves an empty model."""
        if self._closed:
            return
        if self.single and self._writer is None:
            self._write_flat(flatten(Batch(empty("tournaments"), empty("players"), empty("games")),
                                     json_lists=self.format == "csv"))
        elif not self.single and self._part == 0 and not self._created:
            self.write(Batch(empty("tournaments"), empty("players"), empty("games")))
        if self._writer is not None:
            self._writer.close()
        self._closed = True

    def abort(self) -> None:
        """Close and remove every file and directory this writer created."""
        if self._writer is not None and not self._closed:
            self._writer.close()
        self._closed = True
        for p in reversed(self._created):
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
            elif p.exists():
                os.remove(p)
        self._created.clear()

    def __enter__(self) -> ArchiveWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc is None:
            self.close()
        else:
            self.abort()
