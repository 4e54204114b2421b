"""The TRF reader's range checks, cause-first errors and warnings that say their consequence (issue 10).

Each case is a one- or two-line change of the good four-player file; each names the line and the field.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner
from trf_samples import GOOD, LINES, player, variant

from tbstats.cli import main
from tbstats.engine.compute import compute
from tbstats.io.tabular import read_model
from tbstats.io.trf import read_trf


def read(text: str) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Errors, warnings and tournaments of one file named ``x.trf``."""
    result = read_trf([("x.trf", text.encode())])
    return result.errors, result.batch.warnings, result.batch.tournaments


def with_field(index: int, lo: int, hi: int, value: str) -> str:
    """The good file with columns ``lo..hi-1`` (0-based) of line ``index`` replaced by ``value``."""
    line = LINES[index]
    return variant(index, line[:lo] + f"{value:>{hi - lo}}" + line[hi:])


def with_header(*records: str) -> str:
    return "\n".join([LINES[0], *records, *LINES[2:]]) + "\n"


def first_error(errors: pl.DataFrame) -> tuple[int | None, str | None, str]:
    row = errors.row(0, named=True)
    return row["line"], row["column"], row["reason"]


# ------------------------------------------------------------------------------------------------ ranges

@pytest.mark.parametrize("points", ["inf", "nan", "1e10", "-inf", "99.5"])
def test_points_that_are_not_finite_or_beyond_the_maximum_are_errors_on_their_line(points: str) -> None:
    errors, _, tournaments = read(with_field(3, 80, 84, points))
    assert tournaments.is_empty()
    line, column, reason = first_error(errors)
    assert (line, column) == (4, "points (cols 81-84)")
    assert points in reason


@pytest.mark.parametrize(("record", "column", "phrase"), [
    ("062 9999999999", "062", "at most 9999 players"),
    ("XXR 32768", "XXR", "at most 999 rounds"),
    ("XXR 1000", "XXR", "at most 999 rounds"),
    ("142 40000", "142", "at most 999 rounds"),
    ("XXR " + "9" * 4301, "XXR", "(4301 digits)"),
    ("XXS W=99999999999", "XXS", "scoring value 99999999999 out of range"),
    ("XXS W=1.00001", "XXS", "out of range"),
    ("162 W 1000.0", "162", "out of range"),
])
def test_header_numbers_beyond_their_fields_are_errors_on_their_line(record: str, column: str, phrase: str) -> None:
    errors, _, tournaments = read(with_header(record))
    assert tournaments.is_empty()
    line, col, reason = first_error(errors)
    assert (line, col) == (2, column)
    assert phrase in reason


def test_a_line_beyond_999_rounds_is_an_error_and_reads_in_linear_time() -> None:
    blocks = ["   2 w 1", "   3 b ="] * 600
    text = variant(2, player(1, "Alpha, Anna", "2100", blocks))
    errors, _, _ = read(text)
    line, column, reason = first_error(errors)
    assert (line, column) == (3, "line length")
    assert "line of 12,089 characters (at most 10,081" in reason
    huge = variant(2, LINES[2] + " " * 10 + "x" * 327_000)  # once 38 s in a Python loop over blocks
    errors, _, _ = read(huge)
    assert first_error(errors)[:2] == (3, "line length")


def test_a_negative_rating_is_an_error_not_unrated() -> None:
    errors, _, _ = read(with_field(3, 48, 52, "-100"))
    assert first_error(errors) == (4, "rating (cols 49-52)",
                                   "'-100' is not a rating (expected digits, or blank/0 for unrated)")


@pytest.mark.parametrize(("lo", "hi", "value", "column", "phrase"), [
    (80, 84, "x.5", "points (cols 81-84)", "'x.5' is not a number of points"),
    (85, 89, "2a", "rank (cols 86-89)", "'2a' is not a rank"),
    (57, 68, "12345ABC", "FIDE id (cols 58-68)", "'12345ABC' is not a FIDE id"),
])
def test_fields_that_are_not_numbers_are_warnings_naming_line_and_field(
        lo: int, hi: int, value: str, column: str, phrase: str) -> None:
    errors, warnings, tournaments = read(with_field(3, lo, hi, value))
    assert errors.is_empty() and tournaments.height == 1
    row = warnings.filter(pl.col("field") == column).row(0, named=True)
    assert row["line"] == 4 and phrase in row["message"]


# ---------------------------------------------------------------------------------- cause before symptom

def test_a_self_pairing_is_reported_before_its_consequence_on_an_earlier_line() -> None:
    errors, _, _ = read(variant(3, player(2, "Beta, Bob", "2000", ["   2 b 0", "   4 w 1"])))
    assert first_error(errors) == (4, "round 1 opponent", "player 2 is paired with themself")
    assert errors.filter(pl.col("line") == 3)["reason"].str.contains("player 1 meets 2").any()


def test_a_line_cut_between_colour_and_result_is_the_cause() -> None:
    # player 2's line ends after the colour of round 2; player 4 has a result against him
    errors, _, _ = read(variant(3, player(2, "Beta, Bob", "2000", ["   1 b 0", "   4 w"])))
    line, column, reason = first_error(errors)
    assert (line, column) == (4, "round 2")
    assert reason.startswith("line ends at column 107 inside the round block")


def test_a_pending_game_is_not_a_cut_line() -> None:
    text = (variant(3, player(2, "Beta, Bob", "2000", ["   1 b 0", "   4 w"]))
            .replace(player(4, "Delta, Dora", "1800", ["   3 b =", "   2 b 0"]),
                     player(4, "Delta, Dora", "1800", ["   3 b =", "   2 b"])))
    errors, warnings, t = read(text)
    assert errors.is_empty(), errors
    assert t["rounds_played"].to_list() == [1]
    assert "games without result in round 2: standings after round 1 (1 game, first 2-4)" in warnings["message"]


def test_round_blocks_shifted_by_a_column_are_an_error() -> None:
    for shifted in (LINES[3][:91] + " " + LINES[3][91:], LINES[3][:90] + LINES[3][91:]):
        errors, _, _ = read(variant(3, shifted))
        line, column, reason = first_error(errors)
        assert (line, column) == (4, "round 1"), errors
        assert "is out of line" in reason


# ------------------------------------------------------------------------------ warnings with consequences

def test_games_without_result_in_round_1_say_the_standings_are_after_round_0() -> None:
    text = GOOD.replace("   2 w 1", "   2 w  ").replace("   1 b 0", "   1 b  ")
    errors, warnings, t = read(text)
    assert errors.is_empty()
    assert t["rounds_played"].to_list() == [0]
    row = warnings.filter(pl.col("field") == "round 1 result").row(0, named=True)
    assert row["line"] == 3
    assert row["message"] == "games without result in round 1: standings after round 0 (1 game, first 1-2)"


@pytest.mark.parametrize(("records", "field", "message"), [
    (("062 209",), "062", "062 says 209 players, 4 found"),
    (("XXR 1",), "XXR", "XXR 1 but 2 rounds present"),
    (("142 1",), "142", "142 1 but 2 rounds present"),
    (("202 BH,XYZ",), "202", "202 list not understood: unknown tie-break 'XYZ'"),
    (("212 PTS,BH/Q",), "212", "212 list not understood:"),
    ((), "042 start date", "no start date (042), end date (052) or round dates (132)"),
])
def test_header_warnings_say_their_consequence(records: tuple[str, ...], field: str, message: str) -> None:
    errors, warnings, _ = read(with_header("XXR 2", *records) if records and records[0].startswith("0")
                               else with_header(*records) if records else GOOD)
    assert errors.is_empty(), errors
    rows = warnings.filter(pl.col("field") == field)
    assert rows.height == 1, warnings
    assert rows["message"][0].startswith(message)
    assert rows["line"][0] == (None if not records else 2 if not records[0].startswith("0") else 3)


@pytest.mark.parametrize("record", ["XXR 1", "142 1"])
def test_fewer_rounds_declared_than_present_read_as_the_rounds_present(record: str, tmp_path: Path) -> None:
    # the model's checks hold every round of an event within its rounds: a declaration below the rounds the
    # file holds is read as those rounds, so that the model ingest writes reads back whole
    _, warnings, t = read(with_header(record))
    assert t.select("rounds", "rounds_played").row(0) == (2, 2)
    assert warnings.filter(pl.col("field") == record[:3])["message"].to_list() == [
        f"{record} but 2 rounds present: read as 2 rounds"]
    (tmp_path / "e.trf").write_text(with_header(record))
    model = tmp_path / "model"
    assert CliRunner().invoke(main, ["ingest", str(tmp_path / "e.trf"), "-o", str(model), "-q"]).exit_code == 0
    back = read_model(model)
    assert back.tournaments.select("rounds", "rounds_played").row(0) == (2, 2)
    assert back.games.height == 8


@pytest.mark.parametrize("rules", ["fide-2026", "fide-2024", "fide-legacy", "uscf"])
def test_an_event_without_rounds_has_played_none(rules: str) -> None:
    # players but no round block and no XXR/142 (a registration list): no round counted, so no round without
    # opponent either (it read as 10,000 such rounds: a Buchholz of 25,007,500 under the pre-2023 rules)
    text = "012 Registration\n" + "\n".join(player(n, name, "2000", []) for n, name in ((1, "A, B"), (2, "C, D")))
    errors, _, t = read(text + "\n")
    assert errors.is_empty(), errors
    assert t.select("rounds", "rounds_played").row(0) == (0, 0)
    batch = read_trf([("x.trf", (text + "\n").encode())]).batch
    table = compute(batch, "BH,SB,FB,KS,PS", rules=rules)
    assert table.select("BH", "SB", "FB", "KS", "PS").to_numpy().tolist() == [[0.0] * 5] * 2


def test_declared_points_that_differ_say_the_results_count() -> None:
    _, warnings, _ = read(with_field(3, 80, 84, "2.0"))
    assert warnings.filter(pl.col("line") == 4)["message"].to_list() == [
        "declared points 2.0 differ from the results' total 1.0; the results count"]


def test_162_with_one_space_before_the_code_is_read() -> None:
    _, _, t = read(with_header("162 W 3.0    D 1.0    L 0.0", "XXR 2"))
    assert t.select("scale", "pts_win", "pts_draw", "pts_loss", "pts_pab").row(0) == (1, 3, 1, 0, 3)
