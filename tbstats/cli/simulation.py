"""The ``simulate`` command."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import fields, replace
from pathlib import Path
from typing import Any, Final, TypeVar, cast

import click

from tbstats.cli.base import EPILOG, main
from tbstats.cli.options import (
    Configs,
    Engine,
    config_options,
    engine_options,
)
from tbstats.cli.outputs import (
    Output,
    ReportOutput,
    about_run,
    emit,
    prepare_target,
    quiet_option,
    report_options,
    write_page,
)
from tbstats.errors import TbstatsError
from tbstats.io import tabular

F = TypeVar("F", bound=Callable[..., Any])

# ------------------------------------------------------------------------------------------- simulation

DEFAULT_ORDERS = {
    "swiss": ["2026-c1-bh-sb-de-win=fide-2026:BH/C1,BH,SB,DE,WIN", "2026-bh-c1-sb=fide-2026:BH,BH/C1,SB",
              "2024-c1-bh-sb-de-win=fide-2024:BH/C1,BH,SB,DE,WIN", "2024-bh-c1-sb=fide-2024:BH,BH/C1,SB"],
    "round_robin": ["2026-sb-de-ks=fide-2026:SB,DE,KS", "2026-de-sb-ks-win=fide-2026:DE,SB,KS,WIN",
                    "2024-sb-de-ks=fide-2024:SB,DE,KS"],
}
#: The rates of a simulated event: option name (as the SimulationConfig field), old spelling, default, help.
RATES: Final = (
    ("half_bye_rate", "--byes", 0.02, "Requested half-point byes, per player and round."),
    ("zero_bye_rate", "--zero-byes", 0.005, "Requested zero-point byes, per player and round."),
    ("forfeit_rate", "--forfeits", 0.01, "Forfeits, per game."),
    ("double_forfeit_rate", "--double-forfeits", 0.002, "Double forfeits, per game."),
    ("withdrawal_rate", "--withdrawals", 0.03, "Withdrawals, per player."),
    ("unrated_rate", "--unrated", 0.05, "Share of unrated players."),
    ("draw_rate", None, 0.30, "Base draw rate (rises with strength, falls with the rating gap)."),
)
#: ``--sweep`` names (the option names, with _ or -) and the evaluate parameter each one is.
SWEEP_NAMES: Final = {"rounds": "rounds", "players": "players", "half_bye_rate": "bye_rate", "bye_rate": "bye_rate",
                      "draw_rate": "draw_rate", "forfeit_rate": "forfeit_rate", "withdrawal_rate": "withdrawal_rate"}
_FIELD: Final = {"draw_rate": "draw_base"}


def _rate_options(f: F) -> F:
    """One ``--NAME-rate`` option per rate (and its old spelling, hidden); pass ``rates`` by field name."""

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        rates = {}
        for name, _old, _, _ in RATES:
            value, alias = kwargs.pop(name), kwargs.pop(f"{name}_alias", None)
            rates[_FIELD.get(name, name)] = alias if alias is not None else value
        return f(*args, rates=rates, **kwargs)

    for name, old, default, text in reversed(RATES):
        if old:
            wrapper = click.option(old, f"{name}_alias", type=click.FloatRange(0, 1), default=None,
                                   hidden=True)(wrapper)
        wrapper = click.option(f"--{name.replace('_', '-')}", name, type=click.FloatRange(0, 1), default=default,
                               show_default=True, help=text)(wrapper)
    return cast(F, wrapper)


def _sweep(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[str, list[float]] | None:
    """``PARAM=V1,V2,...``: a known parameter and numbers, checked before anything is simulated."""
    if value is None:
        return None
    name, eq, listed = value.partition("=")
    key = name.strip().lower().replace("-", "_")
    if not eq or key not in SWEEP_NAMES:
        known = ", ".join(k for k in SWEEP_NAMES if k != "bye_rate")
        raise click.BadParameter(f"{value!r}: expected PARAM=V1,V2,... with PARAM one of {known}")
    try:
        values = [float(v) for v in listed.split(",") if v.strip()]
    except ValueError:
        raise click.BadParameter(f"{value!r}: the values must be numbers (PARAM=V1,V2,...)") from None
    if not values:
        raise click.BadParameter(f"{value!r}: no values to sweep")
    return key, values


@main.command(name="simulate", epilog=EPILOG)
@click.option("-n", "--tournaments", type=click.IntRange(min=1), default=1000, show_default=True)
@click.option("--players", type=click.IntRange(min=2), default=60, show_default=True, help="Players per event.")
@click.option("-p", "players_alias", type=click.IntRange(min=2), default=None, hidden=True)
@click.option("-r", "--rounds", type=click.IntRange(min=1), default=None,
              help="Rounds (default: 9 for Swiss, one cycle for round robins).")
@click.option("--kind", type=click.Choice(["swiss", "round_robin"]), default="swiss", show_default=True)
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--scoring", type=click.Choice(["standard", "3-1-0"]), default="standard", show_default=True)
@_rate_options
@config_options
@engine_options(events=False)
@click.option("--no-baseline", is_flag=True, help="Leave out the random-order baseline (drawing of lots).")
@click.option("--sweep", default=None, metavar="PARAM=V1,V2,...", callback=_sweep,
              help="Also sweep one parameter: rounds, players, half_bye_rate, draw_rate, forfeit_rate or "
                   "withdrawal_rate (e.g. rounds=5,7,9,11).")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Threads for the simulation (the result does not depend on it).")
@click.option("--trf-dir", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="Also write every simulated tournament as a TRF file into DIR.")
@click.option("--archive", type=click.Path(), default=None, metavar="PATH",
              help="Also write the simulated archive (columnar model; .parquet/.arrow/.csv or a directory), "
                   "with each player's true strength as the players' 'strength' column.")
@quiet_option
@report_options
def simulate_cmd(tournaments: int, players: int, players_alias: int | None, rounds: int | None, kind: str, seed: int,
                 scoring: str, rates: dict[str, float], configs: Configs, engine: Engine, no_baseline: bool,
                 sweep: tuple[str, list[float]] | None, workers: int, trf_dir: str | None, archive: str | None,
                 quiet: bool, output: ReportOutput) -> None:
    """Simulate tournaments with known true strengths and measure which tie-break order recovers them.

    Per configuration, over all groups tied on points: strongest_first (the truly strongest is ranked
    first in the group), kendall_tied (Kendall tau-b inside groups), unbroken (ties left), kendall and
    spearman over whole tournaments, first_settles_first (the first tie-break alone settles first place);
    each with a 95% interval. The 'random' row is the baseline: ties broken by lots. The same seed gives
    the same archive and the same figures.
    """
    import polars as pl

    from tbstats.analysis import quality
    from tbstats.cli.runs import report_checks, with_unrated
    from tbstats.engine.configs import parse_config
    from tbstats.io.trf import write_trf
    from tbstats.run import checks
    from tbstats.run.account import Account
    from tbstats.run.memory import release_freed_memory
    from tbstats.simulation import Simulation, SimulationConfig

    parsed = configs.parse(engine.rules) or [parse_config(c) for c in DEFAULT_ORDERS[kind]]
    parsed = with_unrated(parsed, engine.unrated_rating)
    try:
        config = SimulationConfig(tournaments=tournaments, players=players_alias or players, rounds=rounds,
                                  kind=kind, seed=seed, scoring=scoring, **rates)  # type: ignore[arg-type]
    except TbstatsError as exc:
        raise click.UsageError(str(exc)) from None
    for value in sweep[1] if sweep else ():
        field = quality.SWEEPABLE[SWEEP_NAMES[sweep[0]]] if sweep else ""
        try:
            replace(config, **{field: int(value) if field in ("rounds", "players") else value})  # type: ignore[arg-type]
        except TbstatsError as exc:
            raise click.BadParameter(f"{sweep[0] if sweep else ''}={value:g}: {exc}", param_hint="--sweep") from None
    prepare_target(trf_dir, option="--trf-dir", directory=True)
    prepare_target(archive, option="--archive", directory=not Path(archive).suffix if archive else False)
    if not quiet:
        for note in config.notes():
            click.echo(f"Warning: {note}", err=True)
    def write_archive(sim: Simulation) -> None:
        if archive:
            release_freed_memory()   # the simulation's freed arrays, not kept under the writer's memory
            tabular.write_model(quality.with_strength(sim), archive)
            release_freed_memory()   # ... nor the writer's under the evaluation's

    sim, table = quality.run(config, parsed, baseline=not no_baseline, workers=workers, progress=not quiet,
                             simulated=write_archive)
    specs = [s for c in parsed for s in c.specs or ()]
    warned = report_checks(checks.events(sim.batch), specs, engine, quiet=quiet)
    swept = None
    if sweep:
        swept = quality.sweep(config, parsed, SWEEP_NAMES[sweep[0]], sweep[1], baseline=not no_baseline,
                              workers=workers, progress=not quiet)
    if trf_dir:
        directory = Path(trf_dir)
        for source, text in write_trf(sim.batch).items():
            (directory / (source.replace("/", "_") + ".trf")).write_text(text, encoding="utf-8")
    if output.charts or output.format == "html":
        from tbstats import report

        if output.charts:
            report.write_simulation_charts(table, Path(output.charts), fmt=output.chart_format, sweep=swept)
        if output.format == "html":
            settings = {f.name: getattr(config, f.name) for f in fields(config) if f.name != "chunk"}
            what = Account(tournaments=tournaments, simulated=True, checks=(*config.notes(), *warned))
            about = about_run(output, what)
            write_page(report.render_simulation_html(table, title="tbstats simulate", settings=settings, sweep=swept,
                                                     charts=output.chart_format, about=about), output)
    else:
        emit(pl.concat([table, swept], how="diagonal_relaxed") if swept is not None else table,
             Output(output.format, output.path, output.csv_escape))
