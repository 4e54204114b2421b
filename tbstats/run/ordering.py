"""Items run in input order on the worker processes of :mod:`tbstats.run.processes` *and* in this process.

:func:`ordered` runs a function over items on ``workers - 1`` worker processes and here: a feeder thread keeps
each worker holding :data:`IN_HAND` items (near the end only the one it runs); this process runs its share on a
thread of its own, which takes its next item as soon as it has finished one, while the caller takes each result as
soon as it is due (a command writes the output of the workers' items meanwhile: run inline, that work piled up at
the end, 70-75 ms of writing after the last item; ``compute --workers 2`` of the club-wide 6,000 TRF files, median
673 -> 615 ms, 2026-12-06; and chosen by the caller's loop, this process's next item waited while the caller
wrote, 60 ms idle: median 939 -> 809 ms the same day); the results come back in input order. With ``--workers N``
on TRF inputs (:meth:`tbstats.run.pipeline.Run.map`) the items are parts of 500 to 1,000 files, fewer when they
are large (:func:`tbstats.run.work.cut_for_processes`), read and mapped where they go (only their names travel,
and the partial results back), or, when the batches must stay here, pieces of parts whose batches come back
(Arrow buffers, about 20 ms per 500 files).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator, Iterable, Sized
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Final, Literal, TypeVar

from tbstats.errors import TbstatsError
from tbstats.run import portable, processes

T = TypeVar("T")
R = TypeVar("R")

#: Items a worker holds at once (one running, the others queued: it keeps reading while this process maps a
#: batch); this process's thread holds at most as many results of its own that wait for their turn.
IN_HAND: Final = 4


class _Here:
    """An item run in this process, on its thread (:func:`ordered`), held in the queue beside the workers'
    futures: its result, or its error, is taken only when its turn comes, so that the first error in input
    order is the one raised."""

    def __init__(self) -> None:
        self.future: Future[Any] = Future()

    def done(self) -> bool:
        return self.future.done()

    def result(self) -> Any:
        return self.future.result()


class _Shared:
    """The items, in order, taken one at a time by the feeder (for the workers) and by this process's thread,
    with what became of each: a worker's future or an item run here (``cond`` guards it all)."""

    def __init__(self, items: Iterable[Any], cap: int, workers: int) -> None:
        self.total = len(items) if isinstance(items, Sized) else None
        self.items = enumerate(items)
        self.cap = cap                    # items the workers hold at most
        self.workers = workers
        self.taken = 0
        self.exhausted = False
        self.stop = False
        self.away = 0                     # items the workers hold and have not finished
        self.due = 0                      # the item whose result the caller takes next
        self.failed: BaseException | None = None   # this process's thread stopped by a fault of its own
        self.entries: dict[int, tuple[Future[Any] | _Here | None, Any]] = {}
        self.cond = threading.Condition()

    def take(self) -> tuple[int, Any] | None:
        """The next item not taken yet (call with ``cond`` held)."""
        if self.exhausted:
            return None
        got = next(self.items, None)
        if got is None:
            self.exhausted = True
            return None
        self.taken += 1
        return got

    def room(self) -> bool:
        """Whether the workers may be handed another item: while they hold fewer than ``cap``, and near the end
        (no more items left than ``cap``) only one each, the one they run: an item handed over is queued in the
        pool and can no longer be taken back, so the last ones would keep this process idle while a worker
        finishes them one after the other."""
        near_end = self.total is not None and self.total - self.taken <= self.cap
        return self.away < (self.workers if near_end else self.cap)

    def next_here(self) -> tuple[int, Any] | Literal[False] | None:
        """The item this process's thread runs next (call with ``cond`` held): the next item not yet taken (at
        most :data:`IN_HAND` results made here waiting, unless the one due is not taken yet), or, when none is
        left, the last item a worker holds but has not started; False when there is none now, None when there
        will be none (every item is taken, and the workers run theirs)."""
        due = self.entries.get(self.due, (None, None))[0]
        if due is None or sum(isinstance(e, _Here) for e, _ in self.entries.values()) < IN_HAND:
            got = self.take()
            if got is not None:
                return got
        if self.exhausted:   # nothing left to take: rather than idle, run here an item a worker has not started
            return _steal(self)
        return False

    def finished(self, _: Future[Any]) -> None:
        with self.cond:
            self.away -= 1
            self.cond.notify_all()


def _feed(shared: _Shared, here: processes.Pool, fn: Callable[[Any], Any]) -> None:
    """Keep the workers holding ``shared.cap`` items, whatever this process is doing (its thread)."""
    here.warm.wait()   # (set after ready)
    while here.failed is None:
        with shared.cond:
            while not shared.stop and not shared.room():
                shared.cond.wait()
            got = None if shared.stop else shared.take()
            if got is None:
                shared.cond.notify_all()
                return
            k, item = got
            try:
                future = here.executor.submit(portable.call, fn, item)   # packed there, unpacked in _result
            except (RuntimeError, BrokenProcessPool):   # the pool is shut down or broken: this run is ending
                shared.stop = True
                shared.cond.notify_all()
                return
            shared.entries[k] = (future, item)
            shared.away += 1
            shared.cond.notify_all()
        future.add_done_callback(shared.finished)


def _run_here(shared: _Shared, fn: Callable[[Any], Any]) -> None:
    """This process's share of the items, one after the other, on a thread of its own (:func:`ordered`): it
    takes its next item as soon as it has finished one, whatever the caller is doing with the results meanwhile
    (taken by the caller's loop instead, the next item waited while the caller wrote a result: 60 ms idle
    between two items of ``compute --workers 2``, measured 2026-12-06)."""
    try:
        while True:
            with shared.cond:
                while (run := None if shared.stop else shared.next_here()) is False:
                    shared.cond.wait()
                if run is None:   # (the caller may be waiting to learn that every item is taken)
                    shared.cond.notify_all()
                    return
                made = _Here()
                shared.entries[run[0]] = (made, run[1])
            try:
                made.future.set_result(fn(run[1]))
            except BaseException as exc:  # raised by the caller when the item's turn comes
                made.future.set_exception(exc)
            with shared.cond:
                shared.cond.notify_all()
    except BaseException as exc:  # a fault of this loop itself: the caller raises it rather than wait for ever
        with shared.cond:
            shared.failed = exc
            shared.cond.notify_all()


def _result(item: Future[Any] | _Here) -> Any:
    try:
        return portable.unpack(item.result()) if isinstance(item, Future) else item.result()
    except BrokenProcessPool:
        processes.shutdown()
        raise TbstatsError("a worker process of --workers died (out of memory, or killed); run again, with "
                           "fewer workers") from None


def ordered(fn: Callable[[T], R], items: Iterable[T], workers: int) -> Generator[R, None, None]:
    """``fn`` of every item, in order, on ``workers - 1`` processes and this one (see the module's text); a
    worker holds at most :data:`IN_HAND` items at once.

    A feeder thread keeps the workers supplied. This process runs an item at a time on a thread of its own
    (:func:`_run_here`): the next item not yet taken (at most :data:`IN_HAND` ahead of the result due), or, when
    none is left, the last item a worker has not started. Meanwhile the caller gets each result as soon as it is
    due, whoever made it: its output is written while this process reads and maps its next item, not all at the
    end. ``fn`` and the items must pickle (module-level functions, ``functools.partial`` of them)."""
    if workers < 2:
        raise TbstatsError(f"ordered needs at least 2 workers, not {workers}")
    here = processes.pool(workers - 1)
    shared = _Shared(items, IN_HAND * here.workers, here.workers)
    threading.Thread(target=_feed, args=(shared, here, fn), name="tbstats-feeder", daemon=True).start()
    # (an executor's thread, not a thread of its own: at exit the item it runs is finished, not cut off)
    local = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tbstats-here")
    local.submit(_run_here, shared, fn)
    k = 0
    try:
        while True:
            with shared.cond:
                while True:
                    if here.failed is not None:
                        raise TbstatsError(f"--workers {workers}: the worker processes did not start "
                                           f"({here.failed!r})")
                    if shared.failed is not None:
                        raise shared.failed
                    entry = shared.entries.get(k, (None, None))[0]
                    if entry is not None and entry.done():
                        del shared.entries[k]
                        shared.due = k + 1
                        shared.cond.notify_all()
                        break
                    if entry is None and shared.exhausted and k >= shared.taken:
                        return
                    shared.cond.wait(timeout=0.05)
            yield _result(entry)
            k += 1
    finally:   # an error or an interrupt: items not yet started are dropped
        local.shutdown(wait=False, cancel_futures=True)
        with shared.cond:
            shared.stop = True
            shared.cond.notify_all()
            for entry, _ in shared.entries.values():
                if isinstance(entry, Future):
                    entry.cancel()
        # a worker still starting when this process exits would fail, with a traceback on stderr
        here.ready.wait(timeout=60)


def _steal(shared: _Shared) -> tuple[int, Any] | None:
    """The last item a worker holds but has not started, taken back to run here (call with ``cond`` held)."""
    for j in sorted(shared.entries, reverse=True):
        entry, item = shared.entries[j]
        if isinstance(entry, Future) and entry.cancel():
            shared.entries[j] = (None, item)   # (its cancelling ran ``finished``: the workers hold one less)
            return j, item
    return None
