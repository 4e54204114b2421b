"""Counts that describe a batch: tournaments, players, rounds, game rows by game type, warnings."""

from __future__ import annotations

from typing import Final

import polars as pl

from tbstats.model.batch import Batch, source_files
from tbstats.model.games import GAME_TYPES, empty
from tbstats.model.teams.batch import team_event_ids

#: The per-type count columns, in the order of :data:`tbstats.model.games.GAME_TYPES`.
TYPE_COLUMNS: Final = GAME_TYPES


_COUNTS: Final = ["players", "game_rows", *TYPE_COLUMNS]


def partial_summary(batch: Batch) -> tuple[pl.DataFrame, pl.DataFrame]:
    """What one batch adds to :func:`summary_table`: per tournament counts, and warnings per source."""
    # lazy: polars' eager group_by runs its plan without optimisations, so every column of the table (strings
    # included) is carried through it: about 50 bytes per game row here, against a few MB lazily
    players = batch.players.lazy().group_by("tournament").agg(pl.len().alias("players")).collect()
    types = batch.games.lazy().group_by("tournament").agg(
        pl.len().alias("game_rows"),
        *[(pl.col("game_type") == name).sum().alias(name) for name in TYPE_COLUMNS]).collect()
    per = batch.tournaments.select("tournament", "source", "name", "event_type", "rounds", "rounds_played").join(
        players, on="tournament", how="left", maintain_order="left").join(
        types, on="tournament", how="left", maintain_order="left").with_columns(
        pl.col(_COUNTS).fill_null(0).cast(pl.Int64),
        pl.col("tournament").is_in(team_event_ids(batch)).alias("_team"))
    return per, batch.warnings.group_by("source", maintain_order=True).agg(pl.len().alias("_n"))


def summary_from(parts: list[tuple[pl.DataFrame, pl.DataFrame]], *, by_tournament: bool = False) -> pl.DataFrame:
    """The summary of consecutive batches from their :func:`partial_summary` (ids already made unique)."""
    if not parts:
        parts = [partial_summary(Batch(empty("tournaments"), empty("players"), empty("games")))]
    per = pl.concat([p for p, _ in parts])
    w = pl.concat([w for _, w in parts]).group_by("source", maintain_order=True).agg(pl.col("_n").sum())
    if by_tournament:
        file_of = source_files()
        per = per.join(w, on="source", how="left", maintain_order="left").join(
            w.rename({"source": "_file", "_n": "_nfile"}), left_on=file_of, right_on="_file", how="left",
            maintain_order="left")
        warnings = pl.col("_n").fill_null(0) + pl.when(file_of != pl.col("source")).then(
            pl.col("_nfile").fill_null(0)).otherwise(0)
        return per.select("tournament", "source", "name", "event_type", "players",
                          pl.col("rounds").cast(pl.Int64), pl.col("rounds_played").cast(pl.Int64),
                          "game_rows", *TYPE_COLUMNS, warnings.cast(pl.Int64).alias("warnings"))
    return pl.DataFrame({
        "tournaments": [per.height],
        "players": [int(per["players"].sum())],
        "rounds": [int(per["rounds"].cast(pl.Int64).sum())],
        "game_rows": [int(per["game_rows"].sum())],
        **{name: [int(per[name].sum())] for name in TYPE_COLUMNS},
        "warnings": [int(w["_n"].sum())],
        "team_events": [int(per["_team"].sum())],
    }, schema={c: pl.Int64 for c in ["tournaments", "players", "rounds", "game_rows", *TYPE_COLUMNS,
                                      "warnings", "team_events"]})


def summary_table(batch: Batch, *, by_tournament: bool = False) -> pl.DataFrame:
    """One row for the whole batch, or one per tournament, of counts.

    Columns: ``tournaments`` (whole batch only), ``players``, ``rounds`` (planned rounds; summed over the
    batch), ``rounds_played`` (per tournament only), ``game_rows`` (player-rounds), one count per game type
    (``played``, ``forfeit_win``, ..., ``pending``) and ``warnings``. Per tournament, ``warnings`` counts the
    warnings of its source (for an event of a multi-event file, also those of the whole file). The whole-batch
    row ends with ``team_events`` (per tournament, ``event_type`` says ``team``).

    >>> from tbstats.model.games import empty
    >>> summary_table(Batch(empty("tournaments"), empty("players"), empty("games"))).row(0)[:4]
    (0, 0, 0, 0)
    """
    return summary_from([partial_summary(batch)], by_tournament=by_tournament)
