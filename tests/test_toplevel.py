"""The top-level Python API: tbstats.load, compute, compare, audit, explain, simulate, evaluate."""

from __future__ import annotations

import re
import subprocess
import sys
import warnings
from pathlib import Path

import polars as pl
import pytest
from helpers import ROOT

import tbstats
from tbstats.run.checks import TbstatsWarning

EXAMPLES = ROOT / "data" / "examples"
E2 = EXAMPLES / "e2_cut_exception.trf"
N_EXAMPLES = len(list(EXAMPLES.glob("*.trf")))


def test_every_function_is_importable_from_the_package() -> None:
    from tbstats import audit, compare, compute, evaluate, explain, load, simulate

    assert all(callable(f) for f in (audit, compare, compute, evaluate, explain, load, simulate))


def test_import_tbstats_stays_light() -> None:
    code = "import sys, tbstats; print(sorted(m for m in ('polars', 'numpy', 'click') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("given", [str(E2), E2, [str(E2)], [E2]])
def test_inputs_as_str_path_or_list(given: object) -> None:
    table = tbstats.compute(given, "BH,BH/C1,SB")  # type: ignore[arg-type]
    assert isinstance(table, pl.DataFrame) and table["BH/C1"].to_list() == [2.5, 4.0, 4.0, 4.5, 3.0]


def test_inputs_as_the_model() -> None:
    loaded = tbstats.load(EXAMPLES)
    assert loaded.batch.n_tournaments == N_EXAMPLES and loaded.rejected == 0
    assert tbstats.compute(loaded, "SB").height == tbstats.compute(loaded.batch, "SB").height == \
        loaded.batch.players.height


PUBLIC = ("load", "compute", "compare", "audit", "explain", "simulate", "evaluate", "keep_freed_memory")


@pytest.mark.parametrize("name", PUBLIC)
def test_public_functions_are_plain_functions_with_their_signatures(name: str) -> None:
    import inspect
    import types

    function = getattr(tbstats, name)
    assert isinstance(function, types.FunctionType), type(function)
    assert function.__doc__ and function.__doc__.strip().split("\n")[0].endswith((".", ":")), name
    parameters = inspect.signature(function).parameters
    assert not any(p.kind is p.VAR_POSITIONAL for p in parameters.values()), name
    assert name in tbstats.__all__


def test_help_and_completion_show_the_functions_not_helpers() -> None:
    import pydoc

    listed = [n for n in dir(tbstats) if not n.startswith("_")]
    assert set(PUBLIC) <= set(listed)
    assert not {"Any", "Final", "sys", "types", "importlib", "toplevel"} & set(listed), listed
    text = pydoc.render_doc(tbstats.compare, renderer=pydoc.plaintext)
    assert "compare(tournaments" in text and "(*args, **kwargs)" not in text


def test_the_functions_stay_functions_after_the_modules_load() -> None:
    """Importing the analysis modules (as the library does) never replaces a public function by a module."""
    import tbstats.analysis.compare
    import tbstats.simulation

    assert all(callable(getattr(tbstats, n)) and not isinstance(getattr(tbstats, n), type(tbstats)) for n in PUBLIC)
    assert tbstats.simulate(tournaments=1, players=4, rounds=3).batch.n_tournaments == 1


@pytest.mark.parametrize("old", ["tbstats.api", "tbstats.pipeline", "tbstats.runs", "tbstats.toplevel",
                                 "tbstats.tiebreaks", "tbstats.games"])
def test_old_import_paths_moved_as_the_docs_say(old: str) -> None:
    """Old module paths are gone, not half-working; docs/reference/moved.md names the new one."""
    import importlib
    import importlib.util

    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old)
    moved = (ROOT / "docs" / "reference" / "moved.md").read_text(encoding="utf-8")
    rows = [line.split("|") for line in moved.splitlines() if line.startswith(f"| `{old}")]
    assert rows, f"{old} is not in docs/reference/moved.md"
    for row in rows:
        new = re.findall(r"`([\w.]+)`", row[2])[0]
        if importlib.util.find_spec(new.rpartition(".")[0] or new) is None:
            raise AssertionError(f"{new} does not exist")
        owner, _, name = new.rpartition(".")
        assert not owner or hasattr(importlib.import_module(owner), name) or importlib.util.find_spec(new), new


def test_compare_takes_a_mapping_with_or_without_editions() -> None:
    result = tbstats.compare(EXAMPLES, {"a": "SB,DE", "b": "fide-2024:SB,DE"}, rules="fide-2024")
    assert result.configs["definition"].to_list() == ["a=fide-2024:SB,DE", "b=fide-2024:SB,DE"]


def test_audit_and_explain_return_tables() -> None:
    result = tbstats.audit(EXAMPLES, tiebreaks="SB,DE")
    assert result.tournaments.height == N_EXAMPLES and isinstance(result.players, pl.DataFrame)
    ex = tbstats.explain(E2, player=1, tiebreak="BH/C1")
    assert ex.value == 2.5 and ex.rounds.height == 3


def test_simulate_and_evaluate() -> None:
    sim = tbstats.simulate(tournaments=4, players=8, rounds=5, seed=3)
    result = tbstats.evaluate(sim, {"bh": "BH,SB"})
    assert result.measures["config"].to_list() == ["bh", "random"] and result.proxy == "strength"
    from tbstats.analysis import quality
    from tbstats.engine.configs import parse_config

    alone = quality.evaluate(sim, [parse_config("bh=fide-2026:BH,SB"), quality.random_baseline()])
    assert result.measures.drop("definition").equals(alone.drop("definition"))


def test_evaluate_takes_tournaments_like_every_function() -> None:
    configs = {"new": "fide-2026:BH/C1,BH,SB", "old": "fide-2024:BH/C1,BH,SB"}
    for given in (str(EXAMPLES), EXAMPLES, tbstats.load(EXAMPLES), tbstats.load(EXAMPLES).batch):
        result = tbstats.evaluate(given, configs)  # type: ignore[arg-type]
        assert result.measures["config"].to_list() == ["new", "old", "random"] and result.proxy == "rating"


def test_checks_are_python_warnings() -> None:
    with pytest.warns(TbstatsWarning, match="computed for round robins"):
        tbstats.compute(EXAMPLES / "s2_round_robin.trf", "BH")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tbstats.compute(E2, "SB")


def test_bad_input_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(tbstats.errors.FormatError, match="no such file"):
        tbstats.compute(tmp_path / "zz.trf", "BH")
    with pytest.raises(tbstats.errors.TbstatsError, match="unknown simulation setting"):
        tbstats.simulate(playerz=4)
