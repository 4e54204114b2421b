"""Commands about the data itself: ``ingest`` and ``info``."""

from __future__ import annotations

import click

from tbstats.cli.base import EPILOG, main
from tbstats.cli.options import (
    Batches,
    Inputs,
    batch_options,
    exit_code,
    input_options,
)
from tbstats.cli.outputs import (
    Output,
    emit,
    output_options,
)
from tbstats.io import tabular

# ----------------------------------------------------------------------------------------------- commands

@main.command(epilog=EPILOG)
@input_options
@click.option("-o", "--output", "target", required=True, type=click.Path(), metavar="PATH",
              help="archive.parquet, archive.arrow or archive.csv (one flat table), or a directory "
                   "(one part file per table and batch).")
@click.option("--format", "model_format", type=click.Choice(["parquet", "arrow", "csv"]), default=None,
              help="Format of a directory output (default parquet; a file's extension decides for files).")
@click.option("--append", is_flag=True, help="Add to an existing directory written by ingest.")
@batch_options
@click.pass_context
def ingest(ctx: click.Context, inputs: Inputs, target: str, model_format: tabular.Format | None, append: bool,
           batches: Batches) -> None:
    """Read tournaments (TRF files, directories, globs, zip/tar archives, models) and write the model.

    Batches are written as they are read, so archives larger than memory can be ingested: a directory gets
    one part file per table and batch, sorted by tournament, in row groups of whole tournaments. Each
    Parquet or Arrow part (and a flat Parquet file) gets the proof that it passed the reader's checks
    (checked/part-NNNNN.json, FILE.parquet.checked.json): commands that read it again skip them while it is
    unchanged. The closing line on stderr is 'N files: K loaded, E rejected'.
    """
    from tbstats.cli.runs import streamed
    from tbstats.run import commands

    with streamed(inputs, batches) as run, tabular.ArchiveWriter(target, model_format, append=append) as writer:
        commands.ingest(run, writer)
    ctx.exit(exit_code(run.rejected))


@main.command(epilog=EPILOG)
@input_options
@output_options
@batch_options
@click.option("--by-tournament", is_flag=True, help="One row per tournament instead of one for all.")
@click.pass_context
def info(ctx: click.Context, inputs: Inputs, output: Output, batches: Batches, by_tournament: bool) -> None:
    """Count tournaments, players, rounds, game rows by game type, and warnings.

    Game types: played, forfeit_win, forfeit_loss, double_forfeit, pab (pairing-allocated bye), full_bye,
    half_bye, zero_bye, absent (not paired), pending (no result yet).
    """
    from tbstats.cli.runs import streamed
    from tbstats.run import commands

    with streamed(inputs, batches) as run:
        table = commands.info(run, by_tournament=by_tournament)
    emit(table, output)
    ctx.exit(exit_code(run.rejected))
