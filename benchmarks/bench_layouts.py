"""One archive stored the ways people store it: `compute` of each layout against its directory, side by side.

    python benchmarks/bench_layouts.py DIR                 # DIR: a directory of TRF files (an archive's trf/)
    python benchmarks/bench_layouts.py DIR -n 5 --layouts zip,tar.gz,glob

The same TRF files as a directory (the baseline), in 10 large files of many events each, as a zip, a tar and a
.tar.gz made the usual way (``tar czf A -C DIR .``: every member named ``./...``), as a glob pattern, as a command
line of every file (when it fits), in a deep tree (a directory of a few files per event group), in a folder per
event with an HTML page and a note that is no TRF file beside it (read, and listed as rejected), and as the flat
Parquet and Arrow files ``ingest`` writes. Each layout is written once into a temporary directory (untimed); then
``tbstats compute --workers 2`` of every layout (the standard list, Parquet output) runs ``-n`` times, the layouts
interleaved run by run (load on the machine falls on all alike). The table gives each layout's median and fastest
wall seconds, the ratio of its median to the directory's, and whether its output holds the directory's rows (all
columns but ``source``, an archive member's name, and ``tournament``, ids in the order a layout lists its files).
Never part of the tests' pass/fail: the cliffs it finds are the ones benchmarks/RESULTS.md (2026-12-05) describes.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import polars as pl
from archives import trf_files
from stages import command_ran

LIST = "BH/C1,BH,SB,PS,WIN,ARO,TPR,KS,AOB,FB,DE"
#: The most bytes of arguments a command line of every file may take (Linux allows about 2 MB in all).
ARGS_BYTES = 1 << 20


def _link(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:   # (another file system)
        shutil.copyfile(source, target)


def _large_files(root: Path, files: list[Path], out: Path) -> list[str]:
    out.mkdir()
    each = -(-len(files) // 10)
    for k in range(10):
        with (out / f"part{k:02d}.trf").open("wb") as target:
            for path in files[k * each:(k + 1) * each]:
                data = path.read_bytes()
                target.write(data if data.endswith(b"\n") else data + b"\n")
    return [str(out)]


def _zip(root: Path, files: list[Path], out: Path) -> list[str]:
    with zipfile.ZipFile(out.with_suffix(".zip"), "w", zipfile.ZIP_DEFLATED) as z:
        for path in files:
            z.write(path, path.relative_to(root).as_posix())
    return [str(out.with_suffix(".zip"))]


def _tar(mode: str, suffix: str) -> Callable[[Path, list[Path], Path], list[str]]:
    def write(root: Path, files: list[Path], out: Path) -> list[str]:
        target = out.with_suffix(suffix)
        with tarfile.open(target, mode) as t:
            for path in files:
                t.add(path, "./" + path.relative_to(root).as_posix())
        return [str(target)]
    return write


def _tree(root: Path, files: list[Path], out: Path) -> list[str]:
    for k, path in enumerate(files):   # federation / year / month, a few files each
        _link(path, out / f"f{k % 25:02d}" / str(2000 + (k // 25) % 20) / f"m{(k // 500) % 5}" / path.name)
    return [str(out)]


def _event_folders(root: Path, files: list[Path], out: Path) -> list[str]:
    """A folder per event, as archives downloaded from a results site keep them: the TRF file beside a page of
    standings and a note that is no TRF (a ``.txt``, an extension TRF files also have: read and rejected)."""
    for k, path in enumerate(files):
        folder = out / f"{k // 1000:02d}" / f"event{k:05d}"
        _link(path, folder / path.name)
        (folder / "standings.html").write_text("<html><body>standings</body></html>\n")
        (folder / "notes.txt").write_text("notes about the event, not a tournament report\n")
    return [str(out)]


def _ingested(suffix: str) -> Callable[[Path, list[Path], Path], list[str]]:
    def write(root: Path, files: list[Path], out: Path) -> list[str]:
        target = out.with_suffix(suffix)
        subprocess.run([sys.executable, "-m", "tbstats", "ingest", str(root), "-o", str(target), "-q"], check=True)
        return [str(target)]
    return write


#: Each layout: how it is written (from the directory and its files, into a path of the work directory) and the
#: inputs of its command.
LAYOUTS: dict[str, Callable[[Path, list[Path], Path], list[str]]] = {
    "directory": lambda root, files, out: [str(root)],
    "large-files": _large_files,
    "zip": _zip,
    "tar": _tar("w", ".tar"),
    "tar.gz": _tar("w:gz", ".tar.gz"),
    "glob": lambda root, files, out: [f"{root}/**/*.trf"],
    "arguments": lambda root, files, out: [str(p) for p in files],
    "tree": _tree,
    "event-folders": _event_folders,
    "flat-parquet": _ingested(".parquet"),
    "flat-arrow": _ingested(".arrow"),
}


def run(inputs: list[str], out: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "tbstats", "compute", *inputs, "-q", "-t", LIST, "--workers", "2",
                           "-o", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if not command_ran(done.returncode, done.stderr):   # (some input rejected, as in the directory itself: ran)
        raise SystemExit(f"{' '.join(inputs[:2])}: exit {done.returncode}\n{done.stderr}")
    return time.perf_counter() - start


def same(a: Path, b: Path) -> bool:
    """Whether two outputs hold the same rows but for their ``source`` (an archive member's name, a flat file's
    source) and ``tournament`` (ids follow the order the layout lists its files in), in any order."""
    x, y = (pl.read_parquet(p).drop("source", "tournament") for p in (a, b))
    return x.sort(x.columns, nulls_last=True).equals(y.sort(y.columns, nulls_last=True))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=Path, help="a directory of TRF files")
    parser.add_argument("-n", "--runs", type=int, default=3)
    parser.add_argument("--layouts", default=",".join(LAYOUTS), help="comma-separated, of: " + ", ".join(LAYOUTS))
    args = parser.parse_args(argv)
    root = args.root.resolve()
    files = trf_files(root)
    wanted = ["directory", *(name for name in args.layouts.split(",") if name != "directory")]
    unknown = [name for name in wanted if name not in LAYOUTS]
    if unknown:
        parser.error(f"unknown layouts: {', '.join(unknown)}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        inputs = {}
        for k, name in enumerate(wanted):
            inputs[name] = LAYOUTS[name](root, files, work / f"layout{k}")
        if "arguments" in inputs and sum(len(a) + 1 for a in inputs["arguments"]) > ARGS_BYTES:
            print(f"arguments: {len(files):,} paths do not fit one command line; left out", file=sys.stderr)
            del inputs["arguments"]
        times: dict[str, list[float]] = {name: [] for name in inputs}
        for name, given in inputs.items():   # a first, untimed run of each: disk cache warm, outputs to compare
            run(given, work / f"{name}.parquet")
        for _ in range(args.runs):
            for name, given in inputs.items():
                times[name].append(run(given, work / "out.parquet"))
        base = statistics.median(times["directory"])
        print(f"{len(files):,} TRF files under {root}; `compute --workers 2`, median and fastest of {args.runs} "
              f"interleaved runs, load {os.getloadavg()[0]:.2f} (1 min) at the end")
        print("| layout | median s | fastest s | median / directory | output as the directory's |")
        print("|---|---:|---:|---:|---|")
        for name, runs in times.items():
            equal = same(work / f"{name}.parquet", work / "directory.parquet")
            print(f"| {name} | {statistics.median(runs):.3f} | {min(runs):.3f} | "
                  f"{statistics.median(runs) / base:.2f} | {'yes' if equal else 'NO'} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
