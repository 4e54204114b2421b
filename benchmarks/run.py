"""tbstats benchmark suite: every stage over seeded archives, one table, appended to benchmarks/RESULTS.md.

    python benchmarks/run.py            # default profile: 1k and 10k events, six event shapes (a few minutes)
    python benchmarks/run.py --quick    # 1k events, small shapes, small peer samples (about a minute)
    python benchmarks/run.py --full     # 1k, 10k and 100k events, larger shapes and samples
    python benchmarks/run.py --uniform  # the size sweep on the uniform archive (25 x 9 Swiss) instead of the mix
    python benchmarks/run.py --club     # ... on the club-shaped mix (small Swiss events and round robins)
    python benchmarks/run.py --profile club-wide --sizes 6000   # ... its events larger (issue 22's archive)
    python benchmarks/run.py --trf DIR  # ... on an archive of your own: the TRF files under DIR (never written to)

Each stage runs in a fresh process (``run.py --stage NAME --archive DIR``) so its peak RSS is its own. The size
sweep's archive is the mix (``tbstats.simulation.mix``: event sizes, kinds and unplayed rounds drawn like a real
archive; with ``--club``, its club profile) or, with ``--uniform``, simulated Swiss events of one shape (unrated
players off so rating tie-breaks do full work); all are written as TRF files and ingested with ``tbstats ingest``
before anything is timed (with ``--trf DIR``, the files under DIR are linked in, counted and ingested, untimed).
Side by side: tests/reference.py on a small sample, and FIDE's TieBreakServer when
``TBSTATS_TIEBREAKSERVER`` names a checkout. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from archives import Archive, archive_label, make_archive, make_mix_archive, own_archive, sample_archive
from stages import LABELS, STAGES, STANDARD_LIST, run_stage
from tables import commit, fmt_mb, fmt_rate, fmt_sec, growth_table, machine, shape_table, stage_table, targets

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS.md"
#: The archives' seed unless ``--seed`` says another (every archive of the same arguments is the same).
SEED = 8
#: The shape of the size sweep (about 225 game rows per event, like issue 8's archive).
SIZE_SHAPE = (25, 9)
#: Every stage runs REPEAT times (fresh setup each time) and keeps the fastest, best of 3 as issue 22 asks, at every
#: size: the first call of a process pays page faults on fresh memory, later ones not (on the 100k mix the engine's
#: first call faulted 78-94k pages, later ones 6-25k: benchmarks/RESULTS.md, session of 2026-12-04 22:10). Until
#: then archives over 2.5M game rows ran once, so their figures were first calls, not comparable with the others.
REPEAT = 3
#: Runs of FIDE's checker over its sample (all but one before tbstats' stages, one after): the ratios divide by
#: its fastest, best of 3 as tbstats' own stages.
CHECKER_RUNS = 3
#: What each profile of the mixed archive holds (tbstats.simulation.mix.PROFILES).
MIX_WORDS = {
    "mix": ("78% Swiss of 6-300 players (log-normal, median 24) and 3-13 rounds, 15% round robins of 4-14 players, "
            "5% double round robins of 4-8, 2% team Swiss events; requested byes, PABs, forfeits, withdrawals, 0-30% "
            "unrated players"),
    "club": ("80% Swiss of 7-70 players (log-normal, median 22) and 3-11 rounds, 20% round robins of 4-12 players, "
             "no team events; requested byes, PABs, forfeits, withdrawals, 0-30% unrated players"),
    "club-wide": ("80% Swiss of 7-70 players (log-normal, median 36) and 3-11 rounds, 20% round robins of 4-12 "
                  "players, no team events; requested byes, PABs, forfeits, withdrawals, 0-30% unrated players"),
}
SHAPES = [(20, 5), (20, 13), (60, 9), (150, 11), (600, 5), (600, 13)]
SHAPE_STAGES = ["ingest-cli", "read-sources", "load", "dense", "unplayed", "opponents", "results", "rating", "uscf",
                "de", "standings", "compute", "simulate"]


@dataclass(frozen=True)
class Profile:
    name: str
    sizes: tuple[int, ...]       # events per archive of the size sweep
    shape_rows: int              # about this many game rows per archive of the shape sweep
    reference_events: int        # sample for tests/reference.py
    tbs_files: int               # sample for TieBreakServer


PROFILES = {
    "quick": Profile("quick", (1000,), 60_000, 4, 40),
    "default": Profile("default", (1000, 10_000), 400_000, 40, 500),
    "full": Profile("full", (1000, 10_000, 100_000), 2_000_000, 200, 1000),
}


# ------------------------------------------------------------------------------------------- child side

def child_main(args: argparse.Namespace) -> int:
    if args.stage in ("reference", "tiebreakserver"):
        import peers

        figures = (peers.reference_stage if args.stage == "reference" else peers.tiebreakserver_stage)(
            Path(args.archive), args.rules)
    else:
        figures = run_stage(args.stage, Path(args.archive), args.rules, args.repeat)
    print(json.dumps(figures))
    return 0


def in_child(stage: str, root: Path, rules: str, repeat: int = 1) -> dict[str, Any]:
    """Run one stage in a fresh interpreter; a failure is a row with the error, not the end of the run."""
    done = subprocess.run([sys.executable, str(HERE / "run.py"), "--stage", stage, "--archive", str(root),
                           "--rules", rules, "--repeat", str(repeat)], capture_output=True, text=True, check=False)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        print(f"  {stage}: FAILED ({tail})", file=sys.stderr)
        return {"stage": stage, "error": tail}
    figures: dict[str, Any] = json.loads(lines[-1])
    return figures


def loadavg() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


# ------------------------------------------------------------------------------------------- driver

def wanted(stage: str, only: set[str] | None) -> bool:
    return only is None or stage in only


def run_archive(archive: Archive, rules: str, stages: list[str], label: str, repeat: int | None
                ) -> list[dict[str, Any]]:
    out = []
    meta = archive.meta()
    if repeat is None:
        repeat = REPEAT
    for stage in stages:
        r = in_child(stage, archive.root, rules, repeat)
        r.update(events=meta["events"], shape=(meta["players"], meta["rounds"]), trf_bytes=meta["trf_bytes"],
                 archive=archive_label(meta))
        if "error" not in r:
            print(f"  {label:<14} {LABELS[stage]:<28} {r['seconds']:8.3f} s  "
                  f"{fmt_rate(r['rows'], r['seconds']):>8} rows/s  peak {fmt_mb(r['rss_peak']):>6} MB", file=sys.stderr)
        out.append(r)
    return out


def checker_runs(work: Path, first: Archive, profile: Profile, rules: str, times: int) -> list[dict[str, Any]]:
    """TieBreakServer's checker over its sample of the first archive, ``times`` runs, each in a child process
    (none when no checkout is named)."""
    import peers

    if peers.tiebreakserver_dir() is None:
        return []
    sample = sample_archive(first, work / f"{first.root.name}-sample-{profile.tbs_files}", profile.tbs_files)
    return [in_child("tiebreakserver", sample.root, rules) for _ in range(times)]


def _agreement(results: list[list[Any]], rules: str) -> str:
    """What tbstats agrees with of the checker's outputs (:func:`conformance.add`): ranks of the players of
    individual events and of the teams of team events (also with every team rated alike, as the checker rates
    them), and every value tbstats gives as a value."""
    import conformance

    tally = conformance.Tally()
    for path, result in results:
        conformance.add(tally, Path(path), Path(path).read_bytes(), result, STANDARD_LIST, rules)
    players, players_equal = tally.competitors - tally.teams, tally.equal - tally.teams_equal
    text = (f"ranks equal to tbstats: {players_equal:,}/{players:,} players of individual events, "
            f"{tally.teams_equal:,}/{tally.teams:,} teams of team events")
    if tally.teams_alike != tally.teams_equal:
        text += (f" ({tally.teams_alike:,}/{tally.teams:,} with every team rated alike, as the checker rates them: it"
                 " does not read the 310 strength, so its team ARO is 0 and its TPR the performance difference alone)")
    differ = [f"{name} {ok:,}/{n:,}" for name, (ok, n) in tally.values.items() if ok != n]
    text += "; values equal: " + (", ".join(differ) if differ else
                                  f"all ({sum(n for _, n in tally.values.values()):,} compared)")
    if tally.not_read:
        text += f"; {tally.not_read:,} files not compared (several events, or a list tbstats does not take)"
    return text


def side_by_side(work: Path, first: Archive, profile: Profile, rules: str, sizes: list[dict[str, Any]],
                 use_tbs: bool, early: list[dict[str, Any]] | None = None) -> tuple[list[str], list[str]]:
    """The reference and TieBreakServer beside tbstats. ``early``: the checker's runs before tbstats' stages; it
    is timed once more here, and the fastest run is the one the ratios divide by: best of 3, as tbstats' stages
    (the machine's speed can drift during a run: the ratios are then to the checker at its fastest)."""
    import peers

    lines = ["| implementation | events | game rows | seconds | game rows/s | tbstats / it | CPU s | "
             "game rows per CPU s | tbstats / it (CPU) | note |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    notes: list[str] = []
    ref_sample = sample_archive(first, work / f"{first.root.name}-sample-{profile.reference_events}",
                                profile.reference_events)
    ref = in_child("reference", ref_sample.root, rules)
    if "error" in ref:
        notes.append(f"reference failed: {ref['error']}")
    else:
        ratio = ref["seconds"] / ref["tbstats_seconds"]
        ref_rate = ref["rows"] / ref["seconds"]
        at_scale = [f"{LABELS[r['stage']]} at {r['events']:,} events {r['rows'] / r['seconds'] / ref_rate:,.0f}x"
                    for r in sizes if r["stage"] == "compute" and "error" not in r]
        # (a small batch's CPU time may be below the clock's tick: no ratio then)
        cpu_ratio = f"{ref['cpu'] / ref['tbstats_cpu']:,.0f}x" if ref["tbstats_cpu"] > 0 else "-"
        lines.append(f"| tests/reference.py (Fraction loops) | {ref['events']:,} | {ref['rows']:,} | "
                     f"{fmt_sec(ref['seconds'])} | {fmt_rate(ref['rows'], ref['seconds'])} | {ratio:,.0f}x | "
                     f"{ref['cpu']:.2f} | {fmt_rate(ref['rows'], ref['cpu'])} | {cpu_ratio} | standings of "
                     f"the list; {ref['ranks_equal']:,}/{ref['ranks']:,} ranks equal to tbstats"
                     + "".join(f"; {a}" for a in at_scale) + " |")
        lines.append(f"| tbstats engine.compute, same batch | {ref['events']:,} | {ref['rows']:,} | "
                     f"{fmt_sec(ref['tbstats_seconds'])} | {fmt_rate(ref['rows'], ref['tbstats_seconds'])} | 1x | "
                     f"{ref['tbstats_cpu']:.2f} | {fmt_rate(ref['rows'], ref['tbstats_cpu'])} | 1x | "
                     "small batch: fixed costs dominate |")
    where = peers.tiebreakserver_dir()
    if not use_tbs or where is None:
        notes.append(f"TieBreakServer not run ({'--no-peers' if not use_tbs else peers.ENV_TBS + ' not set'}).")
        return lines, notes
    sample = sample_archive(first, work / f"{first.root.name}-sample-{profile.tbs_files}", profile.tbs_files)
    tbs = in_child("tiebreakserver", sample.root, rules)
    if "error" in tbs:
        notes.append(f"TieBreakServer failed: {tbs['error']}")
        return lines, notes
    before = [r for r in early or [] if "error" not in r]
    if before:
        notes.append(f"TieBreakServer timed {len(before) + 1} times: before tbstats' stages "
                     + " and ".join(fmt_rate(r["rows"], r["seconds"]) for r in before)
                     + f" game rows/s, after them {fmt_rate(tbs['rows'], tbs['seconds'])}; the ratios are to the "
                     "fastest.")
        fastest = min(before, key=lambda r: r["seconds"])
        if fastest["seconds"] < tbs["seconds"]:
            tbs = {**tbs, "seconds": fastest["seconds"], "cpu": fastest["cpu"]}
    mine = in_child("compute-cli", sample.root, rules)
    tbs_rate = tbs["rows"] / tbs["seconds"]
    tbs_cpu_rate = tbs["rows"] / max(tbs["cpu"], 1e-9)

    def versus(r: dict[str, Any]) -> str:
        return (f"{fmt_sec(r['seconds'])} | {fmt_rate(r['rows'], r['seconds'])} | "
                f"{r['rows'] / r['seconds'] / tbs_rate:,.1f}x | {r['cpu']:.2f} | {fmt_rate(r['rows'], r['cpu'])} | "
                + (f"{r['rows'] / r['cpu'] / tbs_cpu_rate:,.1f}x" if r["cpu"] > 0 else "-"))
    lines.append(f"| TieBreakServer {tbs['version']} (one process, {tbs['events']} files) | {tbs['events']:,} | "
                 f"{tbs['rows']:,} | {versus(tbs)} | {tbs['nonzero']} files with a non-zero status; "
                 f"{_agreement(tbs['results'], rules)} |")
    if "error" not in mine:
        lines.append(f"| tbstats compute from TRF (CLI, same files) | {tbs['events']:,} | {mine['rows']:,} | "
                     f"{versus(mine)} | whole process, interpreter start included |")
    for r in sizes:
        if r["stage"] in ("compute-cli", "compute-cli-w2", "compute", "compute-w2") and "error" not in r:
            lines.append(f"| tbstats {LABELS[r['stage']]}, size sweep | {r['events']:,} | {r['rows']:,} | "
                         f"{versus(r)} | |")
    notes.append(f"TieBreakServer from {where}: its checker (tiebreakchecker.py) called once per file in one "
                 f"process (imports, {tbs['import_seconds']:.2f} s, not timed), writing its JSON output per file; "
                 "same list, same files. The ratio columns are tbstats' game rows per second (per CPU second) over "
                 "TieBreakServer's; the CPU ratio is the steadier one when other processes share the CPU.")
    return lines, notes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="1k events, small shapes and samples")
    mode.add_argument("--full", action="store_true", help="adds 100k events (about 22M game rows) and larger shapes")
    sweep = ap.add_mutually_exclusive_group()
    sweep.add_argument("--uniform", action="store_true", help="size sweep on the uniform archive (25 players x 9 "
                       "rounds, Swiss, no unrated players) instead of the mix")
    sweep.add_argument("--club", action="store_true", help="size sweep on the club profile of the mix (Swiss of 7-70 "
                       "players and 3-11 rounds, a fifth round robins, no team events) instead of the whole mix")
    sweep.add_argument("--profile", choices=sorted(MIX_WORDS), help="size sweep on this profile of the mix "
                       "(club-wide: the club's events with larger Swiss events, median 36 players)")
    sweep.add_argument("--trf", metavar="DIR", help="the stages on an archive of your own instead: the TRF files "
                       "under DIR (linked into the work directory, never written to; one size, no simulate stage)")
    ap.add_argument("--rules", default="fide-2026", help="edition of the engine stages (default fide-2026)")
    ap.add_argument("--sizes", help="override the size sweep: events per archive, comma-separated")
    ap.add_argument("--no-shapes", action="store_true", help="skip the shape sweep")
    ap.add_argument("--no-peers", action="store_true", help="skip the reference and TieBreakServer runs")
    ap.add_argument("--stages", help="only these stages (comma-separated ids: " + ", ".join(STAGES) + ")")
    ap.add_argument("--workdir", help="keep (and reuse) the archives here instead of a temporary directory")
    ap.add_argument("--no-write", action="store_true", help="print the tables only; do not append to RESULTS.md")
    ap.add_argument("--results", default=str(RESULTS), help="the file the tables are appended to")
    ap.add_argument("--stage", help=argparse.SUPPRESS)
    ap.add_argument("--archive", help=argparse.SUPPRESS)
    ap.add_argument("--repeat", type=int, help=f"runs per stage, fastest kept (default {REPEAT})")
    ap.add_argument("--seed", type=int, default=SEED,
                    help=f"the seed of the simulated archives (default {SEED}): another seed draws other events of "
                         "the same kind, to check figures on archives never measured before")
    args = ap.parse_args(argv)
    if args.stage:
        args.repeat = args.repeat or 1
        return child_main(args)
    if args.repeat is not None and args.repeat < 1:
        ap.error("--repeat must be at least 1")
    if args.seed < 0:
        ap.error("--seed must be at least 0")
    if args.trf and args.seed != SEED:
        ap.error("--seed does not go with --trf (the archive is what it is)")
    tag = "" if args.seed == SEED else f"-seed{args.seed}"   # (archives of the default seed keep their names)

    profile = PROFILES["quick" if args.quick else "full" if args.full else "default"]
    if args.trf and args.sizes:
        ap.error("--sizes does not go with --trf (the archive is what it is)")
    sizes = tuple(int(s) for s in args.sizes.split(",")) if args.sizes else profile.sizes
    only = {s.strip() for s in args.stages.split(",")} if args.stages else None
    unknown = (only or set()) - set(STAGES)
    if unknown:
        ap.error(f"unknown stage(s) {', '.join(sorted(unknown))}; stages: {', '.join(STAGES)}")
    started = dt.datetime.now(dt.UTC)
    load0 = loadavg()
    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="tbstats-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        size_rows: list[dict[str, Any]] = []
        archives = []
        early: list[dict[str, Any]] = []
        if args.trf:
            print(f"archive: the TRF files under {args.trf} (counting, untimed)", file=sys.stderr)
            own = own_archive(Path(args.trf), work / f"own-{Path(args.trf).resolve().name}")
            sizes = (own.meta()["events"],)
        for events in sizes:
            if args.trf:
                archive = own
            elif args.uniform:
                print(f"archive: {events:,} events {SIZE_SHAPE[0]}×{SIZE_SHAPE[1]} (writing TRF, untimed)",
                      file=sys.stderr)
                archive = make_archive(work / f"size-{events}{tag}", events=events, players=SIZE_SHAPE[0],
                                       rounds=SIZE_SHAPE[1], seed=args.seed)
            else:
                name = mix_name(args)
                print(f"archive: {events:,} events, {name} (writing TRF, untimed)", file=sys.stderr)
                archive = make_mix_archive(work / f"{name}-{events}{tag}", events=events, seed=args.seed,
                                           profile=name)
            archives.append(archive)
            if len(archives) == 1 and not args.no_peers:   # the checker before the stages too (the machine drifts)
                early = checker_runs(work, archive, profile, args.rules, CHECKER_RUNS - 1)
            stages = ["ingest-cli", *(s for s in STAGES if s != "ingest-cli" and wanted(s, only)
                                      and not (args.trf and s == "simulate"))]   # (it simulates the same shape)
            size_rows += run_archive(archive, args.rules, stages, f"{events:,} ev", args.repeat)
        shape_rows: list[dict[str, Any]] = []
        shape_events: dict[tuple[int, int], int] = {}
        shapes = [] if args.no_shapes else SHAPES
        for p, r in shapes:
            events = max(1, profile.shape_rows // (p * r))
            shape_events[(p, r)] = events
            print(f"archive: {events:,} events {p}×{r} (writing TRF, untimed)", file=sys.stderr)
            archive = make_archive(work / f"shape-{p}x{r}-{events}{tag}", events=events, players=p, rounds=r,
                                   seed=args.seed)
            stages = ["ingest-cli", *(s for s in SHAPE_STAGES if s != "ingest-cli" and wanted(s, only))]
            shape_rows += run_archive(archive, args.rules, stages, f"{p}×{r}", args.repeat)
        peer_lines: list[str] = []
        notes: list[str] = []
        if not args.no_peers and archives:
            print("side by side: reference and TieBreakServer", file=sys.stderr)
            peer_lines, notes = side_by_side(work, archives[0], profile, args.rules, size_rows,
                                             use_tbs=not args.no_peers, early=early)
    finally:
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)
    load1 = loadavg()
    own_meta = archives[0].meta() if args.trf and archives else None
    report = render(profile, args, started, (load0, load1), size_rows, sizes, shape_rows, shapes, shape_events,
                    peer_lines, notes, own_meta)
    print("\n".join(report))
    if not args.no_write:
        path = Path(args.results)
        if not path.exists():
            path.write_text("# Benchmark results\n\nAppended by `python benchmarks/run.py` (see README.md in this "
                            "directory); newest last. Figures are from the machine named in each entry.\n")
        with path.open("a", encoding="utf-8") as f:
            f.write("\n" + "\n".join(report) + "\n")
        print(f"appended to {path}", file=sys.stderr)
    return 1 if any("error" in r for r in size_rows + shape_rows) else 0


def render(profile: Profile, args: argparse.Namespace, started: dt.datetime, loads: tuple[float, float],
           size_rows: list[dict[str, Any]], sizes: tuple[int, ...], shape_rows: list[dict[str, Any]],
           shapes: list[tuple[int, int]], shape_events: dict[tuple[int, int], int], peer_lines: list[str],
           notes: list[str], own: dict[str, Any] | None = None) -> list[str]:
    m = machine()
    cores = os.cpu_count() or 1
    shared = max(loads) > 0.5 * cores
    command = "python benchmarks/run.py " + " ".join(argv_of(args))
    custom = ", custom selection" if args.sizes or args.stages or args.no_shapes or args.no_peers else ""
    sweep = (f"archive under {own['source']}" if own else
             f"uniform {SIZE_SHAPE[0]}×{SIZE_SHAPE[1]} Swiss archive" if args.uniform else f"{mix_name(args)} archive")
    drawn = (f"{own['files']:,} files read, {own['rejected']:,} rejected and {own['skipped']:,} skipped by tbstats "
             "(their rows are not counted)" if own else
             f"seed {args.seed}; " + ("no unrated players" if args.uniform else MIX_WORDS[mix_name(args)]))
    out = [f"## {started:%Y-%m-%d %H:%M} UTC · profile {profile.name}{custom} · size sweep on the {sweep} · "
           f"commit {commit()}", "",
           f"- command: `{command.strip()}`; rules {args.rules}; list `{STANDARD_LIST}`",
           f"- machine: {m['cpu']}, {m['cores']} cores, {m['ram']} RAM, {m['os']}; Python {m['python']}, "
           f"numpy {m['numpy']}, polars {m['polars']}, pyarrow {m['pyarrow']}",
           f"- load average (1 min) {loads[0]:.2f} at the start, {loads[1]:.2f} at the end on {cores} cores"
           + (": **other processes shared the CPU**, so times are pessimistic (compare seconds with CPU s)"
              if shared else ""),
           f"- archives: size sweep on the {sweep} ({drawn}); shape sweep on uniform simulated Swiss archives (no "
           "unrated players); all written as TRF (yours read where they are) and ingested before timing; every "
           "stage in a fresh process; RSS before = resident set when the timer starts (input loaded); peak RSS = "
           "maximum resident set while the stage runs (of the command, for the CLI stages); bytes/game row = peak "
           "RSS / game rows; stage bytes/game row = (peak − before) / game rows", ""]
    if size_rows:
        out += [f"### Stages by archive size ({sweep})", "",
                *stage_table(size_rows), ""]
        out += [*targets(size_rows, sizes), ""]
        if len(sizes) > 1:
            out += ["### Growth with the archive", "",
                    f"{sweep}: µs per game row at each size; `B vs A` = (time per row at B) / (time per row at A), "
                    "1.00 = linear (issue 8 target for 100k vs 10k: at most 1.20); (CPU) the same in CPU "
                    "time, steadier when other processes share the CPU.", "",
                    *growth_table(size_rows, sizes), ""]
    if shape_rows:
        out += ["### Shape of the event (players × rounds), uniform Swiss archives of about "
                f"{profile.shape_rows:,} game rows", "",
                *shape_table(shape_rows, shapes, shape_events, SHAPE_STAGES), ""]
    if peer_lines:
        out += [f"### Side by side (first events of the {sizes[0]:,}-event {sweep})", "", *peer_lines, ""]
    out += [f"- {n}" for n in notes]
    return out


def mix_name(args: argparse.Namespace) -> str:
    """The profile of the mixed archive the size sweep runs on (tbstats.simulation.mix.PROFILES)."""
    return str(args.profile) if args.profile else "club" if args.club else "mix"


def argv_of(args: argparse.Namespace) -> list[str]:
    flags = ["--quick"] if args.quick else ["--full"] if args.full else []
    for name in ("rules", "sizes", "stages"):
        value = getattr(args, name)
        if value and not (name == "rules" and value == "fide-2026"):
            flags.append(f"--{name} {value}")
    flags += [f"--{n.replace('_', '-')}" for n in ("uniform", "club", "no_shapes", "no_peers") if getattr(args, n)]
    if args.profile:
        flags.append(f"--profile {args.profile}")
    if args.trf:
        flags.append(f"--trf {args.trf}")
    if args.repeat is not None:
        flags.append(f"--repeat {args.repeat}")
    if args.seed != SEED:
        flags.append(f"--seed {args.seed}")
    return flags


if __name__ == "__main__":
    raise SystemExit(main())
