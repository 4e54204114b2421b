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
#: s), its first part's warm-up and its results' trips. On the mix archive (``compute``, one worker / two,
#: interleaved, best and median) it paid from 15,000 to 20,000 files once the reader got faster: 10,000 files
#: 1.511 / 1.504 s and 1.818 / 1.817 s (21 rounds; 1.559 / 1.676 s in a benchmarks/run.py run), 20,000 files
#: 2.050 / 1.901 s and 2.126 / 2.113 s, 30,000 files 3.227 / 2.813 s and 3.565 / 3.301 s (7 rounds).
PAIR_FILES: Final = 15000


def least_files(workers: int) -> int:
    """TRF files from which a run gives them to worker processes (and the command line starts the forkserver
    early, :func:`tbstats.run.processes.prestart`): :data:`PAIR_FILES` with 2 workers; with more, enough for
    :data:`FEWEST` items of 500 files (:func:`tbstats.run.work.item_files`), which ``workers - 1`` processes share
    with the command.

    >>> least_files(2), least_files(4)
    (15000, 1501)
    """
    return PAIR_FILES if workers == 2 else (FEWEST - 1) * 500 + 1
