"""Commands that compute tie-breaks: ``compute``, ``explain`` (``tiebreaks`` is in :mod:`tbstats.cli.registry`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from tbstats.cli.base import EPILOG, main
from tbstats.cli.options import (
    FROM_FILE_LIST,
    Batches,
    Engine,
    Inputs,
    Teams,
    batch_options,
    engine_options,
    exit_code,
    input_options,
    team_options,
    tiebreaks_option,
)
from tbstats.cli.outputs import (
    Output,
    emit,
    output_options,
    quiet_option,
)

F = TypeVar("F", bound=Callable[..., Any])


@main.command(epilog=EPILOG)
@input_options
@output_options
@engine_options
@tiebreaks_option()
@click.option("--lots", type=click.IntRange(min=0), default=None, metavar="SEED",
              help="Break ties left after the list by a seeded drawing of lots (default: tied players or teams "
                   "share a rank).")
@batch_options
@team_options
@click.pass_context
def compute(ctx: click.Context, inputs: Inputs, output: Output, engine: Engine, specs: str, lots: int | None,
            batches: Batches, teams: Teams) -> None:
    """Compute tie-breaks and standings: one row per player (one per team with --teams).

    Columns: source, tournament, start_no, name, rating, points, rank, then one column per SPEC named
    exactly as written (in canonical form, e.g. bh-c1 -> BH/C1). rank orders by points, then the specs in
    the order given, each applied only to groups still tied (C.07 4.2); players still tied share a rank.
    A DE column holds the rank after points and the specs up to and including DE. With -t from-file each
    tournament uses its own 202/212 list: a tiebreaks column names it and TB1, TB2, ... hold the values.

    With --teams: source, tournament, team, name, mp, gp, rank, then one column per team SPEC (BH:MP,
    EMGSB/C1, EDE, SSSC/K3, ...; `tbstats tiebreaks --teams` lists them, `from-file` uses each event's own
    212/202 list). Partition tie-breaks (DE, EDE and its chains, TBR, BBE) hold the rank, as DE does.
    """
    import polars as pl

    from tbstats.cli.runs import report_checks, spec_list, streamed, team_spec_list
    from tbstats.output import TableFile
    from tbstats.run import checks, commands

    if teams.on:
        from tbstats.run.teams import compute_teams_run  # (the team modules load only for team work)

        team_specs = None if specs.strip().lower() == "from-file" else team_spec_list(specs)
        # with given specs each batch's rows are written as they come (each event's own lists: at the end)
        team_sink = None if team_specs is None else TableFile(output.format, output.path,
                                                               csv_escape=output.csv_escape)
        try:
            with streamed(inputs, batches) as run:
                table, notes = compute_teams_run(run, team_specs, rules=engine.rules, force_type=engine.force_type,
                                                 after_round=engine.after_round, team_pab=teams.pab, lots=lots,
                                                 sink=None if team_sink is None else team_sink.write)
        except BaseException:
            if team_sink is not None:
                team_sink.discard()
            raise
        if not inputs.quiet:
            for note in notes:
                click.echo(f"Warning: {note}", err=True)
        if team_sink is None:
            emit(table, output)
        else:
            team_sink.commit(table)
        ctx.exit(exit_code(run.rejected))
    from_file = specs.strip().lower() == FROM_FILE_LIST
    parsed = [] if from_file else spec_list(specs)
    seen: list[pl.DataFrame] = []
    # each batch's rows are written as they come, all or nothing: a failed run leaves no file and prints nothing
    sink = TableFile(output.format, output.path, csv_escape=output.csv_escape)
    try:
        with streamed(inputs, batches) as run:
            table, _, team_events = commands.compute(
                run, FROM_FILE_LIST if from_file else parsed, rules=engine.rules, force_type=engine.force_type,
                after_round=engine.after_round, unrated_rating=engine.unrated_rating, lots=lots, seen=seen,
                sink=sink)
        report_checks(pl.concat(seen) if seen else pl.DataFrame(), parsed, engine, quiet=inputs.quiet)
    except BaseException:
        sink.discard()
        raise
    if not inputs.quiet:
        for note in checks.team_events_as_players(team_events, "rows are players ranked as individuals"):
            click.echo(f"Note: {note}", err=True)
    sink.commit(table)
    ctx.exit(exit_code(run.rejected))


@main.command(epilog=EPILOG)
@click.argument("path", metavar="INPUT")
@click.option("-p", "--player", type=click.IntRange(min=1), default=None, metavar="N",
              help="Start number of the player.")
@click.option("--team", "team_no", type=int, default=None, help="Pairing number of the team (with --teams).")
@tiebreaks_option(one=True)
@click.option("--tournament", type=int, default=None, metavar="ID",
              help="Tournament id when INPUT holds several events (the error lists them).")
@output_options
@engine_options
@team_options
@quiet_option
def explain(path: str, player: int | None, team_no: int | None, specs: str, tournament: int | None,
            output: Output, engine: Engine, teams: Teams, quiet: bool) -> None:
    """Show a player's tie-break round by round: what each round adds, or what the value is made of.

    Opponent-score tie-breaks (BH, FB, SB, the US Solkoff forms) show each round's C.07 16.2 category,
    the opponent's score as counted (16.3), the dummy that replaces an unplayed round before and after
    its cap (16.4), the contribution, and which elements the Cut/Median modifiers removed and why (14,
    16.5). Counts and sums (WIN, PS, KS, ...) show what each round adds; averages (ARO, TPR, APRO, ...)
    the elements they average. The summary line (with the value) goes to stdout before a Markdown
    table; in csv, tsv, json and parquet it goes to stderr and columns tiebreak and value lead each row.
    With --teams --team N the same for a team: its matches (opponent team, type, MP, GP) and the
    elements of a team SPEC.
    """
    import polars as pl

    from tbstats.analysis import explain as explain_mod
    from tbstats.analysis.teams.explain import explain_team
    from tbstats.cli.runs import report_checks, spec_list, team_spec_list
    from tbstats.io import sources
    from tbstats.model.teams.batch import build_teams
    from tbstats.run import checks

    result = sources.load([path], on_error="raise")
    if teams.on:
        if team_no is None:
            raise click.UsageError("explain --teams needs --team N (the team's pairing number)")
        team_spec_list(specs)
        team_ex = explain_team(result.batch, team=team_no, tiebreak=specs, rules=engine.rules,
                               tournament=tournament, force_type=engine.force_type,
                               teams=build_teams(result.batch, team_pab=teams.pab))
        if output.format in ("csv", "tsv", "json", "parquet") or output.path:
            emit(team_ex.rounds, output)
            if not quiet:
                click.echo(team_ex.summary, err=True)
        else:
            click.echo(team_ex.summary)
            emit(team_ex.rounds, output)
        return
    if player is None:
        raise click.UsageError("explain needs -p/--player N (or --teams --team N)")
    parsed = spec_list(specs)
    if len(parsed) != 1:
        raise click.BadParameter(f"explain takes one tie-break, got {len(parsed)}", param_hint="--tiebreaks")
    report_checks(checks.events(result.batch), [], engine, quiet=True)      # --after-round past the event
    ex = explain_mod.explain(result.batch, player=player, tiebreak=str(parsed[0]), rules=engine.rules,
                             tournament=tournament, force_type=engine.force_type,
                             unrated_rating=engine.unrated_rating, after_round=engine.after_round)
    report_checks(checks.events(result.batch.select([ex.tournament])), parsed, engine, quiet=quiet)
    if output.format == "md":
        if not (quiet and output.path):
            click.echo(ex.summary, err=bool(output.path))
        emit(ex.rounds, output)
        return
    if not quiet:
        click.echo(ex.summary, err=True)
    emit(ex.rounds.select(pl.lit(ex.tiebreak).alias("tiebreak"), pl.lit(ex.value, pl.Float64).alias("value"),
                          pl.all()), output)
