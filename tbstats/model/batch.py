"""A batch of whole tournaments: the model's three tables (:mod:`tbstats.model.games`) and the warnings met while
reading them, with the ways batches are cut, stacked and renumbered, and the names of their sources.

The tables' schema and checks live in :mod:`tbstats.model.games`, whose source the proofs of checked files
vouch for (:mod:`tbstats.io.tabular.proof`); this module is not among them, so changing how batches are handled
leaves the proofs that users' models hold valid.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import polars as pl

from tbstats.model.games import check_schema, empty, stack


@dataclass(frozen=True)
class Batch:
    """A batch of whole tournaments in the columnar model, plus the warnings met while reading it."""

    tournaments: pl.DataFrame
    players: pl.DataFrame
    games: pl.DataFrame
    warnings: pl.DataFrame = field(default_factory=lambda: empty("warnings"))

    def __post_init__(self) -> None:
        for name in ("tournaments", "players", "games", "warnings"):
            df = check_schema(name, getattr(self, name))   # (a frame of its own: its columns may be replaced)
            object.__setattr__(self, name, df if name == "warnings" else flag_sorted(df))

    @classmethod
    def of_checked(cls, tournaments: pl.DataFrame, players: pl.DataFrame, games: pl.DataFrame,
                   warnings: pl.DataFrame) -> Batch:
        """A batch of tables already in the model's schema (slices, filters or renumberings of a batch's
        own tables), not checked again: a stream cut into many small batches pays no schema check per batch."""
        batch = object.__new__(cls)
        for name, df in (("tournaments", tournaments), ("players", players), ("games", games),
                         ("warnings", warnings)):
            object.__setattr__(batch, name, df)
        return batch

    @property
    def n_tournaments(self) -> int:
        return self.tournaments.height

    @staticmethod
    def concat(batches: list[Batch]) -> Batch:
        """Concatenate batches, renumbering tournaments so that ids stay unique."""
        if not batches:
            return Batch(empty("tournaments"), empty("players"), empty("games"))
        parts: dict[str, list[pl.DataFrame]] = {"tournaments": [], "players": [], "games": []}
        offset = 0
        for b in batches:
            ids = b.tournaments["tournament"]
            mapping = pl.DataFrame({"tournament": ids, "_new": pl.int_range(offset, offset + len(ids),
                                                                            eager=True, dtype=pl.Int64)})
            for name in parts:
                df: pl.DataFrame = getattr(b, name)
                df = df.join(mapping, on="tournament", how="left").with_columns(
                    pl.col("_new").alias("tournament")).drop("_new")
                parts[name].append(df)
            offset += len(ids)
        return Batch(
            pl.concat(parts["tournaments"]),
            stack(parts["players"]),
            pl.concat(parts["games"]),
            pl.concat([b.warnings for b in batches]),
        )

    @staticmethod
    def stacked(batches: Sequence[Batch]) -> Batch:
        """Batches one under another, each table by :func:`stack`, their tournament ids kept (unlike
        :meth:`concat`: the caller keeps them unique)."""
        return Batch(*(stack([getattr(b, t) for b in batches]) for t in ("tournaments", "players", "games",
                                                                          "warnings")))

    def select(self, tournaments: pl.Series | list[int]) -> Batch:
        """The sub-batch of the given tournament ids (whole tournaments only)."""
        ids = pl.Series("tournament", tournaments, dtype=pl.Int64)
        keep = pl.col("tournament").is_in(ids.implode())
        srcs = self.tournaments.filter(keep)["source"]
        return Batch(self.tournaments.filter(keep), self.players.filter(keep), self.games.filter(keep),
                     self.warnings.filter(pl.col("source").is_in(srcs.implode())))


def flag_sorted(df: pl.DataFrame) -> pl.DataFrame:
    """``df`` (a frame of the caller's own) with its ``tournament`` column flagged as sorted when it is (ascending,
    without nulls, as the readers write the tables), checked once here: the cuts of a batch into runs
    (:func:`tbstats.engine.compute.split_batch`) and the engine's runs of games read the flag, and slices and
    filters of the table keep it."""
    column = df["tournament"]
    if not column.flags["SORTED_ASC"] and not column.null_count() and column.is_sorted():
        df.replace_column(df.get_column_index("tournament"), column.set_sorted())
    return df


def renumber(batch: Batch, first_id: int) -> Batch:
    """The batch with tournament ids ``first_id, first_id + 1, ...`` in the order of its tournaments table.

    >>> renumber(Batch(empty("tournaments"), empty("players"), empty("games")), 5).n_tournaments
    0
    """
    ids = batch.tournaments["tournament"]
    new = pl.int_range(first_id, first_id + len(ids), eager=True, dtype=pl.Int64)
    if ids.equals(new, check_names=False):
        return batch
    # one new column per table (the others are shared, not copied): a shift when the ids run on by one, else a
    # lookup (an id that no tournament has becomes null, as a left join would make it)
    first = ids[0]
    shift = ids.null_count() == 0 and (ids - first).equals(new - first_id, check_names=False)

    def apply(df: pl.DataFrame) -> pl.DataFrame:
        column = df["tournament"]
        column = column + (first_id - first) if shift else column.replace_strict(ids, new, default=None,
                                                                                return_dtype=pl.Int64)
        out = df.clone()   # shallow: the other columns are shared
        out.replace_column(df.get_column_index("tournament"), column)
        return out

    return Batch.of_checked(apply(batch.tournaments), apply(batch.players), apply(batch.games), batch.warnings)


#: A ``source`` names a file, or ``file#N`` for the N-th event of a file with several.
EVENT_SUFFIX: Final = r"#\d+$"


def source_file(source: str) -> str:
    """The file a source names.

    >>> source_file("a/b.trf#2"), source_file("a/b.trf")
    ('a/b.trf', 'a/b.trf')
    """
    return re.sub(EVENT_SUFFIX, "", source)


def source_files(column: str = "source") -> pl.Expr:
    """:func:`source_file` of a column of sources."""
    return pl.col(column).str.replace(EVENT_SUFFIX, "")


class _ArrowArray:
    """An Arrow array seen only through the Arrow C data interface (``__arrow_c_array__``)."""

    def __init__(self, array: Any) -> None:
        self.array = array

    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]:
        return self.array.__arrow_c_array__(requested_schema)


def arrow_series(name: str, array: Any) -> pl.Series:
    """A polars Series of an Arrow array, handed over through the Arrow C data interface: ``pl.from_arrow``
    imports ``pyarrow.compute`` (about 0.15 s of a short run) for what it does not need here."""
    return pl.Series(_ArrowArray(array)).alias(name)


def append_merged(pieces: list[pl.DataFrame], df: pl.DataFrame) -> None:
    """Append ``df`` to ``pieces``, merging the last pieces while the one before is no taller (a binary
    counter): the list stays logarithmic in the number of batches, each row is copied a logarithmic number of
    times, and ``pl.concat(pieces)`` is the pieces' table in order."""
    pieces.append(df)
    while len(pieces) > 1 and pieces[-2].height <= pieces[-1].height:
        last = pieces.pop()
        pieces[-1] = pl.concat([pieces[-1], last], rechunk=True)
