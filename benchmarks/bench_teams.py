"""Throughput of the team engine on generated team Swiss events.

Prints figures; it asserts nothing. Run: ``python benchmarks/bench_teams.py --events 10000``.

Each event has ``--teams`` teams of ``--boards`` boards plus one reserve, ``--rounds`` rounds paired at random
(no rematch check), a team PAB (320) for the odd team out, a forfeited match (330) now and then, requested
team byes (240) and board forfeits. The events are written as TRF text (not timed) and read once; then timed:
the team model (``build_teams``), the MP/GP team views, each team tie-break of the list over all events at
once, and the whole ``compute_teams`` table. Each figure is wall time and, in brackets, CPU time (user + system
of this process, all threads: the one to compare on a shared machine).
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np

from tbstats.engine.teams.standings import compute_teams, make_team_context, team_rank_steps
from tbstats.engine.teams.tiebreaks import parse_team_specs
from tbstats.io.trf import read_trf
from tbstats.model.teams.batch import build_teams

LIST = "MPvGP,EDE,BH:MP,BH:MP/C1,BH:GP,EMMSB/C1,EMGSB,EGGSB,SB:MP,BC,TBR,BBE,SSSC"
RESULTS = np.array(["1", "=", "0", "1", "=", "0", "+", "-"])
OTHER = {"1": "0", "=": "=", "0": "1", "+": "-", "-": "+"}


class Timer:
    """Wall and CPU seconds since creation."""

    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def seconds(self) -> tuple[float, float]:
        return time.perf_counter() - self.wall, time.process_time() - self.cpu

    def __str__(self) -> str:
        wall, cpu = self.seconds()
        return f"{wall:.2f} s (CPU {cpu:.2f} s)"


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def event_text(rng: np.random.Generator, k: int, teams: int, boards: int, rounds: int) -> str:
    members = {t: list(range((t - 1) * (boards + 1) + 1, t * (boards + 1) + 1)) for t in range(1, teams + 1)}
    blocks: dict[int, list[str]] = {p: [] for ps in members.values() for p in ps}
    records, pab = [], []
    for r in range(1, rounds + 1):
        order = [int(t) for t in rng.permutation(teams) + 1]
        requested = [t for t in order[:-1] if rng.random() < 0.02]
        for t in requested:
            records.append(f"240 H {r:3d} {t:4d}")
            for p in members[t]:
                blocks[p].append("0000 - -")
        playing = [t for t in order if t not in requested]
        if len(playing) % 2:
            bye = playing.pop()
            pab.append(bye)
            for p in members[bye]:
                blocks[p].append("0000 - -")
        else:
            pab.append(0)
        for i in range(0, len(playing), 2):
            white, black = playing[i], playing[i + 1]
            if rng.random() < 0.03:
                records.append(f"330 +- {r:3d} {white:3d} {black:3d}")
                for t, res in ((white, "+"), (black, "-")):
                    for j, p in enumerate(members[t]):
                        blocks[p].append(f"0000 - {res if j < boards else '-'}")
                continue
            sit_w, sit_b = rng.integers(0, boards + 1, size=2)
            lw = [p for j, p in enumerate(members[white]) if j != sit_w]
            lb = [p for j, p in enumerate(members[black]) if j != sit_b]
            drawn = RESULTS[rng.integers(0, len(RESULTS), size=boards)]
            for b in range(boards):
                wc, bc = ("w", "b") if b % 2 == 0 else ("b", "w")
                blocks[lw[b]].append(f"{lb[b]:4d} {wc} {drawn[b]}")
                blocks[lb[b]].append(f"{lw[b]:4d} {bc} {OTHER[str(drawn[b])]}")
            blocks[members[white][sit_w]].append("0000 - -")
            blocks[members[black][sit_b]].append("0000 - -")
    lines = [f"012 bench team event {k}", "042 2026/05/01", f"142 {rounds}", "192 FIDE_TEAM_MP_GP",
             "362 TW 2.0   TD 1.0   TL 0.0"]
    for t, ps in members.items():
        for p in ps:
            lines.append(f"001 {p:4d}      {f'P{p}':<33} {2400 - p:4d} {'':3} {'':11} {'':10} {'':4} {'':4}  "
                         + "  ".join(blocks[p]))
        lines.append(f"310 {t:3d} {f'T{t}':<32} {'':5} {2400 - ps[0]:6d} {'':6} {'':6} {'':3}  "
                     + " ".join(f"{p:4d}" for p in ps))
    lines.append("320  1.0  2.0" + "".join(f"{t:4d}" for t in pab))
    return "\n".join(lines + records) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=10_000)
    ap.add_argument("--teams", type=int, default=11)
    ap.add_argument("--boards", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--rules", default="fide-2026")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    texts = [(f"e{k}.trf", event_text(rng, k, args.teams, args.boards, args.rounds).encode())
             for k in range(args.events)]
    batch = read_trf(texts).batch
    print(f"archive: {args.events} team events, {args.events * args.teams} teams, {batch.players.height} players, "
          f"{batch.games.height} game rows (generated and read in {time.perf_counter() - t0:.1f} s)")

    timer = Timer()
    tb = build_teams(batch)
    dt_model = timer.seconds()[0]
    matches = tb.matches.height
    print(f"team model: {timer} ({matches / dt_model:,.0f} team-rounds/s, {tb.boards.height} boards)")

    timer = Timer()
    tc = make_team_context(batch, tb)
    print(f"team views (MP, GP, boards): {timer}")

    specs = parse_team_specs(LIST)
    for spec in specs:
        timer = Timer()
        team_rank_steps(tc, [spec], args.rules)
        wall, cpu = timer.seconds()
        print(f"  {str(spec).replace('MPVGP', 'MPvGP'):10s} {wall:6.3f} s (CPU {cpu:6.3f} s)")

    timer = Timer()
    table = compute_teams(batch, LIST, rules=args.rules, teams=tb)
    dt = timer.seconds()[0]
    print(f"compute_teams ({LIST}), model built: {timer} for {table.height} team rows "
          f"({matches / dt:,.0f} team-rounds/s); peak memory {peak_mb():.0f} MB")


if __name__ == "__main__":
    main()
