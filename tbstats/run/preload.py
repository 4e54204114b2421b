"""What the forkserver of :mod:`tbstats.run.processes` imports once, so that every worker starts with it (a
worker the command line forks from itself imports it on its own).

The reader of the pieces and the engine, and ``numpy.ma``, which polars imports at its first Series made from
a numpy array (``np.ma.getmask``: 13 ms of every worker's first item otherwise). They are imported with the
cyclic garbage collector paused (imports make objects that live as long as the process, and the collector's
passes over them while it imports took about 16 ms of the forkserver's start, 2026-12-04), then frozen: a
worker forked from it never walks them, so its collections stay small and never write to the pages it
shares with the forkserver (each such write copies a page).
"""

from __future__ import annotations

import gc

from tbstats.run.memory import keep_freed_memory

keep_freed_memory()   # (before the imports, as the command line does: every worker forked from here inherits it)
_was_enabled = gc.isenabled()
gc.disable()
try:
    import numpy.ma  # noqa: F401  (for polars, see above)

    import tbstats.io.sources
    import tbstats.run.commands  # noqa: F401
finally:
    gc.freeze()
    if _was_enabled:
        gc.enable()
