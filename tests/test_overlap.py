"""With ``--workers 2`` parts run at once: TRF parts in a worker process and here, model parts on threads
(the next part is read while a batch is mapped); either way the results come in input order."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from trf_samples import GOOD, with_names

from tbstats.errors import FormatError, TbstatsError
from tbstats.io import kinds, safe, sources
from tbstats.io.tabular import write_model
from tbstats.io.trf import read_trf
from tbstats.model.batch import Batch
from tbstats.run import ordering, pipeline, processes, sizing, work

try:
    import fcntl
except ImportError:   # not POSIX
    fcntl = None   # type: ignore[assignment]

#: Worker processes need a forkserver and a pool's semaphores (not on Windows, nor without /dev/shm).
needs_processes = pytest.mark.skipif(not processes.available(),
                                     reason="worker processes cannot start here (no forkserver or no semaphores)")


@pytest.mark.parametrize("workers", [1, 2])
def test_model_parts_the_next_read_while_a_batch_is_mapped_with_one_worker_or_two(
        workers: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in "abc":
        write_model(_batch(GOOD), tmp_path / f"{name}.parquet")
    real = sources.read_piece   # what every way of reading reads by (a model's part is one piece)
    lock = threading.Lock()
    read: list[str] = []
    second_read = threading.Event()

    def spy(piece: sources.Part) -> tuple[pl.DataFrame, Batch | None]:
        with lock:
            assert piece.model is not None
            read.append(piece.model.name)
            if len(read) >= 2:
                second_read.set()
        return real(piece)

    monkeypatch.setattr(sources, "read_piece", spy)
    overlapped: list[bool] = []

    def f(batch: Batch) -> int:
        # this batch is mapped while the next part is read (on the other worker, or on the one worker's reading
        # thread): the wait is a guard against a hang, not a timing: it returns as soon as that read starts
        overlapped.append(second_read.wait(timeout=60))
        return batch.n_tournaments

    run = pipeline.Run(inputs=[str(tmp_path)], workers=workers)
    assert [m.value for m in run.map(f)] == [1, 1, 1]
    assert overlapped == [True, True, True]
    assert sorted(read) == [str(tmp_path / f"{n}.parquet") for n in "abc"]
    assert run.summary() == "3 files: 3 loaded, 0 rejected"


def test_one_worker_stopped_by_an_error_reads_no_more_than_the_part_ahead(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in "abcde":
        write_model(_batch(GOOD), tmp_path / f"{name}.parquet")
    real = sources.read_piece
    read: list[str] = []

    def spy(piece: sources.Part) -> tuple[pl.DataFrame, Batch | None]:
        assert piece.model is not None
        read.append(Path(piece.model.name).stem)
        return real(piece)

    monkeypatch.setattr(sources, "read_piece", spy)
    mapped: list[int] = []

    def f(batch: Batch) -> int:
        if len(mapped) == 1:
            raise TbstatsError("stop at the second batch")
        mapped.append(batch.n_tournaments)
        return batch.n_tournaments

    run = pipeline.Run(inputs=[str(tmp_path)], workers=1)
    with pytest.raises(TbstatsError, match="stop at the second batch"):
        list(run.map(f))
    assert mapped == [1]
    assert read == ["a", "b", "c"]   # the part mapped when it failed, and the one read ahead of it; no more


def test_one_worker_reads_the_pieces_its_reading_thread_has_not_started(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A part of TRF files is read in pieces: those the reading thread has not started when the part is wanted
    are read where it is mapped (both threads read then), and the batches are those of reading it in turn."""
    for k in range(6):
        (tmp_path / f"{k}.trf").write_text(with_names(f"Player {k}", "Other"), encoding="utf-8")
    monkeypatch.setattr(kinds, "READ_FILES", 1)   # a piece a file: parts of two files, two pieces each
    real = sources.read_piece
    here = threading.Event()
    readers: list[str] = []

    def spy(piece: sources.Part, files: Any = None) -> tuple[pl.DataFrame, Batch | None]:
        name = threading.current_thread().name
        readers.append(name)
        if name == threading.main_thread().name:
            here.set()
        else:   # the reading thread waits until a piece was read here (once: a guard against a hang, not a timing)
            here.wait(timeout=60)
            here.set()
        return real(piece, files)

    monkeypatch.setattr(sources, "read_piece", spy)
    run = pipeline.Run(inputs=[str(tmp_path)], batch_files=2, workers=1)
    got = [m.value for m in run.map(lambda batch: batch.players.filter(pl.col("start_no") == 1)["name"].to_list())]
    assert got == [["Player 0", "Player 1"], ["Player 2", "Player 3"], ["Player 4", "Player 5"]]
    assert len(readers) == 6 and threading.main_thread().name in readers
    assert run.summary() == "6 files: 6 loaded, 0 rejected"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform (the unreadable file of the test)")
def test_files_are_read_from_disk_ahead_of_their_parse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With one worker, a TRF piece's files are read on the disk thread and their bytes handed to the parse (the
    reading thread does not read them again); an unreadable file is still listed with its reason."""
    for k in range(6):
        (tmp_path / f"{k}.trf").write_text(with_names(f"Player {k}", "Other"), encoding="utf-8")
    os.mkfifo(tmp_path / "fifo.trf")   # not a regular file: rejected without being opened for reading
    monkeypatch.setattr(kinds, "READ_FILES", 1)
    real_read, real_piece = safe.read_regular_files, sources.read_piece
    disk: list[str] = []
    handed: list[bool] = []

    def read_spy(paths: list[str]) -> list[Any]:
        disk.append(threading.current_thread().name)
        return real_read(paths)

    def piece_spy(piece: sources.Part, files: Any = None) -> tuple[pl.DataFrame, Batch | None]:
        handed.append(files is not None)
        return real_piece(piece, files)

    monkeypatch.setattr(safe, "read_regular_files", read_spy)
    monkeypatch.setattr(sources, "read_piece", piece_spy)
    run = pipeline.Run(inputs=[str(tmp_path)], batch_files=2, workers=1)
    got = [m.value for m in run.map(lambda batch: batch.players.filter(pl.col("start_no") == 1)["name"].to_list())]
    assert sorted(name for names in got for name in names) == [f"Player {k}" for k in range(6)]
    # pieces read ahead reach the parse with their bytes (a piece whose read had not started when its parse did is
    # read with it, a race: at least the later parts' pieces are read ahead, as the reading thread parses the first)
    assert len(handed) == 7 and sum(handed) >= 1 and disk.count("tbstats-disk_0") >= sum(handed)
    assert run.summary() == "7 files: 6 loaded, 1 rejected"
    assert "not a regular file" in run.ledger.filter(pl.col("path").str.ends_with("fifo.trf"))["reason"].item()


def where(x: int) -> tuple[int, int]:
    """The process that ran it, and ``x`` (module level: it travels to a worker process), in 10 ms."""
    time.sleep(0.01)
    return os.getpid(), x


def refuse(x: int) -> int:
    raise TbstatsError(f"refused {x}")


@needs_processes
def test_items_run_in_a_worker_process_and_here_and_come_back_in_order() -> None:
    processes.pool(1).ready.wait(timeout=120)   # the pool is up: the first items go to the worker
    got = list(ordering.ordered(where, range(40), 2))
    assert [x for _, x in got] == list(range(40))
    assert {pid for pid, _ in got} - {os.getpid()}   # some ran in the worker (this process alone takes 0.4 s)
    with pytest.raises(TbstatsError, match="refused 0"):
        list(ordering.ordered(refuse, range(3), 2))


def slow_here(item: tuple[int, int]) -> tuple[int, int, float, float]:
    """``(pid, x, start, end)``: 10 ms in a worker process, 1 s in the process named by the item (module level)."""
    parent, x = item
    start = time.monotonic()
    time.sleep(1.0 if os.getpid() == parent else 0.01)
    return os.getpid(), x, start, time.monotonic()


@needs_processes
def test_results_come_while_this_process_runs_an_item() -> None:
    """The worker's results due before an item this process runs are handed out while it runs (its output is
    written meanwhile), not once it is done."""
    processes.pool(1).ready.wait(timeout=120)
    got = []
    for pid, x, start, end in ordering.ordered(slow_here, [(os.getpid(), k) for k in range(12)], 2):
        got.append((pid, x, start, end, time.monotonic()))
    assert [x for _, x, *_ in got] == list(range(12))
    here = [(start, end) for pid, _, start, end, _ in got if pid == os.getpid()]
    assert here   # (the worker holds at most IN_HAND items: this process takes one)
    assert any(start < taken < end for start, end in here for pid, *_, taken in got if pid != os.getpid())


def steady_here(item: tuple[int, int]) -> tuple[int, int, float]:
    """``(pid, x, start)``: 0.2 s in the process named by the item, 0.15 s in a worker process (module level)."""
    parent, x = item
    start = time.monotonic()
    time.sleep(0.2 if os.getpid() == parent else 0.15)
    return os.getpid(), x, start


@needs_processes
def test_this_process_starts_its_next_item_while_the_caller_holds_a_result() -> None:
    """This process's thread goes on to its next item as soon as it has finished one (at most IN_HAND results
    of its own waiting), also while the caller is busy with a result (writing it): it used to wait for the
    caller's next request, idle meanwhile, so that no item could start here while the caller held one."""
    processes.pool(1).ready.wait(timeout=120)
    got = []
    taken = end = 0.0
    for pid, x, start in ordering.ordered(steady_here, [(os.getpid(), k) for k in range(10)], 2):
        if not got:   # the caller writes the first result for 1 s (items here start every 0.2 s meanwhile)
            taken = time.monotonic()
            time.sleep(1.0)
            end = time.monotonic()
        got.append((pid, x, start))
    assert [x for _, x, _ in got] == list(range(10))
    assert any(taken < start < end for pid, _, start in got if pid == os.getpid())


@needs_processes
@pytest.mark.skipif(not hasattr(fcntl, "F_GETPIPE_SZ"), reason="pipe sizes are Linux's (fcntl F_GETPIPE_SZ)")
def test_the_results_pipe_holds_a_large_result_at_once() -> None:
    """A worker's result (about 4 MB for 1,000 events) crosses in few writes: its pipe is widened to
    RESULT_PIPE bytes, or to the most the system allows a user."""
    here = processes.pool(1)
    here.ready.wait(timeout=120)
    size = fcntl.fcntl(here.executor._result_queue._reader.fileno(), fcntl.F_GETPIPE_SZ)
    cap = int(Path("/proc/sys/fs/pipe-max-size").read_text())
    assert size >= min(processes.RESULT_PIPE, cap) > 65536


_PRESTARTED = """if True:
    import gc, os, signal, sys, threading, time
    from multiprocessing import forkserver, resource_tracker
    from tbstats.run import processes
    if sys.argv[1] == "threads":   # a thread of this process's own: a plain fork is not safe then
        threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
    gc.disable()   # as the command line runs until its command's module is loaded
    processes.prestart(2)
    here = processes.pool(1)
    here.ready.wait(timeout=120)
    def status(pid, key):
        with open(f"/proc/{pid}/status") as text:
            return next(line.split()[1] for line in text if line.startswith(key))
    child, = processes._children_of(os.getpid()) if here.executor._mp_context.get_start_method() == "fork" else [
        pid for pid in processes._children_of(forkserver._forkserver._forkserver_pid)]
    state = here.executor.submit(eval, "(__import__('os').getpid(), 'tbstats.io.sources' in __import__('sys').modules,"
                                       " __import__('gc').isenabled())").result(timeout=60)
    print(here.executor._mp_context.get_start_method(), forkserver._forkserver._forkserver_pid is None,
          resource_tracker._resource_tracker._pid is None, state == (child, True, True),
          bool(int(status(child, "SigBlk:"), 16) & 2), signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, []))
    processes.shutdown()
"""


@needs_processes
@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="threads are counted in Linux's /proc")
@pytest.mark.parametrize(("threads", "expected"), [
    ("one", ["fork", "True", "True", "True", "True", "False"]),
    ("threads", ["forkserver", "False", "False", "True", "True", "False"])])
def test_the_command_line_forks_its_one_worker_process_while_it_runs_one_thread(threads: str,
                                                                                 expected: list[str]) -> None:
    """``--workers 2``: the command line (:func:`processes.prestart`, before anything imports numpy or polars)
    forks its one worker process from itself, which imports the reader on its own (collector on again), with
    SIGINT blocked in it and not in the command; no forkserver and no resource tracker start. A process that
    runs another thread starts its worker from a forkserver instead. (A fresh interpreter each.)"""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _PRESTARTED, threads], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == expected, (done.stdout, done.stderr)


_WARMED = """if True:
    import sys, threading, time
    from tbstats.run import processes
    if sys.argv[1] == "threads":
        threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
    processes.prestart(int(sys.argv[2]), archives=sys.argv[3:])
    here = processes.pool(int(sys.argv[2]) - 1)
    here.ready.wait(timeout=120)
    here.warm.wait(timeout=120)
    kept = here.executor.submit(eval, "sorted(k[0] for k in __import__('tbstats.io.archives').io.archives._kept)")
    print(kept.result(timeout=60))
    processes.shutdown()
"""


@needs_processes
@pytest.mark.parametrize(("threads", "workers"), [("one", 2), ("threads", 2)])
def test_the_workers_open_the_archives_the_command_names_before_their_first_item(
        threads: str, workers: int, tmp_path: Path) -> None:
    """The worker process opens the archives named on the command line while it plans its run (forked from it or
    from a forkserver), and the feeder hands it items only then (``warm``): a compressed tar's copy is then not
    made in the worker's first item, which this process would wait for. What cannot be opened is left to the
    items, which say why. (One worker: with more, each task goes to whichever worker is free.)"""
    import subprocess
    import sys
    import zipfile

    good = tmp_path / "a.zip"
    with zipfile.ZipFile(good, "w") as z:
        z.writestr("a.trf", GOOD)
    broken = tmp_path / "b.zip"
    broken.write_bytes(b"not a zip")
    done = subprocess.run([sys.executable, "-c", _WARMED, threads, str(workers), str(good), str(broken)],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == repr([str(good)]), (done.stdout, done.stderr)


def _batch(text: str) -> Batch:
    return read_trf([("x.trf", text.encode())]).batch


def _files(tmp_path: Path, n: int) -> None:
    for k in range(n):
        (tmp_path / f"{k:02d}.trf").write_text(with_names(f"First {k:02d}", f"Second {k:02d}"))


def names(batch: Batch) -> list[str]:
    return batch.players["name"].to_list()


@needs_processes
@pytest.mark.parametrize("travels", [True, False])
def test_trf_read_in_worker_processes_gives_the_same_tournaments_ledger_and_errors(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, travels: bool) -> None:
    """A map function that travels: parts read and mapped by a worker or here, in parts of at most
    READ_FILES files (smaller batches, the same tournaments in order); one that does not (a local function)
    or batches that must stay (``keep``): pieces read there and here, the very batches of one process."""
    monkeypatch.setattr(kinds, "READ_FILES", 1)   # a part of 3 files is read in 3 pieces
    monkeypatch.setattr(sizing, "PAIR_FILES", 1)  # (else so few files are read ahead here, as with one worker)
    _files(tmp_path, 9)
    (tmp_path / "04.trf").write_text(GOOD.replace("001    1", "001    x", 1))
    (tmp_path / "07.html").write_text("not a tournament")
    processes.pool(1).ready.wait(timeout=120)
    f = names if travels else (lambda batch: names(batch))
    one = pipeline.Run(inputs=[str(tmp_path)], batch_files=3, batch_size=2)
    expected = [(m.first_id, m.value) for m in one.map(names)]
    assert [first for first, _ in expected] == [0, 2, 3, 5, 7]   # batches of 2 within each part of 3 files
    two = pipeline.Run(inputs=[str(tmp_path)], batch_files=3, batch_size=2, workers=2)
    got = [(m.first_id, m.value) for m in two.map(f)]
    if travels:   # one tournament per batch, the same tournaments in order
        assert got == [(k, players) for k, players in enumerate(p for _, v in expected for p in _fours(v))]
    else:
        assert got == expected
    assert two.ledger.equals(one.ledger)
    paths = two.ledger["path"].unique(maintain_order=True).to_list()
    assert paths == [str(tmp_path / n) for n in ("04.trf", "07.html")]
    assert two.summary() == one.summary() == "9 files: 8 loaded, 1 rejected"
    with pytest.raises(FormatError) as raised:
        list(pipeline.Run("raise", inputs=[str(tmp_path)], batch_files=3, workers=2).map(f))
    assert raised.value.path == str(tmp_path / "04.trf")


def test_items_of_a_trf_run_are_smaller_when_the_run_is_small_or_its_files_large(tmp_path: Path) -> None:
    """READ_FILES files an item, fewer so that each process gets ITEMS_A_PROCESS (3), never below half of it; and
    never more than a piece: large files (about READ_BYTES of them) make items of fewer files."""
    assert sizing.ITEMS_A_PROCESS == 3
    sizes = (6, 12, 18, 30)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kinds, "READ_FILES", 4)
        # 6 and 12 files: at least half of READ_FILES; 18: three items of 3 a process; 30: READ_FILES at most
        assert [sizing.item_files(n, 2) for n in sizes] == [2, 2, 3, 4]
        assert [sizing.item_files(n, 3) for n in sizes] == [2, 2, 2, 4]   # 30 files: 30/9 -> 4
        assert [sizing.items(n, 100, 2) for n in sizes] == [3, 6, 6, 8]
    assert sizing.item_files(6, 2) == kinds.READ_FILES // 2
    _files(tmp_path, 12)
    plan = sources.plan([str(tmp_path)]).parts
    assert [len(p.items) for p in work.cut_for_processes(plan, 2)] == [12]   # (small files: one item)
    size = os.path.getsize(tmp_path / "00.trf")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kinds, "READ_BYTES", 5 * size)   # files this large: 5 an item
        assert [len(p.items) for p in work.cut_for_processes(plan, 2)] == [5, 5, 2] == [
            len(p.items) for p in sources.pieces(plan[0])]
        assert sizing.items(12, size, 2) == 3


def _fours(players: list[str]) -> list[list[str]]:
    """A batch's player names cut into its four-player tournaments."""
    return [players[k:k + 4] for k in range(0, len(players), 4)]


def test_a_part_of_trf_files_is_cut_in_order_with_its_skipped_names() -> None:
    from tbstats.io.expand import _Item

    items = tuple(_Item(f"{k}.{'trf' if k % 3 else 'html'}", "trf" if k % 3 else "skip", f"{k}")
                  for k in range(8))
    part = sources.Part(items)
    pieces = sources.split(part, 2)
    assert [tuple(i.name for i in p.items) for p in pieces] == [
        ("0.html", "1.trf", "2.trf"), ("3.html", "4.trf", "5.trf"), ("6.html", "7.trf")]
    assert sum(p.files for p in pieces) == part.files and sum(p.skipped for p in pieces) == part.skipped
    assert sources.split(part, 5) == [part]


@needs_processes
def test_the_command_with_worker_processes_prints_nothing_else_and_writes_the_same_table(tmp_path: Path) -> None:
    """A whole ``tbstats`` process (its worker processes start, read, and stop with it): the same table,
    and nothing on stderr from the workers. ``--workers 3``: two worker processes from fewer files than one
    needs to pay (:func:`tbstats.run.sizing.least_files`)."""
    import subprocess
    import sys

    pieces = sizing.FEWEST * kinds.READ_FILES // 2   # enough files for the command to start workers
    assert pieces + 1 >= sizing.least_files(3)
    inputs = tmp_path / "in"
    inputs.mkdir()
    for k in range(pieces + 1):
        (inputs / f"{k:05d}.trf").write_text(GOOD)
    tables = []
    for workers in ("1", "3"):
        out = tmp_path / f"out{workers}.csv"
        done = subprocess.Popen([sys.executable, "-m", "tbstats", "compute", str(inputs), "-t", "BH,SB", "-q",
                                 "--format", "csv", "-o", str(out), "--workers", workers],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        _, stderr = done.communicate(timeout=120)
        assert done.returncode == 0 and stderr == "", stderr
        # the program ends without the interpreter's teardown (tbstats.cli.base): its workers, forkserver and
        # resource tracker end with it, nothing of its session stays behind
        assert _session_empty(done.pid), _session_empty
        tables.append(out.read_text())
    assert tables[0] == tables[1] and tables[0].count("\n") == 4 * (pieces + 1) + 1


def _session_empty(session: int, wait: float = 10.0) -> bool:
    """Whether no live process of ``session`` is left (Linux's /proc; waits up to ``wait`` seconds for the
    resource tracker, which ends once it reads that the others are gone)."""
    if not os.path.isdir("/proc"):
        return True
    deadline = time.monotonic() + wait
    while True:
        left = []
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                try:
                    fields = Path(entry.path, "stat").read_text().rpartition(")")[2].split()
                except OSError:
                    continue
                if int(fields[3]) == session and fields[0] != "Z":
                    left.append(entry.name)
        if not left or time.monotonic() > deadline:
            return not left
        time.sleep(0.05)


def test_without_worker_processes_two_workers_run_threads_with_the_same_results(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where a process pool cannot start (no semaphores, e.g. no /dev/shm), ``--workers`` runs threads."""
    _files(tmp_path, 6)
    one = [m.value for m in pipeline.Run(inputs=[str(tmp_path)], batch_files=1).map(names)]
    monkeypatch.setattr(processes, "_semaphores", lambda: False)
    assert not processes.available()
    monkeypatch.setattr(ordering, "ordered", lambda *a, **k: pytest.fail("no worker process may start"))
    assert [m.value for m in pipeline.Run(inputs=[str(tmp_path)], batch_files=1, workers=2).map(names)] == one


def test_worker_processes_start_only_for_archives_where_they_pay(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """``least_files(N)`` TRF files: with more than 2 workers the fewest that a run cuts into enough items for
    worker processes; with 2, where one worker process paid on the mix archive. Below, a run reads ahead here (as
    with one worker); the command line counts the inputs' TRF files by name (up to that many) before it starts
    the forkserver."""
    from tbstats.cli.base import processes_pay
    from tbstats.io.expand import _Item
    from tbstats.io.kinds import trf_files

    def trf_files_at_least(inputs: list[str], least: int) -> bool:
        return trf_files(inputs, least)[0] >= least

    def parts(files: int) -> list[sources.Part]:
        return [sources.Part(tuple(_Item(f"{k}.trf", "trf", f"{k}.trf") for k in range(files)))]

    least = sizing.least_files(3)
    assert len(work.cut_for_processes(parts(least - 1), 3)) < sizing.FEWEST
    assert len(work.cut_for_processes(parts(least), 3)) >= sizing.FEWEST
    assert sizing.least_files(2) == sizing.PAIR_FILES > least
    from click.testing import CliRunner

    from tbstats.cli import main
    helped = " ".join(CliRunner().invoke(main, ["compute", "--help"]).output.split())
    assert f"with 2, from {sizing.PAIR_FILES:,}" in helped   # (--workers says so)
    for workers in (2, 3):
        n = sizing.least_files(workers)
        assert work.few_trf(parts(n - 1), workers) and not work.few_trf(parts(n), workers)
    # batches that come back (ingest): never with 2 workers, however many files; with 3 from least_files(3)
    assert work.few_trf(parts(2 * sizing.least_files(2)), 2, keep=True)
    assert not work.few_trf(parts(sizing.least_files(3)), 3, keep=True)
    write_model(_batch(GOOD), tmp_path / "m.parquet")
    model = sources.plan([str(tmp_path / "m.parquet")]).parts
    assert not work.few_trf([*parts(3), *model], 2)   # a model's parts go to threads
    # a run below the threshold reads ahead here: no worker process is asked for
    monkeypatch.setattr(ordering, "ordered", lambda *a: pytest.fail("worker processes for 6 files"))
    (tmp_path / "six").mkdir()
    _files(tmp_path / "six", 6)
    assert len([m for m in pipeline.Run(inputs=[str(tmp_path / "six")], batch_files=1, workers=2).map(names)]) == 6
    ahead = []
    monkeypatch.setattr(work, "read_ahead", lambda *a, _real=work.read_ahead: ahead.append(1) or _real(*a))
    with monkeypatch.context() as patch:
        patch.setattr(sizing, "least_files", lambda workers: 1)   # enough files, too few pieces: read ahead
        kept = list(pipeline.Run(inputs=[str(tmp_path / "six")], workers=3).map(names, keep=True))
    assert ahead == [1]
    assert [m.value for m in kept] == [m.value for m in pipeline.Run(inputs=[str(tmp_path / "six")]).map(names)]

    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    for k in range(3):
        (deep / f"{k}.TRF").write_text(GOOD)
    (tmp_path / "a" / "x.tab").write_text(GOOD)
    (tmp_path / "a" / ".hidden.trf").write_text(GOOD)
    (tmp_path / "a" / "notes.html").write_text("")
    (deep / "loop").symlink_to(tmp_path / "a", target_is_directory=True)   # (not walked: no endless count)
    tree = str(tmp_path / "a")
    assert trf_files_at_least([tree], 4) and not trf_files_at_least([tree], 5)
    assert trf_files_at_least([str(deep / "0.TRF")], 1) and not trf_files_at_least([str(tmp_path / "none")], 1)
    assert trf_files_at_least([str(tmp_path / "*.trf")], 10**6)   # a pattern: not expanded here
    (tmp_path / "a" / "more.zip").write_bytes(b"")
    assert trf_files_at_least([tree], 10**6)                      # an archive: any number of members
    write_model(_batch(GOOD), tmp_path / "model")
    assert not trf_files_at_least([str(tmp_path / "model")], 1)
    monkeypatch.setattr(sizing, "PAIR_FILES", 3)
    assert processes_pay(["compute", str(deep), "-t", "BH"], 2)
    monkeypatch.setattr(sizing, "PAIR_FILES", 4)
    assert not processes_pay(["compute", str(deep)], 2)


def test_fewer_files_go_to_worker_processes_when_they_hold_enough_text(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """With fewer files than :func:`~tbstats.run.sizing.least_files`, when they hold
    :data:`~tbstats.run.sizing.PAIR_BYTES` (told from a sample of their sizes) in at least
    :data:`~tbstats.run.sizing.FEWEST` items: the command line (before the forkserver) and the run (after the plan)
    decide alike; never in fewer items, nor from an archive's size for its members."""
    from tbstats.cli.base import processes_pay
    from tbstats.io.expand import _Item

    for k in range(6):
        (tmp_path / f"{k}.trf").write_text(GOOD + " " * 100 * k)   # (sizes differ: the sample is what tells)
    paths = [str(tmp_path / f"{k}.trf") for k in range(6)]
    size = sum(os.path.getsize(p) for p in paths)
    assert sizing.estimated_bytes(paths, 6) == size == sizing.estimated_bytes(paths[::-1], 6)
    assert sizing.estimated_bytes([], 6) == 0
    plan = sources.plan([str(tmp_path)]).parts
    monkeypatch.setattr(kinds, "READ_BYTES", size // 6)   # (files this large: an item each, six items)
    for workers in (2, 3):
        for cap, pays in ((size, True), (size + 1, False)):
            monkeypatch.setattr(sizing, "PAIR_BYTES", cap)
            assert processes_pay(["compute", str(tmp_path)], workers) is pays
            assert work.few_trf(plan, workers) is not pays
    monkeypatch.setattr(sizing, "PAIR_BYTES", 1)
    monkeypatch.setattr(kinds, "READ_BYTES", 2 * size // 6 + 1)   # two files an item: three items, too few
    assert sizing.items(6, size / 6, 2) == 3
    assert not processes_pay(["compute", str(tmp_path)], 2) and work.few_trf(plan, 2)
    monkeypatch.setattr(kinds, "READ_BYTES", size // 6)
    members = [sources.Part(tuple(_Item(f"a.zip!{k}.trf", "trf", paths[5], member=f"{k}.trf") for k in range(6)))]
    assert work.few_trf(members, 2)   # (the archive's size is no member's)
    many = [str(tmp_path / f"{k}.trf") for k in range(6) for _ in range(40)]   # more paths than the sample
    assert sizing.estimated_bytes(many, 240) == pytest.approx(40 * size, rel=0.2)


@pytest.mark.parametrize("command", [
    ["compute", "{src}", "-t", "BH/C1,BH,SB"], ["compare", "{src}", "-c", "a=fide-2026:BH", "-c", "b=fide-2024:BH"],
    ["audit", "{src}"], ["info", "{src}"], ["ingest", "{src}", "-o", "{out}"],
    ["evaluate", "{src}", "-c", "a=fide-2026:BH/C1,BH,SB", "--strength", "archive"]])
def test_the_command_line_judges_worker_processes_as_its_run_does(command: list[str], tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether a command's runs bring their batches back from worker processes (``Run.map(..., keep=True)``) is
    what the command line, deciding before the command's modules are imported whether to start them, reads
    from :data:`tbstats.cli.base.BATCHES_BACK`: it starts them when a run of the command will use them."""
    from click.testing import CliRunner

    from tbstats.cli import main
    from tbstats.cli.base import BATCHES_BACK, processes_pay

    (tmp_path / "in").mkdir()
    _files(tmp_path / "in", 6)
    args = [a.format(src=tmp_path / "in", out=tmp_path / "out.parquet") for a in command]
    monkeypatch.setattr(kinds, "READ_BYTES", 1)   # (a file an item: six items)
    monkeypatch.setattr(sizing, "PAIR_BYTES", 1)
    judged: list[bool] = []

    def few(parts: Any, workers: int, *, keep: bool = False) -> bool:
        judged.append(sizing.processes_pay(6, [str(p) for p in (tmp_path / "in").iterdir()], workers,
                                           batches_back=keep))
        return True   # (read here all the same: no worker process starts in this test)

    monkeypatch.setattr(pipeline, "few_trf", few)
    done = CliRunner().invoke(main, [*args, "--workers", "2", "-q"])
    assert done.exit_code == 0, done.output
    assert judged and processes_pay([*args, "--workers", "2"], 2) is any(judged)   # (evaluate: a fit, then a kept run)
    assert (command[0] in BATCHES_BACK) is not any(judged)
