"""The compare page: how often configurations disagree on real tournaments."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

import polars as pl

from tbstats.analysis.compare import Comparison
from tbstats.report.charts import ChartFormat, _int, _slug
from tbstats.report.compare_charts import _chart_list, _ranked_pairs
from tbstats.report.frame import About, _page
from tbstats.report.page import (
    Section,
    _card,
    _cards,
    _chart_html,
    _definition,
    _e,
    _interval,
    _num,
    _path,
    _pct,
    _plural,
    _row,
    _table,
    table_html,
)

_DRILL_FIXED: Final = frozenset({"a", "b", "source", "tournament", "start_no", "name", "points", "rank_a",
                                 "rank_b", "explain"})


def _headline(comparison: Comparison) -> str:
    pairs, configs = comparison.pairs, comparison.configs
    t = comparison.tournaments
    n_tournaments = t["tournament"].n_unique() if t.height else _int(configs["tournaments"].max())
    cards = [_card("Tournaments compared", f"{n_tournaments:,}", _computable_note(comparison)),
             _card("Configurations", f"{configs.height}", _plural(pairs.height, "pair") + " compared")]
    ranked = _ranked_pairs(comparison)
    if ranked.height:
        top = ranked.row(0, named=True)
        level = ranked.filter(pl.col("winner_changed_rate") == top["winner_changed_rate"]).height - 1
        also = f" · as high in {level} other pair{'s' if level > 1 else ''}" if level else ""
        cards.append(_card(
            "Highest winner-change rate", _pct(top["winner_changed_rate"]),
            f'<span class="pair">{_e(top["a"])} <span class="vs">vs</span> {_e(top["b"])}</span>'
            f'{top["winner_changed"]:,} of {top["tournaments"]:,} tournaments · 95% interval '
            f'{_interval(top["winner_changed_lo95"], top["winner_changed_hi95"])}{also}', raw=True))
    else:
        cards.append(_card("Highest winner-change rate", "n/a", "no pair ranked a tournament in common"))
    usable = configs.filter(pl.col("tournaments") > 0)
    if usable.height:
        rates = usable["tiebreaks_needed_rate"].to_list()
        lo_rate, hi_rate = min(rates), max(rates)
        best = usable.sort("tiebreaks_needed_rate", descending=True).row(0, named=True)
        value = _pct(lo_rate) if lo_rate == hi_rate else f"{_pct(lo_rate)}–{_pct(hi_rate)}"
        detail = (f"{best['tiebreaks_needed_at_top']:,} of {best['tournaments']:,} tournaments had a shared "
                  "first place on points" + ("" if lo_rate == hi_rate else " (most, over the configurations)"))
        cards.append(_card("Tie-breaks needed at the top", value, detail))
    if t.height:
        changed = t.filter("computable").group_by("tournament").agg(pl.col("winner_changed").any())
        k = int(changed["winner_changed"].sum())
        share = f"{_pct(k / changed.height)} of " if changed.height else ""
        cards.append(_card("Winner changed under some pair", f"{k:,}",
                           f"{share}{_plural(changed.height, 'tournament')} ranked by both sides of a pair"))
    return _cards(cards)


def _computable_note(comparison: Comparison) -> str:
    missing = comparison.configs.filter(pl.col("not_computable") > 0)
    if not missing.height:
        return "every configuration ranked every tournament"
    names = ", ".join(str(x) for x in missing["config"].to_list())
    return f"some configurations could not rank every tournament: {names}"


def _pairs_table(comparison: Comparison) -> pl.DataFrame:
    p = comparison.pairs
    if p.is_empty():
        return p
    return p.sort(["winner_changed_rate", "a", "b"], descending=[True, False, False]).select(
        pl.col("a").alias("A"), pl.col("b").alias("B"), "tournaments", "winner_changed",
        pl.format("{}%", (pl.col("winner_changed_rate") * 100).round(1)).alias("rate"),
        pl.format("{}–{}%", (pl.col("winner_changed_lo95") * 100).round(1),
                  (pl.col("winner_changed_hi95") * 100).round(1)).alias("95% interval"),
        "podium_changed", "topk_changed", "any_rank_changed", pl.col("mean_kendall_distance").round(4),
        "shared_first_a", "shared_first_b")


def _configs_table(comparison: Comparison) -> str:
    rows = []
    for r in comparison.configs.iter_rows(named=True):
        needed = r["tiebreaks_needed_at_top"]
        share = _pct(r["tiebreaks_needed_rate"]) if r["tournaments"] else "–"
        bar = max(0.0, min(100.0, 100 * float(r["tiebreaks_needed_rate"] or 0)))
        rows.append(_row([
            ("cfg", _e(r["config"])), ("", f"<code>{_definition(r)}</code>"), ("num", f'{r["tournaments"]:,}'),
            ("num", f'{needed:,} <span class="muted">({share})</span>'
                    f'<span class="meter"><span style="width:{bar:.1f}%"></span></span>'),
            ("num", f'{r["settled"]:,}'), ("num", f'{r["not_settled"]:,}'), ("num", f'{r["not_computable"]:,}')]))
    head = [("", "Configuration"), ("", "Definition"), ("num", "Tournaments"), ("num", "Shared first on points"),
            ("num", "Settled"), ("num", "Not settled"), ("num", "Not computable")]
    return _table(head, rows)


def _drilldown_html(comparison: Comparison, limit: int) -> str:
    d = comparison.drilldown
    if d.is_empty() or "a" not in d.columns:
        return '<p class="empty">No tournament changed its winner between any pair of configurations.</p>'
    d = d.with_columns(pl.struct("a", "b", "tournament").rle_id().alias("_group"))
    groups = _int(d["_group"].max()) + 1
    values = [c for c in d.columns if c not in _DRILL_FIXED and c != "_group"]
    shown = d.filter(pl.col("_group") < limit)
    short_of = _short_sources([str(x or "") for x in shown["source"].unique(maintain_order=True).to_list()])
    body = []
    for part in shown.partition_by("_group", maintain_order=True):
        part = part.sort("rank_a", "rank_b", "start_no")
        first = part.row(0, named=True)
        a, b = str(first["a"]), str(first["b"])
        source = str(first["source"] or "")
        short = short_of.get(source, source)
        for i, row in enumerate(part.iter_rows(named=True)):
            cells = []
            if i == 0:
                span = 2 * part.height
                cells.append(f'<td rowspan="{span}" class="pair"><span class="cfg">{_e(a)}</span> '
                             f'<span class="vs">vs</span> <span class="cfg">{_e(b)}</span></td>')
                cells.append(f'<td rowspan="{span}" class="src path" title="{_e(source)}">{_path(short)}</td>')
            cells.append(f'<td class="player">{_e(row["name"])} <span class="muted">#{_e(row["start_no"])}</span></td>')
            cells.append(f'<td class="num">{_e(_num(row["points"]))}</td>')
            for rank in (row["rank_a"], row["rank_b"]):
                cls = "num first" if rank == 1 else "num"
                cells.append(f'<td class="{cls}">{_e(rank)}</td>')
            cells.append(f'<td class="values">{_deciding(row, values, a, b)}</td>')
            body.append(f'<tr class="{"player group" if i == 0 else "player"}">{"".join(cells)}</tr>')
            body.append(f'<tr class="cmd"><td colspan="5"><code>{_e(row["explain"])}</code></td></tr>')
    note = ""
    if groups > limit:
        note = (f'<p class="note">Showing the first {limit} of {groups:,} (pair, tournament) cases; '
                "the full table is <code>Comparison.drilldown</code>.</p>")
    return (f'<p class="note">{groups:,} (pair, tournament) case{"s" if groups != 1 else ""}; rank 1 in '
            'bold.</p>'
            '<div class="scroll"><table class="drill"><thead><tr><th>Pair (A vs B)</th><th>Source</th>'
            '<th>Player</th><th class="num">Points</th><th class="num">Rank A</th><th class="num">Rank B</th>'
            f'<th>Deciding values</th></tr></thead><tbody>{"".join(body)}</tbody></table></div>{note}')


def _short_sources(sources: Sequence[str]) -> dict[str, str]:
    """Sources without the folders they all share (the full path stays in the cell's tooltip).

    >>> _short_sources(["/data/2019/open.trf", "/data/2020/open.trf"])
    {'/data/2019/open.trf': '2019/open.trf', '/data/2020/open.trf': '2020/open.trf'}
    >>> _short_sources(["/data/a.trf"])
    {'/data/a.trf': 'a.trf'}
    """
    parts = [s.replace("\\", "/").split("/") for s in sources]
    common = 0
    if parts:
        shortest = min(len(p) for p in parts) - 1      # keep at least the file name
        while common < shortest and all(p[common] == parts[0][common] for p in parts):
            common += 1
    return {s: "/".join(p[common:]) or s for s, p in zip(sources, parts, strict=True)}


def _deciding(row: Mapping[str, Any], columns: Sequence[str], a: str, b: str) -> str:
    lines = []
    for name in (a, b):
        parts = []
        for col in columns:
            if col.startswith(f"{name}:"):
                v = row.get(col)
                text = "–" if v is None or (isinstance(v, float) and math.isnan(v)) else _num(v)
                parts.append(f"{_e(col[len(name) + 1:])} <b>{_e(text)}</b>")
        if parts:
            lines.append(f'<span class="cfg">{_e(name)}</span> ' + ", ".join(parts))
    return "<br>".join(lines) or '<span class="muted">points only</span>'


def render_html(comparison: Comparison, *, title: str, breakdowns: Mapping[str, pl.DataFrame] | None = None,
                extra_tables: Mapping[str, pl.DataFrame] | None = None, charts: ChartFormat = "svg",
                drilldown_limit: int = 200, about: About | None = None) -> str:
    """One self-contained HTML page for a comparison: headline figures, charts, tables and the drill-down.

    ``about`` (the command line, the inputs and their counts) goes into the page's provenance section.

    ``breakdowns`` maps a feature name to its :func:`tbstats.analysis.compare.breakdown` table (one chart each);
    ``extra_tables`` are shown as tables under their names; ``charts`` chooses inline SVG or PNG data URIs.
    The drill-down lists at most ``drilldown_limit`` (pair, tournament) cases. Nothing on the page refers
    to another file or address, all data text is escaped, and equal inputs give identical pages.
    """
    drawn = {c.name: c for c in _chart_list(comparison, breakdowns, charts, titled=False)}
    n_configs, n_pairs = comparison.configs.height, comparison.pairs.height
    n_tournaments = comparison.tournaments["tournament"].n_unique() if comparison.tournaments.height else 0
    sections: list[Section] = []

    sections.append(("pairs", "Winner changes per pair", (
        "<p>Share of tournaments whose winner (the set of players ranked first) differs between the two "
        "configurations of a pair, with a 95% Wilson interval. Pairs are sorted by rate.</p>"
        + _chart_html(drawn["winner_change_by_pair"],
                      "Bars: winner-change rate; whiskers: 95% interval; label: changed / compared tournaments.")
        + "<details><summary>All figures per pair</summary>" + table_html(_pairs_table(comparison), limit=None)
        + "</details>")))
    sections.append(("disagreement", "How much the configurations disagree", (
        "<p>Left: winner-change rate (%) for each pair. Right: mean normalised Kendall distance between the "
        "full rankings (0 = same order, 1 = reversed). Grey cells: the pair had no tournament in common.</p>"
        + _chart_html(drawn["disagreement"], "Symmetric matrices; rows and columns in configuration order."))))
    if breakdowns:
        parts = ["<p>Winner-change rate by tournament feature; n is the number of tournaments per value.</p>"]
        for feature, table in breakdowns.items():
            chart = drawn[f"breakdown_{_slug(feature)}"]
            parts.append(f"<h3>By {_e(feature)}</h3>" + _chart_html(chart, f"Winner-change rate by {_e(feature)}.")
                         + f"<details><summary>Table by {_e(feature)}</summary>{table_html(table)}</details>")
        sections.append(("breakdowns", "Breakdowns", "".join(parts)))
    sections.append(("configs", "Ties at the top, per configuration", (
        "<p>How often first place was shared on points, and whether the configuration's tie-break list "
        "separated the leaders.</p>" + _configs_table(comparison)
        + _chart_html(drawn["tiebreak_depth"],
                      "Each bar splits the tournaments with a shared first place by the list position of the "
                      "tie-break that settled it; hatched: still shared after the whole list.")
        + "<details><summary>Depth table</summary>" + table_html(comparison.depth, limit=None) + "</details>")))
    sections.append(("drilldown", "Tournaments whose winner changed", (
        "<p>Players ranked first under either configuration of a pair, with their tie-break values; under "
        "each player, the command that shows how the first tie-break of configuration A was computed.</p>"
        + _drilldown_html(comparison, drilldown_limit))))
    for i, (name, table) in enumerate((extra_tables or {}).items(), start=1):
        sections.append((f"extra-{i}", name, table_html(table)))

    subtitle = ", ".join((_plural(n_configs, "configuration"), _plural(n_pairs, "pair"),
                          _plural(n_tournaments, "tournament")))
    return _page(title, subtitle, _headline(comparison), sections, about)
