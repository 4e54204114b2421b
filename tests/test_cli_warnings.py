"""Reader warnings reach the command line: a summary by kind on stderr, all of them with --warnings FILE."""

from __future__ import annotations

from pathlib import Path

import polars as pl
from click.testing import CliRunner

from tbstats.cli import main
from tests.trf_samples import LINES, player, variant

#: Player 1 declares 2.0 points but scores 1.5; player 2 declares 0.5 but scores 1.0.
DOUBTFUL = "042 2026/01/05\n" + variant(
    3, player(2, "Beta, Bob", "2000", ["   1 b 0", "   4 w 1"], points="0.5")).replace(
    LINES[2], player(1, "Alpha, Anna", "2100", ["   2 w 1", "   3 b ="], points="2.0"))


def _files(tmp_path: Path, n: int) -> list[str]:
    paths = []
    for i in range(n):
        (tmp_path / f"w{i}.trf").write_text(DOUBTFUL)
        paths.append(str(tmp_path / f"w{i}.trf"))
    return paths


def test_every_command_prints_the_warnings_and_counts_them(tmp_path: Path) -> None:
    paths = _files(tmp_path, 1)
    for args in (["info", *paths], ["compute", *paths, "-t", "BH"], ["ingest", *paths, "-o", str(tmp_path / "m")]):
        out = CliRunner().invoke(main, args)
        assert out.exit_code == 0, out.output
        assert "2 reader warnings: 2 points (cols 81-84)" in out.stderr, args
        assert f"{paths[0]}:4: points (cols 81-84): declared points 2.0 differ" in out.stderr, args
        assert out.stderr.rstrip().endswith("1 files: 1 loaded, 0 rejected, 2 warnings"), args


def test_warnings_file_has_them_all_and_stderr_the_first_few(tmp_path: Path) -> None:
    paths = _files(tmp_path, 4)
    target = tmp_path / "warnings.csv"
    out = CliRunner().invoke(main, ["info", *paths, "--warnings", str(target)])
    assert out.exit_code == 0, out.output
    assert "8 reader warnings" in out.stderr
    assert "... and 3 more warnings" in out.stderr
    table = pl.read_csv(target)
    assert table.columns == ["source", "line", "field", "message"]
    assert table.height == 8
    assert sorted(set(table["source"].to_list())) == sorted(paths)


def test_quiet_prints_nothing_but_still_writes_the_file(tmp_path: Path) -> None:
    paths = _files(tmp_path, 1)
    out = CliRunner().invoke(main, ["info", *paths, "-q", "--warnings", str(tmp_path / "w.csv")])
    assert out.exit_code == 0
    assert out.stderr == ""
    assert pl.read_csv(tmp_path / "w.csv").height == 2


# ---------------------------------------------------------------------------------- spreadsheet-safe CSV

def test_formula_like_names_are_escaped_and_numbers_are_not(tmp_path: Path) -> None:
    text = variant(2, player(1, "=HYPERLINK(1)", "2100", ["   2 w 1", "   3 b ="])).replace(
        LINES[3], player(2, "@SUM(A1)", "2000", ["   1 b 0", "   4 w 1"]))
    path = tmp_path / "-evil.trf"
    path.write_text("042 2026/01/05\n" + text)
    for fmt, sep in (("csv", ","), ("tsv", "\t")):
        out = CliRunner().invoke(main, ["compute", str(path), "-t", "BH", "--format", fmt, "-q"])
        rows = [line.split(sep) for line in out.stdout.splitlines()]
        names = {r[rows[0].index("name")] for r in rows[1:]}
        assert {"'=HYPERLINK(1)", "'@SUM(A1)"} <= names, fmt
        raw = CliRunner().invoke(main, ["compute", str(path), "-t", "BH", "--format", fmt, "-q",
                                        "--no-csv-escape"])
        assert "=HYPERLINK(1)" in raw.stdout and "'=HYPERLINK(1)" not in raw.stdout
    out = CliRunner().invoke(main, ["compute", str(path), "-t", "BH", "--format", "json", "-q"])
    assert '"=HYPERLINK(1)"' in out.stdout


def test_negative_numbers_are_never_touched() -> None:
    from tbstats.output import format_table

    df = pl.DataFrame({"name": ["-x", "+1", "-2.5", "\tTab"], "delta": [-1.5, -2.0, 0.0, 1.0], "n": [-1, 2, -3, 4]})
    assert format_table(df, "csv").splitlines() == [
        "name,delta,n", "'-x,-1.5,-1", "+1,-2.0,2", "-2.5,0.0,-3", "'\tTab,1.0,4"]
