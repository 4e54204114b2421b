"""The columnar model, the floor everything else stands on: a batch of whole tournaments as three tables.

- :mod:`~tbstats.model.games`: the batch (tournaments, players, games) and its column vocabulary;
- :mod:`~tbstats.model.columns` and :mod:`~tbstats.model.dense`: the players x rounds view the kernels read;
- :mod:`~tbstats.model.rules`: rule editions and scoring systems as data; :mod:`~tbstats.model.spec`: the
  tie-break spec grammar (``BH/C1``);
- :mod:`~tbstats.model.adjust`: ``299`` point adjustments; :mod:`~tbstats.model.teams`: the team model.
- :mod:`~tbstats.model.fingerprint`: each event's fingerprint, the key of its drawing of lots.

Nothing here imports from another floor of tbstats (only :mod:`tbstats.errors`).
"""
