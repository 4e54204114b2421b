"""The charts of the compare report: winner changes per pair, disagreement matrices, tie-break depth, breakdowns."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Final

import numpy as np
import polars as pl

from tbstats.analysis.compare import Comparison, wilson
from tbstats.errors import TbstatsError
from tbstats.output import plain
from tbstats.report.charts import (
    _ACCENT,
    _EMPTY_HEIGHT,
    _PALETTE,
    LABEL_CHARS,
    Chart,
    ChartFormat,
    Plan,
    _draw,
    _figure,
    _int,
    _no_data,
    _save,
    _short,
    _slug,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: Most pairs drawn in the bar chart, most pairs drawn per breakdown chart, most numeric values per breakdown.
MAX_BARS: Final = 50
MAX_BREAKDOWN_PAIRS: Final = 6
MAX_BREAKDOWN_VALUES: Final = 12
_FEW: Final = 10             # breakdown values with fewer tournaments get hollow markers
_ORDINAL_FEATURES: Final = ("rounds", "players", "rating_band", "unplayed")
#: Features drawn as categories (bars, no line joining them, every value its own bin, missing values kept):
#: years are labels of events, not points of a continuous scale, and undated events are a category of their own.
_CATEGORICAL_FEATURES: Final = ("year", "type")
#: Legend entries wrap at this many characters (names are shown in full, never cut).
LEGEND_CHARS: Final = 34
_ORDERED_LABELS: Final = {"0%": 0, "<5%": 1, "5-15%": 2, ">=15%": 3}
_METRICS: Final = frozenset({"a", "b", "tournaments", "winner_changed", "podium_changed", "topk_changed",
                             "any_rank_changed", "mean_kendall_distance", "winner_changed_rate",
                             "winner_changed_lo95", "winner_changed_hi95"})


def _pair_label(a: str, b: str) -> str:
    return _short(f"{a} vs {b}", 2 * LABEL_CHARS)


def _ranked_pairs(comparison: Comparison) -> pl.DataFrame:
    """Pairs that ranked at least one tournament in common, highest winner-change rate first."""
    return comparison.pairs.filter(pl.col("tournaments") > 0).sort(
        ["winner_changed_rate", "winner_changed", "a", "b"], descending=[True, True, False, False])


def _pairs_chart(comparison: Comparison, title: str | None) -> Figure:
    """Horizontal bars: winner-change rate per pair with its 95% Wilson interval, highest first."""
    ranked = _ranked_pairs(comparison)
    shown = ranked.head(MAX_BARS)
    n = shown.height
    labels = [_pair_label(a, b) for a, b in zip(shown["a"], shown["b"], strict=True)]
    lines = max((label.count("\n") + 1 for label in labels), default=1)   # a row grows with its wrapped label
    row = max(0.3 if n <= 15 else 0.22, 0.17 * lines)
    fig = _figure(10, 1.3 + row * max(n, 2) if n else _EMPTY_HEIGHT)
    ax = fig.add_subplot()
    if title:
        ax.set_title(title)
    if n == 0:
        _no_data(ax, "No pair of configurations could rank a tournament in common.")
        return fig
    y = np.arange(n)
    rate = shown["winner_changed_rate"].to_numpy() * 100
    lo = shown["winner_changed_lo95"].to_numpy() * 100
    hi = shown["winner_changed_hi95"].to_numpy() * 100
    ax.barh(y, rate, height=0.62, color=_ACCENT, alpha=0.85)
    ax.errorbar(rate, y, xerr=np.vstack([rate - lo, hi - rate]), fmt="none", ecolor="#2b2f36", elinewidth=1,
                capsize=2.5)
    top = float(hi.max())
    room = max(top, 1.0) * 0.34
    for yi, r, h, k, t in zip(y, rate, hi, shown["winner_changed"], shown["tournaments"], strict=True):
        ax.text(float(h + room * 0.04), float(yi), f"{r:.1f}%  ({k}/{t})", va="center", fontsize=8, color="#2b2f36")
    ax.set_xlim(0, top + room)
    ticks = [t for t in ax.get_xticks() if 0 <= t <= min(100.0, top)] or [0.0]
    ax.set_xticks(ticks, labels=[f"{t:g}%" for t in ticks])
    ax.set_yticks(y, labels=labels)
    ax.set_ylim(n - 0.5, -0.5)
    ax.xaxis.grid(True)
    ax.spines["left"].set_visible(False)
    ax.tick_params(axis="y", length=0)
    note = f" (the {n} highest of {ranked.height} pairs)" if ranked.height > n else ""
    ax.set_xlabel(f"tournaments whose winner changed, with 95% interval{note}")
    return fig


def _matrices(comparison: Comparison) -> tuple[list[str], np.ndarray, np.ndarray]:
    names = [str(x) for x in comparison.configs["config"].to_list()]
    where = {name: i for i, name in enumerate(names)}
    k = len(names)
    rate = np.full((k, k), np.nan)
    kendall = np.full((k, k), np.nan)
    for row in comparison.pairs.iter_rows(named=True):
        if not row["tournaments"] or row["a"] not in where or row["b"] not in where:
            continue
        i, j = where[row["a"]], where[row["b"]]
        rate[i, j] = rate[j, i] = 100 * row["winner_changed_rate"]
        kendall[i, j] = kendall[j, i] = row["mean_kendall_distance"]
    return names, rate, kendall


def _heatmap_chart(comparison: Comparison, title: str | None) -> Figure:
    """Two symmetric matrices of pairwise disagreement: winner-change rate and mean Kendall distance."""
    import matplotlib

    names, rate, kendall = _matrices(comparison)
    k = len(names)
    stacked = k > 12
    cell = 0.5 if k <= 6 else 0.34 if k <= 12 else 0.3
    square = max(1.6, cell * k)                   # the matrix itself, in inches
    margin = min(0.08 * max((len(x) for x in names), default=4), 1.15) + 0.25   # the (cut) tick labels
    panel_w, panel_h = square + margin + 0.9, square + margin + 0.45   # + colour bar; + title
    if stacked:
        fig = _figure(panel_w, 2 * panel_h)
    else:
        fig = _figure(2 * panel_w, panel_h)
    axes = fig.subplots(2, 1) if stacked else fig.subplots(1, 2)
    if title:
        fig.suptitle(title, x=0.01, ha="left", fontweight="bold", fontsize=10)
    def percent(v: float) -> str:
        return f"{v:.0f}" if k > 6 else f"{v:.1f}"

    def distance(v: float) -> str:
        return f"{v:.3f}"[1:] if 0 <= v < 1 else f"{v:.2f}"

    # fixed scales from 0 to the largest possible value (100%, a distance of 1): 0.001 must not look like a
    # disagreement because it is the largest one on the page
    panels = ((rate, "winner changed (%)", "YlOrRd", percent, 100.0),
              (kendall, "mean Kendall distance", "PuBu", distance, 1.0))
    labels = [_short(n, 14) for n in names]
    for ax, (matrix, label, cmap_name, fmt, vmax) in zip(np.ravel(axes), panels, strict=True):
        cmap = matplotlib.colormaps[cmap_name].with_extremes(bad="#eef0f3")
        shown = matrix.copy()
        np.fill_diagonal(shown, np.nan)
        image = ax.imshow(np.ma.masked_invalid(shown), cmap=cmap, vmin=0, vmax=vmax)
        ax.set_title(label)
        ax.set_xticks(range(k), labels=labels, rotation=45, ha="right", rotation_mode="anchor")
        ax.set_yticks(range(k), labels=labels)
        ax.tick_params(length=0)
        for spine in ax.spines.values():
            spine.set_visible(False)
        ax.set_xticks(np.arange(k + 1) - 0.5, minor=True)
        ax.set_yticks(np.arange(k + 1) - 0.5, minor=True)
        ax.grid(which="minor", color="white", linewidth=1.5)
        ax.tick_params(which="minor", length=0)
        if k <= 16:
            size = 8 if k <= 6 else 6.5
            for i in range(k):
                for j in range(k):
                    v = shown[i, j]
                    if i == j:
                        continue
                    if not math.isfinite(v):
                        ax.text(j, i, "n/a", ha="center", va="center", fontsize=size, color="#8a929c")
                        continue
                    dark = v / vmax > 0.6
                    ax.text(j, i, fmt(float(v)), ha="center", va="center", fontsize=size,
                            color="white" if dark else "#1d2430")
        fig.colorbar(image, ax=ax, shrink=0.75, pad=0.02)
    return fig


def _depth_chart(comparison: Comparison, title: str | None) -> Figure:
    """Stacked bars per configuration: at which list position the tie for first place was settled."""
    import matplotlib
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    names = [str(x) for x in comparison.configs["config"].to_list()]
    depth = comparison.depth
    k = len(names)
    totals = depth.group_by("config").agg(pl.col("settled_here").sum())
    widest = _int(totals["settled_here"].max()) if totals.height else 0
    fig = _figure(10, 1.5 + 0.42 * max(k, 2) if widest else _EMPTY_HEIGHT)
    ax = fig.add_subplot()
    if title:
        ax.set_title(title)
    if widest == 0:
        _no_data(ax, "No tournament had a shared first place on points under any configuration.")
        return fig
    positions = _int(depth.filter(pl.col("tiebreak") != "(not settled)")["depth"].max()) or 1
    blues = matplotlib.colormaps["Blues"]
    colours = [blues(0.85 - 0.6 * i / max(positions - 1, 1)) for i in range(positions)]
    used: dict[int, str] = {}
    for i, name in enumerate(names):
        left = 0
        for row in depth.filter(pl.col("config") == name).sort("depth").iter_rows(named=True):
            width = int(row["settled_here"])
            if width == 0:
                continue
            unsettled = row["tiebreak"] == "(not settled)"
            pos = 0 if unsettled else int(row["depth"])
            colour = "#c9ced6" if unsettled else colours[min(pos, positions) - 1]
            used[pos] = ""
            ax.barh(i, width, left=left, height=0.62, color=colour, edgecolor="white", linewidth=1,
                    hatch="///" if unsettled else None)
            if width / widest >= 0.07:
                text = f"{_short(row['tiebreak'], 10)} {width}" if not unsettled else f"{width}"
                light = not unsettled and pos <= max(1, positions // 2)
                ax.text(left + width / 2, i, text, ha="center", va="center", fontsize=7.5,
                        color="white" if light else "#1d2430")
            left += width
    ax.set_yticks(range(k), labels=[_short(n) for n in names])
    ax.set_ylim(k - 0.5, -0.5)
    ax.tick_params(axis="y", length=0)
    ax.spines["left"].set_visible(False)
    ax.xaxis.grid(True)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("tournaments with a shared first place on points")
    handles = [Patch(facecolor=colours[p - 1], label=f"{_ordinal(p)} tie-break") for p in sorted(used) if p > 0]
    if 0 in used:
        handles.append(Patch(facecolor="#c9ced6", hatch="///", edgecolor="white", label="not settled"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="settled by")
    return fig


def _ordinal(n: int) -> str:
    """English ordinal.

    >>> [_ordinal(i) for i in (1, 2, 3, 4, 11, 12, 13, 21, 22)]
    ['1st', '2nd', '3rd', '4th', '11th', '12th', '13th', '21st', '22nd']
    """
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _feature_column(feature: str, table: pl.DataFrame) -> str:
    if feature in table.columns:
        return feature
    others = [c for c in table.columns if c not in _METRICS]
    if len(others) == 1:
        return others[0]
    raise TbstatsError(f"breakdown {feature!r}: cannot tell which column is the feature "
                       f"(columns: {', '.join(table.columns)}). Hint: name it after the feature, e.g. "
                       "{'rounds': breakdown(comparison, 'rounds')}")


def _value_key(value: object) -> tuple[int, float, str]:
    if value is None:
        return (2, 0.0, "")
    if isinstance(value, int | float) and not isinstance(value, bool):
        return (0, float(value), "")
    text = str(value)
    if text in _ORDERED_LABELS:
        return (0, float(_ORDERED_LABELS[text]), "")
    try:
        return (0, float(text), "")
    except ValueError:
        return (1, 0.0, text)


def _grouped(table: pl.DataFrame, column: str) -> tuple[pl.DataFrame, list[str], list[int]]:
    """The breakdown with a ``_label`` column, its labels in order and tournaments per label.

    Numeric features with more than MAX_BREAKDOWN_VALUES values are cut into bins of about equal
    tournament counts; the rates and intervals of a bin are recomputed from its counts.
    """
    values = table[column]
    distinct = values.unique().to_list()
    if values.dtype.is_numeric() and len(distinct) > MAX_BREAKDOWN_VALUES and column not in _CATEGORICAL_FEATURES:
        per_value = table.group_by(column).agg(pl.col("tournaments").max()).drop_nulls(column).sort(column)
        v = per_value[column].to_numpy().astype(float)
        w = per_value["tournaments"].to_numpy().astype(float)
        cum = np.cumsum(w) / max(w.sum(), 1)
        bins = np.minimum((cum * MAX_BREAKDOWN_VALUES - 1e-9).astype(int), MAX_BREAKDOWN_VALUES - 1)
        bins = np.unique(bins, return_inverse=True)[1]
        lows = {b: v[bins == b].min() for b in np.unique(bins)}
        highs = {b: v[bins == b].max() for b in np.unique(bins)}
        labels = {b: plain(lows[b]).removesuffix(".0") + ("" if lows[b] == highs[b] else
                                                            "–" + plain(highs[b]).removesuffix(".0"))
                  for b in lows}
        mapping = pl.DataFrame({column: per_value[column], "_label": [labels[b] for b in bins],
                                "_order": bins.astype(np.int64)})
        binned = table.join(mapping, on=column, how="inner").group_by("a", "b", "_label", "_order").agg(
            pl.col("tournaments").sum(), pl.col("winner_changed").sum())
        lo, hi = wilson(binned["winner_changed"].to_numpy(), binned["tournaments"].to_numpy())
        grouped = binned.with_columns(
            (pl.col("winner_changed") / pl.col("tournaments")).alias("winner_changed_rate"),
            pl.Series("winner_changed_lo95", lo), pl.Series("winner_changed_hi95", hi)).sort("_order")
        order = [labels[b] for b in sorted(lows)]
    else:
        order_values = sorted(distinct, key=_value_key)
        missing = "(undated)" if column == "year" else "(none)"
        order = [missing if x is None else str(x) for x in order_values]
        grouped = table.with_columns(pl.col(column).cast(pl.String).fill_null(missing).alias("_label"))
    counts = grouped.group_by("_label").agg(pl.col("tournaments").max())
    count_of = dict(zip(counts["_label"].to_list(), counts["tournaments"].to_list(), strict=True))
    return grouped, order, [int(count_of.get(x, 0)) for x in order]


def _breakdown_chart(comparison: Comparison, feature: str, table: pl.DataFrame, title: str | None) -> Figure:
    """Winner-change rate by feature value: lines (ordered features) or grouped bars, one per pair."""
    column = _feature_column(feature, table)
    single = table[column].n_unique() <= 1
    fig = _figure(10, _EMPTY_HEIGHT if table.is_empty() else 2.8 if single else 3.9)
    ax = fig.add_subplot()
    if title:
        ax.set_title(title)
    if table.is_empty():
        _no_data(ax, f"No tournaments to break down by {feature}.")
        return fig
    grouped, order, counts = _grouped(table, column)
    present = set(zip(grouped["a"].to_list(), grouped["b"].to_list(), strict=True))
    ranked = [(a, b) for a, b in _ranked_pairs(comparison).select("a", "b").iter_rows() if (a, b) in present]
    ranked += sorted(present - set(ranked))
    shown = ranked[:MAX_BREAKDOWN_PAIRS]
    x = np.arange(len(order))
    where = {label: i for i, label in enumerate(order)}
    ordinal = (column in _ORDINAL_FEATURES or table[column].dtype.is_numeric()) and len(order) >= 3 \
        and column not in _CATEGORICAL_FEATURES
    width = 0.8 / max(len(shown), 1)
    for n, (a, b) in enumerate(shown):
        rows = grouped.filter((pl.col("a") == a) & (pl.col("b") == b))
        xs = np.array([where[label] for label in rows["_label"].to_list()], dtype=float)
        sort = np.argsort(xs)
        xs = xs[sort]
        rate = rows["winner_changed_rate"].to_numpy()[sort] * 100
        lo = rows["winner_changed_lo95"].to_numpy()[sort] * 100
        hi = rows["winner_changed_hi95"].to_numpy()[sort] * 100
        colour = _PALETTE[n % len(_PALETTE)]
        label = "\n".join(textwrap.wrap(f"{a} vs {b}", LEGEND_CHARS, break_on_hyphens=False)) or f"{a} vs {b}"
        if ordinal:
            few = np.array([counts[int(i)] < _FEW for i in xs], dtype=bool)
            xs = xs + (n - (len(shown) - 1) / 2) * min(0.06, 0.4 / len(shown))   # dodge the whiskers
            ax.errorbar(xs, rate, yerr=np.vstack([rate - lo, hi - rate]), fmt="none", ecolor=colour,
                        elinewidth=0.9, alpha=0.45)
            ax.plot(xs, rate, marker="o", markersize=4, linewidth=1.6, color=colour, label=label)
            ax.plot(xs[few], rate[few], linestyle="none", marker="o", markersize=6, markerfacecolor="white",
                    markeredgecolor=colour, markeredgewidth=1.4)
        else:
            pos = xs - 0.4 + width * (n + 0.5)
            ax.bar(pos, rate, width=width * 0.92, color=colour, label=label)
            ax.errorbar(pos, rate, yerr=np.vstack([rate - lo, hi - rate]), fmt="none", ecolor="#2b2f36",
                        elinewidth=0.8, capsize=2 if len(shown) <= 4 else 0)
    ax.set_xticks(x, labels=[f"{_short(label, 12)}\nn={c}" for label, c in zip(order, counts, strict=True)])
    if len(order) > 8:
        ax.tick_params(axis="x", labelsize=7.5)
    ax.set_xlim(-0.6, len(order) - 0.4)
    ax.set_ylim(bottom=0)
    ax.yaxis.grid(True)
    ax.yaxis.set_major_formatter("{x:g}%")
    ax.set_ylabel("winner changed")
    hollow = ordinal and any(c < _FEW for c in counts)
    notes = ["whiskers: 95% interval", f"hollow: fewer than {_FEW} tournaments" if hollow else ""]
    bands = "; ".join(x for x in notes if x)
    bands = f" ({bands})" if bands else ""
    ax.set_xlabel(f"{feature}{bands}")
    legend_title = "pair" if len(ranked) <= len(shown) else f"top {len(shown)} of {len(ranked)} pairs"
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), title=legend_title)
    return fig


def _chart_list(comparison: Comparison, breakdowns: Mapping[str, pl.DataFrame] | None, fmt: ChartFormat,
                *, titled: bool) -> list[Chart]:
    """Draw and encode every chart (pairs, disagreement, depth, one per breakdown)."""
    plans: list[Plan] = [
        ("winner_change_by_pair", "Winner-change rate per pair of configurations",
         lambda t: _pairs_chart(comparison, t)),
        ("disagreement", "Disagreement between configurations",
         lambda t: _heatmap_chart(comparison, t)),
        ("tiebreak_depth", "Where the tie for first place was settled",
         lambda t: _depth_chart(comparison, t)),
    ]
    for feature, table in (breakdowns or {}).items():
        plans.append((f"breakdown_{_slug(feature)}", f"Winner-change rate by {feature}",
                      partial(_breakdown_chart, comparison, feature, table)))
    return _draw(plans, fmt, titled=titled)


def write_charts(comparison: Comparison, directory: str | Path, *, fmt: ChartFormat,
                 breakdowns: Mapping[str, pl.DataFrame] | None = None) -> list[Path]:
    """Write each chart of the report to ``directory`` as ``NAME.svg`` or ``NAME.png``; return the paths.

    Charts: ``winner_change_by_pair``, ``disagreement``, ``tiebreak_depth`` and ``breakdown_FEATURE`` for
    each entry of ``breakdowns`` (feature name -> :func:`tbstats.analysis.compare.breakdown` table).
    """
    return _save(_chart_list(comparison, breakdowns, fmt, titled=True), directory)
