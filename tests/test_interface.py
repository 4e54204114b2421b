"""The interface as a new user meets it (issue 11): each defect found there, and the one option vocabulary."""

from __future__ import annotations

import csv
import io
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from helpers import FIXTURES, REAL, ROOT, requires_shared

from tbstats.cli import main
from tbstats.errors import FormatError
from tbstats.io import sources

EXAMPLES = ROOT / "data" / "examples"
E2 = str(EXAMPLES / "e2_cut_exception.trf")
ROUND_ROBIN = str(EXAMPLES / "s2_round_robin.trf")


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, list(args))


# -------------------------------------------------------------------------------- tracebacks and inputs

def test_audit_of_an_empty_directory_or_one_without_tournament_files(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "readme.md").write_text("hello")
    for folder in ("empty", "notes"):
        r = run("audit", str(tmp_path / folder))
        assert r.exit_code == 0, r.output
        assert r.exception is None or isinstance(r.exception, SystemExit)
        assert r.stdout == ("source,tournament,players,points_differ,rank_conflicts,status,"
                            "order,order_rules,order_tiebreaks,order_differ,order_kendall,matching\n")
    assert "skipped 1 files that are not tournament files" in run("audit", str(tmp_path / "notes")).stderr


def test_load_takes_one_path_as_one_input(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    assert sources.load("data/examples", on_error="collect").batch.n_tournaments == len(list(EXAMPLES.glob("*.trf")))
    assert sources.load(EXAMPLES / "e2_cut_exception.trf").batch.n_tournaments == 1
    assert sources.load(["data/examples/e1_unplayed_rounds.trf", Path(E2)]).batch.n_tournaments == 2
    with pytest.raises(FormatError, match=r"^zz\.trf: no such file"):
        sources.load("zz.trf")           # not the characters z, z, '.', ... (the current directory)


# --------------------------------------------------------------------------------------------- explain

def test_explain_json_numbers_and_the_value_in_every_row() -> None:
    r = run("explain", E2, "-p", "1", "-t", "BH/C1", "--format", "json")
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)
    assert {row["value"] for row in rows} == {2.5} and {row["tiebreak"] for row in rows} == {"BH/C1"}
    assert [row["points"] for row in rows] == [1.0, 0.5, 0.5]
    assert [row["contribution"] for row in rows] == [0.0, 0.0, 2.5]     # the cut bye contributes nothing
    assert "BH/C1 = 2.5" in r.stderr


def test_explain_summary_with_the_value_on_stdout_in_markdown() -> None:
    r = run("explain", E2, "-p", "1", "-t", "WIN", "--format", "md")
    assert r.stdout.splitlines()[0].startswith("player 1: WIN = 1 under fide-2026")
    assert "| contribution |" in r.stdout


@requires_shared()
def test_explain_on_several_tournaments_lists_their_ids() -> None:
    r = run("explain", str(REAL / "chessresults"), "-p", "3", "-t", "ARO")
    assert r.exit_code == 3
    assert "choose one with --tournament ID: 0 (" in r.stderr and "arad2026_a.trf" in r.stderr


def test_explain_takes_one_tiebreak_and_the_old_spelling() -> None:
    assert run("explain", E2, "-p", "1", "-t", "BH,SB").exit_code == 2
    assert run("explain", E2, "-p", "1", "--tiebreak", "BH").exit_code == 0


# -------------------------------------------------------------------------------------------- outputs

def test_output_directories_are_created_before_the_work(tmp_path: Path) -> None:
    target = tmp_path / "new" / "deeper" / "out.csv"
    r = run("compute", E2, "-t", "BH", "-o", str(target), "-q")
    assert r.exit_code == 0, r.output
    assert target.read_text().startswith("source,tournament,start_no")


def test_an_output_that_cannot_be_written_fails_before_reading_anything(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    for command in (["compute", "-t", "BH"], ["info"], ["audit"], ["compare", "-c", "a=fide-2026:BH", "-c",
                                                                   "b=fide-2026:SB"]):
        # the input does not exist either: the output is checked first, so that is the error reported
        r = run(command[0], str(tmp_path / "missing.trf"), *command[1:], "-o", str(tmp_path / "file" / "x.csv"))
        assert r.exit_code == 3, (command, r.output)
        assert "-o/--output" in r.stderr and "cannot create the directory" in r.stderr, r.stderr
        assert "missing.trf" not in r.stderr


# ------------------------------------------------------------------------------------------- exit codes

@pytest.mark.parametrize("args", [
    ["compare", E2, "-c", "foo"],
    ["simulate", "-n", "1", "--sweep", "foo=1,2"],
    ["simulate", "-n", "1", "--sweep", "bye_rate=0.1,2"],
    ["simulate", "-n", "1", "--sweep", "rounds=x"],
    ["compute", ROUND_ROBIN, "-t", "BH", "--after-round", "9"],
])
def test_usage_errors_exit_2(args: list[str]) -> None:
    r = run(*args)
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output


def test_ctrl_c_exits_130(monkeypatch: pytest.MonkeyPatch) -> None:
    """An interrupt in a command called by another program exits 130 and leaves that program running, even when
    an earlier run left the engine's helper threads alive (they are kept for the process's life)."""
    from tbstats.engine import compute as engine
    from tbstats.engine.threads import map_threads

    assert map_threads(abs, [-1, 2, -3], workers=2) == [1, 2, 3]   # (the kept helpers now live here)

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(engine, "compute", interrupted)
    r = run("compute", E2, "-t", "BH", "-q")
    assert r.exit_code == 130 and "Interrupted." in r.stderr   # (and this process is still here to say so)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_output_closed_by_its_reader_ends_quietly_with_141(workers: str) -> None:
    """``tbstats compute ... | head -1``: the reader closes the pipe after one line; the program stops without a
    message (exit 141, as a shell reports SIGPIPE), whether it writes from one process or several."""
    command = [sys.executable, "-m", "tbstats", "compute", str(ROOT / "data" / "sample_archive.parquet"), "-t",
               "BH,SB", "-q", "--workers", workers]   # about 220 kB of CSV: more than a pipe holds
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert process.stdout is not None and process.stderr is not None
    with process.stdout, process.stderr:
        assert process.stdout.readline().startswith(b"source,tournament,")
        process.stdout.close()
        err = process.stderr.read().decode()
        assert process.wait(timeout=120) == 141, err   # (a guard against hanging, not a timing assertion)
    assert err == ""


def test_a_broken_pipe_elsewhere_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """A broken pipe that is not standard output's (here: raised inside the command) is reported, exit 3."""
    from tbstats.engine import compute as engine

    def broken(*args: object, **kwargs: object) -> None:
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(engine, "compute", broken)
    r = run("compute", E2, "-t", "BH", "-q")
    assert r.exit_code == 3 and "Error: Broken pipe" in r.stderr


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc to see the run under way")
def test_ctrl_c_stops_worker_threads_at_once(tmp_path: Path) -> None:
    """SIGINT while two threads simulate a large archive: exit 130 without waiting for the queued blocks."""
    command = [sys.executable, "-m", "tbstats", "simulate", "-n", "100000", "--players", "40", "--workers", "2"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    while process.poll() is None and _rss_mb(process.pid) < 250:     # imports done, blocks being simulated
        time.sleep(0.2)
    assert process.poll() is None, process.communicate()
    process.send_signal(signal.SIGINT)
    try:
        _, err = process.communicate(timeout=120)   # a guard against hanging, not a timing assertion
    except subprocess.TimeoutExpired:
        process.kill()
        pytest.fail("the process did not stop after SIGINT")
    assert process.returncode == 130, err
    assert err.endswith("Interrupted.\n"), err


# ---------------------------------------------------------------------------------------- vocabulary

def _commands() -> dict[str, click.Command]:
    return {name: command for name, command in main.commands.items()}


def _visible(command: click.Command) -> list[click.Option]:
    return [p for p in command.params if isinstance(p, click.Option) and not p.hidden]


def test_one_short_flag_means_one_option_everywhere() -> None:
    meaning: dict[str, tuple[str, str]] = {}
    for name, command in _commands().items():
        for option in _visible(command):
            longs = [o for o in option.opts if o.startswith("--")]
            for short in (o for o in option.opts if not o.startswith("--")):
                seen = meaning.setdefault(short, (longs[0], name))
                assert seen[0] == longs[0], f"{short} is {seen[0]} in {seen[1]} but {longs[0]} in {name}"


def test_option_families_are_on_every_command_that_needs_them() -> None:
    commands = _commands()
    opts = {name: {o for p in _visible(c) for o in p.opts} for name, c in commands.items()}
    takes_inputs = [n for n, c in commands.items() if any(isinstance(p, click.Argument) and p.name == "paths"
                                                          for p in c.params)]
    assert set(takes_inputs) >= {"compute", "compare", "audit", "info", "ingest"}
    for name in takes_inputs:
        assert {"--on-error", "--errors", "-q", "--quiet"} <= opts[name], name
    for name in ("compute", "explain", "compare", "audit", "simulate"):        # every command that ranks
        assert {"--rules", "--unrated-rating"} <= opts[name], name
    for name in ("compute", "explain", "audit"):
        assert {"-t", "--tiebreaks"} <= opts[name], name
    for name in ("compute", "explain", "compare", "audit", "info", "tiebreaks", "simulate"):
        assert {"--format", "-o", "--output"} <= opts[name], name
    for name in ("compare", "simulate"):
        assert {"-c", "--config", "--configs"} <= opts[name], name
    assert "-q" in opts["simulate"]
    # one name per simulation rate, the same in --sweep
    assert {"--half-bye-rate", "--forfeit-rate", "--withdrawal-rate", "--draw-rate"} <= opts["simulate"]
    assert not {"--byes", "--forfeits", "--tiebreak", "--player", "-p"} & (opts["simulate"] | opts["compute"])


def test_old_spellings_still_work_hidden(tmp_path: Path) -> None:
    r = run("simulate", "-n", "2", "-p", "6", "-r", "3", "--byes", "0.1", "-c", "a=fide-2026:BH", "--no-baseline")
    assert r.exit_code == 0, r.output
    new = run("simulate", "-n", "2", "--players", "6", "-r", "3", "--half-bye-rate", "0.1", "-c", "a=fide-2026:BH",
              "--no-baseline")
    assert r.stdout == new.stdout
    audit_rows = run("audit", E2, "--players", "-t", "BH").stdout
    assert audit_rows == run("audit", E2, "--per-player", "-t", "BH").stdout


def test_compute_from_file_like_audit_and_compare(tmp_path: Path) -> None:
    listed = tmp_path / "listed.trf"
    listed.write_text("202 BH/C1,BH,SB\n" + Path(E2).read_text())
    r = run("compute", str(listed), str(EXAMPLES / "e1_unplayed_rounds.trf"), "-t", "from-file", "-q")
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert list(rows[0])[-4:] == ["tiebreaks", "TB1", "TB2", "TB3"]
    own = [row for row in rows if row["source"] == str(listed)]
    assert {row["tiebreaks"] for row in own} == {"BH/C1,BH,SB"}
    assert [row["TB1"] for row in own] == ["2.5", "4.0", "4.0", "4.5", "3.0"]     # BH/C1 as computed directly
    assert {row["tiebreaks"] for row in rows if row not in own} == {""}


def test_configurations_without_an_edition_use_rules() -> None:
    r = run("compare", str(EXAMPLES), "-c", "a=BH,SB", "-c", "b=fide-2024:BH,SB", "--rules", "fide-2024", "-q",
            "--table", "configs", "--format", "json")
    assert r.exit_code == 0, r.output
    assert [row["definition"] for row in json.loads(r.stdout)] == ["a=fide-2024:BH,SB", "b=fide-2024:BH,SB"]


# ----------------------------------------------------------------------------------------------- checks

def test_buchholz_in_round_robins_is_warned_by_every_command_that_computes() -> None:
    warning = "Warning: BH computed for round robins"
    assert warning in run("compute", ROUND_ROBIN, "-t", "BH").stderr
    assert warning in run("explain", ROUND_ROBIN, "-p", "1", "-t", "BH").stderr
    assert warning in run("audit", ROUND_ROBIN, "-t", "BH").stderr
    assert warning in run("compare", ROUND_ROBIN, "-c", "a=fide-2026:BH", "-c", "b=fide-2026:SB").stderr
    assert warning in run("simulate", "-n", "2", "--players", "6", "--kind", "round_robin",
                          "-c", "a=fide-2026:BH,SB").stderr
    assert warning not in run("compute", ROUND_ROBIN, "-t", "BH", "-q").stderr
    assert warning not in run("compute", ROUND_ROBIN, "-t", "SB").stderr


@requires_shared()
def test_rating_tiebreaks_undefined_for_every_player_are_warned() -> None:
    path = str(FIXTURES / "swiss_2026.trf")
    r = run("compute", path, "-t", "ARO,BH")
    assert "Warning: ARO undefined (null) in every tournament" in r.stderr and "--unrated-rating" in r.stderr
    assert "Warning" not in run("compute", path, "-t", "ARO,BH", "--unrated-rating", "1400").stderr
    assert "Warning" not in run("compute", path, "-t", "ARO/U1400,BH").stderr


def test_after_round_past_some_events_is_warned_past_all_refused() -> None:
    r = run("compute", str(EXAMPLES), "-t", "BH", "--after-round", "4")
    assert r.exit_code == 0 and "Warning: --after-round 4: 3 of 5 tournaments have fewer rounds" in r.stderr
    refused = run("compute", ROUND_ROBIN, "-t", "BH", "--after-round", "9")
    assert refused.exit_code == 2 and "no tournament has more than 5 rounds with results" in refused.stderr


def test_compare_without_shared_tournaments_says_not_available(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    r = run("compare", str(tmp_path / "empty"), "-c", "a=fide-2026:BH", "-c", "b=fide-2026:SB", "-q")
    row = next(csv.DictReader(io.StringIO(r.stdout)))
    assert row["tournaments"] == "0"
    assert (row["winner_changed_rate"], row["winner_changed_lo95"], row["winner_changed_hi95"]) == ("", "", "")


# ---------------------------------------------------------------------------------------------- reports

def test_report_pages_say_what_they_are(tmp_path: Path) -> None:
    from tbstats import __version__

    args = ["compare", str(EXAMPLES), "-c", "a=fide-2026:SB,WIN", "-c", "b=fide-2024:SB,DE", "--format", "html", "-q"]
    first, second = run(*args, "-o", str(tmp_path / "1.html")), run(*args, "-o", str(tmp_path / "2.html"))
    assert first.exit_code == second.exit_code == 0, first.output
    page = (tmp_path / "1.html").read_text()
    assert 'id="about"' in page and f"<code>{__version__}</code>" in page
    assert "tbstats compare " in page and "a=fide-2026:SB,WIN" in page      # the command line as typed
    assert f"<code>{EXAMPLES}</code>" in page.replace("<wbr>", "") and "tournaments" in page   # inputs, counts
    # identical inputs, identical pages, but for the output name in the recorded command line
    assert page.replace("1.html", "X") == (tmp_path / "2.html").read_text().replace("2.html", "X")
    dated = run(*args, "-o", str(tmp_path / "3.html"), "--dated")
    assert dated.exit_code == 0 and "<td>Date</td>" in (tmp_path / "3.html").read_text()
    assert "<td>Date</td>" not in page


def test_years_are_categories_and_undated_events_are_kept() -> None:
    import polars as pl

    from tbstats.report.compare_charts import _grouped

    years = [*range(2000, 2016), None]
    table = pl.DataFrame({"a": ["x"] * len(years), "b": ["y"] * len(years), "year": years,
                          "tournaments": [1] * len(years), "winner_changed": [0] * len(years)},
                         schema_overrides={"year": pl.Int32})
    _, order, counts = _grouped(table, "year")
    assert order == [str(y) for y in range(2000, 2016)] + ["(undated)"]   # not binned, the undated kept
    assert sum(counts) == len(years)


def test_audit_names_a_202_list_it_cannot_parse(tmp_path: Path) -> None:
    """Issue 11 defect 4: an unparseable 202 list is not reported as 'no tie-break list'."""
    lines = (EXAMPLES / "s5_six_players.trf").read_text(encoding="utf-8").splitlines()
    # declared ranks (cols 86-89), so that the status is about the list and not about missing ranks
    text = "\n".join(x[:85] + x[4:8] + x[89:] if x.startswith("001") else x for x in lines) + "\n"
    (tmp_path / "bad202.trf").write_text("202 BHX/C1,BH\n" + text, encoding="utf-8")
    r = run("audit", str(tmp_path / "bad202.trf"))
    assert "202 list not understood" in r.stderr
    assert next(csv.DictReader(io.StringIO(r.stdout)))["status"] == "tie-break list not understood"
    (tmp_path / "none.trf").write_text(text, encoding="utf-8")
    plain = run("audit", str(tmp_path / "none.trf"), "-q")
    row = next(csv.DictReader(io.StringIO(plain.stdout)))
    # no list at all: the usual orders are tried (issue 21 item 22); ranks = start numbers follow none of them
    assert row["status"] == "no usual order agrees" and row["order"] and int(row["order_differ"]) > 0


def test_the_program_exits_at_once_yet_a_profiler_gets_its_data(tmp_path: Path) -> None:
    """The tbstats program skips the interpreter's teardown once a command is done (tbstats.cli.base): its
    output is complete and its exit code kept, and under a profiler, which writes at exit, it exits as usual."""
    out, profile = tmp_path / "table.csv", tmp_path / "run.prof"
    plain = subprocess.run([sys.executable, "-m", "tbstats", "compute", E2, "-t", "BH", "-o", str(out), "-q"],
                           capture_output=True, text=True, check=False)
    assert plain.returncode == 0 and plain.stderr == "", plain.stderr
    assert out.read_text().startswith("source,tournament,start_no")
    bad = subprocess.run([sys.executable, "-m", "tbstats", "compute", E2, "-t", "XX"], capture_output=True,
                         text=True, check=False)
    assert bad.returncode == 2 and "unknown tie-break 'XX'" in bad.stderr
    profiled = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(profile), "-m", "tbstats", "compute",
                               E2, "-t", "BH", "-q"], capture_output=True, text=True, check=False)
    assert profiled.returncode == 0, profiled.stderr
    assert profile.stat().st_size > 0 and "source,tournament" in profiled.stdout
