"""Two versions of tbstats side by side on one command, in alternating rounds: wall and CPU of every process.

    python benchmarks/ab.py OLD [NEW] [--rounds N] -- compute DIR --rules fide-2026 -t LIST --workers 2

OLD and NEW are git revisions (NEW is this checkout's working tree when left out). A revision is exported with
``git archive`` into a temporary directory (the repository is not touched) and run as ``python -P -m tbstats``
with that directory first on ``PYTHONPATH`` (Python 3.11 or newer); the compiled modules (Cython) are copied
from this checkout when the two have the same ``.pyx`` sources, else the revision's own are built in its export
(``setup.py build_ext``: Cython and a C compiler, as for an install; the working tree must be built already). The
command's output goes to a file of the tool's: where ``{out}`` stands in an argument (``-o {out}.parquet``),
else ``-o FILE`` is appended; every round's outputs of the two are compared byte for byte.

Each round runs both, in an order that alternates from round to round. Wall seconds are the command's whole
process; CPU seconds are its and every process it starts (adopted and reaped as by ``stages.Clock``, so a
worker process or forkserver left behind counts). The report gives min and median of each, their ratios
(NEW / OLD: below 1 is faster) and the load average before and after: on a shared machine only such
interleaved figures compare two versions, never two runs minutes apart.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from stages import Clock, command_ran

ROOT = Path(__file__).resolve().parent.parent


def export(revision: str | None, into: Path, *, build: bool = False) -> Path:
    """The package of ``revision`` (None: the working tree) as a directory to put on ``PYTHONPATH``, its modules
    compiled to bytecode (as the install does: where ``PYTHONDONTWRITEBYTECODE`` is set, a tree without it would
    compile every module again at every start, about 0.1 s); with ``build`` its compiled modules are built from
    its own Cython sources, else copied from this checkout."""
    if revision is None and build:   # (the old revision's modules are built from its sources: so must these be)
        stale = [str(pyx.relative_to(ROOT)) for pyx in (ROOT / "tbstats").rglob("*.pyx")
                 if not any(so.stat().st_mtime >= pyx.stat().st_mtime for so in pyx.parent.glob(f"{pyx.stem}.*.so"))]
        if stale:
            sys.exit(f"ab.py: the working tree's compiled modules are older than {', '.join(stale)}: build them first "
                     "(python setup.py build_ext --inplace)")
    tree = ROOT if revision is None else _exported(revision, into, build=build)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "tbstats")], check=True)
    return tree


def _exported(revision: str, into: Path, *, build: bool) -> Path:
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "tbstats", *(["setup.py"] if build else [])],
                             capture_output=True, check=False)
    if archive.returncode:
        sys.exit(f"ab.py: git archive {revision}: {archive.stderr.decode(errors='replace').strip()}")
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    if build:
        done = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=into,
                              capture_output=True, check=False)
        if done.returncode:
            sys.exit(f"ab.py: building {revision}'s compiled modules failed:\n"
                     f"{done.stderr.decode(errors='replace')[-2000:]}")
    else:
        for built in (ROOT / "tbstats").rglob("*.so"):
            shutil.copy2(built, into / built.relative_to(ROOT))
    return into


def same_sources(old: str, new: str | None) -> bool:
    """Whether the two revisions have the same Cython sources (then both run this checkout's compiled modules)."""
    revisions = [old] if new is None else [old, new]
    done = subprocess.run(["git", "-C", str(ROOT), "diff", "--quiet", *revisions, "--", "*.pyx", "*.pxd"],
                          check=False)
    return done.returncode == 0


def checks_changed(old: str, new: str | None) -> list[str]:
    """The checking modules whose source differs between the two revisions (:data:`tbstats.io.tabular.proof.
    CHECKING`): the proofs of a model that one of them ingested do not hold for the other, which reads it with
    every check (on the 6,000 events of the club-wide archive, seed 9090, about 50 ms more of 0.5 s)."""
    from tbstats.io.tabular.proof import CHECKING

    paths = [name.replace(".", "/") + ".py" for name in CHECKING]
    revisions = [old] if new is None else [old, new]
    done = subprocess.run(["git", "-C", str(ROOT), "diff", "--name-only", *revisions, "--", *paths],
                          capture_output=True, text=True, check=True)
    return done.stdout.split()


def run_once(tree: Path, args: list[str], out: Path) -> tuple[float, float, str]:
    """Wall and CPU seconds of one run of the command, and its output's md5 ('-' when it wrote none): the
    output is the argument holding ``{out}`` (replaced by ``out``, e.g. ``{out}.parquet``), else ``-o out``."""
    marked = [a for a in args if "{out}" in a]
    argv = [a.replace("{out}", str(out)) for a in args] if marked else [*args, "-o", str(out)]
    out = Path(marked[0].replace("{out}", str(out))) if marked else out
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), os.environ.get("PYTHONPATH", "")]).rstrip(
        os.pathsep)}
    with Clock(children=True) as clock:
        # (-P: the current directory, a checkout itself maybe, is not put before PYTHONPATH)
        done = subprocess.run([sys.executable, "-P", "-m", "tbstats", *argv], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, check=False)
    if not command_ran(done.returncode, done.stderr):
        sys.exit(f"ab.py: {tree}: exit code {done.returncode}\n{done.stderr.decode(errors='replace')[-2000:]}")
    digest = hashlib.md5(out.read_bytes()).hexdigest() if out.is_file() else "-"
    out.unlink(missing_ok=True)
    return clock.seconds, clock.cpu, digest


def load() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     usage="ab.py OLD [NEW] [--rounds N] -- TBSTATS_ARGS...")
    parser.add_argument("old", help="git revision of the first version")
    parser.add_argument("new", nargs="?", help="git revision of the second (default: the working tree)")
    parser.add_argument("--rounds", type=int, default=10, help="rounds of both (default 10)")
    argv = sys.argv[1:]
    if "--" not in argv:
        parser.error("the tbstats command comes after --")
    cut = argv.index("--")
    opts, command = parser.parse_args(argv[:cut]), argv[cut + 1:]
    if not command or opts.rounds < 1:
        parser.error("a tbstats command after --, and at least one round")
    build = not same_sources(opts.old, opts.new)   # (then each revision's compiled modules are its own)
    labels = [opts.old, opts.new or "working tree"]
    figures: dict[str, list[tuple[float, float]]] = {label: [] for label in labels}
    digests: dict[str, set[str]] = {label: set() for label in labels}
    with tempfile.TemporaryDirectory(prefix="tbstats-ab-") as tmp:
        trees = [export(opts.old, Path(tmp) / "old", build=build), export(opts.new, Path(tmp) / "new", build=build)]
        before = load()
        for k in range(opts.rounds):
            order = [0, 1] if k % 2 == 0 else [1, 0]
            for i in order:
                wall, cpu, digest = run_once(trees[i], command, Path(tmp) / f"out-{i}")
                figures[labels[i]].append((wall, cpu))
                digests[labels[i]].add(digest)
        after = load()
    print(f"tbstats {' '.join(command)}")
    print(f"{opts.rounds} alternating rounds; load average (1 min) {before} before, {after} after\n")
    print("| version | wall min s | wall median s | CPU min s | CPU median s |")
    print("|---|---:|---:|---:|---:|")
    summary = {}
    for label in labels:
        walls, cpus = [w for w, _ in figures[label]], [c for _, c in figures[label]]
        summary[label] = (min(walls), statistics.median(walls), min(cpus), statistics.median(cpus))
        print(f"| {label} | " + " | ".join(f"{x:.3f}" for x in summary[label]) + " |")
    ratio = [n / o if o else float("nan") for o, n in zip(summary[labels[0]], summary[labels[1]], strict=True)]
    print(f"| new / old | {ratio[0]:.3f} | {ratio[1]:.3f} | {ratio[2]:.3f} | {ratio[3]:.3f} |")
    same = len(digests[labels[0]] | digests[labels[1]]) == 1
    print(f"\noutputs {'byte-identical in every round' if same else 'DIFFER'} "
          f"(md5 {', '.join(sorted(digests[labels[0]] | digests[labels[1]]))})")
    changed = checks_changed(opts.old, opts.new)
    if changed:
        print(f"\nwarning: the checking modules differ ({', '.join(changed)}): a model ingested by one version is "
              "read with every check by the other (its proofs do not hold there); time a model only against "
              "a copy ingested by each version, or from TRF files")


if __name__ == "__main__":
    main()
