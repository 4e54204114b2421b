"""``compute --teams`` over inputs, batch by batch (the team counterpart of :func:`tbstats.runs.compute`).

The map function is module-level so that it travels to Dask workers; the result does not depend on the
batch size or the executor.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import polars as pl

from tbstats.games import Batch, empty
from tbstats.pipeline import Run, shift_ids
from tbstats.spec import TieBreakSpec
from tbstats.teams.model import build_teams
from tbstats.teams.standings import compute_teams, compute_teams_from_file


@dataclass(frozen=True)
class TeamsComputed:
    table: pl.DataFrame
    notes: list[str]


def _compute_one(batch: Batch, specs: Sequence[TieBreakSpec] | None, rules: str, force_type: str | None,
                 after_round: int | None, team_pab: tuple[Fraction, Fraction] | None) -> TeamsComputed:
    tb = build_teams(batch, team_pab=team_pab)
    notes = [f"{w['source']}: {w['message']}" for w in tb.warnings.iter_rows(named=True)]
    if specs is None:
        table, skipped = compute_teams_from_file(batch, rules=rules, force_type=force_type,
                                                 after_round=after_round, teams=tb)
        return TeamsComputed(table, notes + skipped)
    return TeamsComputed(compute_teams(batch, specs, rules=rules, force_type=force_type, after_round=after_round,
                                       teams=tb), notes)


def compute_teams_run(run: Run, specs: Sequence[TieBreakSpec] | None, *, rules: str = "fide-2026",
                      force_type: str | None = None, after_round: int | None = None,
                      team_pab: tuple[Fraction, Fraction] | None = None) -> tuple[pl.DataFrame, list[str]]:
    """Team standings of every team event of the inputs, in order (``specs`` None: each event's own list),
    and the warnings met (unmarked team byes, declared MP/GP that differ, lists that cannot be used)."""
    work = functools.partial(_compute_one, specs=specs, rules=rules, force_type=force_type,
                             after_round=after_round, team_pab=team_pab)
    tables, notes = [], []
    for m in run.map(work):
        tables.append(shift_ids(m.value.table, m.first_id))
        notes += m.value.notes
    if not tables:
        tables.append(compute_teams(Batch(empty("tournaments"), empty("players"), empty("games")), specs or [],
                                    rules=rules))
    return pl.concat(tables, how="diagonal_relaxed"), notes
