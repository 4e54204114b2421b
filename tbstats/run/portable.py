"""Results that cross a process boundary travel as Arrow IPC bytes, never as polars objects.

Why: a polars frame built here often does not own its memory. ``pl.Series(numpy_array)`` shares the numpy
array, and the TRF reader hands its columns over from pyarrow buffers that wrap Python bytes; freeing such
memory calls back into Python and needs the GIL. Pickling a polars frame (``DataFrame.__getstate__``) runs
polars' serializer on its thread pool *while the calling thread holds the GIL*; when a pool thread then has
to free one of those buffers it waits for the GIL, and the caller waits for the pool. On a Dask worker the
caller is the event loop, so the worker hangs for good (and ignores SIGTERM, whose handler needs the GIL).

So every result of a task that runs in another process is :func:`pack`-ed there, in the task's own thread,
before it is handed back: each DataFrame and Series becomes a :class:`Frame` holding its Arrow IPC bytes
(polars writes them with the GIL released), and what remains to pickle is bytes, numpy arrays and plain
Python values. :func:`unpack` restores the frames where the result arrives. Containers are walked: tuples,
lists, dicts and dataclasses (the partial results of every command are dataclasses of frames and arrays).

>>> import polars as pl
>>> packed = pack({"table": pl.DataFrame({"a": [1, 2]}), "n": 3})
>>> type(packed["table"]).__name__, unpack(packed)["table"].equals(pl.DataFrame({"a": [1, 2]}))
('Frame', True)
"""

from __future__ import annotations

import copy
import dataclasses
import io
from collections.abc import Callable
from typing import Any

import polars as pl

from tbstats.run.memory import keep_freed_memory


@dataclasses.dataclass(frozen=True)
class Frame:
    """A DataFrame as Arrow IPC bytes; a Series travels as its one-column frame, ``series`` its name."""

    ipc: bytes
    series: str | None = None


def _to_ipc(df: pl.DataFrame) -> bytes:
    """The Arrow IPC stream of ``df``: polars writes and reads a small frame of the IPC file format in 0.3-0.6 ms
    (its footer; its thread pool for reading), of the stream format in 0.01-0.02 ms, and a batch's table of
    results in about half the time (benchmarks/RESULTS.md, session of 2026-12-04 14:45)."""
    sink = io.BytesIO()
    df.write_ipc_stream(sink, compression="uncompressed")
    return sink.getvalue()


def pack(value: Any) -> Any:
    """``value`` with every polars DataFrame and Series inside it replaced by a :class:`Frame`."""
    if isinstance(value, pl.DataFrame):
        return Frame(_to_ipc(value))
    if isinstance(value, pl.Series):
        return Frame(_to_ipc(value.to_frame()), value.name)
    return _walk(value, pack)


def unpack(value: Any) -> Any:
    """The inverse of :func:`pack`: every :class:`Frame` back to its DataFrame or Series."""
    if isinstance(value, Frame):
        df = pl.read_ipc_stream(io.BytesIO(value.ipc))   # (copied into polars' own memory: see the module's text)
        return df if value.series is None else df.to_series().alias(value.series)
    return _walk(value, unpack)


def nbytes(value: Any) -> int:
    """About how many bytes a packed value holds (its frames' and arrays' bytes): what Dask should weigh when it
    decides whether to move a result to another worker (``__sizeof__`` of the containers that hold one: Dask
    sizes other objects by ``sys.getsizeof``, which does not look inside them)."""
    if isinstance(value, Frame):
        return len(value.ipc)
    if isinstance(value, bytes | bytearray):
        return len(value)
    size = getattr(value, "nbytes", None)   # numpy arrays
    if isinstance(size, int):
        return size
    parts: list[int] = []
    _walk(value, lambda v: parts.append(nbytes(v)))
    return sum(parts)


def _walk(value: Any, f: Callable[[Any], Any]) -> Any:
    if isinstance(value, tuple):
        items = [f(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, list):
        return [f(v) for v in value]
    if isinstance(value, dict):
        return {k: f(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = copy.copy(value)
        for field in dataclasses.fields(value):
            object.__setattr__(out, field.name, f(getattr(value, field.name)))
        return out
    return value


def call(fn: Callable[..., Any], *args: Any) -> Any:
    """``pack(fn(*args))``: what a task that runs in another process returns (module level: it travels).

    The process's allocator is tuned first (:func:`tbstats.run.memory.keep_freed_memory`, once per process): a
    Dask nanny starts its workers with ``MALLOC_TRIM_THRESHOLD_=65536``, which hands every freed temporary back
    to the system and made each task twice as slow as the same work in the ``tbstats`` process."""
    keep_freed_memory()
    return pack(fn(*args))
