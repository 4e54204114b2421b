"""The README stays true: its console examples run with the output shown, every command is documented."""

from __future__ import annotations

import re
import shlex

import pytest
from click.testing import CliRunner
from helpers import ROOT

from tbstats.cli import main

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _examples() -> list[tuple[str, str]]:
    out = []
    for block in re.findall(r"```console\n(.*?)```", README, re.S):
        lines = block.splitlines()
        command, expected = lines[0], "\n".join(lines[1:]) + "\n"
        assert command.startswith("$ tbstats ")
        out.append((command[2:], expected))
    return out


@pytest.mark.parametrize(("command", "expected"), _examples())
def test_console_example(command: str, expected: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(main, [*shlex.split(command)[1:], "--quiet"] if "compute" in command
                                else shlex.split(command)[1:])
    assert result.exit_code == 0, result.output
    assert result.stdout == expected


def test_opens_with_the_two_commands() -> None:
    blocks = re.findall(r"```sh\n(.*?)\n```", README, re.S)[:2]
    assert "tbstats compute data/examples" in blocks[0]
    assert "pytest" in blocks[1]
    assert (ROOT / ".ci" / "run").read_text().strip().endswith(blocks[1].strip())


def test_every_command_is_documented() -> None:
    for name, command in main.commands.items():
        assert f"`tbstats {name}" in README, name
        assert command.help, name


def test_python_example_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    code = re.findall(r"```python\n(.*?)```", README, re.S)[0]
    scope: dict[str, object] = {}
    exec(code, scope)
    assert scope["table"].height == scope["batch"].players.height > 0  # type: ignore[attr-defined]
