"""Compare configurations (edition + ordered tie-break list) over an archive: how often results change.

Work is shared: the batch is read once, one :class:`~tbstats.engine.tiebreaks.base.Context` caches each edition's
unplayed-round stage and each distinct (tie-break, edition) once, so an extra configuration costs only the
tie-breaks it adds and one ranking pass.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import polars as pl
import polars.selectors as cs

from tbstats.analysis.kendall import kendall_distances
from tbstats.engine.configs import Config, Standings, rank_all
from tbstats.engine.tiebreaks import FIXED_EDITION, get_tiebreak, kernel_of
from tbstats.engine.tiebreaks.base import Context
from tbstats.errors import TbstatsError
from tbstats.model.batch import Batch
from tbstats.model.dense import players_in_order, tournaments_by_id
from tbstats.model.grid import row_sum
from tbstats.model.spec import TieBreakSpec
from tbstats.model.teams.batch import team_event_ids

# ------------------------------------------------------------------------------------------- statistics

def wilson(k: np.ndarray | int, n: np.ndarray | int, z: float = 1.959964) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score 95% interval for a proportion k/n (0..1 when n is 0).

    >>> lo, hi = wilson(5, 100); round(float(lo), 4), round(float(hi), 4)
    (0.0215, 0.1118)
    """
    k_arr, n_arr = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    safe = np.maximum(n_arr, 1)
    p = k_arr / safe
    denom = 1 + z * z / safe
    centre = (p + z * z / (2 * safe)) / denom
    half = z * np.sqrt(p * (1 - p) / safe + z * z / (4 * safe * safe)) / denom
    lo = np.where(n_arr > 0, centre - half, 0.0)
    hi = np.where(n_arr > 0, centre + half, 1.0)
    return np.clip(lo, 0, 1), np.clip(hi, 0, 1)


class _Events:
    """The players' events (``tix``, ``T`` events): per event, whether any of its players holds a mask, by one
    ``reduceat`` over the players in event order (the view's order: no gather of the players' events)."""

    def __init__(self, tix: np.ndarray, T: int) -> None:
        counts = np.bincount(tix, minlength=T)
        self.T = T
        self.nonempty = counts > 0
        self.starts = (np.cumsum(counts) - counts)[self.nonempty]
        self.order = None if bool((tix[1:] >= tix[:-1]).all()) else np.argsort(tix, kind="stable")

    def any(self, mask: np.ndarray) -> np.ndarray:
        out = np.zeros(self.T, dtype=bool)
        if len(self.starts):
            out[self.nonempty] = np.logical_or.reduceat(mask if self.order is None else mask[self.order],
                                                        self.starts)
        return out


def _sets_differ(a: np.ndarray, b: np.ndarray, k: int, events: _Events) -> np.ndarray:
    """Per tournament: the set of players ranked <= k differs between the two rankings."""
    return events.any((a <= k) != (b <= k))


@dataclass(frozen=True)
class Comparison:
    """All tables of a comparison (polars DataFrames)."""

    pairs: pl.DataFrame          # one row per pair of configurations
    configs: pl.DataFrame        # one row per configuration: ties at the top, depth that settled them
    tournaments: pl.DataFrame    # one row per tournament and pair: the change flags and features
    drilldown: pl.DataFrame      # tournaments whose winner changed, with players and deciding values
    depth: pl.DataFrame          # per configuration and list position: tournaments whose top tie it settled


def features(batch: Batch, ctx: Context) -> pl.DataFrame:
    """Per tournament features for breakdowns: rounds, players, type, share of unplayed rounds, year, rating."""
    d = ctx.roster
    T = len(d.n)
    players = np.bincount(d.tix, minlength=T)
    # per player, counted rounds and those not played over the board, bucket by bucket (no padded view; compiled
    # row sums: rows this short)
    per_row = ctx.gathered(lambda v: np.stack([row_sum(v.counted & ~v.played), row_sum(v.counted)], axis=1))
    unplayed = np.bincount(d.tix, weights=per_row[:, 0], minlength=T)
    cells = np.bincount(d.tix, weights=per_row[:, 1], minlength=T)
    rated = d.rating > 0
    mean_rating = np.bincount(d.tix, weights=np.where(rated, d.rating, 0), minlength=T) / np.maximum(
        np.bincount(d.tix, weights=rated, minlength=T), 1)
    t = tournaments_by_id(batch)
    share = unplayed / np.maximum(cells, 1)
    # (the text columns gathered from their few labels by code: a numpy array of strings converts string by string)
    kind = np.where(np.isin(t["tournament"].to_numpy(), team_event_ids(batch)), 0, np.where(d.round_robin, 1, 2))
    band = np.select([share == 0, share < 0.05, share < 0.15], [0, 1, 2], 3)
    return pl.DataFrame({
        "tournament": t["tournament"], "source": t["source"],
        "rounds": d.n, "players": players,
        "type": pl.Series(["team", "round_robin", "swiss"]).gather(kind),
        "unplayed_share": share,
        "unplayed": pl.Series(["0%", "<5%", "5-15%", ">=15%"]).gather(band),
        "year": t["start_date"].dt.year(),
        "rating_band": pl.Series(np.where(mean_rating > 0, (mean_rating // 200 * 200).astype(int), -1)).cast(
            pl.String).replace("-1", "unrated"),
    })


@dataclass(frozen=True)
class Partial:
    """What one batch adds to a comparison: exact counts, per-tournament rows and a bounded drill-down.

    Tournament ids are those of the batch; :meth:`shifted` moves them on. :func:`combine` folds partials
    taken in input order into the same :class:`Comparison` the whole archive in one batch gives.
    """

    configs: tuple[Config, ...]
    tournaments: pl.DataFrame    # per tournament and pair (pair-major within the batch)
    shared_first: np.ndarray     # [pairs, 2] tournaments with a shared first place under a and b
    counts: np.ndarray           # [configs, 4] tournaments, not computable, tied on points at the top, unsettled
    settled: list[np.ndarray]    # per configuration: tournaments whose top tie was settled at depth 1, 2, ...
    drilldown: pl.DataFrame      # with a "_pair" column, at most ``limit`` tournaments per pair
    limit: int | None

    def shifted(self, offset: int) -> Partial:
        def move(df: pl.DataFrame) -> pl.DataFrame:
            return df.with_columns(pl.col("tournament") + offset) if offset and "tournament" in df.columns else df

        return Partial(self.configs, move(self.tournaments), self.shared_first, self.counts, self.settled,
                       move(self.drilldown), self.limit)


def check_configs(configs: Sequence[Config]) -> None:
    if len(configs) < 2:
        raise TbstatsError("compare needs at least two configurations (--config NAME=EDITION:SPECS, twice)")
    names = [c.name for c in configs]
    if len(set(names)) != len(names):
        raise TbstatsError(f"configuration names must differ: {', '.join(names)}")


def partial(batch: Batch, configs: Sequence[Config], *, top: int = 10, ctx: Context | None = None,
            drilldown_limit: int | None = None) -> Partial:
    """Compare every pair of configurations over one batch (rules.md 8: competition ranks, shared ties)."""
    from tbstats.engine.compute import make_context

    check_configs(configs)
    ctx = ctx or make_context(batch)
    d = ctx.roster
    T = len(d.n)
    feats = features(batch, ctx)
    results = rank_all(ctx, batch, configs)
    ctx.release_stages(gathers=True)   # the rest reads ranks and cached values only
    pairs = list(combinations(range(len(configs)), 2))
    final = [r.steps[-1] for r in results]
    ok = np.array([results[a].computable & results[b].computable for a, b in pairs]).reshape(len(pairs), T)
    events = _Events(d.tix, T)
    anyr = np.array([events.any(final[a] != final[b]) for a, b in pairs]).reshape(len(pairs), T) & ok
    kd = kendall_distances(final, pairs, anyr, d.tix, T)   # identical rankings are at distance 0: not paired
    source_of = np.asarray(batch.tournaments.sort("tournament")["source"].to_numpy())
    # the names in the view's order, a polars column (no sort of the whole players table, no Python strings)
    name_of = players_in_order(batch.players.select("tournament", "start_no", "name"), ctx.player_order)["name"]
    tour_parts, drill_parts, shared = [], [], []
    shared_first = [_shared_first(r, d.tix, T) for r in final]
    explain = _explain_parts(source_of)
    named = [pl.repeat(c.name, T, dtype=pl.String, eager=True) for c in configs]   # one column per configuration
    for p, (a, b) in enumerate(pairs):
        ra, rb = final[a], final[b]
        winner = _sets_differ(ra, rb, 1, events) & ok[p]
        # the features' columns are shared by every pair's rows, not copied
        tour_parts.append(pl.concat([feats, pl.DataFrame({
            "a": named[a], "b": named[b], "computable": ok[p],
            "winner_changed": winner, "podium_changed": _sets_differ(ra, rb, 3, events) & ok[p],
            "topk_changed": _sets_differ(ra, rb, top, events) & ok[p], "any_rank_changed": anyr[p],
            "kendall_distance": kd[p]})], how="horizontal"))
        shared.append([int((shared_first[c] & ok[p]).sum()) for c in (a, b)])
        if drilldown_limit is not None:
            winner = winner & (np.cumsum(winner) <= drilldown_limit)
        drill_parts.append(_drilldown(ctx, source_of, explain, name_of, configs[a], configs[b], results[a],
                                      results[b], winner, p))
    counts, settled = [], []
    for r in results:
        tied = [_shared_first(step, d.tix, T) & r.computable for step in r.steps]
        counts.append([int(r.computable.sum()), int((~r.computable).sum()), int(tied[0].sum()), int(tied[-1].sum())])
        settled.append(np.array([int((tied[k - 1] & ~tied[k]).sum()) for k in range(1, len(r.steps))], dtype=np.int64))
    return Partial(tuple(configs), pl.concat(tour_parts), np.array(shared, dtype=np.int64).reshape(len(pairs), 2),
                   np.array(counts, dtype=np.int64), settled,
                   pl.concat(drill_parts, how="diagonal_relaxed"), drilldown_limit)


def merge(parts: Sequence[Partial]) -> Partial:
    """One partial from the partials of consecutive runs of tournaments of a batch
    (:func:`tbstats.engine.compute.runs`), as :func:`partial` of the whole batch would give it to :func:`combine`."""
    if len(parts) == 1:
        return parts[0]
    configs, limit = parts[0].configs, parts[0].limit
    pairs = list(combinations(range(len(configs)), 2))
    tournaments = _pair_major([p.tournaments for p in parts], len(pairs))
    drill = pl.concat([p.drilldown for p in parts], how="diagonal_relaxed").sort("_pair", maintain_order=True)
    if limit is not None and drill.height:
        drill = drill.filter(pl.col("tournament").rank("dense").over("_pair") <= limit)
    return Partial(configs, tournaments, sum((p.shared_first for p in parts[1:]), start=parts[0].shared_first),
                   sum((p.counts for p in parts[1:]), start=parts[0].counts), _settled(parts), drill, limit)


def _settled(parts: Sequence[Partial]) -> list[np.ndarray]:
    """Per configuration, the tournaments settled at each depth, summed over the partials."""
    out = []
    for c in range(len(parts[0].configs)):
        depth = max(len(p.settled[c]) for p in parts)
        out.append(sum((np.pad(p.settled[c], (0, depth - len(p.settled[c]))) for p in parts),
                       start=np.zeros(depth, dtype=np.int64)))
    return out


def combine(parts: Sequence[Partial]) -> Comparison:
    """Fold the partials of consecutive batches (ids already shifted) into one comparison."""
    if not parts:
        raise TbstatsError("nothing to combine")
    configs = parts[0].configs
    pairs = list(combinations(range(len(configs)), 2))
    # one batch's rows are pair-major already (and share its features' buffers)
    tournaments = _pair_major([p.tournaments for p in parts], len(pairs)) if len(parts) > 1 else parts[0].tournaments
    shared = sum((p.shared_first for p in parts), start=np.zeros((len(pairs), 2), dtype=np.int64))
    # pair-major with every tournament once per pair: pair k's rows are the k-th block of each column
    per_pair = tournaments.height // len(pairs)
    flags = {c: tournaments[c].to_numpy().reshape(len(pairs), per_pair) for c in (
        "computable", "winner_changed", "podium_changed", "topk_changed", "any_rank_changed", "kendall_distance")}
    pair_rows = []
    for k, (a, b) in enumerate(pairs):
        if per_pair:
            assert tournaments["a"][k * per_pair] == configs[a].name and tournaments["b"][k * per_pair] == \
                configs[b].name, "rows of a comparison's tournaments table are pair-major"
        ok = flags["computable"][k]
        t = {c: v[k][ok] for c, v in flags.items()}
        n = int(ok.sum())
        winner = int(t["winner_changed"].sum())
        lo, hi = wilson(winner, n)
        pair_rows.append({
            "a": configs[a].name, "b": configs[b].name, "tournaments": n,
            # no tournament in common: the rate and its interval are not defined (null, n/a), not 0 in 0-1
            "winner_changed": winner, "winner_changed_rate": winner / n if n else None,
            "winner_changed_lo95": float(lo) if n else None, "winner_changed_hi95": float(hi) if n else None,
            "podium_changed": int(t["podium_changed"].sum()), "topk_changed": int(t["topk_changed"].sum()),
            "any_rank_changed": int(t["any_rank_changed"].sum()),
            "mean_kendall_distance": float(t["kendall_distance"].mean()) if n else None,
            "shared_first_a": int(shared[k, 0]), "shared_first_b": int(shared[k, 1]),
        })
    counts = sum((p.counts for p in parts), start=np.zeros((len(configs), 4), dtype=np.int64))
    settled = _settled(parts)
    drill = pl.concat([p.drilldown for p in parts], how="diagonal_relaxed").sort("_pair", maintain_order=True)
    limit = parts[0].limit
    if limit is not None and drill.height:
        rank = pl.col("tournament").rank("dense").over("_pair")
        drill = drill.filter(rank <= limit)
    return Comparison(
        pairs=pl.DataFrame(pair_rows).with_columns(
            pl.col(c).cast(pl.Float64) for c in ("winner_changed_rate", "winner_changed_lo95", "winner_changed_hi95",
                                                 "mean_kendall_distance")).with_columns(cs.float().round(6)),
        configs=pl.DataFrame([_config_row(c, counts[k]) for k, c in enumerate(configs)]),
        tournaments=tournaments,
        drilldown=drill.drop("_pair"),
        depth=pl.concat([_depth_rows(c, settled[k], counts[k]) for k, c in enumerate(configs)]),
    )


def _pair_major(tables: Sequence[pl.DataFrame], n_pairs: int) -> pl.DataFrame:
    """The per-tournament rows of consecutive batches, each pair-major (its tournaments once per pair, pairs in
    their order), as the rows of every pair together, pairs in their order and batches in theirs within a pair:
    slices of the batches' tables put one after another, no row copied."""
    sizes = [t.height // n_pairs for t in tables]
    return pl.concat([t.slice(k * n, n) for k in range(n_pairs) for t, n in zip(tables, sizes, strict=True)],
                     rechunk=False)


def compare(batch: Batch, configs: Sequence[Config], *, top: int = 10, ctx: Context | None = None,
            drilldown_limit: int | None = None) -> Comparison:
    """Compare every pair of configurations over the batch (rules.md 8: competition ranks, shared ties).

    ``drilldown_limit`` keeps the drill-down of at most that many tournaments per pair (the first ones).
    """
    return combine([partial(batch, configs, top=top, ctx=ctx, drilldown_limit=drilldown_limit)])


def breakdown(comparison: Comparison, by: str) -> pl.DataFrame:
    """Rates of change per pair and per value of a tournament feature (``rounds``, ``players``, ``type``,
    ``unplayed``, ``year``, ``rating_band``), with 95% intervals for the winner-change rate."""
    t = comparison.tournaments
    if by not in t.columns or by in ("a", "b", "tournament", "source"):
        raise TbstatsError(f"unknown feature {by!r} (expected rounds, players, type, unplayed, year, rating_band)")
    g = t.filter("computable").group_by("a", "b", by).agg(
        pl.len().alias("tournaments"), pl.col("winner_changed").sum(), pl.col("podium_changed").sum(),
        pl.col("topk_changed").sum(), pl.col("any_rank_changed").sum(),
        pl.col("kendall_distance").mean().alias("mean_kendall_distance")).sort("a", "b", by)
    lo, hi = wilson(g["winner_changed"].to_numpy(), g["tournaments"].to_numpy())
    return g.with_columns((pl.col("winner_changed") / pl.col("tournaments")).alias("winner_changed_rate"),
                          pl.Series("winner_changed_lo95", lo), pl.Series("winner_changed_hi95", hi)).with_columns(
        cs.float().round(6))


def _shared_first(ranks: np.ndarray, tix: np.ndarray, T: int) -> np.ndarray:
    return np.bincount(tix[ranks == 1], minlength=T) > 1


def _config_row(config: Config, counts: np.ndarray) -> dict[str, object]:
    computable, missing, tied_on_points, unsettled = (int(x) for x in counts)
    return {"config": config.name, "definition": str(config), "tournaments": computable,
            "not_computable": missing, "tiebreaks_needed_at_top": tied_on_points,
            "tiebreaks_needed_rate": float(tied_on_points / max(computable, 1)),
            "settled": tied_on_points - unsettled, "not_settled": unsettled}


def _depth_rows(config: Config, settled: np.ndarray, counts: np.ndarray) -> pl.DataFrame:
    """For each list position k: tournaments whose tie for first was settled exactly by tie-break k."""
    n_steps = len(settled) + 1
    labels = ["PTS", *(str(x) for x in config.specs)] if config.specs is not None else [
        "PTS", *(f"#{k}" for k in range(1, n_steps))]
    rows = [{"config": config.name, "depth": k, "tiebreak": labels[k], "settled_here": int(settled[k - 1])}
            for k in range(1, n_steps)]
    rows.append({"config": config.name, "depth": n_steps, "tiebreak": "(not settled)",
                 "settled_here": int(counts[3])})
    return pl.DataFrame(rows, schema={"config": pl.String, "depth": pl.Int64, "tiebreak": pl.String,
                                      "settled_here": pl.Int64})


def _explain_parts(sources: np.ndarray) -> tuple[list[str], list[str]]:
    """Per tournament, what the command that explains a player's value in it starts with (``tbstats explain
    FILE``, the file quoted for a shell) and ends with (`` --tournament K`` when the file holds several events,
    source ``FILE#K+1``; else nothing): once per tournament, not per row of every pair's drill-down."""
    texts = sources.tolist()
    heads = [f"tbstats explain {shlex.quote(src.split('#')[0])}" for src in texts]
    tails = [f" --tournament {int(src.rsplit('#', 1)[1]) - 1}" if "#" in src else "" for src in texts]
    return heads, tails


def _drilldown(ctx: Context, sources: np.ndarray, explain: tuple[list[str], list[str]], names: pl.Series,
               a: Config, b: Config, sa: Standings, sb: Standings, changed: np.ndarray, pair: int) -> pl.DataFrame:
    """Players ranked first under either configuration, in tournaments whose winner changed (``explain``: the
    tournaments' :func:`_explain_parts`; ``pair``: the pair's number, in a ``_pair`` column)."""
    d = ctx.roster
    rows = np.nonzero(changed[d.tix] & ((sa.steps[-1] == 1) | (sb.steps[-1] == 1)))[0]
    pts = ctx.values(TieBreakSpec("PTS"), "fide-2026", kernel_of("PTS"))
    source, start_no = sources[d.tix[rows]], d.start_no[rows]
    columns: dict[str, object] = {
        "a": [a.name] * len(rows), "b": [b.name] * len(rows), "source": source, "tournament": d.t_ids[d.tix[rows]],
        "start_no": start_no, "name": names.gather(rows),
        "points": pts.take(rows).as_float(), "rank_a": sa.steps[-1][rows].astype(np.int64),
        "rank_b": sb.steps[-1][rows].astype(np.int64)}
    for cfg in (a, b):
        for spec in cfg.specs or ():
            col = f"{cfg.name}:{spec}"
            if get_tiebreak(spec.name).kind == "partition" or col in columns:
                continue
            v = ctx.values(spec, FIXED_EDITION.get(spec.name, spec.edition or cfg.rules), kernel_of(spec.name))
            # undefined values are nulls (no NaN in the output); built at once, not one frame per column
            taken = v.take(rows)
            columns[col] = pl.Series(col, taken.as_float(), nan_to_null=not taken.defined.all())
    first = next((s for s in (a.specs or ()) if get_tiebreak(s.name).kind == "value"), None)
    middle = f" --tiebreak {first if first else 'BH'} --rules {a.rules}"
    heads, tails = explain
    columns["explain"] = [f"{heads[t]} --player {no}{middle}{tails[t]}"
                          for t, no in zip(d.tix[rows].tolist(), start_no.tolist(), strict=True)]
    columns["_pair"] = np.full(len(rows), pair, dtype=np.int32)
    return pl.DataFrame(columns, schema_overrides={"name": pl.String, "source": pl.String, "explain": pl.String})


