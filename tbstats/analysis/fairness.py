"""Whom tie-breaks favour: how often players tied on points are ranked first of their group, by feature.

For every group of k >= 2 players tied on points and every configuration, a player "wins the tie" when his
final rank is the best of the group; a first place still shared by m players counts 1/m (the chance a
drawing of lots would give). Without any information a player would win 1/k of his ties: the *chance*
rate. Per configuration and per value of a player feature, the table gives the players, the ties won,
the rate with a 95% Wilson interval, and the chance rate. The features (:data:`BREAKDOWNS`):

- ``unplayed``: each kind of unplayed round the player had in the counted rounds (a player with several
  kinds counts under each): ``half_bye``, ``zero_bye``, ``full_bye``, ``forfeit_win``, ``forfeit_loss``,
  ``double_forfeit``, ``pab`` (pairing-allocated bye), ``withdrawal`` (a run of rounds not paired, without
  result, up to the last round), ``late_entry`` (such a run from round 1), ``absent`` (such rounds
  elsewhere); ``none`` when every round was played;
- ``colour``: whites minus blacks over the games played over the board (``<=-2`` .. ``>=+2``);
- ``rating_band``: the player's rating in 200-point bands, ``unrated``;
- ``start_rank``: the quarter of the start list (``Q1`` = the top quarter of start numbers);
- ``seed_in_group``: the player's start number among the tied group: ``top``, ``middle``, ``bottom``;
- ``all``: every tied player.

Counts are kept as integers per (configuration, feature, value, k, m), so the partials of batches of whole
tournaments add up exactly and the table does not depend on how the archive was split. The difference
between two configurations is paired (the same players under both): the mean of the per-player
differences of ties won, with a normal 95% interval.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

import numpy as np
import polars as pl
import polars.selectors as cs

from tbstats.analysis.breakdowns import BREAKDOWNS as BREAKDOWNS
from tbstats.analysis.compare import wilson
from tbstats.engine.configs import Config, rank_all
from tbstats.engine.standings import initial_labels
from tbstats.engine.tiebreaks.base import Context
from tbstats.errors import TbstatsError
from tbstats.model.batch import Batch
from tbstats.model.dense import Dense, Roster
from tbstats.model.games import GAME_TYPE
from tbstats.model.grid import row_sum

Z95: Final = 1.959964
#: Unplayed kinds in table order; the first ones are game types of the model.
UNPLAYED: Final = ("half_bye", "zero_bye", "full_bye", "forfeit_win", "forfeit_loss", "double_forfeit", "pab",
                   "withdrawal", "late_entry", "absent", "none")
#: Rating band labels at the ends (the others read ``1800-1999``).
BANDS: Final = {-1: "unrated", 1000: "<1200", 2600: ">=2600"}
#: The order of the values in tables and charts.
VALUE_ORDER: Final = ("all", *UNPLAYED, "<=-2", "-1", "0", "+1", ">=+2", "<1200",
                      *(f"{v}-{v + 199}" for v in range(1200, 2600, 200)), ">=2600", "unrated",
                      "Q1", "Q2", "Q3", "Q4", "top", "middle", "bottom")
_KEYS: Final = ["config", "breakdown", "value", "k", "m"]
_PAIR_KEYS: Final = ["a", "b", "breakdown", "value", "k", "m_a", "m_b"]
_COUNT_SCHEMA: Final = {"config": pl.String, "breakdown": pl.String, "value": pl.String, "k": pl.Int64,
                        "m": pl.Int64, "n": pl.Int64}
_PAIR_SCHEMA: Final = {"a": pl.String, "b": pl.String, "breakdown": pl.String, "value": pl.String,
                       "k": pl.Int64, "m_a": pl.Int64, "m_b": pl.Int64, "n": pl.Int64}


@dataclass(frozen=True)
class Counts:
    """Integer counts of one batch (or of several, added): per configuration, and per pair of them.

    ``singles``: players per (config, breakdown, value, k = group size, m = players sharing the group's
    first place when this player is among them, else 0). ``pairs``: the same per (a, b, ..., m_a, m_b).
    """

    singles: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=_COUNT_SCHEMA))
    pairs: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=_PAIR_SCHEMA))

    def __add__(self, other: Counts) -> Counts:
        return Counts.total([self, other])

    @staticmethod
    def total(parts: Sequence[Counts]) -> Counts:
        """The counts of several batches added: one grouping of all their rows (not one per batch)."""
        return Counts(_add([c.singles for c in parts], _KEYS, _COUNT_SCHEMA),
                      _add([c.pairs for c in parts], _PAIR_KEYS, _PAIR_SCHEMA))


def _add(frames: Sequence[pl.DataFrame], keys: list[str], schema: Mapping[str, type[pl.DataType]]) -> pl.DataFrame:
    if not frames:
        return pl.DataFrame(schema=schema)
    return pl.concat(frames).group_by(keys).agg(pl.col("n").sum()).sort(keys)


#: The columns of :func:`_grid_figures` after the game types' counts: a run of rounds not paired that makes a
#: withdrawal, a late entry, an absence (1: some), and the colour balance.
_WITHDRAWN, _LATE, _ABSENT, _BALANCE = range(len(GAME_TYPE), len(GAME_TYPE) + 4)


def player_features(view: Dense | Context) -> dict[str, list[tuple[str, np.ndarray]]]:
    """Per breakdown: (value, mask over players) pairs; a player may fall under several unplayed kinds.

    From a context, the figures of the rounds are read from each of its views (its buckets) and put together in the
    batch's player order, not from the padded view of the whole batch."""
    if isinstance(view, Context):
        ro, grid = view.roster, view.gathered(_grid_figures)
    else:
        ro, grid = view, _grid_figures(view)
    cells = grid[:, :len(GAME_TYPE)]
    out: dict[str, list[tuple[str, np.ndarray]]] = {"all": [("all", np.ones(ro.players, dtype=bool))]}
    kinds = [(name, cells[:, GAME_TYPE[name]] > 0) for name in UNPLAYED[:7]]
    kinds += [(name, grid[:, column] > 0) for name, column in (("withdrawal", _WITHDRAWN), ("late_entry", _LATE),
                                                                ("absent", _ABSENT))]
    out["unplayed"] = [*kinds, ("none", cells[:, GAME_TYPE["played"]] == cells.sum(axis=1))]
    balance = grid[:, _BALANCE]
    out["colour"] = [(label, mask) for label, mask in (
        ("<=-2", balance <= -2), ("-1", balance == -1), ("0", balance == 0), ("+1", balance == 1),
        (">=+2", balance >= 2))]
    band = np.where(ro.rating > 0, np.clip(ro.rating // 200 * 200, 1000, 2600), -1)
    # (the bands present by a count over their few codes, -1 and 1000 to 2600 by 200, not a sort of the players)
    present = np.flatnonzero(np.bincount(band // 200 + 1, minlength=15))
    out["rating_band"] = [(BANDS.get(v, f"{v}-{v + 199}"), band == v)
                          for v in np.where(present == 0, -1, (present - 1) * 200).tolist()]
    field_size = np.bincount(ro.tix, minlength=len(ro.n))[ro.tix]
    quarter = np.minimum((4 * (ro.start_no - 1)) // np.maximum(field_size, 1), 3)
    out["start_rank"] = [(f"Q{q + 1}", quarter == q) for q in range(4) if (quarter == q).any()]
    return out


def _grid_figures(d: Dense) -> np.ndarray:
    """Per player of a view (int64 columns): the counted rounds of each game type, whether a run of rounds not
    paired is a withdrawal, a late entry or an absence (1: some), and the colour balance (games with white less
    games with black)."""
    counted = d.counted
    n_types = len(GAME_TYPE)
    out = np.zeros((d.players, n_types + 4), dtype=np.int64)
    # the game types of each player's counted rounds: one count over the cells, not one pass per type
    player = np.broadcast_to(np.arange(d.players)[:, None], d.gtype.shape)[counted]
    out[:, :n_types] = np.bincount(player * n_types + d.gtype[counted], minlength=d.players * n_types).reshape(
        d.players, n_types)
    # runs of rounds not paired: only the players who have one are looked at round by round
    some = np.flatnonzero(out[:, GAME_TYPE["absent"]])
    absent = (d.gtype[some] == GAME_TYPE["absent"]) & counted[some]
    present = counted[some] & ~absent
    r = np.arange(d.rounds)[None, :]
    first_present = np.where(present.any(axis=1), np.where(present, r, d.rounds).min(axis=1), d.rounds)
    last_present = np.where(present, r, -1).max(axis=1)
    late = absent & (r < first_present[:, None])
    withdrawn = absent & (r > last_present[:, None]) & ~late
    for column, mask in ((_WITHDRAWN, withdrawn), (_LATE, late), (_ABSENT, absent & ~late & ~withdrawn)):
        out[some, column] = mask.any(axis=1)
    played = d.played & counted   # (counted along each player's row, compiled: no weighted count over the cells)
    out[:, _BALANCE] = row_sum(played & ~d.black) - row_sum(played & d.black)
    return out


def _seed_in_group(d: Roster, labels: np.ndarray, tied: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """Top, middle or bottom start number within the tied group."""
    kind = d.start_no.dtype   # (the start numbers' type: ufunc.at on other types casts cell by cell, 30x slower)
    lo = np.full(d.players, np.iinfo(kind).max, dtype=kind)
    hi = np.full(d.players, -1, dtype=kind)
    np.minimum.at(lo, labels[tied], d.start_no[tied])
    np.maximum.at(hi, labels[tied], d.start_no[tied])
    top = tied & (d.start_no == lo[labels])
    bottom = tied & (d.start_no == hi[labels])
    return [("top", top), ("middle", tied & ~top & ~bottom), ("bottom", bottom)]


def count(batch: Batch, ctx: Context, configs: Sequence[Config],
          pairs: Sequence[tuple[str, str]] = ()) -> Counts:
    """The counts of one batch (players tied on points only)."""
    d = ctx.roster   # (the rounds' figures come from each view: player_features, Context.gathered)
    labels = initial_labels(d.tix, -ctx.gathered(lambda view: view.score))
    k = np.bincount(labels, minlength=d.players)[labels]
    tied = k > 1
    features = player_features(ctx)
    features["seed_in_group"] = _seed_in_group(d, labels, tied)
    shared: dict[str, np.ndarray] = {}
    for config, ranked in zip(configs, rank_all(ctx, batch, configs), strict=True):
        final = ranked.steps[-1]
        best = np.full(d.players, np.iinfo(final.dtype).max, dtype=final.dtype)   # (the ranks' type: see above)
        np.minimum.at(best, labels[tied], final[tied])
        first = tied & (final == best[labels])
        n_first = np.bincount(labels, weights=first, minlength=d.players).astype(np.int64)
        shared[config.name] = np.where(first, n_first[labels], 0)
    # every (breakdown, value) at once: its tied players' rows one after another, counted by one group-by
    found = [(breakdown, value, np.nonzero(mask & tied)[0]) for breakdown, values in features.items()
             for value, mask in values]
    found = [(breakdown, value, rows) for breakdown, value, rows in found if len(rows)]
    rows = np.concatenate([r for _, _, r in found]) if found else np.zeros(0, dtype=np.int64)
    where = pl.DataFrame({"breakdown": [b for b, _, _ in found], "value": [v for _, v, _ in found]},
                         schema={"breakdown": pl.String, "value": pl.String}).with_row_index("_f")
    feature = np.repeat(np.arange(len(found), dtype=np.uint32), [len(r) for _, _, r in found])
    names = list(shared)
    # small codes for the group sizes and first-place shares, then one count over every combination
    k_values, k_code = _small_codes(k)
    m_values, m_code = _small_codes(np.stack([shared[n] for n in names]) if names else np.zeros((0, d.players),
                                                                                                 np.int64))
    # one whole number per row and combination (feature, group size, first-place shares), built per
    # configuration and pair from the players' codes (never a copy of every column per configuration)
    n_k, n_m = len(k_values), len(m_values)
    if max(len(names), len(pairs), 1) * len(found) * n_k * n_m * n_m >= 1 << 62:   # (keys are int64)
        raise TbstatsError(f"too many combinations to count in one batch ({len(found)} feature values, {n_k} group "
                           f"sizes, {n_m} shares of a first place); use a smaller --batch-size")
    fk = (feature.astype(np.int64) * n_k + k_code[rows]) * n_m
    m_rows = {n: np.take(m_code[i], rows) for i, n in enumerate(names)}
    singles_key, singles_n = _tally([i * len(found) * n_k * n_m + fk + m_rows[n] for i, n in enumerate(names)],
                                    [len(names), len(found), n_k, n_m])
    pair_key, pair_n = _tally([(i * len(found) * n_k * n_m + fk) * n_m + m_rows[a] * n_m + m_rows[b]
                               for i, (a, b) in enumerate(pairs)], [len(pairs), len(found), n_k, n_m, n_m])
    c, f, kk, m = singles_key
    singles = pl.DataFrame({"_c": c, "_f": f.astype(np.uint32), "k": k_values[kk], "m": m_values[m], "n": singles_n}
                           ).join(where, on="_f").select(_named(pl.col("_c"), names).alias("config"), "breakdown",
                                                         "value", "k", "m", "n")
    p, f, kk, ma, mb = pair_key
    joint = pl.DataFrame({"_p": p, "_f": f.astype(np.uint32), "k": k_values[kk], "m_a": m_values[ma],
                          "m_b": m_values[mb], "n": pair_n}).join(where, on="_f").select(
        _named(pl.col("_p"), [a for a, _ in pairs]).alias("a"), _named(pl.col("_p"), [b for _, b in pairs]).alias("b"),
        "breakdown", "value", "k", "m_a", "m_b", "n")
    # (one row per combination counted: the keys are distinct, so a sort orders them as :meth:`Counts.total` does,
    # without its grouping, which cost 1.3-1.9 ms a table for a batch of 2,000 events)
    return Counts(_cast([singles], _COUNT_SCHEMA).sort(_KEYS), _cast([joint], _PAIR_SCHEMA).sort(_PAIR_KEYS))


def _small_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of an array of small non-negative integers (group sizes, shares of a first place),
    ascending, and each value's index among them (same shape): ``np.unique`` by a count, not a sort."""
    if not values.size:
        return np.zeros(0, dtype=np.int64), np.zeros(values.shape, dtype=np.int64)
    present = np.bincount(values.reshape(-1)) > 0
    return np.flatnonzero(present), (np.cumsum(present) - 1)[values]


def _tally(keys: Sequence[np.ndarray], sizes: Sequence[int]) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """The distinct combinations among ``keys`` (parts of one array of whole numbers, each a combination of
    codes below ``sizes`` raveled in C order) as one column per code, and how often each occurs."""
    total = int(np.prod(sizes, dtype=np.float64))
    if not keys or not sum(len(k) for k in keys) or not total:
        return tuple(np.zeros(0, dtype=np.int64) for _ in sizes), np.zeros(0, dtype=np.int64)
    if total <= 4 * sum(len(k) for k in keys) + 65536:
        counts = sum((np.bincount(k, minlength=total) for k in keys[1:]), start=np.bincount(keys[0], minlength=total))
        present = np.flatnonzero(counts)
        return np.unravel_index(present, tuple(sizes)), counts[present]
    present, counts = np.unique(np.concatenate(keys), return_counts=True)
    return np.unravel_index(present, tuple(sizes)), counts


def _named(index: pl.Expr, names: Sequence[str]) -> pl.Expr:
    """The name at each index."""
    return index.replace_strict(dict(enumerate(names)), return_dtype=pl.String)


def _cast(parts: list[pl.DataFrame], schema: dict[str, type[pl.DataType]]) -> pl.DataFrame:
    if not parts:
        return pl.DataFrame(schema=schema)
    return pl.concat(parts).cast(schema)  # type: ignore[arg-type]


def _sorted(df: pl.DataFrame, lead: Sequence[pl.Expr]) -> pl.DataFrame:
    """Rows by ``lead``, then breakdown order, then each breakdown's natural value order."""
    return df.sort([*lead,
                    pl.col("breakdown").replace_strict({b: i for i, b in enumerate(BREAKDOWNS)}, default=len(
                        BREAKDOWNS), return_dtype=pl.Int64),
                    pl.col("value").replace_strict({v: i for i, v in enumerate(VALUE_ORDER)}, default=len(
                        VALUE_ORDER), return_dtype=pl.Int64), "value"])


def _rank_of(names: Sequence[str], column: str) -> pl.Expr:
    return pl.col(column).replace_strict({c: i for i, c in enumerate(names)}, default=len(names),
                                         return_dtype=pl.Int64)


def favour_table(counts: Counts, configs: Sequence[Config]) -> pl.DataFrame:
    """Per configuration, breakdown and value: players tied, ties won, rate (95% Wilson) and the chance rate."""
    s = counts.singles.with_columns(
        (pl.col("n") * pl.when(pl.col("m") > 0).then(1 / pl.col("m")).otherwise(0.0)).alias("_won"),
        (pl.col("n") / pl.col("k")).alias("_chance"))
    g = s.group_by("config", "breakdown", "value").agg(
        pl.col("n").sum().alias("players"), pl.col("_won").sum().alias("won"), pl.col("_chance").sum().alias("_c"))
    lo, hi = wilson(g["won"].to_numpy(), g["players"].to_numpy())
    g = g.with_columns((pl.col("won") / pl.col("players")).alias("rate"), pl.Series("rate_lo95", lo),
                       pl.Series("rate_hi95", hi), (pl.col("_c") / pl.col("players")).alias("chance")).with_columns(
        (pl.col("rate") / pl.col("chance")).alias("rate_vs_chance")).drop("_c")
    return _sorted(g, [_rank_of([c.name for c in configs], "config")]).with_columns(cs.float().round(6))


def difference_table(counts: Counts, pairs: Sequence[tuple[str, str]]) -> pl.DataFrame:
    """Per pair (a, b), breakdown and value: both rates and the paired difference a - b with a 95% interval."""
    p = counts.pairs.with_columns(
        pl.when(pl.col("m_a") > 0).then(1 / pl.col("m_a")).otherwise(0.0).alias("_ca"),
        pl.when(pl.col("m_b") > 0).then(1 / pl.col("m_b")).otherwise(0.0).alias("_cb"))
    p = p.with_columns((pl.col("_ca") - pl.col("_cb")).alias("_d"))
    g = p.with_columns(pl.concat_str("a", pl.lit("\t"), "b").alias("_pair")).group_by(
        "a", "b", "_pair", "breakdown", "value").agg(
        pl.col("n").sum().alias("players"), (pl.col("n") * pl.col("_ca")).sum().alias("_wa"),
        (pl.col("n") * pl.col("_cb")).sum().alias("_wb"), (pl.col("n") * pl.col("_d")).sum().alias("_sd"),
        (pl.col("n") * pl.col("_d") ** 2).sum().alias("_sdd"))
    n = pl.col("players")
    mean = pl.col("_sd") / n
    var = ((pl.col("_sdd") - n * mean**2) / (n - 1)).clip(lower_bound=0)
    half = pl.when(n > 1).then(Z95 * (var / n).sqrt()).otherwise(None)
    g = g.with_columns((pl.col("_wa") / n).alias("rate_a"), (pl.col("_wb") / n).alias("rate_b"),
                       mean.alias("difference"), (mean - half).alias("difference_lo95"),
                       (mean + half).alias("difference_hi95")).drop("_wa", "_wb", "_sd", "_sdd")
    return _sorted(g, [_rank_of([f"{a}\t{b}" for a, b in pairs], "_pair")]).drop("_pair").with_columns(
        cs.float().round(6))


def check_pairs(pairs: Sequence[tuple[str, str]], configs: Sequence[Config]) -> None:
    """Both sides of every pair name a configuration."""
    names = {c.name for c in configs}
    for a, b in pairs:
        for side in (a, b):
            if side not in names:
                raise TbstatsError(f"--diff {a},{b}: no configuration named {side!r} "
                                   f"(configurations: {', '.join(sorted(names))})")
