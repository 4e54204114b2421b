"""The functions importable from ``tbstats``: load, compute, compare, audit, explain, simulate, evaluate.

Every function takes its tournaments as a path (``str`` or :class:`~pathlib.Path`: a file, a directory, a
glob, an archive), a list of paths, a :class:`~tbstats.games.Batch` or a :class:`~tbstats.io.sources.LoadResult`,
and returns polars DataFrames (or a small result object whose tables are DataFrames). Warnings that the
command line prints (Buchholz in round robins, rating tie-breaks undefined for unrated players, a round
past the event) are raised as :class:`tbstats.checks.TbstatsWarning`.

>>> import tbstats
>>> table = tbstats.compute("data/examples/e2_cut_exception.trf", "BH,BH/C1,SB")
>>> table.select("start_no", "points", "rank", "BH/C1").rows()[:2]
[(1, 2.0, 3, 2.5), (2, 2.5, 1, 4.0)]
>>> result = tbstats.compare("data/examples", {"new": "fide-2026:SB,WIN", "old": "fide-2024:SB,WIN"})
>>> result.pairs.select("a", "b", "tournaments", "winner_changed").rows()
[('new', 'old', 5, 0)]
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from tbstats import api, checks
from tbstats.declared import FROM_FILE
from tbstats.errors import TbstatsError
from tbstats.games import Batch
from tbstats.io import expand, sources
from tbstats.io.sources import LoadResult, OnError, Paths
from tbstats.spec import TieBreakSpec

Tournaments = Paths | Batch | LoadResult
#: Configurations: ``"NAME=EDITION:SPECS"`` strings or parsed configs, or a mapping name -> ``"[EDITION:]SPECS"``.
Configs = Sequence["str | Config"] | Mapping[str, str]

if TYPE_CHECKING:
    from tbstats.compare import Comparison, Config
    from tbstats.explain import Explanation
    from tbstats.simulate import Simulation, SimulationConfig


def load(inputs: Paths, *, on_error: OnError | None = None, progress: bool = False) -> LoadResult:
    """Read tournaments into one batch: ``result.batch`` (three DataFrames) and ``result.ledger`` (problems).

    ``on_error``: ``"raise"`` stops at the first problem with a :class:`~tbstats.errors.FormatError`,
    ``"collect"`` skips bad files and lists them in the ledger; by default, raise for one file and collect
    for anything that may hold many (a directory, a glob, an archive, several paths).

    >>> result = load("data/examples")
    >>> result.batch.n_tournaments, result.rejected
    (5, 0)
    """
    paths = sources.as_paths(inputs)
    if on_error is None:
        single = len(paths) == 1 and (os.path.isfile(paths[0]) or not os.path.exists(paths[0])) \
            and not expand.is_pattern(paths[0]) and not expand.is_archive(paths[0])
        on_error = "raise" if single else "collect"
    return sources.load(paths, on_error=on_error, progress=progress)


def _batch(tournaments: Tournaments) -> Batch:
    if isinstance(tournaments, Batch):
        return tournaments
    if isinstance(tournaments, LoadResult):
        return tournaments.batch
    return load(tournaments).batch


def compute(tournaments: Tournaments, tiebreaks: str | Sequence[str | TieBreakSpec], *, rules: str = "fide-2026",
            unrated_rating: int | None = None, force_type: str | None = None, after_round: int | None = None,
            lots: int | None = None, workers: int = 1) -> pl.DataFrame:
    """Standings: one row per player with points, rank and one column per tie-break (see :func:`tbstats.api.compute`).

    ``tiebreaks`` is a list such as ``"BH/C1,BH,SB"`` or ``"from-file"`` (each tournament's own 202/212 list).
    """
    batch = _batch(tournaments)
    from_file = isinstance(tiebreaks, str) and tiebreaks.strip().lower() == FROM_FILE
    listed = [] if from_file else api.as_specs(tiebreaks)
    checks.warn(checks.all_checks(checks.events(batch), listed, force_type=force_type,
                                  unrated_rating=unrated_rating, after_round=after_round))
    return api.compute(batch, tiebreaks, rules=rules, force_type=force_type, after_round=after_round,
                       unrated_rating=unrated_rating, lots=lots, workers=workers)


def _configs(configs: Configs, rules: str) -> list[Config]:
    from tbstats.compare import Config, parse_config

    if isinstance(configs, Mapping):
        items = [f"{name}={text}" if ":" in text.split(",")[0] else f"{name}={rules}:{text}"
                 for name, text in configs.items()]
        return [parse_config(t) for t in items]
    return [c if isinstance(c, Config) else parse_config(c) for c in configs]


def compare(tournaments: Tournaments, configs: Configs, *, top: int = 10, rules: str = "fide-2026",
            unrated_rating: int | None = None, force_type: str | None = None,
            after_round: int | None = None) -> Comparison:
    """How often configurations change winners, podiums and rankings: a :class:`~tbstats.compare.Comparison`
    whose tables (``pairs``, ``configs``, ``tournaments``, ``drilldown``, ``depth``) are DataFrames.

    ``rules`` is the edition of a configuration given without one (``{"a": "BH,SB"}``).
    """
    from tbstats import compare as cmp

    batch = _batch(tournaments)
    parsed = _configs(configs, rules)
    checks.warn(checks.all_checks(checks.events(batch), [s for c in parsed for s in c.specs or ()],
                                  force_type=force_type, unrated_rating=unrated_rating, after_round=after_round))
    ctx = api.make_context(batch, force_type=force_type, after_round=after_round, unrated_rating=unrated_rating)
    return cmp.compare(batch, parsed, top=top, ctx=ctx)


@dataclass(frozen=True)
class Audit:
    """The audit tables: one row per tournament (with its status) and one per differing player."""

    tournaments: pl.DataFrame
    players: pl.DataFrame


def audit(tournaments: Tournaments, *, rules: str = "auto", tiebreaks: str = "from-file",
          unrated_rating: int | None = None, force_type: str | None = None) -> Audit:
    """Recompute the standings and compare them with the points and ranks the files declare.

    >>> audit("data/examples", tiebreaks="SB,DE").tournaments.columns
    ['source', 'tournament', 'players', 'points_differ', 'rank_conflicts', 'status']
    """
    from tbstats import audit as audit_mod

    batch = _batch(tournaments)
    ctx = api.make_context(batch, force_type=force_type, unrated_rating=unrated_rating)
    per_t, per_p = audit_mod.audit(batch, ctx, rules=rules, tiebreaks=tiebreaks)
    return Audit(per_t, per_p)


def explain(tournaments: Tournaments, *, player: int, tiebreak: str, tournament: int | None = None,
            rules: str = "fide-2026", unrated_rating: int | None = None, force_type: str | None = None,
            after_round: int | None = None) -> Explanation:
    """One player's tie-break round by round: ``.rounds`` (a DataFrame), ``.value`` and ``.summary``.

    >>> ex = explain("data/examples/e2_cut_exception.trf", player=1, tiebreak="BH/C1")
    >>> ex.value, ex.rounds["contribution"].to_list()
    (2.5, [0.0, 0.0, 2.5])
    """
    from tbstats import explain as explain_mod

    return explain_mod.explain(_batch(tournaments), player=player, tiebreak=tiebreak, rules=rules,
                               tournament=tournament, force_type=force_type, unrated_rating=unrated_rating,
                               after_round=after_round)


def simulate(config: SimulationConfig | None = None, *, workers: int = 1, **settings: object) -> Simulation:
    """Simulated tournaments with known strengths: ``.batch`` (the model) and ``.truth`` (strength per player).

    Give a :class:`~tbstats.simulate.SimulationConfig` or its fields as keywords.

    >>> sim = simulate(tournaments=2, players=8, rounds=5, seed=1)
    >>> sim.batch.n_tournaments, sim.truth.height
    (2, 16)
    """
    from tbstats.simulate import SimulationConfig
    from tbstats.simulate.driver import simulate as run

    if config is not None and settings:
        raise TbstatsError("give a SimulationConfig or keyword settings, not both")
    try:
        chosen = config or SimulationConfig(**settings)  # type: ignore[arg-type]
    except TypeError as exc:
        raise TbstatsError(f"unknown simulation setting: {exc}") from None
    return run(chosen, workers=workers)


def evaluate(sim: Simulation, configs: Configs, *, rules: str = "fide-2026", baseline: bool = True) -> pl.DataFrame:
    """How well each configuration recovers true strength on a simulation (one row per configuration).

    >>> table = evaluate(simulate(tournaments=5, players=10, rounds=5, seed=2), ["bh=fide-2026:BH,SB"])
    >>> table["config"].to_list()
    ['bh', 'random']
    """
    from tbstats import evaluate as ev

    parsed = _configs(configs, rules)
    if baseline:
        parsed.append(ev.random_baseline(parsed[0].rules if parsed else rules))
    return ev.evaluate(sim, parsed)


__all__ = ["Audit", "audit", "compare", "compute", "evaluate", "explain", "load", "simulate"]
