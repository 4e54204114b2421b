"""Worker processes for work that holds the GIL: TRF text is parsed by Python and numpy in small steps, so
threads cannot read two pieces of an archive at once, but processes can.

:func:`ordered` runs a function over items on ``workers - 1`` worker processes *and* in this process: a feeder
thread keeps each worker holding :data:`IN_HAND` items (near the end only the one it runs); this process runs the
next item itself on a thread of its own, while the caller takes each result as soon as it is due (a command writes
the output of the workers' items meanwhile: run inline, that work piled up at the end, 70-75 ms of writing after
the last item; ``compute --workers 2`` of the club-wide 6,000 TRF files, median 673 -> 615 ms, 2026-12-06); the
results come back in input order. With ``--workers N`` on TRF inputs (:meth:`tbstats.run.pipeline.Run.map`) the
items are parts of 500 to 1,000 files, fewer when they are large (:func:`tbstats.run.work.cut_for_processes`), read
and mapped where they go (only their names travel, and the partial results back), or, when the batches must stay
here, pieces of parts whose batches come back (Arrow buffers, about 20 ms per 500 files).

The workers are forked from a ``forkserver`` that imported the reader once (:mod:`tbstats.run.preload`; a fork
of a process that already runs polars' threads could deadlock; a fresh ``spawn`` pays the imports for every
worker). The command line starts the pool first (:func:`prestart`), so that its workers import while the
command does; until they are up, this process reads the first pieces itself. With one worker process
(``--workers 2``) the command line forks it from this process itself, while this process still runs one
thread (nothing of numpy, polars or pyarrow loaded): the worker imports the reader on its own, and neither a
forkserver nor multiprocessing's resource tracker is started (two more interpreters, about 0.1 s of CPU while
every core is busy importing). The pool is kept for the next run of the same process, and shut down at exit
(or by :func:`shutdown`).

As with any Python multiprocessing, a script that runs tbstats with ``workers > 1`` must guard its main
code with ``if __name__ == "__main__":`` (the workers import the main module).
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable, Generator, Iterable, Sequence, Sized
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Final, Literal, TypeVar

from tbstats.errors import TbstatsError

T = TypeVar("T")
R = TypeVar("R")

#: What the forkserver imports once, so that a worker starts with it (:mod:`tbstats.run.preload`).
PRELOAD: Final = ["tbstats.run.preload"]

#: Items a worker holds at once (one running, the others queued: it keeps reading while this process maps
#: a batch); this process runs an item itself only when every worker holds that many.
IN_HAND: Final = 4

#: Bytes the pipe of the workers' results holds, where the system lets it be widened (Linux, up to its
#: ``pipe-max-size``, 1 MiB by default): a result (a table as Arrow IPC, about 4 MB for 1,000 events) then
#: crosses in a few writes, not in 64 KiB ones that each waited for this process's reader thread to get the
#: GIL while the worker stood idle (measured: 8-13 ms between a worker's items instead of 10-31 ms).
RESULT_PIPE: Final = 1 << 20


def _portable() -> Any:
    """:mod:`tbstats.run.portable`, imported when first used: it imports polars, which would delay the start of
    the forkserver (:func:`prestart`) by a tenth of a second."""
    from tbstats.run import portable

    return portable


def pickles(obj: object) -> bool:
    """Whether ``obj`` can travel to a worker process (a module-level function or a partial of one can; a
    lambda or a local function cannot)."""
    try:
        pickle.dumps(obj)
    except Exception:  # PicklingError, AttributeError, TypeError: it stays here
        return False
    return True


def available() -> bool:
    """Whether worker processes can start here: a forkserver exists on this platform, this process is not
    itself a daemon (a Dask or multiprocessing worker cannot have children), and the semaphores a process
    pool needs can be made (not where /dev/shm is missing); otherwise ``--workers`` runs threads."""
    return ("forkserver" in multiprocessing.get_all_start_methods()
            and not multiprocessing.current_process().daemon and _semaphores())


@functools.cache
def _semaphores() -> bool:
    try:   # (a lock of the fork context is unlinked at once: it starts no resource tracker)
        multiprocessing.get_context("fork").Lock()
    except OSError:   # e.g. no /dev/shm in a container
        return False
    return True


def _one_thread() -> bool:
    """Whether this process runs a single thread, as the system counts them (Linux's /proc: polars' and
    Arrow's threads are not Python's): only then is a plain fork safe."""
    try:
        return sys.platform.startswith("linux") and len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


def _quiet_tracker() -> None:
    """Start multiprocessing's resource tracker (before the first pool) with its "leaked semaphore" warning
    turned off: when Ctrl-C ends the command at once it still removes the pool's semaphores, without warning
    about them on the user's terminal. (It takes its warning options from this process's ``sys.warnoptions``.)"""
    quiet = "ignore:resource_tracker:UserWarning"
    if quiet not in sys.warnoptions:
        sys.warnoptions.append(quiet)
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()


def prestart(workers: int, archives: Sequence[str] = ()) -> None:
    """Start the pool of ``workers - 1`` processes now, in the background, so that they import while this
    process imports the command (not once it has planned its run: measured, a worker's first item then began
    30-50 ms later): a command line that asks for worker processes calls this before anything else. One
    worker is forked from here at once (see the module's text); several, from a forkserver started now. The
    workers then open the ``archives`` the command names (:func:`_open_archives`) while it plans its run."""
    global starting
    if workers > 1 and available():
        forked = workers == 2 and _one_thread()
        if not forked:   # (first: starting the tracker unblocks SIGINT in this thread, see below)
            _quiet_tracker()
        starting = True   # a Ctrl-C now waits until the workers are started and known (kill_workers stops them)
        # blocked here, SIGINT stays blocked in the forkserver and its workers, or in the worker forked here (the
        # mask passes through fork and exec): a terminal's Ctrl-C reaches the whole process group, and they would
        # print a KeyboardInterrupt traceback from their imports; this process kills them instead
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            if forked:
                pool(workers - 1, forked=True, archives=archives)
            else:
                multiprocessing.set_forkserver_preload(PRELOAD)
                from multiprocessing import forkserver

                forkserver.ensure_running()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
            starting = False
            if interrupted:
                signal.raise_signal(signal.SIGINT)
        if not forked:
            pool(workers - 1, archives=archives)


#: While :func:`prestart` starts the forkserver, the command line's Ctrl-C handler only sets
#: :data:`interrupted` (killing then would orphan a forkserver whose pid is not known yet); prestart then raises
#: the signal again.
starting = False
interrupted = False


class _Pool:
    """A process pool that starts in the background: :attr:`ready` is set once its workers are up.

    ``forked``: its workers are forked from this process now, by this thread, and import the reader themselves
    (:func:`prestart`, which checks that this process runs one thread); else from the forkserver. ``archives``:
    opened by the workers once they are up (:func:`_open_archives`); :attr:`warm` is set once they are (and the
    feeder of :func:`ordered` hands out items from then on: until then this process takes them)."""

    def __init__(self, workers: int, *, forked: bool = False, archives: Sequence[str] = ()) -> None:
        self.workers = workers
        self.ready = threading.Event()
        self.warm = threading.Event()
        self.archives = tuple(archives)
        self.failed: BaseException | None = None
        if forked:
            self.executor = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"),
                                                initializer=_import_reader)
            _widen(self.executor)
            # a fork context starts every worker at the first submit, in this thread (with SIGINT blocked, see
            # prestart): no other thread exists yet when it forks
            started = [self.executor.submit(int) for _ in range(workers)]
            threading.Thread(target=self._wait, args=(started,), name="tbstats-processes", daemon=True).start()
            return
        _quiet_tracker()
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(PRELOAD)   # kept, if the forkserver already runs
        self.executor = ProcessPoolExecutor(max_workers=workers, mp_context=context)
        _widen(self.executor)
        threading.Thread(target=self._start, name="tbstats-processes", daemon=True).start()

    def _start(self) -> None:
        # SIGINT blocked in this thread, which starts the workers (and the forkserver, when prestart did not):
        # the mask passes to them, so a terminal's Ctrl-C reaches only this process, which kills them
        # (see prestart); signals still reach this process through its main thread
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:   # one task per worker starts them all; submit blocks while a worker starts
            started = [self.executor.submit(int) for _ in range(self.workers)]
        except BaseException as exc:  # kept, and raised by the run that uses the pool
            self.failed = exc
            self.ready.set()
            return
        self._wait(started)

    def _wait(self, started: list[Future[int]]) -> None:
        try:
            for future in started:
                future.result()
        except BaseException as exc:  # kept, and raised by the run that uses the pool
            self.failed = exc
        self.ready.set()
        if self.archives and self.failed is None:   # (a task per worker: each goes to whichever worker is free)
            with contextlib.suppress(BaseException):   # (a pool shut down meanwhile: the run is ending)
                for future in [self.executor.submit(_open_archives, self.archives) for _ in range(self.workers)]:
                    future.result()
        self.warm.set()


def _open_archives(paths: Sequence[str]) -> int:
    """A worker's task before its first item: open the archives the command names (a zip's directory, a tar's
    members, a compressed tar's decompressed copy: :func:`tbstats.io.archives.opened`), while the command
    imports and plans its run, rather than in the first item it is handed (which this process would then wait
    for). What cannot be opened is left for the items, which say why."""
    from tbstats.io import archives

    for path in paths:
        with contextlib.suppress(Exception):
            archives.opened(path)
    return 0


def _import_reader() -> None:
    """What a worker forked from this process runs first (:class:`_Pool`): the forkserver's imports
    (:data:`PRELOAD`), then the collector on again (the command line paused it, see :func:`tbstats.cli.base.run`)."""
    import gc
    import importlib

    for name in PRELOAD:
        importlib.import_module(name)
    gc.enable()


def _widen(executor: ProcessPoolExecutor) -> None:
    """Widen the pipe the executor's results come back through to :data:`RESULT_PIPE` bytes, where it can be."""
    reader = getattr(getattr(executor, "_result_queue", None), "_reader", None)
    try:
        import fcntl

        fcntl.fcntl(reader.fileno(), fcntl.F_SETPIPE_SZ, RESULT_PIPE)  # type: ignore[union-attr]
    except (ImportError, AttributeError, OSError):   # not Linux, no such queue, or over the system's cap
        pass


_POOL: _Pool | None = None
_LOCK = threading.Lock()


def pool(workers: int, *, forked: bool = False, archives: Sequence[str] = ()) -> _Pool:
    """The pool of ``workers`` processes of this process, started now if there is none of that size
    (``forked``, ``archives``: see :class:`_Pool`)."""
    global _POOL
    with _LOCK:
        if _POOL is not None and (_POOL.workers != workers or _POOL.failed is not None):
            _POOL.executor.shutdown(wait=False, cancel_futures=True)
            _POOL = None
        if _POOL is None:
            _POOL = _Pool(workers, forked=forked, archives=archives)
        return _POOL


def kill_workers() -> None:
    """Kill this process's worker processes at once (the command line stops at once on Ctrl-C): left
    running, they would outlive it, and a worker whose parent is gone prints a traceback as it stops.

    The pool is shut down first (no worker starts after this), then the forkserver (no fork in flight),
    then every child process."""
    here = _POOL
    if here is not None:
        # (this runs in the signal handler, maybe inside the pool's own submit, which holds the pool's lock: a
        # shutdown would wait for it for ever; when it is held, the workers are killed below all the same)
        lock = getattr(here.executor, "_shutdown_lock", None)
        if lock is None or lock.acquire(timeout=0.5):
            if lock is not None:
                lock.release()
            with contextlib.suppress(Exception):
                here.executor.shutdown(wait=False, cancel_futures=True)
    from multiprocessing import forkserver

    server = getattr(forkserver, "_forkserver", None)
    lock = getattr(server, "_lock", None)
    if lock is not None:   # held, never released: a thread starting a worker cannot start a new forkserver now
        lock.acquire(timeout=1)
    pid = getattr(server, "_forkserver_pid", None)
    if pid:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGSTOP)   # no fork from now on; then its children, even one still starting
            for forked in _children_of(pid):
                os.kill(forked, signal.SIGKILL)
            os.kill(pid, signal.SIGKILL)
    for child in multiprocessing.active_children():
        with contextlib.suppress(Exception):
            child.kill()


def _children_of(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux's /proc; elsewhere none are found)."""
    found = []
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else ():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError), \
                    open(f"/proc/{entry.name}/stat", encoding="ascii", errors="replace") as stat:
                if int(stat.read().rpartition(")")[2].split()[1]) == pid:
                    found.append(int(entry.name))
    return found


def shutdown() -> None:
    """Stop the worker processes (they are started again when a run needs them)."""
    global _POOL
    with _LOCK:
        if _POOL is not None:
            _POOL.executor.shutdown(wait=True, cancel_futures=True)
            _POOL = None


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


def _feed(shared: _Shared, here: _Pool, fn: Callable[[Any], Any]) -> None:
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
                future = here.executor.submit(_portable().call, fn, item)   # packed there, unpacked in _result
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
        return _portable().unpack(item.result()) if isinstance(item, Future) else item.result()
    except BrokenProcessPool:
        shutdown()
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
    here = pool(workers - 1)
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
