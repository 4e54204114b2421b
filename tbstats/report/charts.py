"""Chart plumbing shared by both reports: matplotlib on the Agg canvas, one style, deterministic encoding."""

from __future__ import annotations

import io
import re
import textwrap
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, cast

from tbstats.errors import TbstatsError

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure



ChartFormat = Literal["png", "svg"]
CHART_FORMATS: Final = ("png", "svg")
#: Label lengths in charts (longer names end with an ellipsis; the tables show them in full).
LABEL_CHARS: Final = 18
_PNG_DPI: Final = 192          # twice the CSS pixel density, so PNG charts stay sharp on dense screens
_CSS_DPI: Final = 96
_ACCENT: Final = "#2f6db5"
_PALETTE: Final = ("#2f6db5", "#e07b39", "#3a9d5d", "#c2405a", "#8a63b8", "#8c6d46", "#d16fb0", "#6b7785",
                   "#b5a22c", "#2aa1b3")
_EMPTY_HEIGHT: Final = 1.1     # inches: a chart that only says there is nothing to draw
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
                           "Hint: pip install matplotlib (tbstats depends on it; the install is incomplete)") from exc


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
    """A label legible at any length: wrapped onto lines of at most ``limit`` characters, never cut.

    >>> _short("fide-2026-with-a-long-name", 10), _short("bh", 10)
    ('fide-2026-\\nwith-a-\\nlong-name', 'bh')
    """
    s = str(text)
    return s if len(s) <= limit else "\n".join(textwrap.wrap(s, limit, break_on_hyphens=True)) or s


def _no_data(ax: Axes, message: str) -> None:
    ax.set_axis_off()
    ax.text(0.5, 0.5, message, ha="center", va="center", color="#6b7785", transform=ax.transAxes)


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


def _slug(text: str) -> str:
    """A file-name-safe form of a feature name.

    >>> _slug("rating band/2")
    'rating_band_2'
    """
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_.") or "feature"


def _int(value: object) -> int:
    """A polars scalar (or None) as an int."""
    return int(cast(Any, value) or 0)
