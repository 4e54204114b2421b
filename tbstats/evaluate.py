"""How well a tie-break order recovers true strength, on simulated tournaments (players' strengths known).

For each configuration (edition + ordered list) over every group of players tied on points:

- ``strongest_first``: the truly strongest member of the group ends ranked first in it (a first place still
  shared by k players counts 1/k, the chance a drawing of lots would give);
- ``kendall_tied``: Kendall's tau-b between the final order and strength inside the group (groups whose
  final order is still completely tied are left out);
- ``unbroken``: the group still holds a tie after the whole list;
- ``kendall`` / ``spearman``: rank correlation between the final standing and strength, whole tournaments;
- ``first_settles_first``: when first place is shared on points, the first tie-break alone leaves one
  player first.

Every figure comes with a 95% interval (Wilson for proportions, normal for means). A configuration whose
list is ``LOTS`` alone is the random baseline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import polars as pl
import polars.selectors as cs

from tbstats import callable_module
from tbstats.compare import Config, parse_config, standings, wilson
from tbstats.errors import TbstatsError
from tbstats.simulate import Simulation, SimulationConfig, simulate
from tbstats.standings import initial_labels
from tbstats.tiebreaks.base import Context

Z95 = 1.959964
#: Parameters a sensitivity sweep may vary, and the simulation field each one sets.
SWEEPABLE = {"rounds": "rounds", "players": "players", "bye_rate": "half_bye_rate", "draw_rate": "draw_base",
             "forfeit_rate": "forfeit_rate", "withdrawal_rate": "withdrawal_rate"}


def random_baseline(edition: str = "fide-2026") -> Config:
    """The baseline: ties on points broken by a seeded drawing of lots."""
    return parse_config(f"random={edition}:LOTS")


def _mean_ci(x: np.ndarray) -> tuple[float, float, float]:
    x = x[~np.isnan(x)]
    if len(x) == 0:
        return float("nan"), float("nan"), float("nan")
    m = float(x.mean())
    half = Z95 * float(x.std(ddof=1)) / np.sqrt(len(x)) if len(x) > 1 else float("nan")
    return m, m - half, m + half


def _padded(values: np.ndarray, group: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """[G, width] matrix of ``values`` per group (rows sorted by group), and the mask of real entries."""
    counts = np.bincount(group, minlength=n_groups)
    width = int(counts.max()) if n_groups else 0
    start = np.concatenate([[0], np.cumsum(counts)[:-1]])
    col = np.arange(len(group)) - start[group]
    out = np.zeros((n_groups, width), dtype=values.dtype)
    mask = np.zeros((n_groups, width), dtype=bool)
    out[group, col] = values
    mask[group, col] = True
    return out, mask


def tau_b(rank: np.ndarray, strength: np.ndarray, group: np.ndarray, n_groups: int,
          chunk_cells: int = 4_000_000) -> np.ndarray:
    """Kendall's tau-b per group between ``-rank`` (1 = best) and ``strength``; NaN where undefined.

    >>> tau_b(np.array([1, 2, 3, 1, 1]), np.array([3., 2., 1., 1., 2.]), np.array([0, 0, 0, 1, 1]), 2)
    array([ 1., nan])
    """
    order = np.argsort(group, kind="stable")
    r, m = _padded(-rank[order].astype(np.float64), group[order], n_groups)
    s, _ = _padded(strength[order].astype(np.float64), group[order], n_groups)
    out = np.full(n_groups, np.nan)
    width = r.shape[1]
    step = max(1, chunk_cells // max(width * width, 1))
    upper = np.triu(np.ones((width, width), dtype=bool), 1)[None]
    for lo in range(0, n_groups, step):
        sl = slice(lo, lo + step)
        dr = np.sign(r[sl, :, None] - r[sl, None, :])
        ds = np.sign(s[sl, :, None] - s[sl, None, :])
        pair = m[sl, :, None] & m[sl, None, :] & upper
        num = np.where(pair, dr * ds, 0).sum(axis=(1, 2))
        n0 = pair.sum(axis=(1, 2))
        n1 = (pair & (dr == 0)).sum(axis=(1, 2))
        n2 = (pair & (ds == 0)).sum(axis=(1, 2))
        denom = np.sqrt((n0 - n1) * (n0 - n2).astype(np.float64))
        out[sl] = np.where(denom > 0, num / np.where(denom > 0, denom, 1), np.nan)
    return out


def spearman(rank: np.ndarray, strength: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    """Spearman's rho per group between ``-rank`` and ``strength`` (average ranks for ties); NaN if undefined."""
    order = np.argsort(group, kind="stable")
    r, m = _padded(-rank[order].astype(np.float64), group[order], n_groups)
    s, _ = _padded(strength[order].astype(np.float64), group[order], n_groups)

    out = np.full(n_groups, np.nan)
    step = max(1, 2_000_000 // max(r.shape[1] ** 2, 1))
    for lo in range(0, n_groups, step):
        sl = slice(lo, lo + step)
        mm = m[sl]
        ar, as_ = average_ranks_chunk(r[sl], mm), average_ranks_chunk(s[sl], mm)
        n = mm.sum(axis=1)
        mr = ar.sum(axis=1) / np.maximum(n, 1)
        ms = as_.sum(axis=1) / np.maximum(n, 1)
        dr = np.where(mm, ar - mr[:, None], 0)
        ds = np.where(mm, as_ - ms[:, None], 0)
        denom = np.sqrt((dr * dr).sum(axis=1) * (ds * ds).sum(axis=1))
        out[sl] = np.where(denom > 0, (dr * ds).sum(axis=1) / np.where(denom > 0, denom, 1), np.nan)
    return out


def average_ranks_chunk(x: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Average ranks (1-based, ties averaged) of the masked entries of each row."""
    big = np.where(m, x, np.inf)
    less = ((big[:, None, :] < big[:, :, None]) & m[:, None, :]).sum(axis=2)
    equal = ((big[:, None, :] == big[:, :, None]) & m[:, None, :]).sum(axis=2)
    return np.where(m, less + (equal + 1) / 2, 0.0)


def evaluate(sim: Simulation, configs: Sequence[Config], *, ctx: Context | None = None) -> pl.DataFrame:
    """One row per configuration with the measures of the module docstring and their 95% intervals."""
    from tbstats.api import make_context

    batch = sim.batch
    ctx = ctx or make_context(batch)
    d = ctx.dense
    T = len(d.n)
    truth = sim.truth.sort("tournament", "start_no")
    strength = truth["strength"].to_numpy().astype(np.float64)
    if len(strength) != d.players:
        raise TbstatsError("the truth table does not match the players of the batch")
    pts_labels = initial_labels(d.tix, -d.score)
    size = np.bincount(pts_labels, minlength=d.players)[pts_labels]
    tied = size > 1
    group_ids, group = np.unique(pts_labels[tied], return_inverse=True)
    G = len(group_ids)
    # the strongest member of each tied group
    g_rows = np.nonzero(tied)[0]
    strongest = np.zeros(G, dtype=np.int64)
    order = np.lexsort((-strength[g_rows], group))
    first_in_group = np.r_[True, group[order][1:] != group[order][:-1]]
    strongest[group[order][first_in_group]] = g_rows[order][first_in_group]
    first_shared_on_points = np.bincount(d.tix, weights=(pts_labels == initial_labels(d.tix, np.zeros(
        d.players, dtype=np.int64))) & tied, minlength=T) > 0
    rows = []
    for config in configs:
        st = standings(ctx, batch, config)
        final = st.steps[-1]
        best = np.full(G, np.iinfo(np.int64).max)
        np.minimum.at(best, group, final[g_rows])
        n_best = np.bincount(group, weights=final[g_rows] == best[group], minlength=G)
        success = np.where(final[strongest] == best, 1.0 / np.maximum(n_best, 1), 0.0)
        distinct = _distinct_per_group(final[g_rows], group, G)
        unbroken = distinct < np.bincount(group, minlength=G)
        kt = tau_b(final[g_rows], strength[g_rows], group, G)
        k_all = tau_b(final, strength, d.tix, T)
        s_all = spearman(final, strength, d.tix, T)
        first_after = st.steps[1] if len(st.steps) > 1 else st.steps[0]
        settled_by_first = (np.bincount(d.tix, weights=first_after == 1, minlength=T) == 1) & first_shared_on_points
        row: dict[str, object] = {"config": config.name, "definition": str(config), "tied_groups": G}
        measures: tuple[tuple[str, np.ndarray], ...] = (
            ("strongest_first", success), ("kendall_tied", kt), ("kendall", k_all), ("spearman", s_all))
        for name, values in measures:
            mean, low, high = _mean_ci(np.asarray(values, dtype=np.float64))
            row.update({name: mean, f"{name}_lo95": low, f"{name}_hi95": high})
        for name, hits, n in (("unbroken", int(unbroken.sum()), G),
                              ("first_settles_first", int(settled_by_first.sum()), int(first_shared_on_points.sum()))):
            lo95, hi95 = wilson(hits, n)
            row.update({name: hits / max(n, 1), f"{name}_lo95": float(lo95), f"{name}_hi95": float(hi95)})
        row["shared_first_on_points"] = int(first_shared_on_points.sum())
        rows.append(row)
    return pl.DataFrame(rows).with_columns(cs.float().round(6))


def _distinct_per_group(values: np.ndarray, group: np.ndarray, G: int) -> np.ndarray:
    order = np.lexsort((values, group))
    v, g = values[order], group[order]
    new = np.r_[True, (g[1:] != g[:-1]) | (v[1:] != v[:-1])]
    return np.bincount(g[new], minlength=G)


def run(sim_config: SimulationConfig, configs: Sequence[Config], *, baseline: bool = True,
        workers: int = 1) -> tuple[Simulation, pl.DataFrame]:
    """Simulate once and evaluate every configuration (plus the random baseline)."""
    sim = simulate(sim_config, workers=workers)
    all_configs = [*configs, random_baseline(configs[0].rules if configs else "fide-2026")] if baseline else list(
        configs)
    return sim, evaluate(sim, all_configs)


def sweep(sim_config: SimulationConfig, configs: Sequence[Config], parameter: str, values: Sequence[float],
          *, baseline: bool = True, workers: int = 1) -> pl.DataFrame:
    """The measures for each value of one simulation parameter (rounds, players, bye_rate, draw_rate, ...)."""
    if parameter not in SWEEPABLE:
        raise TbstatsError(f"cannot sweep {parameter!r} (expected one of {', '.join(SWEEPABLE)})")
    field_name = SWEEPABLE[parameter]
    parts = []
    for value in values:
        cast: int | float = int(value) if field_name in ("rounds", "players") else float(value)
        changed = replace(sim_config, **{field_name: cast})  # type: ignore[arg-type]
        _, table = run(changed, configs, baseline=baseline, workers=workers)
        parts.append(table.with_columns(pl.lit(parameter).alias("parameter"), pl.lit(float(value)).alias("value")))
    return pl.concat(parts, how="diagonal_relaxed")


callable_module(__name__)  # tbstats.evaluate(...) calls tbstats.toplevel.evaluate
