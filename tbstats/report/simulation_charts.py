"""The charts of the simulation report: one dot-and-whisker chart per order-quality measure, sweep lines."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

import numpy as np
import polars as pl

from tbstats.errors import TbstatsError
from tbstats.output import plain
from tbstats.report.charts import (
    _EMPTY_HEIGHT,
    _PALETTE,
    Chart,
    ChartFormat,
    Plan,
    _draw,
    _figure,
    _no_data,
    _save,
    _short,
    _slug,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: The configuration :func:`tbstats.analysis.quality.random_baseline` adds: ties broken by a drawing of lots.
BASELINE: Final = "random"
_BASELINE_COLOUR: Final = "#5f6b78"
_SMALL_WIDTH: Final = 5.2      # inches: charts shown two abreast on the simulation page


@dataclass(frozen=True)
class Measure:
    """One order-quality measure of :func:`tbstats.analysis.quality.evaluate` and how the report shows it."""

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
                           f"Hint: pass the table tbstats.analysis.quality.{source}() returns")


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
    :func:`tbstats.analysis.quality.evaluate` or :func:`tbstats.analysis.quality.run`), and, when ``sweep``
    (the output of :func:`tbstats.analysis.quality.sweep`) is given, ``sweep_PARAMETER_MEASURE`` for each of
    :data:`SWEPT_MEASURES`.
    Returns the paths in that order.
    """
    return _save(_simulation_chart_list(table, sweep, fmt), directory)
