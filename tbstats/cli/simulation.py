"""The ``simulate`` command."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import click
import polars as pl

from tbstats.cli.base import EPILOG, main
from tbstats.cli.options import (
    Output,
    ReportOutput,
    emit,
    report_options,
    write_page,
)
from tbstats.errors import TbstatsError
from tbstats.io import tabular

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
              help="Also write the simulated archive (columnar model; .parquet/.arrow/.csv or a directory), "
                   "with each player's true strength as the players' 'strength' column.")
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
        tabular.write_model(ev.with_strength(sim), archive)
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
             Output(output.format, output.path, output.csv_escape))
