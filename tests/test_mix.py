"""The mixed archive (tbstats.simulation.mix): seeded, every kind of event, and every event accepted by the CLI."""

from __future__ import annotations

import csv
import dataclasses
import datetime as dt
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner
from polars.testing import assert_frame_equal

from tbstats.cli import main
from tbstats.errors import TbstatsError
from tbstats.io.trf import write_trf
from tbstats.simulation import MixConfig, iter_mix, profile_config, simulate_mix
from tbstats.simulation.population import BAND, NEW_IDS

#: A small mix with every kind of event well represented (the default shares give few team events).
SMALL = MixConfig(events=60, seed=5, round_robin_share=0.2, double_round_robin_share=0.1, team_share=0.1, block=25)
LIST = "BH/C1,BH,SB,PS,WIN,ARO,TPR,KS,AOB,FB,DE"


@pytest.fixture(scope="module")
def small() -> object:
    return simulate_mix(SMALL)


@pytest.fixture(scope="module")
def trf_dir(small: object, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mix")
    batch = small.batch  # type: ignore[attr-defined]
    for n, text in zip(batch.tournaments["tournament"].to_list(), write_trf(batch).values(), strict=True):
        (root / f"{n:03d}.trf").write_text(text)
    return root


def test_same_seed_same_archive(small: object) -> None:
    again = simulate_mix(SMALL)
    for table in ("tournaments", "players", "games"):
        assert_frame_equal(getattr(small.batch, table), getattr(again.batch, table))  # type: ignore[attr-defined]
    assert_frame_equal(small.truth, again.truth)  # type: ignore[attr-defined]
    other = simulate_mix(MixConfig(**{**SMALL.__dict__, "seed": 6}))
    assert not other.batch.games.equals(small.batch.games)  # type: ignore[attr-defined]


def test_blocks_number_events_across_the_archive(small: object) -> None:
    blocks = list(iter_mix(SMALL))
    assert [(b.first, b.batch.n_tournaments) for b in blocks] == [(0, 25), (25, 25), (50, 10)]
    whole = small.batch  # type: ignore[attr-defined]
    assert whole.tournaments["tournament"].to_list() == list(range(60))
    assert whole.tournaments["source"].n_unique() == 60
    assert_frame_equal(pl.concat([b.batch.games for b in blocks]), whole.games)


def test_kinds_shapes_and_unplayed_rounds(small: object) -> None:
    batch, kinds = small.batch, small.kinds  # type: ignore[attr-defined]
    counts = dict(kinds["kind"].cast(pl.String).value_counts().iter_rows())
    assert set(counts) == {"swiss", "round_robin", "double_round_robin", "team"}
    t = batch.tournaments.join(kinds, on="tournament")
    # the batch's events are the drawn ones: kind, rounds, and players (teams x (boards + 1) for team events)
    assert (t["event_type"].cast(pl.String) == t["kind"].cast(pl.String).replace(
        {"double_round_robin": "round_robin"})).all()
    assert (t["rounds"] == t["rounds_right"]).all()
    sizes = batch.players.group_by("tournament").len().join(kinds, on="tournament")
    single = sizes.filter(pl.col("kind") != "team")
    assert (single["len"] == single["players"]).all()
    teams = sizes.filter(pl.col("kind") == "team")
    assert ((teams["len"] == teams["players"] * 5) | (teams["len"] == teams["players"] * 7)).all()
    rr = t.filter(pl.col("kind") == "round_robin")
    assert (rr["rounds"] == rr["players"] + rr["players"] % 2 - 1).all()
    drr = t.filter(pl.col("kind") == "double_round_robin")
    assert (drr["rounds"] == 2 * (drr["players"] + drr["players"] % 2 - 1)).all()
    swiss = t.filter(pl.col("kind") == "swiss")
    assert swiss["rounds"].min() >= 3 and swiss["rounds"].max() <= 13  # type: ignore[operator]
    assert swiss["players"].min() >= 6 and swiss["players"].max() <= 300  # type: ignore[operator]
    types = set(batch.games["game_type"].cast(pl.String).unique().to_list())
    assert {"played", "pab", "half_bye", "zero_bye", "forfeit_win", "forfeit_loss", "absent"} <= types
    assert 0 < batch.players["rating"].null_count() < batch.players.height
    team_records = t.filter(pl.col("kind") == "team")["records"].explode().str.slice(0, 3)
    assert {"310", "362"} <= set(team_records.to_list())


def test_every_event_is_accepted(trf_dir: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    info = runner.invoke(main, ["info", str(trf_dir), "--format", "csv", "-q"])
    assert info.exit_code == 0, info.output
    row = next(csv.DictReader(info.output.splitlines()))
    assert (row["tournaments"], row["warnings"]) == ("60", "0")
    errors = tmp_path / "errors.csv"
    done = runner.invoke(main, ["compute", str(trf_dir), "-t", LIST, "--unrated-rating", "1400", "--format", "csv",
                                "-o", str(tmp_path / "out.csv"), "--errors", str(errors), "-q"])
    assert done.exit_code == 0, done.output
    assert errors.read_text().strip().count("\n") == 0   # the header only
    out = pl.read_csv(tmp_path / "out.csv")
    assert out["source"].n_unique() == 60 and out["rank"].null_count() == 0


def test_team_events_give_team_standings(small: object, trf_dir: Path, tmp_path: Path) -> None:
    kinds = small.kinds  # type: ignore[attr-defined]
    team_ids = kinds.filter(pl.col("kind") == "team")["tournament"].to_list()
    team_dir = tmp_path / "teams"
    team_dir.mkdir()
    for n in team_ids:
        (team_dir / f"{n:03d}.trf").write_bytes((trf_dir / f"{n:03d}.trf").read_bytes())
    out = tmp_path / "teams.csv"
    done = CliRunner().invoke(main, ["compute", str(team_dir), "--teams", "-t", "MPvGP,EDE,BH:MP,SSSC",
                                     "--format", "csv", "-o", str(out), "-q"])
    assert done.exit_code == 0, done.output
    table = pl.read_csv(out)
    want = kinds.filter(pl.col("kind") == "team")["players"].sum()
    assert table.height == want and table["rank"].null_count() == 0


@pytest.mark.parametrize("change", [{"team_share": 0.9}, {"round_robin_share": -0.1}, {"block": 0},
                                    {"min_players": 20, "max_players": 10}, {"round_robin_players": (2, 8)},
                                    {"max_swiss_rounds": 2}, {"max_swiss_rounds": 14}])
def test_bad_configs_are_refused(change: dict[str, object]) -> None:
    with pytest.raises(TbstatsError):
        MixConfig(**change)  # type: ignore[arg-type]


def test_club_profile_draws_club_events() -> None:
    """The club profile: Swiss of 7-70 players and 3-11 rounds, round robins of 4-12, none of the other kinds."""
    club = simulate_mix(profile_config("club", events=120, seed=4))
    t = club.batch.tournaments.join(club.kinds, on="tournament")
    assert set(t["kind"].cast(pl.String).unique().to_list()) == {"swiss", "round_robin"}
    swiss, rr = t.filter(pl.col("kind") == "swiss"), t.filter(pl.col("kind") == "round_robin")
    assert swiss["rounds"].min() >= 3 and swiss["rounds"].max() == 11  # type: ignore[operator]
    assert swiss["players"].min() >= 7 and swiss["players"].max() <= 70  # type: ignore[operator]
    assert rr["players"].min() >= 4 and rr["players"].max() <= 12  # type: ignore[operator]
    assert 0.1 < rr.height / t.height < 0.3


def test_club_wide_profile_draws_the_club_s_events_larger() -> None:
    """club-wide: the club's kinds and ranges, its Swiss events larger (median 36 players against 22)."""
    wide = profile_config("club-wide", events=1, seed=0)
    assert dataclasses.replace(wide, players_median=22.0, players_sigma=0.6) == profile_config("club", events=1, seed=0)
    drawn = {name: simulate_mix(profile_config(name, events=200, seed=4)) for name in ("club", "club-wide")}
    sizes = {}
    for name, sim in drawn.items():
        t = sim.batch.tournaments.join(sim.kinds, on="tournament")
        swiss = t.filter(pl.col("kind") == "swiss")
        assert swiss["players"].min() >= 7 and swiss["players"].max() <= 70  # type: ignore[operator]
        sizes[name] = float(swiss["players"].median())  # type: ignore[arg-type]
    assert 18 < sizes["club"] < 26 and 30 < sizes["club-wide"] < 42, sizes


def test_mix_profile_is_the_default_archive() -> None:
    assert profile_config("mix", events=30, seed=2) == MixConfig(events=30, seed=2)
    with pytest.raises(TbstatsError, match="unknown archive profile 'big'"):
        profile_config("big", events=1, seed=0)


def test_events_carry_what_real_files_do(small: object, trf_dir: Path) -> None:
    """Simulated events name their players (with sex, title, federation, FIDE id and birth date) and carry the
    event's city, federation, dates, arbiter, time control and for some round dates, as real files do; all of it
    reads back from the files written."""
    from tbstats.io.sources import load

    batch, kinds = small.batch, small.kinds  # type: ignore[attr-defined]
    simulated = kinds.filter(pl.col("kind") != "team")["tournament"]
    players = batch.players.filter(pl.col("tournament").is_in(simulated.implode()))
    assert players["name"].str.contains(", ").all() and players["name"].n_unique() > players.height // 4
    assert 0.02 < (~players["name"].str.contains(r"^[\x00-\x7f]*$")).mean() < 0.3   # type: ignore[operator]
    assert set(players["sex"].unique().to_list()) == {"m", "w"}
    assert players["federation"].str.len_chars().eq(3).all() and players["federation"].n_unique() > 10
    rated = players["rating"].is_not_null()
    assert players.filter(rated)["fide_id"].null_count() == 0
    # (a title is the person's, from his own rating: within the band of the rating he has in an event)
    assert players.filter(pl.col("title").is_not_null())["rating"].min() >= 2200 - BAND  # type: ignore[operator]
    assert players["birth"].str.contains(r"^\d{4}/\d\d/\d\d$").all()
    events = batch.tournaments.filter(pl.col("tournament").is_in(simulated.implode()))
    assert events["start_date"].n_unique() > 1 and events["city"].null_count() == 0
    assert events["start_date"].min() >= dt.date(2026, 3, 1)   # type: ignore[operator]  # (the 2026 edition)
    codes = events["records"].list.eval(pl.element().str.slice(0, 3))
    assert codes.list.contains("102").all() and codes.list.contains("122").all()
    assert 0 < codes.list.contains("132").sum() < events.height
    read = load([str(trf_dir)]).batch   # (each file is named after its event's id)
    file_id = pl.col("source").str.extract(r"(\d+)\.trf$").cast(pl.Int64).alias("tournament")
    ids = read.tournaments.select("tournament", file_id.alias("id"))
    columns = ["tournament", "start_no", "name", "sex", "title", "federation", "fide_id", "birth"]
    again = read.players.join(ids, on="tournament").drop("tournament").rename({"id": "tournament"})
    assert_frame_equal(again.select(columns).sort("tournament", "start_no"),
                       batch.players.select(columns).sort("tournament", "start_no"))
    dates = ["tournament", "start_date", "end_date"]
    assert_frame_equal(read.tournaments.with_columns(file_id).select(dates).sort("tournament"),
                       batch.tournaments.select(dates).sort("tournament"))


def test_players_come_back_from_event_to_event() -> None:
    """Players are people of the archive's population: one FIDE id is one person in every event he plays (one
    name but for its local spelling, one sex, federation and birth date, ratings within the band of his own),
    never twice in one event; some play many events, most a few; a player no one fits is someone new."""
    block = simulate_mix(MixConfig(events=300, seed=11, team_share=0.0))
    players = block.batch.players.filter(pl.col("fide_id").is_not_null())
    assert players.group_by("tournament", "fide_id").len()["len"].max() == 1
    people = players.filter(pl.col("fide_id") < NEW_IDS).group_by("fide_id").agg(
        pl.len().alias("events"), pl.col("name").str.to_lowercase().n_unique().alias("names"),
        pl.col("sex").n_unique(), pl.col("federation").n_unique(), pl.col("birth").n_unique(),
        (pl.col("rating").max() - pl.col("rating").min()).alias("spread"))
    assert people["events"].mean() > 2 and people["events"].max() >= 10   # type: ignore[operator]
    assert (people["events"] == 1).any()
    assert people.select("sex", "federation", "birth").max().row(0) == (1, 1, 1)
    assert people["names"].max() <= 2 and people["spread"].max() <= 2 * BAND   # type: ignore[operator]
    # (someone new where no one fits: many in 300 events, whose population is thin, 60 people a federation)
    assert 0 < (players["fide_id"] >= NEW_IDS).mean() < 0.35   # type: ignore[operator]
    # without a population every player is new (the archives before it: ids drawn for each row)
    alone = simulate_mix(MixConfig(events=60, seed=11, team_share=0.0, persons_per_event=0)).batch.players
    assert (alone["fide_id"].drop_nulls() >= NEW_IDS).all()


def test_identities_leave_the_games_as_drawn(monkeypatch: pytest.MonkeyPatch, small: object) -> None:
    """The identities come from a stream of their own: without them the seed draws the same games."""
    import tbstats.simulation.mix as mix

    monkeypatch.setattr(mix, "dress", lambda batch, rng, population: batch)
    bare = simulate_mix(SMALL)
    assert_frame_equal(bare.batch.games, small.batch.games)  # type: ignore[attr-defined]
    assert_frame_equal(bare.batch.players.drop("name", "sex", "title", "federation", "fide_id", "birth"),
                       small.batch.players.drop("name", "sex", "title", "federation", "fide_id", "birth"))  # type: ignore[attr-defined]
    assert bare.batch.players["federation"].null_count() == bare.batch.players.height
