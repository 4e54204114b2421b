"""Commands over whole archives: ``compare`` and ``audit``."""

from __future__ import annotations

from pathlib import Path

import click

from tbstats.cli.base import EPILOG, main
from tbstats.cli.options import (
    FROM_FILE_LIST,
    Batches,
    Configs,
    Engine,
    Inputs,
    Teams,
    batch_options,
    config_options,
    engine_options,
    exit_code,
    input_options,
    team_options,
    tiebreaks_option,
)
from tbstats.cli.outputs import (
    Output,
    ReportOutput,
    about_run,
    emit,
    output_options,
    report_options,
    write_page,
)

# ---------------------------------------------------------------------------------------------- archives

@main.command(name="compare", epilog=EPILOG)
@input_options
@config_options
@engine_options
@click.option("--top", type=click.IntRange(min=1), default=10, show_default=True,
              help="K for topk_changed (the set of players ranked K or better).")
@click.option("--by", "by", multiple=True, metavar="FEATURE",
              type=click.Choice(["rounds", "players", "type", "unplayed", "year", "rating_band"]),
              help="Break the rates down by a tournament feature (repeatable).")
@click.option("--table", type=click.Choice(["pairs", "configs", "depth", "drilldown", "tournaments"]),
              default="pairs", show_default=True, help="Which table to write (all of them go into html).")
@click.option("--drilldown", "drilldown_limit", type=click.IntRange(min=1), default=1000, show_default=True,
              metavar="N", help="The drill-down keeps the first N tournaments of each pair whose winner changed.")
@report_options
@batch_options
@click.pass_context
def compare_cmd(ctx: click.Context, inputs: Inputs, configs: Configs, engine: Engine, top: int, by: tuple[str, ...],
                table: str, drilldown_limit: int, output: ReportOutput, batches: Batches) -> None:
    """How often configurations (edition + tie-break order) change winners, podiums and rankings.

    One row per pair of configurations: tournaments, winner_changed (the set of rank-1 players differs),
    winner_changed_rate with a 95% Wilson interval, podium_changed (top-3 set), topk_changed (--top),
    any_rank_changed, mean_kendall_distance (normalised, ties count 1/2) and shared_first per side.
    --table configs: how often tie-breaks were needed at the top, settled or not; --table depth: at which
    position of each list the tie for first was settled; --table drilldown: the tournaments whose winner
    changed, with players, deciding values and an explain command. With --by, the rates per feature value.
    """
    import polars as pl

    from tbstats.analysis import compare as cmp
    from tbstats.cli.runs import account, report_checks, streamed
    from tbstats.run import checks, commands

    parsed = configs.parse(engine.rules)
    cmp.check_configs(parsed)
    seen: list[pl.DataFrame] = []
    with streamed(inputs, batches) as run:
        result = commands.compare(run, parsed, top=top, drilldown_limit=drilldown_limit, seen=seen,
                              **engine.context())
    events = pl.concat(seen) if seen else pl.DataFrame()
    warned = report_checks(events, [s for c in parsed for s in c.specs or ()], engine, quiet=inputs.quiet)
    team_events = int(events["team_event"].sum()) if "team_event" in events.columns else 0
    notes = checks.team_events_as_players(team_events, "their players are ranked as individuals (compare has no "
                                          "team standings)", hint=None)
    if not inputs.quiet:
        for note in notes:
            click.echo(f"Note: {note}", err=True)
    breakdowns = {feature: cmp.breakdown(result, feature) for feature in by}
    if output.charts or output.format == "html":
        from tbstats import report

        if output.charts:
            report.write_charts(result, Path(output.charts), fmt=output.chart_format, breakdowns=breakdowns)
        if output.format == "html":
            what = account(inputs, run, team_events=team_events,
                           team_events_as="ranked as individuals", checks=warned)
            write_page(report.render_html(result, title="tbstats compare", breakdowns=breakdowns,
                                          charts=output.chart_format, about=about_run(output, what)), output)
    else:
        frames = {"pairs": result.pairs, "configs": result.configs, "depth": result.depth,
                  "drilldown": result.drilldown, "tournaments": result.tournaments}
        out = frames[table]
        if breakdowns and table == "pairs":
            out = pl.concat([b.with_columns(pl.lit(f).alias("feature"), pl.col(f).cast(pl.String).alias("value"))
                             .drop(f) for f, b in breakdowns.items()], how="diagonal_relaxed")
        emit(out, Output(output.format, output.path, output.csv_escape))
    ctx.exit(exit_code(run.rejected))


@main.command(name="audit", epilog=EPILOG)
@input_options
@output_options
@engine_options(rules="auto")
@tiebreaks_option(default="from-file")
@click.option("--per-player", "per_player", is_flag=True,
              help="One row per differing player (per differing team with --teams) instead of per tournament.")
@click.option("--players", "per_player_alias", is_flag=True, hidden=True)
@click.option("--per-team", "per_team", is_flag=True, help="With --teams: one row per differing team.")
@click.option("--drilldown", "drilldown_limit", type=click.IntRange(min=1), default=None, metavar="N",
              help="Keep the differing rows of the first N tournaments that have any (default: all).")
@batch_options
@team_options
@click.pass_context
def audit_cmd(ctx: click.Context, inputs: Inputs, output: Output, engine: Engine, specs: str, per_player: bool,
              per_player_alias: bool, per_team: bool, drilldown_limit: int | None, batches: Batches,
              teams: Teams) -> None:
    """Recompute standings and compare them with the ranks and points declared in the files.

    Per tournament: players, points_differ, rank_conflicts (groups of our order that the declared ranks
    cross) and a status: agrees; points differ; agrees under EDITION (same order, other rules); agrees under
    ORDER (a conventional order); unexplained; no declared ranks; tie-break list not understood.

    A tournament with declared ranks and no list (TRF-16 files) is matched against the usual orders (rules.md
    8 conventions, FIDE's pre-2023 recommendations, the US Chess default; round robins try round-robin
    orders; each under every FIDE edition, or only --rules when not auto, with and without a rating for
    unrated players): agrees under a usual
    order, or no usual order agrees (or points differ) with the nearest (fewest players whose declared rank
    lies outside the ranks they share under it, then the smallest Kendall distance). Columns: order,
    order_rules, order_tiebreaks (the list, for compute -t), order_differ (those players), order_kendall and
    matching (every NAME@EDITION that reproduces the ranks); --per-player then lists the players the order
    misplaces, with its rank, the order and its tie-break values.

    With --teams, per team event against its 310 records (declared MP cols 55-60, GP 62-67, rank 69-71):
    teams, mp_differ, gp_differ, rank_conflicts and the same statuses (conventional team orders such as
    MPvGP,BH:MP); --per-team gives the differing teams (declared and computed mp, gp, rank).
    """
    import polars as pl

    from tbstats.analysis.audit import bounded
    from tbstats.cli.runs import report_checks, spec_list, streamed, team_spec_list
    from tbstats.run import checks, commands
    from tbstats.run.teams import audit_teams_run

    from_file = specs.strip().lower() == FROM_FILE_LIST
    if teams.on:
        team_specs = FROM_FILE_LIST if from_file else team_spec_list(specs)
        with streamed(inputs, batches) as run:
            per_t, per_team_rows, notes = audit_teams_run(run, rules=engine.rules, tiebreaks=team_specs,
                                                          team_pab=teams.pab, drilldown_limit=drilldown_limit,
                                                          force_type=engine.force_type)
        if not inputs.quiet:
            for note in notes:
                click.echo(f"Warning: {note}", err=True)
        emit(per_team_rows if per_team or per_player or per_player_alias else per_t, output)
        ctx.exit(exit_code(run.rejected))
    if per_team:
        raise click.UsageError("--per-team needs --teams")
    parsed = [] if from_file else spec_list(specs)
    seen: list[pl.DataFrame] = []
    with streamed(inputs, batches) as run:
        per_t, per_p = commands.audit(run, rules=engine.rules, tiebreaks=FROM_FILE_LIST if from_file else specs,
                                  seen=seen, **engine.context())
    events = pl.concat(seen) if seen else pl.DataFrame()
    report_checks(events, parsed, engine, quiet=inputs.quiet)
    if not inputs.quiet and "team_event" in events.columns:
        for note in checks.team_events_as_players(int(events["team_event"].sum()),
                                                  "audited as individual events (player ranks and points)"):
            click.echo(f"Note: {note}", err=True)
    emit(bounded(per_p, drilldown_limit) if per_player or per_player_alias else per_t, output)
    ctx.exit(exit_code(run.rejected))
