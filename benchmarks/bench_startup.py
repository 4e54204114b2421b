"""Start-up time of the command line against importing polars, numpy and pyarrow, measured side by side.

    python benchmarks/bench_startup.py                 # 15 runs of each command, this checkout
    python benchmarks/bench_startup.py -n 30 --root /path/to/other/checkout --root .

Each figure is the median wall time of ``-n`` runs of a fresh interpreter (the commands interleaved run by run,
so that load on the machine falls on all of them alike): ``python -c "import polars, numpy, pyarrow"``,
``tbstats --help``, ``tbstats tiebreaks``, ``tbstats compute --help`` and ``tbstats compute -t BH SMALLFILE -q``,
with the differences and ratios to the import. With several ``--root`` checkouts (each put first on
``PYTHONPATH``) the same commands of each are interleaved too, so that a before/after comparison comes from one
run. Never part of the tests.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
SMALL = "data/examples/s5_six_players.trf"


def commands(python: str) -> dict[str, list[str]]:
    program = "from tbstats.cli import run; import sys; sys.argv[0] = 'tbstats'; run()"
    return {
        "import polars, numpy, pyarrow": [python, "-c", "import polars, numpy, pyarrow"],
        "tbstats --help": [python, "-c", program, "--help"],
        "tbstats tiebreaks": [python, "-c", program, "tiebreaks"],
        "tbstats compute --help": [python, "-c", program, "compute", "--help"],
        "tbstats compute (one small file)": [python, "-c", program, "compute", "-t", "BH,SB", SMALL, "-q"],
    }


def once(argv: list[str], root: Path) -> float:
    path = os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env = {**os.environ, "PYTHONPATH": path}
    start = time.perf_counter()
    subprocess.run(argv, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", "--runs", type=int, default=15)
    parser.add_argument("--root", action="append", type=Path, default=None,
                        help="a checkout to time (repeatable; default: this one)")
    args = parser.parse_args(argv)
    roots = [r.resolve() for r in args.root or [HERE]]
    table = commands(sys.executable)
    times: dict[tuple[Path, str], list[float]] = {(r, k): [] for r in roots for k in table}
    for root in roots:   # a first, untimed run of each: compiled files written, disk cache warm
        for cmd in table.values():
            once(cmd, root)
    for _ in range(args.runs):
        for root in roots:
            for name, cmd in table.items():
                times[root, name].append(once(cmd, root))
    print(f"median of {args.runs} runs, load {os.getloadavg()[0]:.2f} (1 min) at the end")
    for root in roots:
        base = statistics.median(times[root, "import polars, numpy, pyarrow"])
        print(f"\n{root}")
        for name in table:
            med = statistics.median(times[root, name])
            print(f"  {name:34s} {med:6.3f} s   {med - base:+6.3f} s   x{med / base:4.2f} of the import")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
