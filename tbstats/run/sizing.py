"""When ``--workers N`` reads TRF files in worker processes: the sizes below which a run reads them here.

A light module (no multiprocessing): the command line decides from it whether to start its worker
processes at once (:func:`tbstats.run.processes.prestart`), and a run whether to read ahead here, before
anything imports :mod:`tbstats.run.processes` (multiprocessing and its friends: about 18 ms, paid by every
``--workers 2`` run of fewer files before this module existed).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from tbstats.io import kinds
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

#: Bytes of TRF text from which fewer files go to worker processes too, when they make at least :data:`FEWEST`
#: items (:func:`items`): the parse grows with the text, so larger events pay sooner. Threads / processes, min and
#: median of 8 interleaved rounds (2026-12-04 about 02:15, load 0.2-0.9; the pool started with the forkserver):
#: the club's first 5,000 files (19.4 MB) 0.728 / 0.749 and 0.770 / 0.800 s; 7,000 (27.1 MB) 0.859 / 0.850 and
#: 0.907 / 0.894; events of 7-70 players spread wider (236 game rows each, like the archive of issue 22), 3,000
#: files (16.7 MB) 0.706 / 0.688 and 0.734 / 0.754, 4,000 (22.4 MB) 0.779 / 0.752 and 0.859 / 0.813, 6,000 (33.5
#: MB) 0.925 / 0.897 and 0.977 / 0.924. Files of many events, or of very large ones, make items of fewer files
#: (:func:`tbstats.io.kinds.files_a_piece`); `compute --workers 2` of such archives, before / after they went to
#: processes from this size too, wall min and median of 6 interleaved rounds (2026-12-05 about 03:15, load 1.0-1.7,
#: benchmarks/RESULTS.md): the 10k mix in 10 files of 1,000 events (47 MB) 0.720 / 0.563 and 0.764 / 0.604 s; 306
#: events of 600 players x 13 rounds (40 MB) 0.496 / 0.407 and 0.504 / 0.419; 1,210 of 150 x 11 (38 MB) 0.465 /
#: 0.414 and 0.494 / 0.437; 204 of 600 x 13 (27 MB) 0.450 / 0.401 and 0.465 / 0.419; 153 of them (20 MB, below
#: the size: threads both) 0.361 / 0.373 and 0.383 / 0.388.
PAIR_BYTES: Final = 20 << 20

#: Items a process gets at least, where a run is too small for items of :data:`~tbstats.io.kinds.READ_FILES`:
#: fewer, larger items pay their fixed costs fewer times; more even out better at the end. Three against four
#: (2026-12-04 04:52, load 1.8-2.7, `compute --workers 2`, 12 interleaved rounds twice): the club-wide 6,000 files
#: (items of 1,000 against 750) CPU 1,555 -> 1,506 and 1,550 -> 1,501 ms, wall 0.908 -> 0.890 and 0.902 -> 0.893 s
#: (medians); 4,000 such files (667 against 500; 10 rounds) 1,210 -> 1,180 ms, 0.738 -> 0.711 s.
ITEMS_A_PROCESS: Final = 3


def least_files(workers: int) -> int:
    """TRF files from which a run always gives them to worker processes (and the command line starts them
    early, :func:`tbstats.run.processes.prestart`): :data:`PAIR_FILES` with 2 workers; with more, enough
    for :data:`FEWEST` items of 500 files (:func:`item_files`), which ``workers - 1`` processes share with the
    command.

    >>> least_files(2), least_files(4)
    (8000, 1501)
    """
    return PAIR_FILES if workers == 2 else (FEWEST - 1) * 500 + 1


def item_files(files: int, workers: int) -> int:
    """TRF files in one item of a ``--workers`` run of ``files`` TRF files: :data:`~tbstats.io.kinds.READ_FILES`
    (an item's fixed costs, the reader's, the batch's and the result's trip, are shared by more files), fewer in a
    run too small for :data:`ITEMS_A_PROCESS` items a process, where the last items would not even out, but not
    below half of it: a run of fewer than :data:`FEWEST` items starts no worker processes (it would end before
    they are up). An item is also never more than a piece (:func:`tbstats.run.work.cut_for_processes`).

    >>> item_files(30_000, 2), item_files(4_000, 2), item_files(1_000, 2)
    (1000, 667, 500)
    """
    return max(kinds.READ_FILES // 2, min(kinds.READ_FILES, -(-files // (ITEMS_A_PROCESS * workers))))


def items(files: int, mean: float, workers: int) -> int:
    """How many items a ``--workers`` run of ``files`` TRF files of ``mean`` bytes each is cut into: of
    :func:`item_files` files, fewer where a piece holds fewer (:func:`tbstats.io.kinds.files_a_piece`).

    >>> items(2_000, 5_000, 2), items(1_200, 5_000, 2), items(10, 5 << 20, 2)
    (4, 3, 10)
    """
    return -(-files // min(item_files(files, workers), kinds.files_a_piece(mean))) if files else 0


def processes_pay(files: int, paths: Sequence[str], workers: int, *, batches_back: bool = False,
                  size: float | None = None) -> bool:
    """Whether ``files`` TRF files (counted up to :func:`least_files`) go to worker processes with ``workers``: from
    :func:`least_files`, and from fewer when they hold :data:`PAIR_BYTES` (``size``, else told from ``paths``, those
    of them on disk: :func:`estimated_bytes`) in at least :data:`FEWEST` items (:func:`items`). Never with 2 workers
    when the batches come back to the command (``batches_back``: ingest, and evaluate's second pass), which then
    maps them all itself and has no core to spare: ``ingest --workers 2``, process / thread, min and median of
    interleaved rounds (2026-12-04 02:45-03:00): the wide 6,000 files 2.378 / 2.203 and 2.424 / 2.274 s, the club's
    10,000 2.676 / 2.519 and 2.734 / 2.659, the mix's 3.353 / 3.286 and 3.571 / 3.379, both 6.521 / 6.099 and 6.539
    / 6.297.

    >>> processes_pay(8000, [], 2), processes_pay(7999, [], 2), processes_pay(1501, [], 3)
    (True, False, True)
    >>> processes_pay(10**6, [], 2, batches_back=True), processes_pay(1501, [], 3, batches_back=True)
    (False, True)
    """
    if workers == 2 and batches_back:
        return False
    if files >= least_files(workers):
        return True
    size = estimated_bytes(paths, files) if size is None else size
    return size >= PAIR_BYTES and items(files, size / files, workers) >= FEWEST
