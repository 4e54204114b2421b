"""The HTML report and the chart files: structure, self-containment, escaping and determinism."""

from __future__ import annotations

import base64
import dataclasses
import html
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import polars as pl
import pytest
from helpers import requires_shared

from tbstats.analysis.compare import Comparison, breakdown, compare
from tbstats.analysis.quality import run, sweep
from tbstats.engine.configs import parse_config
from tbstats.errors import TbstatsError
from tbstats.io.sources import load
from tbstats.model.batch import Batch
from tbstats.simulation import SimulationConfig

pytestmark = requires_shared()

FIXTURES = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "fixtures"
EVIL = '<script>alert(1)</script> & "x"'
CONFIGS = ("bh=fide-2026:BH", "sb=fide-2026:SB", "win=fide-2026:WIN", "ps=fide-2026:PS,BH")
FEATURES = ("type", "rounds", "unplayed")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


class Page(HTMLParser):
    """Start tags with their attributes, text per element class, and every text node."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.texts: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_data(self, data: str) -> None:
        self.texts.append(data)

    def all(self, tag: str, cls: str | None = None) -> list[dict[str, str]]:
        return [a for t, a in self.tags if t == tag and (cls is None or cls in a.get("class", "").split())]

    @property
    def text(self) -> str:
        return " ".join(self.texts)


@pytest.fixture(scope="module")
def batch() -> Batch:
    return load([str(FIXTURES)], on_error="collect").batch


@pytest.fixture(scope="module")
def comparison(batch: Batch) -> Comparison:
    return compare(batch, [parse_config(c) for c in CONFIGS])


@pytest.fixture(scope="module")
def breakdowns(comparison: Comparison) -> dict[str, pl.DataFrame]:
    return {f: breakdown(comparison, f) for f in FEATURES}


@pytest.fixture(scope="module")
def page_svg(comparison: Comparison, breakdowns: dict[str, pl.DataFrame]) -> str:
    from tbstats.report import render_html

    extra = {"Load <summary>": pl.DataFrame({"files": [13], "note": ["<b>bold</b> & more"]})}
    return render_html(comparison, title="Fixtures & <friends>", breakdowns=breakdowns, extra_tables=extra)


@pytest.fixture(scope="module")
def page_png(comparison: Comparison, breakdowns: dict[str, pl.DataFrame]) -> str:
    from tbstats.report import render_html

    return render_html(comparison, title="Fixtures", breakdowns=breakdowns, charts="png")


def test_one_document_with_headline_figures(comparison: Comparison, page_svg: str) -> None:
    page = Page(page_svg)
    assert page_svg.startswith("<!DOCTYPE html>")
    assert [len(page.all(t)) for t in ("html", "head", "body", "title", "style")] == [1, 1, 1, 1, 1]
    assert "Fixtures & <friends>" in page.text
    top = comparison.pairs.sort("winner_changed_rate", descending=True).row(0, named=True)
    assert top["winner_changed_rate"] > 0   # the fixtures give the headline something to show
    rate = f"{100 * top['winner_changed_rate']:.1f}%"
    interval = f"{100 * top['winner_changed_lo95']:.1f}–{100 * top['winner_changed_hi95']:.1f}%"
    needed = comparison.configs["tiebreaks_needed_rate"][0]
    cards = page_svg[page_svg.index('<div class="cards">'):page_svg.index("<nav>")]
    for figure in (f">{comparison.tournaments['tournament'].n_unique()}<", f">{comparison.configs.height}<", rate,
                   interval, f"{100 * needed:.1f}%"):
        assert figure in cards, figure


def test_a_chart_per_section(page_svg: str, page_png: str) -> None:
    expected = 3 + len(FEATURES)   # pairs, disagreement, depth, one per breakdown
    for text, fmt in ((page_svg, "svg"), (page_png, "png")):
        figures = text.split('<figure class="chart"')[1:]
        assert len(figures) == expected
        for fig in figures:
            body = fig[:fig.index("</figure>")]
            if fmt == "svg":
                assert body.count("<svg") == 1 and "<img" not in body
            else:
                assert body.count('<img src="data:image/png;base64,') == 1 and "<svg" not in body
                data = body.split("base64,", 1)[1].split('"', 1)[0]
                assert base64.b64decode(data).startswith(PNG_MAGIC)


def test_inline_svg_ids_are_unique(page_svg: str) -> None:
    ids = [a["id"] for _, a in Page(page_svg).tags if "id" in a]
    assert len(ids) == len(set(ids))


def test_drilldown_rows(comparison: Comparison, page_svg: str) -> None:
    page = Page(page_svg)
    drill = comparison.drilldown
    assert drill.height > 0
    assert len(page.all("tr", "player")) == drill.height
    assert len(page.all("tr", "group")) == drill.select("a", "b", "tournament").unique().height
    for command in drill["explain"].to_list():
        assert command in page.text


def assert_self_contained(text: str) -> None:
    low = text.lower()
    for needle in ('src="http', "<link", "<script", "@import", "url(http", "<iframe", "<object"):
        assert needle not in low, needle
    page = Page(text)
    for _, attrs in page.tags:
        for name, value in attrs.items():
            if name == "src" or name.endswith("href"):   # matplotlib inlines colour bars as PNG
                assert value.startswith(("#", "data:image/png;base64,")), value[:40]


def test_self_contained(page_svg: str, page_png: str) -> None:
    for text in (page_svg, page_png):
        assert_self_contained(text)


@pytest.fixture(scope="module")
def evil_page(batch: Batch) -> str:
    from tbstats.report import render_html

    players = batch.players.with_columns(pl.lit(EVIL).alias("name"))
    tournaments = batch.tournaments.with_columns(
        (pl.lit(EVIL + " /") + pl.col("tournament").cast(pl.String)).alias("source"))
    evil = Batch(tournaments, players, batch.games, batch.warnings)
    configs = [parse_config(c) for c in CONFIGS]
    configs[0] = dataclasses.replace(configs[0], name=EVIL)
    result = compare(evil, configs)
    return render_html(result, title=EVIL, breakdowns={"type": breakdown(result, "type")},
                       extra_tables={EVIL: pl.DataFrame({EVIL: [EVIL]})})


def test_data_text_is_escaped(evil_page: str) -> None:
    assert EVIL not in evil_page
    assert "<script" not in evil_page.lower()
    assert html.escape(EVIL) in evil_page
    page = Page(evil_page)
    assert not page.all("script")
    names = [t for t in page.texts if t.strip() == EVIL]
    assert len(names) > 10                   # title, config name, players, extra table
    assert any(EVIL in a.get("title", "") for a in page.all("td", "src"))


def test_deterministic(comparison: Comparison, breakdowns: dict[str, pl.DataFrame], page_svg: str,
                       tmp_path: Path) -> None:
    from tbstats.report import render_html, write_charts

    extra = {"Load <summary>": pl.DataFrame({"files": [13], "note": ["<b>bold</b> & more"]})}
    again = render_html(comparison, title="Fixtures & <friends>", breakdowns=breakdowns, extra_tables=extra)
    assert again == page_svg
    first = write_charts(comparison, tmp_path / "one", fmt="png")
    second = write_charts(comparison, tmp_path / "two", fmt="png")
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in second]


@pytest.mark.parametrize("fmt", ["svg", "png"])
def test_write_charts(comparison: Comparison, breakdowns: dict[str, pl.DataFrame], tmp_path: Path,
                      fmt: str) -> None:
    from tbstats.report import write_charts

    paths = write_charts(comparison, tmp_path / "charts", fmt=fmt, breakdowns=breakdowns)  # type: ignore[arg-type]
    assert [p.name for p in paths] == [f"{n}.{fmt}" for n in (
        "winner_change_by_pair", "disagreement", "tiebreak_depth", *(f"breakdown_{f}" for f in FEATURES))]
    for path in paths:
        data = path.read_bytes()
        if fmt == "svg":
            assert ET.fromstring(data).tag.endswith("svg")
            assert b"<dc:date>" not in data
        else:
            assert data.startswith(PNG_MAGIC)


def test_many_configurations(batch: Batch) -> None:
    """Ten configurations (45 pairs) still render, and every pair is in the per-pair table."""
    from tbstats.report import render_html

    specs = ["BH", "SB", "WIN", "PS", "ARO", "AOB", "DE", "BH/C1", "BPG", "SB,BH"]
    result = compare(batch, [parse_config(f"config_with_a_long_name_{i}=fide-2026:{s}") for i, s in enumerate(specs)])
    assert result.pairs.height == 45
    text = render_html(result, title="ten")
    assert len(Page(text).all("svg")) == 3
    assert text.count("<tr><td>config_with_a_long_name_") >= 45


def test_errors(comparison: Comparison, monkeypatch: pytest.MonkeyPatch) -> None:
    from tbstats.report import render_html

    with pytest.raises(TbstatsError, match="unknown chart format"):
        render_html(comparison, title="x", charts="gif")  # type: ignore[arg-type]
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(TbstatsError, match=r"pip install matplotlib \(tbstats depends on it"):
        render_html(comparison, title="x")


def test_import_does_not_load_matplotlib() -> None:
    code = "import sys, tbstats.report; print('matplotlib' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


# ------------------------------------------------------------------------------------------ simulation page

SIM_NAME = '<b>&"x"'
SIM = SimulationConfig(tournaments=60, players=16, rounds=7, seed=3)
SIM_SETTINGS = {f.name: getattr(SIM, f.name) for f in dataclasses.fields(SIM) if f.name != "chunk"}
SIM_CHARTS = [*(f"measure_{m}" for m in ("strongest_first", "kendall_tied", "kendall", "spearman", "unbroken",
                                         "first_settles_first")),
              *(f"sweep_rounds_{m}" for m in ("strongest_first", "kendall_tied", "unbroken", "first_settles_first"))]


@pytest.fixture(scope="module")
def sim_table() -> pl.DataFrame:
    b = dataclasses.replace(parse_config("b=fide-2026:SB,DE,KS"), name=SIM_NAME)
    return run(SIM, [parse_config("a=fide-2026:BH/C1,BH,SB"), b])[1]


@pytest.fixture(scope="module")
def sim_sweep() -> pl.DataFrame:
    return sweep(SimulationConfig(tournaments=30, players=12, rounds=5, seed=1), [parse_config("a=fide-2026:BH")],
                 "rounds", [5, 7])


@pytest.fixture(scope="module")
def sim_page(sim_table: pl.DataFrame, sim_sweep: pl.DataFrame) -> str:
    from tbstats.report import render_simulation_html

    return render_simulation_html(sim_table, title="Simulated & <tested>", settings=SIM_SETTINGS, sweep=sim_sweep)


def test_simulation_page_structure(sim_table: pl.DataFrame, sim_page: str) -> None:
    page = Page(sim_page)
    assert sim_page.startswith("<!DOCTYPE html>")
    assert [len(page.all(t)) for t in ("html", "head", "body", "title", "style")] == [1, 1, 1, 1, 1]
    assert "Simulated & <tested>" in page.text
    sections = [a["id"] for a in page.all("section")]
    assert sections == ["measures", "figures", "settings", "sweep-1", "inputs", "about"]
    assert [a["href"] for a in page.all("a")] == [f"#{s}" for s in sections]
    # header cards: tournaments, tied groups, the best configuration with its interval and its gain over random
    cards = sim_page[sim_page.index('<div class="cards">'):sim_page.index("<nav>")]
    best = sim_table.filter(pl.col("config") != "random").sort("strongest_first", descending=True).row(0, named=True)
    random = sim_table.filter(pl.col("config") == "random").row(0, named=True)
    gain = 100 * (best["strongest_first"] - random["strongest_first"])
    for figure in (">60<", f">{sim_table['tied_groups'][0]:,}<", f">{100 * best['strongest_first']:.1f}%<",
                   html.escape(best["config"]), f"{100 * best['strongest_first_lo95']:.1f}–",
                   f"{gain:+.1f} points", f"({100 * random['strongest_first']:.1f}%;"):
        assert figure in cards, figure
    # one chart per measure, one per swept measure
    assert [a["id"] for a in page.all("figure", "chart")] == [f"chart-{n}" for n in SIM_CHARTS]
    assert sim_page.count("<svg") == len(SIM_CHARTS)
    # the table: one row per configuration, the baseline marked
    table = sim_page[sim_page.index('<table class="measures">'):]
    table = table[:table.index("</table>")]
    assert len(Page(table).all("tr")) == 1 + sim_table.height
    assert len(Page(table).all("tr", "baseline")) == 1
    assert "fide-2026:LOTS" in table and f"{100 * best['strongest_first']:.1f}%" in table
    # settings
    settings = sim_page[sim_page.index('<section id="settings">'):sim_page.index('<section id="sweep-1">')]
    settings_text = Page(settings).text
    for key, value in SIM_SETTINGS.items():
        assert key in settings_text and str(value) in settings_text, key


def test_simulation_png_charts(sim_table: pl.DataFrame) -> None:
    from tbstats.report import render_simulation_html

    text = render_simulation_html(sim_table, title="png", settings={}, charts="png")
    figures = text.split('<figure class="chart"')[1:]
    assert len(figures) == 6
    for fig in figures:
        body = fig[:fig.index("</figure>")]
        assert "<svg" not in body
        data = body.split('<img src="data:image/png;base64,', 1)[1].split('"', 1)[0]
        assert base64.b64decode(data).startswith(PNG_MAGIC)
    assert_self_contained(text)
    assert "No settings were given." in text


def test_simulation_page_is_self_contained_and_escaped(sim_page: str) -> None:
    assert_self_contained(sim_page)
    assert SIM_NAME not in sim_page
    assert html.escape(SIM_NAME) in sim_page
    page = Page(sim_page)
    assert not page.all("script")
    assert sum(t == SIM_NAME for t in page.texts) >= 2      # the figures table and the unrounded table
    ids = [a["id"] for _, a in page.tags if "id" in a]
    assert len(ids) == len(set(ids))


def test_simulation_deterministic(sim_table: pl.DataFrame, sim_sweep: pl.DataFrame, sim_page: str,
                                  tmp_path: Path) -> None:
    from tbstats.report import render_simulation_html, write_simulation_charts

    again = render_simulation_html(sim_table, title="Simulated & <tested>", settings=SIM_SETTINGS, sweep=sim_sweep)
    assert again == sim_page
    first = write_simulation_charts(sim_table, tmp_path / "one", fmt="png")
    second = write_simulation_charts(sim_table, tmp_path / "two", fmt="png")
    assert [p.name for p in first] == [f"{n}.png" for n in SIM_CHARTS[:6]]
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in second]
    assert all(p.read_bytes().startswith(PNG_MAGIC) for p in first)
    svg = write_simulation_charts(sim_table, tmp_path / "svg", fmt="svg", sweep=sim_sweep)
    assert [p.name for p in svg] == [f"{n}.svg" for n in SIM_CHARTS]
    for path in svg:
        data = path.read_bytes()
        assert ET.fromstring(data).tag.endswith("svg") and b"<dc:date>" not in data


def test_simulation_without_baseline(sim_table: pl.DataFrame) -> None:
    from tbstats.report import render_simulation_html

    text = render_simulation_html(sim_table.filter(pl.col("config") != "random"), title="t", settings=SIM_SETTINGS)
    page = Page(text)
    assert "no random baseline in this run" in page.text
    assert not page.all("tr", "baseline")
    assert "plus the random baseline" not in text and "dashed" not in text


def test_simulation_errors(sim_table: pl.DataFrame) -> None:
    from tbstats.report import render_simulation_html

    with pytest.raises(TbstatsError, match="lacks the columns strongest_first"):
        render_simulation_html(sim_table.drop("strongest_first"), title="x", settings={})
    with pytest.raises(TbstatsError, match=r"the sweep table lacks the columns parameter, value"):
        render_simulation_html(sim_table, title="x", settings={}, sweep=sim_table)
    with pytest.raises(TbstatsError, match="unknown chart format"):
        render_simulation_html(sim_table, title="x", settings={}, charts="gif")  # type: ignore[arg-type]


def test_the_heatmaps_have_fixed_scales_from_zero(comparison: Comparison) -> None:
    """Issue 21 item 18: the colour scale stretched to the largest value, so 0.001 looked like disagreement."""
    from tbstats.report.compare_charts import _heatmap_chart

    fig = _heatmap_chart(comparison, None)
    limits = sorted(image.get_clim() for ax in fig.axes for image in ax.get_images())
    assert limits == [(0.0, 1.0), (0.0, 100.0)]


def test_the_evaluate_page_escapes_once(tmp_path: Path) -> None:
    """Issue 21 item 17: the evaluate page showed players&#x27; ratings (escaped twice)."""
    from click.testing import CliRunner

    from tbstats.cli import main

    out = tmp_path / "page.html"
    r = CliRunner().invoke(main, ["evaluate", str(Path(__file__).parent.parent / "data" / "examples"), "-c",
                                  "a=fide-2026:BH/C1,BH,SB", "--format", "html", "-o", str(out), "-q"])
    assert r.exit_code == 0, r.output
    page = out.read_text(encoding="utf-8")
    assert "&amp;#x27;" not in page                       # escaped twice: shown as &#x27; in the browser
    assert "the players' ratings in the event" in html.unescape(page)
    assert "not recorded" not in page and "tbstats evaluate " in html.unescape(page)   # the command, its inputs
    assert "would by chance alone (5% of the rows)" in page     # red rows read against multiple comparisons


def test_the_simulate_page_says_when_the_best_cannot_be_told_apart(tmp_path: Path) -> None:
    """Issue 21 item 19: the page named a "best configuration" whose interval overlapped the next one's."""
    from click.testing import CliRunner

    from tbstats.cli import main

    out = tmp_path / "page.html"
    args = ["simulate", "-n", "20", "--players", "10", "-r", "5", "--seed", "1", "-c", "a=fide-2026:BH,SB",
            "-c", "b=fide-2024:BH,SB", "--format", "html", "-o", str(out), "-q"]
    assert CliRunner().invoke(main, args).exit_code == 0
    page = html.unescape(out.read_text(encoding="utf-8"))
    assert "Highest configuration (not told apart)" in page and "the data cannot tell it from 1 other" in page
