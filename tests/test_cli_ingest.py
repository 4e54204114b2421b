"""The command line: ingest and info, exact output, error modes and exit codes; the output writers."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner
from helpers import SHARED, requires_shared
from polars.testing import assert_frame_equal
from trf_samples import GOOD, LINES, variant

from tbstats import __version__
from tbstats.cli import main
from tbstats.errors import TbstatsError
from tbstats.io.tabular import read_model
from tbstats.io.trf import read_trf
from tbstats.output import format_table, write_table

BAD = variant(3, LINES[3][:48] + "20x0" + LINES[3][52:])
RATING = "'20x0' is not a rating (expected digits, or blank/0 for unrated)"
BAD_MESSAGE = f"bad.trf:4: rating (cols 49-52): {RATING}"
#: The reader's warning about good.trf (it has no 042 date) and how it is listed on stderr.
NO_DATE = ("1 reader warnings: 1 042 start date\n"
           "good.trf: 042 start date: no start date (042), end date (052) or round dates (132)\n")
COUNTS = ("played,forfeit_win,forfeit_loss,double_forfeit,pab,full_bye,half_bye,zero_bye,absent,pending,"
          "warnings")


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "good.trf").write_text(GOOD)
    (tmp_path / "bad.trf").write_text(BAD)
    return CliRunner()


# ------------------------------------------------------------------------------------------- the group

def test_help_lists_commands_and_exit_codes(runner: CliRunner) -> None:
    result = runner.invoke(main, ["--help"])
    assert result.exit_code == 0
    assert "ingest" in result.stdout and "info" in result.stdout
    assert ("Exit codes:\n"
            "    0  success\n"
            "    1  the command ran, but some inputs were rejected (see --errors FILE)\n"
            "    2  usage error (unknown option, bad value, missing argument)\n"
            "    3  invalid input in raise mode, or a file that cannot be read or written\n") in result.stdout


def test_every_command_has_help(runner: CliRunner) -> None:
    for name, command in main.commands.items():
        assert command.help, name
        result = runner.invoke(main, [name, "--help"])
        assert result.exit_code == 0, name
        assert "Exit codes:" in result.stdout


def test_version(runner: CliRunner) -> None:
    result = runner.invoke(main, ["--version"])
    assert (result.exit_code, result.stdout) == (0, f"tbstats, version {__version__}\n")


def test_python_dash_m(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "tbstats", "--version"], capture_output=True, text=True,
                          check=False, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, f"tbstats, version {__version__}\n")


def test_usage_errors_exit_2(runner: CliRunner) -> None:
    assert runner.invoke(main, ["info"]).exit_code == 2
    assert runner.invoke(main, ["info", "good.trf", "--format", "xml"]).exit_code == 2
    result = runner.invoke(main, ["info", "good.trf", "--format", "parquet"])
    assert result.exit_code == 2
    assert "--format parquet needs -o/--output FILE" in result.stderr
    assert runner.invoke(main, ["ingest", "good.trf"]).exit_code == 2  # -o is required


# --------------------------------------------------------------------------------------------- ingest

def test_ingest_a_good_file(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(main, ["ingest", "good.trf", "-o", "archive.parquet"])
    assert (result.exit_code, result.stdout) == (0, "")
    assert result.stderr == NO_DATE + "1 files: 1 loaded, 0 rejected, 1 warnings\n"
    expected = read_trf([("good.trf", GOOD.encode())]).batch
    back = read_model(tmp_path / "archive.parquet")
    for table in ("tournaments", "players", "games", "warnings"):
        assert_frame_equal(getattr(back, table), getattr(expected, table))


@pytest.mark.parametrize("target", ["archive.arrow", "archive.csv", "archive.feather", "arc"])
def test_ingest_formats(runner: CliRunner, tmp_path: Path, target: str) -> None:
    result = runner.invoke(main, ["ingest", "good.trf", "good.trf", "bad.trf", "-o", target, "-q"])
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", "")
    assert read_model(tmp_path / target).players["name"].to_list() == [
        "Alpha, Anna", "Beta, Bob", "Gamma, Carl", "Delta, Dora"]


def test_ingest_good_and_bad_files_collects_and_exits_1(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("hello")
    result = runner.invoke(main, ["ingest", ".", "-o", "out.parquet", "--errors", "problems.csv"])
    assert result.exit_code == 1
    assert result.stderr == (f"{BAD_MESSAGE}\n" + NO_DATE
                             + "skipped 1 files that are not tournament files\n"
                             "2 files: 1 loaded, 1 rejected, 1 warnings\n")
    assert (tmp_path / "problems.csv").read_text() == (
        "path,line,column,status,reason\n"
        f"bad.trf,4,rating (cols 49-52),rejected,\"{RATING}\"\n"
        "notes.md,,,skipped,not a tournament file (extension .md)\n")
    assert read_model(tmp_path / "out.parquet").tournaments["source"].to_list() == ["good.trf"]


def test_ingest_a_single_bad_file_raises_and_exits_3(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(main, ["ingest", "bad.trf", "-o", "out.parquet", "--errors", "e.csv"])
    assert (result.exit_code, result.stdout, result.stderr) == (3, "", f"Error: {BAD_MESSAGE}\n")
    assert not (tmp_path / "out.parquet").exists()
    assert (tmp_path / "e.csv").read_text().splitlines()[1].startswith("bad.trf,4,rating (cols 49-52),")


def test_on_error_options_override_the_default(runner: CliRunner) -> None:
    result = runner.invoke(main, ["ingest", "bad.trf", "-o", "o.parquet", "--on-error", "collect"])
    assert (result.exit_code, result.stderr) == (1, f"{BAD_MESSAGE}\n1 files: 0 loaded, 1 rejected\n")
    result = runner.invoke(main, ["ingest", "good.trf", "bad.trf", "-o", "o2.parquet", "--on-error", "raise"])
    assert (result.exit_code, result.stderr) == (3, f"Error: {BAD_MESSAGE}\n")


def test_missing_input(runner: CliRunner) -> None:
    result = runner.invoke(main, ["info", "nope.trf"])
    assert (result.exit_code, result.stdout) == (3, "")
    assert result.stderr == "Error: nope.trf: no such file or directory\n"
    result = runner.invoke(main, ["info", "nope.trf", "good.trf"])
    assert result.exit_code == 1
    assert result.stderr == ("nope.trf: no such file or directory\n" + NO_DATE
                             + "2 files: 1 loaded, 1 rejected, 1 warnings\n")


def test_ingest_append_to_a_directory(runner: CliRunner, tmp_path: Path) -> None:
    assert runner.invoke(main, ["ingest", "good.trf", "-o", "arc", "-q"]).exit_code == 0
    result = runner.invoke(main, ["ingest", "good.trf", "-o", "arc", "-q"])
    assert result.exit_code == 3
    assert "directory is not empty" in result.stderr
    assert runner.invoke(main, ["ingest", "good.trf", "-o", "arc", "-q", "--append"]).exit_code == 0
    assert read_model(tmp_path / "arc").tournaments["tournament"].to_list() == [0, 1]


def test_ingest_in_batches(runner: CliRunner, tmp_path: Path) -> None:
    for i in range(5):
        (tmp_path / "many" / f"e{i}.trf").parent.mkdir(exist_ok=True)
        (tmp_path / "many" / f"e{i}.trf").write_text(GOOD)
    result = runner.invoke(main, ["ingest", "many", "-o", "arc", "--batch-files", "2"])
    assert result.exit_code == 0
    assert result.stderr.startswith("5 reader warnings: 5 042 start date\n")
    assert result.stderr.endswith("5 files: 5 loaded, 0 rejected, 5 warnings\n")
    assert len(list((tmp_path / "arc" / "games").iterdir())) == 3
    assert read_model(tmp_path / "arc").tournaments["tournament"].to_list() == [0, 1, 2, 3, 4]


# ----------------------------------------------------------------------------------------------- info

def test_info_csv(runner: CliRunner) -> None:
    result = runner.invoke(main, ["info", "good.trf"])
    assert result.exit_code == 0
    assert result.stdout == (f"tournaments,players,rounds,game_rows,{COUNTS},team_events\n"
                             "1,4,2,8,8,0,0,0,0,0,0,0,0,0,1,0\n")
    assert result.stderr == NO_DATE + "1 files: 1 loaded, 0 rejected, 1 warnings\n"


def test_info_by_tournament(runner: CliRunner) -> None:
    result = runner.invoke(main, ["info", "good.trf", "good.trf", "bad.trf", "--by-tournament", "-q"])
    assert result.exit_code == 1
    assert result.stdout == ("tournament,source,name,event_type,players,rounds,rounds_played,game_rows,"
                             f"{COUNTS}\n"
                             "0,good.trf,Test Open,swiss,4,2,2,8,8,0,0,0,0,0,0,0,0,0,1\n")
    assert result.stderr == ""


def test_info_formats(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(main, ["info", "good.trf", "--format", "json", "-q"])
    assert json.loads(result.stdout) == [{"tournaments": 1, "players": 4, "rounds": 2, "game_rows": 8,
                                          "played": 8, **dict.fromkeys(COUNTS.split(",")[1:-1], 0),
                                          "warnings": 1, "team_events": 0}]
    result = runner.invoke(main, ["info", "good.trf", "--format", "md", "-q"])
    assert result.stdout.splitlines()[:2] == [
        "| tournaments | players | rounds | game_rows | " + " | ".join(COUNTS.split(",")) + " | team_events |",
        "| " + " | ".join(["---:"] * 16) + " |"]
    result = runner.invoke(main, ["info", "good.trf", "--format", "tsv", "-q"])
    assert result.stdout.splitlines()[1] == "1\t4\t2\t8\t8" + "\t0" * 9 + "\t1\t0"
    assert runner.invoke(main, ["info", "good.trf", "-o", "info.parquet", "-q"]).exit_code == 0
    assert pl.read_parquet(tmp_path / "info.parquet")["players"].to_list() == [4]
    assert runner.invoke(main, ["info", "good.trf", "-o", "info.json", "-q"]).exit_code == 0
    assert json.loads((tmp_path / "info.json").read_text())[0]["players"] == 4


def test_info_reads_an_ingested_archive(runner: CliRunner) -> None:
    assert runner.invoke(main, ["ingest", "good.trf", "-o", "a.csv", "-q"]).exit_code == 0
    result = runner.invoke(main, ["info", "a.csv"])
    assert (result.exit_code, result.stdout.splitlines()[1]) == (0, "1,4,2,8,8,0,0,0,0,0,0,0,0,0,1,0")


@requires_shared()
def test_info_on_the_real_corpus(runner: CliRunner) -> None:
    result = runner.invoke(main, ["info", str(SHARED / "data" / "trf"), "--errors", "e.csv"])
    assert result.exit_code == 1
    assert re.search(r" loaded, 3 rejected, \d+ warnings\n$", result.stderr)
    assert re.search(r"^\d+ reader warnings: ", result.stderr, re.M)
    assert "... and 2 more problems\n" in result.stderr
    assert "skipped " in result.stderr


# --------------------------------------------------------------------------------------------- outputs

def test_output_numbers_and_nulls(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    df = pl.DataFrame({"name": ["Ann", None, "B|C"], "BH": [35.5, 17.25, None], "n": [10.0, 1e20, 1e-7],
                       "k": [1, None, 3], "ok": [True, False, None]})
    assert format_table(df, "csv") == ("name,BH,n,k,ok\n"
                                       "Ann,35.5,10.0,1,true\n"
                                       ",17.25,100000000000000000000.0,,false\n"
                                       "B|C,,0.0000001,3,\n")
    assert format_table(df, "tsv").splitlines()[1] == "Ann\t35.5\t10.0\t1\ttrue"
    assert format_table(df, "json") == (
        '[\n  {"name": "Ann", "BH": 35.5, "n": 10.0, "k": 1, "ok": true},\n'
        '  {"name": null, "BH": 17.25, "n": 100000000000000000000.0, "k": null, "ok": false},\n'
        '  {"name": "B|C", "BH": null, "n": 0.0000001, "k": 3, "ok": null}\n]\n')
    assert format_table(df, "md") == ("| name | BH | n | k | ok |\n| --- | ---: | ---: | ---: | --- |\n"
                                      "| Ann | 35.5 | 10.0 | 1 | true |\n"
                                      "|  | 17.25 | 100000000000000000000.0 |  | false |\n"
                                      "| B\\|C |  | 0.0000001 | 3 |  |\n")
    assert format_table(df.head(0), "json") == "[]\n"
    write_table(df.select("k"), "csv", None)
    assert capsys.readouterr().out == "k\n1\n\n3\n"
    with pytest.raises(TbstatsError, match="parquet output needs a file"):
        write_table(df, "parquet", None)
    write_table(df, "parquet", tmp_path / "t.parquet")
    assert_frame_equal(pl.read_parquet(tmp_path / "t.parquet"), df)
    write_table(df, "md", tmp_path / "t.md")
    assert (tmp_path / "t.md").read_text() == format_table(df, "md")
