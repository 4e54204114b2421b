"""Cost of comparing K configurations over a simulated archive: total time and the cost of each extra one.

Prints figures; asserts nothing. Run: ``python benchmarks/bench_compare.py --tournaments 50000``.
The context (dense view, each edition's unplayed-round stage, each distinct tie-break) is shared, so the
first configuration pays for the view and its tie-breaks and every further one only for what it adds.
"""

from __future__ import annotations

import argparse
import resource
import time

from tbstats.analysis.compare import compare
from tbstats.engine.compute import make_context
from tbstats.engine.configs import parse_config, standings
from tbstats.simulation import SimulationConfig, simulate

CONFIGS = [
    "a=fide-2026:BH/C1,BH,SB,DE,WIN", "b=fide-2024:BH/C1,BH,SB,DE,WIN", "c=fide-2026:BH,BH/C1,SB",
    "d=fide-2024:BH,BH/C1,SB", "e=fide-2026:BH/C1,BH/C2,SB", "f=fide-legacy:BH/C1,BH,SB", "g=uscf:BH/C1,BH,SB",
    "h=naive:BH/C1,BH,SB", "i=fide-2026:SB,DE,KS", "j=fide-2026:PS,BH,WIN",
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tournaments", type=int, default=50_000)
    ap.add_argument("--players", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args()
    t0 = time.perf_counter()
    sim = simulate(SimulationConfig(tournaments=args.tournaments, players=args.players, rounds=args.rounds,
                                    seed=args.seed), workers=2)
    batch = sim.batch
    print(f"archive: {args.tournaments} tournaments, {batch.games.height} game rows "
          f"(simulated in {time.perf_counter() - t0:.1f} s)")
    configs = [parse_config(c) for c in CONFIGS]

    t0 = time.perf_counter()
    ctx = make_context(batch)
    print(f"dense view: {time.perf_counter() - t0:.2f} s")
    for c in configs:
        t1 = time.perf_counter()
        standings(ctx, batch, c)
        print(f"  + {c.name} {str(c).split('=', 1)[1]:<32} {time.perf_counter() - t1:6.2f} s")
    t1 = time.perf_counter()
    result = compare(batch, configs, ctx=ctx)
    t_pairs = time.perf_counter() - t1
    total = time.perf_counter() - t0
    print(f"compare(): rankings cached per configuration; {result.pairs.height} pairs of statistics: "
          f"{t_pairs:.2f} s")
    print(f"total for {len(configs)} configurations: {total:.2f} s "
          f"({batch.games.height / total:,.0f} game rows/s)")
    print(f"peak memory (max RSS): {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB")


if __name__ == "__main__":
    main()
