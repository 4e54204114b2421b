"""The research commands against the engine on real events (issue 22 items 4 and 5): ratios of whole commands.

    python benchmarks/bench_research.py --corpus /work/bench/corpus40            # ingests the model beside it
    python benchmarks/bench_research.py --corpus DIR --only evaluate,load --repeat 1
    python benchmarks/bench_research.py --corpus DIR --simulate 10000             # and simulate's memory
    python benchmarks/bench_research.py --corpus DIR --only archive               # evaluate --strength archive

The corpus is a directory of real TRF files (e.g. the shared ones copied 40 times, about 3,000 events; never
inside the project). Unless given, its model is ingested once beside it as a dataset directory
(``CORPUS-model/``) and a flat file (``CORPUS-flat.parquet``). Every command runs as a child process
(``tbstats ...``; ``load`` times ``tbstats.io.tabular.read_model`` in a child); each figure is the best of
``--repeat`` runs (wall seconds; peak RSS of that child), and every ratio is taken from figures of this one
run. The ``uptime`` load is printed before and after: other work on the machine slows both sides of a ratio,
but not always alike. Prints figures; asserts nothing.

Ratios and what issue 22 asks of them:

- ``evaluate / compare`` (2 configurations, TRF): at most 2;
- ``compare flat / TRF`` (2 configurations): at most 1;
- ``compare x10 / compute x1`` (per input): at most 3;
- ``TRF / model`` per command (compute, compare, evaluate, audit, info; directory and flat file): at least 2;
- ``load flat / directory`` (seconds per row of ``tbstats.io.tabular.read_model``, in a child process): at most 1.25;
- ``read TRF / load`` (seconds per row: ``tbstats.io.sources.iter_batches`` of the corpus against ``read_model``):
  the input stage alone, the only stage a command from the model saves (start-up, engine and output are the same);
- ``simulate --archive / simulate`` (peak RSS): at most 1.25.

``--only archive`` (not in the default run) times ``evaluate --strength archive`` (the Bradley-Terry fit of the
whole archive, leave-one-event-out) from the TRF files and the directory, against ``evaluate`` with the ratings:
the fit's own cost, which a real archive whose players meet again and again makes grow fastest.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from stages import command_ran

TWO = ["a=fide-2026:BH/C1,BH,SB,DE,WIN", "b=fide-2024:BH/C1,BH,SB,DE,WIN"]
TEN = [*TWO, "c=fide-2026:BH,BH/C1,SB", "d=fide-2024:BH,BH/C1,SB", "e=fide-2026:BH/C1,BH/C2,SB",
       "f=fide-legacy:BH/C1,BH,SB", "g=uscf:BH/C1,BH,SB", "h=naive:BH/C1,BH,SB", "i=fide-2026:SB,DE,KS",
       "j=fide-2026:PS,BH,WIN"]
COMPUTE_ONE = ["--rules", "fide-2026", "-t", "BH/C1,BH,SB,DE,WIN"]   # the first configuration alone
PARTS = ("evaluate", "compare", "sources", "load", "simulate", "archive")


def tbstats() -> list[str]:
    """The command line of tbstats in this interpreter (the checkout on PYTHONPATH, if any)."""
    found = shutil.which("tbstats", path=str(Path(sys.executable).parent))
    return [found] if found else [sys.executable, "-c", "from tbstats.cli import main; main()"]


def run(args: Sequence[str], out_dir: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one child ``tbstats`` run; a failure stops the benchmark."""
    start = time.perf_counter()
    child = subprocess.Popen([*tbstats(), *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=out_dir)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    stderr = child.stderr.read().decode(errors="replace") if child.stderr else ""
    if child.stderr:
        child.stderr.close()
    child.returncode = os.waitstatus_to_exitcode(status)
    if not command_ran(child.returncode, stderr):   # (some inputs rejected: the corpus holds files that are not events)
        raise SystemExit(f"tbstats {' '.join(args)} failed ({child.returncode}):\n{stderr[-2000:]}")
    return seconds, usage.ru_maxrss / 1024


def best(args: Sequence[str], repeat: int, out_dir: Path) -> tuple[float, float]:
    """The fastest of ``repeat`` runs (seconds) and the peak RSS of that run (MB)."""
    runs = [run(args, out_dir) for _ in range(repeat)]
    return min(runs)


def configs(names: Sequence[str]) -> list[str]:
    return [a for c in names for a in ("-c", c)]


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return "load: " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def ensure_model(corpus: Path, model: Path, flat: Path, out_dir: Path) -> None:
    """Ingest the corpus into a dataset directory and a flat file unless they exist with proofs that still
    hold: a model written by other checks (an earlier commit) is read with the checks run, which is not what
    a model ingested by this code costs to read."""
    from tbstats.io.tabular import proof

    for target in (model, flat):
        if not target.exists() or not proof.holds(target):
            print(f"ingesting {corpus} -> {target}"
                  f"{' (its proofs no longer hold)' if target.exists() else ''}", flush=True)
            if target.is_dir():
                shutil.rmtree(target)
            run(["ingest", str(corpus), "-o", str(target), "-q"], out_dir)
            if not proof.holds(target):
                raise SystemExit(f"{target}: written without proofs that hold; its reads would run the checks")


def ratio(name: str, top: float, bottom: float, goal: str) -> None:
    print(f"  {name:<44} {top / bottom:6.2f}   ({goal})")


LOAD = """
import os, sys, time
from tbstats.io import sources, tabular
times = []
for _ in range(int(sys.argv[2])):
    start = time.perf_counter()
    if os.path.isdir(sys.argv[1]) and not tabular.is_model_dir(sys.argv[1]):   # TRF files: read and parsed
        rows = sum(batch.games.height for batch, _ in sources.iter_batches([sys.argv[1]]))
    else:
        rows = tabular.read_model(sys.argv[1]).games.height
    times.append(time.perf_counter() - start)
print(min(times), rows)
"""


def load_rows_per_second(paths: Sequence[Path], repeat: int, out_dir: Path) -> list[tuple[float, int]]:
    """Best seconds of :func:`tbstats.io.tabular.read_model` of each path and its game rows, in a child process
    (this one stays small: a child's peak RSS on Linux starts from its parent's at the fork), started in
    ``out_dir``: ``python -c`` imports from its working directory first, and a checkout there would win over
    PYTHONPATH."""
    out = []
    for path in paths:
        done = subprocess.run([sys.executable, "-c", LOAD, str(path), str(repeat)], capture_output=True, text=True,
                              check=True, cwd=out_dir)
        seconds, rows = done.stdout.split()
        out.append((float(seconds), int(rows)))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, required=True, help="a directory of real TRF files")
    parser.add_argument("--model", type=Path, help="its dataset directory (default: CORPUS-model, ingested)")
    parser.add_argument("--flat", type=Path, help="its flat file (default: CORPUS-flat.parquet, ingested)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default=",".join(PARTS[:-2]), help=f"parts to run, of {', '.join(PARTS)}")
    parser.add_argument("--simulate", type=int, default=0, metavar="N",
                        help="also simulate N events of 40 players x 9 rounds with and without --archive")
    args = parser.parse_args(argv)
    parts = set(args.only.split(",")) | ({"simulate"} if args.simulate else set())
    corpus = args.corpus.resolve()
    model = (args.model or corpus.with_name(corpus.name + "-model")).resolve()
    flat = (args.flat or corpus.with_name(corpus.name + "-flat.parquet")).resolve()
    print(f"before: {uptime()}")
    with tempfile.TemporaryDirectory() as tmp:
        out_dir = Path(tmp)
        ensure_model(corpus, model, flat, out_dir)
        sources = {"TRF": corpus, "dir": model, "flat": flat}
        figures: dict[tuple[str, str], tuple[float, float]] = {}

        def measure(command: str, source: str, extra: list[str], output: str) -> tuple[float, float]:
            key = (command, source)
            if key not in figures:
                figures[key] = best([command.split()[0], "-q", str(sources[source]), *extra, "-o", output],
                                    args.repeat, out_dir)
                seconds, peak = figures[key]
                print(f"  {command:<16} {source:<5} {seconds:7.2f} s  {peak:7.0f} MB", flush=True)
            return figures[key]

        wanted = ["TRF", "dir", "flat"] if "sources" in parts else ["TRF", "dir"] if "archive" in parts else ["TRF"]
        for source in wanted:
            if "compare" in parts or "sources" in parts:
                measure("compute", source, COMPUTE_ONE, "out.parquet")
                measure("compare", source, configs(TWO), "out.csv")
            if "evaluate" in parts or "sources" in parts:
                measure("evaluate", source, configs(TWO), "out.csv")
            if "sources" in parts:   # the other whole commands that read an archive
                measure("audit", source, ["--rules", "fide-2026", "--per-player"], "out.csv")
                measure("info", source, [], "out.csv")
            if "compare" in parts:
                measure("compare x10", source, configs(TEN), "out.csv")
            if "archive" in parts and source != "flat":
                measure("evaluate", source, configs(TWO), "out.csv")
                measure("evaluate archive", source, [*configs(TWO), "--strength", "archive"], "out.csv")
        loads = load_rows_per_second([model, flat, corpus], args.repeat, out_dir) if "load" in parts else []
        if loads:
            for (seconds, rows), name in zip(loads, ("dir", "flat", "TRF"), strict=True):
                print(f"  {'load':<16} {name:<5} {seconds:7.2f} s  {rows / seconds:12,.0f} game rows/s")
        simulated = {}
        if "simulate" in parts and args.simulate:
            sim = ["simulate", "-n", str(args.simulate), "-p", "40", "-r", "9", "-q"]
            simulated["plain"] = best([*sim, "-o", "out.csv"], args.repeat, out_dir)
            simulated["archive"] = best([*sim, "-o", "out.csv", "--archive", "sim.parquet"], args.repeat, out_dir)
            for name, (seconds, peak) in simulated.items():
                print(f"  {'simulate':<16} {name:<8} {seconds:7.2f} s  {peak:7.0f} MB")

    print("ratios (best of each side, this run):")
    f = {k: v[0] for k, v in figures.items()}
    if ("evaluate", "TRF") in f and ("compare", "TRF") in f:
        ratio("evaluate / compare (2 configs, TRF)", f["evaluate", "TRF"], f["compare", "TRF"], "at most 2")
    if ("compare", "flat") in f:
        ratio("compare flat / TRF (2 configs)", f["compare", "flat"], f["compare", "TRF"], "at most 1")
    for source in ("TRF", "dir"):
        if ("evaluate archive", source) in f and ("evaluate", source) in f:
            ratio(f"evaluate archive / rating ({source})", f["evaluate archive", source], f["evaluate", source],
                  "the fit's cost")
    for source in ("TRF", "dir", "flat"):
        if ("compare x10", source) in f and ("compute", source) in f:
            ratio(f"compare x10 / compute x1 ({source})", f["compare x10", source], f["compute", source], "at most 3")
    for command in ("compute", "compare", "evaluate", "compare x10", "audit", "info"):
        for source in ("dir", "flat"):
            if (command, source) in f and (command, "TRF") in f:
                ratio(f"{command} TRF / {source}", f[command, "TRF"], f[command, source], "at least 2")
    if loads:
        (dir_s, dir_rows), (flat_s, flat_rows), (trf_s, trf_rows) = loads
        ratio("load flat / dir (seconds per game row)", flat_s / flat_rows, dir_s / dir_rows, "at most 1.25")
        # the input stage alone, which is all a command from the model saves (start-up, engine and output
        # are the same from either): item 5's "at least 2" taken for that stage
        ratio("read TRF / load dir (seconds per game row)", trf_s / trf_rows, dir_s / dir_rows, "input stage")
        ratio("read TRF / load flat (seconds per game row)", trf_s / trf_rows, flat_s / flat_rows, "input stage")
    if simulated:
        ratio("simulate --archive / simulate (peak RSS)", simulated["archive"][1], simulated["plain"][1],
              "at most 1.25")
    print(f"after: {uptime()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
