"""When ``--workers N`` reads TRF files in worker processes: the sizes below which a run reads them here.

A light module (no multiprocessing): the command line decides from it whether to start the forkserver
(:func:`tbstats.run.processes.prestart`), and a run whether to read ahead here, before anything imports
:mod:`tbstats.run.processes` (multiprocessing and its friends: about 18 ms, paid by every ``--workers 2`` run of
fewer files before this module existed).
"""

from __future__ import annotations

from typing import Final

#: Items below which a run does not start workers: this process reads them before the workers are up.
FEWEST: Final = 4

#: TRF files from which a run with ``--workers 2`` gives them to a worker process: the command itself already
#: reads the next part on a thread while it maps one (:func:`tbstats.run.work.read_ahead`, 1.3 to 1.7
#: cores), so one worker process adds at most the rest of the other core, and costs its imports (about 0.35 CPU
#: s), its first part's warm-up and its results' trips. On files like real ones (the generation-3 archives of
#: benchmarks/README.md: names, ids, dates, 102/122/132 records, some files to decode), ``compute`` of the
#: club's files, threads / processes, min and median of 5-6 interleaved rounds (2026-12-04 00:35): 10,000
#: files 1.290 / 1.156 and 1.428 / 1.341 s (the mix's: 1.513 / 1.423 and 1.638 / 1.595 s), 7,000 files 1.238 /
#: 1.149 and 1.276 / 1.279 s (the mix's: 1.271 / 1.326 and 1.385 / 1.401 s), 5,000 files 0.884 / 0.937 and
#: 0.968 / 1.048 s, 3,000 files 0.682 / 0.802 and 0.766 / 0.944 s. (On the lighter files of the first
#: archives, processes paid from 15,000 files: RESULTS.md, 2026-12-03.)
PAIR_FILES: Final = 8000


def least_files(workers: int) -> int:
    """TRF files from which a run gives them to worker processes (and the command line starts the forkserver
    early, :func:`tbstats.run.processes.prestart`): :data:`PAIR_FILES` with 2 workers; with more, enough for
    :data:`FEWEST` items of 500 files (:func:`tbstats.run.work.item_files`), which ``workers - 1`` processes share
    with the command.

    >>> least_files(2), least_files(4)
    (8000, 1501)
    """
    return PAIR_FILES if workers == 2 else (FEWEST - 1) * 500 + 1
