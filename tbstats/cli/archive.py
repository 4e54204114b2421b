"""Commands over whole archives: ``compare`` and ``audit``."""

from __future__ import annotations

from pathlib import Path

import click
import polars as pl

from tbstats import runs
from tbstats.cli.base import EPILOG, main
from tbstats.cli.options import (
    Batches,
    Inputs,
    Output,
    ReportOutput,
    _spec_list,
    batch_options,
    emit,
    exit_code,
    input_options,
    output_options,
    report_options,
    streamed,
    write_page,
)
from tbstats.rules import EDITIONS, check_edition

# ---------------------------------------------------------------------------------------------- archives

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
@click.option("--drilldown", "drilldown_limit", type=click.IntRange(min=1), default=1000, show_default=True,
              metavar="N", help="The drill-down keeps the first N tournaments of each pair whose winner changed.")
@report_options
@batch_options
@click.pass_context
def compare_cmd(ctx: click.Context, inputs: Inputs, configs: tuple[str, ...], config_file: str | None, top: int,
                by: tuple[str, ...], table: str, drilldown_limit: int, output: ReportOutput, batches: Batches) -> None:
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
    cmp.check_configs(parsed)
    with streamed(inputs, batches) as run:
        result = runs.compare(run, parsed, top=top, drilldown_limit=drilldown_limit)
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
        emit(out, Output(output.format, output.path, output.csv_escape))
    ctx.exit(exit_code(run.rejected))


@main.command(name="audit", epilog=EPILOG)
@input_options
@output_options
@click.option("--rules", default="auto", show_default=True, metavar="EDITION",
              help="Rule edition to recompute with: " + ", ".join(EDITIONS) + ".")
@click.option("-t", "--tiebreaks", "specs", default="from-file", show_default=True, metavar="from-file|SPECS",
              help="The order to recompute with: each file's own 202/212 list, or SPECS for every tournament.")
@click.option("--players", "per_player", is_flag=True, help="One row per differing player instead of per tournament.")
@batch_options
@click.pass_context
def audit_cmd(ctx: click.Context, inputs: Inputs, output: Output, rules: str, specs: str, per_player: bool,
              batches: Batches) -> None:
    """Recompute standings and compare them with the ranks and points declared in the files.

    Per tournament: players, points_differ, rank_conflicts (groups of our order that the declared ranks
    cross) and a status: agrees; points differ; agrees under EDITION (same order, other rules); agrees under
    ORDER (a conventional order); unexplained; no declared ranks; no tie-break list.
    """
    edition = check_edition(rules)
    if specs != "from-file":
        _spec_list(specs)
    with streamed(inputs, batches) as run:
        per_t, per_p = runs.audit(run, rules=edition, tiebreaks=specs)
    emit(per_p if per_player else per_t, output)
    ctx.exit(exit_code(run.rejected))
