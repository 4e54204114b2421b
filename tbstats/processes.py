"""Worker processes for work that holds the GIL: TRF text is parsed by Python and numpy in small steps, so
threads cannot read two pieces of an archive at once, but processes can.

:func:`ordered` runs a function over items on ``workers - 1`` worker processes *and* in this process: in
order, an item goes to a worker while the workers hold fewer than :data:`IN_HAND` each, else it runs here;
the results come back in input order. With ``--workers N`` on TRF inputs (:func:`tbstats.pipeline.
read_in_processes`) the items are pieces of 500 files: only their names travel to a worker, and the batch it
read comes back (Arrow buffers, about 20 ms per 500 files), to be mapped here.

The workers are forked from a ``forkserver`` that imported the reader once (a fork of a process that
already runs polars' threads could deadlock; a fresh ``spawn`` pays the imports for every worker). The
command line starts it first (:func:`prestart`), so that it imports while the command does; until the
workers are up, this process reads the first pieces itself. The pool is kept for the next run of the same
process, and shut down at exit (or by :func:`shutdown`).

As with any Python multiprocessing, a script that runs tbstats with ``workers > 1`` must guard its main
code with ``if __name__ == "__main__":`` (the workers import the main module).
"""

from __future__ import annotations

import multiprocessing
import threading
from collections import deque
from collections.abc import Callable, Generator, Iterable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Final, TypeVar

from tbstats.errors import TbstatsError

T = TypeVar("T")
R = TypeVar("R")

#: Modules the forkserver imports once, so that a worker starts with them: the reader of the pieces.
PRELOAD: Final = ["tbstats.io.sources"]

#: Items a worker holds at once (one running, the others queued: it keeps reading while this process maps
#: a batch), and the results held here at most, waiting for an earlier one.
IN_HAND: Final = 4
HELD: Final = 8

#: Items below which a run does not start workers: this process reads them before the workers are up.
FEWEST: Final = 4


def available() -> bool:
    """Whether worker processes can start here: a forkserver exists on this platform, and this process is
    not itself a daemon (a Dask or multiprocessing worker cannot have children)."""
    return ("forkserver" in multiprocessing.get_all_start_methods()
            and not multiprocessing.current_process().daemon)


def prestart() -> None:
    """Start the forkserver now, in the background (it imports tbstats while this process imports the
    command): a command line that asks for worker processes calls this before anything else."""
    if available():
        multiprocessing.set_forkserver_preload(PRELOAD)
        from multiprocessing import forkserver

        forkserver.ensure_running()


class _Pool:
    """A process pool that starts in the background: :attr:`ready` is set once its workers are up."""

    def __init__(self, workers: int) -> None:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(PRELOAD)   # kept, if the forkserver already runs
        self.workers = workers
        self.executor = ProcessPoolExecutor(max_workers=workers, mp_context=context)
        self.ready = threading.Event()
        self.failed: BaseException | None = None
        threading.Thread(target=self._start, name="tbstats-processes", daemon=True).start()

    def _start(self) -> None:
        try:   # one task per worker starts them all; submit blocks while a worker starts
            for future in [self.executor.submit(int) for _ in range(self.workers)]:
                future.result()
        except BaseException as exc:  # kept, and raised by the run that uses the pool
            self.failed = exc
        self.ready.set()


_POOL: _Pool | None = None
_LOCK = threading.Lock()


def pool(workers: int) -> _Pool:
    """The pool of ``workers`` processes of this process, started now if there is none of that size."""
    global _POOL
    with _LOCK:
        if _POOL is not None and (_POOL.workers != workers or _POOL.failed is not None):
            _POOL.executor.shutdown(wait=False, cancel_futures=True)
            _POOL = None
        if _POOL is None:
            _POOL = _Pool(workers)
        return _POOL


def shutdown() -> None:
    """Stop the worker processes (they are started again when a run needs them)."""
    global _POOL
    with _LOCK:
        if _POOL is not None:
            _POOL.executor.shutdown(wait=True, cancel_futures=True)
            _POOL = None


class _Here:
    """An item run in this process, held in the queue like a finished future: its error too is raised only
    when its turn comes, so that the first error in input order is the one raised."""

    def __init__(self, fn: Callable[[Any], Any], item: Any) -> None:
        self.error: Exception | None = None
        try:
            self.value = fn(item)
        except Exception as exc:  # raised by result(), in order
            self.error = exc

    def done(self) -> bool:
        return True

    def result(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.value


class _Queue(deque[tuple["Future[Any] | _Here", Any]]):
    """The items in hand, in order: a worker's future or a result made here, each with its item."""

    def away(self) -> int:
        """Items a worker holds and has not finished."""
        return sum(isinstance(p, Future) and not p.done() for p, _ in self)

    def steal(self, fn: Callable[[Any], Any]) -> bool:
        """Rather than wait: take back the last item a worker has not started, and run it here."""
        for k in range(len(self) - 1, -1, -1):
            entry, item = self[k]
            if isinstance(entry, Future) and entry.cancel():
                self[k] = (_Here(fn, item), item)
                return True
        return False


def _result(item: Future[Any] | _Here) -> Any:
    try:
        return item.result()
    except BrokenProcessPool:
        shutdown()
        raise TbstatsError("a worker process of --workers died (out of memory, or killed); run again, with "
                           "fewer workers") from None


def ordered(fn: Callable[[T], R], items: Iterable[T], workers: int) -> Generator[R, None, None]:
    """``fn`` of every item, in order, on ``workers - 1`` processes and this one (see the module's text).

    ``fn`` and the items must pickle (module-level functions, ``functools.partial`` of them)."""
    if workers < 2:
        raise TbstatsError(f"ordered needs at least 2 workers, not {workers}")
    here = pool(workers - 1)
    pending = _Queue()
    try:
        for item in items:
            if here.failed is not None:
                raise TbstatsError(f"--workers {workers}: the worker processes did not start ({here.failed!r})")
            if here.ready.is_set() and pending.away() < IN_HAND * here.workers:
                pending.append((here.executor.submit(fn, item), item))
            else:
                pending.append((_Here(fn, item), item))
            while pending and (pending[0][0].done() or len(pending) > HELD):
                if pending[0][0].done() or not pending.steal(fn):
                    yield _result(pending.popleft()[0])
        while pending:   # the last items: those a worker has not started yet run here, rather than wait
            if pending[0][0].done() or not pending.steal(fn):
                yield _result(pending.popleft()[0])
    finally:   # an error or an interrupt: items not yet started are dropped
        for entry, _ in pending:
            if isinstance(entry, Future):
                entry.cancel()
        # a worker still starting when this process exits would fail, with a traceback on stderr
        here.ready.wait(timeout=60)
