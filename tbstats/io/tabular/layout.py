"""The model's file layout: formats, extensions, table names, flat columns, and finding tables on disk."""

from __future__ import annotations

from pathlib import Path
from typing import Final, Literal

from tbstats.errors import SchemaError
from tbstats.model.games import OPTIONAL, SCHEMAS

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
#: Optional flat columns (:data:`tbstats.model.games.OPTIONAL`), written after the others when a batch has them.
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
