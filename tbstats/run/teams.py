"""``compute --teams`` and ``audit --teams`` over inputs, batch by batch (the team counterparts of
:func:`tbstats.run.commands.compute` and :func:`tbstats.run.commands.audit`).

The map function is module-level so that it travels to Dask workers; the result does not depend on the
batch size or the executor.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import polars as pl

from tbstats.analysis.audit import bounded
from tbstats.analysis.teams.audit import EVENT_SCHEMA, TEAM_SCHEMA, audit_teams
from tbstats.engine.teams.standings import compute_teams, compute_teams_from_file
from tbstats.errors import TbstatsError
from tbstats.io.trf import ERROR_SCHEMA
from tbstats.model.batch import Batch, source_file
from tbstats.model.games import empty
from tbstats.model.spec import TieBreakSpec
from tbstats.model.teams.batch import build_teams
from tbstats.run.pipeline import Run, shift_ids


@dataclass(frozen=True)
class TeamsComputed:
    table: pl.DataFrame
    notes: list[str]
    left_out: list[tuple[str, str]]   # events of the batch that give no team rows: source, why


def _left_out_rows(left_out: Sequence[tuple[str, str]]) -> pl.DataFrame:
    """Events ``compute --teams`` could not rank, as ledger rows of their files (an empty result is never a
    success: the command counts them as rejected and exits 1)."""
    return pl.DataFrame([{"path": source_file(source), "line": None, "column": None,
                          "reason": f"{source}: {why}" if source != source_file(source) else why}
                         for source, why in left_out], schema=ERROR_SCHEMA, orient="row")


def _notes(warnings: pl.DataFrame) -> list[str]:
    """The team model's warnings as lines ``source[:line]: field: message``, as the reader's are shown."""
    return [f"{w['source']}{'' if w['line'] is None else ':' + str(w['line'])}: {w['field']}: {w['message']}"
            for w in warnings.iter_rows(named=True)]


def _compute_one(batch: Batch, specs: Sequence[TieBreakSpec] | None, rules: str, force_type: str | None,
                 after_round: int | None, team_pab: tuple[Fraction, Fraction] | None,
                 lots: int | None = None) -> TeamsComputed:
    tb = build_teams(batch, team_pab=team_pab)
    notes = _notes(tb.warnings)
    individual = batch.tournaments.filter(~pl.col("tournament").is_in(tb.events["tournament"].implode()))
    left_out = [(source, "an individual event: --teams ranks the teams of team events (run without --teams "
                         "for its players)") for source in individual.sort("tournament")["source"].to_list()]
    if specs is None:
        table, unusable = compute_teams_from_file(batch, rules=rules, force_type=force_type,
                                                  after_round=after_round, teams=tb, lots=lots)
        return TeamsComputed(table, notes, left_out + unusable)
    return TeamsComputed(compute_teams(batch, specs, rules=rules, force_type=force_type, after_round=after_round,
                                       teams=tb, lots=lots), notes, left_out)


def compute_teams_run(run: Run, specs: Sequence[TieBreakSpec] | None, *, rules: str = "fide-2026",
                      force_type: str | None = None, after_round: int | None = None,
                      team_pab: tuple[Fraction, Fraction] | None = None, lots: int | None = None,
                      sink: Callable[[pl.DataFrame], None] | None = None) -> tuple[pl.DataFrame, list[str]]:
    """Team standings of every team event of the inputs, in order (``specs`` None: each event's own list;
    ``lots``: a seed, ties left broken by a drawing of lots), and the warnings met (unmarked team byes,
    declared MP/GP that differ, lists that cannot be used). With ``sink`` and ``specs`` each batch's table goes
    there as it comes (the table returned is then empty); each event's own lists give columns known only at
    the end (the union of the lists), so that table is always returned whole."""
    if sink is not None and specs is None:
        raise TbstatsError("compute_teams_run: a sink needs the specs (from-file columns are known at the end)")
    work = functools.partial(_compute_one, specs=specs, rules=rules, force_type=force_type,
                             after_round=after_round, team_pab=team_pab, lots=lots)
    tables, notes = [], []
    for m in run.map(work):
        piece = shift_ids(m.value.table, m.first_id)
        if sink is None:
            tables.append(piece)
        else:
            sink(piece)
        notes += m.value.notes
        if m.value.left_out:
            run.reject(_left_out_rows(m.value.left_out))
    if not tables:
        tables.append(compute_teams(Batch(empty("tournaments"), empty("players"), empty("games")), specs or [],
                                    rules=rules))
    return pl.concat(tables, how="diagonal_relaxed"), notes


def _audit_one(batch: Batch, rules: str, tiebreaks: str | Sequence[TieBreakSpec],
               team_pab: tuple[Fraction, Fraction] | None, drilldown_limit: int | None,
               force_type: str | None = None) -> tuple[pl.DataFrame, pl.DataFrame, list[str]]:
    tb = build_teams(batch, team_pab=team_pab)
    notes = _notes(tb.warnings)
    per_t, per_team = audit_teams(batch, rules=rules, tiebreaks=tiebreaks, teams=tb, drilldown_limit=drilldown_limit,
                                  force_type=force_type)
    return per_t, per_team, notes


def audit_teams_run(run: Run, *, rules: str = "auto", tiebreaks: str | Sequence[TieBreakSpec] = "from-file",
                    team_pab: tuple[Fraction, Fraction] | None = None, drilldown_limit: int | None = None,
                    force_type: str | None = None) -> tuple[pl.DataFrame, pl.DataFrame, list[str]]:
    """:func:`tbstats.analysis.teams.audit.audit_teams` of every batch, in order: per event, per team (the first
    ``drilldown_limit`` events with differences) and the warnings met while building the teams."""
    work = functools.partial(_audit_one, rules=rules, tiebreaks=tiebreaks, team_pab=team_pab,
                             drilldown_limit=drilldown_limit, force_type=force_type)
    per_t, per_team, notes = [pl.DataFrame(schema=EVENT_SCHEMA)], [pl.DataFrame(schema=TEAM_SCHEMA)], []
    for m in run.map(work):
        per_t.append(shift_ids(m.value[0], m.first_id))
        per_team.append(shift_ids(m.value[1], m.first_id))
        notes += m.value[2]
    return pl.concat(per_t), bounded(pl.concat(per_team), drilldown_limit), notes
