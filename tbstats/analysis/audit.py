"""Audit published standings: recompute points and ranks and classify why they differ from the file's.

Declared ranks (TRF cols 86-89) are usually strict, with remaining ties broken by lots or an unstated key,
while recomputed ranks are shared; so a declaration *agrees* when it never orders two players opposite to
the recomputation (ties may be broken either way).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import polars as pl

from tbstats.analysis.usual_orders import fit_usual_orders, values_text
from tbstats.engine.configs import Config, standings
from tbstats.engine.declared import FROM_FILE
from tbstats.engine.tiebreaks import kernel_of, parse_specs
from tbstats.engine.tiebreaks.base import Context
from tbstats.model.batch import Batch
from tbstats.model.orders import USUAL_ORDERS
from tbstats.model.rules import RULESETS
from tbstats.model.spec import TieBreakSpec

#: Orders tried when the declared ranks do not follow the declared (or given) order: the lists of the usual
#: orders (:data:`tbstats.model.orders.USUAL_ORDERS`), each once, in the table's order.
CONVENTIONAL_ORDERS: Final = tuple(dict.fromkeys(o.tiebreaks for o in USUAL_ORDERS))

#: The columns of the two audit tables (also for an input without tournaments).
TOURNAMENT_SCHEMA: Final = {"source": pl.String, "tournament": pl.Int64, "players": pl.Int64,
                            "points_differ": pl.Int64, "rank_conflicts": pl.Int64, "status": pl.String,
                            "order": pl.String, "order_rules": pl.String, "order_tiebreaks": pl.String,
                            "order_differ": pl.Int64, "order_kendall": pl.Float64, "matching": pl.String}
PLAYER_SCHEMA: Final = {"source": pl.String, "tournament": pl.Int64, "start_no": pl.Int64, "name": pl.String,
                        "declared_points": pl.Float64, "points": pl.Float64, "declared_rank": pl.Int64,
                        "rank": pl.Int64, "order": pl.String, "values": pl.String}


def inversions(ranks: np.ndarray, declared: np.ndarray, tix: np.ndarray, T: int) -> np.ndarray:
    """Per tournament: the number of recomputed rank groups whose declared ranks overlap the next group's.

    0 means the declared ranks are consistent with the recomputed order. Players without a declared rank
    (``declared < 0``) are ignored.
    """
    keep = declared >= 0
    r, dcl, t = ranks[keep], declared[keep], tix[keep]
    order = np.lexsort((dcl, r, t))
    r, dcl, t = r[order], dcl[order], t[order]
    if len(r) == 0:
        return np.zeros(T, dtype=np.int64)
    start = np.ones(len(r), dtype=bool)
    start[1:] = (r[1:] != r[:-1]) | (t[1:] != t[:-1])
    gid = np.cumsum(start) - 1
    dcl = dcl.astype(np.int64, copy=False)   # (one type with the groups' bounds: ufunc.at casts cell by cell)
    g_min = np.full(gid[-1] + 1, np.iinfo(np.int64).max)
    g_max = np.full(gid[-1] + 1, np.iinfo(np.int64).min)
    np.minimum.at(g_min, gid, dcl)
    np.maximum.at(g_max, gid, dcl)
    g_t = t[start]
    bad = (g_max[:-1] > g_min[1:]) & (g_t[:-1] == g_t[1:])
    return np.bincount(g_t[:-1][bad], minlength=T)


@dataclass(frozen=True)
class Audit:
    """The audit tables: one row per tournament (with its status) and one per differing player."""

    tournaments: pl.DataFrame
    players: pl.DataFrame


def audit(batch: Batch, ctx: Context, *, rules: str = "auto", tiebreaks: str | Sequence[TieBreakSpec] = FROM_FILE,
          ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Per tournament status and per player differences between declared and recomputed standings.

    Status: ``agrees``; ``points differ`` (declared points disagree with the results); ``agrees under
    EDITION`` (same order, another rule edition); ``agrees under ORDER`` (same edition, a conventional
    order); ``unexplained``; ``no declared ranks``; ``tie-break list not understood`` (a 202/212 list with
    names outside the registry; the reader warns which).

    A tournament that declares ranks but no list (from-file without 202/212, e.g. every TRF-16 file) is
    matched against the usual orders (:mod:`tbstats.analysis.usual_orders`): ``agrees under a usual
    order`` when one reproduces its ranks, else ``no usual order agrees`` (or ``points differ``) with the
    nearest. Its row then names the order (``order``, ``order_rules``, ``order_tiebreaks``: a list and
    edition that compute accepts), ``order_differ`` (players whose declared rank lies outside the ranks
    they share under it), ``order_kendall`` (normalised Kendall distance to the declared ranks) and
    ``matching`` (every NAME@EDITION that reproduces the ranks); ``rank_conflicts`` and the players' ``rank``
    are under that order, and a differing player's row gives the order and its tie-break ``values``.
    Those columns are null for the other tournaments.
    """
    if batch.n_tournaments == 0:
        return pl.DataFrame(schema=TOURNAMENT_SCHEMA), pl.DataFrame(schema=PLAYER_SCHEMA)
    d = ctx.roster   # per-player and per-tournament arrays only: no padded view of the batch
    T = len(d.n)
    specs = None if isinstance(tiebreaks, str) and tiebreaks == FROM_FILE else (
        parse_specs(tiebreaks) if isinstance(tiebreaks, str) else list(tiebreaks))
    base = standings(ctx, batch, Config("declared", rules, None if specs is None else tuple(specs)))
    # only the columns read below: sorting the whole table gathered every column (~20 bytes per game row)
    players = batch.players.select("tournament", "start_no", "name", "declared_rank", "declared_points").sort(
        "tournament", "start_no")
    declared = players["declared_rank"].fill_null(-1).to_numpy().astype(np.int64)
    pts = ctx.values(TieBreakSpec("PTS"), "fide-2026", kernel_of("PTS"))
    scale = ctx.unit()
    declared_pts = players["declared_points"].to_numpy()
    pts_differ = np.where(players["declared_points"].is_null().to_numpy(), False, declared_pts != pts.num)
    has_ranks = np.bincount(d.tix, weights=declared >= 0, minlength=T) > 0
    bad_points = np.bincount(d.tix, weights=pts_differ, minlength=T) > 0
    inv = inversions(base.steps[-1], declared, d.tix, T)

    status = np.full(T, "unexplained", dtype=object)
    status[inv == 0] = "agrees"
    # a 202/212 list present but not understood is not the same as no list (the reader warned about it)
    t = batch.tournaments.sort("tournament")
    listed = (t["tiebreaks"].list.len().fill_null(0) + t["standings_tiebreaks"].list.len().fill_null(0)).to_numpy() > 0
    status[~base.computable] = np.where(listed[~base.computable], "tie-break list not understood",
                                        "no tie-break list")
    status[bad_points & (inv > 0)] = "points differ"
    status[~has_ranks] = "no declared ranks"
    fits = fit_usual_orders(ctx, declared, ~base.computable & ~listed & has_ranks, rules)
    searched = fits.chosen >= 0
    rank = np.where(searched[d.tix], fits.ranks, base.steps[-1]).astype(np.int64)
    inv = np.where(searched, inversions(rank, declared, d.tix, T), inv)
    status[searched] = np.where(fits.exact[searched], "agrees under a usual order",
                                np.where(bad_points[searched], "points differ", "no usual order agrees"))
    open_ = status == "unexplained"
    for edition in RULESETS:
        if not open_.any() or edition == rules:
            continue
        alt = standings(ctx, batch, Config(edition, edition, base.config.specs))
        hit = open_ & (inversions(alt.steps[-1], declared, d.tix, T) == 0) & alt.computable
        status[hit] = f"agrees under {edition}"
        open_ &= ~hit
    for order in CONVENTIONAL_ORDERS:
        if not open_.any():
            break
        alt = standings(ctx, batch, Config(order, rules, tuple(parse_specs(order))))
        hit = open_ & (inversions(alt.steps[-1], declared, d.tix, T) == 0)
        status[hit] = f"agrees under {order}"
        open_ &= ~hit

    chosen = [fits.tries[k] if k >= 0 else None for k in fits.chosen]
    per_t = pl.DataFrame({
        "source": t["source"], "tournament": t["tournament"], "players": np.bincount(d.tix, minlength=T),
        "points_differ": np.bincount(d.tix, weights=pts_differ, minlength=T).astype(np.int64),
        "rank_conflicts": inv, "status": pl.Series(status.astype(str)),
        "order": [c and c.order.name for c in chosen], "order_rules": [c and c.rules for c in chosen],
        "order_tiebreaks": [c and c.tiebreaks for c in chosen],
        "order_differ": fits.differ, "order_kendall": fits.kendall, "matching": fits.matching},
        schema=TOURNAMENT_SCHEMA).with_columns(
        pl.when(pl.lit(pl.Series(searched))).then(pl.col("order_differ", "order_kendall")))
    differs = pts_differ | np.where(searched[d.tix], fits.outside, (declared >= 0) & (declared != rank))
    rows = np.nonzero(differs)[0]
    labels = np.array([None if c is None else c.label for c in chosen], dtype=object)
    per_p = pl.DataFrame({
        "source": t["source"].to_numpy()[d.tix[rows]], "tournament": d.t_ids[d.tix[rows]],
        "start_no": d.start_no[rows], "name": players["name"].gather(rows),
        "declared_points": np.where(players["declared_points"].is_null().to_numpy()[rows], np.nan,
                                    declared_pts[rows] / scale[rows]),
        "points": pts.as_float()[rows], "declared_rank": np.where(declared[rows] >= 0, declared[rows], -1),
        # (a list: from an object array starting with None, polars would make an Object column)
        "rank": rank[rows], "order": pl.Series(labels[d.tix[rows]].tolist(), dtype=pl.String),
        "values": values_text(ctx, fits, rows)},
        schema_overrides={"name": pl.String, "source": pl.String}).with_columns(
        pl.col("declared_points").fill_nan(None), pl.col("declared_rank").replace(-1, None))
    return per_t, per_p


def bounded(rows: pl.DataFrame, limit: int | None) -> pl.DataFrame:
    """The drill-down rows of the first ``limit`` tournaments that have any, in input order (None: all)."""
    if limit is None or rows.is_empty():
        return rows
    first = rows["tournament"].unique(maintain_order=True).head(limit)
    return rows.filter(pl.col("tournament").is_in(first.implode()))


