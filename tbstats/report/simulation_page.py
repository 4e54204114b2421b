"""The simulation page: how well each configuration recovers true strength on simulated tournaments."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, cast

import polars as pl

from tbstats.report.charts import ChartFormat, _int, _slug
from tbstats.report.frame import About, _page
from tbstats.report.page import (
    Cell,
    Section,
    _card,
    _cards,
    _chart_html,
    _definition,
    _e,
    _interval,
    _num,
    _pct,
    _plural,
    _row,
    _table,
    table_html,
)
from tbstats.report.simulation_charts import (
    _MEASURE,
    BASELINE,
    MEASURES,
    SWEPT_MEASURES,
    Measure,
    _names,
    _simulation_chart_list,
    _sweep_parameters,
)


def render_simulation_html(table: pl.DataFrame, *, title: str, settings: Mapping[str, object],
                           sweep: pl.DataFrame | None = None, charts: ChartFormat = "svg",
                           about: About | None = None) -> str:
    """One self-contained HTML page for an order-quality evaluation on simulated tournaments.

    ``about`` (the command line and what was simulated) goes into the page's provenance section.

    ``table`` is the output of :func:`tbstats.analysis.quality.evaluate` (or the table of
    :func:`tbstats.analysis.quality.run`); the configuration named ``random`` is the drawing-of-lots baseline.
    ``settings`` (the simulation configuration) is shown as a table; ``sweep`` (the output of
    :func:`tbstats.analysis.quality.sweep`) adds a line chart per swept measure. The page shares the skeleton,
    cards, tables and chart embedding of :func:`render_html`: nothing on it refers to another file or
    address, all data text is escaped, and equal inputs give identical pages.
    """
    drawn = {c.name: c for c in _simulation_chart_list(table, sweep, charts)}
    names = _names(table)
    sections: list[Section] = []
    baseline = BASELINE in names
    intro = ("<p>Each panel shows every configuration's estimate with its 95% interval"
             + (", and the random baseline (ties broken by a drawing of lots) as a dashed line over its grey "
                "interval band." if baseline else ".") + "</p>")
    figures = "".join(_chart_html(drawn[f"measure_{m.column}"], _e(m.text)) for m in MEASURES)
    sections.append(("measures", "Order quality per configuration", f'{intro}<div class="charts">{figures}</div>'))
    sections.append(("figures", "All figures", (
        "<p>Estimates with their 95% interval underneath (Wilson for shares, normal for means).</p>"
        + _measures_table(table) + "<details><summary>Unrounded table</summary>"
        + table_html(table, limit=None) + "</details>")))
    sections.append(("settings", "Simulation settings", _settings_html(settings)))
    for i, parameter in enumerate(_sweep_parameters(sweep), start=1):
        part = cast(pl.DataFrame, sweep).filter(pl.col("parameter") == parameter)
        n_values = part["value"].n_unique()
        figures = "".join(_chart_html(drawn[f"sweep_{_slug(parameter)}_{c}"], _e(_MEASURE[c].text))
                          for c in SWEPT_MEASURES)
        sections.append((f"sweep-{i}", f"Sensitivity to {parameter}", (
            f"<p>The same simulation run again for {_plural(n_values, 'value')} of {_e(parameter)}, all other "
            "settings unchanged; lines join the estimates, bands are 95% intervals"
            + (", the random baseline is dashed" if BASELINE in _names(part) else "") + ".</p>"
            + f'<div class="charts">{figures}</div><details><summary>Sweep table</summary>'
            + _measures_table(part, lead=("value",)) + "</details>")))
    n_configs = len([n for n in names if n != BASELINE])
    parts = [_plural(n_configs, "configuration") + (" and the random baseline" if baseline else "")]
    if isinstance(settings.get("tournaments"), int):
        parts.append(_plural(cast(int, settings["tournaments"]), "simulated tournament"))
    parts += [f"swept over {p}" for p in _sweep_parameters(sweep)]
    return _page(title, ", ".join(parts), _simulation_headline(table, settings), sections, about)


def _simulation_headline(table: pl.DataFrame, settings: Mapping[str, object]) -> str:
    n = settings.get("tournaments")
    facts = [f"{_num(settings[k])} {label}" for k, label in (("players", "players"), ("rounds", "rounds"))
             if settings.get(k) is not None]
    facts += [_num(settings[k]) for k in ("kind", "scoring") if settings.get(k) is not None]
    if settings.get("seed") is not None:
        facts.append(f"seed {_num(settings['seed'])}")
    cards = [_card("Tournaments simulated", f"{n:,}" if isinstance(n, int) else _num(n) or "–",
                   " · ".join(facts) or "see the settings")]
    tied = _int(table["tied_groups"].max()) if table.height else 0
    shared = _int(table["shared_first_on_points"].max()) if table.height else 0
    cards.append(_card("Tied groups", f"{tied:,}", "groups of players level on points, where the tie-breaks "
                       f"decide; {_plural(shared, 'tournament')} with a shared first place"))
    cards.append(_best_card(table))
    names = _names(table)
    n_configs = len([x for x in names if x != BASELINE])
    cards.append(_card("Configurations", f"{n_configs}", "plus the random baseline (drawing of lots)"
                       if BASELINE in names else "no random baseline in this run"))
    return _cards(cards)


def _best_card(table: pl.DataFrame) -> str:
    """The configuration that most often ranks the strongest tied player first, against the baseline."""
    label = "Best configuration"
    rows = table.with_columns(pl.col("config").cast(pl.String)).filter(
        pl.col("strongest_first").is_not_nan() & pl.col("strongest_first").is_not_null())
    candidates = rows.filter(pl.col("config") != BASELINE).sort(
        ["strongest_first", "config"], descending=[True, False])
    if not candidates.height:
        return _card(label, "n/a", "only the random baseline was evaluated" if rows.height
                     else "no group tied on points to measure")
    best = candidates.row(0, named=True)
    level = candidates.filter(pl.col("strongest_first") == best["strongest_first"]).height - 1
    # the runners-up whose interval reaches the best one's: the data cannot tell them apart
    close = candidates.slice(1).filter(pl.col("strongest_first_hi95") >= best["strongest_first_lo95"]).height
    if close:
        label = "Highest configuration (not told apart)"
    detail = (f'<span class="pair">{_e(best["config"])}</span>ranks the strongest tied player first; 95% '
              f'interval {_interval(best["strongest_first_lo95"], best["strongest_first_hi95"])}')
    if level:
        detail += f" · as high in {level} other configuration{'s' if level > 1 else ''}"
    if close:
        detail += (f" · <b>the data cannot tell it from {close} other configuration{'s' if close > 1 else ''}</b> "
                   "(their 95% intervals overlap its own; simulate more tournaments to separate them)")
    base = rows.filter(pl.col("config") == BASELINE)
    if base.height:
        b = base.row(0, named=True)
        gain = 100 * (best["strongest_first"] - b["strongest_first"])
        apart = best["strongest_first_lo95"] > b["strongest_first_hi95"] or \
            best["strongest_first_hi95"] < b["strongest_first_lo95"]
        detail += (f' · <b>{gain:+.1f} points</b> over the random baseline ({_pct(b["strongest_first"])}; '
                   f'intervals {"do not overlap" if apart else "overlap"})')
    return _card(label, _pct(best["strongest_first"]), detail, raw=True)


def _estimate_cell(row: Mapping[str, Any], m: Measure) -> Cell:
    """A measure's value with its 95% interval underneath."""
    v, lo, hi = (row[f"{m.column}{s}"] for s in ("", "_lo95", "_hi95"))

    def text(x: object) -> str:
        if x is None or not math.isfinite(cast(float, x)):
            return "–"
        return f"{100 * cast(float, x):.1f}" if m.share else f"{cast(float, x):.3f}"

    value = text(v) + ("%" if m.share and text(v) != "–" else "")
    interval = "" if text(lo) == "–" else f'<span class="ci">{text(lo)}–{text(hi)}{"%" if m.share else ""}</span>'
    return "num", f"{value}{interval}"


def _measures_table(df: pl.DataFrame, *, lead: Sequence[str] = ()) -> str:
    """Every measure per configuration (and ``lead`` columns first, e.g. the swept value)."""
    head: list[Cell] = [("num", _e(c)) for c in lead] + [("", "Configuration"), ("num", "Tied groups")]
    head += [("num", _e(m.short)) for m in MEASURES] + [("num", "Shared first on points")]
    rank = {name: i for i, name in enumerate(_names(df))}
    ordered = df.with_columns(pl.col("config").cast(pl.String)).with_columns(
        pl.col("config").replace_strict(rank, return_dtype=pl.Int64).alias("_rank")).sort([*lead, "_rank"])
    rows = []
    for r in ordered.iter_rows(named=True):
        base = r["config"] == BASELINE
        name = (f'<span class="cfg">{_e(r["config"])}</span>' + (' <span class="tag">baseline</span>' if base else "")
                + f'<code class="def">{_definition(r)}</code>')
        cells: list[Cell] = [("num", _e(_num(r[c]))) for c in lead]
        cells += [("config", name), ("num", f'{_int(r["tied_groups"]):,}')]
        cells += [_estimate_cell(r, m) for m in MEASURES]
        cells.append(("num", f'{_int(r["shared_first_on_points"]):,}'))
        rows.append(_row(cells, "baseline" if base else ""))
    return _table(head, rows, cls="measures")


def _settings_html(settings: Mapping[str, object]) -> str:
    """The settings as name/value tables, side by side when there are many."""
    items = list(settings.items())
    if not items:
        return '<p class="empty">No settings were given.</p>'
    columns = 1 if len(items) <= 8 else 3
    per = -(-len(items) // columns)
    head: list[Cell] = [("", "Setting"), ("", "Value")]
    tables = []
    for start in range(0, len(items), per):
        rows = [_row([("", _e(k)), ("num", "–" if v is None else _e(_num(v)))]) for k, v in items[start:start + per]]
        tables.append(_table(head, rows, cls="settings"))
    return f'<div class="cols">{"".join(tables)}</div>'
