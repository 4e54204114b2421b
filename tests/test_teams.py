"""Team events: the team model, team scores and team tie-breaks against published answers (rules.md Section 9).

Golden data: Held's team exercises 34-49 (``held_team_exercise.trf`` with the answers of
``held_team_exercise.json``), the Friendship Cup 2024 (heltour, published standings) and FIDE's TRF-2026
team sample.
"""

from __future__ import annotations

import io
import json
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner, Result
from helpers import FIXTURES, REAL, ROOT, load_trf, requires_shared

from tbstats.cli import main
from tbstats.engine.standings import competition_rank, initial_labels
from tbstats.engine.teams.standings import compute_teams, extended_direct_encounter, make_team_context
from tbstats.engine.teams.tiebreaks import parse_team_spec
from tbstats.errors import FormatError, UnknownTieBreakError
from tbstats.io.tabular import read_model, write_model
from tbstats.io.trf import read_trf, write_trf
from tbstats.model.batch import Batch
from tbstats.model.spec import TieBreakSpec
from tbstats.model.teams.batch import build_teams

pytestmark = requires_shared()

HELD = FIXTURES / "teams" / "held_team_exercise.trf"
HELD_JSON = REAL / "held_exercises" / "held_team_exercise.json"
HELTOUR = REAL / "heltour" / "friendship_cup_2024.trf"
SHARLY = REAL / "sharly" / "example_trf26.trf"


@pytest.fixture(scope="module")
def held() -> Batch:
    return load_trf(HELD)


@pytest.fixture(scope="module")
def answers() -> dict[str, dict[str, object]]:
    return json.loads(HELD_JSON.read_text())  # type: ignore[no-any-return]


def _values(table: pl.DataFrame, column: str) -> dict[str, Decimal]:
    return {str(t): Decimal(str(v)) for t, v in table.select("team", column).iter_rows()}


HELD_COLUMNS = {"MPTS": "mp", "GPTS": "gp", "BH_MP (ex35)": "BH:MP", "BH/C1_MP (ex36)": "BH:MP/C1",
                "BH_GP (ex37)": "BH:GP", "BH/C1_GP (ex37)": "BH:GP/C1", "EMMSB/C1 (ex38)": "EMMSB/C1",
                "EGMSB (ex39)": "EGMSB", "EMGSB (ex40)": "EMGSB", "EGGSB (ex41)": "EGGSB",
                "SSSC (ex49, hundredths; paper prints one decimal)": "SSSC"}


def test_held_exercises_35_to_41_and_49_fide_2024(held: Batch, answers: dict[str, dict[str, object]]) -> None:
    specs = [c for c in HELD_COLUMNS.values() if c not in ("mp", "gp")]
    table = compute_teams(held, ",".join(specs), rules="fide-2024")
    for key, column in HELD_COLUMNS.items():
        got = _values(table, column)
        expected = answers["expected"][key]
        assert isinstance(expected, dict)
        assert {t: got[t] for t in expected} == {t: Decimal(v) for t, v in expected.items()}, key


def test_held_fide_2026_caps(held: Batch, answers: dict[str, dict[str, object]]) -> None:
    """2026: team 1's forfeit win dummy is capped; with the 330 record the cap is the scheduled opponent's
    adjusted score (16.4.1, rules.md 9.1); the checker's V2 answers read the forfeit without an opponent
    (cap D x n, 16.4.2), which the file without its 330 record reproduces."""
    table = compute_teams(held, "BH:MP,BH:MP/C1,BH:GP,EMMSB/C1,EGMSB,EMGSB,EGGSB,SSSC", rules="fide-2026")
    v2 = answers["expected_2026_rules_V2"]
    for spec in ("BH:MP", "BH:MP/C1", "EMMSB/C1", "EMGSB", "SSSC"):
        key = spec.replace("BH:MP", "BH_MP").replace("BH_MP/C1", "BH/C1_MP")
        expected = v2[key]
        assert isinstance(expected, dict)
        assert {t: _values(table, spec)[t] for t in expected} == {t: Decimal(v) for t, v in expected.items()}
    # team 6 (forfeit loss, MP 7, GP 12.5) caps team 1's dummy: GP 17.5 -> 12.5
    got = _values(table, "BH:GP")
    assert (got["1"], got["2"]) == (Decimal("109.0"), Decimal("107.5"))
    assert (_values(table, "EGMSB")["1"], _values(table, "EGGSB")["1"]) == (Decimal("148.0"), Decimal("263.0"))
    no_330 = held.tournaments.with_columns(pl.col("records").list.eval(
        pl.element().filter(~pl.element().str.starts_with("330"))))
    batch = Batch(no_330, held.players, held.games)
    table = compute_teams(batch, "BH:GP,EGMSB,EGGSB", rules="fide-2026")
    assert [_values(table, c)["1"] for c in ("BH:GP", "EGMSB", "EGGSB")] == [Decimal(x) for x in
                                                                           ("110.5", "151.0", "269.0")]


def test_held_exercise_34_orders(held: Batch, answers: dict[str, dict[str, object]]) -> None:
    by_mp = compute_teams(held, "MPvGP", rules="fide-2024").sort("rank", "team")["team"].to_list()
    assert by_mp == answers["expected"]["order PTS,GPTS (ex34)"]
    by_gp = compute_teams(held, "MPvGP", rules="fide-2024", primary="GP")
    assert by_gp.sort("rank", "team")["team"].to_list() == answers["expected"]["order GPTS,MPTS (ex34)"]
    assert by_gp.filter(pl.col("team").is_in([2, 4]))["rank"].to_list() == [3, 3]   # tied on GP and MP


def _ranks(table: pl.DataFrame) -> dict[int, int]:
    return dict(table.select("team", "rank").iter_rows())


def test_held_exercises_42_to_48_direct_encounter(held: Batch) -> None:
    ranks = _ranks(compute_teams(held, "EDE", rules="fide-2024"))
    assert ranks[11] == ranks[14]                 # ex. 42: their match was drawn 2-2
    assert ranks[6] < ranks[8]                    # ex. 43
    assert ranks[7] == ranks[9] == ranks[13]      # ex. 44: not all have met, 6.3 places nobody
    for chain in ("EDEBT", "EDET", "EDEB"):       # ex. 46-48: board 1 won, board 4 lost by team 11
        ranks = _ranks(compute_teams(held, chain, rules="fide-2024"))
        assert ranks[11] < ranks[14], chain


def test_held_exercise_45_extended_direct_encounter(held: Batch, answers: dict[str, dict[str, object]]) -> None:
    """Teams 1-5 (MP 10): the primary separates nobody (4 MP each), the secondary gives 4 | 1, 2, 3 | 5.

    rules.md 9.5 restarts the subset {1, 2, 3} from the primary score (1 beat 2 and 3): 4, 1, 2, 3, 5.
    Held's published order 4, 2, 1, 3, 5 goes on with the secondary score (2: 5.5, 1: 5, 3: 1.5 GP).
    """
    tc = make_team_context(held)
    d = tc.td.mp
    orders = []
    for restart in (True, False):
        labels = extended_direct_encounter(tc, initial_labels(d.tix, -d.score), TieBreakSpec("EDE"),
                                           restart=restart)
        rank = competition_rank(labels, d.tix)
        orders.append(sorted(range(1, 6), key=lambda t: rank[t - 1]))
    assert orders[0] == [4, 1, 2, 3, 5]
    assert orders[1] == answers["expected"]["EDE leaders order (ex45)"]
    assert compute_teams(held, "EDE").filter(pl.col("team") <= 5).sort("rank")["team"].to_list() == orders[0]


def test_held_board_tiebreaks(held: Batch) -> None:
    """BC (lower first), TBR, BBE over the event; team 11 vs 14 in round 3 was W, D, D, L."""
    table = compute_teams(held, "BC", rules="fide-2024")
    tb = build_teams(held)
    boards = tb.boards.filter((pl.col("team") == 11) & (pl.col("round") == 3)).sort("board")
    assert boards["points"].to_list() == [2, 1, 1, 0]
    # team 14: played boards, plus HPB (draw on 4 boards) and a PAB (win on 4 boards)
    b14 = tb.boards.filter(pl.col("team") == 14).group_by("board").agg(pl.col("points").sum()).sort("board")
    expected_bc = Fraction(sum((k + 1) * (int(p) + 1 + 2) for k, p in enumerate(b14["points"])), 2)
    assert Fraction(str(table.filter(pl.col("team") == 14)["BC"][0])) == expected_bc


def test_team_model_of_held(held: Batch) -> None:
    tb = build_teams(held)
    assert tb.events.row(0, named=True) | {} == {"tournament": 0, "mp_scale": 1, "mp_win": 2, "mp_draw": 1,
                                                "mp_loss": 0, "boards": 4, "primary": "MP", "round_robin": False}
    m = {(t, r): (o, k, mp, gp) for t, r, o, k, mp, gp in tb.matches.select(
        "team", "round", "opponent", pl.col("match_type").cast(pl.String), "mp", "gp").iter_rows()}
    assert m[(1, 6)] == (6, "forfeit_win", 2, 8) and m[(6, 6)] == (1, "forfeit_loss", 0, 0)
    assert m[(12, 5)] == (None, "pab", 1, 4) and m[(14, 7)] == (None, "pab", 1, 4)    # 320: 1.0 MP, 2.0 GP
    assert m[(14, 5)] == (None, "half_bye", 1, 4) and m[(7, 7)] == (None, "zero_bye", 0, 0)
    assert m[(11, 3)] == (14, "played", 1, 4)
    assert tb.members.filter(pl.col("team") == 3)["player"].to_list() == [9, 10, 11, 12]
    assert tb.warnings.is_empty()


def test_team_model_does_not_depend_on_tournament_ids(held: Batch) -> None:
    """Large, sparse tournament ids (a model's, not a batch's 0..n-1) take the binary-search path of the
    dense start-number table and give the same tables."""
    other = load_trf(SHARLY)
    both = Batch(*(pl.concat([getattr(held, t), getattr(other, t).with_columns(pl.col("tournament") + 1)])
                   for t in ("tournaments", "players", "games")))
    far = Batch(*(getattr(both, t).with_columns(pl.col("tournament") * 10**9 + 7) for t in ("tournaments",
                                                                                         "players", "games")))
    near, away = build_teams(both), build_teams(far)
    for table in ("events", "teams", "members", "matches", "boards"):
        got = getattr(away, table).with_columns((pl.col("tournament") - 7) // 10**9)
        assert got.equals(getattr(near, table)), table
    assert near.matches.height == build_teams(held).matches.height + 50 * 14 and near.boards.height > 0


def _heltour() -> Batch:
    """The Friendship Cup with one board corrected: player 41 (round 6) is written '0000 - -' where the
    published standings (and his declared 1.0 points) count a board won by default."""
    b = load_trf(HELTOUR)
    fix = (pl.col("player") == 41) & (pl.col("round") == 6)
    games = b.games.with_columns(
        pl.when(fix).then(pl.lit("+")).otherwise(pl.col("result")).alias("result"),
        pl.when(fix).then(pl.lit(2)).otherwise(pl.col("points")).alias("points"),
        pl.when(fix).then(pl.lit("forfeit_win")).otherwise(pl.col("game_type").cast(pl.String)).alias("game_type"))
    return Batch(b.tournaments, b.players, games, b.warnings)


def test_friendship_cup_published_standings() -> None:
    batch = _heltour()
    plain = build_teams(batch)
    assert plain.warnings.height == 7            # seven unmarked team byes, read as absences
    tb = build_teams(batch, team_pab=(Fraction(1), Fraction(3)))
    table = compute_teams(batch, "EGGSB,BH:MP", rules="auto", teams=tb)
    expected = pl.read_csv(HELTOUR.with_name("friendship_cup_2024.expected_team_standings.csv"), comment_prefix="#")
    joined = table.join(expected, left_on="name", right_on="team", how="inner")
    assert joined.height == 15
    assert set(table["edition"]) == {"fide-2024"}
    for ours, theirs in (("mp", "match_points"), ("gp", "game_points"), ("EGGSB", "EGGSB_right"),
                         ("BH:MP", "BH_MP")):
        assert joined[ours].cast(pl.Float64).to_list() == joined[theirs].cast(pl.Float64).to_list(), ours
    # the published order is MP, then GP (not EGGSB as the CSV comment says: ΓΑΖΙ 1 is 4th with EGGSB 449.5)
    ranked = compute_teams(batch, "MPvGP,EGGSB,BH:MP", rules="auto", teams=tb).join(
        expected, left_on="name", right_on="team").sort("rank_right")
    assert ranked["rank"].to_list() == list(range(1, 16))


def test_fide_trf26_sample_declared_scores() -> None:
    """The computed MP/GP agree with the 310 records except for team 47, whose round-3 HPB (801 line) no 240
    record announces: a warning, as for players."""
    tb = build_teams(load_trf(SHARLY))
    assert tb.teams.height == 50 and tb.events["boards"][0] == 4
    declared = tb.warnings.filter(pl.col("field").str.ends_with("MP") | pl.col("field").str.ends_with("GP"))
    assert sorted(declared["field"].to_list()) == ["team 47 GP", "team 47 MP"]
    counts = dict(tb.matches.group_by(pl.col("match_type").cast(pl.String)).len().iter_rows())
    assert counts["double_forfeit"] == 4 and counts["forfeit_win"] == counts["forfeit_loss"] == 20
    assert counts["pab"] == 8 and counts["full_bye"] == 9 and counts["half_bye"] == 12
    # the 300 line-ups decide boards: round 1, team 5 fielded 14, (empty), 29, 39
    b = tb.boards.filter((pl.col("round") == 1) & (pl.col("team") == 5)).sort("board")
    assert b.select("board", "player").rows() == [(1, 14), (3, 29), (4, 39)]


def test_trf26_round_trip(held: Batch) -> None:
    text = write_trf(held, version="trf26")
    again = read_trf([(src, body.encode()) for src, body in text.items()]).batch
    a, b = build_teams(held), build_teams(again)
    for name in ("teams", "members", "matches", "boards", "events"):
        assert getattr(a, name).equals(getattr(b, name)), name


_LINE = "001 {:4d}      {:<33}{:44}"


def _trf(players: dict[int, str], records: list[str]) -> Batch:
    lines = ["012 t", "092 Team Swiss", *records]
    lines += [_LINE.format(no, f"P{no}", "") + rounds for no, rounds in players.items()]
    return read_trf([("t.trf", ("\n".join(lines) + "\n").encode())]).batch


def test_board_facing_another_team_is_an_error() -> None:
    teams = ["013 A                               1    2", "013 B                               3    4",
             "013 C                               5    6"]
    batch = _trf({1: "   3 w 1", 2: "   6 b 1", 3: "   1 b 0", 4: "0000 - -", 5: "0000 - -", 6: "   2 w 0"}, teams)
    with pytest.raises(FormatError, match="team 1 round 1: its boards face players of several teams"):
        build_teams(batch)
    batch = _trf({1: "   2 w 1", 2: "   1 b 0", 3: "0000 - -", 4: "0000 - -"}, teams[:2])
    with pytest.raises(FormatError, match="belongs to the same team 1"):
        build_teams(batch)


def test_player_in_two_teams_is_an_error(tmp_path: Path) -> None:
    """A player plays for one team of an event: a second listing is a FormatError naming both records
    (by line when the source is a file on disk, else quoted) and the field."""
    teams = ["013 A                               1    2", "013 B                               3    2"]
    players = {1: "   3 w 1", 2: "0000 - -", 3: "   1 b 0"}
    with pytest.raises(FormatError, match=r"t.trf: 310/013 members: player 2 is listed in team 1 \(record '013 A"
                                          r".*\) and in team 2 \(record '013 B.*plays for one team"):
        build_teams(_trf(players, teams))
    lines = ["012 t", "092 Team Swiss", *teams, *(_LINE.format(no, f"P{no}", "") + r for no, r in players.items())]
    target = tmp_path / "two.trf"
    target.write_text("\n".join(lines) + "\n")
    for command in (["compute", str(target), "--teams", "-t", "EDE"], ["audit", str(target), "--teams"],
                    ["explain", str(target), "--teams", "--team", "1", "-t", "BH:MP"]):
        r = _run(command)
        assert r.exit_code != 0 and isinstance(r.exception, SystemExit), r.output
        assert (f"{target}:4: 310/013 members: player 2 is listed in team 1 (line 3) and in team 2 (line 4)"
                in r.output), r.output
    with pytest.raises(FormatError, match="player 2 is listed twice in team 1"):
        build_teams(_trf(players, ["013 A                               1    2    2",
                                   "013 B                               3"]))


def test_two_teams_with_one_pairing_number_is_an_error() -> None:
    rec = "310 {:3d} {:<32} {:5} {:6} {:6} {:6} {:3}  {}"
    teams = [rec.format(1, "A", "", "", "", "", "", "   1"), rec.format(1, "B", "", "", "", "", "", "   2")]
    with pytest.raises(FormatError, match=r"310 team pairing number \(cols 5-7\): team 1 is given twice"):
        build_teams(_trf({1: "   2 w 1", 2: "   1 b 0"}, teams))


TEAM_SWISS = ROOT / "data" / "teams" / "team_swiss.trf"
YEWS = "310   5 Yews                             YEW     1720    2.0    2.0   5     9   10"
DAMAGED = {   # name: (change to data/teams/team_swiss.trf, line, field, reason)
    "member without 001": ((YEWS, YEWS + "   11"), 22, "310/013 members",
                           "member 11 of team 5 has no 001 record (expected the start rank of a player"),
    "board facing a player of no team": ((YEWS, YEWS[:-10]), 10, "player 3 round 2",
                                         "player 9 is in no team (310/013 members)"),
    "team number 0": (("310   5 Yews ", "310   0 Yews "), 22, "310 team pairing number (cols 5-7)",
                      "team number 0 is not a pairing number (expected 1 or more)"),
    "line-up of an unknown team": (("240 H   3    3", "240 H   3    3\n300   1   9   3    1    2"), 26,
                                   "300 line-up (round 5-7, team 9-11, opponent 13-15)",
                                   "team 9 is not a team of the event (expected a 310/013 pairing number)"),
    "line-up with another team's player": (("240 H   3    3", "240 H   3    3\n300   1   1   2    1    7"), 26,
                                           "300 line-up players (from col 17)",
                                           "player 7 is not a member of team 1 (expected its 310/013 members"),
    "line-up naming another opponent": (("240 H   3    3", "240 H   3    3\n300   1   1   3    1    2"), 26,
                                        "300 line-up (round 5-7, team 9-11, opponent 13-15)",
                                        "team 1 meets team 2 in round 1 on the boards, not team 3"),
    "PAB of an unknown team": (("320  2.0  2.0   5   4   0", "320  2.0  2.0   5   4   9"), 23,
                               "320 team PAB (team per round from col 14)", "team 9 is not a team of the event"),
    "forfeit of an unknown team": (("330 +-   3   1   5", "330 +-   3   1   9"), 24,
                                   "330 forfeited match (round 8-10, teams 12-18)", "team 9 is not a team"),
    "bye of an unknown team": (("240 H   3    3", "240 H   3    9"), 25,
                               "240 team bye (round 7-9, teams from col 11)", "team 9 is not a team"),
    "forfeit past the last round": (("330 +-   3   1   5", "330 +-   9   1   5"), 24,
                                    "330 forfeited match (round 8-10, teams 12-18)",
                                    "round 9 is not a round of the event (expected 1 to 3)"),
    "forfeit of a played match": (("330 +-   3   1   5", "330 +-   1   1   2"), 24,
                                  "330 forfeited match (round 8-10, teams 12-18)",
                                  "team 1 played a match against team 2 in round 1 (its boards have opponents"),
    "PAB of a team that played": (("320  2.0  2.0   5   4   0", "320  2.0  2.0   1   4   0"), 23,
                                  "320 team PAB (team per round from col 14)",
                                  "team 1 played a match against team 2 in round 1"),
    "bye of a team that played": (("240 H   3    3", "240 H   1    3"), 25, "240 team bye (round 7-9, teams from "
                                  "col 11)", "team 3 played a match against team 4 in round 1"),
}


@pytest.mark.parametrize("name", list(DAMAGED))
def test_damaged_team_records_are_errors_at_their_line(name: str, tmp_path: Path) -> None:
    """compute, audit and explain --teams stop with a FormatError naming file, line and field (rules.md 9.1)."""
    (old, new), line, field, reason = DAMAGED[name]
    assert old in TEAM_SWISS.read_text()
    target = tmp_path / "damaged.trf"
    target.write_text(TEAM_SWISS.read_text().replace(old, new))
    for command in (["compute", str(target), "--teams", "-t", "EDE,BC"], ["audit", str(target), "--teams"],
                    ["explain", str(target), "--teams", "--team", "1", "-t", "BH:MP"]):
        r = _run(command)
        assert r.exit_code == 3 and isinstance(r.exception, SystemExit), r.output
        assert f"Error: {target}:{line}: {field}: {reason}" in r.output, r.output
    with pytest.raises(FormatError) as err:   # not a file: records have no line (001 lines still do)
        build_teams(read_trf([("damaged.trf", target.read_bytes())]).batch)
    where = "damaged.trf:10" if field.startswith("player") else "damaged.trf"
    assert str(err.value).startswith(f"{where}: {field}: {reason}")


def test_team_without_members_and_two_kinds_of_unplayed_round_warn(tmp_path: Path) -> None:
    target = tmp_path / "t.trf"
    text = TEAM_SWISS.read_text().replace("320  2.0  2.0   5   4   0", "320  2.0  2.0   5   4   3")
    target.write_text(text + "310   6 Empty                            EMP     1700\n")
    tb = build_teams(read_trf([(str(target), target.read_bytes())]).batch)
    w = {r["field"]: r for r in tb.warnings.iter_rows(named=True)}
    assert w["310/013 members"]["line"] == 26 and "team 6 lists no member" in w["310/013 members"]["message"]
    assert w["team 3 round 3"]["line"] == 23
    assert w["team 3 round 3"]["message"] == ("team 3 is given 320 team PAB (line 23) and 240 bye (line 25) in round "
                                              "3: read as the 320 team PAB")
    assert tb.matches.filter((pl.col("team") == 3) & (pl.col("round") == 3))["match_type"].to_list() == ["pab"]
    assert set(tb.matches.filter(pl.col("team") == 6)["match_type"].to_list()) == {"absent"}


def test_unmarked_bye_warns_and_reads_points() -> None:
    teams = ["013 A                               1    2", "013 B                               3    4",
             "013 C                               5    6"]
    batch = _trf({1: "   3 w 1", 2: "   4 b =", 3: "   1 b 0", 4: "   2 w =", 5: "0000 - +", 6: "0000 - +"}, teams)
    tb = build_teams(batch)
    m = tb.matches.select("team", pl.col("match_type").cast(pl.String), "mp", "gp").rows()
    assert m == [(1, "played", 2, 3), (2, "played", 0, 1), (3, "pab", 2, 4)]
    assert "team 3 has no opponent in round(s) 1" in tb.warnings["message"][0]


def test_team_spec_grammar() -> None:
    assert str(parse_team_spec("sssc/k3/f")) == "SSSC/F/K3"
    assert str(parse_team_spec("bh:gp/c1")) == "BH:GP/C1"
    assert parse_team_spec("MPvGP").name == "MPVGP"
    assert str(parse_team_spec("bh:mp/c1/p")) == "BH:MP/C1/P"       # /P on any BH family (rules.md 5)
    with pytest.raises(UnknownTieBreakError, match="modifier P is not defined for BC"):
        parse_team_spec("BC/P")
    with pytest.raises(UnknownTieBreakError, match="EMGSB fixes its own scores"):
        parse_team_spec("EMGSB:MP")
    with pytest.raises(UnknownTieBreakError, match="did you mean"):
        parse_team_spec("EMGBS")


def test_individual_tiebreaks_on_team_views(held: Batch) -> None:
    """SB:MP equals EMMSB and SB:GP equals EGGSB (rules.md 9.2); ARO uses the 310 strength."""
    table = compute_teams(held, "SB:MP,EMMSB,SB:GP,EGGSB,ARO,WIN:MP,DE:MP", rules="fide-2024")
    assert table["SB:MP"].to_list() == table["EMMSB"].to_list()
    assert table["SB:GP"].to_list() == table["EGGSB"].to_list()
    strength = dict(build_teams(held).teams.select("team", "strength").iter_rows())
    opponents = {1: [8, 4, 7, 2, 5, 3]}          # team 1's forfeit win is no ARO element
    aro = int(np.floor(sum(strength[o] for o in opponents[1]) / 6 + 0.5))
    assert table.filter(pl.col("team") == 1)["ARO"][0] == aro


# ------------------------------------------------------------------------------------------------ CLI

def _run(args: list[str]) -> Result:
    return CliRunner().invoke(main, args)


def test_cli_compute_teams_and_the_player_note() -> None:
    result = _run(["compute", str(HELD), "--teams", "-t", "BH:MP,EDE,SSSC", "--rules", "fide-2024", "-q"])
    assert result.exit_code == 0, result.output
    table = pl.read_csv(io.StringIO(result.stdout))
    assert table.columns == ["source", "tournament", "team", "name", "mp", "gp", "rank", "BH:MP", "EDE", "SSSC"]
    assert table.filter(pl.col("team") == 1).row(0)[4:] == (10.0, 17.5, 1, 64.0, 1, 38.83)
    players = _run(["compute", str(HELD), "-t", "BH"])
    assert players.exit_code == 0
    assert "Note: 1 team event(s): rows are players" in players.stderr
    assert pl.read_csv(io.StringIO(players.stdout)).height == 56


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_cli_compute_teams_streams_the_same_table_for_every_batch_size(tmp_path: Path, fmt: str) -> None:
    inputs = [str(p) for p in (HELD, HELTOUR, SHARLY, TEAM_SWISS)]
    written = []
    for size in ("1", "2", "1000"):
        out = tmp_path / f"{size}.{fmt}"
        result = _run(["compute", *inputs, "--teams", "-t", "BH:MP,EMGSB/C1,EDE,BBE", "--batch-size", size,
                       "--format", fmt, "-o", str(out), "-q"])
        assert result.exit_code == 0, result.output
        written.append(out.read_bytes())
    assert written[0] == written[1] == written[2]
    table = pl.read_csv(io.BytesIO(written[0])) if fmt == "csv" else pl.read_parquet(io.BytesIO(written[0]))
    assert table["tournament"].n_unique() == 4 and table.columns[-4:] == ["BH:MP", "EMGSB/C1", "EDE", "BBE"]
    failed = _run(["compute", *inputs, str(tmp_path / "missing.trf"), "--teams", "-t", "BH:MP", "--on-error",
                   "raise", "--format", fmt, "-o", str(tmp_path / "none"), "-q"])
    assert failed.exit_code == 3 and not list(tmp_path.glob("*none*"))


def test_cli_team_options_and_errors() -> None:
    bad = _run(["compute", str(HELD), "--teams", "-t", "MPvGP/P"])
    assert bad.exit_code == 2 and "modifier P is not defined for MPVGP" in bad.output
    assert _run(["compute", str(HELD), "--teams", "-t", "BH", "--team-pab", "x"]).exit_code == 2
    over_zero = _run(["compute", str(HELD), "--teams", "-t", "BH", "--team-pab", "1/0:1"])
    assert over_zero.exit_code == 2 and "is not MP:GP" in over_zero.output
    assert _run(["explain", str(HELD), "--teams", "-t", "BH:MP"]).exit_code == 2   # --team missing
    pab = _run(["compute", str(HELTOUR), "--teams", "-t", "BH:MP", "--team-pab", "1:3", "--rules", "auto"])
    assert pab.exit_code == 0, pab.output
    assert "team 15 has no opponent in round(s) 1 and no 320/240 record marks a bye: read as a team PAB" \
        in pab.stderr
    table = pl.read_csv(io.StringIO(pab.stdout))
    assert sorted(table["mp"].to_list(), reverse=True)[:3] == [11.0, 10.0, 9.0]
    for value, reason in (("1.5:3", "is not a whole number of"), ("1:1.25", "game points in steps of 0.5"),
                          ("-1:2", "cannot be negative")):   # never rounded to the event's units
        refused = _run(["compute", str(HELTOUR), "--teams", "-t", "BH:MP", "--team-pab", value, "--rules", "auto"])
        assert refused.exit_code == 3 and reason in refused.stderr and f"--team-pab {value}" in refused.stderr


def test_cli_from_file_lists(tmp_path: Path) -> None:
    text = HELD.read_text().replace("202 MPvGP", "202 MPvGP,EDE,BH:MP")
    path = tmp_path / "held.trf"
    path.write_text(text)
    result = _run(["compute", str(path), "--teams", "-t", "from-file", "--rules", "fide-2024", "-q"])
    assert result.exit_code == 0, result.output
    table = pl.read_csv(io.StringIO(result.stdout))
    assert table.columns[-3:] == ["MPvGP", "EDE", "BH:MP"]
    assert table.sort("rank")["team"].to_list()[:5] == [5, 1, 2, 4, 3]
    # a list the team registry cannot read: the event is rejected with the reason, exit 1 (an empty result is
    # never a success, issue 21 item 2)
    path.write_text(text.replace("202 MPvGP", "202 MPvGP,BC/P"))
    bad = _run(["compute", str(path), "--teams", "-t", "from-file"])
    assert bad.exit_code == 1 and "modifier P is not defined for BC" in bad.stderr
    assert "1 files: 0 loaded, 1 rejected" in bad.stderr


def test_cli_explain_team_and_registry() -> None:
    result = _run(["explain", str(HELD), "--teams", "--team", "1", "-t", "BH:GP/C1", "--rules", "fide-2026",
                   "--format", "csv"])
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith("team 1 (Team 1): BH:GP/C1 = 96.5 under fide-2026")
    rows = pl.read_csv(io.StringIO(result.stdout))
    r6 = rows.filter(pl.col("round") == 6).row(0, named=True)
    assert (r6["match_type"], r6["opponent_score"], r6["cap"]) == ("forfeit_win", 12.5,
                                                                   "16.4.1 opponent's adjusted score")
    reg = pl.read_csv(io.StringIO(_run(["tiebreaks", "--teams"]).stdout))
    assert {"MPvGP", "EMGSB", "EDEBT", "SSSC", "BH", "BC"} <= set(reg["name"])


def test_info_and_compare_count_team_events() -> None:
    info = pl.read_csv(io.StringIO(_run(["info", str(HELD), str(SHARLY), "-q"]).stdout))
    assert info["team_events"][0] == 2
    result = _run(["compare", str(HELD), "--config", "a=fide-2024:BH", "--config", "b=fide-2026:BH", "--by",
                   "type", "-q"])
    assert result.exit_code == 0, result.output
    assert "team" in result.stdout and "swiss" not in result.stdout


def test_after_round_and_the_readme_example() -> None:
    """Standings part-way (rules.md 4.8): after round 2 Willows' PAB dummy is capped at 1 MP x 2 rounds."""
    batch = load_trf(ROOT / "data" / "teams" / "team_swiss.trf")
    full = _ranks(compute_teams(batch, "EDE,BH:MP"))
    assert full == {1: 2, 2: 4, 3: 3, 4: 1, 5: 5}
    part = compute_teams(batch, "BH:MP", after_round=2)
    assert dict(part.select("team", "BH:MP").iter_rows()) == {1: 4.0, 2: 5.0, 3: 6.0, 4: 4.0, 5: 4.0}
    assert dict(part.select("team", "mp").iter_rows())[4] == 3.0


@pytest.mark.parametrize("target", ["held.parquet", "held.csv"])
def test_team_model_from_columnar_files(held: Batch, tmp_path: Path, target: str) -> None:
    """The team records travel in tournaments.records, so an ingested archive gives the same team model."""
    write_model(held, tmp_path / target)
    a, b = build_teams(held), build_teams(read_model(tmp_path / target))
    for name in ("teams", "members", "matches", "boards", "events"):
        assert getattr(a, name).equals(getattr(b, name)), name
