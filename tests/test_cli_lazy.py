"""Commands are imported when used: ``tbstats compute`` does not load what only other commands need, while
listing the commands (help, ``main.commands``) still shows every one of them."""

from __future__ import annotations

import json
import subprocess
import sys

from helpers import ROOT

from tbstats.cli.base import COMMAND_MODULES

EXAMPLE = ROOT / "data" / "examples" / "e1_unplayed_rounds.trf"


def _modules_after(*args: str) -> tuple[list[str], str]:
    """The tbstats modules imported by one command line run in a fresh interpreter, and its stdout."""
    code = ("import json, sys\nfrom tbstats.cli import main\n"
            "try:\n    main(sys.argv[1:], prog_name='tbstats')\nexcept SystemExit:\n    pass\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('tbstats'))), file=sys.stderr)")
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
