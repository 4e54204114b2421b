"""The output option families, each defined once: a table (``--format``, ``-o``, ``--no-csv-escape``) and a
report (also ``html``, ``--charts DIR``, ``--dated``); output paths are checked before any work."""

from __future__ import annotations

import datetime as dt
import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar, cast

import click

from tbstats.cli.base import ARGV_KEY
from tbstats.errors import TbstatsError
from tbstats.output import FORMATS, write_table

if TYPE_CHECKING:   # (polars is not needed to parse options: ``tbstats tiebreaks`` never imports it)
    import polars as pl

    from tbstats.report.frame import About
    from tbstats.run.account import Account

F = TypeVar("F", bound=Callable[..., Any])

# ----------------------------------------------------------------------------------------------- outputs

@dataclass(frozen=True)
class Output:
    """Where and how a command writes its table."""

    format: str
    path: str | None
    csv_escape: bool = True


#: ``-q/--quiet`` of the commands without inputs to stream (explain, tiebreaks, simulate): what every command takes.
quiet_option = click.option("-q", "--quiet", is_flag=True, help="No warnings or notes on stderr.")

#: ``--csv-escape/--no-csv-escape``, shared by the output and report option families.
CSV_ESCAPE: Final = click.option(
    "--csv-escape/--no-csv-escape", "csv_escape", default=True, show_default=True,
    help="In CSV/TSV, prefix text cells that a spreadsheet would run as a formula (=, +, -, @) with '.")

_BY_SUFFIX: Final = {".csv": "csv", ".tsv": "tsv", ".json": "json", ".md": "md", ".parquet": "parquet"}


def prepare_target(path: str | None, *, option: str = "-o/--output", directory: bool = False) -> None:
    """Check an output path before any work: its missing parent directories are created (one rule for every
    command: ``ingest -o``, ``compute -o``, ``--charts DIR`` ...), and a path that cannot be written fails at
    once with exit 3 rather than after the computation."""
    if path is None or path == "-":
        return
    target = Path(path)
    if target.is_dir() and not directory:
        raise TbstatsError(f"{option} {path}: is a directory (expected a file name)")
    if target.exists() and not target.is_dir() and directory:
        raise TbstatsError(f"{option} {path}: is a file (expected a directory)")
    parent = target if directory else target.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TbstatsError(f"{option} {path}: cannot create the directory {parent} ({exc.strerror or exc})") from None
    if not os.access(parent, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise TbstatsError(f"{option} {path}: not writable")


def output_options(f: F) -> F:
    """Add ``--format csv|tsv|json|md|parquet`` and ``-o/--output FILE``; pass ``output``.

    The format defaults to the output file's extension, else csv. Parquet needs ``-o``.
    """

    @functools.wraps(f)
    def wrapper(*args: Any, output_format: str | None, output_path: str | None, csv_escape: bool,
                **kwargs: Any) -> Any:
        fmt = output_format
        if fmt is None:
            fmt = _BY_SUFFIX.get(Path(output_path).suffix.lower(), "csv") if output_path else "csv"
        if fmt == "parquet" and output_path is None:
            raise click.UsageError("--format parquet needs -o/--output FILE (parquet cannot go to stdout)")
        prepare_target(output_path)
        return f(*args, output=Output(fmt, output_path, csv_escape), **kwargs)

    options = [
        click.option("--format", "output_format", type=click.Choice(FORMATS), default=None,
                     help="Output format (default: from the -o extension, else csv)."),
        click.option("-o", "--output", "output_path", type=click.Path(), default=None, metavar="FILE",
                     help="Write the table to FILE instead of stdout (missing directories are created)."),
        CSV_ESCAPE,
    ]
    for option in reversed(options):
        wrapper = option(wrapper)
    return cast(F, wrapper)


def emit(df: pl.DataFrame, output: Output) -> None:
    """Write a result table as the output options say."""
    write_table(df, output.format, output.path, csv_escape=output.csv_escape)


@dataclass(frozen=True)
class ReportOutput:
    """Output of the commands that also render a report: a table format or html, and optional charts."""

    format: str
    path: str | None
    charts: str | None
    chart_format: Literal["svg", "png"]
    csv_escape: bool = True
    dated: bool = False


def report_options(f: F) -> F:
    """Add ``--format csv|tsv|json|md|parquet|html``, ``-o FILE``, ``--charts DIR``, ``--chart-format``."""

    @functools.wraps(f)
    def wrapper(*args: Any, output_format: str | None, output_path: str | None, charts: str | None,
                chart_format: Literal["svg", "png"], csv_escape: bool, dated: bool, **kwargs: Any) -> Any:
        fmt = output_format or (Path(output_path).suffix.lstrip(".").lower() if output_path else "csv")
        if fmt not in (*FORMATS, "html"):
            fmt = "csv"
        if fmt == "parquet" and output_path is None:
            raise click.UsageError("--format parquet needs -o/--output FILE (parquet cannot go to stdout)")
        prepare_target(output_path)
        prepare_target(charts, option="--charts", directory=True)
        return f(*args, output=ReportOutput(fmt, output_path, charts, chart_format, csv_escape, dated), **kwargs)

    options = [
        click.option("--format", "output_format", type=click.Choice([*FORMATS, "html"]), default=None,
                     help="Output format (default: from the -o extension, else csv). html: the report with charts."),
        click.option("-o", "--output", "output_path", type=click.Path(), default=None, metavar="FILE",
                     help="Write to FILE instead of stdout (missing directories are created)."),
        click.option("--charts", type=click.Path(file_okay=False), default=None, metavar="DIR",
                     help="Also write the report's charts to DIR (see --chart-format)."),
        click.option("--chart-format", type=click.Choice(["svg", "png"]), default="svg", show_default=True),
        CSV_ESCAPE,
        click.option("--dated", is_flag=True,
                     help="Put today's date on the html page (without it, equal inputs give identical pages)."),
    ]
    for option in reversed(options):
        wrapper = option(wrapper)
    return cast(F, wrapper)


def about_run(output: ReportOutput, account: Account) -> About:
    """What a report page records: the command line as typed, the account of its inputs, a date if asked."""
    import shlex

    from tbstats.report.frame import About  # the report pages are imported by the commands that write them

    argv = click.get_current_context().find_root().meta.get(ARGV_KEY, [])
    return About(command=shlex.join(["tbstats", *argv]), account=account,
                 date=dt.date.today().isoformat() if output.dated else None)


def write_page(page: str, output: ReportOutput) -> None:
    """Write an HTML page to ``-o FILE`` or stdout."""
    if output.path:
        Path(output.path).write_text(page, encoding="utf-8")
    else:
        click.echo(page, nl=False)
