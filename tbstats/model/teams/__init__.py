"""The team model (rules.md Section 9): team events built from a batch, all events at once.

:mod:`~tbstats.model.teams.records` parses the team records kept in ``tournaments.records`` (013, 310, 300,
320, 330, 240, 362), and :mod:`~tbstats.model.teams.batch` joins them with the player and game tables into
columnar team tables (:class:`~tbstats.model.teams.batch.TeamBatch`). The floors above carry the rest of team
events: :mod:`tbstats.engine.teams` (teams x rounds views, team tie-breaks, team standings),
:mod:`tbstats.analysis.teams` (audit, explain) and :mod:`tbstats.run.teams` (the archive commands).

Which events are team events (:func:`team_event_ids`) is told here, without loading the team model: individual
work asks it of every batch.
"""

from __future__ import annotations

from typing import Final

import polars as pl

from tbstats.model.batch import Batch

#: The records that make an event a team event.
TEAM_RECORDS: Final = ("013", "310")


def team_event_ids(batch: Batch) -> list[int]:
    """Tournaments that are team events: a team type (192/092) or team records (310/013)."""
    t = batch.tournaments
    has_teams = t["records"].list.eval(pl.element().str.slice(0, 3).is_in(TEAM_RECORDS)).list.any()
    return t.filter((pl.col("event_type") == "team") | has_teams.fill_null(False))["tournament"].to_list()
