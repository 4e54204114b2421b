"""Progress bars on standard error: a total where the work is known beforehand, redrawn at least once a second.

A bar is drawn only when it is asked for (the commands ask unless ``-q``) and standard error is a terminal,
never into a pipe, a file or a test's captured output. It counts what the plan knows before any work starts:
input files (:attr:`tbstats.io.sources.Plan.files`), the tournaments of columnar models
(:attr:`~tbstats.io.sources.Plan.tournaments`), or the events to simulate; without a total it shows the count
alone (tqdm then prints no ``/total`` and no time left). It advances as each batch is done, and a thread redraws
it every :data:`REDRAW` seconds, so the elapsed time moves even while one long batch runs.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from typing import Any, Final, Protocol

#: Seconds between redraws while nothing advances.
REDRAW: Final = 1.0
#: Least seconds between two redraws while it advances quickly.
QUICKEST = 0.1


class Stop(Protocol):
    """What the redrawing thread waits on (a :class:`threading.Event`)."""

    def wait(self, timeout: float | None = None) -> bool: ...


def redraw(bar: Any, stop: Stop, every: float = REDRAW) -> int:
    """Redraw ``bar`` every ``every`` seconds until ``stop`` is set; the number of redraws (the body of the
    redrawing thread)."""
    count = 0
    while not stop.wait(every):
        bar.refresh()
        count += 1
    return count


class Progress:
    """A bar over some units of work, or nothing (not asked for, or standard error is not a terminal): then
    every method does nothing. Use it as a context manager, or :meth:`close` it."""

    def __init__(self, bar: Any = None, *, rows: bool = False) -> None:
        self.bar = bar
        self.rows = 0            # game rows done, for the rate shown after the bar (when ``rows``)
        self._show_rows = rows
        self._lock = threading.Lock()   # threads may advance one bar
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if bar is not None:
            self._thread = threading.Thread(target=redraw, args=(bar, self._stop), name="tbstats-progress",
                                            daemon=True)
            self._thread.start()

    def advance(self, done: int, rows: int = 0) -> None:
        """Move the bar on by ``done`` units (and ``rows`` game rows)."""
        bar = self.bar
        if bar is None:
            return
        with self._lock:
            self.rows += rows
            if self._show_rows:
                elapsed = bar.format_dict.get("elapsed", 0) or 0
                bar.set_postfix_str(f"{self.rows / elapsed:,.0f} game rows/s" if elapsed > 0 else "", refresh=False)
            bar.update(done)

    def close(self) -> None:
        """Stop redrawing and leave the bar's last line on the terminal."""
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
        if self.bar is not None:
            self.bar.close()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def progress(total: int | None, unit: str, wanted: bool, *, label: str = "", rows: bool = False) -> Progress:
    """A bar over ``total`` ``unit`` (``None``: not known), drawn on standard error when ``wanted`` and standard
    error is a terminal; ``label`` goes before it, ``rows`` adds the rate of game rows."""
    stream = sys.stderr
    if not wanted or not terminal(stream):
        return Progress()
    from tqdm import tqdm  # (only when a bar is drawn)

    bar = tqdm(total=total, unit=f" {unit}", desc=label or None, file=stream, dynamic_ncols=True, miniters=1,
               mininterval=QUICKEST)
    return Progress(bar, rows=rows)


def terminal(stream: Any) -> bool:
    """Whether ``stream`` is a terminal (a bar is drawn only there)."""
    return bool(stream.isatty())


def shares(total: int, weights: Sequence[int]) -> list[int]:
    """``total`` cut into whole shares in proportion to ``weights``, adding up to ``total`` (the last share
    takes it all when the weights are all zero).

    >>> shares(2000, [500, 500, 500, 500]), shares(10, [1, 2]), shares(3, [0, 0]), shares(4, [])
    ([500, 500, 500, 500], [3, 7], [0, 3], [])
    """
    whole = sum(weights)
    if not weights:
        return []
    if not whole:
        return [0] * (len(weights) - 1) + [total]
    out, before, running = [], 0, 0
    for weight in weights:
        running += weight
        now = total * running // whole
        out.append(now - before)
        before = now
    return out
