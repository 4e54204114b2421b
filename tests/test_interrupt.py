"""Ctrl-C in the middle of a run with ``--workers``: worker processes (TRF inputs, ``--workers 3``), the next part
read on a thread (TRF inputs too few for one worker process to pay, ``--workers 2``: see
:func:`tbstats.run.sizing.least_files`) or threads (the columnar model), in every archive command: exit 130,
"Interrupted.", no traceback from this process or its workers, and no output file left behind."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from tbstats.cli import main

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to see a run under way")

#: CPU seconds of the command before the interrupt: past its imports (about 0.4 s), well before its end.
UNDER_WAY = 0.6
LIMIT = 120


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _session(sid: int) -> list[int]:
    """The live processes of session ``sid`` (Linux's /proc: the state is the first field after the name, the
    session the fourth; a zombie, ``Z``, has ended and waits for init to reap it, which can take a second or two)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                fields = (entry / "stat").read_text().rpartition(")")[2].split()
                if int(fields[3]) == sid and fields[0] != "Z":
                    found.append(int(entry.name))
    return found


def _session_ends(sid: int, timeout: float = 30) -> list[int]:
    """Wait until no process of session ``sid`` is left; those still there after ``timeout`` seconds. The command
    has ended by then; what may stay a moment is multiprocessing's resource tracker, removing the pool's semaphores
    from /dev/shm (killed before it has, it leaves them there: 5 a run of ``--workers 3``)."""
    deadline = time.monotonic() + timeout
    while (left := _session(sid)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return left


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """TRF files and a model, each more than a second of work for every command below: with ``--workers 3`` the
    command itself reads a third of the files, and its CPU must reach :data:`UNDER_WAY` well before the end
    (6,000 such events were read to the end before that on a fast machine, once the files were read in bulk; on a
    faster one, 2026-12-04, `compute` of 20,000 with 3 workers took 0.75-0.79 CPU seconds in all, and some runs
    ended before the interrupt reached them)."""
    root = tmp_path_factory.mktemp("interrupt")
    runner = CliRunner()
    done = runner.invoke(main, ["simulate", "-n", "40000", "--players", "20", "-r", "7", "--seed", "4", "-c", "a=BH",
                                "--no-baseline", "--trf-dir", str(root / "trf"), "--archive", str(root / "model"),
                                "-q", "-o", str(root / "sim.csv")])
    assert done.exit_code == 0, done.output
    return {"trf": root / "trf", "model": root / "model"}


COMMANDS = {
    "compute": ["compute", "{src}", "-t", "BH/C1,BH,SB,DE,WIN", "-o", "{out}/table.csv"],
    # (Parquet row groups are written on a thread: one may be under way)
    "compute-parquet": ["compute", "{src}", "-t", "BH/C1,BH,SB,DE,WIN", "--format", "parquet", "-o",
                        "{out}/table.parquet"],
    "compare": ["compare", "{src}", "-c", "a=fide-2026:BH/C1,BH,SB,DE", "-c", "b=fide-2024:BH/C1,BH,SB,DE",
                "-c", "c=fide-2026:SB,DE,WIN", "-o", "{out}/table.csv"],
    "audit": ["audit", "{src}", "--per-player", "-o", "{out}/table.csv"],
    "evaluate": ["evaluate", "{src}", "-c", "a=fide-2026:BH/C1,BH,SB", "--strength", "archive", "-o",
                 "{out}/table.csv"],
    "ingest": ["ingest", "{src}", "-o", "{out}/model"],
}


@pytest.mark.parametrize(("source", "workers"), [("trf", "3"), ("trf", "2"), ("model", "2")])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_ctrl_c_with_workers(inputs: dict[str, Path], command: str, source: str, workers: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    args = [a.replace("{src}", str(inputs[source])).replace("{out}", str(out)) for a in COMMANDS[command]]
    log = tmp_path / "stderr.txt"
    with log.open("wb") as sink:   # a file, not a pipe: a process left behind cannot hold the test up
        proc = subprocess.Popen([sys.executable, "-m", "tbstats", *args, "--workers", workers, "--batch-size", "100",
                                 "-q"], stdout=subprocess.DEVNULL, stderr=sink, start_new_session=True)
    try:
        while proc.poll() is None and _cpu_seconds(proc.pid) < UNDER_WAY:
            time.sleep(0.02)
        assert proc.poll() is None, ("the run ended before the interrupt", log.read_text())
        os.killpg(proc.pid, signal.SIGINT)    # as a terminal's Ctrl-C: the whole process group
        proc.wait(timeout=LIMIT)
        left = _session_ends(proc.pid)   # no worker, forkserver or tracker outlives the command for long
    finally:
        proc.kill()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)    # anything of its session still there
    text = log.read_text()
    assert not left, (left, text)
    assert proc.returncode == 130, text
    assert "Traceback" not in text and text.endswith("Interrupted.\n"), text
    assert not list(out.iterdir()), list(out.iterdir())


def test_ctrl_c_removes_unfinished_outputs_without_waiting_for_their_writers(tmp_path: Path) -> None:
    """Ctrl-C's handler runs between two steps of the main thread, so it may run inside an output's own call: here
    inside the Parquet writer pool's ``submit`` (which holds the pool's lock while it starts the writer's thread)
    and the model writer's. Removing the unfinished outputs then must take no lock and wait for no thread (it once
    waited for the row group and shut the pool down: a lock its own thread held, so the run hung)."""
    import threading

    from tbstats.io.tabular import ArchiveWriter
    from tbstats.output import ROW_GROUP_ROWS, TableFile, remove_unfinished

    table = TableFile("parquet", tmp_path / "table.parquet")
    table.write(pl.DataFrame({"x": range(ROW_GROUP_ROWS + 1)}))   # a row group handed to the writer's thread
    assert table._writer is not None
    model = ArchiveWriter(tmp_path / "model")
    done = threading.Event()

    def interrupted_inside_submit() -> None:
        with table._writer._shutdown_lock:   # as submit holds it
            remove_unfinished()
        done.set()

    threading.Thread(target=interrupted_inside_submit, daemon=True).start()
    assert done.wait(30), "removing the unfinished outputs waited for a lock its own thread held"
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    table.discard()   # the writer's own clean-up still works afterwards
    model.abort()


def test_ctrl_c_kills_the_workers_even_inside_the_pool_s_own_submit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same for the worker processes' pool: a handler that runs inside its ``submit`` (which holds the pool's
    lock) does not wait for that lock to shut the pool down; the workers are killed all the same."""
    import multiprocessing
    import threading
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import forkserver
    from types import SimpleNamespace

    from tbstats.run import processes

    executor = ProcessPoolExecutor(max_workers=1)   # no process starts before a task is submitted
    monkeypatch.setattr(processes, "_POOL", SimpleNamespace(executor=executor))
    monkeypatch.setattr(forkserver, "_forkserver", None)              # this test process's own are left alone
    monkeypatch.setattr(multiprocessing, "active_children", lambda: [])
    done = threading.Event()

    def interrupted_inside_submit() -> None:
        with executor._shutdown_lock:
            processes.kill_workers()
        done.set()

    threading.Thread(target=interrupted_inside_submit, daemon=True).start()
    assert done.wait(30), "killing the workers waited for the pool's lock its own thread held"
    executor.shutdown(wait=True)


def test_a_pool_started_by_a_run_blocks_ctrl_c_in_its_forkserver_and_workers() -> None:
    """A pool the command line did not start (``prestart``): its thread starts the forkserver and the workers
    with SIGINT blocked, as prestart does, so that a terminal's Ctrl-C reaches only the command (which kills them)
    and never prints a traceback from a forkserver still importing. (A fresh interpreter: no forkserver yet.)"""
    code = """if True:
        import multiprocessing.forkserver as fs, os
        from tbstats.run import processes
        here = processes.pool(1)
        here.ready.wait(timeout=120)
        server = fs._forkserver._forkserver_pid
        pids = [server, *processes._children_of(server)]
        masks = []
        for pid in pids:
            with open(f"/proc/{pid}/status") as status:
                masks += [int(line.split()[1], 16) for line in status if line.startswith("SigBlk:")]
        print(len(pids), all(mask & 2 for mask in masks), len(masks))
        processes.shutdown()
    """
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=LIMIT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["2", "True", "2"], done.stdout   # the forkserver and its one worker
