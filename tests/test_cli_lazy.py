"""Commands are imported when used: ``tbstats compute`` does not load what only other commands need, while
listing the commands (help, ``main.commands``) still shows every one of them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from helpers import ROOT

from tbstats.cli.base import COMMAND_MODULES
from tbstats.output import format_strings, format_table

EXAMPLE = ROOT / "data" / "examples" / "e1_unplayed_rounds.trf"


def _modules_after(*args: str) -> tuple[list[str], str]:
    """The tbstats modules (and pyarrow.compute) imported by one command line run in a fresh interpreter, and
    its stdout."""
    code = ("import json, sys\nfrom tbstats.cli import main\n"
            "try:\n    main(sys.argv[1:], prog_name='tbstats')\nexcept SystemExit:\n    pass\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('tbstats', 'pyarrow.compute')))), "
            "file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120, check=False)
    return json.loads(done.stderr.strip().splitlines()[-1]), done.stdout


def test_compute_loads_neither_other_commands_nor_team_work() -> None:
    loaded, out = _modules_after("compute", str(EXAMPLE), "-t", "BH", "-q")
    assert out.startswith("source,tournament,start_no"), out
    for module in ("tbstats.cli.simulation", "tbstats.cli.fairness", "tbstats.cli.archive", "tbstats.cli.data",
                   "tbstats.simulation", "tbstats.analysis.fairness", "tbstats.run.teams",
                   "tbstats.analysis.teams.explain", "tbstats.engine.teams.tiebreaks", "tbstats.analysis.explain"):
        assert module not in loaded, module


def test_compute_of_a_trf_file_loads_no_analysis_no_model_reader_or_writer() -> None:
    """What only other inputs or commands need stays unloaded: analysis, reports and configurations (compare,
    audit, evaluate), the columnar model's readers, checks and writers (models, ingest), the team model."""
    loaded, out = _modules_after("compute", str(EXAMPLE), "-t", "BH,SB", "-q")
    assert out.startswith("source,tournament,start_no"), out
    unwanted = ("tbstats.analysis", "tbstats.report", "tbstats.engine.configs", "tbstats.io.tabular.read",
                "tbstats.io.tabular.sparse", "tbstats.io.tabular.write", "tbstats.io.parts", "tbstats.io.check",
                "tbstats.io.flat", "tbstats.io.recover", "tbstats.io.trf.write", "tbstats.model.teams.batch",
                "tbstats.model.teams.records", "tbstats.run.info", "tbstats.run.account")
    assert [m for m in loaded if m.startswith(unwanted)] == []


@pytest.mark.parametrize("output", [[], ["-o", "out.parquet"], ["-o", "out.csv"]])
def test_compute_does_not_import_pyarrow_compute(output: list[str], tmp_path: Path) -> None:
    """pyarrow.compute takes 0.03-0.1 s to import: the reader, the engine and the outputs read Arrow buffers
    without it (ListArray.flatten or Array.cast would import it)."""
    args = [a if a == "-o" else str(tmp_path / a) for a in output]
    loaded, _ = _modules_after("compute", str(EXAMPLE), "-t", "BH/C1,BH,SB,PS,WIN,ARO,TPR,KS,AOB,FB,DE", "-q", *args)
    assert "pyarrow.compute" not in loaded


def test_help_lists_every_command() -> None:
    _, out = _modules_after("--help")
    listed = {line.split()[0] for line in out.split("Commands:")[1].split("Exit codes:")[0].splitlines()
              if line.strip()}
    assert listed == set(COMMAND_MODULES)


def test_every_command_is_registered_by_its_module() -> None:
    from tbstats.cli import main

    assert set(main.commands) == set(COMMAND_MODULES)
    for name, command in main.commands.items():
        assert command.callback is not None and command.callback.__module__ == COMMAND_MODULES[name], name


HEAVY = ("polars", "numpy", "pyarrow")


def _heavy_after(*args: str) -> tuple[list[str], str]:
    """The heavy libraries imported by one command line run in a fresh interpreter, and its stdout."""
    code = ("import json, sys\nfrom tbstats.cli import main\n"
            "try:\n    main(sys.argv[1:], prog_name='tbstats')\nexcept SystemExit:\n    pass\n"
            f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120, check=False)
    return json.loads(done.stderr.strip().splitlines()[-1]), done.stdout


def test_help_and_the_registry_listing_import_neither_numpy_nor_polars() -> None:
    for args in (["--help"], ["tiebreaks"], ["tiebreaks", "--teams", "--format", "md"],
                 ["tiebreaks", "--format", "json"]):
        heavy, out = _heavy_after(*args)
        assert heavy == [], (args, heavy)
        assert out, args


@pytest.mark.parametrize("command", sorted(COMMAND_MODULES))
def test_a_commands_help_imports_neither_numpy_polars_nor_pyarrow(command: str) -> None:
    """Each command is declared with click and light modules only: what it runs with is imported when it runs
    (``tbstats.cli.base.Command``), so its ``--help`` costs less than importing the heavy libraries."""
    heavy, out = _heavy_after(command, "--help")
    assert heavy == [], (command, heavy)
    assert out.startswith(f"Usage: tbstats {command} "), out


def test_a_command_that_runs_imports_what_it_runs_with_before_its_body() -> None:
    from tbstats.cli import main
    from tbstats.cli.base import RUN_MODULES, Command

    for name, command in main.commands.items():
        assert isinstance(command, Command), name
        assert command.imports == (() if name == "tiebreaks" else RUN_MODULES), name


def test_help_lists_the_summaries_the_commands_have() -> None:
    from tbstats.cli import main
    from tbstats.cli.base import SUMMARIES

    for name, command in main.commands.items():   # (imports every command)
        assert command.short_help is None and command.help is not None, name
        assert SUMMARIES[name] == " ".join(command.help.split("\n\n")[0].split()), name
    code = ("from tbstats.cli import main\nlist(main.commands)\n"   # every command imported first, then the help
            "try:\n    main(['--help'], prog_name='tbstats')\nexcept SystemExit:\n    pass\n")
    eager = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                           check=True).stdout
    _, lazy = _modules_after("--help")
    assert lazy == eager and "Commands:" in lazy


def test_the_registry_listing_is_the_registries() -> None:
    from tbstats.cli.registry import INDIVIDUAL, TEAMS, registry_rows
    from tbstats.engine.teams.tiebreaks import TEAM_TIEBREAKS
    from tbstats.engine.tiebreaks import TIEBREAKS

    assert registry_rows(TIEBREAKS) == INDIVIDUAL
    assert registry_rows(TEAM_TIEBREAKS) == TEAMS


@pytest.mark.parametrize("fmt", ["csv", "tsv", "md", "json"])
@pytest.mark.parametrize("csv_escape", [True, False])
def test_a_table_of_text_is_written_as_polars_tables_are(fmt: str, csv_escape: bool) -> None:
    from tbstats.cli.registry import COLUMNS, INDIVIDUAL, TEAMS

    rows = [*INDIVIDUAL, *TEAMS, ("", "=1+2", "-3.5", "a,b", 'q"z', "x\ty"), ("@x", "line\nbreak", "|", "+", "-", "é")]
    table = pl.DataFrame([list(r) for r in rows], schema=dict.fromkeys(COLUMNS, pl.String), orient="row")
    assert format_strings(COLUMNS, rows, fmt, csv_escape=csv_escape) == format_table(table, fmt, csv_escape=csv_escape)
    assert format_strings(COLUMNS, [], fmt) == format_table(table.clear(), fmt)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts the process's threads in /proc")
@pytest.mark.parametrize(("given", "wanted"), [(None, "1"), ("3", "3")])
def test_the_program_asks_numpy_for_one_blas_thread_unless_the_environment_says(given: str | None,
                                                                                wanted: str) -> None:
    """The program (``run``) sets OPENBLAS_NUM_THREADS before a command imports numpy, keeping a value the
    user set: with one thread, importing numpy starts no BLAS threads (each would spin on a core)."""
    import os

    code = ("import os, sys\nfrom tbstats.cli.base import _one_blas_thread\n_one_blas_thread()\nimport numpy\n"
            "print(os.environ['OPENBLAS_NUM_THREADS'], len(os.listdir('/proc/self/task')))")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=120, check=True)
    value, threads = done.stdout.split()
    assert value == wanted
    if wanted == "1":
        assert threads == "1"
