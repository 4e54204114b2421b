"""Commands that compute tie-breaks: ``compute``, ``explain``, ``tiebreaks``."""

from __future__ import annotations

import click
import polars as pl

from tbstats import api, checks
from tbstats import explain as explain_mod
from tbstats.cli.base import EPILOG, main
from tbstats.cli.options import (
    FROM_FILE_LIST,
    Engine,
    Inputs,
    Output,
    _spec_list,
    emit,
    engine_options,
    exit_code,
    input_options,
    ledger_of,
    output_options,
    report_checks,
    report_load,
    tiebreaks_option,
    write_ledger,
)
from tbstats.errors import FormatError
from tbstats.games import Batch, empty
from tbstats.io import sources
from tbstats.io.trf import ERROR_SCHEMA
from tbstats.tiebreaks import TIEBREAKS


@main.command(epilog=EPILOG)
@input_options
@output_options
@engine_options
@tiebreaks_option()
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
    A DE column holds the rank after points and the specs up to and including DE. With -t from-file each
    tournament uses its own 202/212 list: a tiebreaks column names it and TB1, TB2, ... hold the values.
    """
    from_file = specs.strip().lower() == FROM_FILE_LIST
    parsed = [] if from_file else _spec_list(specs)
    stream = sources.iter_batches(inputs.paths, on_error=inputs.mode, progress=not inputs.quiet,
                                  batch_files=batch_files)
    parts = []
    seen = []
    ledgers = [pl.DataFrame(schema=ERROR_SCHEMA)]
    try:
        for batch, ledger in stream:
            ledgers.append(ledger)
            if batch.n_tournaments:
                seen.append(checks.events(batch))
                parts.append(api.compute(batch, specs if from_file else parsed, rules=engine.rules,
                                         force_type=engine.force_type, after_round=engine.after_round,
                                         unrated_rating=engine.unrated_rating, lots=lots, workers=workers))
    except FormatError as exc:
        write_ledger(inputs, ledger_of(exc))
        raise
    report_load(inputs, pl.concat(ledgers), stream.summary())
    report_checks(pl.concat(seen) if seen else pl.DataFrame(), parsed, engine, quiet=inputs.quiet)
    if not parts:
        parts.append(api.compute(Batch(empty("tournaments"), empty("players"), empty("games")), parsed,
                                 rules=engine.rules))
    emit(pl.concat(parts), output)
    ctx.exit(exit_code(stream.rejected))


@main.command(epilog=EPILOG)
@click.argument("path", metavar="INPUT")
@click.option("-p", "--player", type=click.IntRange(min=1), required=True, metavar="N",
              help="Start number of the player.")
@tiebreaks_option(one=True)
@click.option("--tournament", type=int, default=None, metavar="ID",
              help="Tournament id when INPUT holds several events (the error lists them).")
@output_options
@engine_options
def explain(path: str, player: int, specs: str, tournament: int | None, output: Output, engine: Engine) -> None:
    """Show a player's tie-break round by round: what each round adds, or what the value is made of.

    Opponent-score tie-breaks (BH, FB, SB, the US Solkoff forms) show each round's C.07 16.2 category,
    the opponent's score as counted (16.3), the dummy that replaces an unplayed round before and after
    its cap (16.4), the contribution, and which elements the Cut/Median modifiers removed and why (14,
    16.5). Counts and sums (WIN, PS, KS, ...) show what each round adds; averages (ARO, TPR, APRO, ...)
    the elements they average. The summary line (with the value) goes to stdout before a Markdown
    table; in csv, tsv, json and parquet it goes to stderr and columns tiebreak and value lead each row.
    """
    parsed = _spec_list(specs)
    result = sources.load([path], on_error="raise")
    report_checks(checks.events(result.batch), [], engine, quiet=True)      # --after-round past the event
    ex = explain_mod.explain(result.batch, player=player, tiebreak=str(parsed[0]), rules=engine.rules,
                             tournament=tournament, force_type=engine.force_type,
                             unrated_rating=engine.unrated_rating, after_round=engine.after_round)
    report_checks(checks.events(result.batch.select([ex.tournament])), parsed, engine, quiet=False)
    if output.format == "md":
        click.echo(ex.summary, err=bool(output.path))
        emit(ex.rounds, output)
        return
    click.echo(ex.summary, err=True)
    emit(ex.rounds.select(pl.lit(ex.tiebreak).alias("tiebreak"), pl.lit(ex.value, pl.Float64).alias("value"),
                          pl.all()), output)


@main.command(name="tiebreaks", epilog=EPILOG)
@output_options
def tiebreaks_cmd(output: Output) -> None:
    """List the tie-break registry: name, article, modifiers, direction and description."""
    rows = [{"name": t.name, "article": t.article, "modifiers": ",".join(sorted(t.modifiers)),
             "order": "higher first" if t.higher_is_better else "lower first",
             "kind": t.kind, "description": t.description} for t in TIEBREAKS.values()]
    emit(pl.DataFrame(rows), output)
