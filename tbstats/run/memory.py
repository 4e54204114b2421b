"""Freed arrays reused, not mapped afresh: the C allocator tuned once for the engine's large temporaries.

Every engine call allocates and frees dozens of arrays of a few MB (a players x rounds grid of int32 is
9 MB per 250,000 players x 9 rounds). glibc maps each block over its mmap threshold afresh and unmaps it
at free, and returns the free top of its heap to the system beyond its trim threshold, so each array costs
its page faults again: a quarter of the engine's CPU time, spent in the kernel. :func:`keep_freed_memory`
serves blocks up to 32 MiB from the heap and keeps up to 512 MiB of freed heap for reuse, and lets threads
created afterwards share that one heap (each thread's own arena would unmap its blocks again; the engine's
threads allocate few, large blocks, so they hardly wait on its lock). The process then holds up to that
much freed memory resident after a run instead of returning it at once.

Where the system gives transparent huge pages only on request (its usual mode, "madvise"), the tuning also
reserves :data:`HUGE_HEAP` of heap at once and asks for huge pages there (:func:`_huge_heap`): what glibc's own
``glibc.malloc.hugetlb=1`` tunable does, which only the environment a process starts with can set. A page fault
then maps 2 MiB, not 4 KiB: ``compute --workers 2`` of 6,000 club events from TRF faulted 42.7k pages instead of
65.6k and took 0.550 s instead of 0.568 s of wall time, 879 ms of CPU instead of 918 (medians of 24 alternating
rounds, benchmarks/RESULTS.md, 2026-12-05). Memory is only resident where it is touched, in 2 MiB steps. On a
freshly started virtual machine the trade is mixed: there a 2 MiB page often comes from memory the host has not
backed yet, and about a third of fresh processes spent 80-110 ms more in the kernel on their first part; without
the reserve ``--workers 2`` had the better median there, one worker and the model the worse (RESULTS.md, the
entry of 2026-12-05 17:56).

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
_MADV_HUGEPAGE = 14
_THP_MODE = "/sys/kernel/mm/transparent_hugepage/enabled"
#: blocks up to this size come from the heap (glibc's largest mmap threshold on 64-bit systems)
MMAP_THRESHOLD = 32 << 20
#: freed memory at the top of the heap kept for reuse
TRIM_THRESHOLD = 512 << 20
#: heap reserved at start for transparent huge pages (:func:`_huge_heap`): under the trim threshold, so it is kept
HUGE_HEAP = 256 << 20
#: the size of a transparent huge page (x86-64, and arm64 with 4 KiB pages)
HUGE_PAGE = 2 << 20

_tuned: bool | None = None


def keep_freed_memory() -> bool:
    """Tune glibc's allocator once per process, for the engine's large temporaries (see the module docstring).

    Blocks up to 32 MiB come from the heap, up to 512 MiB of freed heap is kept for reuse, threads share the one
    heap, and, where the system gives transparent huge pages on request, 256 MiB of heap is reserved on them.
    Arrow's buffers come from that heap too (:func:`_arrow_on_heap`).
    True when it is tuned (glibc on Linux, and ``TBSTATS_MALLOC=system`` not in the environment). Best called
    early, before polars is imported."""
    global _tuned
    if _tuned is None:
        _tuned = _tune()
    return _tuned


def _tune() -> bool:
    if not sys.platform.startswith("linux") or os.environ.get("TBSTATS_MALLOC", "") == "system":
        return False
    try:
        libc = ctypes.CDLL(None)   # the C library the interpreter runs on
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    tuned = all(mallopt(option, value) == 1 for option, value in (
        (_M_MMAP_THRESHOLD, MMAP_THRESHOLD), (_M_TRIM_THRESHOLD, TRIM_THRESHOLD), (_M_ARENA_MAX, 1)))
    if tuned and _huge_pages_on_request():
        _huge_heap(libc)
    if tuned:
        _arrow_on_heap()
    return tuned


def _huge_pages_on_request() -> bool:
    """Whether the system gives transparent huge pages to memory that asks for them, and only to that (with
    "always", every heap has them already; with "never", none does)."""
    try:
        with open(_THP_MODE, encoding="ascii") as mode:
            return "[madvise]" in mode.read()
    except OSError:
        return False


def _huge_heap(libc: ctypes.CDLL) -> bool:
    """Grow the heap by :data:`HUGE_HEAP` now, in blocks under the mmap threshold, free them (they join the free
    top of the heap, which the trim threshold keeps), and advise huge pages for it: the heap's next
    :data:`HUGE_HEAP` of allocations fault 2 MiB at a time. Nothing is touched here but the blocks' headers. True
    when advised; False, changing nothing but the heap's size, when the blocks did not come from one heap below
    the program break (no ``brk`` heap: glibc then maps blocks apart) or the advice is refused."""
    libc.malloc.argtypes, libc.malloc.restype = [ctypes.c_size_t], ctypes.c_void_p
    libc.free.argtypes, libc.free.restype = [ctypes.c_void_p], None
    libc.sbrk.argtypes, libc.sbrk.restype = [ctypes.c_ssize_t], ctypes.c_void_p
    libc.madvise.argtypes, libc.madvise.restype = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int], ctypes.c_int
    block = MMAP_THRESHOLD // 2
    blocks = [libc.malloc(block) for _ in range(HUGE_HEAP // block)]
    for address in reversed(blocks):   # (the highest first: each joins the free top)
        libc.free(address)
    end = libc.sbrk(0) or 0
    if not all(blocks) or not all(address + block <= end for address in blocks):
        return False
    start = -(-min(blocks) // HUGE_PAGE) * HUGE_PAGE
    stop = end // HUGE_PAGE * HUGE_PAGE
    return stop - start >= HUGE_HEAP // 2 and libc.madvise(start, stop - start, _MADV_HUGEPAGE) == 0


def _arrow_on_heap() -> None:
    """Arrow's buffers (the Parquet writer's pages, an IPC stream's columns) from the tuned heap too, through the
    system allocator, unless ``ARROW_DEFAULT_MEMORY_POOL`` says otherwise. pyarrow's own pool (mimalloc) gives
    each thread its own segments, on huge pages where the system gives them on request, and hands freed pages
    back to the system at once: the thread that writes a Parquet file faulted and zeroed fresh 2 MiB pages for
    each row group. Writing 197k rows of standings in 4 row groups, in a fresh process: 20-21 huge-page faults
    and 245-348 ms of CPU with pyarrow's pool, 9-11 and 233-242 ms with the system's (4 runs each, 2026-12-06)."""
    if "ARROW_DEFAULT_MEMORY_POOL" in os.environ:
        return
    arrow = sys.modules.get("pyarrow")
    if arrow is None:   # (read when pyarrow first allocates)
        os.environ["ARROW_DEFAULT_MEMORY_POOL"] = "system"
    else:
        arrow.set_memory_pool(arrow.system_memory_pool())


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

