"""The team model (rules.md Section 9): team events built from a batch, all events at once.

:mod:`~tbstats.model.teams.records` parses the team records kept in ``tournaments.records`` (013, 310, 300,
320, 330, 240, 362), and :mod:`~tbstats.model.teams.batch` joins them with the player and game tables into
columnar team tables (:class:`~tbstats.model.teams.batch.TeamBatch`). The floors above carry the rest of team
events: :mod:`tbstats.engine.teams` (teams x rounds views, team tie-breaks, team standings),
:mod:`tbstats.analysis.teams` (audit, explain) and :mod:`tbstats.run.teams` (the archive commands).
"""
