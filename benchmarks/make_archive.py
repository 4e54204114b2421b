"""Write a large simulated archive in bounded memory, a block of events at a time (benchmark input).

Run: ``python benchmarks/make_archive.py OUT --tournaments 400000 --players 36 --rounds 7``. ``OUT`` is a
directory (part-file dataset, as ``ingest`` writes) or a ``.parquet`` file (one flat table). Each block is
simulated with its own seed (``seed + block``), so the archive is the same for the same arguments.
"""

from __future__ import annotations

import argparse
import time

from tbstats.io.tabular import ArchiveWriter
from tbstats.simulation import SimulationConfig, simulate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--tournaments", type=int, default=40_000)
    ap.add_argument("--players", type=int, default=36)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--block", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    t0 = time.perf_counter()
    rows = 0
    with ArchiveWriter(args.out) as writer:
        for k, first in enumerate(range(0, args.tournaments, args.block)):
            n = min(args.block, args.tournaments - first)
            batch = simulate(SimulationConfig(tournaments=n, players=args.players, rounds=args.rounds,
                                              seed=args.seed + k), workers=args.workers).batch
            writer.write(batch)
            rows += batch.games.height
    print(f"{args.out}: {args.tournaments} tournaments, {rows} game rows in {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
