"""tbstats: vectorised chess tie-break analytics over archives of tournaments.

The Python API is a handful of functions, importable from here (``import tbstats`` stays light: each is
loaded on first use):

- :func:`load` reads tournaments (files, directories, globs, archives, the columnar model);
- :func:`compute` gives standings with tie-break columns; :func:`explain` one value round by round;
- :func:`compare` how often configurations change winners; :func:`audit` recomputes published standings;
- :func:`simulate` and :func:`evaluate` measure which order recovers true strength.

Each takes a path, a list of paths, or a loaded batch, and returns polars DataFrames (or a small result
object whose tables are DataFrames). See :mod:`tbstats.toplevel`.

>>> import tbstats
>>> tbstats.compute("data/examples/e2_cut_exception.trf", "BH/C1").select("start_no", "BH/C1").row(0)
(1, 2.5)
>>> tbstats.compare is tbstats.toplevel.compare or callable(tbstats.compare)
True
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any, Final

from tbstats.memory import keep_freed_memory as keep_freed_memory

__version__ = "0.1.0"

#: The public functions, loaded on first use from :mod:`tbstats.toplevel`.
API: Final = ("load", "compute", "compare", "audit", "explain", "simulate", "evaluate")
#: Submodules that share a name with a function: once imported they are module attributes of the package,
#: so they are made callable (calling one calls the function) and both spellings keep working.
_SAME_NAME: Final = frozenset({"compare", "audit", "explain", "simulate", "evaluate"})


class _CallableModule(types.ModuleType):
    """A module that can be called like the :mod:`tbstats.toplevel` function of the same name."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        toplevel = importlib.import_module("tbstats.toplevel")
        return getattr(toplevel, self.__name__.rpartition(".")[2])(*args, **kwargs)


def callable_module(name: str) -> None:
    """Make the module ``name`` (``tbstats.compare`` ...) callable; each such module calls this on import."""
    module = sys.modules[name]
    if not isinstance(module, _CallableModule):
        module.__class__ = _CallableModule


def __getattr__(name: str) -> Any:
    if name in _SAME_NAME:
        return importlib.import_module(f"tbstats.{name}")
    if name in API or name == "toplevel":
        toplevel = importlib.import_module("tbstats.toplevel")
        return toplevel if name == "toplevel" else getattr(toplevel, name)
    raise AttributeError(f"module 'tbstats' has no attribute {name!r}")


__all__ = ["API", "__version__", "audit", "compare", "compute", "evaluate", "explain", "load",
           "simulate"]
