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

import numpy as np
import polars as pl

from tbstats.model.batch import Batch
from tbstats.model.columns import is_value, lists_with

#: The records that make an event a team event.
TEAM_RECORDS: Final = ("013", "310")


def team_event_ids(batch: Batch) -> list[int]:
    """Tournaments that are team events: a team type (192/092) or team records (310/013)."""
    t = batch.tournaments
    ids: list[int] = t["tournament"].to_numpy()[team_events(t)].tolist()
    return ids


def team_events(tournaments: pl.DataFrame) -> np.ndarray:
    """Which rows of a tournaments table (``event_type``, ``records``) are team events, as :func:`team_event_ids`
    tells them."""
    out: np.ndarray = is_value(tournaments["event_type"], "team") | lists_with(
        tournaments["records"], tuple(code.encode() for code in TEAM_RECORDS))
    return out
