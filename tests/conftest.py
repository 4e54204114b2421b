"""Test configuration: hypothesis profiles, and tbstats compiled to bytecode once per session.

The default ``ci`` profile is derandomized: every run tries the same examples, so a landing never depends on
luck; ``HYPOTHESIS_PROFILE=thorough`` hunts with fresh random examples (and many more of them).
"""

from __future__ import annotations

import compileall
import importlib.util
import os

import pytest
from hypothesis import settings

settings.register_profile("ci", max_examples=60, deadline=None, derandomize=True)
settings.register_profile("thorough", max_examples=1500, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_sessionstart(session: pytest.Session) -> None:
    """Compile tbstats' modules to bytecode before the tests start hundreds of ``tbstats`` processes: each then
    reads it instead of compiling every module it imports afresh (where ``PYTHONDONTWRITEBYTECODE`` is set, as
    on some CI machines, an import never writes it: about a tenth of a second per process)."""
    if hasattr(session.config, "workerinput"):
        return      # an xdist worker: the controlling process compiled them
    spec = importlib.util.find_spec("tbstats")
    for location in (spec.submodule_search_locations or []) if spec else []:
        compileall.compile_dir(location, quiet=1)
