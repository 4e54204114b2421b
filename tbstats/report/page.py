"""The pieces every page is made of: style sheet, cards, tables, embedded charts; escaping (the frame around
them, with the inputs section, is :mod:`tbstats.report.frame`)."""

from __future__ import annotations

import base64
import html
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any, Final, TypeAlias

import polars as pl

from tbstats.output import plain
from tbstats.report.charts import _CSS_DPI, _PNG_DPI, Chart

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


def _e(value: object) -> str:
    """HTML-escaped text of a value (quotes too)."""
    return html.escape("" if value is None else str(value), quote=True)


def _path(value: object) -> str:
    """A file path or source name, escaped, with a break opportunity after each folder separator (and the ``!``
    of an archive member), so that a long path wraps at its folders; a ``path`` cell or item wraps it
    anywhere only when one folder name is wider than the column.

    >>> _path("data/2019/<a>.trf")
    'data/<wbr>2019/<wbr>&lt;a&gt;.trf'
    """
    return re.sub(r"([/\\!])", r"\1<wbr>", _e(value))


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


def _card(label: str, value: str, detail: str, *, raw: bool = False) -> str:
    return (f'<div class="card"><div class="label">{_e(label)}</div><div class="value">{_e(value)}</div>'
            f'<div class="detail">{detail if raw else _e(detail)}</div></div>')


def _cards(cards: Iterable[str]) -> str:
    return f'<div class="cards">{"".join(cards)}</div>'


def _definition(row: Mapping[str, Any]) -> str:
    """The configuration's EDITION:SPECS without its name, escaped, breakable after commas."""
    text = str(row["definition"])
    prefix = f"{row['config']}="
    text = text[len(prefix):] if text.startswith(prefix) else text
    return ",<wbr>".join(_e(part) for part in text.split(","))


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
img,svg{max-width:100%}
figure.chart svg *{stroke-linejoin:round;stroke-linecap:butt}
figcaption{font-size:13px;color:var(--muted);margin-top:4px}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-size:13px;width:100%;font-variant-numeric:tabular-nums}
caption{text-align:left;font-weight:600;padding:4px 0}
th,td{padding:5px 9px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{background:#f7f8fa;font-weight:600;white-space:nowrap;position:sticky;top:0}
td.num,th.num{text-align:right}
tbody tr:hover td{background:#f7f9fc}
table.drill tr.group td{border-top:2px solid #cfd6df}
td.first{font-weight:700;color:var(--accent)}
table.drill{width:100%}
td.pair{white-space:nowrap}
td.values{white-space:normal;min-width:200px}
td.player{white-space:nowrap}
table.drill tr.player td{border-bottom:0}
table.drill tr.cmd td{padding-top:0}
table.drill tr.cmd code{font-size:11.5px;color:#4a525c;white-space:pre-wrap;overflow-wrap:anywhere}
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
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(440px,100%),1fr));gap:6px 24px}
.charts figure.chart{margin:8px 0 10px}
.cols{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(260px,100%),1fr));gap:0 24px;align-items:start}
.charts > *,.cols > *,.cards > *{min-width:0}
table.measures th{white-space:normal;vertical-align:bottom}
table.measures td.num{white-space:nowrap}
table.settings td.num{font-variant-numeric:tabular-nums}
table.about{width:auto}
table.about td:first-child{white-space:nowrap;color:var(--muted)}
code.cmd{white-space:pre-wrap;overflow-wrap:anywhere;display:block;min-width:24ch}
ul.inputs{margin:0;padding-left:18px}
.path{overflow-wrap:anywhere;min-width:16ch}
td.path{max-width:48ch}
p.account{margin:14px 0 0;font-size:14px}
p.account a{color:var(--accent)}
.ci{display:block;font-size:11.5px;color:var(--muted)}
td.config code.def{display:table;margin-top:2px;font-size:11.5px}
tr.baseline td{background:#f7f8fa}
.tag{display:inline-block;font-size:11px;font-weight:600;color:var(--muted);border:1px solid var(--line);
 border-radius:9px;padding:0 6px;margin-left:4px;vertical-align:1px}
@media print{header.top{padding-bottom:24px}.cards{margin-top:12px}section{box-shadow:none;break-inside:avoid}}
"""
#: A page section: anchor id, heading (text) and body (HTML).
Section: TypeAlias = tuple[str, str, str]
