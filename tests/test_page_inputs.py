"""Every report page says what went into it (issue 21 item 16), and fits a narrow window (item 21).

The real archive under ../shared/data/trf has files the readers reject, files that are not tournaments, reader
warnings of several kinds, team events and round robins: what the pages must show is read from the loader's own
ledger, so the tests check the page against the run, not against numbers written here.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner, Result
from helpers import REAL, requires_shared

from tbstats.cli import main
from tbstats.io import expand, sources
from tbstats.model.teams.batch import team_event_ids
from tbstats.report.frame import LISTED_FILES
from tbstats.run.account import Account, warning_kinds

pytestmark = requires_shared()

#: A few real folders with every case in them: rejected files (openswisspairings, arbitools_pypi), skipped
#: files and 042 warnings (chessresults), team events (heltour) and a round robin (held_exercises).
SOME = ("arbitools_pypi", "chessresults", "heltour", "held_exercises", "openswisspairings")


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def section(page: str, sid: str) -> str:
    """The HTML of one section, its <wbr> break hints removed (so paths read as typed)."""
    start = page.index(f'<section id="{sid}">')
    return page[start:page.index("</section>", start)].replace("<wbr>", "")


def text(fragment: str) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", fragment)))


@pytest.fixture(scope="module")
def loaded() -> sources.LoadResult:
    return sources.load([str(REAL)], on_error="collect")


@pytest.fixture(scope="module")
def compare_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Result, str]:
    out = tmp_path_factory.mktemp("compare") / "page.html"
    r = run("compare", str(REAL), "-c", "a=fide-2026:BH/C1,BH,SB", "-c", "b=fide-2026:SB,BH", "--format", "html",
            "-o", str(out))
    return r, out.read_text(encoding="utf-8")


def test_the_archive_has_every_case(loaded: sources.LoadResult) -> None:
    """The real files do hold what the other tests look for (else they would pass on nothing)."""
    skipped = loaded.ledger["reason"].str.starts_with(expand.SKIPPED)
    assert loaded.rejected >= 2 and int(skipped.sum()) > LISTED_FILES
    assert {"299", "encoding"} <= set(warning_kinds(loaded.batch.warnings)["kind"].to_list())
    assert team_event_ids(loaded.batch)
    assert int((loaded.batch.tournaments["event_type"] == "round_robin").sum()) >= 1


def test_compare_page_names_the_rejected_files_with_their_reasons(loaded: sources.LoadResult,
                                                                  compare_page: tuple[Result, str]) -> None:
    r, page = compare_page
    assert r.exit_code == 1, r.output   # some inputs rejected
    inputs = section(page, "inputs")
    problems = loaded.ledger.filter(~pl.col("reason").str.starts_with(expand.SKIPPED))
    first = problems.group_by("path", maintain_order=True).agg(pl.col("reason").first())
    assert first.height == loaded.rejected
    for path, reason in first.iter_rows():
        assert html.escape(path) in inputs and html.escape(reason) in inputs, path
    said = text(inputs)
    assert f"{loaded.files} tournament files: {loaded.loaded} loaded, {loaded.rejected} rejected" in said
    assert f"{loaded.batch.n_tournaments:,}" in said
    assert "--errors FILE lists every problem" in said


def test_compare_page_counts_warnings_by_kind_and_the_skipped_files(loaded: sources.LoadResult,
                                                                    compare_page: tuple[Result, str]) -> None:
    _, page = compare_page
    inputs = section(page, "inputs")
    kinds = warning_kinds(loaded.batch.warnings)
    table = inputs[inputs.index('id="warnings"'):]
    for kind, n, source in kinds.select("kind", "n", "source").iter_rows():   # each kind: its count, an example
        assert re.search(rf"<td>{re.escape(html.escape(kind))}</td><td class=\"num\">{n:,}</td>"
                         rf"<td class=\"path\">{re.escape(html.escape(source))}</td>", table), kind
    assert f"{loaded.batch.warnings.height:,}" in text(inputs)
    skipped = loaded.ledger.filter(pl.col("reason").str.starts_with(expand.SKIPPED))["path"].unique()
    assert f"Skipped files ({skipped.len():,})" in inputs
    assert f"Showing the first {LISTED_FILES} of {skipped.len():,} files" in inputs   # the rest: --errors FILE
    # the pointer under the headline sends the reader there
    assert f'{loaded.rejected} files rejected; {loaded.batch.warnings.height} reader warnings' in page


def test_compare_notes_team_events_ranked_as_individuals(loaded: sources.LoadResult,
                                                         compare_page: tuple[Result, str]) -> None:
    r, page = compare_page
    teams = len(team_event_ids(loaded.batch))
    assert f"Note: {teams} team event(s): their players are ranked as individuals" in r.stderr
    assert f"{teams} team events ranked as individuals" in text(section(page, "inputs"))


def test_compare_page_says_round_robins_were_given_buchholz(compare_page: tuple[Result, str]) -> None:
    r, page = compare_page
    warning = next(line for line in r.stderr.splitlines() if "computed for round robins" in line)
    assert html.escape(warning.removeprefix("Warning: ")) in section(page, "inputs")


def test_the_page_says_where_the_full_lists_went(tmp_path: Path) -> None:
    out, errors, warned = tmp_path / "p.html", tmp_path / "errors.csv", tmp_path / "warnings.csv"
    r = run("compare", *(str(REAL / d) for d in SOME), "-c", "a=fide-2026:SB", "-c", "b=fide-2026:DE,SB",
            "--format", "html", "-o", str(out), "--errors", str(errors), "--warnings", str(warned), "-q")
    assert r.exit_code == 1 and errors.exists() and warned.exists()
    inputs = text(section(out.read_text(encoding="utf-8"), "inputs"))
    assert f"every problem is in {errors} (--errors)" in inputs
    assert f"every warning is in {warned} (--warnings)" in inputs
    assert "round robins" not in inputs       # no Buchholz asked for: no such warning
    written = pl.read_csv(errors)
    for path in written.filter(pl.col("status") == "rejected")["path"].unique().to_list():
        assert path in inputs


def test_evaluate_page_has_the_inputs_and_checks_buchholz_in_round_robins(tmp_path: Path) -> None:
    paths = [str(REAL / d) for d in SOME]
    loaded = sources.load(paths, on_error="collect")
    out = tmp_path / "page.html"
    r = run("evaluate", *paths, "-c", "a=fide-2026:BH/C1,BH,SB", "--no-baseline", "--format", "html", "-o", str(out))
    assert r.exit_code == 1, r.output
    inputs = section(out.read_text(encoding="utf-8"), "inputs")
    teams = len(team_event_ids(loaded.batch))
    assert teams and f"{teams} team event{'s' if teams > 1 else ''} left out" in text(inputs)
    for path in loaded.ledger.filter(~pl.col("reason").str.starts_with(expand.SKIPPED))["path"].unique():
        assert html.escape(path) in inputs
    # team events are left out, so only the individual round robins count
    individual = loaded.batch.tournaments.filter(~pl.col("tournament").is_in(team_event_ids(loaded.batch)))
    rr = int((individual["event_type"] == "round_robin").sum())
    message = f"BH, BH/C1 computed for round robins ({rr} of {individual.height} tournaments)"
    assert rr and message in r.stderr and html.escape(message) in inputs


def test_simulate_page_says_nothing_was_read_and_warns_of_buchholz(tmp_path: Path) -> None:
    out = tmp_path / "page.html"
    r = run("simulate", "-n", "6", "--players", "6", "--kind", "round_robin", "-c", "a=fide-2026:BH,SB",
            "--format", "html", "-o", str(out), "-q")
    assert r.exit_code == 0, r.output
    inputs = text(section(out.read_text(encoding="utf-8"), "inputs"))
    assert "6 simulated (no file read)" in inputs
    assert "BH computed for round robins (6 of 6 tournaments)" in inputs


def test_a_page_rendered_from_python_says_its_inputs_were_not_recorded() -> None:
    from tbstats.report.frame import _page, inputs_html

    assert "Not recorded" in text(section(_page("t", "s", "", []), "inputs"))
    page = inputs_html(Account(paths=("a/b.trf",), files=1, tournaments=1))
    assert "a/<wbr>b.trf" in page and "Rejected files" in page and "Team events" in page


# ------------------------------------------------------------------------------ fitting a narrow window

def test_every_table_scrolls_in_its_own_box_and_the_page_scales(compare_page: tuple[Result, str],
                                                                  tmp_path: Path) -> None:
    sim = tmp_path / "sim.html"
    assert run("simulate", "-n", "4", "--players", "6", "--format", "html", "-o", str(sim), "-q").exit_code == 0
    for page in (compare_page[1], sim.read_text(encoding="utf-8")):
        assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in page
        tables = [m.start() for m in re.finditer(r"<table\b", page)]
        assert tables and all(page[:t].endswith('<div class="scroll">') for t in tables)
        css = page[page.index("<style>"):page.index("</style>")]
        assert ".scroll{overflow-x:auto" in css and "img,svg{max-width:100%}" in css
        assert "minmax(min(440px,100%),1fr)" in css          # the chart grid: one column when narrow
        assert ".charts > *,.cols > *,.cards > *{min-width:0}" in css   # grid items may shrink, their tables scroll
        # breaking anywhere only in path cells (and command lines, config names), each with a floor
        rules = re.findall(r"([^{}]+)\{[^}]*overflow-wrap:anywhere[^}]*\}", css)
        assert {r.strip() for r in rules} <= {".path", "code.cmd", ".card .pair", "table.drill tr.cmd code"}
        assert re.search(r"\.path\{overflow-wrap:anywhere;min-width:\d+ch\}", css)


def test_paths_break_at_their_folders(compare_page: tuple[Result, str]) -> None:
    page = compare_page[1]
    cells = re.findall(r'<td class="(?:src )?path"[^>]*>(.*?)</td>', page)
    assert cells and any("/" in c for c in cells)
    for cell in cells:
        assert "/" not in re.sub("/<wbr>", "", cell), cell   # every folder separator is a break opportunity
