"""Audit published team standings: recompute each team's MP, GP and rank and compare with its 310 record.

The team counterpart of :mod:`tbstats.analysis.audit`. A 310 record declares the team's match points (cols 55-60),
game points (62-67) and rank (69-71); declared ranks are usually strict while recomputed ones are shared,
so a declaration *agrees* when it never orders two teams opposite to the recomputation (the same test,
:func:`tbstats.analysis.audit.inversions`). Older files (013 records) declare nothing: ``no declared ranks``.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Final

import numpy as np
import polars as pl

from tbstats.analysis.audit import bounded, inversions
from tbstats.engine.declared import FROM_FILE
from tbstats.engine.teams.standings import compute_teams, compute_teams_from_file
from tbstats.engine.teams.tiebreaks import parse_team_specs
from tbstats.model.batch import Batch
from tbstats.model.orders import TEAM_ORDERS
from tbstats.model.rules import RULESETS
from tbstats.model.spec import TieBreakSpec
from tbstats.model.teams.batch import TeamBatch, build_teams

#: Team orders tried when the declared ranks do not follow the declared (or given) list, or when an event
#: declares ranks but no list (the table of usual orders, :mod:`tbstats.model.orders`).
TEAM_CONVENTIONAL_ORDERS: Final = TEAM_ORDERS

#: The columns of the two team audit tables (also for an input without team events).
EVENT_SCHEMA: Final = {"source": pl.String, "tournament": pl.Int64, "teams": pl.Int64, "mp_differ": pl.Int64,
                       "gp_differ": pl.Int64, "rank_conflicts": pl.Int64, "status": pl.String}
TEAM_SCHEMA: Final = {"source": pl.String, "tournament": pl.Int64, "team": pl.Int64, "name": pl.String,
                      "declared_mp": pl.Float64, "mp": pl.Float64, "declared_gp": pl.Float64, "gp": pl.Float64,
                      "declared_rank": pl.Int64, "rank": pl.Int64}


def _declared(text: str | None) -> Fraction | None:
    try:
        return Fraction(text.strip()) if text and text.strip() else None
    except (ValueError, ZeroDivisionError):
        return None


def _differs(declared: list[str | None], computed: list[float | None]) -> np.ndarray:
    """True where a declared value (310 text) is present and differs from the computed one (exact)."""
    out = []
    for d, c in zip(declared, computed, strict=True):
        value = _declared(d)
        out.append(value is not None and c is not None and value != Fraction(c))
    return np.array(out, dtype=bool)


def _ranks(batch: Batch, tb: TeamBatch, rules: str, specs: Sequence[TieBreakSpec] | None,
           force_type: str | None) -> tuple[pl.DataFrame, set[int]]:
    """The team standings (one row per team) and the events whose list was absent or not usable."""
    if specs is None:
        table, _ = compute_teams_from_file(batch, rules=rules, teams=tb, force_type=force_type)
        return table, set(tb.events["tournament"].to_list()) - set(table["tournament"].to_list())
    return compute_teams(batch, list(specs), rules=rules, teams=tb, force_type=force_type), set()


def audit_teams(batch: Batch, *, rules: str = "auto", tiebreaks: str | Sequence[TieBreakSpec] = FROM_FILE,
                team_pab: tuple[Fraction, Fraction] | None = None, teams: TeamBatch | None = None,
                drilldown_limit: int | None = None, force_type: str | None = None,
                ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Per team event a status and per team the differences between declared (310) and recomputed standings.

    Per event: ``teams``, ``mp_differ`` and ``gp_differ`` (teams whose declared MP / GP differ from the
    results), ``rank_conflicts`` (groups of the recomputed order that the declared ranks cross) and a status:
    ``agrees``; ``points differ`` (declared MP or GP disagree and the ranks conflict); ``agrees under EDITION``
    (another rule edition); ``agrees under ORDER`` (a conventional team order); ``unexplained``; ``no declared
    ranks``; ``no tie-break list`` (from-file without 202/212, and no conventional team order reproduces the
    declared ranks: with one, ``agrees under ORDER``); ``tie-break list not understood``. Per team
    (the drill-down, the first ``drilldown_limit`` events with differences): declared and computed MP, GP,
    rank of every team where one differs. ``force_type`` ('swiss' or 'round_robin') as for compute.
    """
    tb = teams or build_teams(batch, team_pab=team_pab)
    if tb.n_events == 0:
        return pl.DataFrame(schema=EVENT_SCHEMA), pl.DataFrame(schema=TEAM_SCHEMA)
    specs = None if isinstance(tiebreaks, str) and tiebreaks == FROM_FILE else (
        parse_team_specs(tiebreaks) if isinstance(tiebreaks, str) else list(tiebreaks))
    base, left_out = _ranks(batch, tb, rules, specs, force_type)
    primary = compute_teams(batch, [], rules=rules, teams=tb, force_type=force_type).select(
        "tournament", "team", "mp", "gp", pl.col("rank").alias("_primary_rank"))
    declared = tb.teams.select("tournament", "team", "name", "declared_mp", "declared_gp", "declared_rank")
    rows = declared.join(primary, on=["tournament", "team"], how="left").join(
        base.select("tournament", "team", "rank"), on=["tournament", "team"], how="left").with_columns(
        pl.coalesce("rank", "_primary_rank").alias("rank")).sort("tournament", "team")
    events = tb.events.sort("tournament")["tournament"].to_numpy()
    E = len(events)
    tix = np.searchsorted(events, rows["tournament"].to_numpy())
    dcl = rows["declared_rank"].fill_null(-1).to_numpy().astype(np.int64)
    rank = rows["rank"].to_numpy().astype(np.int64)
    mp_bad = _differs(rows["declared_mp"].to_list(), rows["mp"].to_list())
    gp_bad = _differs(rows["declared_gp"].to_list(), rows["gp"].to_list())
    inv = inversions(rank, dcl, tix, E)
    has_ranks = np.bincount(tix, weights=dcl >= 0, minlength=E) > 0
    bad_points = np.bincount(tix, weights=mp_bad | gp_bad, minlength=E) > 0

    t = batch.tournaments.filter(pl.col("tournament").is_in(pl.Series(events).implode())).sort("tournament")
    status = np.where(inv == 0, "agrees", "unexplained").astype(object)
    listed = (t["tiebreaks"].list.len().fill_null(0) + t["standings_tiebreaks"].list.len().fill_null(0)).to_numpy() > 0
    missing = np.isin(events, list(left_out))
    status[missing] = np.where(listed[missing], "tie-break list not understood", "no tie-break list")
    status[bad_points & (inv > 0) & ~missing] = "points differ"
    status[~has_ranks] = "no declared ranks"
    # an event with declared ranks and no list at all is matched against the usual team orders too
    open_ = (status == "unexplained") | ((status == "no tie-break list") & has_ranks)
    tried = [(f"agrees under {e}", e, specs) for e in RULESETS if e != rules] + [
        (f"agrees under {o}", rules, parse_team_specs(o)) for o in TEAM_CONVENTIONAL_ORDERS]
    for label, edition, alt_specs in tried:
        if not open_.any():
            break
        ids = events[open_].tolist()
        sub = _select(batch, tb, ids)
        alt, _ = _ranks(batch.select(ids), sub, edition, alt_specs, force_type)
        alt_rank = rows.select("tournament", "team").join(alt.select("tournament", "team", "rank"),
                                                          on=["tournament", "team"], how="left")["rank"]
        keep = alt_rank.is_not_null().to_numpy()
        ok = inversions(alt_rank.fill_null(0).to_numpy().astype(np.int64)[keep], dcl[keep], tix[keep], E) == 0
        hit = open_ & ok & np.isin(events, alt["tournament"].to_list())
        status[hit] = label
        open_ &= ~hit

    per_t = pl.DataFrame({
        "source": t["source"], "tournament": t["tournament"], "teams": np.bincount(tix, minlength=E),
        "mp_differ": np.bincount(tix, weights=mp_bad, minlength=E).astype(np.int64),
        "gp_differ": np.bincount(tix, weights=gp_bad, minlength=E).astype(np.int64),
        "rank_conflicts": inv, "status": pl.Series(status.astype(str))}, schema=EVENT_SCHEMA)
    differs = mp_bad | gp_bad | ((dcl >= 0) & (dcl != rank))
    source = t["source"].to_numpy()[tix]
    per_team = rows.with_columns(pl.Series("source", source, dtype=pl.String),
                                 pl.Series("_differs", differs)).filter(pl.col("_differs")).select(
        "source", "tournament", "team", "name",
        pl.col("declared_mp").str.strip_chars().cast(pl.Float64, strict=False), "mp",
        pl.col("declared_gp").str.strip_chars().cast(pl.Float64, strict=False), "gp",
        "declared_rank", "rank").cast(TEAM_SCHEMA)  # type: ignore[arg-type]
    return per_t, bounded(per_team, drilldown_limit)


def _select(batch: Batch, tb: TeamBatch, ids: list[int]) -> TeamBatch:
    keep = pl.col("tournament").is_in(ids)
    return TeamBatch(tb.events.filter(keep), tb.teams.filter(keep), tb.members.filter(keep),
                     tb.matches.filter(keep), tb.boards.filter(keep), tb.warnings)
