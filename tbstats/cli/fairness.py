"""The ``evaluate`` command: order quality against a strength proxy on real archives, and whom ties favour."""

from __future__ import annotations

import click

from tbstats.analysis.breakdowns import BREAKDOWNS
from tbstats.cli.base import EPILOG, main
from tbstats.cli.options import (
    Batches,
    Configs,
    Inputs,
    batch_options,
    config_options,
    exit_code,
    input_options,
)
from tbstats.cli.outputs import (
    Output,
    ReportOutput,
    about_run,
    emit,
    report_options,
    write_page,
)
from tbstats.cli.simulation import DEFAULT_ORDERS


@main.command(name="evaluate", epilog=EPILOG)
@input_options
@config_options
@click.option("--strength", "proxy", default="rating", show_default=True, metavar="rating|COLUMN|archive",
              help="The strength proxy: each player's rating in the event; a numeric column of the players "
                   "table (e.g. strength in archives simulate --archive wrote); or archive: a leave-one-event-out "
                   "Bradley-Terry fit on the other events (players by FIDE id).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the drawing of lots (the baseline), as simulate --seed.")
@click.option("--no-baseline", is_flag=True, help="Leave out the random-order baseline (drawing of lots).")
@click.option("--diff", "pairs", multiple=True, metavar="A,B",
              help="Pairs of configurations to difference in --table difference (repeatable; default: the "
                   "first configuration against each other one).")
@click.option("--by", "by", multiple=True, type=click.Choice(BREAKDOWNS), metavar="BREAKDOWN",
              help="Restrict --table favour/difference to these breakdowns (repeatable): "
                   + ", ".join(BREAKDOWNS) + " (default: all; html shows all).")
@click.option("--table", type=click.Choice(["measures", "favour", "difference"]), default="measures",
              show_default=True, help="Which table to write (all of them go into html).")
@report_options
@batch_options
@click.pass_context
def evaluate_cmd(ctx: click.Context, inputs: Inputs, configs: Configs, proxy: str, seed: int, no_baseline: bool,
                 pairs: tuple[str, ...], by: tuple[str, ...], table: str, output: ReportOutput,
                 batches: Batches) -> None:
    """Which tie-break order ranks tied players closer to their strength, and whom it favours, on real events.

    --table measures (one row per configuration, as simulate): strongest_first, kendall_tied, kendall,
    spearman (against the --strength proxy; players without one are left out: groups_left_out,
    players_left_out), unbroken, first_settles_first, each with a 95% interval; 'random' is the
    drawing-of-lots baseline. --table favour: for players tied on points, the rate of ties won (ranked
    first of the group; a shared first counts 1/m) with a 95% Wilson interval against the chance rate 1/k,
    per configuration and by unplayed rounds, colour balance, rating band, start rank and seed in the group.
    --table difference: the paired difference of those rates between two configurations (--diff).
    """
    import polars as pl

    from tbstats.analysis import evaluate as evaluation
    from tbstats.cli.runs import account, report_checks, streamed
    from tbstats.engine.configs import parse_config
    from tbstats.run import commands
    from tbstats.run.pipeline import Run

    parsed = configs.parse()   # (default: the conventional Swiss orders under fide-2026 and fide-2024)
    if not parsed:
        parsed = [parse_config(c) for c in DEFAULT_ORDERS["swiss"]]
    all_configs = evaluation.with_baseline(parsed, not no_baseline)
    chosen = None
    if pairs:
        chosen = []
        for text in pairs:
            a, sep, b = text.partition(",")
            if not sep or not a.strip() or not b.strip():
                raise click.BadParameter(f"{text!r}: expected A,B (two configuration names)", param_hint="--diff")
            chosen.append((a.strip(), b.strip()))
    seen: list[pl.DataFrame] = []
    with streamed(inputs, batches) as run:
        fit_run = None
        if proxy == "archive":   # a first pass over the same inputs fits the strengths (its problems: the run's)
            fit_run = Run(inputs.mode, inputs=inputs.paths, batch_size=batches.size, batch_files=batches.files,
                          workers=batches.workers, client=run.client, progress=run.progress, label="fit",
                          max_member_bytes=inputs.max_member_bytes)
            run.label = "evaluate"
        page = bool(output.charts) or output.format == "html"   # (a page shows every table; else one is made)
        result = commands.evaluate(run, all_configs, proxy=proxy, lots_seed=seed, pairs=chosen, fit_run=fit_run,
                                   workers=batches.workers, seen=seen, tables=None if page else (table,))
    if result.fit is not None and not inputs.quiet:
        click.echo(result.fit.describe(), err=True)
    events = pl.concat(seen) if seen else pl.DataFrame()
    if "team_event" in events.columns:   # (left out: their tie-breaks are not computed)
        events = events.filter(~pl.col("team_event"))
    warned = report_checks(events, [s for c in parsed for s in c.specs or ()], None, quiet=inputs.quiet)
    if result.team_events and not inputs.quiet:
        click.echo(f"Note: {result.team_events} team event(s) left out: their standings are team standings",
                   err=True)
    if output.charts or output.format == "html":
        from tbstats import report

        if output.charts:
            report.write_fairness_charts(result, output.charts, fmt=output.chart_format)
        if output.format == "html":
            what = account(inputs, run, team_events=result.team_events,
                           team_events_as="left out", checks=warned)
            write_page(report.render_fairness_html(result, title="tbstats evaluate", charts=output.chart_format,
                                                   about=about_run(output, what)), output)
    else:
        frames = {"measures": result.measures, "favour": result.favour, "difference": result.differences}
        out = frames[table]
        if by and table != "measures":
            out = out.filter(pl.col("breakdown").is_in(list(by)))
        emit(out, Output(output.format, output.path))
    ctx.exit(exit_code(run.rejected))
