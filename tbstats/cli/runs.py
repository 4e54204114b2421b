"""What the commands do with their parsed options (:mod:`tbstats.cli.options`): run over the inputs, parse the
tie-break lists, and report the problems, reader warnings, checks and closing count on stderr.

The option families are declared without the heavy libraries, so that ``tbstats CMD --help`` imports neither
polars, numpy nor pyarrow; this module imports them, and a command imports it before its body runs
(:class:`tbstats.cli.base.Command`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Final

import click
import polars as pl

from tbstats.cli.base import SHOWN_PROBLEMS
from tbstats.cli.options import Batches, Engine, Inputs
from tbstats.engine.tiebreaks import get_tiebreak, parse_specs
from tbstats.errors import FormatError, TbstatsError
from tbstats.io import sources
from tbstats.io.trf import ERROR_SCHEMA
from tbstats.model.games import WARNING_SCHEMA
from tbstats.model.spec import TieBreakSpec
from tbstats.output import write_table
from tbstats.run import checks
from tbstats.run.pipeline import Run, scheduler_client

if TYPE_CHECKING:
    from tbstats.engine.configs import Config
    from tbstats.run.account import Account


@contextlib.contextmanager
def streamed(inputs: Inputs, batches: Batches) -> Iterator[Run]:
    """A :class:`~tbstats.run.pipeline.Run` over the inputs; afterwards the problems and the count go to stderr."""
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


def ledger_of(exc: FormatError) -> pl.DataFrame:
    return pl.DataFrame([{"path": exc.path, "line": exc.line, "column": exc.column, "reason": exc.reason}],
                        schema=ERROR_SCHEMA, orient="row")


def write_ledger(inputs: Inputs, ledger: pl.DataFrame) -> None:
    """Write the ledger to ``--errors FILE`` when one was given, with a ``status`` column: ``rejected`` (a
    tournament file, or a tournament of one, that could not be used) or ``skipped`` (not a tournament file)."""
    if inputs.errors is not None:
        status = pl.when(sources.is_skipped()).then(pl.lit("skipped")) \
            .otherwise(pl.lit("rejected")).alias("status")
        write_table(ledger.select("path", "line", "column", status, "reason"), "csv", inputs.errors)


def report_load(inputs: Inputs, ledger: pl.DataFrame, summary: str, warnings: pl.DataFrame | None = None) -> None:
    """Write ``--errors``/``--warnings FILE``; unless quiet, print the first problems and warnings and the count."""
    write_ledger(inputs, ledger)
    problems = ledger.filter(~sources.is_skipped())
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
    n_skipped = ledger.filter(sources.is_skipped())["path"].n_unique()
    if n_skipped:
        click.echo(f"skipped {n_skipped} files that are not tournament files", err=True)
    click.echo(summary + (f", {shown} warnings" if shown else ""), err=True)


#: At most this many warnings are printed on stderr; ``--warnings FILE`` has them all.
SHOWN_WARNINGS: Final = 5


def report_warnings(inputs: Inputs, warnings: pl.DataFrame) -> int:
    """Write ``--warnings FILE``; unless quiet, print the count by kind and the first few; return the count."""
    if inputs.warnings is not None:
        write_table(warnings.select(list(WARNING_SCHEMA)), "csv", inputs.warnings)
    if inputs.quiet or warnings.is_empty():
        return warnings.height
    from tbstats.run.account import warning_kinds

    kinds = ", ".join(f"{n} {kind}" for kind, n in warning_kinds(warnings).select("kind", "n").iter_rows())
    click.echo(f"{warnings.height} reader warnings: {kinds}", err=True)
    for row in warnings.head(SHOWN_WARNINGS).iter_rows(named=True):
        where = row["source"] if row["line"] is None else f"{row['source']}:{row['line']}"
        what = f"{row['field']}: {row['message']}" if row["field"] else row["message"]
        click.echo(f"{where}: {what}", err=True)
    if warnings.height > SHOWN_WARNINGS:
        hint = "" if inputs.warnings else " (--warnings FILE lists them all)"
        click.echo(f"... and {warnings.height - SHOWN_WARNINGS} more warnings{hint}", err=True)
    return warnings.height


def account(inputs: Inputs, run: Run, *, team_events: int = 0, team_events_as: str = "",
            checks: Sequence[str] = (), notes: Sequence[str] = ()) -> Account:
    """What went into a command's result, for its report page: the run's files, tournaments, ledger and reader
    warnings, the team events and the warnings and notes the command printed (:class:`tbstats.run.account.
    Account`), with where ``--errors``/``--warnings FILE`` wrote the full lists."""
    from tbstats.run.account import Account

    return Account.of(run, inputs.paths, tournaments=run.tournaments, warnings=run.warnings,
                      team_events=team_events, team_events_as=team_events_as, checks=checks, notes=notes,
                      errors_file=inputs.errors, warnings_file=inputs.warnings)


def report_checks(seen: pl.DataFrame, specs: Sequence[TieBreakSpec], engine: Engine | None, *,
                  quiet: bool) -> list[str]:
    """Print the warnings of :mod:`tbstats.run.checks` on stderr and return them (a report page shows them too);
    ``--after-round`` past every event is refused."""
    try:
        messages = checks.all_checks(seen, specs, force_type=engine.force_type if engine else None,
                                     unrated_rating=engine.unrated_rating if engine else None,
                                     after_round=engine.after_round if engine else None,
                                     rules=engine.rules if engine else None)
    except TbstatsError as exc:
        raise click.BadParameter(str(exc), param_hint="--after-round") from None
    if not quiet:
        for message in messages:
            click.echo(f"Warning: {message}", err=True)
    return messages


def with_unrated(configs: Sequence[Config], rating: int | None) -> list[Config]:
    """The configurations with ``--unrated-rating`` written into their rating tie-breaks (as ``/U<R>``)."""
    if rating is None:
        return list(configs)
    return [c if c.specs is None else replace(c, specs=tuple(
        replace(s, unrated=rating) if get_tiebreak(s.name).rating_based and s.unrated is None else s
        for s in c.specs)) for c in configs]


def spec_list(text: str) -> list[TieBreakSpec]:
    """``-t/--tiebreaks`` parsed with the individual registry; a usage error when it does not parse or is empty."""
    try:
        specs = parse_specs(text)
    except TbstatsError as exc:
        raise click.BadParameter(str(exc), param_hint="--tiebreaks") from None
    if not specs:
        raise click.BadParameter("an empty list: give at least one tie-break, e.g. BH/C1,BH,SB (PTS ranks on "
                                 "points alone), or from-file", param_hint="--tiebreaks")
    return specs


def team_spec_list(text: str) -> list[TieBreakSpec]:
    """``-t/--tiebreaks`` parsed with the team registry (``--teams``); a usage error when it does not parse."""
    from tbstats.engine.teams.tiebreaks import parse_team_specs  # (the team registry loads only for team work)

    try:
        return parse_team_specs(text)
    except TbstatsError as exc:
        raise click.BadParameter(str(exc), param_hint="--tiebreaks") from None
