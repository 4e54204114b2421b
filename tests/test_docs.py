"""The README and docs/ stay true: every console example runs with the output shown, every Python example runs,
every command is documented, the README stays a front door, and the site builds with warnings as errors."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import ROOT

from tbstats.cli import main

README = (ROOT / "README.md").read_text(encoding="utf-8")
#: The README and every page of the guide and references.
PAGES = {"README.md": README} | {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
                                 for p in sorted((ROOT / "docs").rglob("*.md"))}
README_LINES = 150


def _examples() -> list[tuple[str, str, str]]:
    out = []
    for page, text in PAGES.items():
        for block in re.findall(r"```console\n(.*?)```", text, re.S):
            lines = block.splitlines()
            command, expected = lines[0], "\n".join(lines[1:]) + "\n" if lines[1:] else ""
            assert command.startswith("$ tbstats "), (page, command)
            out.append((page, command[2:], expected))
    return out


def test_the_docs_have_examples() -> None:
    pages = {page for page, _, _ in _examples()}
    assert {"README.md", "docs/guide/commands.md", "docs/guide/teams.md"} <= pages, pages


@pytest.mark.parametrize(("page", "command", "expected"), _examples())
def test_console_example(page: str, command: str, expected: str, monkeypatch: pytest.MonkeyPatch) -> None:
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


@pytest.mark.parametrize("page", [p for p, text in PAGES.items() if "```python" in text and p != "README.md"])
def test_python_examples_of_the_docs_run(page: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    for code in re.findall(r"```python\n(.*?)```", PAGES[page], re.S):
        exec(code, {})


def test_the_readme_is_a_front_door() -> None:
    assert len(README.splitlines()) <= README_LINES
    for link in re.findall(r"\]\(((?:docs|benchmarks)/[^)#]+)", README):
        assert (ROOT / link).exists(), link


def test_every_page_is_in_the_site() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = [p for p in PAGES if p.startswith("docs/")]
    assert pages and all(p.removeprefix("docs/") in nav for p in pages), pages


def test_the_site_builds_with_warnings_as_errors(tmp_path: Path) -> None:
    """The docs extra is part of the test extra, so this runs wherever the tests run."""
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    api = (tmp_path / "site" / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    cli = (tmp_path / "site" / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    for name in ("load", "compute", "compare", "audit", "explain", "simulate", "evaluate"):
        assert f'id="tbstats.{name}"' in api, name
    from tbstats.cli import main

    for name in main.commands:
        assert f"tbstats {name}" in cli, name
