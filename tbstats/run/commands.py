"""The archive commands over inputs, batch by batch: a per-batch map and an in-order fold for each.

Every function takes the inputs (paths, directories, globs, archives, models) and a :class:`Run` setting
(batch size, threads or a ``dask.distributed.Client``); the result is the same for every batch size and
executor, row for row. The map functions are module-level so they travel to Dask workers. Each command's
analysis module is imported by its functions, so that ``compute`` loads none of the others'.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import polars as pl

from tbstats.engine import compute as engine
from tbstats.engine.declared import FROM_FILE
from tbstats.model.batch import Batch, append_merged
from tbstats.model.games import empty
from tbstats.model.spec import TieBreakSpec
from tbstats.model.teams import team_event_ids
from tbstats.output import Rendered, TableFile
from tbstats.run import checks
from tbstats.run.pipeline import Run, nothing, shift_ids

if TYPE_CHECKING:
    from tbstats.analysis import compare as cmp
    from tbstats.analysis.evaluate import ArchiveEvaluation
    from tbstats.engine.configs import Config
    from tbstats.io.tabular import ArchiveWriter

_EMPTY = Batch(empty("tournaments"), empty("players"), empty("games"))


# ------------------------------------------------------------------------------------------------ compute

@dataclass(frozen=True)
class Computed:
    table: pl.DataFrame | Rendered   # Rendered: the piece's bytes, ids global (:func:`_rendered`)
    round_robins: int
    team_events: int = 0
    events: pl.DataFrame | None = None     # what tbstats.run.checks looks at, per tournament


def _compute_one(batch: Batch, specs: str | Sequence[TieBreakSpec], options: dict[str, Any],
                 prepare: Callable[[pl.DataFrame], pl.DataFrame] | None = None) -> Computed:
    table = engine.compute(batch, specs, **options)
    teams = team_event_ids(batch)
    return Computed(table if prepare is None else prepare(table),
                    int((batch.tournaments["event_type"] == "round_robin").sum()), len(teams),
                    checks.events(batch, teams))


def _rendered(computed: Computed, first_id: int, render: Callable[[pl.DataFrame], Rendered],
              prepare: Callable[[pl.DataFrame], pl.DataFrame] | None = None) -> Computed:
    """A batch's table with global ids, as the bytes of the output file (made where the table is), passed
    through ``prepare`` first when the map did not."""
    table = shift_ids(cast(pl.DataFrame, computed.table), first_id)
    return dataclasses.replace(computed, table=render(table if prepare is None else prepare(table)))


def compute(run: Run, specs: str | Sequence[TieBreakSpec], *, seen: list[pl.DataFrame] | None = None,
            sink: TableFile | None = None, **options: Any) -> tuple[pl.DataFrame, int, int]:
    """The :func:`tbstats.engine.compute.compute` table of every batch, in order; the numbers of round robins and of
    team events (whose players it ranks as individuals). ``seen`` collects :func:`tbstats.run.checks.events`.
    With ``sink`` each batch's table goes there as it comes (the table returned is then empty); the text of a
    CSV/TSV piece is made where its batch is computed (:attr:`TableFile.prepare`; on a Dask worker its bytes
    too, :attr:`TableFile.render`), so that little work and few bytes come back here."""
    tables, round_robins, team_events = [], 0, 0
    prepare, render = (None, None) if sink is None else (sink.prepare, sink.render)
    # on Dask ``then`` runs on the worker too, where the table waits for it packed: numbers pack and unpack at
    # half the cost of their text, so the text is made there; elsewhere ``then`` runs here, after the map
    later = prepare if run.client is not None else None
    mapped = run.map(functools.partial(_compute_one, specs=specs, options=options,
                                       prepare=None if later is not None else prepare),
                     then=None if render is None else functools.partial(_rendered, render=render, prepare=later))
    for m in mapped:
        if sink is None:
            tables.append(shift_ids(cast(pl.DataFrame, m.value.table), m.first_id))
        else:   # (rendered with its ids when the sink renders: then prepared too)
            sink.write(m.value.table if render is not None else shift_ids(cast(pl.DataFrame, m.value.table),
                                                                          m.first_id))
        round_robins += m.value.round_robins
        team_events += m.value.team_events
        if seen is not None and m.value.events is not None:
            append_merged(seen, m.value.events)
    if not tables:
        tables.append(engine.compute(_EMPTY, specs, rules=options.get("rules", "fide-2026")))
    return pl.concat(tables), round_robins, team_events


# --------------------------------------------------------------------------------------------------- info

def info(run: Run, *, by_tournament: bool = False) -> pl.DataFrame:
    """The :func:`tbstats.run.info.summary_table` of all inputs, from per-batch counts."""
    from tbstats.run.info import partial_summary, summary_from

    parts = [(shift_ids(m.value[0], m.first_id), m.value[1]) for m in run.map(partial_summary)]
    return summary_from(parts, by_tournament=by_tournament)


# -------------------------------------------------------------------------------------------------- audit

def _audit_one(batch: Batch, rules: str, tiebreaks: str, context: dict[str, Any]) -> tuple[pl.DataFrame, pl.DataFrame]:
    from tbstats.analysis.audit import audit

    # run by run (bounded engine memory): the rows of consecutive runs are the batch's, in order
    per_t, per_p = zip(*(audit(part, engine.make_context(part, **context), rules=rules, tiebreaks=tiebreaks)
                         for part in engine.chunks(batch)), strict=True)
    return pl.concat(per_t), pl.concat(per_p)


def _with_events(batch: Batch, f: Callable[[Batch], Any]) -> tuple[Any, pl.DataFrame]:
    """``f(batch)`` and :func:`tbstats.run.checks.events` of the batch (module level: it travels to workers)."""
    return f(batch), checks.events(batch)


def audit(run: Run, *, rules: str = "auto", tiebreaks: str = FROM_FILE, seen: list[pl.DataFrame] | None = None,
          **context: Any) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Per tournament and per player tables of :func:`tbstats.analysis.audit.audit`, batch by batch (``context``:
    the :func:`tbstats.engine.compute.make_context` options, e.g. ``unrated_rating``; ``seen`` collects
    :func:`tbstats.run.checks.events`)."""
    per_t, per_p = [], []
    work = functools.partial(_audit_one, rules=rules, tiebreaks=tiebreaks, context=context)
    for m in run.map(functools.partial(_with_events, f=work)):
        (tables, seen_here) = m.value
        if seen is not None:
            append_merged(seen, seen_here)
        per_t.append(shift_ids(tables[0], m.first_id))
        per_p.append(shift_ids(tables[1], m.first_id))
    if not per_t:
        return _empty_audit()
    return pl.concat(per_t), pl.concat(per_p)


def _empty_audit() -> tuple[pl.DataFrame, pl.DataFrame]:
    from tbstats.analysis.audit import PLAYER_SCHEMA, TOURNAMENT_SCHEMA

    return pl.DataFrame(schema=TOURNAMENT_SCHEMA), pl.DataFrame(schema=PLAYER_SCHEMA)


# ------------------------------------------------------------------------------------------------ compare

def _compare_one(batch: Batch, configs: Sequence[Config], top: int, drilldown_limit: int | None,
                 context: dict[str, Any] | None = None) -> cmp.Partial:
    from tbstats.analysis import compare as cmp

    # run by run (bounded engine memory); the runs' partials are one batch's
    return cmp.merge([cmp.partial(part, configs, top=top, drilldown_limit=drilldown_limit,
                                  ctx=engine.make_context(part, **context) if context else None)
                      for part in engine.chunks(batch)])


def compare(run: Run, configs: Sequence[Config], *, top: int = 10, drilldown_limit: int | None = 1000,
            seen: list[pl.DataFrame] | None = None, **context: Any) -> cmp.Comparison:
    """:func:`tbstats.analysis.compare.compare` over all inputs from per-batch partials (the drill-down keeps the first
    ``drilldown_limit`` tournaments of each pair; ``context``: :func:`tbstats.engine.compute.make_context` options;
    ``seen`` collects :func:`tbstats.run.checks.events`)."""
    from tbstats.analysis import compare as cmp

    cmp.check_configs(configs)
    work = functools.partial(_compare_one, configs=tuple(configs), top=top, drilldown_limit=drilldown_limit,
                             context=context)
    parts: list[cmp.Partial] = []   # each with its per-tournament rows (pair-major), in batch order
    drill: pl.DataFrame | None = None   # the first ``drilldown_limit`` tournaments of each pair so far
    for m in run.map(functools.partial(_with_events, f=work)):
        partial, seen_here = m.value
        partial = partial.shifted(m.first_id)
        drill = _first_tournaments(partial.drilldown if drill is None else pl.concat(
            [drill, partial.drilldown], how="diagonal_relaxed"), drilldown_limit)
        parts.append(dataclasses.replace(partial, drilldown=partial.drilldown.clear()))
        if seen is not None:
            append_merged(seen, seen_here)
    if drill is None:   # no batch
        return cmp.combine([_compare_one(_EMPTY, configs, top, drilldown_limit)])
    # the drill-down kept so far, given to the first partial: combine then sees the same rows
    parts[0] = dataclasses.replace(parts[0], drilldown=drill)
    return cmp.combine(parts)


def _first_tournaments(drill: pl.DataFrame, limit: int | None) -> pl.DataFrame:
    """The drill-down rows of the first ``limit`` tournaments of each pair (ids grow from batch to batch, so
    rows dropped here are rows the final drill-down drops)."""
    if limit is None or not drill.height:
        return drill
    return drill.filter(pl.col("tournament").rank("dense").over("_pair") <= limit)



# ----------------------------------------------------------------------------------------------- evaluate

def _fit_rows(batch: Batch) -> tuple[pl.DataFrame, pl.DataFrame]:
    from tbstats.analysis.strength import games_of

    return games_of(batch)


def evaluate(run: Run, configs: Sequence[Config], *, proxy: str = "rating", fit_run: Run | None = None,
             lots_seed: int = 0, pairs: Sequence[tuple[str, str]] | None = None,
             workers: int = 1, seen: list[pl.DataFrame] | None = None,
             tables: Sequence[str] | None = None) -> ArchiveEvaluation:
    """:func:`tbstats.analysis.evaluate.evaluate_archive` over all inputs: each batch evaluated where it was read
    (on Dask, only its partials travel back). The ``archive`` proxy first reads ``fit_run`` (the same inputs)
    for the fit, where only :func:`tbstats.analysis.strength.games_of` of each batch travels. ``seen`` collects
    :func:`tbstats.run.checks.events` (team events included); ``tables``: the ones to make (default all)."""
    from tbstats.analysis import evaluate as evaluation

    def done(pair: tuple[Callable[[], evaluation.Evaluated], Callable[[], pl.DataFrame] | None]
             ) -> evaluation.Evaluated:
        evaluated, events = pair
        if seen is not None and events is not None:
            append_merged(seen, events())
        return evaluated()

    def each(args: evaluation.EvaluateArgs) -> Iterator[evaluation.Evaluated]:
        pending: deque[tuple[Callable[[], evaluation.Evaluated], Callable[[], pl.DataFrame] | None]] = deque()
        for m in run.map(nothing, keep=True):
            pending.append((run.apply(m, evaluation.evaluate_whole, m.first_id, *args),
                            None if seen is None else run.apply(m, checks.events)))
            while len(pending) > 4:
                yield done(pending.popleft())
        while pending:
            yield done(pending.popleft())

    fit_rows = None if fit_run is None else ((shift_ids(m.value[0], m.first_id), shift_ids(m.value[1], m.first_id))
                                             for m in fit_run.map(_fit_rows))
    return evaluation.evaluate_each(each, configs, proxy=proxy, fit_rows=fit_rows, lots_seed=lots_seed, pairs=pairs,
                                    workers=workers, tables=evaluation.TABLES if tables is None else tables,
                                    progress=fit_run is not None and fit_run.progress)


# ------------------------------------------------------------------------------------------------- ingest

def _identity(batch: Batch) -> Batch:
    return batch


def ingest(run: Run, writer: ArchiveWriter) -> None:
    """Write every batch of the run into ``writer``'s model. A directory target's part files are written where
    each batch was read (on a Dask worker: only its part's names and first id travel there, and the count
    back); a single-file target is one stream, written here."""
    from tbstats.io.tabular import write_part

    pending: deque[Callable[[], int]] = deque()
    try:
        for m in run.map(nothing, keep=True):
            if not m.tournaments:
                continue
            if writer.single:
                writer.write(run.apply(m, _identity)())
                continue
            pending.append(run.apply(m, write_part, writer.reserve(m.tournaments)))
            while len(pending) > 4:
                pending.popleft()()
        while pending:
            pending.popleft()()
    finally:   # on an error, let the writes in flight finish, so that the writer's abort removes their files
        for resolve in pending:
            with contextlib.suppress(Exception):
                resolve()
