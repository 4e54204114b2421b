"""Order-quality measures on simulated tournaments, and the simulate command."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner

from tbstats.analysis.kendall import tau_b
from tbstats.analysis.quality import run, spearman, sweep
from tbstats.cli import main
from tbstats.engine.configs import parse_config
from tbstats.errors import TbstatsError
from tbstats.simulation import SimulationConfig

ORDERS = [parse_config("c1=fide-2026:BH/C1,BH,SB,DE,WIN"), parse_config("bh=fide-2026:BH,BH/C1,SB")]


@pytest.fixture(scope="module")
def table() -> pl.DataFrame:
    _, t = run(SimulationConfig(tournaments=400, players=30, rounds=9, seed=11), ORDERS)
    return t


def test_random_order_scores_at_chance(table: pl.DataFrame) -> None:
    r = table.filter(pl.col("config") == "random").row(0, named=True)
    assert r["kendall_tied_lo95"] < 0 < r["kendall_tied_hi95"]
    assert r["unbroken"] == 0.0  # lots always break ties


def test_buchholz_orders_beat_random_on_long_swiss(table: pl.DataFrame) -> None:
    rnd = table.filter(pl.col("config") == "random").row(0, named=True)
    for name in ("c1", "bh"):
        r = table.filter(pl.col("config") == name).row(0, named=True)
        assert r["strongest_first_lo95"] > rnd["strongest_first_hi95"]
        assert r["kendall_tied_lo95"] > rnd["kendall_tied_hi95"]
        assert 0 < r["kendall"] <= 1 and 0 < r["spearman"] <= 1


def test_same_seed_same_figures() -> None:
    cfg = SimulationConfig(tournaments=50, players=16, rounds=7, seed=5)
    assert run(cfg, ORDERS)[1].equals(run(cfg, ORDERS)[1])
    other = run(SimulationConfig(tournaments=50, players=16, rounds=7, seed=6), ORDERS)[1]
    assert not other.equals(run(cfg, ORDERS)[1])


def test_sweep_rows_and_errors() -> None:
    out = sweep(SimulationConfig(tournaments=40, players=12, rounds=5, seed=1), ORDERS[:1], "rounds", [5, 7])
    assert out["value"].to_list() == [5.0, 5.0, 7.0, 7.0]
    assert set(out["config"]) == {"c1", "random"}
    with pytest.raises(TbstatsError, match="cannot sweep"):
        sweep(SimulationConfig(tournaments=5), ORDERS, "colour", [1])


def test_rank_correlations() -> None:
    group = np.array([0, 0, 0, 1, 1, 1])
    rank = np.array([1, 2, 3, 1, 2, 3])
    strength = np.array([3.0, 2.0, 1.0, 1.0, 2.0, 3.0])
    assert tau_b(rank, strength, group, 2).tolist() == [1.0, -1.0]
    assert spearman(rank, strength, group, 2).tolist() == pytest.approx([1.0, -1.0])
    tied = tau_b(np.array([1, 1, 3]), np.array([3.0, 2.0, 1.0]), np.zeros(3, dtype=np.int64), 1)
    assert tied[0] == pytest.approx(2 / np.sqrt(2 * 3))


def test_simulate_command(tmp_path) -> None:  # type: ignore[no-untyped-def]
    runner = CliRunner()
    args = ["simulate", "-n", "30", "-p", "12", "-r", "5", "--seed", "4", "-c", "a=fide-2026:BH/C1,BH",
            "--format", "csv", "--trf-dir", str(tmp_path / "trf"), "--archive", str(tmp_path / "sim.parquet")]
    first = runner.invoke(main, args)
    assert first.exit_code == 0, first.output
    assert first.stdout.splitlines()[0].startswith("config,definition,tied_groups,strongest_first")
    assert [line.split(",")[0] for line in first.stdout.splitlines()[1:]] == ["a", "random"]
    assert runner.invoke(main, args).stdout == first.stdout
    assert len(list((tmp_path / "trf").glob("*.trf"))) == 30
    again = runner.invoke(main, ["compute", str(tmp_path / "trf"), "-t", "BH", "-q", "--format", "csv"])
    assert again.exit_code == 0 and len(again.stdout.splitlines()) == 30 * 12 + 1
    bad = runner.invoke(main, ["simulate", "-n", "5", "--byes", "0.9", "--zero-byes", "0.5"])
    assert bad.exit_code == 2 and "must not exceed 1" in bad.output
