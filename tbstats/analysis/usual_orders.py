"""Which usual tie-break order reproduces a tournament's declared ranks, or comes nearest (rules.md 8).

For the tournaments searched (those that declare ranks but no usable list), every order of
:data:`tbstats.model.orders.USUAL_ORDERS` for its kind of event (Swiss or round robin) is ranked in one pass
over the searched tournaments it applies to, per order, edition and rating for unrated players (a *try*; tries
that begin alike share those steps, :class:`tbstats.engine.standings.SharedSteps`). A player *differs*
under a try when its declared rank lies outside the ranks its group of tied players shares (ties the order
leaves may be broken either way). A try *reproduces* the declared ranks when no player differs; among those
the one leaving the fewest players tied is named first, then the tournament's own edition, then the table's
order. Without one, the *nearest* try has the fewest differing players, then the smallest normalised Kendall
distance to the declared ranks (:mod:`tbstats.analysis.kendall`; a pair tied in one ranking only counts ½).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import polars as pl

from tbstats.analysis.kendall import kendall_distances
from tbstats.engine.configs import Config, Standings
from tbstats.engine.standings import SharedSteps, rank_dtype, rank_steps, step_keys, tournament_first
from tbstats.engine.tiebreaks import FIXED_EDITION, get_tiebreak, kernel_of, parse_specs
from tbstats.engine.tiebreaks.base import Context
from tbstats.model.orders import UNRATED_RATINGS, USUAL_ORDERS, UsualOrder
from tbstats.model.spec import TieBreakSpec

_BIG = np.iinfo(np.int64).max // 4


@dataclass(frozen=True)
class Try:
    """One usual order under one edition, with or without a rating for unrated players."""

    order: UsualOrder
    rules: str
    specs: tuple[TieBreakSpec, ...]
    unrated: int | None = None

    @property
    def label(self) -> str:
        """``NAME@EDITION``, with ``/U<rating>`` when unrated players are given a rating."""
        return f"{self.order.name}@{self.rules}" + ("" if self.unrated is None else f"/U{self.unrated}")

    @property
    def tiebreaks(self) -> str:
        return ",".join(str(s) for s in self.specs)


def tries(rules: str, unrated: bool) -> list[Try]:
    """Every try of the table, in its order: each order under its editions (only ``rules`` when it names
    one, not 'auto'; US orders keep their own), then with each unrated rating where it has rating-based
    tie-breaks (when ``unrated``)."""
    out = []
    for order in USUAL_ORDERS:
        specs = tuple(parse_specs(order.tiebreaks))
        rated = any(get_tiebreak(s.name).rating_based for s in specs)
        editions = order.editions if rules == "auto" or all(s.name in FIXED_EDITION for s in specs) else (rules,)
        for edition in editions:
            out.append(Try(order, edition, specs))
            for rating in UNRATED_RATINGS if rated and unrated else ():
                out.append(Try(order, edition, tuple(dataclasses.replace(s, unrated=rating)
                                                     if get_tiebreak(s.name).rating_based else s for s in specs),
                               rating))
    return out


@dataclass(frozen=True)
class Fits:
    """Per tournament, the try named (exact or nearest) and how far the declared ranks are from it."""

    tries: list[Try]
    chosen: np.ndarray     # [T] index into tries, -1 where not searched
    exact: np.ndarray      # [T] bool: the chosen try reproduces the declared ranks
    differ: np.ndarray     # [T] players whose declared rank lies outside their group under the chosen try
    kendall: np.ndarray    # [T] normalised Kendall distance to the chosen try (NaN where not searched)
    matching: list[str | None]   # [T] the labels of every try that reproduces the declared ranks
    ranks: np.ndarray      # [P] ranks under each player's tournament's chosen try (0 where not searched)
    outside: np.ndarray    # [P] bool: the player differs under the chosen try


def _groups(ranks: np.ndarray, first: np.ndarray) -> np.ndarray:
    """The size of each player's group of players sharing its competition rank in its tournament (``first``:
    each player's tournament's first row, :func:`tournament_first`); players of rank 0 (not ranked) are put
    aside together (their size means nothing).

    A rank r of a tournament is at most its number of players: the position ``first + r - 1`` names the group.
    """
    key = np.where(ranks > 0, first + ranks - 1, len(ranks))
    return np.bincount(key, minlength=len(ranks) + 1)[key]


def _steps(ctx: Context, c: Try, among: np.ndarray, shared: SharedSteps | None, dtype: type) -> list[np.ndarray]:
    """The rank steps of a try: the ones cached for its configuration, else ranked among the players ``among``
    (with ``shared``), not cached."""
    cached = ctx.standings_cache.get(str(Config("usual", c.rules, c.specs)))
    return cached.steps if isinstance(cached, Standings) else rank_steps(ctx, list(c.specs), c.rules, dtype=dtype,
                                                                          shared=shared, among=among)


def fit_usual_orders(ctx: Context, declared: np.ndarray, search: np.ndarray, rules: str) -> Fits:
    """The usual order that reproduces each searched tournament's declared ranks, or the nearest one.

    ``declared``: per player (in the roster's order) the declared rank, -1 where none; ``search``: [T] the
    tournaments to search. Round robins try round-robin orders only, Swiss events Swiss orders only.
    """
    d = ctx.roster
    T, P = len(d.n), d.players
    has_unrated = np.bincount(d.tix, weights=d.rating <= 0, minlength=T) > 0
    candidates = tries(rules, unrated=ctx.unrated_rating is None and bool((search & has_unrated).any()))
    K = len(candidates)
    differ = np.full((K, T), _BIG, dtype=np.int64)
    tied = np.full((K, T), _BIG, dtype=np.int64)
    rank_of: dict[int, np.ndarray] = {}
    ranked = declared >= 0
    first = tournament_first(d.tix, d.sizes)
    dtype = rank_dtype(d)   # (int16 ranks below 32,767 players)

    def scope(k: int) -> tuple[str, bool]:   # the tournaments a try applies to: its kind of event, unrated or not
        return candidates[k].order.event, candidates[k].unrated is not None

    # a try ranks the tournaments it applies to only; the tries of one scope are taken in the order of their
    # steps, so that lists that begin alike share those steps
    shared, last = SharedSteps(), None
    for k in sorted(range(K), key=lambda k: (scope(k), step_keys(list(candidates[k].specs), candidates[k].rules))):
        c = candidates[k]
        applies = search & (d.round_robin == (c.order.event == "round robin"))
        if c.unrated is not None:
            applies &= has_unrated
        if not applies.any():
            continue
        if scope(k) != last:
            shared, last = SharedSteps(), scope(k)
        # only the final ranks are kept (the steps of tries add up); they are read where the try applies only
        kept = _steps(ctx, c, applies[d.tix], shared, dtype)[-1]
        ranks = kept.astype(np.int64)
        size = _groups(ranks, first)
        off = ranked & ((declared < ranks) | (declared > ranks + size - 1))
        # (counts of the players flagged: few differ, so a count of their rows, not a weighted pass over all)
        differ[k, applies] = np.bincount(d.tix[off], minlength=T)[applies]
        tied[k, applies] = np.bincount(d.tix[ranked & (size > 1)], minlength=T)[applies]
        rank_of[k] = kept
    own = np.array([c.rules for c in candidates], dtype=object)[:, None] == ctx.edition_of[None, :]
    index = np.broadcast_to(np.arange(K)[:, None], (K, T))
    exact = differ == 0
    found = search & exact.any(axis=0)
    # exact: fewest players left tied, then the tournament's own edition, then the table's order
    chosen = np.lexsort((index, ~own, np.where(exact, tied, _BIG)), axis=0)[0] if K else np.zeros(T, np.int64)
    # nearest: fewest differing players, then the Kendall distance, then own edition, then the table's order
    least = differ.min(axis=0, initial=_BIG)
    near = search & ~found & (least < _BIG)
    kendall = np.full(T, np.nan)
    if near.any():
        need = (differ == least) & near
        pairs_k = [k for k in range(K) if need[k].any()]
        dist = kendall_distances([declared[ranked], *(rank_of[k][ranked].astype(np.int64) for k in pairs_k)],
                                 [(0, i + 1) for i in range(len(pairs_k))], need[pairs_k], d.tix[ranked], T)
        scores = np.full((K, T), np.inf)
        scores[pairs_k] = np.where(need[pairs_k], dist, np.inf)
        nearest = np.lexsort((index, ~own, scores), axis=0)[0]
        chosen = np.where(near, nearest, chosen)
        kendall[near] = scores[chosen[near], np.nonzero(near)[0]]
    named = found | near
    kendall[found] = 0.0
    chosen = np.where(named, chosen, -1)
    ranks = np.zeros(P, dtype=np.int64)
    per_player = chosen[d.tix]
    for k in np.unique(chosen[named]):
        rows = per_player == k
        ranks[rows] = rank_of[int(k)][rows]
    size = _groups(ranks, first)
    outside = named[d.tix] & ranked & ((declared < ranks) | (declared > ranks + size - 1))
    labels = np.array([c.label for c in candidates], dtype=object)
    matching: list[str | None] = [None] * T
    for t in np.nonzero(found)[0]:
        matching[t] = " ".join(labels[exact[:, t]])
    return Fits(candidates, chosen, found, np.where(named, np.bincount(d.tix, weights=outside, minlength=T), 0)
                .astype(np.int64), kendall, matching, ranks, outside)


def values_text(ctx: Context, fits: Fits, rows: np.ndarray) -> pl.Series:
    """For the given players, the values of the tie-breaks of their tournament's chosen try, as text
    (``SPEC VALUE`` joined by ``, ``; ``undef`` where undefined; DE gives the rank it leads to); null for
    players of tournaments not searched."""
    which = fits.chosen[ctx.roster.tix[rows]]
    out = pl.Series("values", [None] * len(rows), dtype=pl.String)
    dtype = rank_dtype(ctx.roster)
    for k in np.unique(which[which >= 0]):
        c = fits.tries[int(k)]
        here = np.nonzero(which == k)[0]
        players = rows[here]
        # ranks are shown for DE only: the list is ranked again as far as its last DE, in the tournaments of
        # which it is the chosen try
        upto = max((i + 1 for i, s in enumerate(c.specs) if get_tiebreak(s.name).kind == "partition"), default=0)
        steps = rank_steps(ctx, list(c.specs[:upto]), c.rules, dtype=dtype, among=(fits.chosen == k)[ctx.roster.tix]) \
            if upto else []
        parts: list[pl.Expr] = []
        for i, spec in enumerate(c.specs):
            tb = get_tiebreak(spec.name)
            if tb.kind == "partition":
                shown = pl.lit(pl.Series(steps[i + 1][players].astype(np.int64))).cast(pl.String)
                parts.append(pl.concat_str(pl.lit(f"{spec} rank "), shown))
                continue
            values = ctx.values(spec, FIXED_EDITION.get(spec.name, c.rules), kernel_of(spec.name)).take(players)
            number = pl.Series(values.num) if tb.integer else pl.Series(values.as_float()).round(4)
            shown = pl.when(pl.lit(pl.Series(values.defined))).then(pl.lit(number).cast(pl.String)).otherwise(
                pl.lit("undef"))
            parts.append(pl.concat_str(pl.lit(f"{spec} "), shown))
        out = out.scatter(here, pl.select(pl.concat_str(parts, separator=", ")).to_series())
    return out
