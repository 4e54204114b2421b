"""Commands that compute tie-breaks: ``compute``, ``explain``, ``tiebreaks``."""

from __future__ import annotations

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
from tbstats.io import sources
from tbstats.tiebreaks import TIEBREAKS


@main.command(epilog=EPILOG)
@input_options
@output_options
@engine_options
@click.option("-t", "--tiebreaks", "specs", required=True, metavar="SPEC[,SPEC...]",
              help="Ordered tie-breaks, e.g. 'BH/C1,BH,SB,DE,WIN' (see `tbstats tiebreaks`).")
@click.option("--lots", type=click.IntRange(min=0), default=None, metavar="SEED",
              help="Break ties left after the list by a seeded drawing of lots (default: tied players share a rank).")
@batch_options
@click.pass_context
def compute(ctx: click.Context, inputs: Inputs, output: Output, engine: Engine, specs: str, lots: int | None,
            batches: Batches) -> None:
    """Compute tie-breaks and standings: one row per player.

    Columns: source, tournament, start_no, name, rating, points, rank, then one column per SPEC named
    exactly as written (in canonical form, e.g. bh-c1 -> BH/C1). rank orders by points, then the specs in
    the order given, each applied only to groups still tied (C.07 4.2); players still tied share a rank.
    A DE column holds the rank after points and the specs up to and including DE.
    """
    parsed = _spec_list(specs)
    buchholz = [str(s) for s in parsed if s.name in ("BH", "FB", "AOB")]
    with streamed(inputs, batches) as run:
        table, round_robins = runs.compute(run, parsed, rules=engine.rules, force_type=engine.force_type,
                                           after_round=engine.after_round, unrated_rating=engine.unrated_rating,
                                           lots=lots)
    if buchholz and (round_robins if engine.force_type is None else engine.force_type == "round_robin") \
            and not inputs.quiet:
        click.echo(f"Warning: {', '.join(buchholz)} computed for round robins; Buchholz tie-breaks must not be "
                   "used in round robins (C.07 2026, Art. 8 note)", err=True)
    emit(table, output)
    ctx.exit(exit_code(run.rejected))


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
