"""A real Dask cluster, started as docs/guide/clusters.md tells a user: ``dask scheduler`` and ``dask worker
ADDRESS --nworkers 2 --nthreads 1`` (nannies included) as separate processes, and ``tbstats ... --scheduler``
as a process of its own. Every archive command, from TRF files and from the columnar model, gives the local
output byte for byte; both workers work; a worker killed mid-run and Ctrl-C mid-run end cleanly. Every run
has a time limit that fails the test instead of hanging the suite.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import REAL, ROOT

from tbstats.cli import main

distributed = pytest.importorskip("distributed", reason="distributed is not installed (the test extra installs it)")

LIMIT = 120            # seconds any one command may take before the test fails (locally they take 1-3 s)
CLUSTER_PAGE = ROOT / "docs" / "guide" / "clusters.md"
DASK = Path(sys.executable).with_name("dask")
BATCHES = ["--batch-size", "40", "--batch-files", "40"]   # many tasks, so that each worker gets several


def _documented() -> list[list[str]]:
    """The commands of the cluster guide's sh block, without their comments."""
    block = re.findall(r"```sh\n(.*?)```", CLUSTER_PAGE.read_text(encoding="utf-8"), re.S)[0]
    return [line.split("#")[0].split() for line in block.splitlines() if line.strip()]


def _group(cmd: list[str], log: Path) -> subprocess.Popen[bytes]:
    """A process in a process group of its own (killed whole at the end), its output in ``log``."""
    with log.open("wb") as sink:
        return subprocess.Popen(cmd, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any]]:
    """A scheduler and two nanny workers, as the guide starts them (bound to this machine for the test)."""
    scheduler_cmd, worker_cmd, tbstats_cmd = _documented()
    assert scheduler_cmd == ["dask", "scheduler"] and worker_cmd[:2] == ["dask", "worker"]
    assert "--scheduler" in tbstats_cmd
    where = tmp_path_factory.mktemp("cluster")
    address_file = where / "scheduler.json"
    procs = [_group([str(DASK), "scheduler", "--host", "127.0.0.1", "--port", "0", "--dashboard-address", ":0",
                     "--scheduler-file", str(address_file)], where / "scheduler.log")]
    client = None
    try:
        deadline = time.monotonic() + 60
        while not address_file.exists() or not address_file.read_text():
            assert time.monotonic() < deadline, (where / "scheduler.log").read_text()
            time.sleep(0.1)
        address = json.loads(address_file.read_text())["address"]
        procs.append(_group([str(DASK), "worker", address, *worker_cmd[3:], "--dashboard-address", ":0"],
                            where / "worker.log"))
        client = distributed.Client(address, timeout=30)
        client.wait_for_workers(2, timeout=60)
        yield address, client
    finally:
        if client is not None:
            client.close()
        for proc in reversed(procs):   # the workers first, then the scheduler
            stop_group(proc)


def stop_group(proc: subprocess.Popen[bytes]) -> None:
    """Stop a process group with SIGTERM, as a service manager would: dask's nannies then stop their workers and
    remove their semaphores from /dev/shm, which a SIGKILL leaves behind (a dozen a run). SIGKILL if it lingers.
    (SIGINT would do as well, in about 8 s instead of 0.14 s for two nanny workers.)"""
    with_group(proc, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        with_group(proc, signal.SIGKILL)
        proc.wait(timeout=30)


def with_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, sig)


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """TRF files (simulated Swiss and round-robin events, and the real shared files when present) and the
    columnar model ingested from them."""
    root = tmp_path_factory.mktemp("archive")
    trf = root / "trf"
    runner = CliRunner()
    # more than 1,024 events: a columnar model is planned in parts of at least 512 tournaments (a task each)
    for kind, n, players, rounds, seed in (("swiss", 1400, 16, 7, 1), ("round_robin", 200, 6, 5, 2)):
        done = runner.invoke(main, ["simulate", "-n", str(n), "--players", str(players), "-r", str(rounds),
                                    "--kind", kind,
                                    "--seed", str(seed), "-c", "a=BH", "--no-baseline", "--trf-dir",
                                    str(trf / kind), "-q", "-o", str(root / f"{kind}.csv")])
        assert done.exit_code == 0, done.output
    inputs = [str(trf)] + ([str(REAL)] if REAL.is_dir() else [])
    done = runner.invoke(main, ["ingest", *inputs, "-o", str(root / "model"), "-q"])
    assert done.exit_code in (0, 1), done.output     # the real corpus holds a few files it rejects, by design
    flat = {name: root / name for name in ("flat.csv", "flat.parquet")}   # (one table: read by runs of rows)
    for path in flat.values():
        done = runner.invoke(main, ["ingest", str(root / "model"), "-o", str(path), "-q"])
        assert done.exit_code == 0, done.output
    return {"trf": trf, "real": REAL, "model": root / "model", **flat}


def _tbstats(args: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "tbstats", *args], cwd=cwd, capture_output=True, timeout=LIMIT)


COMMANDS = {
    "compute": ["compute", "{src}", "-t", "BH/C1,BH,SB,DE,WIN", "--format", "csv"],
    "compare": ["compare", "{src}", "-c", "a=fide-2026:BH/C1,BH,SB", "-c", "b=fide-2024:BH/C1,BH,SB",
                "--format", "csv"],
    "audit": ["audit", "{src}", "--per-player", "--format", "csv"],
    "info": ["info", "{src}", "--format", "csv"],
    "evaluate": ["evaluate", "{src}", "-c", "a=fide-2026:BH/C1,BH,SB", "--strength", "archive", "--format", "csv"],
    "ingest": ["ingest", "{src}", "-o", "{out}"],
}


def _sources(archive: dict[str, Path]) -> dict[str, list[str]]:
    trf = [str(archive["trf"])] + ([str(archive["real"])] if archive["real"].is_dir() else [])
    return {"trf": trf, "model": [str(archive["model"])]}


@pytest.mark.parametrize("source", ["trf", "model", "flat.csv", "flat.parquet"])
def test_inputs_typed_relative_to_the_command_are_read_by_workers_elsewhere(
        cluster: tuple[str, Any], archive: dict[str, Path], source: str) -> None:
    """A path typed relative to the command's directory is read by workers started in another directory (the
    guide's ``dask worker``, started anywhere on a shared file system), and the output names each input as it was
    typed, byte for byte as a local run does; a model directory typed relative (``ingest -o``, whose part files
    the workers write) is written there too. A flat file's runs carry the rows (and a CSV file's bytes) the plan
    found, by the file's path: anchored with it (a CSV file typed relative failed on the cluster with a
    KeyError, its runs' rows still named by the path as typed)."""
    address, _ = cluster
    root = archive[source].parent
    assert Path.cwd().resolve() != root.resolve()   # (the workers' directory: this test's)
    outputs = {}
    for where, extra in (("local", []), ("cluster", ["--scheduler", address])):
        done = _tbstats(["compute", source, "-t", "BH", "--format", "csv", *BATCHES, *extra, "-q"], root)
        assert done.returncode == 0, done.stderr.decode()
        out = f"relative-{source.replace('.', '-')}-{where}"
        wrote = _tbstats(["ingest", source, "-o", out, *BATCHES, *extra, "-q"], root)
        assert wrote.returncode == 0, wrote.stderr.decode()
        outputs[where] = done.stdout, _tree(root / out)
    assert outputs["cluster"] == outputs["local"]
    assert outputs["local"][0].count(b"\n") > 1000 and len(outputs["local"][1]) > 3
    if source == "trf":
        assert b"\ntrf/" in outputs["local"][0]   # (the names as typed)


@pytest.mark.parametrize("source", ["trf", "model"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_on_the_cluster_gives_the_local_output(cluster: tuple[str, Any], archive: dict[str, Path],
                                                              command: str, source: str, tmp_path: Path) -> None:
    address, _ = cluster
    outputs = {}
    for where, extra in (("local", []), ("cluster", ["--scheduler", address])):
        args = []
        for arg in COMMANDS[command]:
            args += _sources(archive)[source] if arg == "{src}" else [arg.replace("{out}", str(tmp_path / where))]
        done = _tbstats([*args, *BATCHES, *extra, "-q"], tmp_path)
        assert b"Traceback" not in done.stderr, done.stderr.decode()
        outputs[where] = (done.returncode, done.stdout, _tree(tmp_path / where))
    assert outputs["cluster"][0] == outputs["local"][0] in (0, 1)
    assert outputs["cluster"] == outputs["local"]
    if command == "ingest":
        assert len(outputs["local"][2]) > 3


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_guides_command_as_written(cluster: tuple[str, Any], archive: dict[str, Path], tmp_path: Path) -> None:
    """The guide's ``tbstats`` line, with this archive and this scheduler's address in place of its examples."""
    address, _ = cluster
    command = _documented()[2]
    assert command[0] == "tbstats" and "archive/" in command
    args = [str(archive["trf"]) if a == "archive/" else address if a.startswith("tcp://") else a for a in command[1:]]
    at = args.index("--scheduler")
    local, remote = _tbstats(args[:at] + args[at + 2:], tmp_path), _tbstats(args, tmp_path)
    assert remote.returncode == local.returncode == 0, remote.stderr.decode()
    assert remote.stdout == local.stdout and remote.stdout.count(b"\n") > 1


def test_large_results_travel(cluster: tuple[str, Any], archive: dict[str, Path], tmp_path: Path) -> None:
    """Tasks whose tables have about 80,000 rows each: a polars frame pickled on the worker's event loop hung
    the worker here (polars' pool waiting for the GIL to free the reader's buffers); packed results do not."""
    address, _ = cluster
    args = ["compute", str(archive["trf"]), "-t", "BH/C1,BH,SB", "--batch-files", "700", "-q", "--format", "csv"]
    local, remote = _tbstats(args, tmp_path), _tbstats([*args, "--scheduler", address], tmp_path)
    assert remote.returncode == local.returncode == 0, remote.stderr.decode()
    assert remote.stdout == local.stdout and local.stdout.count(b"\n") > 20_000


@pytest.mark.parametrize("source", ["trf", "model"])
def test_both_workers_work(cluster: tuple[str, Any], archive: dict[str, Path], tmp_path: Path, source: str) -> None:
    address, client = cluster
    before = client.run(lambda dask_worker: dask_worker.state.executed_count)
    done = _tbstats(["compute", *_sources(archive)[source], "-t", "BH,SB", *BATCHES, "--scheduler", address, "-q",
                     "-o", str(tmp_path / "out.csv")], tmp_path)
    assert done.returncode in (0, 1), done.stderr.decode()
    after = client.run(lambda dask_worker: dask_worker.state.executed_count)
    assert len(after) == 2 and all(after[w] > before.get(w, 0) for w in after), (before, after)


#: the tasks the workers run for a whole ``_long_run``: 400 parts of 4 files, three tasks each (the part, its
#: table, the next part's first id)
LONG_RUN_TASKS = 1200


def _executed(client: Any) -> int:
    """Tasks the workers have run so far."""
    return sum(client.run(lambda dask_worker: dask_worker.state.executed_count).values())


def _long_run(archive: dict[str, Path], address: str, out: Path) -> subprocess.Popen[bytes]:
    """A run of 400 small tasks (a few seconds on the cluster), started as its own process."""
    args = ["compute", str(archive["trf"]), "-t", "BH/C1,BH,SB,DE,WIN", "--batch-size", "4",
            "--batch-files", "4", "--scheduler", address, "-q", "-o", str(out)]
    return subprocess.Popen([sys.executable, "-m", "tbstats", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def _wait_for_tasks(client: Any, proc: subprocess.Popen[bytes]) -> None:
    """Until the scheduler runs some of this run's tasks (the run has started on the workers)."""
    deadline = time.monotonic() + LIMIT
    while not client.run_on_scheduler(lambda dask_scheduler: sum(
            1 for ts in dask_scheduler.tasks.values() if ts.state == "processing")):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_a_worker_killed_mid_run(cluster: tuple[str, Any], archive: dict[str, Path], tmp_path: Path) -> None:
    """SIGKILL to one worker process while the run is under way: the nanny starts a new one and the
    scheduler runs the lost tasks again; the table is the local one."""
    address, client = cluster
    out = tmp_path / "out.csv"
    proc = _long_run(archive, address, out)
    try:
        _wait_for_tasks(client, proc)
        pids = client.run(os.getpid)
        os.kill(next(iter(pids.values())), signal.SIGKILL)
        assert proc.poll() is None, "the run ended before the worker was killed"
        _, stderr = proc.communicate(timeout=LIMIT)
    finally:
        proc.kill()
    local = CliRunner().invoke(main, ["compute", str(archive["trf"]), "-t", "BH/C1,BH,SB,DE,WIN", "-q",
                                      "-o", str(tmp_path / "local.csv")])
    assert local.exit_code == 0, local.output
    assert b"Traceback" not in stderr, stderr.decode()
    if proc.returncode == 0:
        assert out.read_bytes() == (tmp_path / "local.csv").read_bytes()
    else:   # Dask gave up on a task: a message that says so, and no partial file
        assert proc.returncode == 3 and b"worker" in stderr and not out.exists(), stderr.decode()
    client.wait_for_workers(2, timeout=60)


def test_ctrl_c_mid_run_exits_130_at_once(cluster: tuple[str, Any], archive: dict[str, Path],
                                          tmp_path: Path) -> None:
    """At once: when the program has ended, the workers have not run all of its tasks (no timing involved)."""
    address, client = cluster
    out = tmp_path / "out.csv"
    before = _executed(client)
    proc = _long_run(archive, address, out)
    try:
        _wait_for_tasks(client, proc)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=LIMIT)
        ran = _executed(client) - before
    finally:
        proc.kill()
    assert proc.returncode == 130, stderr.decode()
    assert ran < LONG_RUN_TASKS, ran
    assert b"Traceback" not in stderr and b"Interrupted" in stderr, stderr.decode()
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_a_scheduler_without_workers_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tbstats.run import pipeline

    address_file = tmp_path / "scheduler.json"
    proc = _group([str(DASK), "scheduler", "--host", "127.0.0.1", "--port", "0", "--dashboard-address", ":0",
                   "--scheduler-file", str(address_file)], tmp_path / "scheduler.log")
    try:
        deadline = time.monotonic() + 60
        while not address_file.exists() or not address_file.read_text():
            assert time.monotonic() < deadline
            time.sleep(0.1)
        monkeypatch.setattr(pipeline, "WAIT_FOR_WORKERS", 1)
        address = json.loads(address_file.read_text())["address"]
        done = CliRunner().invoke(main, ["info", str(ROOT / "data" / "examples"), "-q", "--scheduler", address])
    finally:
        stop_group(proc)
    assert done.exit_code == 3 and "the scheduler has no workers; start them with 'dask worker" in done.output
