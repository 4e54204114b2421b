"""The model's file layout: formats, extensions, table names, flat columns, and finding tables on disk."""

from __future__ import annotations

from pathlib import Path
from typing import Final

import polars as pl

from tbstats.errors import SchemaError
from tbstats.io.kinds import EXTENSIONS as EXTENSIONS  # model file formats by extension
from tbstats.io.kinds import Format as Format
from tbstats.io.kinds import is_model_dir as is_model_dir
from tbstats.model.games import OPTIONAL, SCHEMAS, cast_checked, fits

#: The extension each format is written with.
SUFFIX: Final[dict[Format, str]] = {"parquet": ".parquet", "arrow": ".arrow", "csv": ".csv"}
TABLES: Final = ("tournaments", "players", "games", "warnings")

FLAT_RENAMES: Final[dict[str, dict[str, str]]] = {
    "tournaments": {"name": "event_name", "federation": "event_federation"},
    "players": {"line": "player_line"},
    "games": {"player": "start_no"},
    "warnings": {"line": "warning_line", "field": "warning_field", "message": "warning_message"},
}
#: Flat column -> (model table, model column), in the order of the flat file.
FLAT_COLUMNS: Final[dict[str, tuple[str, str]]] = {
    **{FLAT_RENAMES["tournaments"].get(c, c): ("tournaments", c) for c in SCHEMAS["tournaments"]},
    **{FLAT_RENAMES["players"].get(c, c): ("players", c) for c in SCHEMAS["players"] if c != "tournament"},
    **{FLAT_RENAMES["games"].get(c, c): ("games", c) for c in SCHEMAS["games"]
       if c not in ("tournament", "player")},
    **{FLAT_RENAMES["warnings"].get(c, c): ("warnings", c) for c in SCHEMAS["warnings"] if c != "source"},
}
#: The flat columns of each table's own columns (tournament columns first, as in the flat file).
_RENAMES_FLAT: Final[dict[str, tuple[str, ...]]] = {
    t: tuple(f for f, (table, _) in FLAT_COLUMNS.items() if table == t) for t in ("tournaments", "players")}
#: Optional flat columns (:data:`tbstats.model.games.OPTIONAL`), written after the others when a batch has them.
FLAT_OPTIONAL: Final[dict[str, tuple[str, str]]] = {
    c: (table, c) for table, columns in OPTIONAL.items() for c in columns}
#: The smallest and largest tournament id a run of a model can hold.
ANY_ID: Final = (-(1 << 63), (1 << 63) - 1)
#: Columns a flat file must have to be taken for a tbstats model when found in a directory walk.
FLAT_SIGNATURE: Final = ("tournament", "source", "start_no", "round", "game_type")
#: Schema metadata that marks a sparse flat file (Parquet): each tournament's columns set on its first row only,
#: each player's on its first row only (see :mod:`tbstats.io.tabular.sparse`).
SPARSE_MARK: Final = {"tbstats.flat": "sparse", "tbstats.flat.version": "1"}
#: The column of a sparse flat file that marks a tournament's first row (2) and a player's other first row (1).
FIRST: Final = "first_row"
#: The flat columns a sparse file sets on first rows only, per table (the players' optional ones when present).
SPARSE_COLUMNS: Final[dict[str, tuple[str, ...]]] = {
    "tournaments": tuple(c for c in _RENAMES_FLAT["tournaments"] if c != "tournament"),
    "players": tuple(c for c in _RENAMES_FLAT["players"] if c != "start_no")
    + tuple(c for c, (t, _) in FLAT_OPTIONAL.items() if t == "players"),
}
#: The list columns, stored as JSON arrays of strings in a sparse flat file (as in CSV files): the reader decodes
#: a nested column at about the cost of a dozen flat ones, for every row, null or not.
TEXT_LISTS: Final = tuple(c for c in SPARSE_COLUMNS["tournaments"]
                          if isinstance(SCHEMAS["tournaments"][FLAT_COLUMNS[c][1]], pl.List))



def check_flat_schema(schema: pl.Schema, prefix: str) -> None:
    """Raise :class:`SchemaError` naming a flat column that is missing or of the wrong type."""
    missing = [c for c in FLAT_COLUMNS if c not in schema]
    if missing:
        raise SchemaError(f"{prefix}flat model table lacks column(s) {', '.join(missing)}")
    for name, (table, col) in FLAT_COLUMNS.items():
        if not fits(schema[name], SCHEMAS[table][col]):
            raise SchemaError(f"{prefix}column '{name}' has type {schema[name]} (expected {SCHEMAS[table][col]})")


def flat_names(table: str, schema: pl.Schema) -> dict[str, str]:
    """Model column -> flat column of a table (its optional columns when the flat table has them)."""
    out = {c: FLAT_RENAMES[table].get(c, c) for c in SCHEMAS[table]}
    out.update({c: c for c in OPTIONAL[table] if c in schema})
    return out


def cast_flat(df: pl.DataFrame, prefix: str) -> pl.DataFrame:
    """The flat columns of ``df`` cast to the model's types (a value that does not fit raises, naming the column)."""
    return df.with_columns(cast_checked(df[n], SCHEMAS[t][c], f"{prefix}column '{n}'")
                           for n, (t, c) in FLAT_COLUMNS.items() if n in df.columns)


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


def _parts(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir() if p.is_file() and p.suffix.lower() in EXTENSIONS
                  and not p.name.startswith("."))
