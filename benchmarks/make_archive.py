"""Write a large simulated archive in bounded memory, a block of events at a time (benchmark input).

Run: ``python benchmarks/make_archive.py OUT --tournaments 400000 --players 36 --rounds 7`` (the uniform
archive: one shape) or ``python benchmarks/make_archive.py OUT --mix --tournaments 100000`` (the mixed archive of
``tbstats.simulation.mix``: sizes, kinds, byes, forfeits, withdrawals and unrated players drawn per event;
``--profile club`` for its club profile; ``--players``/``--rounds`` are ignored). ``OUT`` is a directory
(part-file dataset, as ``ingest`` writes) or a ``.parquet`` file (one flat table). Each block is simulated with
its own seed (uniform: ``seed + block``; mix: the block's own stream of ``seed``), so the archive is the same for
the same arguments.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

from tbstats.io.tabular import ArchiveWriter
from tbstats.simulation import SimulationConfig, iter_mix, simulate
from tbstats.simulation.mix import PROFILES, profile_config


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--tournaments", type=int, default=40_000)
    ap.add_argument("--players", type=int, default=36)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--block", type=int, help="events per block (default 10,000; mix: MixConfig's default, which "
                    "is part of its random stream)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--mix", action="store_true", help="the mixed archive (tbstats.simulation.mix) of this seed")
    ap.add_argument("--profile", choices=sorted(PROFILES), default="mix", help="with --mix: which profile of it")
    args = ap.parse_args()
    t0 = time.perf_counter()
    rows = 0
    with ArchiveWriter(args.out) as writer:
        if args.mix:
            config = profile_config(args.profile, events=args.tournaments, seed=args.seed)
            if args.block:
                config = dataclasses.replace(config, block=args.block)
            for block in iter_mix(config):
                writer.write(block.batch)
                rows += block.batch.games.height
        else:
            step = args.block or 10_000
            for k, first in enumerate(range(0, args.tournaments, step)):
                n = min(step, args.tournaments - first)
                batch = simulate(SimulationConfig(tournaments=n, players=args.players, rounds=args.rounds,
                                                  seed=args.seed + k), workers=args.workers).batch
                writer.write(batch)
                rows += batch.games.height
    print(f"{args.out}: {args.tournaments} tournaments, {rows} game rows in {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
