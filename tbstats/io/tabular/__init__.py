"""The columnar model to and from Parquet, Arrow IPC and CSV, as a directory of tables or one flat file.

**Directory dataset** (``DIR/``): one file per table, ``tournaments.<ext>``, ``players.<ext>``,
``games.<ext>`` and ``warnings.<ext>`` (optional on read), with the columns of
:data:`tbstats.model.games.SCHEMAS`. Any table may instead be a sub-directory of part files
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
- then the optional columns a batch carries (:data:`tbstats.model.games.OPTIONAL`, e.g. the players' ``strength``
  in simulated archives), under their own names.

A player without any round still has a row (``round`` null); an event without players has one row
(``start_no`` null). A warning is a row of its own whose ``tournament`` is null, ``source`` is the warning's
source and only the ``warning_*`` columns are set.

A flat **Parquet** file written here (:class:`ArchiveWriter`, :func:`write_model`) is *sparse*
(:mod:`tbstats.io.tabular.sparse`): the tournament columns are set on each tournament's first row only and the
player columns (the optional ones included) on each player's first row only, null elsewhere; a last column
:data:`FIRST` (``first_row``) marks those rows (2: the tournament's first row, which is also its first
player's; 1: another player's first row); the list columns are JSON arrays of strings, as in CSV; and the
schema metadata holds :data:`SPARSE_MARK` (``tbstats.flat`` = ``sparse``, ``tbstats.flat.version`` = ``1``).
A flat file without the mark (older files, hand-made ones, Arrow IPC, CSV) is *dense*: every row repeats its
tournament's and player's columns, and rows that disagree are errors. Both read back as the same batch.

In CSV files (either layout) list columns (``records``, ``tiebreaks``, ``standings_tiebreaks``) are JSON
arrays, dates are ISO ``YYYY-MM-DD``, booleans ``true``/``false``; an empty cell is null and ``""`` is an
empty string. Every table is checked against the model's schema on read: a missing column or a column of the
wrong type (in CSV: a value that does not parse) raises :class:`tbstats.errors.SchemaError` naming the file
and the column.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from tbstats.io.tabular.layout import (
        ANY_ID,
        EXTENSIONS,
        FIRST,
        FLAT_COLUMNS,
        FLAT_OPTIONAL,
        FLAT_SIGNATURE,
        SPARSE_MARK,
        SUFFIX,
        TABLES,
        Format,
        _table_source,
        is_model_dir,
        model_format,
    )
    from tbstats.io.tabular.read import (
        _first_line,
        iter_model,
        read_model,
        split_flat,
    )
    from tbstats.io.tabular.sparse import (
        is_sparse,
        sparsify,
        split_sparse,
    )
    from tbstats.io.tabular.write import (
        ROW_GROUP_ROWS,
        ArchiveWriter,
        PartFiles,
        flatten,
        write_model,
        write_part,
    )

#: The module of each name above. A name's module is imported when the name is first used (PEP 562), so that
#: reading TRF files, which looks up nothing here, loads none of the model's readers and writers.
_MODULES: Final = {
    **dict.fromkeys(["ANY_ID", "EXTENSIONS", "FIRST", "FLAT_COLUMNS", "FLAT_OPTIONAL", "FLAT_SIGNATURE",
                     "SPARSE_MARK", "SUFFIX", "TABLES", "Format", "_table_source", "is_model_dir", "model_format"],
                    "layout"),
    **dict.fromkeys(["_first_line", "iter_model", "read_model", "split_flat"], "read"),
    **dict.fromkeys(["is_sparse", "sparsify", "split_sparse"], "sparse"),
    **dict.fromkeys(["ROW_GROUP_ROWS", "ArchiveWriter", "PartFiles", "flatten", "write_model", "write_part"], "write"),
}


def __getattr__(name: str) -> object:
    """A name above, its module imported on first use (a submodule too: ``tabular.read``)."""
    if name in ("layout", "proof", "read", "sparse", "write"):
        return importlib.import_module(f"{__name__}.{name}")
    if name not in _MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_MODULES[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_MODULES})


__all__ = [
    "ANY_ID",
    "EXTENSIONS",
    "FIRST",
    "FLAT_COLUMNS",
    "FLAT_OPTIONAL",
    "FLAT_SIGNATURE",
    "ROW_GROUP_ROWS",
    "SPARSE_MARK",
    "SUFFIX",
    "TABLES",
    "ArchiveWriter",
    "Format",
    "PartFiles",
    "_first_line",
    "_table_source",
    "flatten",
    "is_model_dir",
    "is_sparse",
    "iter_model",
    "model_format",
    "read_model",
    "sparsify",
    "split_flat",
    "split_sparse",
    "write_model",
    "write_part",
]
