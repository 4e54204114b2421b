"""The batch of whole tournaments as the one unit of work: a map over batches, run here, on threads or on Dask.

Inputs are planned into parts (:func:`tbstats.io.sources.plan`: paths and tournament-id ranges, never data).
A *map* function ``f(batch) -> partial`` runs on each batch of at most ``batch_size`` tournaments, where the
part is read: in this process, on a thread, in a worker process (TRF parts with ``workers > 1``, see
:func:`tbstats.run.work.in_processes`), or in a Dask worker process that reads its own part. Partials
come back in input order, each with the global id of its batch's first tournament (a batch is numbered from
0 where it is read; the caller offsets the ids it keeps), and the caller folds them::

    run = Run(inputs, batch_size=2000)
    acc = None
    for mapped in run.map(f):
        acc = combine(acc, mapped.shifted())

At most a few parts per worker are in flight, so memory is bounded by the batch size, not the archive.
``Run`` also keeps the ledger and file counts (:class:`tbstats.io.sources.Tally`); in raise mode the first
problem, in input order, raises :class:`tbstats.errors.FormatError`.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Final, Generic, TypeVar, cast, overload

import polars as pl

from tbstats.errors import TbstatsError
from tbstats.io import batches, sources
from tbstats.io.kinds import MAX_MEMBER_BYTES
from tbstats.io.progress import Progress
from tbstats.io.sources import OnError, Part, Tally, anchored
from tbstats.model.batch import Batch
from tbstats.model.games import empty
from tbstats.run import portable, sizing
from tbstats.run.work import (
    Done,
    cut_for_processes,
    few_trf,
    in_order,
    in_processes,
    read_ahead,
    read_in_processes,
    work,
    work_kept,
    worker_processes,
)

P = TypeVar("P")
T = TypeVar("T")


@dataclass(frozen=True)
class Mapped(Generic[P]):
    """The partial result of one batch: ``first_id`` is the global id of its first tournament."""

    value: P
    first_id: int
    tournaments: int
    game_rows: int
    kept: Any = None   # with ``Run.map(f, keep=True)``: where the batch itself is, for :meth:`Run.apply`
    moves: int | None = field(default=None, repr=False)   # on Dask with ``keep``: how far its work moves the bar


def _done_of(kept: tuple[Done[P], list[Batch]]) -> Done[P]:
    return kept[0]


def _then_part(done: Done[Any], first_id: int, then: Callable[[Any, int], T]) -> Done[T]:
    """A done with ``then(value, id of its batch's first tournament)`` for each value (on a Dask worker, where the
    done waits packed: each value is unpacked there, and only ``then``'s results travel)."""
    runs, first = [], first_id
    for tournaments, rows, value in done.runs:
        runs.append((tournaments, rows, then(portable.unpack(value), first)))
        first += tournaments
    return Done(done.ledger, runs, done.warnings)   # (packed as they came)


def _next_first(first_id: int, done: Done[Any]) -> int:
    """The global id of the first tournament after a part's done (a link of the chain of ids on Dask)."""
    return first_id + sum(tournaments for tournaments, _, _ in done.runs)


def _apply_packed(kept: Any, index: int, g: Callable[..., T], args: tuple[Any, ...]) -> Any:
    """``g`` of a kept batch (:meth:`Run.apply`), packed, on its Dask worker; the result packed."""
    return portable.pack(g(portable.unpack(kept[1][index]), *args))


def nothing(batch: Batch) -> None:
    """The map function of a run that only keeps its batches where they were read (``Run.map(nothing,
    keep=True)``, then :meth:`Run.apply`): nothing travels back."""
    return None


def shift_ids(df: pl.DataFrame, offset: int, column: str = "tournament") -> pl.DataFrame:
    """A table with its tournament ids moved on by ``offset``.

    >>> shift_ids(pl.DataFrame({"tournament": [0, 1]}), 5)["tournament"].to_list()
    [5, 6]
    """
    if not offset or column not in df.columns:
        return df
    return df.with_columns(pl.col(column) + offset)


# ---------------------------------------------------------------------------------------------- executors

def _ordered(submit: Callable[[Part], Any], result: Callable[[Any], Done[P]], parts: Iterable[Part],
             window: int) -> Iterator[Done[P]]:
    """Submit parts keeping at most ``window`` in flight, and yield their results in submission order."""
    pending: deque[Any] = deque()
    for part in parts:
        pending.append(submit(part))
        if len(pending) >= window:
            yield result(pending.popleft())
    while pending:
        yield result(pending.popleft())


@dataclass
class Executor:
    """Where parts are read and mapped: on ``workers`` threads, or on a Dask client (for TRF parts read in worker
    processes see :func:`read_in_processes`; for one worker, or TRF files too few for worker processes,
    :func:`read_ahead`)."""

    workers: int = 1
    client: Any = None

    def run(self, fn: Callable[[Part], Any], parts: Sequence[Part], keep: bool = False,
            then: Callable[[Any, int], Any] | None = None) -> Iterator[Any]:
        """``fn`` of every part, in order; with ``keep`` (``fn`` returns a done and its batches) on Dask only the
        done comes back, with the future that keeps the batches on their worker. ``then`` (``fn`` returns a done)
        is :meth:`Run.map`'s, applied on Dask only: there each part's done waits on its worker for the id of its
        first tournament, which a chain of small tasks counts (no round trip here), and only ``then``'s results
        travel."""
        if self.client is not None:   # results travel packed (tbstats.run.portable): a polars frame never does
            futures = self.client
            first: Any = 0   # the id of the next part's first tournament: a number, then a future
            here = os.getcwd()   # (a worker reads paths typed relative to this command's directory, not its own)

            def submit(part: Part) -> Any:
                nonlocal first
                fut = futures.submit(portable.call, fn, anchored(part, here), pure=False)
                if then is None:
                    return fut
                out = futures.submit(portable.call, _then_part, fut, first, then, pure=False, priority=1)
                first = futures.submit(_next_first, first, fut, pure=False, priority=2)
                return out

            def result(fut: Any) -> Any:
                if keep:
                    back = futures.submit(_done_of, fut, pure=False, priority=1)
                    return portable.unpack(remote_result(back)), fut
                return portable.unpack(remote_result(fut))

            n = max(len(futures.nthreads()), 1)
            # a kept value stays on its worker packed too, should Dask move it to another worker
            yield from _ordered(submit, result, parts, 2 * n)
        else:
            with ThreadPoolExecutor(max_workers=self.workers) as pool:
                try:
                    yield from _ordered(lambda p: pool.submit(fn, p), Future.result, parts, 2 * self.workers)
                finally:
                    pool.shutdown(wait=True, cancel_futures=True)


def remote_result(fut: Any) -> Any:
    """A Dask future's result. A scheduler or worker that cannot load the task (another version of tbstats or
    of its libraries there), or a part whose workers died each time it ran (``KilledWorker``, after Dask's
    ``allowed-failures``), is a :class:`TbstatsError` saying so, not a traceback."""
    try:
        return fut.result()
    except Exception as exc:
        if type(exc).__name__ == "KilledWorker":   # the scheduler gave up on the part: its workers kept dying
            raise TbstatsError("a Dask worker died while running a part of the inputs, each time the scheduler "
                               "tried it (out of memory, or killed); see the workers' logs, give them more memory "
                               "or use a smaller --batch-size, and run again") from None
        if not isinstance(exc, RuntimeError | AttributeError | ImportError):
            raise
        if isinstance(exc, TbstatsError) or not ("deserializ" in str(exc).lower() or isinstance(exc, ImportError)
                                                 or "Can't get attribute" in str(exc)):
            raise
        raise TbstatsError("the Dask scheduler or a worker could not load tbstats' task: start them from an "
                           "environment with this version of tbstats (restart them after upgrading it); "
                           f"Dask said: {str(exc).strip().splitlines()[0]}") from None


#: Seconds a command waits for a scheduler with no worker to get one before it stops with advice.
WAIT_FOR_WORKERS: Final = 10


@contextlib.contextmanager
def scheduler_client(scheduler: str | None) -> Iterator[Any]:
    """A Dask client for ``--scheduler``: ``local`` or ``local:N`` starts a LocalCluster of N worker
    processes (one thread each, default 2), anything else is the address of a running scheduler."""
    if scheduler is None:
        yield None
        return
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise TbstatsError("--scheduler needs Dask: pip install 'tbstats[dask]'") from None
    if scheduler == "local" or scheduler.startswith("local:"):
        count = scheduler.partition(":")[2] or "2"
        if not count.isdigit() or int(count) < 1:
            raise TbstatsError(f"--scheduler {scheduler!r}: expected local or local:N with N >= 1")
        cluster = LocalCluster(n_workers=int(count), threads_per_worker=1, processes=True,  # type: ignore[no-untyped-call, unused-ignore]
                               dashboard_address=":0", silence_logs=50)
        with cluster, Client(cluster) as client:  # type: ignore[no-untyped-call, unused-ignore]
            yield client
        return
    try:
        client = Client(scheduler, timeout=10)  # type: ignore[no-untyped-call, unused-ignore]
    except OSError as exc:
        raise TbstatsError(f"--scheduler {scheduler}: cannot reach the Dask scheduler ({exc})") from None
    with client:
        try:   # without a worker the tasks would wait for one for ever
            client.wait_for_workers(1, timeout=WAIT_FOR_WORKERS)
        except TimeoutError:
            raise TbstatsError(f"--scheduler {scheduler}: the scheduler has no workers; start them with "
                               f"'dask worker {scheduler} --nworkers 2 --nthreads 1'") from None
        yield client


# -------------------------------------------------------------------------------------------------- a run

#: Batches of a model a Dask task reads and maps at least: each task has a fixed cost on a cluster (the
#: scheduler's round trips, the chain of ids, a result to send), which larger tasks share.
CLUSTER_BATCHES: Final = 3


@dataclass
class Run(Tally):
    """A map over the batches of some inputs, with the ledger and counts of a load; iterate ``map(f)``."""

    inputs: Sequence[str] = ()
    batch_size: int = 2000
    batch_files: int = 2000
    workers: int = 1
    client: Any = None
    progress: bool = False
    label: str = ""   # before the progress bar
    tournaments: int = 0
    game_rows: int = 0
    max_member_bytes: int = MAX_MEMBER_BYTES
    _warnings: list[pl.DataFrame] = field(default_factory=list, repr=False)
    _started: bool = field(default=False, repr=False)
    _bar: Progress = field(default_factory=Progress, repr=False)
    _awaited: int = field(default=0, repr=False)   # kept batches on Dask whose work the bar waits for

    @property
    def warnings(self) -> pl.DataFrame:
        """The reader warnings of the batches read so far (``WARNING_SCHEMA`` rows), in input order."""
        return pl.concat([empty("warnings"), *self._warnings])

    @overload
    def map(self, f: Callable[[Batch], P], *, keep: bool = False, then: None = None) -> Iterator[Mapped[P]]: ...

    @overload
    def map(self, f: Callable[[Batch], Any], *, keep: bool = False,
            then: Callable[[Any, int], T]) -> Iterator[Mapped[T]]: ...

    def map(self, f: Callable[[Batch], Any], *, keep: bool = False,
            then: Callable[[Any, int], Any] | None = None) -> Iterator[Mapped[Any]]:
        """``f`` applied to every batch, results in input order (a run can be mapped once).

        With ``keep`` each result also tells where its batch is (``Mapped.kept``): :meth:`apply` then runs a
        function on the batch there (on a Dask worker, the batch never travels).

        ``then(value, first_id)`` (module level: it travels) finishes each value once the global id of its batch's
        first tournament is known (what comes before it is counted): on a Dask worker, where the value waits for
        it, so that only ``then``'s result travels (the text of an output piece with its ids, not its table);
        here for the other executors. A result's ``value`` is then ``then``'s."""
        if then is not None and keep:
            raise TbstatsError("map: then and keep do not go together")
        if self._started:
            raise TbstatsError("a Run can be mapped only once")
        self._started = True
        least = None if self.client is None else max(batches.UNIT_TOURNAMENTS, CLUSTER_BATCHES * self.batch_size)
        plan = sources.plan(self.inputs, batch_size=self.batch_size, batch_files=self.batch_files,
                            max_member_bytes=self.max_member_bytes, part_size=least)
        bar = sources.progress_of(plan, self.progress, self.label)
        part_work = functools.partial(work_kept if keep else work, batch_size=self.batch_size, f=f)
        parts = plan.parts
        results: Iterator[Any]
        if self.client is None and (self.workers == 1 or few_trf(parts, self.workers, keep=keep)):
            results = read_ahead(parts, self.batch_size, f, keep)   # here, the next part read on a thread meanwhile
        elif not in_processes(parts, self.workers, self.client):
            results = Executor(self.workers, self.client).run(part_work, parts, keep, then)
        elif not keep and worker_processes().pickles(part_work) and len(
                split := cut_for_processes(parts, self.workers)) >= sizing.FEWEST:
            # parts of TRF files read and mapped there or here: a result is the same for any cut into batches
            # (only the batches kept by ingest show theirs: they take the other way)
            parts = split
            results = in_order().ordered(part_work, parts, self.workers)
        else:   # pieces read there, batches mapped here
            results = read_in_processes(parts, self.batch_size, f, keep, self.workers)
        later = keep and self.client is not None   # on Dask a kept batch's work is done when apply's result comes
        self._bar, self._awaited, finished = bar, 0, False
        here = then is not None and self.client is None   # (on Dask, ``then`` ran where each part was mapped)
        try:
            for part, got in zip(parts, results, strict=True):
                done, where = got if keep else (got, None)
                self.add(part, done.ledger)
                if done.warnings.height:
                    self._warnings.append(done.warnings)
                moves = sources.progress_shares(plan, part, [t for t, _, _ in done.runs])
                if not done.runs:
                    bar.advance(moves[0])
                for k, (tournaments, rows, value) in enumerate(done.runs):
                    self._awaited += later
                    yield Mapped(then(value, self.tournaments) if here else value,  # type: ignore[misc]
                                 self.tournaments, tournaments, rows, (where, k) if keep else None,
                                 moves[k] if later else None)
                    self.tournaments += tournaments
                    self.game_rows += rows
                    bar.advance(0 if later else moves[k], rows)
            finished = True
        finally:   # an error, or a caller that stops early: the work in flight is dropped now, not at exit
            close = getattr(results, "close", None)
            if close is not None:
                close()
            if not (finished and self._awaited):   # else the last result awaited closes the bar
                bar.close()


    def apply(self, mapped: Mapped[Any], g: Callable[..., T], *args: Any) -> Callable[[], T]:
        """Run ``g(batch, *args)`` where the batch of ``mapped`` (from ``map(f, keep=True)``) is: here, or on
        its Dask worker (submitted at once); call the returned function for the result (it waits)."""
        if mapped.kept is None:
            raise TbstatsError("apply needs a result of map(f, keep=True)")
        where, k = mapped.kept
        if self.client is not None:
            fut = self.client.submit(_apply_packed, where, k, g, args, pure=False)

            def result() -> T:
                value = cast(T, portable.unpack(remote_result(fut)))
                if mapped.moves is not None:   # the bar moves when the batch's work is done
                    self._bar.advance(mapped.moves)
                    self._awaited -= 1
                    if not self._awaited:
                        self._bar.close()
                return value

            return result
        value = g(where[k], *args)
        return lambda: value


def run(inputs: Sequence[str], f: Callable[[Batch], P], *, on_error: OnError = "collect", batch_size: int = 2000,
        batch_files: int = 2000, workers: int = 1, client: Any = None) -> tuple[list[Mapped[P]], Run]:
    """Map ``f`` over the batches of ``inputs`` and return every partial in order, with the run's counts.

    ``client`` is a ``dask.distributed.Client``: each part is then read and mapped by a Dask worker.
    """
    r = Run(on_error, inputs=inputs, batch_size=batch_size, batch_files=batch_files, workers=workers,
            client=client)
    return list(r.map(f)), r
