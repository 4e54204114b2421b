"""Columnar models are checked like TRF: each kind of damage is rejected naming file, row or line, and column."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest
from helpers import FIXTURES, REAL, requires_shared
from trf_samples import GOOD

from tbstats.errors import FormatError, SchemaError, TbstatsError
from tbstats.io import check
from tbstats.io.sources import iter_batches, load
from tbstats.io.tabular import flatten, read_model, write_model
from tbstats.io.trf import read_trf
from tbstats.model.batch import Batch

Tables = dict[str, pl.DataFrame]
Mutation = Callable[[Tables], Tables]


def good() -> Tables:
    b = read_trf([("good.trf", GOOD.encode())]).batch
    return {"tournaments": b.tournaments, "players": b.players, "games": b.games, "warnings": b.warnings}


def at(df: pl.DataFrame, row: int, **values: object) -> pl.DataFrame:
    """``df`` with the given columns set on one row (the column keeps its type when the value fits)."""
    out = df
    for col, value in values.items():
        mask = pl.int_range(pl.len()) == row
        out = out.with_columns(pl.when(mask).then(pl.lit(value)).otherwise(pl.col(col)).alias(col))
    return out


def _listed(flat: pl.DataFrame, values: list[str]) -> object:
    """A list cell of a flat table: a list, or its JSON text in a CSV one."""
    return json.dumps(values) if flat.schema["tiebreaks"] == pl.String else pl.Series([values])


def on(table: str, fn: Callable[[pl.DataFrame], pl.DataFrame]) -> Mutation:
    return lambda t: {**t, table: fn(t[table])}


# games rows of good.trf: (player, round) = (1,1) (1,2) (2,1) (2,2) (3,1) (3,2) (4,1) (4,2); 1-2, 3-4 in round 1
CASES: dict[str, tuple[Mutation, str, str, str]] = {
    # name: (mutation, table file, column, reason fragment)
    "scale 0": (on("tournaments", lambda d: at(d, 0, scale=0)), "tournaments", "scale", "scale 0 is not a positive"),
    "negative rounds_played": (on("tournaments", lambda d: at(d, 0, rounds_played=-1)), "tournaments",
                               "rounds_played", "rounds_played -1 is not from 0"),
    "two events share an id": (on("tournaments", lambda d: pl.concat([d, d])), "tournaments", "tournament",
                               "tournament id 0 is used by more than one event"),
    "null tournament id": (on("tournaments", lambda d: at(d, 0, tournament=None)), "tournaments", "tournament",
                           "tournament id is empty"),
    "null start number": (on("players", lambda d: at(d, 1, start_no=None)), "players", "start_no",
                          "start number is empty"),
    "duplicate start number": (on("players", lambda d: at(d, 1, start_no=1)), "players", "start_no",
                               "start number 1 appears more than once"),
    "negative rating": (on("players", lambda d: at(d, 0, rating=-100)), "players", "rating",
                        "rating -100 is negative"),
    "player of an unknown tournament": (on("players", lambda d: at(d, 3, tournament=9)), "players", "tournament",
                                        "tournament 9 does not exist"),
    "game of an unknown player": (on("games", lambda d: at(d, 7, player=9)), "games", "player",
                                  "player 9 does not exist in tournament 0"),
    "game of an unknown tournament": (on("games", lambda d: at(d, 7, tournament=5)), "games", "tournament",
                                      "tournament 5 does not exist"),
    "round 0": (on("games", lambda d: at(d, 1, round=0)), "games", "round", "round 0 is not from 1"),
    "round beyond the event": (on("games", lambda d: at(d, 1, round=3)), "games", "round",
                               "round 3 is not from 1 to the event's rounds (2)"),
    "duplicate game row": (on("games", lambda d: pl.concat([d, d.head(1)])), "games", "round",
                           "round 1 of player 1 appears more than once"),
    "self-pairing": (on("games", lambda d: at(d, 0, opponent=1)), "games", "opponent",
                     "player 1 is paired with themself"),
    "opponent missing": (on("games", lambda d: at(d, 0, opponent=7)), "games", "opponent",
                         "opponent 7 does not exist"),
    "opponent not pointing back": (on("games", lambda d: at(d, 0, opponent=3)), "games", "opponent",
                                   "player 1 meets 3 but 3's row of that round says 4"),
    "results do not complement": (on("games", lambda d: at(d, 2, result="1", points=2)), "games", "result",
                                  "results do not complement"),
    "points contradict the result": (on("games", lambda d: at(d, 0, points=1)), "games", "points",
                                     "points 1 do not match a played '1' (worth 2 units at scale 2)"),
    "result not allowed": (on("games", lambda d: at(d, 0, result="U")), "games", "result",
                           "result 'U' is not allowed for a played"),
    "played flag wrong": (on("games", lambda d: at(d, 0, played=False)), "games", "played",
                          "played is false but the game type is played"),
    "bye with an opponent": (on("games", lambda d: at(d, 0, game_type="pab", result="U", played=False)), "games",
                             "opponent", "a pab has no opponent, but opponent is 2"),
    "forfeit against a played game": (on("games", lambda d: at(d, 0, game_type="forfeit_win", result="+",
                                                               played=False)),
                                      "games", "game_type", "a forfeit_win against 2 who has a played"),
}


def _write_dir(tables: Tables, directory: Path, ext: str) -> Path:
    """The tables as a directory dataset, through the model's writer (types as the model has them)."""
    batch = Batch(tables["tournaments"], tables["players"], tables["games"], tables["warnings"])
    write_model(batch, directory, format="csv" if ext == "csv" else "parquet")
    return directory


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("ext", ["parquet", "csv"])
def test_directory_dataset_damage_is_named(case: str, ext: str, tmp_path: Path) -> None:
    mutate, table, column, reason = CASES[case]
    directory = _write_dir(mutate(good()), tmp_path / "model", ext)
    with pytest.raises(FormatError) as info:
        read_model(directory)
    exc = info.value
    assert exc.path == str(directory / f"{table}.{ext}")
    assert exc.column == column
    assert reason in exc.reason
    if ext == "csv":
        assert exc.line is not None and exc.line >= 2
    else:
        assert exc.reason.startswith("row ")


def test_csv_lines_are_the_file_lines(tmp_path: Path) -> None:
    directory = _write_dir(CASES["round beyond the event"][0](good()), tmp_path / "m", "csv")
    with pytest.raises(FormatError) as info:
        read_model(directory)
    line = info.value.line
    assert line is not None
    assert (directory / "games.csv").read_text().splitlines()[line - 1].split(",")[:3] == ["0", "1", "3"]


FLAT_CASES: dict[str, tuple[Callable[[pl.DataFrame], pl.DataFrame], str, str]] = {
    "a player's rows disagree": (lambda f: at(f, 1, name="Other, Name"), "name",
                                 "rows of player 1 of tournament 0 disagree about name"),
    "two events share an id": (lambda f: at(f, 5, event_name="Another Open"), "event_name",
                               "rows of tournament 0 disagree about event_name"),
    # list columns are compared element by element (issue 22): one more element, then one other element
    "a row's tie-break list is longer": (lambda f: at(f, 2, tiebreaks=_listed(f, ["BH"])), "tiebreaks",
                                         "rows of tournament 0 disagree about tiebreaks"),
    "a row's tie-break list differs": (lambda f: at(at(f, 0, tiebreaks=_listed(f, ["BH", "SB"])), 1,
                                                 tiebreaks=_listed(f, ["BH", "PS"])), "tiebreaks",
                                       "rows of tournament 0 disagree about tiebreaks"),
    "null tournament on a game row": (lambda f: at(f, 3, tournament=None), "tournament",
                                      "tournament id is empty on a player or game row"),
    "null start number on a game row": (lambda f: at(f, 3, start_no=None), "start_no",
                                        "start number is empty on a game row"),
    "points contradict the result": (lambda f: at(f, 0, points=0), "points", "points 0 do not match"),
    "self-pairing": (lambda f: at(f, 0, opponent=1), "opponent", "paired with themself"),
}


@pytest.mark.parametrize("case", list(FLAT_CASES))
@pytest.mark.parametrize("ext", ["parquet", "csv"])
def test_flat_file_damage_is_named(case: str, ext: str, tmp_path: Path) -> None:
    mutate, column, reason = FLAT_CASES[case]
    batch = read_trf([("good.trf", GOOD.encode())]).batch
    flat = mutate(flatten(batch, json_lists=ext == "csv"))
    path = tmp_path / f"flat.{ext}"
    flat.write_csv(path) if ext == "csv" else flat.write_parquet(path)
    with pytest.raises(FormatError) as info:
        read_model(path)
    assert (info.value.path, info.value.column) == (str(path), column)
    assert reason in info.value.reason
    assert (info.value.line is not None) if ext == "csv" else info.value.reason.startswith("row ")


def test_values_outside_the_types_are_schema_errors_with_a_row(tmp_path: Path) -> None:
    tables = good()
    games = tables["games"].with_columns(pl.col("game_type").cast(pl.String), pl.col("round").cast(pl.Int64))
    for damaged, message in ((at(games, 2, game_type="won"), "games column 'game_type' row 3: 'won' does not fit"),
                             (at(games, 4, round=100000), "games column 'round' row 5: 100000 does not fit Int16")):
        directory = tmp_path / f"m{len(message)}"
        directory.mkdir()
        for name, df in {**tables, "games": damaged}.items():
            df.write_parquet(directory / f"{name}.parquet")
        with pytest.raises(SchemaError, match=message):
            read_model(directory)


def test_a_csv_cut_mid_row(tmp_path: Path) -> None:
    b = read_trf([("good.trf", GOOD.encode())]).batch
    path = tmp_path / "flat.csv"
    write_model(Batch(b.tournaments, b.players, b.games), path)  # the last row is a game row
    text = path.read_text()
    path.write_text(text[: len(text) - 12])
    with pytest.raises(FormatError, match="the file ends inside a row") as info:
        read_model(path)
    assert info.value.line == len(path.read_text().splitlines())


def test_collect_mode_loses_only_the_damaged_model(tmp_path: Path) -> None:
    (tmp_path / "good.trf").write_text(GOOD)
    _write_dir(CASES["self-pairing"][0](good()), tmp_path / "bad_model", "parquet")
    result = load([str(tmp_path)], on_error="collect")
    assert result.batch.tournaments["source"].to_list() == [f"{tmp_path}/good.trf"]
    assert result.ledger.height >= 1
    assert result.ledger["path"].to_list()[0] == f"{tmp_path}/bad_model/games.parquet"
    assert result.summary() == "2 files: 1 loaded, 1 rejected"
    with pytest.raises(TbstatsError):
        load([str(tmp_path / "bad_model")], on_error="raise")


def test_the_checker_lists_every_problem_up_to_a_cap(tmp_path: Path) -> None:
    tables = good()
    tables["games"] = tables["games"].with_columns(pl.col("points") + 1)
    located = {k: check.locate(v, f"{k}.parquet") for k, v in tables.items()}
    ledger = check.check_model(located)
    assert ledger.height == 8
    assert set(ledger["column"].to_list()) == {"points"}


@requires_shared()
def test_every_batch_the_trf_reader_makes_passes_the_checker() -> None:
    paths = [p for root in (REAL, FIXTURES) for p in sorted(root.rglob("*")) if p.suffix.lower() in (".trf", ".txt")]
    b = read_trf([(str(p), p.read_bytes()) for p in paths]).batch
    assert b.n_tournaments > 80
    located = {t: check.locate(getattr(b, t), f"{t}.parquet") for t in ("tournaments", "players", "games")}
    assert check.check_model(located).rows() == []



def test_games_are_checked_in_chunks_of_whole_tournaments_with_the_same_ledger(monkeypatch: pytest.MonkeyPatch
                                                                               ) -> None:
    """Games checked a few rows at a time (cut between tournaments) give the ledger of one whole pass: each
    check's first rows in table order, capped alike."""
    b = read_trf([(f"e{k}.trf", GOOD.encode()) for k in range(30)]).batch
    g = b.games.with_columns(  # damage spread over every tournament: points off, a player unknown in some
        pl.when(pl.col("round") == 2).then(pl.col("points") + 1).otherwise(pl.col("points")).alias("points"),
        pl.when((pl.col("tournament") % 4 == 1) & (pl.col("round") == 1) & (pl.col("player") == 3))
        .then(9).otherwise(pl.col("player")).alias("player"))
    tables = {"tournaments": b.tournaments, "players": b.players, "games": g}
    located = {k: check.locate(v, f"{k}.parquet") for k, v in tables.items()}
    whole = check.check_model(located)
    assert whole.height > check.ROWS_PER_CHECK
    monkeypatch.setattr(check, "GAME_CHUNK", 5)
    assert len(check._chunks(located["games"], 5)) > 10
    assert check.check_model(located).equals(whole)
    shuffled = located["games"].sample(fraction=1.0, shuffle=True, seed=3)   # not in runs: checked whole
    assert len(check._chunks(shuffled, 5)) == 1


@pytest.mark.parametrize("orphan", [-5, 9, 10**12])
def test_rows_of_a_tournament_outside_every_run_are_reported_not_skipped(orphan: int, tmp_path: Path) -> None:
    """A run of a lazily read dataset takes the ids from the tournaments table; rows naming an id below, between
    or above those runs still belong to one run, so the checker names them."""
    tables = good()
    second = {name: (t.with_columns(pl.col("tournament") + 1) if name != "warnings" else t.head(0))
              for name, t in tables.items()}
    both = {name: pl.concat([tables[name], second[name]]) for name in tables}
    stray = both["players"].head(1).with_columns(tournament=pl.lit(orphan, dtype=pl.Int64))
    both["players"] = pl.concat([both["players"], stray])
    directory = _write_dir(both, tmp_path / "model", "parquet")
    for size in (1, 2):
        stream = iter_batches([str(directory)], on_error="collect", batch_size=size)
        for _ in stream:
            pass
        ledger = stream.ledger
        assert stream.rejected == 1, size
        assert any(f"tournament {orphan} does not exist" in r for r in ledger["reason"].to_list()), size


def test_damage_in_a_later_part_names_its_row_in_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A part read as a slice of each file, proven clean or else located: a bad game in the third part is named
    by its row in the games file, as a whole read names it."""
    from tbstats.io import batches

    monkeypatch.setattr(batches, "UNIT_TOURNAMENTS", 1)
    tables = good()
    copies = [{name: t.with_columns(pl.col("tournament") + k) if name != "warnings" else t.head(0)
               for name, t in tables.items()} for k in range(4)]
    model = {name: pl.concat([c[name] for c in copies]) for name in tables}
    bad = 2 * tables["games"].height + 5   # a row of the third tournament
    model["games"] = at(model["games"], bad, points=7)
    directory = _write_dir(model, tmp_path / "model", "parquet")
    with pytest.raises(FormatError) as whole:
        read_model(directory)
    assert f"row {bad + 1}:" in whole.value.reason
    stream = iter_batches([str(directory)], on_error="collect", batch_size=1)
    assert sum(b.n_tournaments for b, _ in stream) == 3   # the other parts are read
    reasons = stream.ledger["reason"].to_list()
    assert stream.rejected == 1 and any(r.startswith(f"row {bad + 1}: ") and "points 7" in r for r in reasons)
