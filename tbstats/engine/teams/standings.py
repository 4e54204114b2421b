"""Team standings: primary score, then the team tie-breaks in order, each on the groups still tied (C.07 4.2).

Value tie-breaks refine the tied groups by one key, as for players (:func:`tbstats.engine.standings.refine`).
Partition tie-breaks order each tied group: DE (Art. 6 on one reference score, the individual vectorised
DE on the team view), EDE (13.3: DE on the primary score, then on the secondary when the primary separates
nobody, every new subset restarting from the primary), its 2026 chains for two teams still tied on MP and
GP (13.3.2: Board Count, then Top Board Result or Bottom Board Elimination, of their direct encounter), and
TBR/BBE over the event (12.2, 12.3). EDE and its chains are vectorised over all tied groups of all events at
once (:mod:`tbstats.engine.teams.encounter`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import polars as pl

from tbstats.engine.standings import competition_rank, direct_encounter, initial_labels, refine, sort_key
from tbstats.engine.teams.dense import board_points, build_team_dense
from tbstats.engine.teams.encounter import CHAINS, extended_direct_encounter
from tbstats.engine.teams.tiebreaks import TeamContext, get_team_tiebreak, parse_team_specs, spec_label
from tbstats.engine.tiebreaks import get_tiebreak, kernel_of
from tbstats.engine.tiebreaks.base import LotsKeys, Values
from tbstats.errors import TbstatsError
from tbstats.model.batch import Batch
from tbstats.model.dense import tournaments_by_id
from tbstats.model.fingerprint import event_keys
from tbstats.model.rules import auto_editions, check_edition
from tbstats.model.spec import TieBreakSpec
from tbstats.model.teams.batch import TeamBatch, build_teams


def make_team_context(batch: Batch, tb: TeamBatch | None = None, *, force_type: str | None = None,
                      primary: str | None = None, after_round: int | None = None,
                      default_edition: str = "fide-2026") -> TeamContext:
    """The team views of ``batch`` and each event's own edition by date (for 'auto').

    ``primary`` ('MP' or 'GP') overrides the primary score the events declare in 192 (default MP);
    ``after_round`` counts the rounds up to that one (standings part-way through, rules.md 4.8).
    """
    tb = tb or build_teams(batch)
    td = build_team_dense(batch, tb, force_type=force_type)
    if after_round is not None:
        n = np.minimum(td.mp.n, after_round)
        td = replace(td, mp=td.mp.with_counted_rounds(n), gp=td.gp.with_counted_rounds(n))
    if primary is not None:
        if primary.upper() not in ("MP", "GP"):
            raise TbstatsError(f"primary score {primary!r} must be MP or GP")
        td = replace(td, primary=np.full(len(td.primary), primary.upper(), dtype=object))
    editions = auto_editions(batch.tournaments.sort("tournament").filter(pl.col("tournament").is_in(
        tb.events["tournament"].implode()))["start_date"], default_edition)

    def keys() -> np.ndarray:
        """The team events' fingerprints (made only when lots are drawn)."""
        every = tournaments_by_id(batch)["tournament"].to_numpy()
        return event_keys(batch)[np.searchsorted(every, td.mp.t_ids)]

    return TeamContext(td, editions, LotsKeys(keys))


def board_partition(tc: TeamContext, labels: np.ndarray, name: str) -> np.ndarray:
    """TBR (12.2): GP on board 1, then board 2, ...; BBE (12.3): GP without the last board, the last two, ..."""
    bp = board_points(tc.td).sum(axis=1)   # [T, B]
    boards = tc.td.boards[tc.td.mp.tix]
    B = bp.shape[1]
    if name == "TBR":
        for b in range(B):
            labels = refine(labels, -bp[:, b])
        return labels
    prefix = np.cumsum(bp, axis=1)
    for s in range(1, B):
        k = boards - s
        key = np.where(k >= 1, -prefix[np.arange(len(k)), np.maximum(k, 1) - 1], 0)
        labels = refine(labels, key)
    return labels


def team_rank_steps(tc: TeamContext, specs: Sequence[TieBreakSpec], edition: str) -> list[np.ndarray]:
    """Competition ranks after the primary score, then after each spec: ``len(specs) + 1`` arrays."""
    d = tc.td.mp
    primary = tc.values(TieBreakSpec("PTS"), edition)
    labels = initial_labels(d.tix, -primary.num)
    steps = [competition_rank(labels, d.tix)]
    for spec in specs:
        if spec.name == "LOTS":     # the individual seeded draw on the team view (keys: Context.set_lots)
            values = tc.ctx("MP").values(spec, edition, kernel_of("LOTS"))
            labels = refine(labels, sort_key(values, get_tiebreak("LOTS").higher_is_better))
            steps.append(competition_rank(labels, d.tix))
            continue
        tb = get_team_tiebreak(spec.name)
        if spec.name == "DE":
            is_mp = tc.primary() if spec.reference is None else np.full(tc.teams, spec.reference == "MP")
            by_mp = direct_encounter(tc.ctx("MP"), labels, forfeits=spec.forfeits, partial=True)
            by_gp = direct_encounter(tc.ctx("GP"), labels, forfeits=spec.forfeits, partial=True)
            labels = np.where(is_mp, by_mp, by_gp)
        elif spec.name in CHAINS:
            labels = extended_direct_encounter(tc, labels, spec)
        elif spec.name in ("TBR", "BBE"):
            labels = board_partition(tc, labels, spec.name)
        else:
            values = tc.values(spec, edition)
            labels = refine(labels, sort_key(values, tb.higher_is_better != spec.reverse))
        steps.append(competition_rank(labels, d.tix))
    return steps


def _column(name: str, values: Values, integer: bool) -> pl.Series:
    if integer:
        return pl.Series(name, values.num, dtype=pl.Int64).set(pl.Series(~values.defined), None)
    return pl.Series(name, values.as_float()).fill_nan(None)


def compute_teams(batch: Batch, specs: str | Sequence[str] | Sequence[TieBreakSpec], *, rules: str = "fide-2026",
                  force_type: str | None = None, primary: str | None = None, after_round: int | None = None,
                  teams: TeamBatch | None = None, context: TeamContext | None = None,
                  lots: int | None = None) -> pl.DataFrame:
    """One row per team of every team event: source, tournament, team, name, mp, gp, rank, then one column
    per spec (partition tie-breaks such as EDE hold the rank after the list up to them, as DE does).

    ``lots`` (a seed): teams still tied after the list are ordered by a seeded drawing of lots, each team's
    number drawn from (seed, its event's fingerprint, its pairing number): the same in any batch and from any
    input (:mod:`tbstats.model.fingerprint`).
    """
    if isinstance(specs, str):
        parsed = parse_team_specs(specs)
    else:
        parsed = [s if isinstance(s, TieBreakSpec) else t for s in specs
                  for t in ([s] if isinstance(s, TieBreakSpec) else parse_team_specs(s))]
    rules = check_edition(rules)
    tc = context or make_team_context(batch, teams, force_type=force_type, primary=primary,
                                     after_round=after_round)
    td = tc.td
    labels = [spec_label(s) for s in parsed]
    if td.mp.players == 0:
        schema: dict[str, pl.DataType] = {
            "source": pl.String(), "tournament": pl.Int64(), "team": pl.Int32(), "name": pl.String(),
            "mp": pl.Float64(), "gp": pl.Float64(), "rank": pl.Int64()}
        schema.update({lab: pl.Int64() if get_team_tiebreak(s.name).integer or
                       get_team_tiebreak(s.name).kind == "partition" else pl.Float64()
                       for s, lab in zip(parsed, labels, strict=True)})
        return pl.DataFrame(schema=schema)
    src = batch.tournaments.sort("tournament").filter(pl.col("tournament").is_in(
        pl.Series(td.mp.t_ids).implode()))["source"].to_numpy()
    if lots is not None:
        tc.ctx("MP").set_lots(lots)
    steps = team_rank_steps(tc, [*parsed, TieBreakSpec("LOTS")] if lots is not None else parsed, rules)
    columns: dict[str, pl.Series] = {
        "source": pl.Series(src[td.mp.tix], dtype=pl.String),
        "tournament": pl.Series(td.mp.t_ids[td.mp.tix], dtype=pl.Int64),
        "team": pl.Series(td.mp.start_no, dtype=pl.Int32),
        "name": pl.Series(td.names, dtype=pl.String),
        "mp": pl.Series(tc.values(TieBreakSpec("MPTS"), rules).as_float()),
        "gp": pl.Series(tc.values(TieBreakSpec("GPTS"), rules).as_float()),
        "rank": pl.Series(steps[-1], dtype=pl.Int64),
    }
    for i, (spec, lab) in enumerate(zip(parsed, labels, strict=True)):
        tb = get_team_tiebreak(spec.name)
        if tb.kind == "partition":
            columns[lab] = pl.Series(steps[i + 1], dtype=pl.Int64)
        else:
            columns[lab] = _column(lab, tc.values(spec, rules), tb.integer)
    if rules == "auto":
        columns["edition"] = pl.Series(tc.edition_of[td.mp.tix])
    return pl.DataFrame(columns)


def event_list(t: dict[str, object]) -> list[str]:
    """An event's own team tie-break list: 212 without its leading primary score, else 202 (rules.md 2.3)."""
    standings = [s for s in (t["standings_tiebreaks"] or []) if s.strip()]  # type: ignore[attr-defined]
    if standings and standings[0].strip().upper() in ("PTS", "MPTS", "GPTS"):
        standings = standings[1:]
    return standings or [s for s in (t["tiebreaks"] or []) if s.strip()]  # type: ignore[attr-defined]


def compute_teams_from_file(batch: Batch, *, rules: str = "fide-2026", force_type: str | None = None,
                            after_round: int | None = None, teams: TeamBatch | None = None,
                            lots: int | None = None) -> tuple[pl.DataFrame, list[tuple[str, str]]]:
    """Team standings with each event's own 212/202 list; events grouped by list, computed once per group.

    Returns the table (columns of all lists, null where an event's list lacks a spec) and, for each team
    event left out because its list is empty or cannot be computed, its source and the reason.
    """
    tb = teams or build_teams(batch)
    groups: dict[tuple[str, ...], list[int]] = {}
    left_out: list[tuple[str, str]] = []
    rows = batch.tournaments.filter(pl.col("tournament").is_in(tb.events["tournament"].implode()))
    for t in rows.sort("tournament").iter_rows(named=True):
        listed = event_list(t)
        if not listed:
            left_out.append((t["source"], "-t from-file: the event has no 202/212 tie-break list (give one "
                                          "with -t, e.g. -t MPvGP,BH:MP)"))
            continue
        try:
            key = tuple(spec_label(s) for s in parse_team_specs(listed))
        except TbstatsError as exc:
            left_out.append((t["source"], f"-t from-file: its list cannot be used: {exc}"))
            continue
        groups.setdefault(key, []).append(int(t["tournament"]))
    parts = []
    for key, ids in groups.items():
        part = batch.select(ids)
        keep = pl.col("tournament").is_in(ids)
        sub = TeamBatch(tb.events.filter(keep), tb.teams.filter(keep), tb.members.filter(keep),
                        tb.matches.filter(keep), tb.boards.filter(keep), tb.warnings)
        parts.append(compute_teams(part, list(key), rules=rules, force_type=force_type, after_round=after_round,
                                   teams=sub, lots=lots))
    if not parts:
        return compute_teams(batch.select([]), [], rules=rules), left_out
    return pl.concat(parts, how="diagonal_relaxed"), left_out
