"""Reports: one self-contained HTML page with charts, and the same charts as separate files.

Two pages share one skeleton (header, headline cards, navigation, sections), one table layout and one way
of drawing and embedding charts: :func:`render_html` for ``tbstats compare`` (how often configurations
disagree on real tournaments) and :func:`render_simulation_html` for ``tbstats simulate`` (how well each
configuration recovers true strength on simulated tournaments, against a random baseline).

The page needs nothing but itself: the style sheet is inline, charts are inline SVG (or PNG data URIs),
there is no script and no font or image is fetched. Every text that comes from data (player names,
sources, configuration names, table cells) is HTML-escaped.

Charts are drawn with matplotlib (the optional extra ``plots``): it is well kept, works offline and
writes static SVG and PNG that embed in one file without a JavaScript runtime. It is imported only when
a chart is drawn, through the Agg canvas and without pyplot, so importing this module stays light and no
global plotting state changes. Output is deterministic: two renders of the same comparison are
byte-identical (no dates in SVG metadata, fixed SVG id salts, no timestamps).
"""

from __future__ import annotations

import base64
import html
import io
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, cast

import numpy as np
import polars as pl

from tbstats import __version__
from tbstats.compare import Comparison, wilson
from tbstats.errors import TbstatsError
from tbstats.output import plain

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

ChartFormat = Literal["png", "svg"]
CHART_FORMATS: Final = ("png", "svg")

#: Most pairs drawn in the bar chart, most pairs drawn per breakdown chart, most numeric values per breakdown.
MAX_BARS: Final = 50
MAX_BREAKDOWN_PAIRS: Final = 6
MAX_BREAKDOWN_VALUES: Final = 12
#: Label lengths in charts (longer names end with an ellipsis; the tables show them in full).
LABEL_CHARS: Final = 18

_PNG_DPI: Final = 192          # twice the CSS pixel density, so PNG charts stay sharp on dense screens
_CSS_DPI: Final = 96
_ACCENT: Final = "#2f6db5"
_PALETTE: Final = ("#2f6db5", "#e07b39", "#3a9d5d", "#c2405a", "#8a63b8", "#8c6d46", "#d16fb0", "#6b7785",
                   "#b5a22c", "#2aa1b3")
_EMPTY_HEIGHT: Final = 1.1     # inches: a chart that only says there is nothing to draw
_FEW: Final = 10             # breakdown values with fewer tournaments get hollow markers
_ORDINAL_FEATURES: Final = ("rounds", "players", "year", "rating_band", "unplayed")
_ORDERED_LABELS: Final = {"0%": 0, "<5%": 1, "5-15%": 2, ">=15%": 3}
_METRICS: Final = frozenset({"a", "b", "tournaments", "winner_changed", "podium_changed", "topk_changed",
                             "any_rank_changed", "mean_kendall_distance", "winner_changed_rate",
                             "winner_changed_lo95", "winner_changed_hi95"})
_DRILL_FIXED: Final = frozenset({"a", "b", "source", "tournament", "start_no", "name", "points", "rank_a",
                                 "rank_b", "explain"})
_RC: Final[dict[Any, Any]] = {
    "svg.fonttype": "path",        # glyphs as paths: the chart looks the same without any font installed
    "text.parse_math": False,      # a '$' in a configuration name is text, not mathtext
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans"],
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.titleweight": "bold",
    "axes.titlelocation": "left",
    "axes.labelsize": 9,
    "axes.labelcolor": "#333333",
    "axes.edgecolor": "#9aa3ad",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.axisbelow": True,
    "grid.color": "#e6e9ed",
    "grid.linewidth": 0.8,
    "xtick.color": "#4a525c",
    "ytick.color": "#4a525c",
    "legend.frameon": False,
    "legend.fontsize": 8,
    "figure.facecolor": "white",
    "savefig.facecolor": "white",
}


# ------------------------------------------------------------------------------------------------ charts

@dataclass(frozen=True)
class Chart:
    """One drawn chart: file stem, heading, and the encoded image (SVG text or PNG bytes)."""

    name: str
    title: str
    fmt: ChartFormat
    data: bytes


def _require_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise TbstatsError("charts need matplotlib, which is not installed. "
                           "Hint: pip install 'tbstats[plots]'") from exc


@contextmanager
def _style() -> Iterator[None]:
    import matplotlib

    with matplotlib.rc_context(_RC):
        yield


def _figure(width: float, height: float) -> Figure:
    """A figure on the non-interactive Agg canvas (no pyplot, no global state)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _encode(fig: Figure, fmt: ChartFormat, salt: str) -> bytes:
    import matplotlib

    buf = io.BytesIO()
    if fmt == "svg":
        with matplotlib.rc_context({"svg.hashsalt": f"tbstats-{salt}"}):
            fig.savefig(buf, format="svg", metadata={"Date": None})
    else:
        fig.savefig(buf, format="png", dpi=_PNG_DPI, metadata={"Software": None})
    return buf.getvalue()


def _short(text: object, limit: int = LABEL_CHARS) -> str:
    """A label cut to ``limit`` characters with an ellipsis.

    >>> _short("fide-2026-with-a-long-name", 10), _short("bh", 10)
    ('fide-2026…', 'bh')
    """
    s = str(text)
    return s if len(s) <= limit else s[:limit - 1] + "…"


def _pair_label(a: str, b: str) -> str:
    return f"{_short(a, LABEL_CHARS)} vs {_short(b, LABEL_CHARS)}"


def _no_data(ax: Axes, message: str) -> None:
    ax.set_axis_off()
    ax.text(0.5, 0.5, message, ha="center", va="center", color="#6b7785", transform=ax.transAxes)


def _ranked_pairs(comparison: Comparison) -> pl.DataFrame:
    """Pairs that ranked at least one tournament in common, highest winner-change rate first."""
    return comparison.pairs.filter(pl.col("tournaments") > 0).sort(
        ["winner_changed_rate", "winner_changed", "a", "b"], descending=[True, True, False, False])


def _pairs_chart(comparison: Comparison, title: str | None) -> Figure:
    """Horizontal bars: winner-change rate per pair with its 95% Wilson interval, highest first."""
    ranked = _ranked_pairs(comparison)
    shown = ranked.head(MAX_BARS)
    n = shown.height
    fig = _figure(10, 1.3 + (0.3 if n <= 15 else 0.22) * max(n, 2) if n else _EMPTY_HEIGHT)
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
    ax.set_yticks(y, labels=[_pair_label(a, b) for a, b in zip(shown["a"], shown["b"], strict=True)])
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

    panels = ((rate, "winner changed (%)", "YlOrRd", percent), (kendall, "mean Kendall distance", "PuBu", distance))
    labels = [_short(n, 14) for n in names]
    for ax, (matrix, label, cmap_name, fmt) in zip(np.ravel(axes), panels, strict=True):
        cmap = matplotlib.colormaps[cmap_name].with_extremes(bad="#eef0f3")
        finite = matrix[np.isfinite(matrix)]
        vmax = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
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
    if values.dtype.is_numeric() and len(distinct) > MAX_BREAKDOWN_VALUES:
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
        order = ["(none)" if x is None else str(x) for x in order_values]
        grouped = table.with_columns(pl.col(column).cast(pl.String).fill_null("(none)").alias("_label"))
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
    ordinal = (column in _ORDINAL_FEATURES or table[column].dtype.is_numeric()) and len(order) >= 3
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
        label = _pair_label(a, b)
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


#: A chart to draw: file stem, heading, and a function that draws it (given the title to put on it, or None).
Plan: TypeAlias = tuple[str, str, "Callable[[str | None], Figure]"]


def _draw(plans: Sequence[Plan], fmt: ChartFormat, *, titled: bool) -> list[Chart]:
    """Draw and encode the planned charts, in order; ``titled`` puts each heading on its chart."""
    if fmt not in CHART_FORMATS:
        raise TbstatsError(f"unknown chart format {fmt!r} (expected one of {', '.join(CHART_FORMATS)})")
    _require_matplotlib()
    charts = []
    with _style():
        for name, title, draw in plans:
            fig = draw(title if titled else None)
            charts.append(Chart(name, title, fmt, _encode(fig, fmt, name)))
    return charts


def _save(charts: Sequence[Chart], directory: str | Path) -> list[Path]:
    """Write each chart to ``directory`` as ``NAME.svg`` or ``NAME.png``; return the paths."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for chart in charts:
        path = out / f"{chart.name}.{chart.fmt}"
        path.write_bytes(chart.data)
        paths.append(path)
    return paths


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


def _slug(text: str) -> str:
    """A file-name-safe form of a feature name.

    >>> _slug("rating band/2")
    'rating_band_2'
    """
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_.") or "feature"


def write_charts(comparison: Comparison, directory: str | Path, *, fmt: ChartFormat,
                 breakdowns: Mapping[str, pl.DataFrame] | None = None) -> list[Path]:
    """Write each chart of the report to ``directory`` as ``NAME.svg`` or ``NAME.png``; return the paths.

    Charts: ``winner_change_by_pair``, ``disagreement``, ``tiebreak_depth`` and ``breakdown_FEATURE`` for
    each entry of ``breakdowns`` (feature name -> :func:`tbstats.compare.breakdown` table).
    """
    return _save(_chart_list(comparison, breakdowns, fmt, titled=True), directory)


# ------------------------------------------------------------------------------------- simulation charts

#: The configuration :func:`tbstats.evaluate.random_baseline` adds: ties broken by a drawing of lots.
BASELINE: Final = "random"
_BASELINE_COLOUR: Final = "#5f6b78"
_SMALL_WIDTH: Final = 5.2      # inches: charts shown two abreast on the simulation page


@dataclass(frozen=True)
class Measure:
    """One order-quality measure of :func:`tbstats.evaluate.evaluate` and how the report shows it."""

    column: str
    title: str       # chart heading
    short: str       # table heading
    share: bool      # a proportion (shown in %), else a correlation (-1..1)
    reading: str     # which way is better, for the axis
    text: str        # what it measures


MEASURES: Final = (
    Measure("strongest_first", "Strongest player ranked first in the tie", "Strongest first", True,
            "higher is better",
            "Share of groups tied on points whose truly strongest member ends first in the group; a first place "
            "still shared by k players counts 1/k, the chance a drawing of lots would give."),
    Measure("kendall_tied", "Order inside tied groups (Kendall τ-b)", "τ\u2011b in tied groups", False,
            "higher is better",
            "Kendall's tau-b between the final order and true strength inside each group tied on points "
            "(groups whose order is still completely tied are left out)."),
    Measure("kendall", "Whole standings vs strength (Kendall τ-b)", "Kendall τ\u2011b", False, "higher is better",
            "Kendall's tau-b between the final standings and true strength, over whole tournaments."),
    Measure("spearman", "Whole standings vs strength (Spearman ρ)", "Spearman ρ", False, "higher is better",
            "Spearman's rho between the final standings and true strength, over whole tournaments."),
    Measure("unbroken", "Ties left after the whole list", "Unbroken", True, "lower is better",
            "Share of groups tied on points that still hold a tie after every tie-break of the list."),
    Measure("first_settles_first", "First tie-break settles first place", "First settles first", True,
            "higher: fewer need a second tie-break",
            "Of the tournaments with a shared first place on points, the share in which the first tie-break "
            "alone leaves one player first (a drawing of lots always does)."),
)
#: The measures drawn against the swept parameter.
SWEPT_MEASURES: Final = ("strongest_first", "kendall_tied", "unbroken", "first_settles_first")
_MEASURE: Final = {m.column: m for m in MEASURES}


def _check_measures(table: pl.DataFrame, what: str, extra: Sequence[str] = ()) -> None:
    needed = ["config", "definition", "tied_groups", "shared_first_on_points", *extra,
              *(f"{m.column}{s}" for m in MEASURES for s in ("", "_lo95", "_hi95"))]
    missing = [c for c in needed if c not in table.columns]
    if missing:
        source = "sweep" if extra else "evaluate"
        raise TbstatsError(f"{what} lacks the columns {', '.join(missing)}. "
                           f"Hint: pass the table tbstats.evaluate.{source}() returns")


def _names(*tables: pl.DataFrame | None) -> list[str]:
    """Configuration names in order of appearance, the random baseline last."""
    seen: dict[str, None] = {}
    for t in tables:
        if t is not None:
            seen.update((str(x), None) for x in t["config"].to_list())
    return [n for n in seen if n != BASELINE] + [n for n in seen if n == BASELINE]


def _colours(names: Sequence[str]) -> dict[str, str]:
    """One colour per configuration, the same in every chart; the baseline grey."""
    palette = [c for c in _PALETTE if c != "#6b7785"]
    others = [n for n in names if n != BASELINE]
    out = {n: palette[i % len(palette)] for i, n in enumerate(others)}
    out[BASELINE] = _BASELINE_COLOUR
    return out


def _estimates(rows: pl.DataFrame, m: Measure) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Value, low and high end of the 95% interval (in % for shares); an interval that is not known is
    the value itself, so no whisker is drawn."""
    scale = 100.0 if m.share else 1.0

    def column(name: str) -> np.ndarray:
        return rows[name].cast(pl.Float64).fill_null(float("nan")).to_numpy() * scale

    v, lo, hi = column(m.column), column(f"{m.column}_lo95"), column(f"{m.column}_hi95")
    lo = np.minimum(np.where(np.isfinite(lo), lo, v), v)
    hi = np.maximum(np.where(np.isfinite(hi), hi, v), v)
    return v, lo, hi


def _measure_axis(ax: Axes, m: Measure, axis: Literal["x", "y"]) -> None:
    """Percent ticks for shares; no tick beyond what the measure can reach (100%, or 1)."""
    top = 100.0 if m.share else 1.0
    bottom = 0.0 if m.share else -1.0
    ticks = ax.get_xticks() if axis == "x" else ax.get_yticks()
    low, high = ax.get_xlim() if axis == "x" else ax.get_ylim()
    kept = [float(t) for t in ticks if bottom - 1e-9 <= t <= top + 1e-9 and low - 1e-9 <= t <= high + 1e-9]
    labels = [f"{t:g}%" if m.share else f"{t:g}" for t in kept]
    if axis == "x":
        ax.set_xticks(kept, labels=labels)
    else:
        ax.set_yticks(kept, labels=labels)


def _dot_chart(table: pl.DataFrame, m: Measure, colours: Mapping[str, str], title: str | None) -> Figure:
    """Dot and whisker per configuration for one measure; the random baseline as a dashed line and band."""
    names = _names(table)
    n = len(names)
    fig = _figure(_SMALL_WIDTH, 1.05 + 0.3 * max(n, 2) if n else _EMPTY_HEIGHT)
    ax = fig.add_subplot()
    if title:
        ax.set_title(title)
    if n == 0:
        _no_data(ax, "No configuration was evaluated.")
        return fig
    ordered = pl.DataFrame({"config": names}).join(table.with_columns(pl.col("config").cast(pl.String)),
                                                   on="config", how="left", maintain_order="left")
    v, lo, hi = _estimates(ordered, m)
    finite = np.isfinite(v)
    if not finite.any():
        _no_data(ax, "Not defined for this simulation (no tied group to measure).")
        return fig
    base = n - 1 if names[-1] == BASELINE else None
    if base is not None and finite[base]:
        ax.axvspan(float(lo[base]), float(hi[base]), color=_BASELINE_COLOUR, alpha=0.10, linewidth=0)
        ax.axvline(float(v[base]), color=_BASELINE_COLOUR, linestyle=(0, (4, 3)), linewidth=1)
    if base is not None and n > 1:
        ax.axhline(base - 0.5, color="#d5dae1", linewidth=0.8)
    low, high = float(lo[finite].min()), float(hi[finite].max())
    span = max(high - low, 10.0 if m.share else 0.1)
    left = low - 0.06 * span
    for k, name in enumerate(names):
        colour = colours[name]
        if not finite[k]:
            ax.text(left, k, "  n/a", va="center", fontsize=8, color="#8a929c")
            continue
        baseline = k == base
        ax.errorbar([v[k]], [k], xerr=[[v[k] - lo[k]], [hi[k] - v[k]]], fmt="o", color=colour, ecolor=colour,
                    elinewidth=1.6, capsize=3, markersize=6.5, markeredgewidth=1.5,
                    markerfacecolor="white" if baseline else colour, zorder=3)
        text = f"{v[k]:.1f}%" if m.share else f"{v[k]:.3f}"
        ax.text(float(hi[k]) + 0.02 * span, k, text, va="center", fontsize=8, color="#2b2f36", zorder=4,
                bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": 0.8})
    ax.set_xlim(left, high + 0.2 * span)
    _measure_axis(ax, m, "x")
    ax.set_yticks(range(n), labels=[_short(x) + (" (baseline)" if x == BASELINE else "") for x in names])
    if base is not None:
        label = ax.get_yticklabels()[base]
        label.set_color(_BASELINE_COLOUR)
        label.set_fontstyle("italic")
    ax.set_ylim(n - 0.5, -0.5)
    ax.xaxis.grid(True)
    ax.spines["left"].set_visible(False)
    ax.tick_params(axis="y", length=0)
    ax.set_xlabel(f"{m.reading}; whiskers: 95% interval")
    return fig


def _sweep_chart(sweep: pl.DataFrame, parameter: str, m: Measure, colours: Mapping[str, str],
                 title: str | None) -> Figure:
    """The measure against the swept parameter: a line per configuration with its 95% band, random dashed."""
    part = sweep.filter(pl.col("parameter") == parameter)
    names = _names(part)
    rows_of_legend = -(-len(names) // 3)
    fig = _figure(_SMALL_WIDTH, 3.0 + 0.2 * rows_of_legend)
    ax = fig.add_subplot()
    if title:
        ax.set_title(title)
    values = sorted(float(x) for x in part["value"].drop_nulls().unique().to_list())
    if not values:
        _no_data(ax, f"No value of {parameter} was simulated.")
        return fig
    for name in names:
        rows = part.filter(pl.col("config").cast(pl.String) == name).sort("value")
        x = rows["value"].cast(pl.Float64).to_numpy()
        v, lo, hi = _estimates(rows, m)
        baseline = name == BASELINE
        colour = colours[name]
        if len(x) > 1:
            ok = np.isfinite(v)
            ax.fill_between(x[ok], lo[ok], hi[ok], color=colour, alpha=0.09 if baseline else 0.15, linewidth=0)
        else:
            ax.errorbar(x, v, yerr=np.vstack([v - lo, hi - v]), fmt="none", ecolor=colour, elinewidth=1.2,
                        capsize=3)
        ax.plot(x, v, color=colour, linewidth=1.4 if baseline else 1.8, marker="o",
                markersize=3.5 if baseline else 4.5, linestyle=(0, (4, 3)) if baseline else "-",
                markerfacecolor="white" if baseline else colour, label=_short(name) + (" (baseline)" if baseline
                                                                                        else ""))
    if len(values) <= 12:
        ax.set_xticks(values, labels=[plain(x).removesuffix(".0") for x in values])
    if len(values) > 1:
        pad = 0.04 * (values[-1] - values[0])
        ax.set_xlim(values[0] - pad, values[-1] + pad)
    ax.yaxis.grid(True)
    _measure_axis(ax, m, "y")
    ax.set_xlabel(f"{parameter} (bands: 95% interval)")
    ax.set_ylabel(m.short)
    fig.legend(loc="outside lower center", ncol=min(len(names), 3), handlelength=2.6)
    return fig


def _sweep_parameters(sweep: pl.DataFrame | None) -> list[str]:
    if sweep is None or sweep.is_empty():
        return []
    return [str(x) for x in sweep["parameter"].unique(maintain_order=True).to_list()]


def _simulation_chart_list(table: pl.DataFrame, sweep: pl.DataFrame | None, fmt: ChartFormat) -> list[Chart]:
    """A dot-and-whisker chart per measure, then a line chart per swept measure and parameter (all titled)."""
    _check_measures(table, "the evaluation table")
    if sweep is not None:
        _check_measures(sweep, "the sweep table", ("parameter", "value"))
    colours = _colours(_names(table, sweep))
    plans: list[Plan] = [(f"measure_{m.column}", m.title, partial(_dot_chart, table, m, colours))
                         for m in MEASURES]
    swept = sweep if sweep is not None else pl.DataFrame()
    for parameter in _sweep_parameters(swept):
        for column in SWEPT_MEASURES:
            m = _MEASURE[column]
            plans.append((f"sweep_{_slug(parameter)}_{column}", f"{m.title}, by {parameter}",
                          partial(_sweep_chart, swept, parameter, m, colours)))
    return _draw(plans, fmt, titled=True)


def write_simulation_charts(table: pl.DataFrame, directory: str | Path, *, fmt: ChartFormat,
                            sweep: pl.DataFrame | None = None) -> list[Path]:
    """Write each chart of the simulation report to ``directory`` as ``NAME.svg`` or ``NAME.png``.

    Charts: ``measure_MEASURE`` for each measure of :data:`MEASURES` (``table`` is the output of
    :func:`tbstats.evaluate.evaluate` or :func:`tbstats.evaluate.run`), and, when ``sweep`` (the output of
    :func:`tbstats.evaluate.sweep`) is given, ``sweep_PARAMETER_MEASURE`` for each of :data:`SWEPT_MEASURES`.
    Returns the paths in that order.
    """
    return _save(_simulation_chart_list(table, sweep, fmt), directory)


# -------------------------------------------------------------------------------------------------- HTML

# the XML prologue, metadata and matplotlib's per-file style sheet (which _CSS holds once, scoped to charts)
_XML_PROLOGUE = re.compile(r"<\?xml[^>]*\?>\s*|<!DOCTYPE[^>]*>\s*|<metadata>.*?</metadata>\s*"
                           r"|<style[^>]*>[^<]*</style>\s*", re.S)


def _inline_svg(chart: Chart) -> str:
    """SVG markup ready to sit inside HTML: no prologue or metadata, ids prefixed so charts cannot clash."""
    svg = _XML_PROLOGUE.sub("", chart.data.decode("utf-8"))
    prefix = f"{chart.name}-"
    svg = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}{m.group(1)}"', svg)
    svg = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{prefix}{m.group(1)})", svg)
    svg = re.sub(r'href="#([^"]+)"', lambda m: f'href="#{prefix}{m.group(1)}"', svg)
    return svg.replace("<svg ", f'<svg role="img" aria-label="{_e(chart.title)}" ', 1).strip()


def _chart_html(chart: Chart, caption: str) -> str:
    if chart.fmt == "svg":
        body = _inline_svg(chart)
    else:
        width, height = _png_size(chart.data)
        encoded = base64.b64encode(chart.data).decode("ascii")
        body = (f'<img src="data:image/png;base64,{encoded}" alt="{_e(chart.title)}" '
                f'width="{width * _CSS_DPI // _PNG_DPI}" height="{height * _CSS_DPI // _PNG_DPI}">')
    return f'<figure class="chart" id="chart-{chart.name}">{body}<figcaption>{caption}</figcaption></figure>'


def _png_size(data: bytes) -> tuple[int, int]:
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def _int(value: object) -> int:
    """A polars scalar (or None) as an int."""
    return int(cast(Any, value) or 0)


def _e(value: object) -> str:
    """HTML-escaped text of a value (quotes too)."""
    return html.escape("" if value is None else str(value), quote=True)


def _num(value: object) -> str:
    """A cell: integers as they are, floats with at most 4 decimals, nulls empty."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return "" if math.isnan(value) else plain(round(value, 4))
    if isinstance(value, list):
        return ", ".join(_num(v) for v in value)
    return str(value)


def _plural(n: int, word: str) -> str:
    """A count with its noun.

    >>> _plural(1, "pair"), _plural(1200, "tournament")
    ('1 pair', '1,200 tournaments')
    """
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _pct(x: float, digits: int = 1) -> str:
    """A share as a percentage.

    >>> _pct(0.307692), _pct(0.0), _pct(1.0)
    ('30.8%', '0.0%', '100.0%')
    """
    return f"{100 * x:.{digits}f}%"


def _interval(lo: float, hi: float) -> str:
    return f"{100 * lo:.1f}–{100 * hi:.1f}%"


#: A table cell: its class attribute ('' for none) and its HTML (already escaped).
Cell: TypeAlias = tuple[str, str]


def _cells(tag: str, cells: Iterable[Cell]) -> str:
    return "".join(f'<{tag} class="{cls}">{body}</{tag}>' if cls else f"<{tag}>{body}</{tag}>"
                   for cls, body in cells)


def _row(cells: Iterable[Cell], cls: str = "") -> str:
    """One table row of ready cells."""
    return f'<tr class="{cls}">{_cells("td", cells)}</tr>' if cls else f'<tr>{_cells("td", cells)}</tr>'


def _table(head: Iterable[Cell], rows: Iterable[str], *, caption: str | None = None, cls: str = "") -> str:
    """The one table layout of the pages: header cells, ready rows (:func:`_row`), in a scrolling box."""
    cap = f"<caption>{_e(caption)}</caption>" if caption else ""
    attr = f' class="{cls}"' if cls else ""
    return (f'<div class="scroll"><table{attr}>{cap}<thead><tr>{_cells("th", head)}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>')


def table_html(df: pl.DataFrame, *, limit: int | None = 1000, caption: str | None = None) -> str:
    """A polars table as an escaped HTML table (numbers right-aligned), cut to ``limit`` rows."""
    kinds = ["num" if t.is_numeric() else "" for t in df.schema.values()]
    shown = df if limit is None else df.head(limit)
    rows = (_row((k, _e(_num(v))) for v, k in zip(row, kinds, strict=True)) for row in shown.iter_rows())
    note = ""
    if limit is not None and df.height > limit:
        note = f'<p class="note">Showing the first {limit} of {df.height} rows.</p>'
    return _table(((k, _e(c)) for c, k in zip(df.columns, kinds, strict=True)), rows, caption=caption) + note


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


def _card(label: str, value: str, detail: str, *, raw: bool = False) -> str:
    return (f'<div class="card"><div class="label">{_e(label)}</div><div class="value">{_e(value)}</div>'
            f'<div class="detail">{detail if raw else _e(detail)}</div></div>')


def _cards(cards: Iterable[str]) -> str:
    return f'<div class="cards">{"".join(cards)}</div>'


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


def _definition(row: Mapping[str, Any]) -> str:
    """The configuration's EDITION:SPECS without its name, escaped, breakable after commas."""
    text = str(row["definition"])
    prefix = f"{row['config']}="
    text = text[len(prefix):] if text.startswith(prefix) else text
    return ",<wbr>".join(_e(part) for part in text.split(","))


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
                cells.append(f'<td rowspan="{span}" class="src" title="{_e(source)}">{_e(short)}</td>')
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


_CSS: Final = """
:root{--fg:#1d2430;--muted:#5f6b78;--line:#e3e7ed;--accent:#2f6db5;--bg:#f4f6f9;--card:#fff;--head:#16233a}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);
 font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
header.top{background:var(--head);color:#fff;padding:28px 0 84px}
.wrap{max-width:1120px;margin:0 auto;padding:0 24px}
header.top h1{margin:0 0 4px;font-size:26px;font-weight:650;letter-spacing:-.01em}
header.top p{margin:0;color:#b8c4d6}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(200px,1fr));gap:14px;margin-top:-64px}
.card{background:var(--card);border-radius:10px;padding:14px 16px;box-shadow:0 1px 3px rgba(16,24,40,.12)}
.card .label{font-size:12px;text-transform:uppercase;letter-spacing:.05em;color:var(--muted)}
.card .value{font-size:30px;font-weight:700;line-height:1.25;font-variant-numeric:tabular-nums}
.card .detail{font-size:13px;color:var(--muted)}
.card .pair{display:block;color:var(--fg);font-weight:600;overflow-wrap:anywhere}
nav{margin:18px 0 0;font-size:14px;display:flex;flex-wrap:wrap;gap:4px 18px}
nav a{color:var(--accent);text-decoration:none;white-space:nowrap}
section{background:var(--card);border-radius:10px;padding:18px 22px;margin:18px 0;
 box-shadow:0 1px 3px rgba(16,24,40,.08)}
section h2{margin:0 0 4px;font-size:19px}
section h3{margin:18px 0 4px;font-size:16px}
section > p,.lead{margin:0 0 10px;color:var(--muted);max-width:80ch}
figure.chart{margin:8px 0 4px}
figure.chart svg,figure.chart img{display:block;max-width:100%;height:auto}
figure.chart svg *{stroke-linejoin:round;stroke-linecap:butt}
figcaption{font-size:13px;color:var(--muted);margin-top:4px}
.scroll{overflow-x:auto}
table{border-collapse:collapse;font-size:13px;width:100%;font-variant-numeric:tabular-nums}
caption{text-align:left;font-weight:600;padding:4px 0}
th,td{padding:5px 9px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{background:#f7f8fa;font-weight:600;white-space:nowrap;position:sticky;top:0}
td.num,th.num{text-align:right}
tbody tr:hover td{background:#f7f9fc}
table.drill tr.group td{border-top:2px solid #cfd6df}
td.first{font-weight:700;color:var(--accent)}
td.src{overflow-wrap:anywhere;max-width:220px}
table.drill{width:auto}
td.pair{white-space:nowrap}
td.values{white-space:nowrap}
td.player{white-space:nowrap}
table.drill tr.player td{border-bottom:0}
table.drill tr.cmd td{padding-top:0}
table.drill tr.cmd code{font-size:11.5px;color:#4a525c}
.cfg{font-weight:600}
.vs,.muted{color:var(--muted);font-weight:400}
code{font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#f1f3f6;padding:1px 4px;
 border-radius:4px}
.meter{display:block;height:4px;background:#e9edf2;border-radius:2px;margin-top:3px}
.meter span{display:block;height:4px;background:var(--accent);border-radius:2px}
details{margin-top:8px}
summary{cursor:pointer;color:var(--accent);font-size:14px}
.note,.empty{color:var(--muted);font-size:13px}
footer{color:var(--muted);font-size:12px;padding:8px 0 32px}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(440px,1fr));gap:6px 24px}
.charts figure.chart{margin:8px 0 10px}
.cols{display:grid;grid-template-columns:repeat(auto-fit,minmax(260px,1fr));gap:0 24px;align-items:start}
table.measures th{white-space:normal;vertical-align:bottom}
table.measures td.num{white-space:nowrap}
table.settings td.num{font-variant-numeric:tabular-nums}
.ci{display:block;font-size:11.5px;color:var(--muted)}
td.config code.def{display:table;margin-top:2px;font-size:11.5px}
tr.baseline td{background:#f7f8fa}
.tag{display:inline-block;font-size:11px;font-weight:600;color:var(--muted);border:1px solid var(--line);
 border-radius:9px;padding:0 6px;margin-left:4px;vertical-align:1px}
@media print{header.top{padding-bottom:24px}.cards{margin-top:12px}section{box-shadow:none;break-inside:avoid}}
"""


def render_html(comparison: Comparison, *, title: str, breakdowns: Mapping[str, pl.DataFrame] | None = None,
                extra_tables: Mapping[str, pl.DataFrame] | None = None, charts: ChartFormat = "svg",
                drilldown_limit: int = 200) -> str:
    """One self-contained HTML page for a comparison: headline figures, charts, tables and the drill-down.

    ``breakdowns`` maps a feature name to its :func:`tbstats.compare.breakdown` table (one chart each);
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
    return _page(title, subtitle, _headline(comparison), sections)


#: A page section: anchor id, heading (text) and body (HTML).
Section: TypeAlias = tuple[str, str, str]


def _page(title: str, subtitle: str, headline: str, sections: Sequence[Section]) -> str:
    """The page skeleton both reports share: header, headline cards, a navigation bar, the sections, footer."""
    nav = "".join(f'<a href="#{sid}">{_e(heading)}</a>' for sid, heading, _ in sections)
    body = "".join(f'<section id="{sid}"><h2>{_e(heading)}</h2>{content}</section>'
                   for sid, heading, content in sections)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_e(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        f'<header class="top"><div class="wrap"><h1>{_e(title)}</h1><p>{_e(subtitle)}</p></div></header>\n'
        f'<main class="wrap">{headline}<nav>{nav}</nav>\n{body}\n</main>\n'
        f'<footer class="wrap">Made by tbstats {_e(__version__)}.</footer>\n</body>\n</html>\n')


# ------------------------------------------------------------------------------------------ simulation page

def render_simulation_html(table: pl.DataFrame, *, title: str, settings: Mapping[str, object],
                           sweep: pl.DataFrame | None = None, charts: ChartFormat = "svg") -> str:
    """One self-contained HTML page for an order-quality evaluation on simulated tournaments.

    ``table`` is the output of :func:`tbstats.evaluate.evaluate` (or the table of
    :func:`tbstats.evaluate.run`); the configuration named ``random`` is the drawing-of-lots baseline.
    ``settings`` (the simulation configuration) is shown as a table; ``sweep`` (the output of
    :func:`tbstats.evaluate.sweep`) adds a line chart per swept measure. The page shares the skeleton,
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
    return _page(title, ", ".join(parts), _simulation_headline(table, settings), sections)


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
    detail = (f'<span class="pair">{_e(best["config"])}</span>ranks the strongest tied player first; 95% '
              f'interval {_interval(best["strongest_first_lo95"], best["strongest_first_hi95"])}')
    if level:
        detail += f" · as high in {level} other configuration{'s' if level > 1 else ''}"
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
