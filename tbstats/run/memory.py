"""Freed arrays reused, not mapped afresh: the C allocator tuned once for the engine's large temporaries.

Every engine call allocates and frees dozens of arrays of a few MB (a players x rounds grid of int32 is
9 MB per 250,000 players x 9 rounds). glibc maps each block over its mmap threshold afresh and unmaps it
at free, and returns the free top of its heap to the system beyond its trim threshold, so each array costs
its page faults again: a quarter of the engine's CPU time, spent in the kernel. :func:`keep_freed_memory`
serves blocks up to 32 MiB from the heap and keeps up to 512 MiB of freed heap for reuse, and lets threads
created afterwards share that one heap (each thread's own arena would unmap its blocks again; the engine's
threads allocate few, large blocks, so they hardly wait on its lock). The process then holds up to that
much freed memory resident after a run instead of returning it at once.

The ``tbstats`` command tunes it at start, before the first threads get arenas of their own. A library
cannot decide that for its host process, so ``import tbstats`` does not: a program that runs the engine
at scale calls ``tbstats.keep_freed_memory()`` once, early, best before it imports polars (the benchmark stages
do). polars starts threads at import; once they have arenas, glibc gives later threads arenas of their own
too, which this tuning reaches only in part: the engine keeps its helper threads for the life of the process
(:mod:`tbstats.engine.threads`), so that their arenas grow to its arrays once, not at every call. Only glibc
has these knobs (``mallopt``); elsewhere, or with ``TBSTATS_MALLOC=system`` in the environment, nothing changes. The
results never depend on it.
"""

from __future__ import annotations

import ctypes
import os
import sys

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_ARENA_MAX = -1, -3, -8
#: blocks up to this size come from the heap (glibc's largest mmap threshold on 64-bit systems)
MMAP_THRESHOLD = 32 << 20
#: freed memory at the top of the heap kept for reuse
TRIM_THRESHOLD = 512 << 20

_tuned: bool | None = None


def keep_freed_memory() -> bool:
    """Tune glibc's allocator once per process (see the module docstring); True when it is tuned."""
    global _tuned
    if _tuned is None:
        _tuned = _tune()
    return _tuned


def _tune() -> bool:
    if not sys.platform.startswith("linux") or os.environ.get("TBSTATS_MALLOC", "") == "system":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt   # the C library the interpreter runs on
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return all(mallopt(option, value) == 1 for option, value in (
        (_M_MMAP_THRESHOLD, MMAP_THRESHOLD), (_M_TRIM_THRESHOLD, TRIM_THRESHOLD), (_M_ARENA_MAX, 1)))


def release_freed_memory() -> bool:
    """Hand the freed memory that :func:`keep_freed_memory` keeps back to the system now (glibc's
    ``malloc_trim``), and what Arrow's memory pool keeps of its own (when pyarrow is loaded); True when glibc's
    was released. For a step whose memory comes from other allocators (polars' and Arrow's, writing files) after
    one that freed many arrays, and after such a step: kept, the freed memory would stay resident under the next
    step's and add to the process's peak."""
    arrow = sys.modules.get("pyarrow")
    if arrow is not None:
        arrow.default_memory_pool().release_unused()
    if not _tuned:
        return False
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return False
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    trim(0)
    return True

