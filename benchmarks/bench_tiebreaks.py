"""Game rows per second of a tie-break list and of each of its tie-breaks alone, on one archive of run.py's layout.

Run: ``python benchmarks/bench_tiebreaks.py /work/bench/mix-10000 [--trf] [--profile FILE]``. ARCHIVE is a
directory as ``run.py --workdir`` leaves it (``trf/`` and the ``model/`` that ``tbstats ingest`` wrote, and
``meta.json``). For the whole list, then for points alone (``PTS``) and for each tie-break of the list alone
(``compute(batch, SPEC)``: context, points, that tie-break, ranks, the table), it times
``tbstats.engine.compute.compute`` from the loaded model with one worker and with ``--workers`` (best of
``--repeat``, the model loaded once, untimed); with ``--trf`` also the whole ``tbstats compute TRF_DIR -t SPEC
--format parquet`` command with 1 and ``--workers`` workers (one run each). ``--profile FILE`` writes a cProfile
of the whole list from the model (one worker): the top 25 functions by cumulative and by own time.
Prints a markdown table with the archive, the load average and the commit; it asserts nothing.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import subprocess
import sys
import time
from pathlib import Path

from archives import archive_label
from stages import STANDARD_LIST

HERE = Path(__file__).resolve().parent


def _cpu() -> float:
    t = os.times()
    return t.user + t.system


def _children_cpu() -> float:
    t = os.times()
    return t.children_user + t.children_system


def time_model(batch: object, spec: str, rules: str, workers: int, repeat: int) -> tuple[float, float]:
    """Best wall seconds of ``compute`` over ``repeat`` runs, with that run's CPU seconds."""
    from tbstats.engine.compute import compute

    best = (float("inf"), 0.0)
    lots = 1 if "LOTS" in spec.split(",") else None   # (the drawing of lots needs a seed)
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), _cpu()
        compute(batch, spec, rules=rules, workers=workers, lots=lots)  # type: ignore[arg-type]
        best = min(best, (time.perf_counter() - t0, _cpu() - c0))
    return best


def time_cli(trf: Path, spec: str, rules: str, workers: int, out: Path) -> tuple[float, float]:
    """Wall and CPU seconds (the child's) of a whole ``tbstats compute`` command."""
    t0, c0 = time.perf_counter(), _children_cpu()
    done = subprocess.run([sys.executable, "-m", "tbstats", "compute", str(trf), "--rules", rules, "-t", spec,
                           "--format", "parquet", "-o", str(out), "-q", "--workers", str(workers)],
                          capture_output=True, text=True, check=False)
    seconds, cpu = time.perf_counter() - t0, _children_cpu() - c0
    if done.returncode != 0:
        raise SystemExit(f"tbstats compute -t {spec} failed ({done.returncode}): {done.stderr[-1000:]}")
    out.unlink(missing_ok=True)
    return seconds, cpu


def profile(batch: object, rules: str, target: Path, header: str) -> None:
    from tbstats.engine.compute import compute

    prof = cProfile.Profile()
    prof.enable()
    compute(batch, STANDARD_LIST, rules=rules)  # type: ignore[arg-type]
    prof.disable()
    text = io.StringIO()
    for order in ("cumulative", "tottime"):
        text.write(f"\n=== top 25 by {order} ===\n")
        pstats.Stats(prof, stream=text).strip_dirs().sort_stats(order).print_stats(25)
    target.write_text(header + text.getvalue())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("archive", type=Path)
    ap.add_argument("--rules", default="fide-2026")
    ap.add_argument("--list", default=STANDARD_LIST)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--trf", action="store_true", help="also time the whole tbstats compute command from TRF")
    ap.add_argument("--all", action="store_true", help="also every other tie-break of the registry alone")
    ap.add_argument("--profile", type=Path, help="write a cProfile of the whole list (model, one worker) here")
    args = ap.parse_args()

    import tbstats
    from tbstats.io.tabular import read_model

    tbstats.keep_freed_memory()   # as the tbstats command does at start
    meta = json.loads((args.archive / "meta.json").read_text())
    batch = read_model(args.archive / "model")
    rows = batch.games.height
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE, capture_output=True, text=True,
                            check=False).stdout.strip()
    load0 = os.getloadavg()
    specs = [args.list, "PTS", "BH", *args.list.split(",")]
    if args.all:
        from tbstats.engine.tiebreaks import TIEBREAKS

        specs += list(TIEBREAKS)
    specs = list(dict.fromkeys(specs))   # each once, in order
    head = (f"archive {args.archive} ({archive_label(meta)}): {meta['events']:,} events, {rows:,} game rows; "
            f"rules {args.rules}; commit {commit}; load average at start {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}")
    print(head, file=sys.stderr)
    cols = ["model, 1 worker", f"model, {args.workers} workers"]
    if args.trf:
        cols += ["TRF CLI, 1 worker", f"TRF CLI, {args.workers} workers"]
    lines = ["| tie-break | " + " | ".join(f"{c} s | rows/s | CPU s" for c in cols) + " | / BH alone |",
             "|---|" + "---:|" * (3 * len(cols) + 1)]
    measured = {}
    for spec in specs:
        cells = [time_model(batch, spec, args.rules, 1, args.repeat),
                 time_model(batch, spec, args.rules, args.workers, args.repeat)]
        if args.trf:
            out = args.archive / "bench-tiebreaks.parquet"
            cells += [time_cli(args.archive / "trf", spec, args.rules, w, out) for w in (1, args.workers)]
        measured[spec] = cells
        print(spec, " ".join(f"{s:.3f}" for s, _ in cells), file=sys.stderr)
    bh = measured["BH"][0][0]
    for spec, cells in measured.items():
        name = "whole list" if spec == args.list else spec
        lines.append(f"| {name} | " + " | ".join(f"{s:.3f} | {rows / s / 1e6:.2f}M | {c:.2f}" for s, c in cells)
                     + f" | {cells[0][0] / bh:.2f}x |")
    load1 = os.getloadavg()
    tail = f"load average at end {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}"
    print("\n".join([head, "", *lines, "", tail]))
    if args.profile:
        profile(batch, args.rules, args.profile, f"cProfile of compute(batch, {args.list!r}, rules={args.rules!r}), "
                                                 f"one worker; {head}\n")


if __name__ == "__main__":
    main()
