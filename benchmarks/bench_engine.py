"""Throughput of ingest (TRF bytes -> columnar model) and of the tie-break engine, on a simulated archive.

Prints figures; it asserts nothing. Run: ``python benchmarks/bench_engine.py --tournaments 5000``.

- ingest: the archive is written as TRF text once (not timed), then read back by ``read_trf`` in chunks
  of ``--batch-files`` files, as ``tbstats ingest`` does: game rows per second.
- engine: the standard Swiss list ``BH/C1,BH,SB,PS,WIN,ARO,TPR,KS,AOB,FB,DE`` from the columnar model:
  game rows per second, and each kernel family's share of the time; then the whole ``compute()`` table
  on one and on two threads (runs of whole tournaments per thread).
"""

from __future__ import annotations

import argparse
import resource
import time
from collections import defaultdict

from tbstats.api import compute, make_context
from tbstats.io.trf import read_trf, write_trf
from tbstats.simulate import SimulationConfig, simulate
from tbstats.standings import rank_steps
from tbstats.tiebreaks import FIXED_EDITION, get_tiebreak, kernel_of, parse_specs

STANDARD_LIST = "BH/C1,BH,SB,PS,WIN,ARO,TPR,KS,AOB,FB,DE"


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tournaments", type=int, default=5000)
    ap.add_argument("--players", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--batch-files", type=int, default=2000)
    ap.add_argument("--rules", default="fide-2026")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    t0 = time.perf_counter()
    sim = simulate(SimulationConfig(tournaments=args.tournaments, players=args.players, rounds=args.rounds,
                                    seed=args.seed, unrated_rate=0.0), workers=2)
    batch = sim.batch
    rows = batch.games.height
    print(f"archive: {args.tournaments} tournaments, {batch.players.height} players, {rows} game rows "
          f"(simulated in {time.perf_counter() - t0:.1f} s)")

    # ---- ingest
    texts = [(src, text.encode()) for src, text in write_trf(batch).items()]
    size = sum(len(b) for _, b in texts)
    t0 = time.perf_counter()
    read_rows = 0
    for lo in range(0, len(texts), args.batch_files):
        result = read_trf(texts[lo:lo + args.batch_files], first_id=lo)
        assert result.errors.is_empty()
        read_rows += result.batch.games.height
    dt = time.perf_counter() - t0
    print(f"ingest: {len(texts)} TRF files, {size / 1e6:.1f} MB, {read_rows} game rows in {dt:.2f} s "
          f"= {read_rows / dt:,.0f} game rows/s ({len(texts) / dt:,.0f} files/s)")

    # ---- engine
    specs = parse_specs(STANDARD_LIST)
    t0 = time.perf_counter()
    ctx = make_context(batch)
    t_dense = time.perf_counter() - t0
    family_time: dict[str, float] = defaultdict(float)
    family_time["dense view"] = t_dense
    for spec in specs:
        tb = get_tiebreak(spec.name)
        if tb.kind == "partition":
            continue
        t1 = time.perf_counter()
        ctx.values(spec, FIXED_EDITION.get(spec.name, args.rules), kernel_of(spec.name))
        family_time[_family(spec.name)] += time.perf_counter() - t1
    t1 = time.perf_counter()
    rank_steps(ctx, specs, args.rules)
    family_time["standings (incl. DE)"] += time.perf_counter() - t1
    total = time.perf_counter() - t0
    print(f"engine: {STANDARD_LIST} under {args.rules}: {total:.2f} s = {rows / total:,.0f} game rows/s")
    for family, seconds in sorted(family_time.items(), key=lambda kv: -kv[1]):
        print(f"  {family:<28} {seconds:6.2f} s  {100 * seconds / total:5.1f}%")
    # the whole compute() table (context, values, ranks, polars output), on one and on two threads
    for workers in (1, 2):
        t0 = time.perf_counter()
        compute(batch, STANDARD_LIST, rules=args.rules, workers=workers)
        dt = time.perf_counter() - t0
        print(f"compute() table, {workers} thread(s): {dt:.2f} s = {rows / dt:,.0f} game rows/s")
    print(f"peak memory (max RSS): {peak_mb():,.0f} MB")


def _family(name: str) -> str:
    if name in ("BH", "FB", "AOB", "SB", "KS"):
        return "opponents (BH, FB, AOB, SB, KS)"
    if name in ("ARO", "TPR", "PTP", "APRO", "APPO", "RTNG"):
        return "rating (ARO, TPR)"
    return "own results (PS, WIN)"


if __name__ == "__main__":
    main()
