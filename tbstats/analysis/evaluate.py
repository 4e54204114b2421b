"""``tbstats evaluate`` over an archive: order quality against a strength proxy, and whom tie-breaks favour.

The archive comes in batches of whole tournaments (streamed by :func:`tbstats.run.commands.evaluate`); each
batch gives a :class:`tbstats.analysis.quality.Partial` (per-group values) and
:class:`tbstats.analysis.fairness.Counts` (integer counts), which combine exactly, so the tables do not depend
on the batch size or the number of workers. With the ``archive`` proxy the archive is read twice: once to fit
the strengths (:func:`fit_archive`, :mod:`tbstats.analysis.strength`), once to evaluate.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Final

import polars as pl

from tbstats.analysis import fairness, quality, strength
from tbstats.engine.configs import Config
from tbstats.errors import TbstatsError
from tbstats.io.progress import progress as progress_bar
from tbstats.model.batch import Batch, append_merged, renumber
from tbstats.model.teams.batch import team_event_ids

#: What :func:`evaluate_whole` gives for one batch: the team events left out, and each run's partials (None where
#: the table it feeds was not asked for).
Evaluated = tuple[int, list[tuple[quality.Partial | None, fairness.Counts | None]]]

#: The tables of an evaluation: ``measures`` from the quality partials, ``favour`` and ``difference`` from the
#: counts; a run computes the partials of the tables asked for only.
TABLES: Final = ("measures", "favour", "difference")


@dataclass(frozen=True)
class ArchiveEvaluation:
    """The tables of ``tbstats evaluate``."""

    measures: pl.DataFrame      # one row per configuration (the measures of tbstats.analysis.quality)
    favour: pl.DataFrame        # per configuration, breakdown and value: ties won against chance
    differences: pl.DataFrame   # per pair of configurations, breakdown and value: paired difference
    # (a table not asked for, :data:`TABLES`, is an empty frame)
    proxy: str
    fit: strength.Fit | None    # the archive fit, when the proxy is 'archive'
    team_events: int = 0        # left out: their standings are team standings (their games still feed the fit)


def with_baseline(configs: Sequence[Config], baseline: bool) -> list[Config]:
    """The configurations plus the drawing-of-lots baseline (as ``tbstats simulate`` adds it)."""
    if not configs:
        raise TbstatsError("no configuration to evaluate (give -c NAME=EDITION:SPECS)")
    listed = [c.name for c in configs if c.specs is None]
    if listed:
        raise TbstatsError(f"{', '.join(listed)}: evaluate needs an explicit tie-break list (from-file lists differ "
                           "by tournament and may be missing; compare and audit read them)")
    names = [c.name for c in configs]
    if len(set(names)) != len(names) or (baseline and "random" in names):
        raise TbstatsError(f"configuration names must differ (and 'random' is the baseline's): {', '.join(names)}")
    return [*configs, quality.random_baseline(configs[0].rules)] if baseline else list(configs)


def default_pairs(configs: Sequence[Config]) -> list[tuple[str, str]]:
    """The first configuration against each other one (the baseline included)."""
    return [(configs[0].name, c.name) for c in configs[1:]]


def evaluate_batch(batch: Batch, configs: Sequence[Config], *, proxy: str = "rating",
                   fitted: pl.DataFrame | None = None, lots_seed: int = 0, pairs: Sequence[tuple[str, str]] = (),
                   tables: Sequence[str] = TABLES) -> tuple[quality.Partial | None, fairness.Counts | None]:
    """The partial measures and the favour counts of one batch of whole tournaments (each only where ``tables``
    asks for a table it feeds: the measures are about half of the work, the counts a fifth)."""
    from tbstats.engine.compute import make_context

    ctx = make_context(batch)
    partial = counts = None
    if "measures" in tables:   # (it draws the lots of ``ctx``, which the baseline's counts rank by too)
        partial = quality.measure(batch, strength.proxy(batch, proxy, fitted), configs, lots_seed=lots_seed, ctx=ctx)
    if "favour" in tables or "difference" in tables:
        if partial is None:
            ctx.set_lots(lots_seed)   # (the baseline's draw, as measure seeds it)
        counts = fairness.count(batch, ctx, configs, pairs)
    return partial, counts


def evaluate_whole(whole: Batch, first_id: int | None, configs: Sequence[Config], proxy: str,
                    fitted: pl.DataFrame | None, lots_seed: int, pairs: Sequence[tuple[str, str]], workers: int,
                    tables: Sequence[str] = TABLES) -> Evaluated:
    """The team events left out of one batch and the partials of the rest (numbered from ``first_id`` when
    given: ids unique across the whole input, as the fit's table names its players). Module level: on Dask it
    runs on the worker that read the batch, and only the partials travel back."""
    from tbstats.engine.compute import chunks

    if first_id is not None:
        whole = renumber(whole, first_id)
    teams = set(team_event_ids(whole))
    batch = whole.select([t for t in whole.tournaments["tournament"].to_list() if t not in teams]) if teams else whole
    if not batch.n_tournaments:
        return len(teams), []

    def one(part: Batch) -> tuple[quality.Partial | None, fairness.Counts | None]:
        return evaluate_batch(part, configs, proxy=proxy, fitted=fitted, lots_seed=lots_seed, pairs=pairs,
                              tables=tables)

    parts = chunks(batch, workers)   # runs of whole tournaments: one per worker, engine memory bounded by a run
    if workers < 2 or len(parts) < 2:
        return len(teams), [one(part) for part in parts]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return len(teams), list(pool.map(one, parts))


def fit_archive(pieces: Iterable[tuple[pl.DataFrame, pl.DataFrame]], *, progress: bool = False,
                workers: int = 1) -> strength.Fit:
    """The archive fit from what it needs of every batch (:func:`tbstats.analysis.strength.games_of`: four
    numbers per game side between two players with a FIDE id, three per player, tournament ids unique across
    the batches).

    The fit is one joint Bradley-Terry fit: every strength depends on every game through the opponents'
    strengths, and the leave-one-event-out refit needs each player's games event by event, so these rows
    are kept for the whole archive (about 32 bytes per game side and 20 per player; merged as they come,
    never a list of per-batch frames). Streamed over an archive (:func:`tbstats.run.commands.evaluate`) only
    these rows travel from where a batch is read, never the batch. With ``progress`` a bar counts the fit's
    steps once the rows are read (on a terminal: the fit takes seconds on a large archive, 19 in one thread on
    the 100k mix of benchmarks/README.md). The fit's passes over the games run on ``workers`` threads.
    """
    games: list[pl.DataFrame] = []
    participants: list[pl.DataFrame] = []
    for g, p in pieces:
        append_merged(games, g)
        append_merged(participants, p)
    if not participants:
        raise TbstatsError("no tournaments to evaluate")
    sides = strength.Sides.of(pl.concat(games))   # (the table goes once numbered: its id columns are half of it)
    games.clear()
    with progress_bar(None, "steps", progress, label="fit (Newton steps, refits)") as bar:
        return strength.fit(sides, pl.concat(participants), step=lambda: bar.advance(1), workers=workers)



def evaluate_archive(batches: Iterable[Batch], configs: Sequence[Config], *, proxy: str = "rating",
                     fit_batches: Iterable[Batch] | None = None, lots_seed: int = 0,
                     pairs: Sequence[tuple[str, str]] | None = None, workers: int = 1,
                     tables: Sequence[str] = TABLES) -> ArchiveEvaluation:
    """Evaluate every configuration over ``batches`` of whole tournaments (ids unique across them).

    The ``archive`` proxy first fits the strengths on ``fit_batches`` (the same archive, read once more).
    ``workers`` > 1 splits each batch into runs of whole tournaments computed on threads. ``tables``: the ones
    to make (:data:`TABLES`; the others are empty).
    """
    return evaluate_each(lambda args: (evaluate_whole(whole, None, *args) for whole in batches), configs,
                         proxy=proxy, fit_rows=None if fit_batches is None else map(strength.games_of, fit_batches),
                         lots_seed=lots_seed, pairs=pairs, workers=workers, tables=tables)


#: What :func:`evaluate_whole` takes after its batch and first id (configs, proxy, fitted, seed, pairs, workers,
#: tables).
EvaluateArgs = tuple[Sequence[Config], str, pl.DataFrame | None, int, Sequence[tuple[str, str]], int, tuple[str, ...]]


def evaluate_each(each: Callable[[EvaluateArgs], Iterable[Evaluated]], configs: Sequence[Config], *,
                  proxy: str, fit_rows: Iterable[tuple[pl.DataFrame, pl.DataFrame]] | None, lots_seed: int,
                  pairs: Sequence[tuple[str, str]] | None, workers: int,
                  tables: Sequence[str] = TABLES, progress: bool = False) -> ArchiveEvaluation:
    """The evaluation, whatever runs the batches: ``each(args)`` gives :func:`evaluate_whole` of every batch
    in order (here, or where each batch was read: :func:`tbstats.run.commands.evaluate`); ``fit_rows`` are
    :func:`tbstats.analysis.strength.games_of` of every batch, read only for the ``archive`` proxy (``progress``:
    a bar over the fit's steps, :func:`fit_archive`)."""
    unknown = [t for t in tables if t not in TABLES]
    if unknown or not tables:
        raise TbstatsError(f"tables must be some of {', '.join(TABLES)}, not {', '.join(unknown) or 'none'}")
    chosen = list(pairs) if pairs is not None else default_pairs(configs)
    fairness.check_pairs(chosen, configs)
    fit = None
    if proxy == "archive":
        if fit_rows is None:
            raise TbstatsError("the archive proxy needs the archive to fit")
        fit = fit_archive(fit_rows, progress=progress, workers=workers)
    args: EvaluateArgs = (configs, proxy, fit.table if fit is not None else None, lots_seed, chosen, workers,
                          tuple(tables))
    return finish(each(args), configs, chosen, proxy, fit)


def finish(evaluated: Iterable[Evaluated], configs: Sequence[Config], pairs: Sequence[tuple[str, str]], proxy: str,
           fit: strength.Fit | None) -> ArchiveEvaluation:
    """The tables from every batch's :func:`evaluate_whole` result, in order (they combine exactly)."""
    partials: list[quality.Partial] = []
    each: list[fairness.Counts] = []
    team_events = runs = 0
    for left_out, results in evaluated:
        team_events += left_out
        for partial, c in results:
            runs += 1
            if partial is not None:
                partials.append(partial)
            if c is not None:
                each.append(c)
    if not runs:
        raise TbstatsError("no tournaments to evaluate" + (f" ({team_events} team events are left out)"
                                                            if team_events else ""))
    counts = fairness.Counts.total(each) if each else None
    return ArchiveEvaluation(quality.table(quality.combine(partials)) if partials else pl.DataFrame(),
                             fairness.favour_table(counts, configs) if counts is not None else pl.DataFrame(),
                             fairness.difference_table(counts, pairs) if counts is not None else pl.DataFrame(),
                             proxy, fit, team_events)
