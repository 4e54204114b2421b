"""A real Dask cluster against one process, whole commands side by side (issue: distributed runs pay for themselves).

Starts ``dask scheduler`` and ``dask worker ADDRESS --nworkers 2 --nthreads 1`` (nannies included) as the
cluster guide does, then times each command as a user runs it (a fresh ``tbstats`` process, output to a file),
in one process and with ``--scheduler ADDRESS``, interleaved, on the same inputs, best of ``--repeat``; checks that both
outputs are byte-identical; prints seconds, game rows per second and the ratio, and what the scheduler saw
(tasks, their mean duration, bytes that came back to the driver).

Run: ``python benchmarks/bench_cluster.py --events 100000 [--workdir DIR] [--repeat 3]``. The archive (a
part-file model and, with ``--trf``, one TRF file per event) is made once in ``--workdir`` and reused.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SPECS = "BH/C1,BH,SB,PS,WIN,ARO,TPR,KS,AOB,FB,DE"


def _archive(workdir: Path, events: int, trf: bool) -> dict[str, Path]:
    model = workdir / f"model-{events}"
    if not model.exists():
        subprocess.run([sys.executable, str(Path(__file__).with_name("make_archive.py")), str(model),
                        "--tournaments", str(events), "--players", "25", "--rounds", "9"], check=True)
    out = {"model": model}
    if trf:
        files = workdir / f"trf-{events}"
        if not files.exists():
            subprocess.run([sys.executable, "-m", "tbstats", "simulate", "-n", str(events), "--players", "25",
                            "-r", "9", "--seed", "1", "-c", "a=BH", "--no-baseline", "--trf-dir", str(files), "-q",
                            "-o", os.devnull], check=True)
        out["trf"] = files
    return out


def _start_cluster(where: Path) -> tuple[str, list[subprocess.Popen[bytes]]]:
    dask = str(Path(sys.executable).with_name("dask"))
    address_file = where / "scheduler.json"
    address_file.unlink(missing_ok=True)
    procs = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--dashboard-address", ":0",
                               "--scheduler-file", str(address_file)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)]
    while not address_file.exists() or not address_file.read_text():
        time.sleep(0.1)
    address = json.loads(address_file.read_text())["address"]
    procs.append(subprocess.Popen([dask, "worker", address, "--nworkers", "2", "--nthreads", "1",
                                   "--dashboard-address", ":0"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, start_new_session=True))
    from distributed import Client

    with Client(address) as client:
        client.wait_for_workers(2, timeout=120)
    return address, procs


def _timed(args: list[str]) -> float:
    """Wall seconds of the whole command, as a user runs it."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "tbstats", *args], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def _scheduler_stats(address: str) -> dict[str, Any]:
    from distributed import Client

    def stats(dask_scheduler: Any) -> dict[str, Any]:
        done = [ts for ts in dask_scheduler.tasks.values() if ts.state == "memory"]
        return {"tasks_in_memory": len(done), "bytes_held": sum(ts.nbytes for ts in done if ts.nbytes > 0)}

    with Client(address) as client:
        return client.run_on_scheduler(stats)  # type: ignore[no-any-return]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--workdir", help="keep (and reuse) the archive here")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--trf", action="store_true", help="also from TRF files (one per event)")
    ap.add_argument("--batch-size", type=int, default=None, help="--batch-size of every run (default: tbstats')")
    opts = ap.parse_args()
    workdir = Path(opts.workdir or tempfile.mkdtemp(prefix="tbstats-cluster-"))
    workdir.mkdir(parents=True, exist_ok=True)
    inputs = _archive(workdir, opts.events, opts.trf)
    rows = opts.events * 25 * 9
    address, procs = _start_cluster(workdir)
    try:
        print(f"archive: {opts.events:,} simulated Swiss events of 25 players x 9 rounds ({rows:,} game rows); "
              f"list {SPECS}; load {os.getloadavg()[0]:.2f}")
        print("| source | command | one process s | cluster s | ratio | cluster rows/s |")
        print("|---|---|---:|---:|---:|---:|")
        for source, path in inputs.items():
            for name, args in (("compute", ["compute", str(path), "-t", SPECS]),
                               ("compare", ["compare", str(path), "-c", f"a=fide-2026:{SPECS}",
                                            "-c", f"b=fide-2024:{SPECS}", "-c", "c=fide-2026:SB,DE,WIN"])):
                extra = ["-q"] + (["--batch-size", str(opts.batch_size)] if opts.batch_size else [])
                local_out, remote_out = workdir / f"local-{name}.csv", workdir / f"remote-{name}.csv"
                local, remote = [], []
                for _ in range(opts.repeat):   # interleaved, so that load on the machine falls on both alike
                    local.append(_timed([*args, *extra, "-o", str(local_out)]))
                    remote.append(_timed([*args, *extra, "--scheduler", address, "-o", str(remote_out)]))
                same = local_out.read_bytes() == remote_out.read_bytes()
                lo, re_ = min(local), min(remote)
                print(f"| {source} | {name} | {lo:.2f} | {re_:.2f} | {lo / re_:.2f}x | {rows / re_ / 1e6:.2f}M |"
                      + ("" if same else " OUTPUTS DIFFER"))
        print(f"scheduler after the runs: {_scheduler_stats(address)}; load {os.getloadavg()[0]:.2f}")
    finally:
        for proc in reversed(procs):   # the workers first; SIGTERM lets dask's nannies remove their semaphores
            for sig in (signal.SIGTERM, signal.SIGKILL):   # from /dev/shm (a SIGKILL leaves a dozen behind)
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, sig)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=20)
                    break
        if not opts.workdir:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
