"""Commands that compute tie-breaks: ``compute``, ``explain``, ``tiebreaks``."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, TypeVar, cast

import click
import polars as pl

from tbstats import explain as explain_mod
from tbstats import runs
from tbstats.cli.base import EPILOG, main
from tbstats.cli.options import (
    Batches,
    Engine,
    Inputs,
    Output,
    _spec_list,
    batch_options,
    emit,
    engine_options,
    exit_code,
    input_options,
    output_options,
    streamed,
)
from tbstats.errors import TbstatsError
from tbstats.io import sources
from tbstats.spec import TieBreakSpec
from tbstats.teams.explain import explain_team
from tbstats.teams.model import build_teams
from tbstats.teams.runs import compute_teams_run
from tbstats.teams.tiebreaks import TEAM_TIEBREAKS, parse_team_specs
from tbstats.tiebreaks import TIEBREAKS

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Teams:
    """``--teams`` and ``--team-pab MP:GP`` (team events, rules.md Section 9)."""

    on: bool
    pab: tuple[Fraction, Fraction] | None


def team_options(f: F) -> F:
    """Add ``--teams`` and ``--team-pab MP:GP``; pass ``teams``."""

    @functools.wraps(f)
    def wrapper(*args: Any, teams_flag: bool, team_pab: str | None, **kwargs: Any) -> Any:
        pab = None
        if team_pab is not None:
            try:
                mp, gp = (Fraction(x) for x in team_pab.split(":"))
            except ValueError:
                raise click.BadParameter(f"{team_pab!r} is not MP:GP, e.g. 1:3", param_hint="--team-pab") from None
            pab = (mp, gp)
        return f(*args, teams=Teams(teams_flag, pab), **kwargs)

    wrapper = click.option("--team-pab", default=None, metavar="MP:GP",
                           help="Score a team's round without opponent that no 320/240 record marks as a team "
                                "PAB worth MP:GP when it is the round's only such team (files without 320).")(wrapper)
    wrapper = click.option("--teams", "teams_flag", is_flag=True,
                           help="Team standings: one row per team (team events, C.07 11-13).")(wrapper)
    return cast(F, wrapper)


def _team_spec_list(text: str) -> list[TieBreakSpec]:
    try:
        return parse_team_specs(text)
    except TbstatsError as exc:
        raise click.BadParameter(str(exc), param_hint="--tiebreaks") from None


@main.command(epilog=EPILOG)
@input_options
@output_options
@engine_options
@click.option("-t", "--tiebreaks", "specs", required=True, metavar="SPEC[,SPEC...]",
              help="Ordered tie-breaks, e.g. 'BH/C1,BH,SB,DE,WIN' (see `tbstats tiebreaks`).")
@click.option("--lots", type=click.IntRange(min=0), default=None, metavar="SEED",
              help="Break ties left after the list by a seeded drawing of lots (default: tied players share a rank).")
@batch_options
@team_options
@click.pass_context
def compute(ctx: click.Context, inputs: Inputs, output: Output, engine: Engine, specs: str, lots: int | None,
            batches: Batches, teams: Teams) -> None:
    """Compute tie-breaks and standings: one row per player (one per team with --teams).

    Columns: source, tournament, start_no, name, rating, points, rank, then one column per SPEC named
    exactly as written (in canonical form, e.g. bh-c1 -> BH/C1). rank orders by points, then the specs in
    the order given, each applied only to groups still tied (C.07 4.2); players still tied share a rank.
    A DE column holds the rank after points and the specs up to and including DE.

    With --teams: source, tournament, team, name, mp, gp, rank, then one column per team SPEC (BH:MP,
    EMGSB/C1, EDE, SSSC/K3, ...; `tbstats tiebreaks --teams` lists them, `from-file` uses each event's own
    212/202 list). Partition tie-breaks (DE, EDE and its chains, TBR, BBE) hold the rank, as DE does.
    """
    if teams.on:
        team_specs = None if specs.strip().lower() == "from-file" else _team_spec_list(specs)
        with streamed(inputs, batches) as run:
            table, notes = compute_teams_run(run, team_specs, rules=engine.rules, force_type=engine.force_type,
                                             team_pab=teams.pab)
        if not inputs.quiet:
            for note in notes:
                click.echo(f"Warning: {note}", err=True)
        emit(table, output)
        ctx.exit(exit_code(run.rejected))
    parsed = _spec_list(specs)
    buchholz = [str(s) for s in parsed if s.name in ("BH", "FB", "AOB")]
    with streamed(inputs, batches) as run:
        table, round_robins, team_events = runs.compute(
            run, parsed, rules=engine.rules, force_type=engine.force_type, after_round=engine.after_round,
            unrated_rating=engine.unrated_rating, lots=lots)
    if buchholz and (round_robins if engine.force_type is None else engine.force_type == "round_robin") \
            and not inputs.quiet:
        click.echo(f"Warning: {', '.join(buchholz)} computed for round robins; Buchholz tie-breaks must not be "
                   "used in round robins (C.07 2026, Art. 8 note)", err=True)
    if team_events and not inputs.quiet:
        click.echo(f"Note: {team_events} team event(s): rows are players ranked as individuals; --teams gives "
                   "team standings", err=True)
    emit(table, output)
    ctx.exit(exit_code(run.rejected))


@main.command(epilog=EPILOG)
@click.argument("path", metavar="FILE")
@click.option("-p", "--player", type=int, default=None, help="Start number of the player.")
@click.option("--team", "team_no", type=int, default=None, help="Pairing number of the team (with --teams).")
@click.option("-t", "--tiebreak", "spec", required=True, metavar="SPEC", help="One tie-break, e.g. BH/C1.")
@click.option("--tournament", type=int, default=None, help="Tournament id when FILE holds several events.")
@output_options
@engine_options
@team_options
def explain(path: str, player: int | None, team_no: int | None, spec: str, tournament: int | None, output: Output,
            engine: Engine, teams: Teams) -> None:
    """Show a player's tie-break round by round: opponents, dummies and their caps, and what was cut.

    Each round shows the C.07 16.2 category, the opponent's score as counted (16.3), the dummy that
    replaces an unplayed round before and after its cap (16.4), the contribution, and which elements the
    Cut/Median modifiers removed and why (14, 16.5). The summary line goes to stderr. With --teams --team N
    the same for a team: its matches (opponent team, type, MP, GP) and the elements of a team SPEC.
    """
    result = sources.load([path], on_error="raise")
    if teams.on:
        if team_no is None:
            raise click.UsageError("explain --teams needs --team N (the team's pairing number)")
        _team_spec_list(spec)
        ex = explain_team(result.batch, team=team_no, tiebreak=spec, rules=engine.rules, tournament=tournament,
                          force_type=engine.force_type, teams=build_teams(result.batch, team_pab=teams.pab))
    else:
        if player is None:
            raise click.UsageError("explain needs -p/--player N (or --teams --team N)")
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
@click.option("--teams", is_flag=True, help="List the team registry (C.07 11-13 and the individual ones on MP/GP).")
def tiebreaks_cmd(output: Output, teams: bool) -> None:
    """List the tie-break registry: name, article, modifiers, direction and description."""
    registry = TEAM_TIEBREAKS if teams else TIEBREAKS
    rows = [{"name": t.name.replace("MPVGP", "MPvGP"), "article": t.article,
             "modifiers": ",".join(sorted(t.modifiers)),
             "order": "higher first" if t.higher_is_better else "lower first",
             "kind": t.kind, "description": t.description} for t in registry.values()]
    emit(pl.DataFrame(rows), output)
