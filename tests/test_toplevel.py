"""The top-level Python API: tbstats.load, compute, compare, audit, explain, simulate, evaluate."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import polars as pl
import pytest
from helpers import ROOT

import tbstats
from tbstats.checks import TbstatsWarning

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


def test_the_module_and_the_function_of_the_same_name_both_work() -> None:
    import tbstats.compare as cmp  # the submodule, as the library itself imports it

    assert cmp.parse_config("a=fide-2026:BH").name == "a"
    result = tbstats.compare(EXAMPLES, ["a=fide-2026:SB,WIN", "b=fide-2024:SB,WIN"])
    assert result.pairs["tournaments"].to_list() == [N_EXAMPLES]
    from tbstats.simulate import Simulation, SimulationConfig, expected_score, simulate  # noqa: F401

    assert tbstats.simulate(tournaments=1, players=4, rounds=3).batch.n_tournaments == 1


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
    table = tbstats.evaluate(sim, {"bh": "BH,SB"})
    assert table["config"].to_list() == ["bh", "random"]


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
