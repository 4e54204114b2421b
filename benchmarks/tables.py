"""The tables of a benchmarks/run.py entry in RESULTS.md: stages by size, growth, shapes, issue 8's targets, and the
machine and commit the figures come from. Formatting only: nothing here runs or times a stage."""

from __future__ import annotations

import itertools
import os
import platform
import subprocess
from pathlib import Path
from typing import Any

from stages import LABELS, STAGES

HERE = Path(__file__).resolve().parent


def machine() -> dict[str, str]:
    """The processor, cores, memory, system and the versions of Python, numpy, polars and pyarrow."""
    import numpy
    import polars
    import pyarrow

    cpu = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        mem = next(int(x.split()[1]) for x in Path("/proc/meminfo").read_text().splitlines()
                   if x.startswith("MemTotal"))
        ram = f"{mem / 2**20:.1f} GiB"
    except (OSError, StopIteration):
        ram = "?"
    return {"cpu": cpu, "cores": str(os.cpu_count()), "ram": ram, "os": f"{platform.system()} {platform.release()}",
            "python": platform.python_version(), "numpy": numpy.__version__, "polars": polars.__version__,
            "pyarrow": pyarrow.__version__}


def commit() -> str:
    """The checked-out commit, and whether tracked files differ from it."""
    def git(*a: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", *a], cwd=HERE, capture_output=True, text=True, check=False)

    head = git("rev-parse", "HEAD").stdout.strip() or "unknown"
    dirty = git("status", "--porcelain", "--untracked-files=no").stdout.strip()
    return head[:12] + (" (with uncommitted changes)" if dirty else "")


def fmt_mb(b: float) -> str:
    """Bytes as whole MiB."""
    return f"{b / 2**20:,.0f}"


def fmt_sec(s: float) -> str:
    """Seconds to 4 significant places below a second, fewer above."""
    return f"{s:.4f}" if s < 1 else f"{s:.3f}" if s < 100 else f"{s:.1f}"


def fmt_rate(rows: float, seconds: float) -> str:
    """Rows per second, in thousands or millions."""
    if seconds <= 0:
        return "-"
    r = rows / seconds
    return f"{r / 1e6:.2f}M" if r >= 1e6 else f"{r / 1e3:.1f}k"


def stage_table(rows: list[dict[str, Any]]) -> list[str]:
    """One row per stage run: its time, rate and memory (or its failure)."""
    out = ["| stage | events | game rows | seconds | CPU s | game rows/s | RSS before MB | peak RSS MB | "
           "bytes/game row | stage bytes/game row | note |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        if "error" in r:
            out.append(f"| {LABELS[r['stage']]} | {r['events']:,} | | | | | | | | | FAILED: {r['error']} |")
            continue
        before = fmt_mb(r["rss_before"]) if r["rss_before"] else "-"
        added = f"{max(0, r['rss_peak'] - r['rss_before']) / max(r['rows'], 1):,.0f}" if r["rss_before"] else "-"
        out.append(f"| {LABELS[r['stage']]} | {r['events']:,} | {r['rows']:,} | {fmt_sec(r['seconds'])} | "
                   f"{r['cpu']:.2f} | {fmt_rate(r['rows'], r['seconds'])} | {before} | {fmt_mb(r['rss_peak'])} | "
                   f"{r['rss_peak'] / max(r['rows'], 1):,.0f} | {added} | {r['note']} |")
    return out


def growth_table(rows: list[dict[str, Any]], sizes: tuple[int, ...]) -> list[str]:
    """Microseconds per game row at each size, and t(big) / (rows ratio x t(small)) for consecutive sizes."""
    by = {(r["stage"], r["events"]): r for r in rows if "error" not in r}
    steps = list(itertools.pairwise(sizes))
    head = "| stage | " + " | ".join(f"µs/row @{s:,}" for s in sizes) + " | " + " | ".join(
        f"{b:,} vs {a:,} | (CPU)" for a, b in steps) + " |"
    out = [head, "|---|" + "---:|" * (len(sizes) + 2 * len(steps))]
    for stage in STAGES:
        cells = [by.get((stage, s)) for s in sizes]
        if all(c is None for c in cells):
            continue
        us = [f"{1e6 * c['seconds'] / c['rows']:.3f}" if c else "" for c in cells]
        ratios = []
        for a, b in steps:
            ra, rb = by.get((stage, a)), by.get((stage, b))
            for key in ("seconds", "cpu"):
                ratios.append(f"{_growth(ra, rb, key):.2f}" if ra and rb and ra[key] > 0 else "")
        out.append(f"| {LABELS[stage]} | " + " | ".join(us + ratios) + " |")
    return out


def _growth(a: dict[str, Any], b: dict[str, Any], key: str) -> float:
    """Time (``seconds`` or ``cpu``) per game row at ``b`` over that at ``a``: 1.0 is linear."""
    return float((b[key] / b["rows"]) / (a[key] / a["rows"]))


def shape_table(rows: list[dict[str, Any]], shapes: list[tuple[int, int]], events: dict[tuple[int, int], int],
                stages: list[str]) -> list[str]:
    """Game rows per second of each of ``stages`` on each shape's archive (``events`` of it)."""
    labels = [f"{p}×{r}" for p, r in shapes]
    out = ["| stage (game rows/s) | " + " | ".join(labels) + " |", "|---|" + "---:|" * len(shapes),
           "| events | " + " | ".join(f"{events[s]:,}" for s in shapes) + " |"]
    by = {(r["stage"], r["shape"]): r for r in rows if "error" not in r}
    for stage in stages:
        cells = [by.get((stage, s)) for s in shapes]
        if all(c is None for c in cells):
            continue
        rates = [fmt_rate(c["rows"], c["seconds"]) if c else "-" for c in cells]
        out.append(f"| {LABELS[stage]} | " + " | ".join(rates) + " |")
    return out


def targets(rows: list[dict[str, Any]], sizes: tuple[int, ...]) -> list[str]:
    """Issue 8's targets next to what this run measured on its largest archive."""
    by = {(r["stage"], r["events"]): r for r in rows if "error" not in r}
    big = sizes[-1]
    label = next((r["archive"] for r in rows if r.get("events") == big and "archive" in r), "?")
    out = [f"Issue 8 targets (its archive: 6,000 events, 1.37M game rows), measured here at {big:,} events of the "
           f"{label} archive:"]
    for stage, goal in (("compute-cli", 1.2e6), ("compute", 8e6), ("compute-w2", 12e6)):
        r = by.get((stage, big))
        if r:
            rate = r["rows"] / r["seconds"]
            out.append(f"- {LABELS[stage]}: {fmt_rate(r['rows'], r['seconds'])} game rows/s (target ≥ "
                       f"{fmt_rate(goal, 1)}{', met' if rate >= goal else ', not met'}); "
                       f"{fmt_rate(r['rows'], r['cpu'])} game rows per CPU second")
    if 100_000 in sizes and 10_000 in sizes:
        for stage in ("compute", "dense", "unplayed", "standings"):
            a, b = by.get((stage, 10_000)), by.get((stage, 100_000))
            if a and b and a["cpu"] > 0:
                f, c = _growth(a, b, "seconds"), _growth(a, b, "cpu")
                out.append(f"- {LABELS[stage]}: 100k events take {f:.2f} × ten times the 10k time (target ≤ 1.20"
                           f"{', met' if f <= 1.2 else ', not met'}); in CPU time {c:.2f} ×")
    trf = ", ".join(f"{e:,} events {by[('compute-cli', e)]['trf_bytes'] / 1e6:,.1f} MB" for e in sizes
                    if ("compute-cli", e) in by)
    if trf:
        out.append(f"- TRF sizes: {trf}")
    return out
