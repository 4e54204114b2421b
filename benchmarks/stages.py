"""The benchmark stages: what each one times, run in a fresh process by ``run.py --stage NAME``.

Every stage loads its input untimed (the model written by ``tbstats ingest``, or the TRF files), then times
one public entry point with ``time.perf_counter`` and prints one JSON line: seconds, CPU seconds, game rows,
the RSS when the timer starts, the peak RSS while it runs (the peak is reset first where Linux allows), and
a note. Stages that run a ``tbstats`` command
time the whole child process and report the CPU time and peak RSS of it and every process it starts: on Linux
this process adopts the ones left behind (the forkserver of ``--workers N`` outlives the command for a moment,
and its workers' CPU time is its children's), and waits for them before reading the children's usage.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archives import Archive, mix_profile

#: The tie-break list of issue 8 (the standard Swiss list).
STANDARD_LIST = "BH/C1,BH,SB,PS,WIN,ARO,TPR,KS,AOB,FB,DE"
#: Kernel families: the value tie-breaks timed together (DE and standings are their own stages).
FAMILIES = {
    "opponents": "BH/C1,BH,FB,AOB,SB,KS",
    "results": "PS,WIN",
    "rating": "ARO,TPR",
    "uscf": "USCF-MM,USCF-SOLKOFF,USCF-MEDIAN,USCF-CUM,USCF-OPPCUM,USCF-SB,USCF-KASHDAN",
}
#: Ten configurations for the compare stage.
CONFIGS = [
    "a=fide-2026:BH/C1,BH,SB,DE,WIN", "b=fide-2024:BH/C1,BH,SB,DE,WIN", "c=fide-2026:BH,BH/C1,SB",
    "d=fide-2024:BH,BH/C1,SB", "e=fide-2026:BH/C1,BH/C2,SB", "f=fide-legacy:BH/C1,BH,SB", "g=uscf:BH/C1,BH,SB",
    "h=naive:BH/C1,BH,SB", "i=fide-2026:SB,DE,KS", "j=fide-2026:PS,BH,WIN",
]
BATCH_FILES = 2000


# ------------------------------------------------------------------------------------------ measurement

def _maxrss(who: int) -> int:
    """Peak RSS in bytes (ru_maxrss is in KiB on Linux, bytes on macOS)."""
    return resource.getrusage(who).ru_maxrss * (1 if sys.platform == "darwin" else 1024)


def _own_rss(peak: bool) -> int:
    """This process's resident set (``VmRSS``) or its peak (``VmHWM``) in bytes, from /proc/self/status.

    ``ru_maxrss`` is not used for the process itself: on Linux it also holds the peak of the memory the
    process replaced at exec (the forking parent's), which would show the driver's own peak in every stage.
    """
    key = "VmHWM:" if peak else "VmRSS:"
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(key):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return _maxrss(resource.RUSAGE_SELF)


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def _adopt_orphans() -> bool:
    """Make this process the reaper of its descendants whose parent exits (Linux's child subreaper), so that
    their CPU time counts in ``RUSAGE_CHILDREN`` once :func:`_reap_orphans` waits for them; True when it is."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        return int(ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)) == 0   # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def _reap_orphans(timeout: float = 10.0) -> None:
    """Wait for the adopted descendants (a forkserver exits once its command has: its pipe closes)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return   # none left
        if not pid:
            time.sleep(0.01)


def _reset_peak() -> bool:
    """Reset this process's peak RSS to its current RSS (Linux >= 4.0), so a stage's peak is its own and not
    that of loading its input; elsewhere the peak stays the process's since it started."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


@dataclass
class Clock:
    """Times one block; ``children`` measures the child processes (a ``tbstats`` command) instead."""

    children: bool = False
    seconds: float = 0.0
    cpu: float = 0.0
    rss_before: int = 0
    rss_peak: int = 0
    _t0: float = field(default=0.0, repr=False)
    _c0: float = field(default=0.0, repr=False)

    @property
    def who(self) -> int:
        return resource.RUSAGE_CHILDREN if self.children else resource.RUSAGE_SELF

    def __enter__(self) -> Clock:
        if self.children:
            _adopt_orphans()
        else:
            _reset_peak()
        self.rss_before = 0 if self.children else _own_rss(peak=False)
        self._c0 = _cpu(self.who)
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self._t0
        if self.children:
            _reap_orphans()
        self.cpu = _cpu(self.who) - self._c0
        self.rss_peak = _maxrss(self.who) if self.children else _own_rss(peak=True)


Stage = Callable[[Archive, str, Clock], tuple[int, str]]


def _batch(archive: Archive) -> Any:
    from tbstats.io.tabular import read_model

    return read_model(archive.model)


def command_ran(returncode: int, stderr: str | bytes) -> bool:
    """Whether a tbstats child process ran its command: exit code 0, or 1 when it ran and some inputs were rejected
    (a real archive's bad files), but not a crash, whose traceback exits with 1 too (an import that failed, say,
    exits in a fifth of a second: a figure that looks like a fast run)."""
    text = stderr.decode(errors="replace") if isinstance(stderr, bytes) else stderr
    return returncode == 0 or (returncode == 1 and "Traceback (most recent call last)" not in text)


def _tbstats(*args: str) -> None:
    """Run a tbstats command; exit code 1 (it ran, some inputs were rejected: a real archive's bad files) passes."""
    done = subprocess.run([sys.executable, "-m", "tbstats", *args], capture_output=True, text=True, check=False)
    if not command_ran(done.returncode, done.stderr):
        raise SystemExit(f"tbstats {' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}")


# ----------------------------------------------------------------------------------------------- stages

def ingest_cli(archive: Archive, rules: str, clock: Clock) -> tuple[int, str]:
    """``tbstats ingest TRF_DIR -o MODEL_DIR`` as a child process, end to end (it writes the model)."""
    if archive.model.exists():
        shutil.rmtree(archive.model)
    with clock:
        _tbstats("ingest", str(archive.trf), "-o", str(archive.model), "-q")
    return archive.meta()["game_rows"], "whole process"


def _compute_cli(workers: int) -> Stage:
    def stage(archive: Archive, rules: str, clock: Clock) -> tuple[int, str]:
        out = archive.root / "out.parquet"
        with clock:
            _tbstats("compute", str(archive.trf), "--rules", rules, "-t", STANDARD_LIST, "--format", "parquet",
                     "-o", str(out), "-q", "--workers", str(workers))
        out.unlink()
        return archive.meta()["game_rows"], "whole process" if workers == 1 else f"whole process, workers={workers}"

    stage.__doc__ = ("``tbstats compute TRF_DIR --rules R -t LIST --format parquet -o out.parquet"
                     f"{'' if workers == 1 else f' --workers {workers}'}`` as a child process.")
    return stage


def read_sources(archive: Archive, rules: str, clock: Clock) -> tuple[int, str]:
    """``tbstats.io.sources.iter_batches`` over the TRF directory (files read from disk, 2,000 per batch)."""
    from tbstats.io.sources import iter_batches

    rows = problems = 0
    with clock:
        for batch, ledger in iter_batches([str(archive.trf)], batch_files=BATCH_FILES):
            rows += batch.games.height
            problems += ledger.height
    return rows, f"{problems} problems" if problems else ""


def read_bytes(archive: Archive, rules: str, clock: Clock) -> tuple[int, str]:
    """``read_trf`` on the files' bytes already in memory, 2,000 files per call."""
    from tbstats.io.trf import read_trf

    files = archive.trf_files()
    raw = [(str(p), p.read_bytes()) for p in files]
    rows = 0
    with clock:
        for lo in range(0, len(raw), BATCH_FILES):
            rows += read_trf(raw[lo:lo + BATCH_FILES], first_id=lo).batch.games.height
    return rows, ""


def load_parquet(archive: Archive, rules: str, clock: Clock) -> tuple[int, str]:
    """``tabular.read_model`` of the model directory ``tbstats ingest`` wrote."""
    from tbstats.io.tabular import read_model

    with clock:
        batch = read_model(archive.model)
    return batch.games.height, ""


def dense(archive: Archive, rules: str, clock: Clock) -> tuple[int, str]:
    """``build_buckets``: the players x rounds view of the whole archive as one batch, bucketed by round count
    (what :func:`tbstats.engine.compute.make_context` builds; ``build_dense`` adds a padded copy on top)."""
    from tbstats.model.dense import build_buckets

    batch = _batch(archive)
    with clock:
        build_buckets(batch)
    return batch.games.height, "bucketed by round count"


def unplayed(archive: Archive, rules: str, clock: Clock) -> tuple[int, str]:
    """``apply_rules(dense, get_ruleset(rules))``: the unplayed-round stage of one edition (categories incl.)."""
    from tbstats.engine.unplayed import apply_rules
    from tbstats.model.dense import build_dense
    from tbstats.model.rules import get_ruleset

    batch = _batch(archive)
    d = build_dense(batch)
    ruleset = get_ruleset(rules)
    with clock:
        apply_rules(d, ruleset)
    return batch.games.height, ruleset.name


def _context(archive: Archive) -> tuple[Any, Any]:
    from tbstats.engine.compute import make_context

    batch = _batch(archive)
    return batch, make_context(batch)


def _warm_unplayed(ctx: Any, edition: str) -> str:
    """Build the unplayed-round stage of ``edition`` before the timer, when the context exposes it."""
    if hasattr(ctx, "elements"):
        ctx.elements(edition)
        return ""
    return "unplayed stage included (no Context.elements)"


def _family(name: str) -> Stage:
    def stage(archive: Archive, rules: str, clock: Clock) -> tuple[int, str]:
        from tbstats.engine.compute import tiebreak_values
        from tbstats.engine.tiebreaks import FIXED_EDITION, parse_specs

        batch, ctx = _context(archive)
        specs = parse_specs(FAMILIES[name])
        editions = {FIXED_EDITION.get(s.name, rules) for s in specs}
        note = "; ".join(filter(None, (_warm_unplayed(ctx, e) for e in sorted(editions))))
        with clock:
            for spec in specs:
                tiebreak_values(ctx, spec, rules)
        return batch.games.height, note or FAMILIES[name]

    stage.__doc__ = f"kernels {FAMILIES[name]} via ``tbstats.engine.compute.tiebreak_values`` (dense view and " \
                    "unplayed stage built before the timer)."
    return stage


def direct_encounter(archive: Archive, rules: str, clock: Clock) -> tuple[int, str]:
    """``rank_steps(ctx, [DE])``: points, then Direct Encounter in every tied group (points built before)."""
    from tbstats.engine.compute import tiebreak_values
    from tbstats.engine.standings import rank_steps
    from tbstats.engine.tiebreaks import parse_specs

    batch, ctx = _context(archive)
    tiebreak_values(ctx, parse_specs("PTS")[0], rules)
    specs = parse_specs("DE")
    with clock:
        rank_steps(ctx, specs, rules)
    return batch.games.height, ""


def standings(archive: Archive, rules: str, clock: Clock) -> tuple[int, str]:
    """``rank_steps`` over the standard list with every value already computed: ranking and DE only."""
    from tbstats.engine.compute import tiebreak_values
    from tbstats.engine.standings import rank_steps
    from tbstats.engine.tiebreaks import get_tiebreak, parse_specs

    batch, ctx = _context(archive)
    specs = parse_specs(STANDARD_LIST)
    for spec in parse_specs(["PTS", STANDARD_LIST]):
        if get_tiebreak(spec.name).kind == "value":
            tiebreak_values(ctx, spec, rules)
    with clock:
        rank_steps(ctx, specs, rules)
    return batch.games.height, ""


def _compute(workers: int) -> Stage:
    def stage(archive: Archive, rules: str, clock: Clock) -> tuple[int, str]:
        from tbstats.engine.compute import compute

        batch = _batch(archive)
        with clock:
            compute(batch, STANDARD_LIST, rules=rules, workers=workers)
        return batch.games.height, f"workers={workers}"

    stage.__doc__ = f"``tbstats.engine.compute.compute`` of the standard list from the loaded model, " \
                    f"workers={workers} (context, values, ranks, table)."
    return stage


def compare_configs(archive: Archive, rules: str, clock: Clock) -> tuple[int, str]:
    """``compare.compare`` of 10 configurations (5 editions) from the loaded model, context included."""
    from tbstats.analysis.compare import compare
    from tbstats.engine.configs import parse_config

    batch = _batch(archive)
    configs = [parse_config(c) for c in CONFIGS]
    with clock:
        compare(batch, configs)
    return batch.games.height, f"{len(configs)} configurations"


def simulate_archive(archive: Archive, rules: str, clock: Clock) -> tuple[int, str]:
    """``simulate.simulate`` of an archive of the same shape and size (one thread); for a mixed archive
    ``simulation.mix.iter_mix`` of the same profile and seed."""
    from tbstats.simulation import SimulationConfig, simulate

    m = archive.meta()
    profile = mix_profile(m)
    if profile is not None:
        from tbstats.simulation.mix import iter_mix, profile_config

        rows = 0
        with clock:
            for block in iter_mix(profile_config(profile, events=m["events"], seed=m["seed"])):
                rows += block.batch.games.height
        return rows, "simulation.mix.iter_mix, workers=1"
    cfg = SimulationConfig(tournaments=m["events"], players=m["players"], rounds=m["rounds"], seed=m["seed"],
                           unrated_rate=0.0)
    with clock:
        sim = simulate(cfg)
    return sim.batch.games.height, "workers=1"


#: Stage ids (for ``--stages``) and what each times, in the order they run.
STAGES: dict[str, Stage] = {
    "ingest-cli": ingest_cli,
    "compute-cli": _compute_cli(1),
    "compute-cli-w2": _compute_cli(2),
    "read-sources": read_sources,
    "read-bytes": read_bytes,
    "load": load_parquet,
    "dense": dense,
    "unplayed": unplayed,
    **{name: _family(name) for name in FAMILIES},
    "de": direct_encounter,
    "standings": standings,
    "compute": _compute(1),
    "compute-w2": _compute(2),
    "compare": compare_configs,
    "simulate": simulate_archive,
}
LABELS = {
    "ingest-cli": "ingest (CLI)", "compute-cli": "compute from TRF (CLI)",
    "compute-cli-w2": "compute from TRF (CLI, 2 workers)", "read-sources": "read TRF (sources)",
    "read-bytes": "read_trf (bytes)", "load": "load Parquet", "dense": "dense view", "unplayed": "unplayed stage",
    **{name: f"kernels: {name}" for name in FAMILIES}, "de": "direct encounter", "standings": "standings",
    "compute": "compute (model, 1 worker)", "compute-w2": "compute (model, 2 workers)",
    "compare": "compare 10 configs", "simulate": "simulate",
}
#: Stages whose clock measures a child process.
CHILD_STAGES = frozenset({"ingest-cli", "compute-cli", "compute-cli-w2"})


def run_stage(name: str, root: Path, rules: str, repeat: int = 1) -> dict[str, Any]:
    """Run one stage ``repeat`` times in this process (setup each time) and return the fastest run's figures;
    the memory figures are those of the run whose RSS grew most while it ran (its own RSS before and peak:
    one run's peak less another run's starting RSS would count the setup of the later runs)."""
    import tbstats

    tbstats.keep_freed_memory()   # as the tbstats command does at start (see tbstats.run.memory)
    runs = []
    for _ in range(max(1, repeat)):
        clock = Clock(children=name in CHILD_STAGES)
        rows, note = STAGES[name](Archive(root), rules, clock)
        runs.append((clock, rows, note))
    clock, rows, note = min(runs, key=lambda run: run[0].seconds)
    if repeat > 1:
        note = f"best of {repeat}" + (f"; {note}" if note else "")
    grown = max((c for c, _, _ in runs), key=lambda c: c.rss_peak - c.rss_before)
    return {"stage": name, "seconds": clock.seconds, "cpu": clock.cpu, "rows": rows,
            "rss_before": grown.rss_before, "rss_peak": grown.rss_peak, "note": note}
