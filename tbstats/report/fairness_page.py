"""The ``tbstats evaluate`` page: order quality against a strength proxy, and whom tie-breaks favour.

It shares the skeleton, cards, tables, colours and chart embedding of the other pages of the package;
the measures section is the simulation page's. Two chart kinds are its own: per breakdown, each value's rate
of ties won relative to the chance rate (1 = chance) per configuration; per pair of configurations, the
paired difference of those rates, value by value.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from tbstats.report.charts import Chart, ChartFormat, Plan, _draw, _figure, _no_data, _save, _short, _slug
from tbstats.report.frame import About, _page
from tbstats.report.page import Section, _card, _cards, _chart_html, _e, _plural, table_html
from tbstats.report.simulation_charts import BASELINE, _colours, _names, _simulation_chart_list
from tbstats.report.simulation_page import _measures_table

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from tbstats.analysis.evaluate import ArchiveEvaluation

_WIDTH = 7.0
_PROXIES = {"rating": "the players' ratings in the event",
            "archive": "a leave-one-event-out Bradley-Terry fit on the archive's other events"}


def _favour_chart(favour: pl.DataFrame, breakdown: str, colours: dict[str, str], title: str | None) -> Figure:
    """Per value of one breakdown: each configuration's rate of ties won over the chance rate, 95% interval."""
    rows = favour.filter(pl.col("breakdown") == breakdown)
    values = rows["value"].unique(maintain_order=True).to_list()
    names = rows["config"].unique(maintain_order=True).to_list()
    fig = _figure(_WIDTH, 1.0 + 0.22 * max(len(values) * max(len(names), 1), 3))
    ax = fig.add_subplot()
    if title:
        ax.set_title(title)
    if not rows.height:
        _no_data(ax, "No tied player in this breakdown.")
        return fig
    step = 0.8 / max(len(names), 1)
    for c, name in enumerate(names):
        part = pl.DataFrame({"value": values}).join(rows.filter(pl.col("config") == name), on="value", how="left",
                                                    maintain_order="left")
        chance = part["chance"].to_numpy()
        ratio, lo, hi = (part[col].to_numpy() / chance for col in ("rate", "rate_lo95", "rate_hi95"))
        y = np.arange(len(values)) - 0.4 + step * (c + 0.5)
        ax.errorbar(ratio, y, xerr=[ratio - lo, hi - ratio], fmt="o", color=colours[name], ecolor=colours[name],
                    elinewidth=1.3, capsize=2, markersize=4.5, label=_short(name),
                    markerfacecolor="white" if name == BASELINE else colours[name])
    ax.axvline(1.0, color="#5f6b78", linestyle=(0, (4, 3)), linewidth=1)
    players = rows.group_by("value", maintain_order=True).agg(pl.col("players").max())["players"].to_list()
    ax.set_yticks(range(len(values)), labels=[f"{v} (n={n:,})" for v, n in zip(values, players, strict=True)])
    ax.set_ylim(len(values) - 0.5, -0.5)
    ax.xaxis.grid(True)
    ax.tick_params(axis="y", length=0)
    ax.set_xlabel("ties won / chance rate (1 = chance, dashed); whiskers: 95% Wilson interval")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), title="configuration")
    return fig


def _difference_chart(diff: pl.DataFrame, a: str, b: str, title: str | None) -> Figure:
    """Per breakdown value: the paired difference of ties won, a - b, in percentage points, 95% interval."""
    rows = diff.filter((pl.col("a") == a) & (pl.col("b") == b) & (pl.col("breakdown") != "all"))
    fig = _figure(_WIDTH, 1.0 + 0.2 * max(rows.height, 3))
    ax = fig.add_subplot()
    if title:
        ax.set_title(title)
    if not rows.height:
        _no_data(ax, "No tied player to compare.")
        return fig
    v = rows["difference"].to_numpy() * 100
    lo = rows["difference_lo95"].cast(pl.Float64).fill_null(float("nan")).to_numpy() * 100
    hi = rows["difference_hi95"].cast(pl.Float64).fill_null(float("nan")).to_numpy() * 100
    lo, hi = np.minimum(np.where(np.isfinite(lo), lo, v), v), np.maximum(np.where(np.isfinite(hi), hi, v), v)
    y = np.arange(rows.height)
    apart = (lo > 0) | (hi < 0)
    ax.errorbar(v, y, xerr=[v - lo, hi - v], fmt="none", ecolor="#2f6db5", elinewidth=1.3, capsize=2)
    ax.scatter(v, y, s=22, zorder=3, color=np.where(apart, "#c2405a", "#2f6db5"))
    ax.axvline(0.0, color="#5f6b78", linestyle=(0, (4, 3)), linewidth=1)
    labels = [f"{br}: {val} (n={n:,})" for br, val, n in rows.select("breakdown", "value", "players").iter_rows()]
    ax.set_yticks(y, labels=labels)
    ax.set_ylim(rows.height - 0.5, -0.5)
    ax.xaxis.grid(True)
    ax.tick_params(axis="y", length=0)
    ax.set_xlabel(f"{_short(a)} minus {_short(b)}: ties won, percentage points (red: interval excludes 0)")
    return fig


def _by_chance(differences: pl.DataFrame) -> str:
    """How many red rows (an interval that excludes 0) chance alone would give: each 95% interval misses a
    true difference of 0 one time in 20, so among many rows some are red with no real difference."""
    rows = differences.filter(pl.col("breakdown") != "all")
    if not rows.height:
        return ""
    lo = rows["difference_lo95"].cast(pl.Float64)
    hi = rows["difference_hi95"].cast(pl.Float64)
    red = int(((lo > 0) | (hi < 0)).fill_null(False).sum())
    return (f"<p>{red} of {rows.height} rows have an interval that excludes 0 (red). With no real difference "
            f"anywhere, about {rows.height * 0.05:.1f} would by chance alone (5% of the rows): read a few red "
            "rows as a hint to look further, not as findings; the intervals are not adjusted for multiple "
            "comparisons.</p>")


def _plans(result: ArchiveEvaluation) -> list[Plan]:
    colours = _colours(_names(result.measures))
    plans: list[Plan] = []
    for breakdown in result.favour["breakdown"].unique(maintain_order=True).to_list():
        if breakdown != "all":
            plans.append((f"favour_{_slug(breakdown)}", f"Ties won against chance, by {breakdown}",
                          partial(_favour_chart, result.favour, breakdown, colours)))
    for a, b in result.differences.select("a", "b").unique(maintain_order=True).iter_rows():
        plans.append((f"difference_{_slug(a)}_{_slug(b)}", f"Ties won: {a} minus {b}",
                      partial(_difference_chart, result.differences, a, b)))
    return plans


def _charts(result: ArchiveEvaluation, fmt: ChartFormat) -> list[tuple[str, list[Chart]]]:
    measures = _simulation_chart_list(result.measures, None, fmt)
    return [("measures", measures), ("favour", _draw(_plans(result), fmt, titled=True))]


def write_fairness_charts(result: ArchiveEvaluation, directory: str | Path, *, fmt: ChartFormat) -> list[Path]:
    """Write every chart of the page to ``directory``: ``measure_*``, ``favour_*``, ``difference_*``."""
    return _save([c for _, charts in _charts(result, fmt) for c in charts], directory)


def _headline(result: ArchiveEvaluation) -> str:
    m = result.measures.row(0, named=True) if result.measures.height else {}
    proxy = _PROXIES.get(result.proxy, f"the players' column {result.proxy}")
    cards = [_card("Strength proxy", result.proxy, proxy),
             _card("Tied groups", f"{int(m.get('tied_groups', 0)):,}",
                   f"{int(m.get('groups_left_out', 0)):,} left out (fewer than two members with a strength)"),
             _card("Players left out", f"{int(m.get('players_left_out', 0)):,}", "no strength under the proxy")]
    if result.fit is not None:
        cards.append(_card("Archive fit", f"{result.fit.covered:,}", result.fit.describe()))
    return _cards(cards)


def render_fairness_html(result: ArchiveEvaluation, *, title: str, charts: ChartFormat = "svg",
                         about: About | None = None) -> str:
    """One self-contained HTML page: measures against the proxy, ties won against chance, differences.

    ``about`` (the command line, the inputs and their counts) goes into the page's provenance section."""
    (_, measures), (_, favour) = _charts(result, charts)
    sections: list[Section] = []
    figures = "".join(_chart_html(c, _e(c.title)) for c in measures)
    sections.append(("measures", "Order quality against the strength proxy", (
        "<p>Each panel shows every configuration's estimate with its 95% interval; the random baseline "
        "(ties broken by a drawing of lots) is dashed. A proxy is only a proxy: a rating measures strength "
        "before the event with noise, so a perfect order would not reach 100%.</p>"
        f'<div class="charts">{figures}</div>' + _measures_table(result.measures)
        + "<details><summary>Unrounded table</summary>" + table_html(result.measures, limit=None) + "</details>")))
    by_name = {c.name: c for c in favour}
    parts = ["<p>For players tied on points: how often a player is ranked first of his group (a shared "
             "first counts 1/m), divided by the chance rate 1/k. Above 1, the tie-breaks favour such players; "
             "whiskers are 95% Wilson intervals, n counts tied players.</p>"]
    parts += [_chart_html(c, _e(c.title)) for name, c in by_name.items() if name.startswith("favour_")]
    parts.append("<details><summary>Favour table</summary>" + table_html(result.favour, limit=None) + "</details>")
    sections.append(("favour", "Whom the tie-breaks favour", "".join(parts)))
    diffs = [c for name, c in by_name.items() if name.startswith("difference_")]
    if diffs:
        sections.append(("difference", "Differences between configurations", (
            "<p>The same tied players under two configurations: the mean difference of ties won, with a "
            "normal 95% interval on the paired differences.</p>" + _by_chance(result.differences)
            + "".join(_chart_html(c, _e(c.title)) for c in diffs)
            + "<details><summary>Difference table</summary>" + table_html(result.differences, limit=None)
            + "</details>")))
    n = len([x for x in _names(result.measures) if x != BASELINE])
    subtitle = _plural(n, "configuration") + (" and the random baseline" if BASELINE in _names(result.measures)
                                              else "") + f", strength proxy {result.proxy}"
    return _page(title, subtitle, _headline(result), sections, about)
