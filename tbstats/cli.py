"""The ``tbstats`` command line: thin commands over the library, which never prints or exits itself.

Exit codes:

- 0: success.
- 1: the command ran, but some inputs were rejected (listed on stderr and in ``--errors FILE``).
- 2: usage error: an unknown option, a bad value, a missing argument (click's own code).
- 3: invalid input in raise mode (the first problem is printed), or a file that cannot be read or written.

A new command takes its inputs with :func:`input_options` and :func:`load_inputs`, writes its table with
:func:`output_options` and :func:`emit`, and returns :func:`exit_code` of its load.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Final, Literal, TypeVar, cast

import click
import polars as pl

from tbstats import __version__, api
from tbstats import explain as explain_mod
from tbstats.errors import FormatError, TbstatsError
from tbstats.games import Batch, empty
from tbstats.info import summary_table
from tbstats.io import sources, tabular
from tbstats.io.sources import LoadResult, OnError
from tbstats.io.trf import ERROR_SCHEMA
from tbstats.output import FORMATS, write_table
from tbstats.rules import EDITIONS, check_edition
from tbstats.spec import TieBreakSpec, parse_specs
from tbstats.tiebreaks import TIEBREAKS

EXIT_OK: Final = 0
EXIT_REJECTED: Final = 1
EXIT_USAGE: Final = 2
EXIT_INVALID: Final = 3
#: At most this many problems are printed on stderr; ``--errors FILE`` has them all.
SHOWN_PROBLEMS: Final = 10

EPILOG: Final = """\b
Exit codes:
  0  success
  1  the command ran, but some inputs were rejected (see --errors FILE)
  2  usage error (unknown option, bad value, missing argument)
  3  invalid input in raise mode, or a file that cannot be read or written
"""

F = TypeVar("F", bound=Callable[..., Any])


class _Group(click.Group):
    """A click group that turns tbstats errors into a message on stderr and exit code 3."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except TbstatsError as exc:
            click.echo(f"Error: {exc}", err=True)
            ctx.exit(EXIT_INVALID)
        except OSError as exc:
            name = f"{exc.filename}: " if exc.filename else ""
            click.echo(f"Error: {name}{exc.strerror or exc}", err=True)
            ctx.exit(EXIT_INVALID)


@click.group(cls=_Group, epilog=EPILOG, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="tbstats")
def main() -> None:
    """Vectorised chess tie-break analytics over archives of tournaments (TRF, Parquet, Arrow, CSV)."""


# ----------------------------------------------------------------------------------------------- inputs

@dataclass(frozen=True)
class Inputs:
    """The input arguments and options of a command."""

    paths: tuple[str, ...]
    on_error: OnError | None = None
    errors: str | None = None
    quiet: bool = False

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
                quiet: bool, **kwargs: Any) -> Any:
        return f(*args, inputs=Inputs(paths, on_error, errors, quiet), **kwargs)

    options = [
        click.argument("paths", nargs=-1, required=True, metavar="INPUT..."),
        click.option("--on-error", type=click.Choice(["raise", "collect"]), default=None,
                     help="raise: stop at the first problem (exit 3); collect: skip bad files, list them and "
                          "exit 1. Default: raise for a single file, collect otherwise."),
        click.option("--errors", type=click.Path(dir_okay=False, writable=True), default=None,
                     metavar="FILE", help="Write every problem as CSV (path,line,column,reason)."),
        click.option("-q", "--quiet", is_flag=True,
                     help="No progress bar, problem list or closing count on stderr."),
    ]
    for option in reversed(options):
        wrapper = option(wrapper)
    return cast(F, wrapper)


def load_inputs(inputs: Inputs, *, batch_files: int = 2000) -> LoadResult:
    """Load the inputs in the chosen error mode, then report problems and the count on stderr."""
    try:
        result = sources.load(inputs.paths, on_error=inputs.mode, progress=not inputs.quiet,
                              batch_files=batch_files)
    except FormatError as exc:
        write_ledger(inputs, _ledger_of(exc))
        raise
    report_load(inputs, result.ledger, result.summary())
    return result


def _ledger_of(exc: FormatError) -> pl.DataFrame:
    return pl.DataFrame([{"path": exc.path, "line": exc.line, "column": exc.column, "reason": exc.reason}],
                        schema=ERROR_SCHEMA, orient="row")


def write_ledger(inputs: Inputs, ledger: pl.DataFrame) -> None:
    """Write the ledger to ``--errors FILE`` when one was given."""
    if inputs.errors is not None:
        write_table(ledger, "csv", inputs.errors)


def report_load(inputs: Inputs, ledger: pl.DataFrame, summary: str) -> None:
    """Write ``--errors FILE``; unless quiet, print the first problems, the skipped count and the summary."""
    write_ledger(inputs, ledger)
    if inputs.quiet:
        return
    skipped = ledger["reason"].str.starts_with(sources.SKIPPED)
    problems = ledger.filter(~skipped)
    for row in problems.head(SHOWN_PROBLEMS).iter_rows(named=True):
        click.echo(str(FormatError(row["path"], row["line"], row["column"], row["reason"])), err=True)
    if problems.height > SHOWN_PROBLEMS:
        more = problems.height - SHOWN_PROBLEMS
        hint = "" if inputs.errors else " (--errors FILE lists them all)"
        click.echo(f"... and {more} more problems{hint}", err=True)
    n_skipped = ledger.filter(skipped)["path"].n_unique()
    if n_skipped:
        click.echo(f"skipped {n_skipped} files that are not tournament files", err=True)
    click.echo(summary, err=True)


def exit_code(rejected: int) -> int:
    """1 when some inputs were rejected, else 0."""
    return EXIT_REJECTED if rejected else EXIT_OK


# ----------------------------------------------------------------------------------------------- outputs

@dataclass(frozen=True)
class Output:
    """Where and how a command writes its table."""

    format: str
    path: str | None


_BY_SUFFIX: Final = {".csv": "csv", ".tsv": "tsv", ".json": "json", ".md": "md", ".parquet": "parquet"}


def output_options(f: F) -> F:
    """Add ``--format csv|tsv|json|md|parquet`` and ``-o/--output FILE``; pass ``output``.

    The format defaults to the output file's extension, else csv. Parquet needs ``-o``.
    """

    @functools.wraps(f)
    def wrapper(*args: Any, output_format: str | None, output_path: str | None, **kwargs: Any) -> Any:
        fmt = output_format
        if fmt is None:
            fmt = _BY_SUFFIX.get(Path(output_path).suffix.lower(), "csv") if output_path else "csv"
        if fmt == "parquet" and output_path is None:
            raise click.UsageError("--format parquet needs -o/--output FILE (parquet cannot go to stdout)")
        return f(*args, output=Output(fmt, output_path), **kwargs)

    options = [
        click.option("--format", "output_format", type=click.Choice(FORMATS), default=None,
                     help="Output format (default: from the -o extension, else csv)."),
        click.option("-o", "--output", "output_path", type=click.Path(dir_okay=False, writable=True),
                     default=None, metavar="FILE", help="Write the table to FILE instead of stdout."),
    ]
    for option in reversed(options):
        wrapper = option(wrapper)
    return cast(F, wrapper)


def emit(df: pl.DataFrame, output: Output) -> None:
    """Write a result table as the output options say."""
    write_table(df, output.format, output.path)


@dataclass(frozen=True)
class ReportOutput:
    """Output of the commands that also render a report: a table format or html, and optional charts."""

    format: str
    path: str | None
    charts: str | None
    chart_format: Literal["svg", "png"]


def report_options(f: F) -> F:
    """Add ``--format csv|tsv|json|md|parquet|html``, ``-o FILE``, ``--charts DIR``, ``--chart-format``."""

    @functools.wraps(f)
    def wrapper(*args: Any, output_format: str | None, output_path: str | None, charts: str | None,
                chart_format: Literal["svg", "png"], **kwargs: Any) -> Any:
        fmt = output_format or (Path(output_path).suffix.lstrip(".").lower() if output_path else "csv")
        if fmt not in (*FORMATS, "html"):
            fmt = "csv"
        if fmt == "parquet" and output_path is None:
            raise click.UsageError("--format parquet needs -o/--output FILE (parquet cannot go to stdout)")
        return f(*args, output=ReportOutput(fmt, output_path, charts, chart_format), **kwargs)

    options = [
        click.option("--format", "output_format", type=click.Choice([*FORMATS, "html"]), default=None,
                     help="Output format (default: from the -o extension, else csv). html: the report with charts."),
        click.option("-o", "--output", "output_path", type=click.Path(dir_okay=False, writable=True), default=None,
                     metavar="FILE", help="Write to FILE instead of stdout."),
        click.option("--charts", type=click.Path(file_okay=False), default=None, metavar="DIR",
                     help="Also write the report's charts to DIR (see --chart-format)."),
        click.option("--chart-format", type=click.Choice(["svg", "png"]), default="svg", show_default=True),
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


# ----------------------------------------------------------------------------------------------- commands

@main.command(epilog=EPILOG)
@input_options
@click.option("-o", "--output", "target", required=True, type=click.Path(), metavar="PATH",
              help="archive.parquet, archive.arrow or archive.csv (one flat table), or a directory "
                   "(one part file per table and batch).")
@click.option("--format", "model_format", type=click.Choice(["parquet", "arrow", "csv"]), default=None,
              help="Format of a directory output (default parquet; a file's extension decides for files).")
@click.option("--append", is_flag=True, help="Add to an existing directory written by ingest.")
@click.option("--batch-files", type=click.IntRange(min=1), default=2000, show_default=True,
              help="TRF files read and written per batch.")
@click.pass_context
def ingest(ctx: click.Context, inputs: Inputs, target: str, model_format: tabular.Format | None, append: bool,
           batch_files: int) -> None:
    """Read tournaments (TRF files, directories, globs, zip/tar archives, models) and write the model.

    Batches are written as they are read, so archives larger than memory can be ingested.
    The closing line on stderr is 'N files: K loaded, E rejected'.
    """
    stream = sources.iter_batches(inputs.paths, on_error=inputs.mode, progress=not inputs.quiet,
                                  batch_files=batch_files)
    ledgers = [pl.DataFrame(schema=ERROR_SCHEMA)]
    try:
        with tabular.ArchiveWriter(target, model_format, append=append) as writer:
            for batch, ledger in stream:
                if batch.n_tournaments:
                    writer.write(batch)
                ledgers.append(ledger)
    except FormatError as exc:
        write_ledger(inputs, _ledger_of(exc))
        raise
    report_load(inputs, pl.concat(ledgers), stream.summary())
    ctx.exit(exit_code(stream.rejected))


@main.command(epilog=EPILOG)
@input_options
@output_options
@click.option("--by-tournament", is_flag=True, help="One row per tournament instead of one for all.")
@click.pass_context
def info(ctx: click.Context, inputs: Inputs, output: Output, by_tournament: bool) -> None:
    """Count tournaments, players, rounds, game rows by game type, and warnings.

    Game types: played, forfeit_win, forfeit_loss, double_forfeit, pab (pairing-allocated bye), full_bye,
    half_bye, zero_bye, absent (not paired), pending (no result yet).
    """
    result = load_inputs(inputs)
    emit(summary_table(result.batch, by_tournament=by_tournament), output)
    ctx.exit(exit_code(result.rejected))


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


@main.command(epilog=EPILOG)
@input_options
@output_options
@engine_options
@click.option("-t", "--tiebreaks", "specs", required=True, metavar="SPEC[,SPEC...]",
              help="Ordered tie-breaks, e.g. 'BH/C1,BH,SB,DE,WIN' (see `tbstats tiebreaks`).")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Threads computing parts of each batch (the table does not depend on it).")
@click.option("--lots", type=click.IntRange(min=0), default=None, metavar="SEED",
              help="Break ties left after the list by a seeded drawing of lots (default: tied players share a rank).")
@click.option("--batch-files", type=click.IntRange(min=1), default=2000, show_default=True,
              help="TRF files computed per batch.")
@click.pass_context
def compute(ctx: click.Context, inputs: Inputs, output: Output, engine: Engine, specs: str, workers: int,
            lots: int | None, batch_files: int) -> None:
    """Compute tie-breaks and standings: one row per player.

    Columns: source, tournament, start_no, name, rating, points, rank, then one column per SPEC named
    exactly as written (in canonical form, e.g. bh-c1 -> BH/C1). rank orders by points, then the specs in
    the order given, each applied only to groups still tied (C.07 4.2); players still tied share a rank.
    A DE column holds the rank after points and the specs up to and including DE.
    """
    parsed = _spec_list(specs)
    stream = sources.iter_batches(inputs.paths, on_error=inputs.mode, progress=not inputs.quiet,
                                  batch_files=batch_files)
    buchholz = [str(s) for s in parsed if s.name in ("BH", "FB", "AOB")]
    round_robins = 0
    parts = []
    ledgers = [pl.DataFrame(schema=ERROR_SCHEMA)]
    try:
        for batch, ledger in stream:
            ledgers.append(ledger)
            if batch.n_tournaments:
                round_robins += int((batch.tournaments["event_type"] == "round_robin").sum())
                parts.append(api.compute(batch, parsed, rules=engine.rules, force_type=engine.force_type,
                                         after_round=engine.after_round, unrated_rating=engine.unrated_rating,
                                         lots=lots, workers=workers))
    except FormatError as exc:
        write_ledger(inputs, _ledger_of(exc))
        raise
    report_load(inputs, pl.concat(ledgers), stream.summary())
    if buchholz and (round_robins if engine.force_type is None else engine.force_type == "round_robin") \
            and not inputs.quiet:
        click.echo(f"Warning: {', '.join(buchholz)} computed for round robins; Buchholz tie-breaks must not be "
                   "used in round robins (C.07 2026, Art. 8 note)", err=True)
    if not parts:
        parts.append(api.compute(Batch(empty("tournaments"), empty("players"), empty("games")), parsed,
                                 rules=engine.rules))
    emit(pl.concat(parts), output)
    ctx.exit(exit_code(stream.rejected))


@main.command(epilog=EPILOG)
@click.argument("path", metavar="FILE")
@click.option("-p", "--player", type=int, required=True, help="Start number of the player.")
@click.option("-t", "--tiebreak", "spec", required=True, metavar="SPEC", help="One tie-break, e.g. BH/C1.")
@click.option("--tournament", type=int, default=None, help="Tournament id when FILE holds several events.")
@output_options
@engine_options
def explain(path: str, player: int, spec: str, tournament: int | None, output: Output, engine: Engine) -> None:
    """Show a player's tie-break round by round: opponents, dummies and their caps, and what was cut.

    Each round shows the C.07 16.2 category, the opponent's score as counted (16.3), the dummy that
    replaces an unplayed round before and after its cap (16.4), the contribution, and which elements the
    Cut/Median modifiers removed and why (14, 16.5). The summary line goes to stderr.
    """
    result = sources.load([path], on_error="raise")
    parsed = _spec_list(spec)[0]
    ex = explain_mod.explain(result.batch, player=player, tiebreak=str(parsed), rules=engine.rules,
                             tournament=tournament, force_type=engine.force_type)
    if output.format in ("csv", "tsv", "json", "parquet") or output.path:
        emit(ex.rounds, output)
        click.echo(ex.summary, err=True)
    else:
        click.echo(ex.summary)
        emit(ex.rounds, output)


@main.command(name="tiebreaks", epilog=EPILOG)
@output_options
def tiebreaks_cmd(output: Output) -> None:
    """List the tie-break registry: name, article, modifiers, direction and description."""
    rows = [{"name": t.name, "article": t.article, "modifiers": ",".join(sorted(t.modifiers)),
             "order": "higher first" if t.higher_is_better else "lower first",
             "kind": t.kind, "description": t.description} for t in TIEBREAKS.values()]
    emit(pl.DataFrame(rows), output)


# ---------------------------------------------------------------------------------------------- archives

def _load_batch(inputs: Inputs) -> tuple[Batch, int]:
    """Load every input into one batch (for commands that compare across the whole archive)."""
    result = load_inputs(inputs)
    return result.batch, result.rejected


@main.command(name="compare", epilog=EPILOG)
@input_options
@click.option("-c", "--config", "configs", multiple=True, metavar="NAME=EDITION:SPECS",
              help="A configuration, e.g. old=fide-2024:BH/C1,BH,SB,DE,WIN (repeatable). EDITION may be auto; "
                   "SPECS may be from-file (each tournament's own 202/212 list).")
@click.option("--configs", "config_file", type=click.Path(exists=True, dir_okay=False), default=None,
              metavar="FILE", help="Configurations from a TOML file ([configs] name = \"EDITION:SPECS\").")
@click.option("--top", type=click.IntRange(min=1), default=10, show_default=True,
              help="K for topk_changed (the set of players ranked K or better).")
@click.option("--by", "by", multiple=True, metavar="FEATURE",
              type=click.Choice(["rounds", "players", "type", "unplayed", "year", "rating_band"]),
              help="Break the rates down by a tournament feature (repeatable).")
@click.option("--table", type=click.Choice(["pairs", "configs", "depth", "drilldown", "tournaments"]),
              default="pairs", show_default=True, help="Which table to write (all of them go into html).")
@report_options
@click.pass_context
def compare_cmd(ctx: click.Context, inputs: Inputs, configs: tuple[str, ...], config_file: str | None, top: int,
                by: tuple[str, ...], table: str, output: ReportOutput) -> None:
    """How often configurations (edition + tie-break order) change winners, podiums and rankings.

    One row per pair of configurations: tournaments, winner_changed (the set of rank-1 players differs),
    winner_changed_rate with a 95% Wilson interval, podium_changed (top-3 set), topk_changed (--top),
    any_rank_changed, mean_kendall_distance (normalised, ties count 1/2) and shared_first per side.
    --table configs: how often tie-breaks were needed at the top, settled or not; --table depth: at which
    position of each list the tie for first was settled; --table drilldown: the tournaments whose winner
    changed, with players, deciding values and an explain command. With --by, the rates per feature value.
    """
    from tbstats import compare as cmp

    parsed = [cmp.parse_config(c) for c in configs] + (cmp.read_configs(config_file) if config_file else [])
    batch, rejected = _load_batch(inputs)
    result = cmp.compare(batch, parsed, top=top)
    breakdowns = {feature: cmp.breakdown(result, feature) for feature in by}
    if output.charts or output.format == "html":
        from tbstats import report

        if output.charts:
            report.write_charts(result, Path(output.charts), fmt=output.chart_format, breakdowns=breakdowns)
        if output.format == "html":
            write_page(report.render_html(result, title="tbstats compare", breakdowns=breakdowns,
                                          charts=output.chart_format), output)
    else:
        frames = {"pairs": result.pairs, "configs": result.configs, "depth": result.depth,
                  "drilldown": result.drilldown, "tournaments": result.tournaments}
        out = frames[table]
        if breakdowns and table == "pairs":
            out = pl.concat([b.with_columns(pl.lit(f).alias("feature"), pl.col(f).cast(pl.String).alias("value"))
                             .drop(f) for f, b in breakdowns.items()], how="diagonal_relaxed")
        emit(out, Output(output.format, output.path))
    ctx.exit(exit_code(rejected))


@main.command(name="audit", epilog=EPILOG)
@input_options
@output_options
@click.option("--rules", default="auto", show_default=True, metavar="EDITION",
              help="Rule edition to recompute with: " + ", ".join(EDITIONS) + ".")
@click.option("-t", "--tiebreaks", "specs", default="from-file", show_default=True, metavar="from-file|SPECS",
              help="The order to recompute with: each file's own 202/212 list, or SPECS for every tournament.")
@click.option("--players", "per_player", is_flag=True, help="One row per differing player instead of per tournament.")
@click.pass_context
def audit_cmd(ctx: click.Context, inputs: Inputs, output: Output, rules: str, specs: str, per_player: bool) -> None:
    """Recompute standings and compare them with the ranks and points declared in the files.

    Per tournament: players, points_differ, rank_conflicts (groups of our order that the declared ranks
    cross) and a status: agrees; points differ; agrees under EDITION (same order, other rules); agrees under
    ORDER (a conventional order); unexplained; no declared ranks; no tie-break list.
    """
    from tbstats.audit import audit

    edition = check_edition(rules)
    if specs != "from-file":
        _spec_list(specs)
    batch, rejected = _load_batch(inputs)
    per_t, per_p = audit(batch, api.make_context(batch), rules=edition, tiebreaks=specs)
    emit(per_p if per_player else per_t, output)
    ctx.exit(exit_code(rejected))


# ------------------------------------------------------------------------------------------- simulation

DEFAULT_ORDERS = {
    "swiss": ["c1-bh-sb-de-win=fide-2026:BH/C1,BH,SB,DE,WIN", "bh-c1-sb=fide-2026:BH,BH/C1,SB",
              "c1-bh-sb-de-win-2024=fide-2024:BH/C1,BH,SB,DE,WIN", "bh-c1-sb-2024=fide-2024:BH,BH/C1,SB"],
    "round_robin": ["sb-de-ks=fide-2026:SB,DE,KS", "de-sb-ks-win=fide-2026:DE,SB,KS,WIN",
                    "sb-de-ks-2024=fide-2024:SB,DE,KS"],
}


@main.command(name="simulate", epilog=EPILOG)
@click.option("-n", "--tournaments", type=click.IntRange(min=1), default=1000, show_default=True)
@click.option("-p", "--players", type=click.IntRange(min=2), default=60, show_default=True)
@click.option("-r", "--rounds", type=click.IntRange(min=1), default=None,
              help="Rounds (default: 9 for Swiss, one cycle for round robins).")
@click.option("--kind", type=click.Choice(["swiss", "round_robin"]), default="swiss", show_default=True)
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--scoring", type=click.Choice(["standard", "3-1-0"]), default="standard", show_default=True)
@click.option("--byes", "half_byes", type=click.FloatRange(0, 1), default=0.02, show_default=True,
              help="Requested half-point byes, per player and round.")
@click.option("--zero-byes", type=click.FloatRange(0, 1), default=0.005, show_default=True,
              help="Requested zero-point byes, per player and round.")
@click.option("--forfeits", type=click.FloatRange(0, 1), default=0.01, show_default=True, help="Per game.")
@click.option("--double-forfeits", type=click.FloatRange(0, 1), default=0.002, show_default=True,
              help="Per game.")
@click.option("--withdrawals", type=click.FloatRange(0, 1), default=0.03, show_default=True, help="Per player.")
@click.option("--unrated", type=click.FloatRange(0, 1), default=0.05, show_default=True,
              help="Share of unrated players.")
@click.option("--draw-rate", type=click.FloatRange(0, 1), default=0.30, show_default=True,
              help="Base draw rate (rises with strength, falls with the rating gap).")
@click.option("-c", "--config", "configs", multiple=True, metavar="NAME=EDITION:SPECS",
              help="A configuration to evaluate (repeatable; default: the conventional orders for --kind "
                   "under fide-2026 and fide-2024).")
@click.option("--configs", "config_file", type=click.Path(exists=True, dir_okay=False), default=None,
              metavar="FILE", help="Configurations from a TOML file.")
@click.option("--no-baseline", is_flag=True, help="Leave out the random-order baseline (drawing of lots).")
@click.option("--sweep", default=None, metavar="PARAM=V1,V2,...",
              help="Also sweep one parameter: rounds, players, bye_rate, draw_rate, forfeit_rate or "
                   "withdrawal_rate (e.g. rounds=5,7,9,11).")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Threads for the simulation (the result does not depend on it).")
@click.option("--trf-dir", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="Also write every simulated tournament as a TRF file into DIR.")
@click.option("--archive", type=click.Path(), default=None, metavar="PATH",
              help="Also write the simulated archive (columnar model; .parquet/.arrow/.csv or a directory).")
@report_options
def simulate_cmd(tournaments: int, players: int, rounds: int | None, kind: str, seed: int, scoring: str,
                 half_byes: float, zero_byes: float, forfeits: float, double_forfeits: float, withdrawals: float,
                 unrated: float, draw_rate: float, configs: tuple[str, ...], config_file: str | None,
                 no_baseline: bool, sweep: str | None, workers: int, trf_dir: str | None, archive: str | None,
                 output: ReportOutput) -> None:
    """Simulate tournaments with known true strengths and measure which tie-break order recovers them.

    Per configuration, over all groups tied on points: strongest_first (the truly strongest is ranked
    first in the group), kendall_tied (Kendall tau-b inside groups), unbroken (ties left), kendall and
    spearman over whole tournaments, first_settles_first (the first tie-break alone settles first place);
    each with a 95% interval. The 'random' row is the baseline: ties broken by lots. The same seed gives
    the same archive and the same figures.
    """
    from tbstats import compare as cmp
    from tbstats import evaluate as ev
    from tbstats.io.trf import write_trf
    from tbstats.simulate import SimulationConfig

    parsed = [cmp.parse_config(c) for c in configs] + (cmp.read_configs(config_file) if config_file else [])
    if not parsed:
        parsed = [cmp.parse_config(c) for c in DEFAULT_ORDERS[kind]]
    try:
        config = SimulationConfig(tournaments=tournaments, players=players, rounds=rounds, kind=kind,  # type: ignore[arg-type]
                                  seed=seed, scoring=scoring, half_bye_rate=half_byes, zero_bye_rate=zero_byes,
                                  forfeit_rate=forfeits, double_forfeit_rate=double_forfeits,
                                  withdrawal_rate=withdrawals, unrated_rate=unrated, draw_base=draw_rate)
    except TbstatsError as exc:
        raise click.UsageError(str(exc)) from None
    sim, table = ev.run(config, parsed, baseline=not no_baseline, workers=workers)
    swept = None
    if sweep:
        name, _, listed = sweep.partition("=")
        try:
            values = [float(v) for v in listed.split(",") if v.strip()]
        except ValueError:
            raise click.BadParameter(f"{sweep!r}: expected PARAM=V1,V2,...", param_hint="--sweep") from None
        swept = ev.sweep(config, parsed, name.strip(), values, baseline=not no_baseline, workers=workers)
    if trf_dir:
        directory = Path(trf_dir)
        directory.mkdir(parents=True, exist_ok=True)
        for source, text in write_trf(sim.batch).items():
            (directory / (source.replace("/", "_") + ".trf")).write_text(text, encoding="utf-8")
    if archive:
        tabular.write_model(sim.batch, archive)
    if output.charts or output.format == "html":
        from tbstats import report

        if output.charts:
            report.write_simulation_charts(table, Path(output.charts), fmt=output.chart_format, sweep=swept)
        if output.format == "html":
            settings = {f.name: getattr(config, f.name) for f in fields(config) if f.name != "chunk"}
            write_page(report.render_simulation_html(table, title="tbstats simulate", settings=settings, sweep=swept,
                                                     charts=output.chart_format), output)
    else:
        emit(pl.concat([table, swept], how="diagonal_relaxed") if swept is not None else table,
             Output(output.format, output.path))
