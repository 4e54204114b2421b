"""The seeded tournament simulator: determinism, pairing consistency, rates, Berger tables, TRF validity."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import polars as pl
import pytest

from tbstats.errors import TbstatsError
from tbstats.io.trf import read_trf, write_trf
from tbstats.model.batch import Batch
from tbstats.simulation import Simulation, SimulationConfig, expected_score, simulate

RICH = dict(half_bye_rate=0.04, zero_bye_rate=0.02, forfeit_rate=0.03, double_forfeit_rate=0.01,
            withdrawal_rate=0.08, unrated_rate=0.15)


@pytest.fixture(scope="module")
def swiss() -> Simulation:
    """Many mid-sized Swiss events with every kind of unplayed round."""
    return simulate(SimulationConfig(tournaments=600, players=30, rounds=7, seed=11, chunk=256, **RICH))


def _pairs(batch: Batch) -> pl.DataFrame:
    """Each paired row joined with its opponent's row of the same round."""
    g = batch.games.filter(pl.col("opponent").is_not_null())
    other = g.select("tournament", "round", pl.col("player").alias("opponent"),
                     pl.col("opponent").alias("back"), pl.col("colour").alias("ocolour"),
                     pl.col("result").alias("oresult"), pl.col("game_type").alias("otype"))
    return g.join(other, on=["tournament", "round", "opponent"], how="left")


def _round_trip(batch: Batch) -> Batch:
    result = read_trf([(source, text.encode()) for source, text in write_trf(batch).items()])
    assert result.errors.is_empty(), result.errors
    assert result.batch.warnings.is_empty(), result.batch.warnings
    return result.batch


# ------------------------------------------------------------------------------------------ determinism

def test_same_seed_same_batch() -> None:
    cfg = SimulationConfig(tournaments=40, players=14, rounds=6, seed=3, chunk=16, **RICH)
    a, b = simulate(cfg), simulate(cfg, workers=2)
    for name in ("tournaments", "players", "games"):
        assert getattr(a.batch, name).equals(getattr(b.batch, name))
    assert a.truth.equals(b.truth)
    assert a.stats == b.stats
    c = simulate(dataclasses.replace(cfg, seed=4))
    assert not c.batch.games.equals(a.batch.games)


def test_known_values_do_not_drift() -> None:
    """The random stream is fixed (PCG64, SeedSequence): the first events of seed 0 stay the same."""
    sim = simulate(SimulationConfig(tournaments=2, players=6, rounds=3, seed=0))
    firsts = sim.batch.games.filter((pl.col("tournament") == 0) & (pl.col("player") == 1))
    assert firsts["opponent"].to_list() == [4, 2, 6]
    assert firsts["result"].to_list() == ["=", "=", "="]
    assert sim.batch.players["rating"].to_list()[:3] == [2338, 2335, 2328]


# ---------------------------------------------------------------------------------------- consistency

def test_pairings_are_consistent(swiss: Simulation) -> None:
    p = _pairs(swiss.batch)
    assert (p["player"] != p["opponent"]).all()
    assert (p["back"] == p["player"]).all()  # symmetric
    assert (p["colour"] != p["ocolour"]).all()
    ok = {("1", "0"), ("0", "1"), ("=", "="), ("+", "-"), ("-", "+"), ("-", "-")}
    assert set(zip(p["result"].to_list(), p["oresult"].to_list(), strict=True)) <= ok
    g = swiss.batch.games
    pab = g.filter(pl.col("game_type") == "pab").group_by("tournament", "round").len()
    assert pab["len"].max() == 1
    # a PAB exactly when an odd number of players is to be paired
    avail = g.filter(pl.col("game_type").is_in(["played", "forfeit_win", "forfeit_loss", "double_forfeit", "pab"]))
    odd = avail.group_by("tournament", "round").len().filter(pl.col("len") % 2 == 1)
    assert odd.height == pab.height
    assert swiss.stats.rematches == 0
    met = p.filter(pl.col("player") < pl.col("opponent")).group_by("tournament", "player", "opponent").len()
    assert met["len"].max() == 1


def test_colours_mostly_alternate(swiss: Simulation) -> None:
    otb = swiss.batch.games.filter(pl.col("played")).with_columns(
        pl.col("colour").shift(1).over("tournament", "player").alias("prev"))
    seen = otb.filter(pl.col("prev").is_not_null())
    assert (seen["colour"] != seen["prev"]).mean() > 0.8  # type: ignore[operator]
    balance = otb.group_by("tournament", "player").agg(
        ((pl.col("colour") == "w").sum().cast(pl.Int32) - (pl.col("colour") == "b").sum().cast(pl.Int32))
        .abs().alias("cd"))
    assert (balance["cd"] <= 2).mean() > 0.99  # type: ignore[operator]


def test_start_numbers_follow_rating(swiss: Simulation) -> None:
    p = swiss.batch.players.with_columns(
        pl.col("rating").fill_null(-1).shift(-1).over("tournament").alias("next"))
    assert (p.filter(pl.col("next").is_not_null())
            .select((pl.col("rating").fill_null(-1) >= pl.col("next")).all()).item())
    assert swiss.truth.height == swiss.batch.players.height
    joined = swiss.batch.players.join(swiss.truth, on=["tournament", "start_no"]).drop_nulls("rating")
    assert np.corrcoef(joined["rating"].to_numpy(), joined["strength"].to_numpy())[0, 1] > 0.95


def test_declared_points_are_the_total(swiss: Simulation) -> None:
    total = swiss.batch.games.group_by("tournament", "player").agg(pl.col("points").sum())
    p = swiss.batch.players.join(total, left_on=["tournament", "start_no"], right_on=["tournament", "player"])
    assert (p["declared_points"] == p["points"]).all()


# ---------------------------------------------------------------------------------------------- rates

def _near(observed: float, rate: float, n: int) -> bool:
    return abs(observed - rate) <= 5 * math.sqrt(rate * (1 - rate) / n) + 1e-9


def test_rates_are_roughly_honoured(swiss: Simulation) -> None:
    g = swiss.batch.games
    cfg = swiss.config
    present = g.filter(pl.col("game_type") != "absent")
    n = present.height
    assert _near((present["game_type"] == "half_bye").mean(), cfg.half_bye_rate, n)  # type: ignore[arg-type]
    zero = (present["game_type"] == "zero_bye").mean()
    assert _near(zero, cfg.zero_bye_rate * (1 - cfg.half_bye_rate), n)  # type: ignore[arg-type]
    boards = _pairs(swiss.batch).filter(pl.col("player") < pl.col("opponent"))
    double = (boards["game_type"] == "double_forfeit").mean()
    single = boards["game_type"].is_in(["forfeit_win", "forfeit_loss"]).mean()
    assert _near(double, cfg.double_forfeit_rate, boards.height)  # type: ignore[arg-type]
    assert _near(single, cfg.forfeit_rate, boards.height)  # type: ignore[arg-type]
    players = swiss.batch.players
    assert _near(players["rating"].is_null().mean(), cfg.unrated_rate, players.height)  # type: ignore[arg-type]
    gone = g.filter(pl.col("round") == cfg.n_rounds).select((pl.col("game_type") == "absent").mean()).item()
    assert _near(gone, cfg.withdrawal_rate, players.height)
    # withdrawn players stay away: absent rounds are trailing
    absent = g.with_columns((pl.col("game_type") == "absent").alias("a")).group_by("tournament", "player").agg(
        (pl.col("a").cast(pl.Int8).diff() < 0).any().alias("back"))
    assert not absent["back"].any()


def test_rates_zero_give_a_clean_swiss() -> None:
    cfg = SimulationConfig(tournaments=50, players=20, rounds=5, seed=2, half_bye_rate=0, zero_bye_rate=0,
                           forfeit_rate=0, double_forfeit_rate=0, withdrawal_rate=0, unrated_rate=0)
    types = set(simulate(cfg).batch.games["game_type"].cast(pl.String).unique().to_list())
    assert types == {"played"}


# ---------------------------------------------------------------------------------------------- Elo

def test_stronger_players_score_more(swiss: Simulation) -> None:
    p = swiss.batch.players.join(swiss.truth, on=["tournament", "start_no"]).with_columns(
        pl.col("strength").rank().over("tournament").alias("r"))
    top = p.filter(pl.col("r") > 20)["declared_points"].mean()
    bottom = p.filter(pl.col("r") <= 10)["declared_points"].mean()
    assert top > bottom + 4  # type: ignore[operator]


def test_results_follow_the_elo_model() -> None:
    cfg = SimulationConfig(tournaments=300, players=20, rounds=5, seed=5, forfeit_rate=0, double_forfeit_rate=0)
    sim = simulate(cfg)
    s = sim.truth.select("tournament", pl.col("start_no").alias("player"), "strength")
    g = sim.batch.games.filter(pl.col("played") & (pl.col("colour") == "w")).join(
        s, on=["tournament", "player"]).join(
        s.rename({"player": "opponent", "strength": "ostrength"}), on=["tournament", "opponent"])
    expected = expected_score((g["strength"] - g["ostrength"]).to_numpy())
    actual = g["points"].to_numpy() / 2
    assert abs(actual.mean() - expected.mean()) < 0.02
    close = np.abs((g["strength"] - g["ostrength"]).to_numpy()) < 100
    draws = (g["result"] == "=").to_numpy()
    assert draws[close].mean() > draws[~close].mean()  # draws fall with the gap


# ------------------------------------------------------------------------------------------ round robin

@pytest.mark.parametrize("players", [6, 7])
def test_round_robin_everyone_meets_everyone_once(players: int) -> None:
    cfg = SimulationConfig(tournaments=20, players=players, kind="round_robin", seed=1, forfeit_rate=0.05,
                           withdrawal_rate=0.1)
    sim = simulate(cfg)
    g = sim.batch.games
    assert cfg.n_rounds == players + players % 2 - 1
    met = g.filter(pl.col("opponent").is_not_null()).group_by("tournament", "player").agg(
        pl.col("opponent").n_unique().alias("n"), pl.len())
    assert (met["n"] == players - 1).all() and (met["len"] == players - 1).all()
    free = g.filter(pl.col("opponent").is_null())
    assert set(free["game_type"].cast(pl.String).unique().to_list()) <= ({"absent"} if players % 2 else set())
    assert free.height == (20 * players if players % 2 else 0)
    whites = g.group_by("tournament", "player").agg((pl.col("colour") == "w").sum().alias("w"),
                                                    (pl.col("colour") == "b").sum().alias("b"))
    assert ((whites["w"].cast(pl.Int32) - whites["b"].cast(pl.Int32)).abs() <= 1).all()
    t = sim.batch.tournaments
    assert t["type_code"].unique().to_list() == ["FIDE_ROUNDROBIN"]
    assert t["event_type"].cast(pl.String).unique().to_list() == ["round_robin"]
    again = _round_trip(sim.batch)
    assert again.games.equals(g)
    assert again.tournaments["event_type"].equals(t["event_type"])


def test_berger_round_one_and_two() -> None:
    """FIDE Berger table for 6 players: round 1 1-6 2-5 3-4, round 2 6-4 5-3 1-2 (White first)."""
    cfg = SimulationConfig(tournaments=1, players=6, kind="round_robin", seed=0, unrated_rate=0)
    g = simulate(cfg).batch.games.filter((pl.col("colour") == "w") & (pl.col("round") <= 2))
    boards = sorted(zip(g["round"].to_list(), g["player"].to_list(), g["opponent"].to_list(), strict=True))
    assert boards == [(1, 1, 6), (1, 2, 5), (1, 3, 4), (2, 1, 2), (2, 5, 3), (2, 6, 4)]


# ------------------------------------------------------------------------------------------------ TRF

@pytest.mark.parametrize("kw", [
    dict(kind="swiss", players=9, rounds=6, **RICH),
    dict(kind="swiss", players=12, rounds=5, scoring="3-1-0", **RICH),
    dict(kind="round_robin", players=5, double_forfeit_rate=0.05, withdrawal_rate=0.2),
], ids=["swiss", "swiss-3-1-0", "round-robin"])
def test_trf_round_trip(kw: dict[str, object]) -> None:
    sim = simulate(SimulationConfig(tournaments=150, seed=9, **kw))  # type: ignore[arg-type]
    again = _round_trip(sim.batch)
    assert again.games.equals(sim.batch.games)
    assert again.players.drop("line").equals(sim.batch.players.drop("line"))  # line: where in the file
    assert again.tournaments.equals(sim.batch.tournaments)


def test_small_fields_count_unavoidable_rematches() -> None:
    sim = simulate(SimulationConfig(tournaments=30, players=6, rounds=8, seed=1, **RICH))
    assert sim.stats.rematches > 0
    assert sim.stats.fallback_rounds >= sim.stats.fallback_failures > 0
    _round_trip(sim.batch)


# ------------------------------------------------------------------------------------------ validation

@pytest.mark.parametrize("kw", [
    dict(kind="knockout"), dict(scoring="2-1-0"), dict(players=1), dict(forfeit_rate=1.5),
    dict(rounds=0), dict(kind="round_robin", players=4, rounds=7), dict(seed=-1),
])
def test_bad_configurations_raise(kw: dict[str, object]) -> None:
    with pytest.raises(TbstatsError):
        SimulationConfig(**kw)  # type: ignore[arg-type]


def test_no_tournaments() -> None:
    sim = simulate(SimulationConfig(tournaments=0))
    assert sim.batch.games.is_empty() and sim.truth.is_empty()
