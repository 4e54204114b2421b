"""``tbstats evaluate`` over an archive: order quality against a strength proxy, and whom tie-breaks favour.

The archive is read in batches of whole tournaments (a :class:`tbstats.pipeline.Run`); each batch
gives a :class:`tbstats.evaluate.Partial` (per-group values) and :class:`tbstats.fairness.Counts` (integer
counts), which combine exactly, so the tables do not depend on the batch size or the number of workers.
With the ``archive`` proxy the archive is read twice: once to fit the strengths
(:mod:`tbstats.strength`; only :func:`fit_input`'s rows of each batch travel), once to evaluate.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import polars as pl

from tbstats import evaluate as ev
from tbstats import fairness, strength
from tbstats.compare import Config
from tbstats.errors import TbstatsError
from tbstats.games import Batch
from tbstats.io import tabular
from tbstats.pipeline import Run, append_merged, nothing, shift_ids
from tbstats.teams.model import team_event_ids


@dataclass(frozen=True)
class ArchiveEvaluation:
    """The tables of ``tbstats evaluate``."""

    measures: pl.DataFrame      # one row per configuration (the measures of tbstats.evaluate)
    favour: pl.DataFrame        # per configuration, breakdown and value: ties won against chance
    differences: pl.DataFrame   # per pair of configurations, breakdown and value: paired difference
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
    return [*configs, ev.random_baseline(configs[0].rules)] if baseline else list(configs)


def default_pairs(configs: Sequence[Config]) -> list[tuple[str, str]]:
    """The first configuration against each other one (the baseline included)."""
    return [(configs[0].name, c.name) for c in configs[1:]]


def evaluate_batch(batch: Batch, configs: Sequence[Config], *, proxy: str = "rating",
                   fitted: pl.DataFrame | None = None, lots_seed: int = 0,
                   pairs: Sequence[tuple[str, str]] = ()) -> tuple[ev.Partial, fairness.Counts]:
    """The partial measures and the favour counts of one batch of whole tournaments."""
    from tbstats.api import make_context

    ctx = make_context(batch)
    values = strength.proxy(batch, proxy, fitted)
    return (ev.measure(batch, values, configs, lots_seed=lots_seed, ctx=ctx),
            fairness.count(batch, ctx, configs, pairs))


def _evaluate_whole(whole: Batch, first_id: int | None, configs: Sequence[Config], proxy: str,
                    fitted: pl.DataFrame | None, lots_seed: int, pairs: Sequence[tuple[str, str]], workers: int
                    ) -> tuple[int, list[tuple[ev.Partial, fairness.Counts]]]:
    """The team events left out of one batch and the partials of the rest (numbered from ``first_id`` when
    given: the drawing of lots is keyed on the ids of the whole input). Module level: on Dask it runs on the
    worker that read the batch, and only the partials travel back."""
    from tbstats.api import chunks

    if first_id is not None:
        whole = tabular.renumber(whole, first_id)
    teams = set(team_event_ids(whole))
    batch = whole.select([t for t in whole.tournaments["tournament"].to_list() if t not in teams]) if teams else whole
    if not batch.n_tournaments:
        return len(teams), []

    def one(part: Batch) -> tuple[ev.Partial, fairness.Counts]:
        return evaluate_batch(part, configs, proxy=proxy, fitted=fitted, lots_seed=lots_seed, pairs=pairs)

    parts = chunks(batch, workers)   # runs of whole tournaments: one per worker, engine memory bounded by a run
    if workers < 2 or len(parts) < 2:
        return len(teams), [one(part) for part in parts]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return len(teams), list(pool.map(one, parts))


def fit_input(batches: Iterable[Batch] | Run) -> tuple[list[pl.DataFrame], list[pl.DataFrame]]:
    """What the archive fit needs of every batch (:func:`tbstats.strength.games_of`: four numbers per game
    side between two players with a FIDE id, three per player), with the ids of the whole input; from a
    :class:`Run` it is made where each batch is read and only it travels (the batch itself never does).

    The fit is one joint Bradley-Terry fit: every strength depends on every game through the opponents'
    strengths, and the leave-one-event-out refit needs each player's games event by event, so these rows
    are kept for the whole archive (about 32 bytes per game side and 20 per player; merged as they come,
    never a list of per-batch frames). They are bounded per batch in what travels, not in what is kept.
    """
    games: list[pl.DataFrame] = []
    participants: list[pl.DataFrame] = []
    if isinstance(batches, Run):
        for m in batches.map(strength.games_of):
            append_merged(games, shift_ids(m.value[0], m.first_id))
            append_merged(participants, shift_ids(m.value[1], m.first_id))
    else:
        for batch in batches:
            g, p = strength.games_of(batch)
            append_merged(games, g)
            append_merged(participants, p)
    return games, participants


def evaluate_archive(batches: Iterable[Batch] | Run, configs: Sequence[Config], *, proxy: str = "rating",
                     fit_batches: Iterable[Batch] | Run | None = None, lots_seed: int = 0,
                     pairs: Sequence[tuple[str, str]] | None = None, workers: int = 1) -> ArchiveEvaluation:
    """Evaluate every configuration over ``batches`` (whole tournaments, ids unique across them), or over the
    batches of a :class:`Run`, each evaluated where it was read (on Dask, only partials travel).

    The ``archive`` proxy first fits the strengths on ``fit_batches`` (the same archive, read once more).
    ``workers`` > 1 splits each batch into runs of whole tournaments computed on threads.
    """
    chosen = list(pairs) if pairs is not None else default_pairs(configs)
    fairness.check_pairs(chosen, configs)
    fit = None
    if proxy == "archive":
        if fit_batches is None:
            raise TbstatsError("the archive proxy needs the archive to fit (fit_batches)")
        games, participants = fit_input(fit_batches)
        if not participants:
            raise TbstatsError("no tournaments to evaluate")
        fit = strength.fit(pl.concat(games), pl.concat(participants))
    fitted = fit.table if fit is not None else None
    args = (configs, proxy, fitted, lots_seed, chosen, workers)
    partials: list[ev.Partial] = []
    counts = fairness.Counts()
    team_events = 0

    def take(got: tuple[int, list[tuple[ev.Partial, fairness.Counts]]]) -> None:
        nonlocal counts, team_events
        team_events += got[0]
        for partial, c in got[1]:
            partials.append(partial)
            counts = counts + c

    if isinstance(batches, Run):
        pending: deque[Callable[[], tuple[int, list[tuple[ev.Partial, fairness.Counts]]]]] = deque()
        for m in batches.map(nothing, keep=True):
            pending.append(batches.apply(m, _evaluate_whole, m.first_id, *args))
            while len(pending) > 4:
                take(pending.popleft()())
        while pending:
            take(pending.popleft()())
    else:
        for whole in batches:
            take(_evaluate_whole(whole, None, *args))
    if not partials:
        raise TbstatsError("no tournaments to evaluate" + (f" ({team_events} team events are left out)"
                                                            if team_events else ""))
    return ArchiveEvaluation(ev.table(ev.combine(partials)), fairness.favour_table(counts, configs),
                             fairness.difference_table(counts, chosen), proxy, fit, team_events)
