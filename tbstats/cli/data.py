"""Commands about the data itself: ``ingest`` and ``info``."""

from __future__ import annotations

import click
import polars as pl

from tbstats.cli.base import EPILOG, main
from tbstats.cli.options import (
    Inputs,
    Output,
    emit,
    exit_code,
    input_options,
    ledger_of,
    load_inputs,
    output_options,
    report_load,
    write_ledger,
)
from tbstats.errors import FormatError
from tbstats.games import empty
from tbstats.info import summary_table
from tbstats.io import sources, tabular
from tbstats.io.trf import ERROR_SCHEMA

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
                                  batch_files=batch_files, max_member_bytes=inputs.max_member_bytes)
    ledgers = [pl.DataFrame(schema=ERROR_SCHEMA)]
    warnings = [empty("warnings")]
    try:
        with tabular.ArchiveWriter(target, model_format, append=append) as writer:
            for batch, ledger in stream:
                if batch.n_tournaments:
                    writer.write(batch)
                ledgers.append(ledger)
                warnings.append(batch.warnings)
    except FormatError as exc:
        write_ledger(inputs, ledger_of(exc))
        raise
    report_load(inputs, pl.concat(ledgers), stream.summary(), pl.concat(warnings))
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
