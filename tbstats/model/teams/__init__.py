"""Team events (rules.md Section 9): the team model built from a batch, team scores and team tie-breaks.

:mod:`tbstats.teams.records` parses the team records kept in ``tournaments.records`` (013, 310, 300, 320,
330, 240, 362) of all events at once, and :mod:`tbstats.teams.model` joins them with the player and game
tables into columnar team tables; :mod:`tbstats.teams.dense`
turns them into teams x rounds views on match points and game points, on which the individual kernels and
the team kernels of :mod:`tbstats.teams.tiebreaks` run; :mod:`tbstats.teams.standings` ranks the teams.
"""
