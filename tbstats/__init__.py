"""tbstats: chess tie-breaks computed right, in bulk, and compared (FIDE C.07 2026/2024/legacy, US Chess 34E).

The Python API is these plain functions; each takes its tournaments as a path (a file, a directory, a glob,
an archive: ``str`` or :class:`~pathlib.Path`), a list of paths, a loaded batch
(:class:`~tbstats.model.batch.Batch`, :class:`~tbstats.io.sources.LoadResult`) or a simulation, and returns
polars DataFrames or a small result object whose tables are DataFrames:

- :func:`load` reads tournaments; :func:`compute` gives standings with tie-break columns;
- :func:`explain` shows one value round by round; :func:`compare` how often configurations change winners;
- :func:`audit` recomputes published standings; :func:`simulate` makes events with known strengths;
- :func:`evaluate` measures which order ranks tied players closer to their strength.

Warnings the command line prints (Buchholz in round robins, rating tie-breaks undefined for unrated players,
a round past the event) are raised as :class:`tbstats.run.checks.TbstatsWarning`. ``import tbstats`` is
light: numpy, polars and the engine are imported when a function first runs.

    >>> import tbstats
    >>> table = tbstats.compute("data/examples/e2_cut_exception.trf", "BH,BH/C1,SB")
    >>> table.select("start_no", "points", "rank", "BH/C1").rows()[:2]
    [(1, 2.0, 3, 2.5), (2, 2.5, 1, 4.0)]
    >>> result = tbstats.compare("data/examples", {"new": "fide-2026:SB,WIN", "old": "fide-2024:SB,WIN"})
    >>> result.pairs.select("a", "b", "tournaments", "winner_changed").rows()
    [('new', 'old', 5, 0)]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tbstats.run.memory import keep_freed_memory

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import TypeAlias

    import polars as pl

    from tbstats.analysis.audit import Audit
    from tbstats.analysis.compare import Comparison
    from tbstats.analysis.evaluate import ArchiveEvaluation
    from tbstats.analysis.explain import Explanation
    from tbstats.engine.configs import Config
    from tbstats.io.sources import LoadResult, OnError, Paths
    from tbstats.model.batch import Batch
    from tbstats.model.spec import TieBreakSpec
    from tbstats.simulation import Simulation, SimulationConfig

    #: What every function takes as its tournaments.
    Tournaments: TypeAlias = Paths | Batch | LoadResult | Simulation
    #: Configurations: ``"NAME=EDITION:SPECS"`` strings or parsed configs, or a mapping name -> ``"[EDITION:]SPECS"``.
    Configs: TypeAlias = Sequence[str | Config] | Mapping[str, str]

__version__ = "0.1.0"


def load(inputs: Paths, *, on_error: OnError | None = None, progress: bool = False) -> LoadResult:
    """Read tournaments into one batch: ``result.batch`` (three DataFrames) and ``result.ledger`` (problems).

    ``on_error``: ``"raise"`` stops at the first problem with a :class:`~tbstats.errors.FormatError`,
    ``"collect"`` skips bad files and lists them in the ledger; by default, raise for one file and collect
    for anything that may hold many (a directory, a glob, an archive, several paths).

        >>> result = load("data/examples")
        >>> result.batch.n_tournaments, result.rejected
        (5, 0)
    """
    import os

    from tbstats.io import kinds, sources

    paths = sources.as_paths(inputs)
    if on_error is None:
        single = len(paths) == 1 and (os.path.isfile(paths[0]) or not os.path.exists(paths[0])) \
            and not kinds.is_pattern(paths[0]) and not kinds.is_archive(paths[0])
        on_error = "raise" if single else "collect"
    return sources.load(paths, on_error=on_error, progress=progress)


def _batch(tournaments: Tournaments) -> Batch:
    from tbstats.io.sources import LoadResult
    from tbstats.model.batch import Batch
    from tbstats.simulation import Simulation

    if isinstance(tournaments, Batch):
        return tournaments
    if isinstance(tournaments, LoadResult | Simulation):
        return tournaments.batch
    return load(tournaments).batch


def compute(tournaments: Tournaments, tiebreaks: str | Sequence[str | TieBreakSpec], *, rules: str = "fide-2026",
            unrated_rating: int | None = None, force_type: str | None = None, after_round: int | None = None,
            lots: int | None = None, workers: int = 1) -> pl.DataFrame:
    """Standings: one row per player with points, rank and one column per tie-break.

    ``tiebreaks`` is a list such as ``"BH/C1,BH,SB"`` or ``"from-file"`` (each tournament's own 202/212 list);
    ``rules`` the edition (``fide-2026``, ``fide-2024``, ``fide-legacy``, ``uscf``); ``lots`` a seed that
    draws lots for players still tied; ``workers`` threads for a large batch.

        >>> compute("data/examples/e2_cut_exception.trf", "BH/C1").select("start_no", "BH/C1").row(0)
        (1, 2.5)
    """
    from tbstats.engine import compute as engine
    from tbstats.engine.declared import FROM_FILE
    from tbstats.run import checks

    batch = _batch(tournaments)
    from_file = isinstance(tiebreaks, str) and tiebreaks.strip().lower() == FROM_FILE
    listed = [] if from_file else engine.as_specs(tiebreaks)
    checks.warn(checks.all_checks(checks.events(batch), listed, force_type=force_type,
                                  unrated_rating=unrated_rating, after_round=after_round, rules=rules))
    return engine.compute(batch, tiebreaks, rules=rules, force_type=force_type, after_round=after_round,
                          unrated_rating=unrated_rating, lots=lots, workers=workers)


def _configs(configs: Configs, rules: str) -> list[Config]:
    from collections.abc import Mapping

    from tbstats.engine.configs import Config, parse_config

    if isinstance(configs, Mapping):
        items = [f"{name}={text}" if ":" in text.split(",")[0] else f"{name}={rules}:{text}"
                 for name, text in configs.items()]
        return [parse_config(t) for t in items]
    return [c if isinstance(c, Config) else parse_config(c) for c in configs]


def compare(tournaments: Tournaments, configs: Configs, *, top: int = 10, rules: str = "fide-2026",
            unrated_rating: int | None = None, force_type: str | None = None,
            after_round: int | None = None) -> Comparison:
    """How often configurations change winners, podiums and rankings.

    Returns a :class:`~tbstats.analysis.compare.Comparison` whose tables (``pairs``, ``configs``,
    ``tournaments``, ``drilldown``, ``depth``) are DataFrames.

    ``rules`` is the edition of a configuration given without one (``{"a": "BH,SB"}``).

        >>> compare("data/examples", ["a=fide-2026:SB,DE", "b=fide-2026:DE,SB"]).pairs["tournaments"].to_list()
        [5]
    """
    from tbstats.analysis import compare as comparison
    from tbstats.engine import compute as engine
    from tbstats.run import checks

    batch = _batch(tournaments)
    parsed = _configs(configs, rules)
    checks.warn(checks.all_checks(checks.events(batch), [s for c in parsed for s in c.specs or ()],
                                  force_type=force_type, unrated_rating=unrated_rating, after_round=after_round))
    ctx = engine.make_context(batch, force_type=force_type, after_round=after_round, unrated_rating=unrated_rating)
    return comparison.compare(batch, parsed, top=top, ctx=ctx)


def audit(tournaments: Tournaments, *, rules: str = "auto", tiebreaks: str = "from-file",
          unrated_rating: int | None = None, force_type: str | None = None) -> Audit:
    """Recompute the standings and compare them with the points and ranks the files declare.

    Returns an :class:`~tbstats.analysis.audit.Audit`: one row per tournament (its status) and one per
    differing player.

        >>> audit("data/examples", tiebreaks="SB,DE").tournaments.columns
        ['source', 'tournament', 'players', 'points_differ', 'rank_conflicts', 'status', 'order', 'order_rules',
         'order_tiebreaks', 'order_differ', 'order_kendall', 'matching']
    """
    from tbstats.analysis.audit import Audit
    from tbstats.analysis.audit import audit as audit_batch
    from tbstats.engine import compute as engine

    batch = _batch(tournaments)
    ctx = engine.make_context(batch, force_type=force_type, unrated_rating=unrated_rating)
    return Audit(*audit_batch(batch, ctx, rules=rules, tiebreaks=tiebreaks))


def explain(tournaments: Tournaments, *, player: int, tiebreak: str, tournament: int | None = None,
            rules: str = "fide-2026", unrated_rating: int | None = None, force_type: str | None = None,
            after_round: int | None = None) -> Explanation:
    """One player's tie-break round by round: ``.rounds`` (a DataFrame), ``.value`` and ``.summary``.

        >>> ex = explain("data/examples/e2_cut_exception.trf", player=1, tiebreak="BH/C1")
        >>> ex.value, ex.rounds["contribution"].to_list()
        (2.5, [0.0, 0.0, 2.5])
    """
    from tbstats.analysis.explain import explain as explain_player

    return explain_player(_batch(tournaments), player=player, tiebreak=tiebreak, rules=rules,
                          tournament=tournament, force_type=force_type, unrated_rating=unrated_rating,
                          after_round=after_round)


def simulate(config: SimulationConfig | None = None, *, workers: int = 1, **settings: object) -> Simulation:
    """Simulated tournaments with known strengths: ``.batch`` (the model) and ``.truth`` (strength per player).

    Give a :class:`~tbstats.simulation.SimulationConfig` or its fields as keywords (``tournaments``,
    ``players``, ``rounds``, ``seed``, ...).

        >>> sim = simulate(tournaments=2, players=8, rounds=5, seed=1)
        >>> sim.batch.n_tournaments, sim.truth.height
        (2, 16)
    """
    from tbstats.errors import TbstatsError
    from tbstats.run import checks
    from tbstats.simulation import SimulationConfig
    from tbstats.simulation import simulate as run

    if config is not None and settings:
        raise TbstatsError("give a SimulationConfig or keyword settings, not both")
    try:
        chosen = config or SimulationConfig(**settings)  # type: ignore[arg-type]
    except TypeError as exc:
        raise TbstatsError(f"unknown simulation setting: {exc}") from None
    checks.warn(chosen.notes())
    return run(chosen, workers=workers)


def evaluate(tournaments: Tournaments, configs: Configs, *, proxy: str | None = None, rules: str = "fide-2026",
             baseline: bool = True, pairs: Sequence[tuple[str, str]] | None = None, lots_seed: int | None = None,
             workers: int = 1) -> ArchiveEvaluation:
    """Which configuration ranks tied players closer to their strength, and whom it favours.

    Returns an :class:`~tbstats.analysis.evaluate.ArchiveEvaluation` (``measures``, ``favour``,
    ``differences``).

    ``proxy`` is the strength measured against: ``rating`` (the default for real events), ``archive`` (a
    strength fitted on all the games given) or a numeric players column; for a :func:`simulate` result it is
    each player's true ``strength`` and the drawing of lots uses the simulation's seed. ``baseline`` adds
    ``random`` (drawing lots for every tie); ``pairs`` the configurations whose favour rates are differenced
    (by default the first against each other).

        >>> result = evaluate(simulate(tournaments=5, players=10, rounds=5, seed=2), ["bh=fide-2026:BH,SB"])
        >>> result.measures["config"].to_list()
        ['bh', 'random']
        >>> evaluate("data/examples", {"new": "fide-2026:BH/C1,BH,SB"}).proxy
        'rating'
    """
    from tbstats.analysis import evaluate as evaluation
    from tbstats.analysis.quality import with_strength
    from tbstats.simulation import Simulation

    if isinstance(tournaments, Simulation):
        batch = with_strength(tournaments)
        proxy = proxy or "strength"
        lots_seed = tournaments.config.seed if lots_seed is None else lots_seed
    else:
        batch = _batch(tournaments)
        proxy = proxy or "rating"
    chosen = evaluation.with_baseline(_configs(configs, rules), baseline)
    return evaluation.evaluate_archive([batch], chosen, proxy=proxy, lots_seed=lots_seed or 0,
                                       fit_batches=[batch] if proxy == "archive" else None, pairs=pairs,
                                       workers=workers)


__all__ = ["__version__", "audit", "compare", "compute", "evaluate", "explain", "keep_freed_memory", "load",
           "simulate"]
