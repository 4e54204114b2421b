"""299 records (rules.md 2.3, 2.4, 9.1): points adjustments for teams and players, applied and announced.

The decision pinned here (rules.md is silent): an adjustment changes the participant's own score, hence its
rank and the score columns (mp, gp, MPvGP, SSSC for teams; points for players), but not the round results
that tie-breaks read: opponents' Buchholz, Sonneborn-Berger and ESB stay as the results give them.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner
from helpers import REAL, ROOT, load_trf

from tbstats.analysis.audit import audit
from tbstats.cli import main
from tbstats.engine import compute as engine
from tbstats.engine.teams.standings import compute_teams
from tbstats.errors import FormatError
from tbstats.io.trf import read_trf
from tbstats.model.adjust import has_adjustments, parse_adjustment
from tbstats.model.batch import Batch
from tbstats.model.teams.batch import build_teams

TEAM_SWISS = ROOT / "data" / "teams" / "team_swiss.trf"
E2 = ROOT / "data" / "examples" / "e2_cut_exception.trf"
SHARLY = REAL / "sharly" / "example_trf26.trf"
TEAM_SPECS = "EDE,BH:MP,BH:GP,EMGSB,EGGSB,SB:MP,MPvGP"


def _record(kind: str, mp: str, points: str, rnd: str, *ids: int) -> str:
    """A 299 record in the rules.md columns: type 5, MP 8-11, points 14-17, round 20-22, ids from 24."""
    return f"299 {kind:1}  {mp:>4}  {points:>4}  {rnd:>3} " + " ".join(f"{i:4d}" for i in ids)


def _read(path: Path, *extra: str) -> tuple[Batch, pl.DataFrame]:
    text = path.read_text().rstrip("\n") + "\n" + "".join(f"{r}\n" for r in extra)
    result = read_trf([(str(path), text.encode())])
    assert result.errors.is_empty(), result.errors
    return result.batch, result.batch.warnings


def _by_team(table: pl.DataFrame) -> dict[int, dict[str, object]]:
    return {r["team"]: r for r in table.iter_rows(named=True)}


@pytest.mark.parametrize(("records", "cut", "want"), [
    ([["012 Open", "299 1 0001 ..."], []], None, True),
    ([["012 Open"], None, ["22"], ["2990"]], None, True),      # (a 299 record is its code: "2990" begins with it)
    ([["012 Open"], None, ["29", "x299"]], None, False),
    ([["299 a"], ["012"], ["013"]], (1, 2), False),            # a slice: the first event's 299 is not in it
    ([["012"], ["013"], ["299 a"]], (1, 2), True),
    ([], None, False),
])
def test_has_adjustments_reads_every_event_of_the_batch(records: list[list[str] | None], cut: tuple[int, int] | None,
                                                        want: bool) -> None:
    """The events' records as the engine gets them: sliced out of a larger batch, or in several chunks."""
    t = pl.DataFrame({"records": pl.Series(records, dtype=pl.List(pl.String))})
    if cut is not None:
        t = t.slice(*cut)
    chunked = pl.concat([t.slice(0, 1), t.slice(1)], rechunk=False) if t.height > 1 else t

    class Events:   # (has_adjustments reads the tournaments table only)
        tournaments = t

    class Chunked:
        tournaments = chunked

    assert has_adjustments(Events) is want   # type: ignore[arg-type]
    assert has_adjustments(Chunked) is want   # type: ignore[arg-type]


def test_parse_both_layouts_and_reject_what_names_nobody() -> None:
    assert _record("", "-1.0", "-0.5", "", 7, 12) == "299    -1.0  -0.5         7   12"
    a = parse_adjustment(_record("", "-1.0", "-0.5", "", 7, 12))
    assert (a.kind, a.mp, a.points, a.round, a.ids) == ("", -1, -0.5, None, (7, 12))
    fide = parse_adjustment("299 +  2.0  2.5   1    1")          # the TRF-2026 sample's layout
    assert (fide.kind, fide.mp, fide.points, fide.round, fide.ids) == ("forfeit_win", 2, 2.5, 1, (1,))
    for bad, reason in (("299 -  0.0  1.5", "names no player or team"), ("299 Q  1.0  1.0   1    1", "type 'Q'"),
                        (_record("W", "1.0", "1.0", "", 3), "needs the round"),
                        (_record("", "x", "1.0", "", 3), "not a number")):
        with pytest.raises(ValueError, match=reason):
            parse_adjustment(bad)


def test_team_penalty_enters_the_score_not_the_opponents_tiebreaks() -> None:
    plain = _by_team(compute_teams(load_trf(TEAM_SWISS), TEAM_SPECS))
    batch, warnings = _read(TEAM_SWISS, _record("", "-2.0", "-1.0", "", 4))
    assert warnings.filter(pl.col("field") == "299")["line"].to_list() == [26]
    assert "299 adjusts team 4: penalty/bonus MP -2, GP -1; applied to the score" in warnings["message"][-1]
    got = _by_team(compute_teams(batch, TEAM_SPECS))
    willows = got[4]
    assert (willows["mp"], willows["gp"], willows["MPvGP"]) == (3.0, 3.5, 3.5)
    assert [got[t]["rank"] for t in range(1, 6)] == [1, 4, 2, 3, 5]    # Oaks alone first, Willows third
    # Rowans met Willows in round 1 (and Oaks did not): every opponent-based value is the unpenalised one,
    # Willows' own too
    for team in range(1, 6):
        for spec in ("BH:MP", "BH:GP", "EMGSB", "EGGSB", "SB:MP"):
            assert got[team][spec] == plain[team][spec], (team, spec)


def test_typed_adjustment_rescores_only_a_round_of_its_kind() -> None:
    """Rowans (team 3) drew round 1 with Willows: a 'W' record for that round does nothing, a 'D' one
    scores the drawn match MP 0, GP 0.5 (instead of 1 and 1)."""
    plain = _by_team(compute_teams(load_trf(TEAM_SWISS), "MPvGP"))[3]
    batch, warnings = _read(TEAM_SWISS, _record("W", "1.0", "1.5", "1", 3))
    assert "round 1 scores MP 1, GP 1.5 where that round is a win" in warnings["message"][-1]
    same = _by_team(compute_teams(batch, "MPvGP"))[3]
    assert (same["mp"], same["gp"]) == (plain["mp"], plain["gp"]) == (3.0, 3.0)
    batch, _ = _read(TEAM_SWISS, _record("D", "0.0", "0.5", "1", 3))
    drawn = _by_team(compute_teams(batch, "MPvGP"))[3]
    assert (drawn["mp"], drawn["gp"]) == (2.0, 2.5)


def test_adjustment_counts_from_its_round() -> None:
    """Willows: 5 MP, 3 after round 2 (test_teams); a 2-MP penalty of round 3 is not in the standings after
    round 2, one of round 2 is."""
    plain = _by_team(compute_teams(load_trf(TEAM_SWISS), "MPvGP", after_round=2))[4]["mp"]
    late, _ = _read(TEAM_SWISS, _record("", "-2.0", "", "3", 4))
    early, _ = _read(TEAM_SWISS, _record("", "-2.0", "", "2", 4))
    assert _by_team(compute_teams(late, "MPvGP"))[4]["mp"] == 3.0
    assert _by_team(compute_teams(late, "MPvGP", after_round=2))[4]["mp"] == plain == 3.0
    assert _by_team(compute_teams(early, "MPvGP", after_round=2))[4]["mp"] == 1.0


def test_player_bonus_and_the_declared_points() -> None:
    """E2: D (start rank 4, 0 points) gets a 1.5-point bonus and a 0.5-point penalty hits B: D's points and
    rank change, the Buchholz and Sonneborn-Berger of everyone stay; the audit counts D's declared 0.0 as
    differing and B's declared 2.5 too."""
    plain = engine.compute(load_trf(E2), "BH,SB")
    batch, warnings = _read(E2, _record("", "", "1.5", "", 4), _record("", "", "-0.5", "2", 2))
    assert warnings.filter(pl.col("field") == "299")["line"].to_list() == [10, 11]
    assert "299 adjusts player 4: penalty/bonus points +1.5; applied to the score" in warnings["message"][-2]
    got = engine.compute(batch, "BH,SB")
    points = dict(got.select("start_no", "points").iter_rows())
    assert points == {1: 2.0, 2: 2.0, 3: 2.0, 4: 1.5, 5: 1.0}
    assert got["BH"].to_list() == plain["BH"].to_list() and got["SB"].to_list() == plain["SB"].to_list()
    assert got.filter(pl.col("start_no") == 4)["rank"].item() == 4
    # the same rows whatever the batch: with another event in the batch, or alone
    both = read_trf([(str(E2), E2.read_bytes()),
                     ("adjusted.trf", (E2.read_text() + _record("", "", "1.5", "", 4) + "\n").encode())]).batch
    assert engine.compute(both, "BH,SB").filter(pl.col("tournament") == 1)["points"].to_list() == [
        2.0, 2.5, 2.0, 1.5, 1.0]
    assert engine.compute(both, "BH,SB").filter(pl.col("tournament") == 0)["points"].to_list() == plain[
        "points"].to_list()
    # and with events of other round counts around it: it is in a block of its own, not at its start
    s1 = ROOT / "data" / "examples" / "s1_three_champions.trf"
    mixed = read_trf([(str(s1), s1.read_bytes()), (str(E2), E2.read_bytes()),
                      ("adjusted.trf", (E2.read_text() + _record("", "", "1.5", "", 4) + "\n").encode()),
                      ("s1-again.trf", s1.read_bytes())]).batch
    table = engine.compute(mixed, "BH,SB")
    assert table.filter(pl.col("tournament") == 2)["points"].to_list() == [2.0, 2.5, 2.0, 1.5, 1.0]
    assert table.filter(pl.col("tournament") == 1)["points"].to_list() == plain["points"].to_list()
    assert table.filter(pl.col("tournament") == 3).drop("tournament", "source").equals(
        table.filter(pl.col("tournament") == 0).drop("tournament", "source"))


def test_fide_sample_299_records() -> None:
    """The sample's '299 +  2.0  2.5   1    1' re-scores a forfeit win of team 1 in round 1, which was a
    played drawn match: nothing changes (310 declares 15 MP, 28 GP); '299 -  0.0  1.5' names nobody."""
    batch = load_trf(SHARLY)
    lines = {r["line"]: r["message"] for r in batch.warnings.filter(pl.col("field") == "299").iter_rows(named=True)}
    assert sorted(lines) == [539, 540]
    assert "where that round is a forfeit win" in lines[539] and "not understood" in lines[540]
    team1 = compute_teams(batch, "MPvGP").filter(pl.col("team") == 1)
    assert (team1["mp"].item(), team1["gp"].item()) == (15.0, 28.0)


def test_cli_says_so(tmp_path: Path) -> None:
    target = tmp_path / "penalty.trf"
    target.write_text(TEAM_SWISS.read_text().rstrip("\n") + "\n" + _record("", "-2.0", "-1.0", "", 4) + "\n")
    r = CliRunner().invoke(main, ["compute", str(target), "--teams", "-t", "EDE"])
    assert r.exit_code == 0, r.output
    assert f"{target}:26: 299: 299 adjusts team 4" in r.stderr
    assert "Willows,3.0,3.5,2,2" in r.stdout     # tied with Rowans (3 MP, drew their match)


def test_declared_points_that_a_299_explains_are_not_warned() -> None:
    """rules.md 2.4: declared points that differ from the results are looked up in the 299 records first."""
    declared = E2.read_text().replace("0.0          1 b 0", "1.5          1 b 0")
    alone = read_trf([("d.trf", declared.encode())]).batch.warnings
    assert alone["message"].to_list() == ["declared points 1.5 differ from the results' total 0.0; the results count"]
    explained = read_trf([("d.trf", (declared + _record("", "", "1.5", "", 4) + "\n").encode())]).batch
    assert explained.warnings["field"].to_list() == ["299"]
    per_t, per_p = audit(explained, engine.make_context(explained), tiebreaks="BH")
    assert per_t["points_differ"].item() == 0 and per_p.filter(pl.col("start_no") == 4).is_empty()


def test_a_299_naming_no_team_of_the_event_is_an_error(tmp_path: Path) -> None:
    target = tmp_path / "nine.trf"
    target.write_text(TEAM_SWISS.read_text().rstrip("\n") + "\n" + _record("", "-2.0", "-1.0", "", 4, 9) + "\n")
    for command in (["compute", str(target), "--teams", "-t", "EDE"], ["audit", str(target), "--teams"],
                    ["explain", str(target), "--teams", "--team", "4", "-t", "BH:MP"]):
        r = CliRunner().invoke(main, command)
        assert r.exit_code != 0 and r.exception is not None and isinstance(r.exception, SystemExit), r.output
        assert (f"{target}:26: 299 ids (from col 24): team 9 is not a team of the event (310/013 pairing "
                "numbers) (record '299    -2.0  -1.0         4    9')") in r.output


def test_a_299_naming_no_player_of_the_event_is_an_error(tmp_path: Path) -> None:
    target = tmp_path / "e2.trf"
    target.write_text(E2.read_text().rstrip("\n") + "\n" + _record("", "", "1.5", "", 4, 77) + "\n")
    lines = target.read_text().splitlines()
    r = CliRunner().invoke(main, ["compute", str(target), "-t", "BH"])
    assert r.exit_code != 0 and isinstance(r.exception, SystemExit), r.output
    assert (f"{target}:{len(lines)}: 299 ids (from col 24): player 77 is not a start rank of the event (its 001 "
            "records)") in r.output
    with pytest.raises(FormatError, match="player 77 is not a start rank"):   # the same from a model, no line
        engine.compute(read_trf([("mem.trf", target.read_bytes())]).batch, "BH")


def test_a_file_the_engine_finds_broken_is_rejected_and_the_others_computed(tmp_path: Path) -> None:
    """A 299 naming nobody is found by the engine, not the reader: in a batch of files it rejects its file
    alone (ledger, counts, exit 1), for every batch size and with worker processes too."""
    for k in range(6):
        (tmp_path / f"{k}.trf").write_text(E2.read_text())
    bad = tmp_path / "3.trf"
    bad.write_text(E2.read_text().rstrip("\n") + "\n" + _record("", "", "1.5", "", 4, 77) + "\n")
    got = set()
    for extra in ([], ["--batch-size", "1"], ["--batch-size", "4", "--workers", "2"]):
        r = CliRunner().invoke(main, ["compute", str(tmp_path), "-t", "BH", "--format", "csv", *extra])
        assert r.exit_code == 1, r.output
        assert f"{bad}:" in r.stderr and "player 77 is not a start rank" in r.stderr
        assert "6 files: 5 loaded, 1 rejected" in r.stderr
        table = pl.read_csv(r.stdout.encode())
        assert table["source"].unique().sort().to_list() == [str(tmp_path / f"{k}.trf") for k in (0, 1, 2, 4, 5)]
        assert table["tournament"].unique().sort().to_list() == [0, 1, 2, 3, 4]
        got.add(r.stdout)
    assert len(got) == 1
    raised = CliRunner().invoke(main, ["compute", str(tmp_path), "-t", "BH", "--on-error", "raise"])
    assert raised.exit_code == 3 and "player 77 is not a start rank" in raised.output


def test_a_299_of_a_round_past_the_last_round_is_an_error(tmp_path: Path) -> None:
    """It could not be applied: an error at its line, never dropped (players and teams alike)."""
    for source, record, team in ((E2, _record("W", "", "1.0", "99", 4), False),
                                 (TEAM_SWISS, _record("W", "2.0", "2.0", "99", 4), True)):
        target = tmp_path / source.name
        target.write_text(source.read_text().rstrip("\n") + "\n" + record + "\n")
        line = len(target.read_text().splitlines())
        r = CliRunner().invoke(main, ["compute", str(target), "-t", "EDE" if team else "BH",
                                      *(["--teams"] if team else [])])
        assert r.exit_code == 3, r.output
        assert f"{target}:{line}: 299 round (cols 20-22): round 99 is past the event's last round" in r.output


def test_declared_mp_gp_are_compared_with_the_adjusted_scores(tmp_path: Path) -> None:
    """Team 4 (Willows) scores 5 MP / 4.5 GP; a -2/-1 penalty makes it 3 / 3.5."""
    penalty = _record("", "-2.0", "-1.0", "", 4)
    explained = TEAM_SWISS.read_text().replace("1800    5.0    4.5", "1800    3.0    3.5")
    for text, warned in ((explained + penalty + "\n", None), (explained, "differ from the computed 5 "),
                         (TEAM_SWISS.read_text() + penalty + "\n", "differ from the computed 3 after 1 applied 299 "
                                                                    "record (record '310   4 Willows")):
        tb = build_teams(read_trf([(str(tmp_path / "t.trf"), text.encode())]).batch)
        messages = tb.warnings.filter(pl.col("field") == "team 4 MP")["message"].to_list()
        assert (messages == []) if warned is None else (len(messages) == 1 and warned in messages[0]), messages
    target = tmp_path / "t.trf"
    target.write_text(TEAM_SWISS.read_text() + penalty + "\n")
    r = CliRunner().invoke(main, ["compute", str(target), "--teams", "-t", "EDE"])
    assert f"{target}:21: team 4 MP: declared MP 5.0 of team 4 differ from the computed 3 after 1" in r.stderr


def test_explain_shows_the_adjusted_score(tmp_path: Path) -> None:
    team_file, player_file = tmp_path / "t.trf", tmp_path / "p.trf"
    team_file.write_text(TEAM_SWISS.read_text().rstrip("\n") + "\n" + _record("", "-2.0", "-1.0", "", 4) + "\n")
    player_file.write_text(E2.read_text().rstrip("\n") + "\n" + _record("", "", "1.5", "", 4) + "\n")
    team = CliRunner().invoke(main, ["explain", str(team_file), "--teams", "--team", "4", "-t", "BH:MP",
                                     "--format", "md"])
    assert "Willows): BH:MP = 8 " in team.stdout and "MP 3, GP 3.5" in team.stdout
    player = CliRunner().invoke(main, ["explain", str(player_file), "-p", "4", "-t", "BH", "--format", "md"])
    assert "score 1.5," in player.stdout


def test_bonus_of_the_last_player_in_the_last_round() -> None:
    """A change of the last cell of the dense view (E2's player 5, round 3; the spare cell after it) counts
    like any other."""
    batch, _ = _read(E2, _record("", "", "1.0", "3", 5))
    got = dict(engine.compute(batch, "BH").select("start_no", "points").iter_rows())
    assert got[5] == 2.0
    assert dict(engine.compute(batch, "BH", after_round=2).select("start_no", "points").iter_rows())[5] == 1.0
