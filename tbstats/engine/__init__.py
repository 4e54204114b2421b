"""The engine: unplayed-round rules, the tie-break registry and kernels, standings, and the entry that ties
them together (:func:`tbstats.engine.compute.compute`).

- :mod:`~tbstats.engine.unplayed`: the unplayed-round stage of each edition (dummies, caps, virtual opponents);
- :mod:`~tbstats.engine.tiebreaks`: one registry keyed by FIDE acronym, one small kernel per tie-break;
- :mod:`~tbstats.engine.standings`: ranking by points and an ordered list, each step on the groups still tied;
- :mod:`~tbstats.engine.configs`: named configurations (``NAME=EDITION:SPECS``) and their standings;
- :mod:`~tbstats.engine.declared`: each tournament's own list (``from-file``);
- :mod:`~tbstats.engine.teams`: team tie-breaks and team standings on the same dense view.

Imports only from :mod:`tbstats.model` (and :mod:`tbstats.errors`).
"""
