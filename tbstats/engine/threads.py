"""Threads for whole parts of a batch: results in order, the calling thread taking its share, and no waiting for
queued work after an interrupt.

numpy and polars release the GIL for most of the work, so a few threads speed up a batch. :func:`map_threads`
runs the parts on the calling thread and on ``workers - 1`` helper threads, each taking the next part until
none is left. The helpers are kept for the life of the process (made on first use, more when more workers are
asked for, forgotten in a forked child, whose copies of them do not run), because the C allocator gives each
thread that allocates a heap of its own once other libraries' threads have made it hand out more than one
(polars starts threads at import): new threads at every call then met heaps that had not yet grown to the
engine's arrays, and page-faulted those arrays afresh on every call. With
:func:`tbstats.keep_freed_memory` called after ``import polars``, the engine with two workers on the club
archive (10,000 events) faulted 45,000 pages and took 177-180 ms per call (best of 3), against a few hundred
pages and 102-130 ms with kept threads (benchmarks/RESULTS.md, 2026-12-03 18:20-19:25). The calling thread works on
the main heap, and one thread fewer is woken.

A plain ``with ThreadPoolExecutor(...)`` would also wait for every queued part when the main thread is
interrupted (Ctrl-C), which can take as long as the run itself; here the parts not yet started are dropped at
once, and the helpers finish the part in hand in the background.

>>> map_threads(lambda x: x * x, [1, 2, 3], workers=2)
[1, 4, 9]
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

_lock = threading.Lock()
_helpers: ThreadPoolExecutor | None = None
_size = 0


def _pool(n: int) -> ThreadPoolExecutor:
    """The kept helper threads, at least ``n`` of them."""
    global _helpers, _size
    with _lock:
        if _helpers is None or _size < n:
            if _helpers is not None:
                _helpers.shutdown(wait=False)   # its threads end once idle; the larger pool replaces them
            _helpers, _size = ThreadPoolExecutor(max_workers=n, thread_name_prefix="tbstats-engine"), n
        return _helpers


def _forget_helpers() -> None:
    """In a forked child: the parent's helper threads do not exist here (a new pool is made on first use)."""
    global _helpers, _size, _lock
    _helpers, _size, _lock = None, 0, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_helpers)


def map_threads(fn: Callable[[T], R], items: Iterable[T], *, workers: int) -> list[R]:
    """``[fn(x) for x in items]`` on this thread and up to ``workers - 1`` kept helper threads; on any exception
    (an interrupt included) the parts not yet started are dropped and the exception raised."""
    todo = list(items)
    helpers = min(workers, len(todo)) - 1
    if helpers < 1:
        return [fn(x) for x in todo]
    results: list[R | None] = [None] * len(todo)
    cursor = iter(range(len(todo)))
    taking = threading.Lock()
    stop = threading.Event()

    def drain() -> None:
        while not stop.is_set():
            with taking:
                i = next(cursor, None)
            if i is None:
                return
            try:
                results[i] = fn(todo[i])
            except BaseException:
                stop.set()
                raise

    pool = _pool(helpers)
    started: list[Future[None]] = [pool.submit(drain) for _ in range(helpers)]
    try:
        drain()
        for future in started:
            if not future.cancel():   # (a helper still busy with another call's part never started this one)
                future.result()
    except BaseException:
        stop.set()
        for future in started:
            future.cancel()
        raise
    return results  # type: ignore[return-value]   # every part done: no None left
