"""Progress bars: a total known from the plan (input files, a model's tournaments, the events to simulate), a
move as each batch is done, a redraw at least once a second; none when quiet or off a terminal."""

from __future__ import annotations

import io
import re
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import ROOT

from tbstats.analysis import quality
from tbstats.cli import main
from tbstats.engine.configs import parse_config
from tbstats.io import progress, sources
from tbstats.run import pipeline
from tbstats.simulation import SimulationConfig

EXAMPLES = ROOT / "data" / "examples"
SAMPLE = ROOT / "data" / "sample_archive.parquet"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _counts(text: str, unit: str) -> tuple[list[int], set[int]]:
    """The counts the bar showed, in order (repeats of one count left out), and the totals it showed."""
    found = re.findall(rf"(\d+)/(\d+) \[[^\]]* {unit}/s", text)
    shown: list[int] = []
    for n, _ in found:
        if not shown or shown[-1] != int(n):
            shown.append(int(n))
    return shown, {int(total) for _, total in found}


@pytest.fixture(autouse=True)
def every_move_drawn(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every move of a bar is drawn (on a terminal, moves closer than 0.1 s make one redraw)."""
    monkeypatch.setattr(progress, "QUICKEST", 0)


def _screen(monkeypatch: pytest.MonkeyPatch) -> _Terminal:
    """Standard error as a terminal (set in the test itself: pytest sets its own between setup and call)."""
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    return terminal


@pytest.fixture
def trf_dir(tmp_path: Path) -> Path:
    """The five examples and a file that is rejected: six input files, tournaments unknown before reading."""
    for path in EXAMPLES.glob("*.trf"):
        shutil.copy(path, tmp_path / path.name)
    (tmp_path / "zz_bad.trf").write_bytes(b"012 Only a header\nXXR 5\n")   # no player: rejected
    (tmp_path / "notes.html").write_text("<p>not a tournament</p>", encoding="utf-8")   # skipped: not counted
    return tmp_path


def test_trf_files_are_counted_by_the_plan_and_the_bar_moves_part_by_part(trf_dir: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    screen = _screen(monkeypatch)
    run = pipeline.Run(inputs=[str(trf_dir)], batch_files=1, progress=True)
    assert sum(m.tournaments for m in run.map(lambda b: b.n_tournaments)) == 5
    shown, totals = _counts(screen.getvalue(), "files")
    assert totals == {6}
    assert shown == [0, 1, 2, 3, 4, 5, 6]   # the rejected file moves the bar too


def test_batches_of_one_part_share_its_files(trf_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    screen = _screen(monkeypatch)
    run = pipeline.Run(inputs=[str(trf_dir)], batch_size=1, progress=True)    # one part of 6 files, 5 batches
    list(run.map(pipeline.nothing, keep=True))
    shown, totals = _counts(screen.getvalue(), "files")
    assert totals == {6} and shown[0] == 0 and shown[-1] == 6
    assert len(shown) == 6   # 0, then once per batch


def test_a_model_counts_its_tournaments(monkeypatch: pytest.MonkeyPatch) -> None:
    screen = _screen(monkeypatch)
    run = pipeline.Run(inputs=[str(SAMPLE)], batch_size=50, progress=True)
    list(run.map(lambda b: b.n_tournaments))
    shown, totals = _counts(screen.getvalue(), "tournaments")
    assert totals == {200} and shown == [0, 50, 100, 150, 200]
    assert "game rows/s" in screen.getvalue()


def test_load_counts_files_too(trf_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    screen = _screen(monkeypatch)
    sources.load([str(trf_dir)], on_error="collect", progress=True, batch_files=2)
    shown, totals = _counts(screen.getvalue(), "files")
    assert totals == {6} and shown == [0, 2, 4, 6]


def test_no_bar_when_not_asked_or_not_a_terminal(trf_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    screen = _screen(monkeypatch)
    list(pipeline.Run(inputs=[str(trf_dir)]).map(pipeline.nothing))
    assert screen.getvalue() == ""
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    bar = progress.progress(10, "files", True)
    assert bar.bar is None
    bar.advance(3)
    bar.close()


class _Stop:
    """A stop event that says 'not yet' a given number of times, recording how long it was asked to wait."""

    def __init__(self, waits: int) -> None:
        self.left = waits
        self.timeouts: list[float | None] = []

    def wait(self, timeout: float | None = None) -> bool:
        self.timeouts.append(timeout)
        self.left -= 1
        return self.left < 0


class _Bar:
    def __init__(self) -> None:
        self.refreshed = 0
        self.closed = False

    def refresh(self) -> None:
        self.refreshed += 1

    def close(self) -> None:
        self.closed = True


def test_the_bar_is_redrawn_at_least_once_a_second_while_nothing_moves() -> None:
    bar, stop = _Bar(), _Stop(3)
    assert progress.redraw(bar, stop) == 3
    assert bar.refreshed == 3 and stop.timeouts and all(t is not None and t <= 1.0 for t in stop.timeouts)


def test_a_bar_redraws_on_a_thread_that_ends_when_it_closes() -> None:
    bar = _Bar()
    shown = progress.Progress(bar)
    thread = shown._thread
    assert thread is not None and thread.is_alive() and thread.daemon
    shown.close()
    assert not thread.is_alive() and bar.closed


def test_simulate_shows_the_events_simulated_then_measured(monkeypatch: pytest.MonkeyPatch) -> None:
    screen = _screen(monkeypatch)
    monkeypatch.setattr(quality, "MEASURED_AT_ONCE", 2)
    config = SimulationConfig(tournaments=8, players=10, rounds=5, seed=1)
    _, table = quality.run(config, [parse_config("a=fide-2026:BH,SB")], progress=True)
    text = screen.getvalue()
    simulated, totals = _counts(text.split("measure:")[0], "events")
    assert "simulate:" in text and totals == {8}
    assert simulated == [0, 1, 3, 4, 6, 8]   # round by round
    measured, totals = _counts(text.split("measure:", 1)[1], "events")
    assert totals == {8} and len(measured) == 5 and measured[-1] == 8   # 0, then run by run (4 runs)
    monkeypatch.setattr(quality, "MEASURED_AT_ONCE", 1000)
    assert quality.run(config, [parse_config("a=fide-2026:BH,SB")])[1].equals(table)   # runs change nothing


# ----------------------------------------------------------------------------- every command draws its bar

@pytest.fixture
def on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """The streams click's runner gives a command count as a terminal."""
    monkeypatch.setattr(progress, "terminal", lambda stream: True)


def _stderr(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code in (0, 1), result.output
    return result.stderr


@pytest.mark.parametrize("command", [["compute", "-t", "BH"], ["compare", "-c", "a=fide-2026:BH", "-c",
                                                                 "b=fide-2024:BH"],
                                     ["audit"], ["info"], ["evaluate"], ["compute", "--teams", "-t", "MP"]])
def test_every_archive_command_counts_the_input_files(command: list[str], trf_dir: Path, on_a_terminal: None,
                                                      tmp_path: Path) -> None:
    text = _stderr(command[0], str(trf_dir), *command[1:], "-o", str(tmp_path / "out.csv"))
    shown, totals = _counts(text, "files")
    assert totals == {6} and shown[-1] == 6, text
    assert _stderr(command[0], str(trf_dir), *command[1:], "-q", "-o", str(tmp_path / "q.csv")) == ""


def test_ingest_counts_the_input_files(trf_dir: Path, on_a_terminal: None, tmp_path: Path) -> None:
    shown, totals = _counts(_stderr("ingest", str(trf_dir), "-o", str(tmp_path / "model")), "files")
    assert totals == {6} and shown[-1] == 6


def test_the_archive_fit_has_a_bar_of_its_own(trf_dir: Path, on_a_terminal: None) -> None:
    """The fit's pass over the files has its bar, then the fit itself counts its steps (Newton steps of the
    whole fit, runs of refits: seconds on a large archive, when the files' bar stands at its end)."""
    text = _stderr("evaluate", str(trf_dir), "--strength", "archive")
    assert "fit:" in text and "evaluate:" in text
    for part in text.split("evaluate:"):
        assert _counts(part, "files")[1] == {6}
    steps = [int(n) for n in re.findall(r"fit \(Newton steps, refits\): (\d+) steps \[", text)]
    assert steps and steps[0] == 0 and steps[-1] >= 1 and steps == sorted(steps), text
    assert text.index("fit:") < text.index("fit (Newton") < text.index("evaluate:")


def test_simulate_command_shows_its_bars_unless_quiet(on_a_terminal: None) -> None:
    text = _stderr("simulate", "-n", "4", "--players", "8", "--sweep", "rounds=3,5")
    for label in ("simulate:", "measure:", "rounds=3: simulate:", "rounds=5: measure:"):
        assert label in text
    assert _counts(text, "events")[1] == {4}
    result = CliRunner().invoke(main, ["simulate", "-n", "4", "--players", "8", "-q"])
    assert result.exit_code == 0 and result.stderr == ""

