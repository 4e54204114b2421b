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

The strength may be a proxy (``tbstats evaluate``: ratings, a column, an archive fit): players without one
(NaN) are left out of every measure, and a tied group with fewer than two such members is left out of
``strongest_first`` and ``kendall_tied`` (``groups_left_out``, ``players_left_out``). When several members
share the top strength, ``strongest_first`` credits the share of the group's first place held by one of
them (with distinct strengths this is the 1/k rule above). :func:`measure` gives one batch's
:class:`Partial`; :func:`combine` joins those of batches of whole tournaments and :func:`table` averages.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

import numpy as np
import polars as pl
import polars.selectors as cs

from tbstats.analysis.compare import wilson
from tbstats.analysis.kendall import Against, codes
from tbstats.engine.configs import Config, parse_config, rank_all
from tbstats.engine.standings import initial_labels
from tbstats.engine.tiebreaks.base import Context
from tbstats.errors import TbstatsError
from tbstats.io.progress import Progress
from tbstats.io.progress import progress as progress_bar
from tbstats.model.batch import Batch
from tbstats.simulation import Simulation, SimulationConfig, simulate

Z95 = 1.959964
#: Parameters a sensitivity sweep may vary, and the simulation field each one sets.
SWEEPABLE = {"rounds": "rounds", "players": "players", "bye_rate": "half_bye_rate", "draw_rate": "draw_base",
             "forfeit_rate": "forfeit_rate", "withdrawal_rate": "withdrawal_rate"}


def random_baseline(edition: str = "fide-2026") -> Config:
    """The baseline: ties on points broken by a seeded drawing of lots."""
    return parse_config(f"random={edition}:LOTS")


def _mean_ci(x: np.ndarray, bounds: tuple[float, float] = (-np.inf, np.inf)) -> tuple[float, float, float]:
    """The mean of ``x`` and its normal 95% interval, clipped to ``bounds``, the range the measure can take: the
    normal approximation runs past it when the mean is near a bound and the groups are few
    (``strongest_first`` 0.99 +- 0.02 is at most 1)."""
    x = x[~np.isnan(x)]
    if len(x) == 0:
        return float("nan"), float("nan"), float("nan")
    m = float(x.mean())
    half = Z95 * float(x.std(ddof=1)) / np.sqrt(len(x)) if len(x) > 1 else float("nan")
    return m, max(m - half, bounds[0]), min(m + half, bounds[1])


def spearman(rank: np.ndarray, strength: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    """Spearman's rho per group between ``-rank`` and ``strength`` (average ranks for ties); NaN if undefined.

    :func:`pearson` of the average ranks: a few passes over the rows, whatever the groups' sizes.

    >>> spearman(np.array([1, 2, 3, 1, 2]), np.array([3., 1., 2., 5., 5.]), np.array([0, 0, 0, 1, 1]), 2)
    array([0.5, nan])
    """
    group = np.asarray(group, dtype=np.int64)
    return pearson(average_ranks(-rank.astype(np.float64), group), average_ranks(strength.astype(np.float64), group),
                   group, n_groups)


def pearson(x: np.ndarray, y: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    """Pearson's correlation per group (``group`` int64); NaN where either side is constant or the group empty."""
    n = np.maximum(np.bincount(group, minlength=n_groups), 1)
    dx = x - (np.bincount(group, weights=x, minlength=n_groups) / n)[group]
    dy = y - (np.bincount(group, weights=y, minlength=n_groups) / n)[group]
    cov = np.bincount(group, weights=dx * dy, minlength=n_groups)
    denom = np.sqrt(np.bincount(group, weights=dx * dx, minlength=n_groups)
                    * np.bincount(group, weights=dy * dy, minlength=n_groups))
    return np.where(denom > 0, cov / np.where(denom > 0, denom, 1), np.nan)


def average_ranks(values: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Each value's average rank in its group (1-based; tied values share the mean of their places; a NaN
    is below nothing and equal to nothing: 0.5), by one sort of all the groups: of a key of (group, the value's
    code) when it fits in 63 bits, else of the pairs.

    >>> average_ranks(np.array([5., 3., 5., 1., 2.]), np.array([0, 0, 0, 1, 1])).tolist()
    [2.5, 1.0, 2.5, 1.0, 2.0]
    """
    n = len(values)
    group = np.asarray(group, dtype=np.int64)
    code = codes(values)   # (a NaN: one code above every number)
    bits = int(code.max()).bit_length() if n else 0
    if n and int(group.max()).bit_length() + bits < 63:
        key = (group << bits) | code
        order = np.argsort(key)
        key = key[order]
        g = key >> bits
        new = np.ones(n, dtype=bool)
        new[1:] = key[1:] != key[:-1]
    else:
        order = np.lexsort((code, group))
        g, c = group[order], code[order]
        new = np.ones(n, dtype=bool)
        new[1:] = (g[1:] != g[:-1]) | (c[1:] != c[:-1])
    starts = np.flatnonzero(new)
    length = np.diff(np.append(starts, n))
    run = np.cumsum(new) - 1
    size = np.bincount(g) if n else np.zeros(0, dtype=np.int64)
    first = (np.cumsum(size) - size)[g]
    less, equal = starts[run] - first, length[run]
    out = np.empty(n)
    place = less + (equal + 1) / 2
    out[order] = np.where(np.isnan(values[order]), 0.5, place) if values.dtype.kind == "f" else place
    return out


@dataclass(frozen=True)
class Partial:
    """The measures of one batch before averaging: per-group and per-tournament values, and counts.

    Partials of batches of whole tournaments :func:`combine` into the partial of their union: the values
    are concatenated in batch order and the counts added, so the table does not depend on the split.
    """

    configs: tuple[Config, ...]
    tied_groups: int = 0
    groups_left_out: int = 0
    players_left_out: int = 0
    shared_first_on_points: int = 0
    #: config name -> measure -> values (strongest_first, kendall_tied per measured group; kendall, spearman
    #: per tournament; unbroken per tied group; first_settles_first per tournament whose first is shared)
    values: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)


MEANS: Final = ("strongest_first", "kendall_tied", "kendall", "spearman")
#: The range each mean can take (its interval is clipped to it).
BOUNDS: Final = {"strongest_first": (0.0, 1.0), "kendall_tied": (-1.0, 1.0), "kendall": (-1.0, 1.0),
                 "spearman": (-1.0, 1.0)}
RATES: Final = ("unbroken", "first_settles_first")


def measure(batch: Batch, strength: np.ndarray, configs: Sequence[Config], *, lots_seed: int = 0,
            ctx: Context | None = None) -> Partial:
    """The partial measures of one batch; ``strength`` is per player in (tournament, start_no) order, NaN
    where unknown (such players are left out of every measure)."""
    from tbstats.engine.compute import make_context

    ctx = ctx or make_context(batch)
    ctx.set_lots(lots_seed)   # the baseline's order (LOTS), keyed on each event's fingerprint (make_context)
    d = ctx.roster   # (the scores from each view: Context.gathered, not the padded view of the whole batch)
    T = len(d.n)
    strength = np.asarray(strength, dtype=np.float64)
    if len(strength) != d.players:
        raise TbstatsError("the strength table does not match the players of the batch")
    known = ~np.isnan(strength)
    pts_labels = initial_labels(d.tix, -ctx.gathered(lambda view: view.score))
    size = np.bincount(pts_labels, minlength=d.players)[pts_labels]
    tied = size > 1
    g_rows = np.nonzero(tied)[0]
    _, group = np.unique(pts_labels[g_rows], return_inverse=True)
    G = int(group.max()) + 1 if len(group) else 0
    n_known = np.bincount(group, weights=known[g_rows], minlength=G)
    measured_group = n_known >= 2
    m_rows = g_rows[known[g_rows] & measured_group[group]]
    _, m_group = np.unique(pts_labels[m_rows], return_inverse=True)
    M = int(m_group.max()) + 1 if len(m_group) else 0
    top = np.full(M, -np.inf)
    np.maximum.at(top, m_group, strength[m_rows])
    is_top = strength[m_rows] == top[m_group]
    first_shared = np.bincount(d.tix, weights=(pts_labels == initial_labels(d.tix, np.zeros(
        d.players, dtype=np.int64))) & tied, minlength=T) > 0
    out = Partial(tuple(configs), G, int((~measured_group).sum()), int((~known).sum()), int(first_shared.sum()))
    # the strength's side of each measure, prepared once for every configuration
    tix_known = d.tix[known].astype(np.int64)
    in_tied, in_event = Against(strength[m_rows], m_group, M), Against(strength[known], tix_known, T)
    strength_ranks = average_ranks(strength[known], tix_known)
    for config, st in zip(configs, rank_all(ctx, batch, configs), strict=True):
        final = st.steps[-1]
        # (of the ranks' type: ``ufunc.at`` into another type casts cell by cell, 30x slower)
        best = np.full(M, np.iinfo(final.dtype).max, dtype=final.dtype)
        np.minimum.at(best, m_group, final[m_rows])
        first = final[m_rows] == best[m_group]
        n_best = np.bincount(m_group, weights=first, minlength=M)
        top_first = np.bincount(m_group, weights=first & is_top, minlength=M)
        first_after = st.steps[1] if len(st.steps) > 1 else st.steps[0]
        settled = np.bincount(d.tix, weights=first_after == 1, minlength=T) == 1
        out.values[config.name] = {
            # the player ranked first (by lots among those sharing first) is one of the strongest
            "strongest_first": top_first / np.maximum(n_best, 1),
            "kendall_tied": in_tied.tau_b(final[m_rows]),
            "kendall": in_event.tau_b(final[known]),
            "spearman": pearson(average_ranks(-final[known].astype(np.int64), tix_known), strength_ranks,
                                tix_known, T),
            "unbroken": _distinct_per_group(final[g_rows], group, G) < np.bincount(group, minlength=G),
            "first_settles_first": settled[first_shared],
        }
    return out


def combine(parts: Sequence[Partial]) -> Partial:
    """The partial of the union of batches of whole tournaments (values in batch order, counts added)."""
    if not parts:
        raise TbstatsError("nothing to combine")
    configs = parts[0].configs
    names = [c.name for c in configs]
    return Partial(
        configs, sum(p.tied_groups for p in parts), sum(p.groups_left_out for p in parts),
        sum(p.players_left_out for p in parts), sum(p.shared_first_on_points for p in parts),
        {name: {m: np.concatenate([p.values[name][m] for p in parts]) for m in (*MEANS, *RATES)}
         for name in names})


def table(partial: Partial) -> pl.DataFrame:
    """One row per configuration with the measures of the module docstring and their 95% intervals."""
    rows = []
    for config in partial.configs:
        values = partial.values[config.name]
        row: dict[str, object] = {"config": config.name, "definition": str(config),
                                  "tied_groups": partial.tied_groups}
        for name in MEANS:
            mean, low, high = _mean_ci(np.asarray(values[name], dtype=np.float64), BOUNDS[name])
            row.update({name: mean, f"{name}_lo95": low, f"{name}_hi95": high})
        for name in RATES:
            hits, n = int(values[name].sum()), len(values[name])
            lo95, hi95 = wilson(hits, n)
            row.update({name: hits / max(n, 1), f"{name}_lo95": float(lo95), f"{name}_hi95": float(hi95)})
        row["shared_first_on_points"] = partial.shared_first_on_points
        row["groups_left_out"] = partial.groups_left_out
        row["players_left_out"] = partial.players_left_out
        rows.append(row)
    return pl.DataFrame(rows).with_columns(cs.float().round(6))


def truth_strength(sim: Simulation) -> np.ndarray:
    """The simulated players' true strengths in (tournament, start_no) order."""
    return sim.truth.sort("tournament", "start_no")["strength"].to_numpy().astype(np.float64)


def with_strength(sim: Simulation) -> Batch:
    """The simulated batch with each player's true strength as the players' optional ``strength`` column."""
    keys = ["tournament", "start_no"]
    # only the keys go through the join: the players' other columns are shared, not copied
    strength = sim.batch.players.select(keys).join(sim.truth.select(*keys, "strength"), on=keys, how="left",
                                                    maintain_order="left")["strength"]
    return replace(sim.batch, players=sim.batch.players.with_columns(strength))


#: Tournaments :func:`evaluate` measures at a time (the figures do not depend on it; a bar moves run by run).
MEASURED_AT_ONCE: Final = 1000


def evaluate(sim: Simulation, configs: Sequence[Config], *, ctx: Context | None = None,
             progress: Progress | None = None) -> pl.DataFrame:
    """One row per configuration with the measures of the module docstring, against the true strengths.

    The drawing of lots (``LOTS``, the baseline) is seeded with the simulation's seed. Without ``ctx`` the
    tournaments are measured in runs of about :data:`MEASURED_AT_ONCE` (whole tournaments, combined exactly);
    ``progress`` (a bar over the tournaments) moves run by run.
    """
    from tbstats.engine.compute import runs

    if ctx is not None:
        return table(measure(sim.batch, truth_strength(sim), configs, lots_seed=sim.config.seed, ctx=ctx))
    parts = []
    for run in runs(sim.batch, -(-sim.batch.n_tournaments // MEASURED_AT_ONCE)):
        strength = run.players.select("tournament", "start_no").sort("tournament", "start_no").join(
            sim.truth, on=["tournament", "start_no"], how="left", maintain_order="left")["strength"]
        parts.append(measure(run, strength.to_numpy().astype(np.float64), configs, lots_seed=sim.config.seed))
        if progress is not None:
            progress.advance(run.n_tournaments)
    return table(combine(parts))


def _distinct_per_group(values: np.ndarray, group: np.ndarray, G: int) -> np.ndarray:
    order = np.lexsort((values, group))
    v, g = values[order], group[order]
    new = np.ones(len(g), dtype=bool)   # empty when no group is tied (issue 11)
    new[1:] = (g[1:] != g[:-1]) | (v[1:] != v[:-1])
    return np.bincount(g[new], minlength=G)


def run(sim_config: SimulationConfig, configs: Sequence[Config], *, baseline: bool = True,
        workers: int = 1, progress: bool = False, label: str = "",
        simulated: Callable[[Simulation], None] | None = None) -> tuple[Simulation, pl.DataFrame]:
    """Simulate once and evaluate every configuration (plus the random baseline); with ``progress`` a bar
    over the events on standard error (when it is a terminal) for each of the two steps. ``simulated(sim)``
    runs in between (``simulate --archive`` writes the archive there, before the evaluation's memory is taken)."""
    n = sim_config.tournaments
    with progress_bar(n, "events", progress, label=f"{label}simulate") as bar:
        sim = simulate(sim_config, workers=workers, progress=bar)
    if simulated is not None:
        simulated(sim)
    all_configs = [*configs, random_baseline(configs[0].rules if configs else "fide-2026")] if baseline else list(
        configs)
    with progress_bar(n, "events", progress, label=f"{label}measure") as bar:
        return sim, evaluate(sim, all_configs, progress=bar)


def sweep(sim_config: SimulationConfig, configs: Sequence[Config], parameter: str, values: Sequence[float],
          *, baseline: bool = True, workers: int = 1, progress: bool = False) -> pl.DataFrame:
    """The measures for each value of one simulation parameter (rounds, players, bye_rate, draw_rate, ...)."""
    if parameter not in SWEEPABLE:
        raise TbstatsError(f"cannot sweep {parameter!r} (expected one of {', '.join(SWEEPABLE)})")
    field_name = SWEEPABLE[parameter]
    parts = []
    for value in values:
        cast: int | float = int(value) if field_name in ("rounds", "players") else float(value)
        changed = replace(sim_config, **{field_name: cast})  # type: ignore[arg-type]
        _, table = run(changed, configs, baseline=baseline, workers=workers, progress=progress,
                       label=f"{parameter}={value:g}: ")
        parts.append(table.with_columns(pl.lit(parameter).alias("parameter"), pl.lit(float(value)).alias("value")))
    return pl.concat(parts, how="diagonal_relaxed")


