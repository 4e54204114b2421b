"""The work on a part of the inputs: read it and map ``f`` over its batches (what runs on a thread, a worker
process or a Dask worker, :class:`Done`), and the two ways a command gets through TRF parts on its own: reading
the next part on a thread while it maps one (:func:`read_ahead`), or reading pieces in worker processes too
(:func:`read_in_processes`). :class:`tbstats.run.pipeline.Run` chooses among these and the executors.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import polars as pl

from tbstats.errors import FormatError
from tbstats.io import kinds, safe, sources
from tbstats.io.sources import Part
from tbstats.io.trf import ERROR_SCHEMA
from tbstats.model.batch import Batch, renumber, source_file, source_files
from tbstats.model.games import empty
from tbstats.run import portable, sizing

P = TypeVar("P")


@dataclass(frozen=True)
class Done(Generic[P]):
    ledger: pl.DataFrame
    runs: list[tuple[int, int, P]]   # tournaments, game rows, partial
    warnings: pl.DataFrame = field(default_factory=lambda: empty("warnings"))

    def __sizeof__(self) -> int:   # packed, on a Dask worker: its bytes, so that Dask does not move it lightly
        return object.__sizeof__(self) + portable.nbytes(self.runs) + portable.nbytes((self.ledger, self.warnings))


def work(part: Part, batch_size: int, f: Callable[[Batch], P]) -> Done[P]:
    """Read a part and map each of its batches (this is what runs on a worker)."""
    return work_kept(part, batch_size, f)[0]


def work_kept(part: Part, batch_size: int, f: Callable[[Batch], P]) -> tuple[Done[P], list[Batch]]:
    """:func:`work`, keeping the batches (on a Dask worker they stay there until :meth:`Run.apply`)."""
    return map_part(*sources.read_part(part, batch_size), f)


def map_part(ledger: pl.DataFrame, part: list[Batch], f: Callable[[Batch], P]) -> tuple[Done[P], list[Batch]]:
    """The done of a part read: ``f`` of each of its batches (``part``), with the part's ledger and warnings."""
    rejected: list[pl.DataFrame] = []
    done = [_map_rejecting(b, f, rejected) for b in part]
    kept = [b for b, _ in done]
    warnings = pl.concat([b.warnings for b in kept]) if kept else empty("warnings")
    return Done(pl.concat([ledger, *rejected]), [(b.n_tournaments, b.games.height, value) for b, value in done],
                 warnings), kept


def _map_rejecting(batch: Batch, f: Callable[[Batch], P], rejected: list[pl.DataFrame]) -> tuple[Batch, P]:
    """``f(batch)``, and the batch it ran on: a :class:`FormatError` that names a file of the batch (an event
    the engine finds broken: a 299 record naming nobody, team records that do not fit) rejects that file,
    as the reader would: its row joins ``rejected``, and ``f`` runs on the other tournaments."""
    while True:
        try:
            return batch, f(batch)
        except FormatError as exc:
            file = source_file(exc.path)
            bad = batch.tournaments.select(source_files() == file).to_series()
            if not bad.any():
                raise
            batch = renumber(batch.select(batch.tournaments.filter(~bad)["tournament"]), 0)
            rejected.append(pl.DataFrame([{"path": file, "line": exc.line, "column": exc.column,
                                           "reason": exc.reason}], schema=ERROR_SCHEMA, orient="row"))


def in_processes(parts: Sequence[Part], workers: int, client: Any) -> bool:
    """Whether ``--workers`` reads the parts in worker processes: when some are TRF files, whose reading holds
    the GIL (a columnar model is read and computed by numpy and polars, which release it: threads then).

    Each item of :func:`cut_for_processes` is then read and mapped by a worker or here
    (:func:`tbstats.run.ordering.ordered`) when ``f`` travels, the batches need not stay and there are enough
    items; else the pieces of the parts are read there and here and the batches mapped here
    (:func:`read_in_processes`), the very batches of one process."""
    return client is None and workers > 1 and any(p.items for p in parts) and worker_processes().available()


def few_trf(parts: Sequence[Part], workers: int, *, keep: bool = False) -> bool:
    """Whether the parts are TRF files only, too few for worker processes to pay
    (:func:`tbstats.run.sizing.processes_pay`; with ``keep`` the batches come back here): they are then read
    ahead here, as with one worker."""
    if any(not p.items for p in parts):   # a model: its parts go to threads
        return False
    trf = (item for part in parts for item in part.items if item.kind == "trf")
    counted = list(itertools.islice(trf, sizing.least_files(workers)))   # (enough counted)
    size = sources.trf_bytes(counted, len(counted), kinds.SIZE_SAMPLE)   # (archive members by their listed sizes)
    return not sizing.processes_pay(len(counted), [], workers, batches_back=keep, size=size)


def worker_processes() -> Any:
    """:mod:`tbstats.run.processes`, imported when worker processes may run (multiprocessing takes a while)."""
    from tbstats.run import processes

    return processes


def in_order() -> Any:
    """:mod:`tbstats.run.ordering`, imported when items run in worker processes (it imports
    :mod:`tbstats.run.processes`)."""
    from tbstats.run import ordering

    return ordering


def read_in_processes(parts: Sequence[Part], batch_size: int, f: Callable[[Batch], P], keep: bool,
                      workers: int) -> Iterator[Any]:
    """What :meth:`tbstats.run.pipeline.Executor.run` yields for :func:`work` (:func:`work_kept` with ``keep``),
    the pieces of the parts read by ``workers - 1`` processes and this one (:func:`tbstats.run.ordering.ordered`)
    and mapped here: the batches are the same as when read here, and ``f`` need not travel."""
    split = [sources.pieces(part) for part in parts]
    every = [piece for its in split for piece in its]
    if len(every) < sizing.FEWEST:   # too few to pay for starting workers: read ahead here, as one worker does
        yield from read_ahead(parts, batch_size, f, keep)
        return
    reads = in_order().ordered(sources.read_piece, every, workers)
    try:
        for part, its in zip(parts, split, strict=True):
            yield _one(sources.assemble(part, [next(reads) for _ in its], batch_size), f, keep)
    finally:
        reads.close()


#: A piece of a part being read (:func:`read_ahead`): the piece, its read, on the reading thread or done here, and
#: its files' bytes being read ahead (None for a model).
_Read = tuple[Part, Future[tuple[pl.DataFrame, Batch | None]], Future[list[Any]] | None]


def read_ahead(parts: Sequence[Part], batch_size: int, f: Callable[[Batch], P], keep: bool) -> Iterator[Any]:
    """What :meth:`tbstats.run.pipeline.Executor.run` yields for :func:`work` (:func:`work_kept` with ``keep``) with
    one worker: each part is mapped here while the next one is read on a thread (a model's parts are read by
    polars and pyarrow, which release the GIL, and so is much of a TRF file's parse); a piece that thread has
    not started when this one would wait is read here (:func:`_gathered`). One part is read ahead: memory holds
    two parts' batches at most, and the batches and results are those of reading each part in turn.

    A TRF piece's files are read from disk ahead of its parse on a third thread
    (:func:`tbstats.io.safe.read_regular_files`, whose system calls are made without the GIL): the reading
    thread, which bounds a command on two cores, then only parses. The bytes of the pieces of two parts are held
    at most (about 4 MB per 1,000 files)."""
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tbstats-read")
    disk = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tbstats-disk")
    reads: deque[tuple[Part, list[_Read]]] = deque()
    try:
        for part in parts:
            reads.append((part, [_submit(pool, disk, piece) for piece in sources.pieces(part)]))
            if len(reads) > 1:
                yield _one(_gathered(reads, batch_size), f, keep)
        while reads:
            yield _one(_gathered(reads, batch_size), f, keep)
    finally:   # an error or an early stop: the reads in flight end, the others never start (the parse first: it
        pool.shutdown(wait=True, cancel_futures=True)   # may wait for its files)
        disk.shutdown(wait=True, cancel_futures=True)


def _submit(pool: ThreadPoolExecutor, disk: ThreadPoolExecutor, piece: Part) -> _Read:
    """A piece's read on the reading thread, its files read ahead on the disk thread."""
    files = sources.piece_files(piece)
    bytes_ahead = disk.submit(safe.read_regular_files, files) if files else None
    return piece, pool.submit(_read_with, piece, bytes_ahead), bytes_ahead


def _read_with(piece: Part, bytes_ahead: Future[list[Any]] | None) -> tuple[pl.DataFrame, Batch | None]:
    """:func:`tbstats.io.sources.read_piece` with the files' bytes read ahead (if they were: else read now)."""
    if bytes_ahead is None or bytes_ahead.cancel():   # (cancelled: not started, read with the parse)
        return sources.read_piece(piece)
    return sources.read_piece(piece, bytes_ahead.result())


def _gathered(reads: deque[tuple[Part, list[_Read]]], batch_size: int) -> tuple[pl.DataFrame, list[Batch]]:
    """The first part of ``reads``, taken off it, from its pieces' reads (:func:`tbstats.io.sources.assemble`).

    The pieces of it the reading thread has not started are read here, the last first (that thread takes
    them from the first), and the others waited for: on two cores both threads read then, where this one
    would wait (the first part, and any part read more slowly than the one before it was mapped). The part
    after it is left to that thread, which reads it while this one maps: read here too, it leaves that thread
    idle meanwhile, no faster even with a second part ahead (benchmarks/RESULTS.md, 2026-12-03 13:42-14:45)."""
    part, pending = reads.popleft()
    for k in reversed(range(len(pending))):
        piece, future, bytes_ahead = pending[k]
        if future.cancel():
            done: Future[tuple[pl.DataFrame, Batch | None]] = Future()
            done.set_result(_read_with(piece, bytes_ahead))
            pending[k] = (piece, done, bytes_ahead)
    return sources.assemble(part, [future.result() for _, future, _ in pending], batch_size)


def _one(read: tuple[pl.DataFrame, list[Batch]], f: Callable[[Batch], P], keep: bool) -> Any:
    """What the executors yield for a part read (its ledger and batches): its done, with its batches if ``keep``."""
    done = map_part(*read, f)
    return done if keep else done[0]


def cut_for_processes(parts: Sequence[Part], workers: int) -> tuple[Part, ...]:
    """The parts cut into items of :func:`tbstats.run.sizing.item_files` TRF files, fewer where a part's pieces hold
    fewer (:func:`tbstats.io.sources.piece_size`: large files); a model's parts stay whole."""
    each = sizing.item_files(sum(item.kind == "trf" for part in parts for item in part.items), workers)
    return tuple(p for part in parts for p in sources.split(part, min(each, sources.piece_size(part))))
