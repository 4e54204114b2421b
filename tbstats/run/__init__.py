"""How work runs over archives: batches of whole tournaments, here, on threads, worker processes or Dask.

- :mod:`~tbstats.run.pipeline`: the batch as the unit of work (:class:`~tbstats.run.pipeline.Run`);
- :mod:`~tbstats.run.processes`: worker processes for TRF reading; :mod:`~tbstats.run.memory`: the allocator;
- :mod:`~tbstats.run.commands` and :mod:`~tbstats.run.teams`: the archive commands as a per-batch map and an
  in-order fold;
- :mod:`~tbstats.run.checks`: warnings about a run; :mod:`~tbstats.run.info`: counts that describe inputs.

Imports from every floor below (model, engine, io, simulation, analysis), never from report or cli.
"""
