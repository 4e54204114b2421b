"""When ``--workers N`` reads TRF files in worker processes: the sizes below which a run reads them here.

A light module (no multiprocessing): the command line decides from it whether to start its worker
processes at once (:func:`tbstats.run.processes.prestart`), and a run whether to read ahead here, before
anything imports :mod:`tbstats.run.processes` (multiprocessing and its friends: about 18 ms, paid by every
``--workers 2`` run of fewer files before this module existed).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from tbstats.io.kinds import estimated_bytes

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

#: Bytes of TRF text from which fewer files (at least :data:`PAIR_FEWEST_FILES`) go to a worker process too: the
#: parse grows with the text, so larger events pay sooner. Threads / processes, min and median of 8 interleaved
#: rounds (2026-12-04 about 02:15, load 0.2-0.9; the pool started with the forkserver): the club's first 5,000 files
#: (19.4 MB) 0.728 / 0.749 and 0.770 / 0.800 s; 7,000 (27.1 MB) 0.859 / 0.850 and 0.907 / 0.894; events of 7-70
#: players spread wider (236 game rows each, like the archive of issue 22), 3,000 files (16.7 MB) 0.706 / 0.688 and
#: 0.734 / 0.754, 4,000 (22.4 MB) 0.779 / 0.752 and 0.859 / 0.813, 6,000 (33.5 MB) 0.925 / 0.897 and 0.977 / 0.924.
PAIR_BYTES: Final = 20 << 20

#: The fewest TRF files a worker process takes at all (:data:`FEWEST` items of 500 files).
PAIR_FEWEST_FILES: Final = FEWEST * 500


def least_files(workers: int) -> int:
    """TRF files from which a run always gives them to worker processes (and the command line starts them
    early, :func:`tbstats.run.processes.prestart`): :data:`PAIR_FILES` with 2 workers; with more, enough
    for :data:`FEWEST` items of 500 files (:func:`tbstats.run.work.item_files`), which ``workers - 1`` processes
    share with the command.

    >>> least_files(2), least_files(4)
    (8000, 1501)
    """
    return PAIR_FILES if workers == 2 else (FEWEST - 1) * 500 + 1


def processes_pay(files: int, paths: Sequence[str], workers: int, *, batches_back: bool = False) -> bool:
    """Whether ``files`` TRF files (counted up to :func:`least_files`) go to worker processes with ``workers``:
    from :func:`least_files`, and with 2 workers from :data:`PAIR_FEWEST_FILES` when ``paths`` (those of them
    on disk) hold :data:`PAIR_BYTES` (:func:`estimated_bytes`). Never with 2 workers when the batches come back
    to the command (``batches_back``: ingest, and evaluate's second pass), which then maps them all itself and
    has no core to spare: ``ingest --workers 2``, process / thread, min and median of interleaved rounds
    (2026-12-04 02:45-03:00): the wide 6,000 files 2.378 / 2.203 and 2.424 / 2.274 s, the club's 10,000 2.676 /
    2.519 and 2.734 / 2.659, the mix's 3.353 / 3.286 and 3.571 / 3.379, both 6.521 / 6.099 and 6.539 / 6.297.

    >>> processes_pay(8000, [], 2), processes_pay(7999, [], 2), processes_pay(1501, [], 3)
    (True, False, True)
    >>> processes_pay(10**6, [], 2, batches_back=True), processes_pay(1501, [], 3, batches_back=True)
    (False, True)
    """
    if workers == 2 and batches_back:
        return False
    if files >= least_files(workers):
        return True
    return workers == 2 and files >= PAIR_FEWEST_FILES and estimated_bytes(paths, files) >= PAIR_BYTES
