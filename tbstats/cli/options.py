"""Option families shared by the commands, each defined once: inputs, outputs, reports, rules."""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, TypeVar, cast

import click
import polars as pl

from tbstats.cli.base import EXIT_OK, EXIT_REJECTED, SHOWN_PROBLEMS
from tbstats.errors import FormatError, TbstatsError
from tbstats.games import WARNING_SCHEMA
from tbstats.io import sources
from tbstats.io.safe import MAX_MEMBER_BYTES
from tbstats.io.sources import LoadResult, OnError
from tbstats.io.trf import ERROR_SCHEMA
from tbstats.output import FORMATS, write_table
from tbstats.pipeline import Run, scheduler_client
from tbstats.rules import EDITIONS, check_edition
from tbstats.spec import TieBreakSpec, parse_specs

F = TypeVar("F", bound=Callable[..., Any])

# ----------------------------------------------------------------------------------------------- inputs

@dataclass(frozen=True)
class Inputs:
    """The input arguments and options of a command."""

    paths: tuple[str, ...]
    on_error: OnError | None = None
    errors: str | None = None
    quiet: bool = False
    max_member_bytes: int = MAX_MEMBER_BYTES
    warnings: str | None = None

    @property
    def mode(self) -> OnError:
        """``--on-error``, else raise for a single file and collect for anything that may hold many."""
        if self.on_error is not None:
            return self.on_error
        if len(self.paths) == 1:
            path = self.paths[0]
            single = os.path.isfile(path) or not (os.path.exists(path) or sources.is_pattern(path))
            if single and not sources.is_archive(path):
                return "raise"
        return "collect"


def input_options(f: F) -> F:
    """Add ``INPUT...`` arguments and ``--on-error``, ``--errors FILE``, ``--quiet``; pass ``inputs``."""

    @functools.wraps(f)
    def wrapper(*args: Any, paths: tuple[str, ...], on_error: OnError | None, errors: str | None,
                quiet: bool, max_member_bytes: int, warnings: str | None, **kwargs: Any) -> Any:
        return f(*args, inputs=Inputs(paths, on_error, errors, quiet, max_member_bytes, warnings), **kwargs)

    options = [
        click.argument("paths", nargs=-1, required=True, metavar="INPUT..."),
        click.option("--on-error", type=click.Choice(["raise", "collect"]), default=None,
                     help="raise: stop at the first problem (exit 3); collect: skip bad files, list them and "
                          "exit 1. Default: raise for a single file, collect otherwise."),
        click.option("--errors", type=click.Path(dir_okay=False, writable=True), default=None,
                     metavar="FILE", help="Write every problem as CSV (path,line,column,reason)."),
        click.option("--warnings", type=click.Path(dir_okay=False, writable=True), default=None,
                     metavar="FILE", help="Write every reader warning as CSV (source,line,field,message)."),
        click.option("-q", "--quiet", is_flag=True,
                     help="No progress bar, problem list or closing count on stderr."),
        click.option("--max-member-bytes", type=click.IntRange(min=1), default=MAX_MEMBER_BYTES,
                     show_default=True, metavar="N",
                     help="Reject an archive member larger than N bytes once decompressed."),
    ]
    for option in reversed(options):
        wrapper = option(wrapper)
    return cast(F, wrapper)


# ---------------------------------------------------------------------------------- batches and workers

#: Tournaments per batch by default: a few hundred MB at most for the usual event sizes.
BATCH_SIZE: Final = 2000


@dataclass(frozen=True)
class Batches:
    """How an archive is cut and where its batches run."""

    size: int = BATCH_SIZE
    files: int = 2000
    workers: int = 1
    scheduler: str | None = None


def batch_options(f: F) -> F:
    """Add ``--batch-size``, ``--batch-files``, ``--workers`` and ``--scheduler``; pass ``batches``."""

    @functools.wraps(f)
    def wrapper(*args: Any, batch_size: int, batch_files: int, workers: int, scheduler: str | None,
                **kwargs: Any) -> Any:
        return f(*args, batches=Batches(batch_size, batch_files, workers, scheduler), **kwargs)

    options = [
        click.option("--batch-size", type=click.IntRange(min=1), default=BATCH_SIZE, show_default=True,
                     metavar="N", help="Tournaments per batch: memory grows with it, the output does not change."),
        click.option("--batch-files", type=click.IntRange(min=1), default=2000, show_default=True, metavar="N",
                     help="TRF files read at a time (then cut into batches of --batch-size tournaments)."),
        click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True, metavar="N",
                     help="Batches computed at once on threads (the output does not change)."),
        click.option("--scheduler", default=None, metavar="ADDRESS|local[:N]",
                     help="Run the batches on Dask: the address of a running scheduler (tcp://host:8786), or "
                          "local:N for a local cluster of N worker processes (needs tbstats[dask])."),
    ]
    for option in reversed(options):
        wrapper = option(wrapper)
    return cast(F, wrapper)


@contextlib.contextmanager
def streamed(inputs: Inputs, batches: Batches) -> Iterator[Run]:
    """A :class:`~tbstats.pipeline.Run` over the inputs; afterwards the problems and the count go to stderr."""
    with scheduler_client(batches.scheduler) as client:
        run = Run(inputs.mode, inputs=inputs.paths, batch_size=batches.size, batch_files=batches.files,
                  workers=batches.workers, client=client, progress=not inputs.quiet,
                  max_member_bytes=inputs.max_member_bytes)
        try:
            yield run
        except FormatError as exc:
            write_ledger(inputs, ledger_of(exc))
            raise
    report_load(inputs, run.ledger, run.summary(), run.warnings)


def load_inputs(inputs: Inputs, *, batch_files: int = 2000) -> LoadResult:
    """Load the inputs in the chosen error mode, then report problems and the count on stderr."""
    try:
        result = sources.load(inputs.paths, on_error=inputs.mode, progress=not inputs.quiet,
                              batch_files=batch_files, max_member_bytes=inputs.max_member_bytes)
    except FormatError as exc:
        write_ledger(inputs, ledger_of(exc))
        raise
    report_load(inputs, result.ledger, result.summary(), result.batch.warnings)
    return result


def ledger_of(exc: FormatError) -> pl.DataFrame:
    return pl.DataFrame([{"path": exc.path, "line": exc.line, "column": exc.column, "reason": exc.reason}],
                        schema=ERROR_SCHEMA, orient="row")


def write_ledger(inputs: Inputs, ledger: pl.DataFrame) -> None:
    """Write the ledger to ``--errors FILE`` when one was given."""
    if inputs.errors is not None:
        write_table(ledger, "csv", inputs.errors)


def report_load(inputs: Inputs, ledger: pl.DataFrame, summary: str, warnings: pl.DataFrame | None = None) -> None:
    """Write ``--errors``/``--warnings FILE``; unless quiet, print the first problems and warnings and the count."""
    write_ledger(inputs, ledger)
    skipped = ledger["reason"].str.starts_with(sources.SKIPPED)
    problems = ledger.filter(~skipped)
    if not inputs.quiet:
        for row in problems.head(SHOWN_PROBLEMS).iter_rows(named=True):
            click.echo(str(FormatError(row["path"], row["line"], row["column"], row["reason"])), err=True)
        if problems.height > SHOWN_PROBLEMS:
            more = problems.height - SHOWN_PROBLEMS
            hint = "" if inputs.errors else " (--errors FILE lists them all)"
            click.echo(f"... and {more} more problems{hint}", err=True)
    shown = report_warnings(inputs, warnings if warnings is not None else pl.DataFrame(schema=WARNING_SCHEMA))
    if inputs.quiet:
        return
    n_skipped = ledger.filter(skipped)["path"].n_unique()
    if n_skipped:
        click.echo(f"skipped {n_skipped} files that are not tournament files", err=True)
    click.echo(summary + (f", {shown} warnings" if shown else ""), err=True)


#: At most this many warnings are printed on stderr; ``--warnings FILE`` has them all.
SHOWN_WARNINGS: Final = 5


def warning_kinds(warnings: pl.DataFrame) -> pl.DataFrame:
    """Warnings counted by kind (the field, round numbers left out), most frequent first.

    >>> w = pl.DataFrame({"field": ["round 1 result", "encoding", "round 4 result"]})
    >>> warning_kinds(w).rows()
    [('round N result', 2), ('encoding', 1)]
    """
    kind = pl.col("field").fill_null("other").str.replace_all(r"\bround \d+", "round N").alias("kind")
    return warnings.group_by(kind).len("n").sort("n", "kind", descending=[True, False])


def report_warnings(inputs: Inputs, warnings: pl.DataFrame) -> int:
    """Write ``--warnings FILE``; unless quiet, print the count by kind and the first few; return the count."""
    if inputs.warnings is not None:
        write_table(warnings.select(list(WARNING_SCHEMA)), "csv", inputs.warnings)
    if inputs.quiet or warnings.is_empty():
        return warnings.height
    kinds = ", ".join(f"{n} {kind}" for kind, n in warning_kinds(warnings).iter_rows())
    click.echo(f"{warnings.height} reader warnings: {kinds}", err=True)
    for row in warnings.head(SHOWN_WARNINGS).iter_rows(named=True):
        where = row["source"] if row["line"] is None else f"{row['source']}:{row['line']}"
        what = f"{row['field']}: {row['message']}" if row["field"] else row["message"]
        click.echo(f"{where}: {what}", err=True)
    if warnings.height > SHOWN_WARNINGS:
        hint = "" if inputs.warnings else " (--warnings FILE lists them all)"
        click.echo(f"... and {warnings.height - SHOWN_WARNINGS} more warnings{hint}", err=True)
    return warnings.height


def exit_code(rejected: int) -> int:
    """1 when some inputs were rejected, else 0."""
    return EXIT_REJECTED if rejected else EXIT_OK


# ----------------------------------------------------------------------------------------------- outputs

@dataclass(frozen=True)
class Output:
    """Where and how a command writes its table."""

    format: str
    path: str | None
    csv_escape: bool = True


#: ``--csv-escape/--no-csv-escape``, shared by the output and report option families.
CSV_ESCAPE: Final = click.option(
    "--csv-escape/--no-csv-escape", "csv_escape", default=True, show_default=True,
    help="In CSV/TSV, prefix text cells that a spreadsheet would run as a formula (=, +, -, @) with '.")

_BY_SUFFIX: Final = {".csv": "csv", ".tsv": "tsv", ".json": "json", ".md": "md", ".parquet": "parquet"}


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
        return f(*args, output=Output(fmt, output_path, csv_escape), **kwargs)

    options = [
        click.option("--format", "output_format", type=click.Choice(FORMATS), default=None,
                     help="Output format (default: from the -o extension, else csv)."),
        click.option("-o", "--output", "output_path", type=click.Path(dir_okay=False, writable=True),
                     default=None, metavar="FILE", help="Write the table to FILE instead of stdout."),
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


def report_options(f: F) -> F:
    """Add ``--format csv|tsv|json|md|parquet|html``, ``-o FILE``, ``--charts DIR``, ``--chart-format``."""

    @functools.wraps(f)
    def wrapper(*args: Any, output_format: str | None, output_path: str | None, charts: str | None,
                chart_format: Literal["svg", "png"], csv_escape: bool, **kwargs: Any) -> Any:
        fmt = output_format or (Path(output_path).suffix.lstrip(".").lower() if output_path else "csv")
        if fmt not in (*FORMATS, "html"):
            fmt = "csv"
        if fmt == "parquet" and output_path is None:
            raise click.UsageError("--format parquet needs -o/--output FILE (parquet cannot go to stdout)")
        return f(*args, output=ReportOutput(fmt, output_path, charts, chart_format, csv_escape), **kwargs)

    options = [
        click.option("--format", "output_format", type=click.Choice([*FORMATS, "html"]), default=None,
                     help="Output format (default: from the -o extension, else csv). html: the report with charts."),
        click.option("-o", "--output", "output_path", type=click.Path(dir_okay=False, writable=True), default=None,
                     metavar="FILE", help="Write to FILE instead of stdout."),
        click.option("--charts", type=click.Path(file_okay=False), default=None, metavar="DIR",
                     help="Also write the report's charts to DIR (see --chart-format)."),
        click.option("--chart-format", type=click.Choice(["svg", "png"]), default="svg", show_default=True),
        CSV_ESCAPE,
    ]
    for option in reversed(options):
        wrapper = option(wrapper)
    return cast(F, wrapper)


def write_page(page: str, output: ReportOutput) -> None:
    """Write an HTML page to ``-o FILE`` or stdout."""
    if output.path:
        Path(output.path).write_text(page, encoding="utf-8")
    else:
        click.echo(page, nl=False)


# ------------------------------------------------------------------------------------------- tie-breaks

@dataclass(frozen=True)
class Engine:
    """Rule options shared by the commands that compute tie-breaks."""

    rules: str
    force_type: str | None
    after_round: int | None
    unrated_rating: int | None


def engine_options(f: F) -> F:
    """Add ``--rules``, ``--swiss/--round-robin``, ``--after-round`` and ``--unrated-rating``; pass ``engine``."""

    @functools.wraps(f)
    def wrapper(*args: Any, rules: str, force_type: str | None, after_round: int | None,
                unrated_rating: int | None, **kwargs: Any) -> Any:
        try:
            edition = check_edition(rules)
        except TbstatsError as exc:
            raise click.BadParameter(str(exc), param_hint="--rules") from None
        return f(*args, engine=Engine(edition, force_type, after_round, unrated_rating), **kwargs)

    options = [
        click.option("--rules", default="fide-2026", show_default=True, metavar="EDITION",
                     help="Rule edition: " + ", ".join(EDITIONS) + " (auto: by each tournament's start date)."),
        click.option("--swiss", "force_type", flag_value="swiss", default=None,
                     help="Treat every event as a Swiss (C.07 16), whatever was detected."),
        click.option("--round-robin", "force_type", flag_value="round_robin",
                     help="Treat every event as pre-determined pairings (C.07 15.2)."),
        click.option("--after-round", type=click.IntRange(min=1), default=None, metavar="N",
                     help="Standings after round N (default: every round with results)."),
        click.option("--unrated-rating", type=click.IntRange(min=1), default=None, metavar="R",
                     help="Rating for unrated players in rating tie-breaks (C.07 10); without it, "
                          "rating tie-breaks are undefined in events with unrated players."),
    ]
    for option in reversed(options):
        wrapper = option(wrapper)
    return cast(F, wrapper)


def _spec_list(text: str) -> list[TieBreakSpec]:
    try:
        return parse_specs(text)
    except TbstatsError as exc:
        raise click.BadParameter(str(exc), param_hint="--tiebreaks") from None
