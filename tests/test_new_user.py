"""Issue 21, as a new user meets it: each defect with the test that failed before its fix, and the same class
of defect checked on every command that has it."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import ROOT

from tbstats.cli import main

EXAMPLES = str(ROOT / "data" / "examples")
E1 = str(ROOT / "data" / "examples" / "e1_unplayed_rounds.trf")


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, list(args))


@pytest.fixture(params=["malformed", "utf-16"])
def bad_configs(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    path = tmp_path / "configs.toml"
    if request.param == "malformed":
        path.write_text('[configs]\na = "fide-2026:BH"\nconfigs = [\n', encoding="utf-8")
    else:
        path.write_text('[configs]\na = "fide-2026:BH"\n', encoding="utf-16")
    return path


@pytest.mark.parametrize("command", [["compare", EXAMPLES], ["evaluate", EXAMPLES], ["simulate", "-n", "1"]])
def test_a_bad_configs_file_is_a_usage_error_naming_it(command: list[str], bad_configs: Path) -> None:
    """Item 6: a malformed or UTF-16 TOML gave a tomllib / UnicodeDecodeError traceback and exit 1."""
    r = run(*command, "--configs", str(bad_configs), "-q")
    assert r.exit_code == 2 and "Traceback" not in r.output, r.output
    assert str(bad_configs) in r.output and "--configs" in r.output
    assert "line" in r.output or "UTF-8" in r.output


@pytest.mark.parametrize("command", [["compute", EXAMPLES], ["audit", EXAMPLES], ["explain", E1, "-p", "1"]])
@pytest.mark.parametrize("listed", ["", " ", ","])
def test_an_empty_tiebreak_list_is_a_usage_error(command: list[str], listed: str) -> None:
    """Item 7: -t "" ranked on points alone."""
    r = run(*command, "-t", listed, "-q")
    assert r.exit_code == 2 and "empty list" in r.output, r.output


def test_ingest_to_an_unknown_extension_is_an_error(tmp_path: Path) -> None:
    """Item 8: ingest -o out/x.xlsx created a directory named x.xlsx."""
    r = run("ingest", EXAMPLES, "-o", str(tmp_path / "out" / "x.xlsx"), "-q")
    assert r.exit_code == 3 and "unknown extension '.xlsx'" in r.output, r.output
    assert not (tmp_path / "out" / "x.xlsx").exists()
    assert run("ingest", EXAMPLES, "-o", str(tmp_path / "archive"), "-q").exit_code == 0


def test_every_command_takes_quiet() -> None:
    """Item 9: explain and tiebreaks rejected -q, which every command takes."""
    for name, command in main.commands.items():
        assert any("-q" in p.opts for p in command.params), name
    assert run("tiebreaks", "-q", "--format", "csv").exit_code == 0
    r = run("explain", E1, "-p", "1", "-t", "BH", "-q", "--format", "csv")
    assert r.exit_code == 0 and r.stderr == "", r.stderr


def test_explain_csv_keeps_result_codes() -> None:
    """Item 14: explain --format csv wrote the TRF codes +, =, - as '+, '=, '- (the formula guard)."""
    r = run("explain", E1, "-p", "1", "-t", "BH", "-q", "--format", "csv")
    results = [row["result"] for row in csv.DictReader(io.StringIO(r.stdout))]
    assert "+" in results and not any(v.startswith("'") for v in results), results


@pytest.mark.parametrize("rules", ["fide-2024", "fide-2026", "auto"])
def test_advice_about_rules_auto_only_under_auto(rules: str) -> None:
    """Item 11: compute --rules fide-2024 warned '... --rules auto uses fide-2026'."""
    r = run("compute", EXAMPLES, "-t", "SB", "--rules", rules)
    assert r.exit_code == 0, r.output
    assert "no start date (042)" in r.stderr            # the reader's warning, whatever the rules
    assert ("--rules auto: 3 of 5 tournaments have no date" in r.stderr) == (rules == "auto"), r.stderr


def test_the_model_checker_limits_scoring_as_the_trf_reader(tmp_path: Path) -> None:
    """Item 13: a model with pts_loss of 999 units was accepted without a word."""
    import polars as pl

    assert run("ingest", EXAMPLES, "-o", str(tmp_path / "model"), "-q").exit_code == 0
    part = tmp_path / "model" / "tournaments" / "part-00000.parquet"
    table = pl.read_parquet(part)
    table.with_columns(pl.when(pl.col("tournament") == 1).then(999).otherwise(pl.col("pts_loss"))
                       .cast(table["pts_loss"].dtype).alias("pts_loss")).write_parquet(part)
    r = run("compute", str(tmp_path / "model"), "-t", "BH", "--rules", "fide-2026")
    assert r.exit_code == 1, r.output
    assert "pts_loss 999 is not a whole number of units from 0 to 100 x scale 2" in r.stderr
    assert r.stdout.count("\n") > 20   # the other tournaments are computed


def test_html_needs_nothing_the_readme_does_not_install() -> None:
    """Item 15: evaluate --format html computed everything, then exited 3 asking for matplotlib (an extra)."""
    import re
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert any(re.match(r"matplotlib\b", d) for d in project["dependencies"])
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert 'pip install -q -e . &&' in readme        # the main command installs the dependencies, no extra


def test_simulate_intervals_stay_in_range_and_rematches_are_warned() -> None:
    """Item 20: simulate -n 10 -p 10 -r 50 printed strongest_first_hi95 1.0088 and kendall_tied_hi95 1.048,
    and 50 rounds for 10 players passed without a warning."""
    r = run("simulate", "-n", "10", "--players", "10", "-r", "50", "--format", "csv")
    assert r.exit_code == 0, r.output
    assert "50 rounds for 10 players" in r.stderr
    for row in csv.DictReader(io.StringIO(r.stdout)):
        for name, (low, high) in {"strongest_first": (0, 1), "kendall_tied": (-1, 1), "kendall": (-1, 1),
                                  "spearman": (-1, 1), "unbroken": (0, 1)}.items():
            for column in (name, f"{name}_lo95", f"{name}_hi95"):
                assert row[column] == "NaN" or low <= float(row[column]) <= high, (column, row[column])


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le", "utf-16-be"])
def test_a_utf16_trf_is_read(codec: str, tmp_path: Path) -> None:
    """Item 10: a UTF-16 TRF with a BOM was rejected as binary data (NUL bytes found)."""
    text = (ROOT / "data" / "examples" / "e2_cut_exception.trf").read_text(encoding="utf-8")
    path = tmp_path / "e2.trf"
    path.write_bytes(text.encode(codec))
    args = ["-t", "BH,BH/C1,SB", "--rules", "fide-2026", "--format", "csv", "-q"]
    r = run("compute", str(path), *args)
    original = run("compute", str(ROOT / "data" / "examples" / "e2_cut_exception.trf"), *args)
    assert r.exit_code == 0, r.output
    assert r.stdout.split("\n", 1)[1].replace(str(path), "X") == \
        original.stdout.split("\n", 1)[1].replace(str(ROOT / "data" / "examples" / "e2_cut_exception.trf"), "X")


def test_an_empty_team_result_is_never_a_success(tmp_path: Path) -> None:
    """Item 2: compute --teams on an individual event printed only a header and exited 0."""
    r = run("compute", E1, "--teams", "-t", "BH:MP")
    assert r.exit_code == 1 and "an individual event: --teams ranks the teams of team events" in r.stderr
    both = run("compute", EXAMPLES, str(ROOT / "data" / "teams"), "--teams", "-t", "BH:MP", "--errors",
               str(tmp_path / "errors.csv"))
    assert both.exit_code == 1 and "6 files: 1 loaded, 5 rejected" in both.stderr
    assert (tmp_path / "errors.csv").read_text().count(",rejected,") == 5
