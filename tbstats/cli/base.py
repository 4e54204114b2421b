"""The ``tbstats`` click group, exit codes and the error-to-exit-code conversion."""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import select
import signal
import sys
import threading
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from typing import Any, Final, NoReturn

import click

from tbstats import __version__, keep_freed_memory
from tbstats.errors import TbstatsError

EXIT_OK: Final = 0
EXIT_REJECTED: Final = 1
EXIT_USAGE: Final = 2
EXIT_INVALID: Final = 3
EXIT_INTERRUPTED: Final = 130
#: Standard output was closed by its reader before the command wrote everything (``tbstats ... | head``): what a
#: shell reports for a program stopped by SIGPIPE (128 + 13).
EXIT_BROKEN_PIPE: Final = 141
#: At most this many problems are printed on stderr; ``--errors FILE`` has them all.
SHOWN_PROBLEMS: Final = 10

EPILOG: Final = """\b
Exit codes:
  0  success
  1  the command ran, but some inputs were rejected (see --errors FILE)
  2  usage error (unknown option, bad value, missing argument)
  3  invalid input in raise mode, or a file that cannot be read or written
  130  interrupted (Ctrl-C)
  141  standard output closed by its reader before the end (e.g. piped into head)
"""



#: Set by :func:`run`: this process is the ``tbstats`` program (not a host that calls :func:`main`).
_program = False

#: Where the group keeps the arguments as typed (for the provenance line of reports).
ARGV_KEY: Final = "tbstats.argv"


def _stop_now(code: int) -> NoReturn:
    """Exit at once, even while worker threads are busy: flush what was written, then end the process."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


#: The module defining each command: a command's module is imported when the command is looked up (click's
#: lazy-loading pattern), so ``tbstats compute`` never imports what only ``simulate`` or ``evaluate`` need.
COMMAND_MODULES: Final = {
    "compare": "tbstats.cli.archive", "audit": "tbstats.cli.archive", "ingest": "tbstats.cli.data",
    "info": "tbstats.cli.data", "compute": "tbstats.cli.engine", "explain": "tbstats.cli.engine",
    "tiebreaks": "tbstats.cli.registry", "evaluate": "tbstats.cli.fairness", "simulate": "tbstats.cli.simulation",
}

#: The commands all of whose runs bring their batches back from worker processes to be mapped here
#: (``Run.map(..., keep=True)``; evaluate keeps them too, after a first run that does not): :func:`processes_pay`
#: judges their inputs as their runs will (``tests/test_overlap.py`` checks that the two agree).
BATCHES_BACK: Final = frozenset({"ingest"})

#: The first paragraph of each command's help, which ``tbstats --help`` lists without importing any command's
#: module (``tests/test_cli_lazy.py`` checks it against the commands' own help).
SUMMARIES: Final = {
    "audit": "Recompute standings and compare them with the ranks and points declared in the files.",
    "compare": "How often configurations (edition + tie-break order) change winners, podiums and rankings.",
    "compute": "Compute tie-breaks and standings: one row per player (one per team with --teams).",
    "evaluate": "Which tie-break order ranks tied players closer to their strength, and whom it favours, on real "
                "events.",
    "explain": "Show a player's tie-break round by round: what each round adds, or what the value is made of.",
    "info": "Count tournaments, players, rounds, game rows by game type, and warnings.",
    "ingest": "Read tournaments (TRF files, directories, globs, zip/tar archives, models) and write the model.",
    "simulate": "Simulate tournaments with known true strengths and measure which tie-break order recovers them.",
    "tiebreaks": "List the tie-break registry: name, article, modifiers, direction and description.",
}


#: What a command that runs (not one that only prints its help) imports before its body: the run helpers, and
#: through them polars, numpy, pyarrow, the readers and the engine.
RUN_MODULES: Final = ("tbstats.cli.runs",)


class Command(click.Command):
    """A tbstats command. Its module declares it with click and light modules only, so that ``tbstats CMD --help``
    imports none of polars, numpy or pyarrow; its ``imports`` (default :data:`RUN_MODULES`) are imported when it
    runs, before its body (:func:`_imported`)."""

    def __init__(self, *args: Any, imports: Sequence[str] = RUN_MODULES, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.imports = tuple(imports)

    def invoke(self, ctx: click.Context) -> Any:
        _imported(self.imports)
        return super().invoke(ctx)


def _imported(modules: Sequence[str]) -> None:
    """Import what a command runs with; in the program, then freeze what the imports made and resume the collector
    (paused by :func:`run`: the modules stay for the whole process, later collections need not walk them)."""
    for module in modules:
        importlib.import_module(module)
    _reclaim_ctrl_c()
    if _program:
        gc.freeze()
        gc.enable()


class _Commands(MutableMapping[str, click.Command]):
    """The group's commands by name. Looking one up imports its module (which registers its commands);
    listing them (iteration, ``items()``, help) imports every module first, so the listing is complete."""

    def __init__(self, commands: Mapping[str, click.Command]) -> None:
        self._known = dict(commands)

    @property
    def loaded(self) -> dict[str, click.Command]:
        """The commands whose modules are imported, by name."""
        return self._known

    def _load(self, name: str) -> None:
        module = COMMAND_MODULES.get(name)
        if module is not None and name not in self._known:
            importlib.import_module(module)   # (light: what the command runs with comes in Command.invoke)

    def __getitem__(self, name: str) -> click.Command:
        self._load(name)
        return self._known[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._known[name] = command

    def __delitem__(self, name: str) -> None:
        del self._known[name]

    def __iter__(self) -> Iterator[str]:
        for name in COMMAND_MODULES:
            self._load(name)
        return iter(self._known)

    def __len__(self) -> int:
        return len(list(iter(self)))


def workers_asked(args: list[str]) -> int:
    """The ``--workers N`` of a command line that runs here (no ``--scheduler``), read before the command's
    modules are imported (1 when absent or not a number; click checks the value later).

    >>> workers_asked(["compute", "dir", "--workers", "2"]), workers_asked(["info", "--workers=3"])
    (2, 3)
    >>> workers_asked(["compare", "dir", "--workers", "2", "--scheduler", "local"])
    1
    """
    if any(a == "--scheduler" or a.startswith("--scheduler=") for a in args):
        return 1
    for k, arg in enumerate(args):
        if arg.startswith("--workers="):
            value = arg.partition("=")[2]
        elif arg == "--workers" and k + 1 < len(args):
            value = args[k + 1]
        else:
            continue
        return int(value) if value.isdigit() else 1
    return 1


def processes_pay(args: list[str], workers: int) -> bool:
    """Whether a command line with ``--workers N`` may read enough TRF files for worker processes
    (:func:`tbstats.run.sizing.processes_pay`): the arguments that name an existing path, or a glob pattern, and
    are not a columnar model (a model alone is read on threads: starting the processes would only take a core
    from it) hold that many. Told before the command's modules are imported, from names, directory entries
    and a few files' sizes (:func:`tbstats.io.kinds.trf_files`).

    >>> processes_pay(["compute", "data/examples", "-t", "BH"], 2), processes_pay(["info", "x/*.parquet"], 3)
    (False, False)
    >>> processes_pay(["compute", "data/*.trf", "-t", "BH"], 2)   # a pattern may hold any number
    True
    """
    from tbstats.io.kinds import columnar_name, trf_files
    from tbstats.run import sizing

    files, paths = trf_files((a for a in args if not columnar_name(a)), sizing.least_files(workers))
    command = next((a for a in args if not a.startswith("-")), "")
    return sizing.processes_pay(files, paths, workers, batches_back=command in BATCHES_BACK)


def archives_named(args: list[str]) -> list[str]:
    """The arguments that name an archive file (zip, tar): the worker processes open them while the command
    plans its run (:func:`tbstats.run.processes.prestart`)."""
    from tbstats.io.kinds import ARCHIVES

    return [a for a in args if a.lower().endswith(ARCHIVES) and os.path.isfile(a)]


class _Group(click.Group):
    """A click group that turns tbstats errors into a message on stderr and exit code 3, Ctrl-C into 130;
    its commands are imported when first needed (:class:`_Commands`), each a :class:`Command`."""

    command_class = Command

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = _Commands(self.commands)
        self.commands = self.lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMAND_MODULES, *self.lazy.loaded})

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands and their summaries, from :data:`SUMMARIES` for the commands not imported yet (the help
        click would write after importing every command's module)."""
        known = self.lazy.loaded
        names = [n for n in self.list_commands(ctx) if n not in known or not known[n].hidden]
        if not names:
            return
        limit = formatter.width - 6 - max(len(n) for n in names)
        rows = [(n, known[n].get_short_help_str(limit) if n in known
                 else click.Command(n, help=SUMMARIES[n]).get_short_help_str(limit)) for n in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta[ARGV_KEY] = list(args)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            argv = ctx.meta.get(ARGV_KEY, [])
            if (workers := workers_asked(argv)) > 1 and processes_pay(argv, workers):
                from tbstats.run import processes

                processes.prestart(workers, archives=archives_named(argv))
            return super().invoke(ctx)
        except KeyboardInterrupt:   # raised by code, or in another program's process (the tbstats program stops
            click.echo("Interrupted.", err=True)   # at a Ctrl-C in _stop_at_once)
            # the tbstats program ends now (its worker threads would otherwise finish their part first); a host
            # process lives on: its kept helper threads (tbstats.engine.threads) drop the parts not started
            if _program and any(t.is_alive() and not t.daemon for t in threading.enumerate()
                                if t is not threading.main_thread()):
                _stop_now(EXIT_INTERRUPTED)
            ctx.exit(EXIT_INTERRUPTED)
        except TbstatsError as exc:
            click.echo(f"Error: {exc}", err=True)
            ctx.exit(EXIT_INVALID)
        except OSError as exc:
            if isinstance(exc, BrokenPipeError) and _stdout_gone():
                # the reader of the output has gone (``| head``): nothing to say, nor anywhere to write more
                with contextlib.suppress(OSError, ValueError):
                    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                ctx.exit(EXIT_BROKEN_PIPE)
            # (another broken pipe, a FIFO given as -o or a worker's, is an error like any other)
            name = f"{exc.filename}: " if exc.filename else ""
            click.echo(f"Error: {name}{exc.strerror or exc}", err=True)
            ctx.exit(EXIT_INVALID)


def _stdout_gone() -> bool:
    """Whether standard output is a pipe whose reader has closed it (polled: an error on the write end)."""
    try:
        poll = select.poll()
        poll.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poll.poll(0))
    except (OSError, ValueError, AttributeError):   # no file descriptor (a test runner's stream), no poll
        return False


def run(args: list[str] | None = None) -> None:
    """The ``tbstats`` program: :func:`main` in a process of its own, where Ctrl-C stops at once
    (:func:`_stop_at_once`). Calling ``main`` in another program (click's test runner) leaves that
    program's Ctrl-C handling as it is; the command then turns ``KeyboardInterrupt`` into exit code 130."""
    global _program
    _program = True
    # the collector paused until the command's modules are imported (then frozen, see _imported): imports
    # make objects that live as long as the process, and its passes over them while the program imported took
    # about 27 ms of a command's start (2026-12-04)
    gc.disable()
    _one_blas_thread()
    # tuned before the worker processes are forked (tbstats.run.processes.prestart), which inherit it, and before
    # the imports, whose memory then comes from the huge pages of tbstats.run.memory too
    keep_freed_memory()
    signal.signal(signal.SIGINT, _stop_at_once)
    try:
        main(args, prog_name="tbstats")
    except SystemExit as done:
        _finish(done.code)
    _finish(EXIT_OK)


#: numpy's OpenBLAS starts a thread per core when numpy is imported, and each spins about 0.1 s of CPU before it
#: sleeps (again after each BLAS call): on two cores, CPU the command's own threads wait for. tbstats makes no
#: BLAS call (its einsum is of integers), so the program asks for one thread unless the environment says
#: otherwise; worker processes inherit it. A library cannot decide that for its host: ``import tbstats`` does not.
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "1")


def _one_blas_thread() -> None:
    """One BLAS thread for the program, set before any command's module imports numpy (see :data:`BLAS_THREADS`)."""
    if "numpy" not in sys.modules:
        os.environ.setdefault(*BLAS_THREADS)


def _finish(code: object) -> NoReturn:
    """End the program once its command is done: worker processes stopped, the streams flushed, then the
    process ends without the interpreter's teardown, which frees every module and the last batch's arrays one
    by one (measured: 0.04 s after one small file, 0.1 s after 10,000 events) and which nothing a finished
    command needs: its files are written, closed and renamed (under a profiler or a coverage tool, which write
    their data at exit, the process exits as usual). ``code`` is ``SystemExit``'s: a number, None (success) or
    a message (printed; exit code 1)."""
    if not isinstance(code, int):
        if code is not None:
            click.echo(code, err=True)
        code = EXIT_OK if code is None else 1
    processes = sys.modules.get("tbstats.run.processes")
    if processes is not None:
        processes.kill_workers()   # idle now: nothing of theirs is waited for
    if sys.getprofile() is not None or sys.gettrace() is not None:
        sys.exit(code)   # a profiler or a coverage tool writes its data at exit
    _stop_now(code)


def _reclaim_ctrl_c() -> None:
    """Put the program's Ctrl-C handler back in front after a command's module is imported: importing polars
    installs a C-level SIGINT handler of its own, which raises KeyboardInterrupt inside polars' operations (a
    panic with a backtrace when that happens in a Python callback). Setting the Python handler again makes
    the C handler Python's, so Ctrl-C always reaches :func:`_stop_at_once`."""
    if signal.getsignal(signal.SIGINT) is _stop_at_once and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _stop_at_once)


def _stop_at_once(signum: int, frame: Any) -> None:
    """Ctrl-C: remove the outputs being written and end the process now, with exit code 130.

    Raising ``KeyboardInterrupt`` wherever the main thread happens to be is not safe: inside a polars or numpy
    callback it becomes a panic with a backtrace, in a finaliser an "exception ignored" traceback, and worker
    threads, processes or a Dask client would then be waited for. Nothing a command writes is complete before
    its last step, so nothing is lost by stopping here."""
    processes = sys.modules.get("tbstats.run.processes")
    if getattr(processes, "starting", False):   # the workers are starting: stop as soon as they are known
        processes.interrupted = True  # type: ignore[union-attr]
        return
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for module, function in (("tbstats.run.processes", "kill_workers"), ("tbstats.output", "remove_unfinished")):
        cleanup = getattr(sys.modules.get(module), function, None)   # (a module still being imported has none)
        if cleanup is not None:
            cleanup()
    # written to the descriptor, not through sys.stderr: the handler may run inside a write to it, whose buffer
    # is then locked (a write through it would raise "reentrant call")
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    with contextlib.suppress(OSError):
        os.write(2, b"Interrupted.\n")
    _stop_now(EXIT_INTERRUPTED)


@click.group(cls=_Group, epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="tbstats")
def main() -> None:
    """Vectorised chess tie-break analytics over archives of tournaments (TRF, Parquet, Arrow, CSV)."""
    keep_freed_memory()  # the engine's large temporaries reused, not mapped afresh (see tbstats.run.memory)
