"""The engine's threads (tbstats.engine.threads.map_threads): results in order, the caller working too, kept
helper threads, exceptions that stop the parts not yet started, nested calls, and a forked child."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from tbstats.engine.threads import map_threads


def test_results_in_order_whatever_finishes_first() -> None:
    def slow_first(x: int) -> int:
        time.sleep(0.02 if x == 0 else 0.0)
        return 10 * x

    assert map_threads(slow_first, range(7), workers=3) == [10 * x for x in range(7)]
    assert map_threads(slow_first, [], workers=2) == []
    assert map_threads(slow_first, [4], workers=4) == [40]


def test_the_caller_works_and_the_helpers_are_kept() -> None:
    gate = threading.Barrier(2, timeout=10)

    def where(_: int) -> str:
        gate.wait()   # both parts run at once: on the caller and on one helper
        return threading.current_thread().name

    def helpers() -> set[int | None]:
        return {t.ident for t in threading.enumerate() if t.name.startswith("tbstats-engine")}

    me = threading.current_thread().name
    kept: set[int | None] = set()
    for call in range(4):
        names = map_threads(where, [0, 1], workers=2)
        assert me in names and any(n.startswith("tbstats-engine") for n in names)
        kept = kept or helpers()
        assert helpers() == kept, call   # the later calls made no thread


def test_an_exception_stops_the_parts_not_yet_started() -> None:
    ran: list[int] = []

    def fail_on_two(x: int) -> int:
        ran.append(x)
        if x == 2:
            raise ValueError("part 2")
        time.sleep(0.01)
        return x

    with pytest.raises(ValueError, match="part 2"):
        map_threads(fail_on_two, range(40), workers=2)
    time.sleep(0.05)   # a helper's part in hand ends in the background
    assert len(ran) < 10
    assert map_threads(lambda x: x + 1, range(5), workers=2) == [1, 2, 3, 4, 5]   # the helpers still serve


def test_nested_calls_do_not_wait_on_each_other() -> None:
    def inner(x: int) -> int:
        return sum(map_threads(lambda y: x * y, range(4), workers=2))

    assert map_threads(inner, range(6), workers=2) == [6 * x for x in range(6)]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
def test_a_forked_child_makes_its_own_helpers() -> None:
    code = (   # the parts wait for each other: they must run on two threads, in the parent and in the child
        "import os, sys, threading\n"
        "from tbstats.engine.threads import map_threads\n"
        "def both(x):\n"
        "    gate.wait()\n"
        "    return -x\n"
        "gate = threading.Barrier(2, timeout=10)\n"
        "assert map_threads(both, [1, 2], workers=2) == [-1, -2]\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    gate = threading.Barrier(2, timeout=10)\n"
        "    try:\n"
        "        ok = map_threads(both, [3, 4], workers=2) == [-3, -4]\n"
        "    except threading.BrokenBarrierError:\n"
        "        ok = False\n"
        "    os._exit(0 if ok else 1)\n"
        "_, status = os.waitpid(pid, 0)\n"
        "sys.exit(os.waitstatus_to_exitcode(status))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr


def test_threads_compute_a_cached_property_of_two_instances_at_once() -> None:
    """Two threads each computing the same cached attribute of its own instance (the engine's two runs, each its own
    ``Dense``) both run at once: each waits inside the computation for the other to be there too. Python 3.11's
    ``functools.cached_property`` made the second wait for the first's lock, and the barrier below broke."""
    from tbstats.model.cached import cached_property

    both = threading.Barrier(2, timeout=10)

    class View:
        @cached_property
        def total(self) -> int:
            both.wait()
            return id(self)

    views = [View(), View()]
    assert map_threads(lambda v: v.total, views, workers=2) == [id(v) for v in views]
    assert [v.total for v in views] == [id(v) for v in views]   # kept: the barrier is not met again


def test_the_package_keeps_no_cached_property_behind_a_shared_lock() -> None:
    """Every cached attribute in tbstats is :mod:`tbstats.model.cached`'s (no ``functools.cached_property``)."""
    from helpers import ROOT

    users = [p.relative_to(ROOT).as_posix() for p in (ROOT / "tbstats").rglob("*.py")
             if p.name != "cached.py" and "functools" in (text := p.read_text()) and "cached_property" in text]
    assert users == []
