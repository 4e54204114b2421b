"""Throughput of the tournament simulator: game rows per second and peak memory.

    python benchmarks/bench_simulate.py                       # 10,000 Swiss events, 60 players, 9 rounds
    python benchmarks/bench_simulate.py -t 100000 --workers 2
    python benchmarks/bench_simulate.py --kind round_robin -p 10 --json

"Game rows" are rows of the games table (one per player and round); "boards" are paired games. Peak memory is
the process's maximum resident set size (it includes polars' native allocations, which tracemalloc misses).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time

from tbstats.simulation import SimulationConfig, simulate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-t", "--tournaments", type=int, default=10_000)
    parser.add_argument("-p", "--players", type=int, default=60)
    parser.add_argument("-r", "--rounds", type=int, default=None, help="default: 9 (Swiss), one cycle (RR)")
    parser.add_argument("--kind", choices=("swiss", "round_robin"), default="swiss")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1, help="threads over blocks of tournaments")
    parser.add_argument("--json", action="store_true", help="print one JSON line instead of text")
    args = parser.parse_args(argv)

    cfg = SimulationConfig(tournaments=args.tournaments, players=args.players, rounds=args.rounds,
                           kind=args.kind, seed=args.seed)
    start = time.perf_counter()
    sim = simulate(cfg, workers=args.workers)
    seconds = time.perf_counter() - start
    rows = sim.batch.games.height
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 if sys.platform == "darwin" else 1024)
    figures = {
        "kind": cfg.kind, "tournaments": cfg.tournaments, "players": cfg.players, "rounds": cfg.n_rounds,
        "workers": args.workers, "seconds": round(seconds, 3), "game_rows": rows,
        "game_rows_per_s": round(rows / seconds), "boards_per_s": round(sim.stats.pairs / seconds),
        "tournaments_per_s": round(cfg.tournaments / seconds, 1), "peak_rss_mb": round(peak / 2**20),
        **{f"stats_{k}": v for k, v in vars(sim.stats).items()},
    }
    if args.json:
        print(json.dumps(figures))
        return 0
    print(f"{cfg.tournaments:,} {cfg.kind} events x {cfg.players} players x {cfg.n_rounds} rounds "
          f"({args.workers} worker(s)): {seconds:.2f} s")
    print(f"  {rows / seconds:,.0f} game rows/s   {sim.stats.pairs / seconds:,.0f} boards/s   "
          f"{cfg.tournaments / seconds:,.0f} events/s")
    print(f"  peak RSS {peak / 2**20:,.0f} MiB")
    print("  pairing: " + ", ".join(f"{k}={v:,}" for k, v in vars(sim.stats).items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
