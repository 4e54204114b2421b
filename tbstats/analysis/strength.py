"""Strength proxies for ``tbstats evaluate``: the rating, a players column, or a fit on the other events.

``archive``: a Bradley-Terry fit (the Elo model: expected score ``1 / (1 + 10^(-(r_i - r_j) / 400))``, draws
half a win) on every game played over the board between two players with a FIDE id, over the whole
archive; players are identified by FIDE id across events. Each strength has a normal prior ``N(0, 400²)``
(so that a player with only wins gets a finite strength) and the fit is the posterior's mode, found by
Newton's method on all players at once (each step solved by conjugate gradients). Leave-one-event-out: the
strength used for a player in an event is refit from his games in the *other* events only (again with the
prior), his opponents keeping their strengths of the whole fit, except that an opponent who also played in
that event is taken at his own strength without it (a second refit pass; the event still reaches the others
only through their other opponents). A player is covered when he has a FIDE id and at least one such game in
another event; the others are left out like unrated players. The scale is relative (Elo points about 0): only
the order counts here.

The refit of a player in each of his events would read all his games once an event (a player of 100 events
with new opponents in each: 100 x 900 games, per Newton step and pass). A player of :data:`SERIES_EVENTS` events
or more is refit from one Chebyshev series of the sum of his expected scores over all his games (:class:`_Series`,
made once, exact to rounding about his whole-fit strength): each refit then reads only the games of the event
left out, and in the second pass his games against opponents who also played in it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, cast

import numpy as np
import polars as pl

from tbstats.analysis import elo
from tbstats.errors import TbstatsError
from tbstats.model.batch import Batch
from tbstats.model.columns import ranges
from tbstats.model.games import OPTIONAL, PLAYER_SCHEMA

PRIOR_SD: Final = 400.0
_C: Final = math.log(10) / 400
_GAMES_SCHEMA: Final = {"tournament": pl.Int64, "fide": pl.Int64, "opp": pl.Int64, "score": pl.Float64}
_PARTICIPANT_SCHEMA: Final = {"tournament": pl.Int64, "start_no": pl.Int32, "fide": pl.Int64}
PROXIES: Final = ("rating", "archive")


def proxy(batch: Batch, name: str, fitted: pl.DataFrame | None = None) -> np.ndarray:
    """Per player in (tournament, start_no) order: the proxy's strength, NaN where unknown.

    ``rating``: the rating in the event (null = unrated); ``archive``: the leave-one-event-out fit
    (``fitted``, from :func:`fit`); any other name: that numeric column of the players table.
    """
    # the keys and the proxy's column only: sorting the whole table carries its strings through the sort
    # (44 MB for 8,000 events of 25 players, against 1 MB)
    wanted = ["tournament", "start_no", *([name] if name in batch.players.columns else [])]
    players = batch.players.select(list(dict.fromkeys(wanted))).sort("tournament", "start_no")
    if name == "archive":
        if fitted is None:
            raise TbstatsError("the archive strength needs a fit of the whole archive first")
        column = players.select("tournament", "start_no").join(
            _rows_for(fitted, players["tournament"]), on=["tournament", "start_no"], how="left",
            maintain_order="left")["strength"]
    else:
        if name not in players.columns:
            numeric = [c for c, t in {**PLAYER_SCHEMA, **OPTIONAL["players"]}.items()
                       if t.is_numeric() and c not in ("tournament", "start_no", "line")]
            raise TbstatsError(f"--strength {name}: the players table has no such column (expected rating, "
                               f"archive or a numeric players column: {', '.join(numeric)})")
        column = players[name]
        if not (column.dtype.is_numeric() or column.dtype == pl.Null):
            raise TbstatsError(f"--strength {name}: column {name} is not numeric ({column.dtype})")
    return column.cast(pl.Float64).fill_null(math.nan).to_numpy().astype(np.float64)


def _rows_for(fitted: pl.DataFrame, tournaments: pl.Series) -> pl.DataFrame:
    """The rows of a fit's table whose tournaments lie between the least and the greatest of ``tournaments``,
    when the table is in tournament order (as :func:`fit` makes it): a batch joins these, not the whole
    archive's (a hash table of 2.7 million players built for each of the 100k mix's 50 batches took 6 s)."""
    ids = fitted["tournament"]
    if not len(tournaments):
        return fitted.clear()
    if not ids.is_sorted():
        return fitted
    least, greatest = cast(int, tournaments.min()), cast(int, tournaments.max())
    lo, hi = ids.search_sorted(least, "left"), ids.search_sorted(greatest, "right")
    return fitted.slice(lo, hi - lo)


def games_of(batch: Batch) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The over-the-board games between two players with a FIDE id (one row per side), and the participants."""
    ids = batch.players.select("tournament", "start_no",
                               pl.when(pl.col("fide_id") > 0).then(pl.col("fide_id")).alias("fide"))
    played = batch.games.filter(pl.col("played") & pl.col("opponent").is_not_null()).select(
        "tournament", pl.col("player").alias("start_no"), "opponent",
        pl.col("result").replace_strict({"1": 1.0, "W": 1.0, "=": 0.5, "D": 0.5}, default=0.0,
                                        return_dtype=pl.Float64).alias("score"))
    games = played.join(ids, on=["tournament", "start_no"], how="inner").join(
        ids.rename({"start_no": "opponent", "fide": "opp"}), on=["tournament", "opponent"], how="inner").filter(
        pl.col("fide").is_not_null() & pl.col("opp").is_not_null()).select(list(_GAMES_SCHEMA))
    return games.cast(_GAMES_SCHEMA), ids.cast(_PARTICIPANT_SCHEMA)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Fit:
    """A leave-one-event-out fit: the strength per (tournament, start_no), and what it rests on."""

    table: pl.DataFrame      # tournament, start_no, strength (null when not covered)
    ratings: pl.DataFrame    # fide, strength: the fit of the whole archive
    games: int               # games used (each once)
    fide_ids: int            # distinct FIDE ids with at least one game
    participants: int        # players of all events
    covered: int             # players with a strength

    def describe(self) -> str:
        """One line for stderr: how the fit was made and how many players it covers."""
        return (f"archive strength: Bradley-Terry (Elo) fit, leave-one-event-out, on {self.games} games among "
                f"{self.fide_ids} FIDE ids; covers {self.covered} of {self.participants} players")


def fit(games: pl.DataFrame, participants: pl.DataFrame, *, iterations: int = 100, tol: float = 1e-4,
        passes: int = 2, step: Callable[[], None] | None = None) -> Fit:
    """Fit the archive's strengths, then refit each participant's without his event (module docstring).

    The first refit pass holds every opponent at his whole-fit strength; each further pass gives an opponent
    who also played in the event left out his strength without it, from the pass before. ``step`` is called
    after each Newton step of the whole fit and each run of players refit (a progress bar's tick).
    """
    # each FIDE id numbered by a hash join (a sort of every side, and a binary search of every opponent, took
    # 7 s on the 100k mix's 16 million sides)
    ids = games["fide"].unique().sort()
    index = pl.DataFrame({"fide": ids, "_k": np.arange(len(ids), dtype=np.int64)})

    def numbered(column: pl.Series) -> pl.Series:
        """Each FIDE id's number in ``ids`` (null where it has no game side of its own)."""
        return column.alias("fide").to_frame().join(index, on="fide", how="left", maintain_order="left")["_k"]

    i = numbered(games["fide"]).to_numpy()
    opp = numbered(games["opp"])
    if opp.null_count():
        raise TbstatsError("the archive fit needs both sides of every game (an opponent has no side of his own)")
    j = opp.to_numpy()
    s = games["score"].to_numpy()
    event = games["tournament"].to_numpy()
    sides = _sides_by_player(i, event, len(ids))
    order = sides[0]
    r = _whole_fit(i, j, s, event, len(ids), iterations, tol, sides, step)
    p_number = numbered(participants["fide"])
    p_event = participants["tournament"].to_numpy()
    known = p_number.is_not_null().to_numpy()
    row = p_number.fill_null(0).to_numpy()
    out = np.where(known, r[row], np.nan) if len(ids) else np.full(len(row), np.nan)   # no game: none known
    # players who played in their event: refit without it (opponents fixed at the whole fit)
    i_sorted, e_sorted = i[order], event[order]
    pair = np.ones(len(order), dtype=bool)   # the first side of each (player, event): the events each played in
    pair[1:] = (i_sorted[1:] != i_sorted[:-1]) | (e_sorted[1:] != e_sorted[:-1])
    played = pl.DataFrame({"_k": i_sorted[pair], "tournament": e_sorted[pair]})
    refit = pl.DataFrame({"_k": p_number, "tournament": participants["tournament"]}).with_row_index("_row").join(
        played, on=["_k", "tournament"], how="semi", maintain_order="left")
    rows = refit["_row"].to_numpy().astype(np.int64)
    # a player of one event has no game outside it: no strength without it (refit: those of several events)
    alone = np.bincount(i_sorted[pair], minlength=len(ids))[row[rows]] < 2
    out[rows[alone]] = np.nan
    rows = rows[~alone]
    who, without = row[rows], p_event[rows]
    span = int(max(event.max(initial=0), without.max(initial=0))) + 1
    keys = who * span + without
    by_key = np.argsort(keys, kind="stable")
    groups = _Groups.of(i, j, s, who, len(ids))
    first = np.flatnonzero(pair)   # each (player, event)'s sides: order[first[q]:first[q] + count[q]]
    in_event = (first, np.diff(np.r_[first, len(order)]), i_sorted[pair] * span + e_sorted[pair], span)
    # regulars (SERIES_EVENTS events and more) refit from one series each; the others game by game
    regular = np.bincount(i_sorted[pair], minlength=len(ids))[who] >= SERIES_EVENTS
    series = _Series.of(r, np.unique(who[regular]), groups) if regular.any() else None
    opponents = None
    for _ in range(passes):
        loo = np.empty(len(who))
        loo[~regular] = _refit(r, who[~regular], without[~regular], groups, order, in_event, s, opponents, step=step)
        if series is not None:
            loo[regular] = series.refit(r, who[regular], without[regular], groups, order, in_event, s, j,
                                        opponents, step=step)
        opponents = (keys[by_key], loo[by_key], span)
    out[rows] = loo if passes else r[who]
    strength = pl.Series("strength", out).fill_nan(None)
    table = participants.select("tournament", "start_no").with_columns(strength)
    # in tournament order, and known to be (:func:`proxy` takes a batch's rows by a slice)
    table = table.with_columns(pl.col("tournament").set_sorted()) if table["tournament"].is_sorted() else \
        table.sort("tournament", "start_no", maintain_order=True)
    ratings = pl.DataFrame({"fide": ids, "strength": r}, schema={"fide": pl.Int64, "strength": pl.Float64})
    return Fit(table, ratings, len(games) // 2, len(ids), participants.height, int(strength.is_not_null().sum()))


def _sides_by_player(i: np.ndarray, event: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The game sides' order by player, then event (stably); where each of the ``n`` players' sides start in it,
    and how many he has."""
    order = np.lexsort((event, i))
    n_games = np.bincount(i, minlength=n)
    start = np.zeros(n, dtype=np.int64)
    np.cumsum(n_games[:-1], out=start[1:])
    return order, start, n_games


def _whole_fit(i: np.ndarray, j: np.ndarray, s: np.ndarray, event: np.ndarray, n: int, iterations: int, tol: float,
               sides: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
               step: Callable[[], None] | None = None) -> np.ndarray:
    """The whole archive's strengths of the ``n`` players (the posterior's mode: Gaussian prior) from the game sides
    ``i`` against ``j`` scoring ``s`` in events ``event``, by Newton's method on all players at once (``sides``:
    :func:`_sides_by_player`, when known).

    Each step solves ``H d = g`` (:func:`_newton_step`: the gradient and Hessian of the log posterior, the
    Hessian a weighted graph Laplacian of the games plus the prior) by conjugate gradients, to a residual that
    tightens as the gradient falls (inexact Newton: few products where far from the mode, superlinear near
    it); steps are clipped to 200 Elo while far. It stops when no strength moves by ``tol``: about ten steps,
    where updating each player against his opponents' strengths of the step before (the diagonal of ``H``
    alone) took 126 on the 10k mix and still stood 1e-3 Elo from the mode when its steps fell below 1e-4, and
    never settled where two players meet again and again (it swung 200 Elo both ways).
    The players are numbered by the first event they played in and the sides ordered by player, so that an
    event's players are neighbours in memory (the FIDE ids' order scatters the opponents: 1.6x the time)."""
    order, start, n_games = sides if sides is not None else _sides_by_player(i, event, n)
    players = np.argsort(event[order[start]], kind="stable") if n else np.zeros(0, dtype=np.int64)
    number = np.empty(n, dtype=np.int64)
    number[players] = np.arange(n)
    length = n_games[players]
    side = order[ranges(start[players], length)]
    i, j, s = np.repeat(np.arange(n), length), number[j[side]], s[side]
    r = np.zeros(n)
    for _ in range(iterations):
        d = np.clip(_newton_step(r, i, j, s), -200, 200)
        r += d
        if step is not None:
            step()
        if not len(d) or np.abs(d).max() < tol:
            break
    return r[number]


def _newton_step(r: np.ndarray, i: np.ndarray, j: np.ndarray, s: np.ndarray, max_products: int = 1000
                 ) -> np.ndarray:
    """The Newton step ``d`` of the log posterior at ``r``: ``H d = g`` solved by conjugate gradients,
    preconditioned by ``H``'s diagonal, until the residual is below ``min(0.1, sqrt(|g|)) |g|``.

    Per side the expected score is ``p = 1 / (1 + 10^(-(r_i - r_j) / 400))``; ``g_i = C sum(s - p) - r_i / sd²``,
    and ``H = C² (D - A) + I / sd²`` with ``A`` the sides' weights ``p (1 - p)`` between players and ``D`` their
    sums per player (the games' Laplacian: symmetric, and positive definite with the prior)."""
    n = len(r)
    w, surplus, weight = np.empty(len(s)), np.zeros(n), np.zeros(n)
    elo.side_terms(r, i, j, s, _C, w, surplus, weight)   # (one compiled pass over the sides: elo.pyx)
    g = _C * surplus - r / PRIOR_SD**2
    diag = weight + 1 / PRIOR_SD**2
    d = np.zeros(n)
    hq = np.empty(n)
    res = g.copy()
    z = res / diag
    q = z.copy()
    rz = float(res @ z)
    size = math.sqrt(float(g @ g))
    goal = min(0.1, math.sqrt(size)) * size
    for _ in range(max_products):
        if math.sqrt(float(res @ res)) <= goal:
            break
        elo.hessian_product(i, j, w, diag, q, hq)
        a = rz / float(q @ hq)
        d += a * q
        res -= a * hq
        z = res / diag
        rz, before = float(res @ z), rz
        q = z + (rz / before) * q
    return d


#: Players of this many events or more are refit from a series of their whole sum (:class:`_Series`), the others
#: game by game (:func:`_refit`): a series costs :data:`SERIES_POINTS` passes over a player's games once, a refit
#: about five (Newton steps) per event and pass.
SERIES_EVENTS: Final = 4
#: Points of the series (Chebyshev), and the half-width of its interval about the whole-fit strength (Elo). The
#: expected score is analytic in a strip of half-width ``pi / c`` (546 Elo) about the real axis, so the series
#: converges like ``3.05 ** -n`` on an interval of 400 (a Bernstein ellipse of that size fits in the strip): 32
#: points give the sum to rounding.
SERIES_POINTS: Final = 32
SERIES_WIDTH: Final = 400.0


@dataclass(frozen=True)
class _Series:
    """The sum of a player's expected scores over all his games, and its slope, as Chebyshev series about his
    whole-fit strength (``SERIES_WIDTH`` either side), for the players refit in many events (the regulars).

    A refit without one event then costs the games of that event, not all the player's games again: the sum
    over his games outside the event is the series less his games in the event, and, in the second pass, plus
    the difference an opponent who also played in that event makes at his strength without it (his games
    against that opponent elsewhere). A refit whose iterate leaves the interval is made game by game."""

    players: np.ndarray   # ascending
    coef_a: np.ndarray
    coef_d: np.ndarray

    @staticmethod
    def of(r: np.ndarray, players: np.ndarray, groups: _Groups) -> _Series:
        m = SERIES_POINTS
        angle = np.pi * (np.arange(m) + 0.5) / m
        basis = 2 / m * np.cos(np.outer(np.arange(m), angle))
        basis[0] /= 2
        coef_a, coef_d = np.empty((len(players), m)), np.empty((len(players), m))
        elo.chebyshev_sums(players, groups.first, groups.many, groups.opponent, groups.count, r, np.cos(angle),
                           basis, SERIES_WIDTH, _C, coef_a, coef_d)
        return _Series(players, coef_a, coef_d)

    def refit(self, r: np.ndarray, who: np.ndarray, without: np.ndarray, groups: _Groups, order: np.ndarray,
              in_event: tuple[np.ndarray, np.ndarray, np.ndarray, int], s: np.ndarray, j: np.ndarray,
              opponents: tuple[np.ndarray, np.ndarray, int] | None,
              step: Callable[[], None] | None = None) -> np.ndarray:
        """Each pair's strength without its event (as :func:`_refit`, whose arguments these are; ``j``: each
        side's opponent)."""
        side_first, side_count, pair_keys, span = in_event
        q = np.searchsorted(pair_keys, who * span + without)   # (every pair played in its event)
        count = side_count[q]
        mine = order[ranges(side_first[q], count)]
        side_start = np.cumsum(count) - count
        total = np.bincount(np.repeat(np.arange(len(groups.many)), groups.many), groups.score,
                            minlength=len(groups.many))
        surplus = total[who] - np.bincount(np.repeat(np.arange(len(who)), count), s[mine], minlength=len(who))
        co_start, co_n, co_v, co_r = _co_rows(who, without, groups, opponents, mine, count, r)
        out, failed = np.empty(len(who)), np.zeros(len(who), dtype=np.uint8)
        elo.refit_pairs(np.searchsorted(self.players, who), r[who], self.coef_a, self.coef_d, surplus, side_start,
                        count, r[j[mine]], co_start[:-1], np.diff(co_start), co_n, co_v, co_r, SERIES_WIDTH, _C,
                        PRIOR_SD**2, 1e-4, 50, out, failed)
        again = np.flatnonzero(failed)
        if len(again):
            out[again] = _refit(r, who[again], without[again], groups, order, in_event, s, opponents)
        if step is not None:
            step()
        return out


def _co_rows(who: np.ndarray, without: np.ndarray, groups: _Groups,
             opponents: tuple[np.ndarray, np.ndarray, int] | None, mine: np.ndarray, count: np.ndarray,
             r: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For each pair (``who`` without ``without``; ``mine``: its sides in that event, ``count`` each), its games
    elsewhere against opponents with a strength of their own without that event (``opponents``, see
    :func:`_refit`): each pair's first row (and the end), and per row the games outside the event, the
    opponent's strength without it and his whole-fit one. None before the second pass."""
    if opponents is None:
        return np.zeros(len(who) + 1, dtype=np.int64), np.zeros(0), np.zeros(0), np.zeros(0)
    keys, values, span = opponents
    known = ~np.isnan(values)
    keys, values = keys[known], values[known]
    event, player = keys % span, keys // span
    by_event = np.lexsort((player, event))
    at_count = np.bincount(event, minlength=span)
    at_start = np.cumsum(at_count) - at_count
    args = (who, without, groups.first, groups.many, groups.opponent, at_start, at_count, player[by_event])
    rows = np.zeros(len(who), dtype=np.int64)
    elo.co_rows(*args, rows, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))   # (how many, then which)
    group, at = np.empty(int(rows.sum()), dtype=np.int64), np.empty(int(rows.sum()), dtype=np.int64)
    elo.co_rows(*args, rows, group, at)
    at = by_event[at]
    # the games outside the event: the pair's games against that opponent, less those in the event
    owner = np.repeat(np.arange(len(who)), rows)
    size = len(groups.opponent) + 1
    in_event = np.sort(np.repeat(np.arange(len(who)), count) * size + groups.of_side[mine])
    key = owner * size + group
    n = groups.count[group] - (np.searchsorted(in_event, key, side="right") - np.searchsorted(in_event, key))
    return np.r_[0, np.cumsum(rows)], n, values[at], r[groups.opponent[group]]


@dataclass(frozen=True)
class _Groups:
    """The game sides of the players refit, gathered by (player, opponent): a group is all the games of one
    player against one opponent, in every event (``count`` of them, scoring ``score`` in all). A player's groups
    are ``first[p]:first[p] + many[p]``; ``of_side`` is each side's group (-1 for players not refit)."""

    first: np.ndarray
    many: np.ndarray
    opponent: np.ndarray
    count: np.ndarray
    score: np.ndarray
    of_side: np.ndarray

    @staticmethod
    def of(i: np.ndarray, j: np.ndarray, s: np.ndarray, players: np.ndarray, n: int) -> _Groups:
        """The groups of the sides ``i`` against ``j`` scoring ``s`` of the ``players`` (of ``n``)."""
        wanted = np.zeros(n, dtype=bool)
        wanted[players] = True
        sides = np.flatnonzero(wanted[i])
        sides = sides[np.lexsort((j[sides], i[sides]))]
        new = np.ones(len(sides), dtype=bool)
        new[1:] = (i[sides][1:] != i[sides][:-1]) | (j[sides][1:] != j[sides][:-1])
        group = np.cumsum(new) - 1
        of_side = np.full(len(i), -1, dtype=np.int64)
        of_side[sides] = group
        heads = sides[new]
        many = np.bincount(i[heads], minlength=n)
        first = np.zeros(n, dtype=np.int64)
        np.cumsum(many[:-1], out=first[1:])
        return _Groups(first, many, j[heads], np.bincount(group, minlength=len(heads)).astype(np.float64),
                       np.bincount(group, s[sides], minlength=len(heads)), of_side)


def _refit(r: np.ndarray, who: np.ndarray, without: np.ndarray, groups: _Groups, order: np.ndarray,
           in_event: tuple[np.ndarray, np.ndarray, np.ndarray, int], s: np.ndarray,
           opponents: tuple[np.ndarray, np.ndarray, int] | None, chunk_rows: int = 2_000_000,
           step: Callable[[], None] | None = None) -> np.ndarray:
    """Each player's strength from his games outside one event (Newton on one unknown each); NaN if none.

    A player's games are taken opponent by opponent (:class:`_Groups`: his games against one opponent in all
    events, less those in the event left out), so that a player who meets the same opponents in many events is
    not read game by game once for each of his events. ``in_event``: where each (player, event)'s sides lie in
    ``order`` (first, count, their sorted keys ``player * span + event``, span). ``opponents`` (sorted keys
    ``player * span + event``, strengths, span): an opponent found there for the left-out event plays at that
    strength instead of his whole-fit one.
    """
    out = np.full(len(who), np.nan)
    lengths = groups.many[who]
    cum = np.r_[0, np.cumsum(lengths)]
    side_first, side_count, pair_keys, span = in_event
    lo = 0
    while lo < len(who):   # runs of players whose groups together fit in chunk_rows
        hi = max(lo + 1, int(np.searchsorted(cum, cum[lo] + chunk_rows, side="right")) - 1)
        sel = np.arange(lo, hi)
        lo = hi
        length = lengths[sel]
        base = np.cumsum(length) - length   # each pair's first row
        owner = np.repeat(np.arange(len(sel)), length)
        first = groups.first[who[sel]]
        g = ranges(first, length)
        count, score = groups.count[g], groups.score[g]
        # less the games of the event left out (each in its opponent's row)
        q = np.searchsorted(pair_keys, who[sel] * span + without[sel])
        many = side_count[q]
        mine = order[ranges(side_first[q], many)]
        at = np.repeat(base - first, many) + groups.of_side[mine]
        count -= np.bincount(at, minlength=len(g))
        score -= np.bincount(at, s[mine], minlength=len(g))
        keep = count > 0
        g, owner, count, score = g[keep], owner[keep], count[keep], score[keep]
        x = r[who[sel]].copy()
        opponent = groups.opponent[g]
        rj = r[opponent]
        if opponents is not None and len(opponents[0]):
            keys, values, _ = opponents
            key = opponent * span + without[sel][owner]
            pos = np.minimum(np.searchsorted(keys, key), len(keys) - 1)
            found = (keys[pos] == key) & ~np.isnan(values[pos])
            rj = np.where(found, values[pos], rj)
        surplus, weight = np.empty(len(sel)), np.empty(len(sel))
        for _ in range(50):
            surplus[:] = 0
            weight[:] = 0
            elo.owner_terms(x, owner, rj, score, count, _C, surplus, weight)   # (one compiled pass: elo.pyx)
            grad = _C * surplus - x / PRIOR_SD**2
            hess = _C**2 * weight + 1 / PRIOR_SD**2
            d = np.clip(grad / hess, -200, 200)
            x += d
            if np.abs(d).max() < 1e-4:
                break
        covered = np.bincount(owner, minlength=len(sel)) > 0
        out[sel] = np.where(covered, x, np.nan)
        if step is not None:
            step()
    return out
