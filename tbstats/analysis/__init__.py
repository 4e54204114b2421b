"""Analyses over computed standings: what users ask of an archive.

- :mod:`~tbstats.analysis.compare`: how often configurations change winners and rankings;
- :mod:`~tbstats.analysis.audit`: recomputed standings against the ones the files declare;
- :mod:`~tbstats.analysis.explain`: one value round by round;
- :mod:`~tbstats.analysis.evaluate`: order quality on real archives against a strength proxy
  (:mod:`~tbstats.analysis.strength`), and whom tie-breaks favour (:mod:`~tbstats.analysis.fairness`);
- :mod:`~tbstats.analysis.quality`: order quality on simulated events with known strengths;
- :mod:`~tbstats.analysis.kendall`: Kendall distances between rankings;
- :mod:`~tbstats.analysis.teams`: the team audit and the team explanation.

Each works on one batch in memory; :mod:`tbstats.run` streams them over archives. Imports only from
:mod:`tbstats.model`, :mod:`tbstats.engine`, :mod:`tbstats.io` and :mod:`tbstats.simulation`.
"""
