"""Worker processes for work that holds the GIL: TRF text is parsed by Python and numpy in small steps, so
threads cannot read two pieces of an archive at once, but processes can.

A pool of ``workers - 1`` processes (:func:`pool`), started as early as a command can (:func:`prestart`), kept
for the next run of the same process, and stopped at once on Ctrl-C (:func:`kill_workers`).
:mod:`tbstats.run.ordering` runs a function over items on them and in this process, in input order.

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
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Final

#: What the forkserver imports once, so that a worker starts with it (:mod:`tbstats.run.preload`).
PRELOAD: Final = ["tbstats.run.preload"]

#: Bytes the pipe of the workers' results holds, where the system lets it be widened (Linux, up to its
#: ``pipe-max-size``, 1 MiB by default): a result (a table as Arrow IPC, about 4 MB for 1,000 events) then
#: crosses in a few writes, not in 64 KiB ones that each waited for this process's reader thread to get the
#: GIL while the worker stood idle (measured: 8-13 ms between a worker's items instead of 10-31 ms).
RESULT_PIPE: Final = 1 << 20


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


class Pool:
    """A process pool that starts in the background: :attr:`ready` is set once its workers are up.

    ``forked``: its workers are forked from this process now, by this thread, and import the reader themselves
    (:func:`prestart`, which checks that this process runs one thread); else from the forkserver. ``archives``:
    opened by the workers once they are up (:func:`_open_archives`); :attr:`warm` is set once they are (and the
    feeder of :func:`tbstats.run.ordering.ordered` hands out items from then on: until then this process takes them)."""

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
    """What a worker forked from this process runs first (:class:`Pool`): the forkserver's imports
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


_POOL: Pool | None = None
_LOCK = threading.Lock()


def pool(workers: int, *, forked: bool = False, archives: Sequence[str] = ()) -> Pool:
    """The pool of ``workers`` processes of this process, started now if there is none of that size
    (``forked``, ``archives``: see :class:`Pool`)."""
    global _POOL
    with _LOCK:
        if _POOL is not None and (_POOL.workers != workers or _POOL.failed is not None):
            _POOL.executor.shutdown(wait=False, cancel_futures=True)
            _POOL = None
        if _POOL is None:
            _POOL = Pool(workers, forked=forked, archives=archives)
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
