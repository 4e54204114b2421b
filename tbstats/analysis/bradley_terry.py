"""The Bradley-Terry (Elo) fit of :func:`tbstats.analysis.strength.fit` on numbered game sides: the whole
archive's strengths (:func:`whole_fit`) and each player's strength without one of his events
(:func:`leave_one_out`).

A side is player ``i`` against ``j`` scoring ``s`` (1, 0.5, 0) in event ``event``; players are numbers
``0 .. n - 1``. The expected score is ``1 / (1 + 10^(-(r_i - r_j) / 400))``, each strength has the prior
``N(0, PRIOR_SD²)``, and every fit is a posterior mode. Its passes over the sides are compiled
(:mod:`tbstats.analysis.elo`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from tbstats.analysis import elo
from tbstats.engine.threads import map_threads
from tbstats.model.columns import ranges

PRIOR_SD: Final = 400.0
#: The Elo curve's scale: ``p = 1 / (1 + exp(-C (r_i - r_j)))``.
C: Final = math.log(10) / 400


def sides_by_player(i: np.ndarray, event: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The game sides' order by player, then event (stably); where each of the ``n`` players' sides start in it,
    and how many he has."""
    order = np.argsort(i * (int(event.max(initial=0)) + 1) + event, kind="stable")   # (lexsort's order, 2x faster)
    n_games = np.bincount(i, minlength=n)
    start = np.zeros(n, dtype=np.int64)
    np.cumsum(n_games[:-1], out=start[1:])
    return order, start, n_games


def whole_fit(i: np.ndarray, j: np.ndarray, s: np.ndarray, event: np.ndarray, n: int, iterations: int, tol: float,
              sides: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None, groups: Groups | None = None,
              step: Callable[[], None] | None = None, workers: int = 1) -> np.ndarray:
    """The whole archive's strengths of the ``n`` players (the posterior's mode: Gaussian prior) from the game sides
    ``i`` against ``j`` scoring ``s`` in events ``event``, by Newton's method on all players at once (``sides``:
    :func:`sides_by_player`, and ``groups``: :meth:`Groups.of`, when known).

    Each step solves ``H d = g`` (:func:`newton_step`: the gradient and Hessian of the log posterior, the
    Hessian a weighted graph Laplacian of the games plus the prior) by conjugate gradients, to a residual that
    tightens as the gradient falls (inexact Newton: few products where far from the mode, superlinear near
    it); steps are clipped to 200 Elo while far. It stops when no strength moves by ``tol``: about ten steps,
    where updating each player against his opponents' strengths of the step before (the diagonal of ``H``
    alone) took 126 on the 10k mix and still stood 1e-3 Elo from the mode when its steps fell below 1e-4, and
    never settled where two players meet again and again (it swung 200 Elo both ways).
    Its passes run over the groups (all a player's games against one opponent: one row), not the sides: where
    players meet again and again (the real files copied 40 times), 40 times fewer rows, and the products of
    conjugate gradients are many there (392 for that archive). The players are numbered by the first event they
    played in and the rows ordered by player, so that an event's players are neighbours in memory (the FIDE ids'
    order scatters the opponents: 1.6x the time). With ``workers``, each step's passes run on that many threads.
    """
    sides = sides if sides is not None else sides_by_player(i, event, n)
    groups = groups if groups is not None else Groups.of(j, s, sides)
    order, start, _ = sides
    players = np.argsort(event[order[start]], kind="stable") if n else np.zeros(0, dtype=np.int64)
    number = np.empty(n, dtype=np.int64)
    number[players] = np.arange(n)
    length = groups.many[players]
    row = ranges(groups.first[players], length)
    i, j, count, score = np.repeat(np.arange(n), length), number[groups.opponent[row]], groups.count[row], \
        groups.score[row]
    del row   # (a row index per group: 128 MB on the 100k mix, not needed through the steps)
    parts = _player_parts(length, workers)
    r = np.zeros(n)
    for _ in range(iterations):
        d = np.clip(newton_step(r, i, j, score, count, parts=parts), -200, 200)
        r += d
        if step is not None:
            step()
        if not len(d) or np.abs(d).max() < tol:
            break
    return r[number]


def newton_step(r: np.ndarray, i: np.ndarray, j: np.ndarray, s: np.ndarray, games: np.ndarray,
                max_products: int = 1000, parts: Sequence[tuple[int, int, int, int]] | None = None) -> np.ndarray:
    """The Newton step ``d`` of the log posterior at ``r``: ``H d = g`` solved by conjugate gradients,
    preconditioned by ``H``'s diagonal, until the residual is below ``min(0.1, sqrt(|g|)) |g|``. A row is
    ``games`` games of ``i`` against ``j`` scoring ``s`` in all. With ``parts`` (rows
    ordered by player, cut by :func:`_player_parts`) its passes over the rows run on a thread a part, each over
    players of its own (the sums are those of one thread, to the bit).

    Per game the expected score is ``p = 1 / (1 + 10^(-(r_i - r_j) / 400))``; ``g_i = C sum(s - p) - r_i / sd²``,
    and ``H = C² (D - A) + I / sd²`` with ``A`` the games' weights ``p (1 - p)`` between players and ``D`` their
    sums per player (the games' Laplacian: symmetric, and positive definite with the prior)."""
    n = len(r)
    w, surplus, weight = np.empty(len(s)), np.zeros(n), np.zeros(n)
    parts = parts or [(0, len(s), 0, n)]
    map_threads(lambda part: elo.side_terms(r, i, j, s, games, C, w, surplus, weight, *part), parts,
                workers=len(parts))
    g = C * surplus - r / PRIOR_SD**2
    diag = weight + 1 / PRIOR_SD**2
    d = np.zeros(n)
    hq = np.empty(n)

    def product(q: np.ndarray) -> None:   # hq = H q, a thread a part
        map_threads(lambda part: elo.hessian_product(i, j, w, diag, q, hq, *part), parts, workers=len(parts))

    res = g.copy()
    z = res / diag
    q = z.copy()
    rz = float(res @ z)
    size = math.sqrt(float(g @ g))
    goal = min(0.1, math.sqrt(size)) * size
    for _ in range(max_products):
        if math.sqrt(float(res @ res)) <= goal:
            break
        product(q)
        a = rz / float(q @ hq)
        d += a * q
        res -= a * hq
        z = res / diag
        rz, before = float(res @ z), rz
        q = z + (rz / before) * q
    return d


#: Rows from which a pass over them is cut for threads: a pass over this many takes well under a millisecond
#: (the 100k mix's 16 million rows about 50 ms), below which handing parts to other threads costs about as much.
THREAD_ROWS: Final = 200_000


def _player_parts(rows: np.ndarray, workers: int) -> list[tuple[int, int, int, int]]:
    """Players' rows (``rows[p]`` each, one player after another) cut for ``workers`` threads into about equal
    runs that end where a player's rows do: ``(first row, end row, first player, end player)`` each."""
    ends = np.cumsum(rows)
    m, n = int(ends[-1]) if len(ends) else 0, len(rows)
    if workers < 2 or m < THREAD_ROWS:
        return [(0, m, 0, n)]
    cut = sorted({int(np.searchsorted(ends, m * k // workers, side="left")) + 1 for k in range(1, workers)} - {n})
    players = [0, *cut, n]
    starts = [0, *(int(ends[p - 1]) for p in cut), m]
    return list(zip(starts[:-1], starts[1:], players[:-1], players[1:], strict=True))


#: Points of the series (Chebyshev), and the half-width of its interval about the whole-fit strength (Elo). The
#: expected score is analytic in a strip of half-width ``pi / c`` (546 Elo) about the real axis, so the series
#: converges like ``3.05 ** -n`` on an interval of 400 (a Bernstein ellipse of that size fits in the strip): 32
#: points give the sum to rounding. Its 32 sums over a player's games cost about what 3 refits game by game do
#: (Newton steps of two passes), and save all but one's worth for each further event: on the 10k mix of
#: benchmarks/README.md the series for every player refit took 1.33 s for the whole fit, for players of 4
#: events and more only (the others game by game) 1.6 s.
SERIES_POINTS: Final = 32
SERIES_WIDTH: Final = 400.0


@dataclass(frozen=True)
class _Series:
    """The sum of a player's expected scores over all his games, and its slope, as Chebyshev series about his
    whole-fit strength (``SERIES_WIDTH`` either side), for the players refit (those of two events and more).

    A refit without one event then costs the games of that event, not all the player's games again: the sum
    over his games outside the event is the series less his games in the event, and, in the second pass, plus
    the difference an opponent who also played in that event makes at his strength without it (his games
    against that opponent elsewhere). A refit whose iterate leaves the interval is made game by game."""

    players: np.ndarray   # ascending
    coef_a: np.ndarray
    coef_d: np.ndarray
    total: np.ndarray     # each player's score over all his games (by player number)

    @staticmethod
    def of(r: np.ndarray, players: np.ndarray, groups: Groups, workers: int = 1) -> _Series:
        """The series of the ``players`` (ascending) from their ``groups``, on ``workers`` threads."""
        m = SERIES_POINTS
        angle = np.pi * (np.arange(m) + 0.5) / m
        basis = 2 / m * np.cos(np.outer(np.arange(m), angle))
        basis[0] /= 2
        coef_a, coef_d = np.empty((len(players), m)), np.empty((len(players), m))
        map_threads(lambda part: elo.chebyshev_sums(
            players[part[2]:part[3]], groups.first, groups.many, groups.opponent, groups.count, r, np.cos(angle),
            basis, SERIES_WIDTH, C, coef_a[part[2]:part[3]], coef_d[part[2]:part[3]]),
            _player_parts(groups.many[players], workers), workers=workers)
        total = np.bincount(np.repeat(np.arange(len(groups.many)), groups.many), groups.score,
                            minlength=len(groups.many))
        return _Series(players, coef_a, coef_d, total)

    def refit(self, r: np.ndarray, who: np.ndarray, without: np.ndarray, groups: Groups, order: np.ndarray,
              in_event: tuple[np.ndarray, np.ndarray], s: np.ndarray, j: np.ndarray,
              opponents: tuple[np.ndarray, np.ndarray, int] | None, chunk: int = 200_000,
              step: Callable[[], None] | None = None, workers: int = 1) -> np.ndarray:
        """Each pair's strength without its event (as :func:`_refit`, whose arguments these are; ``j``: each
        side's opponent), ``chunk`` pairs at a time, on ``workers`` threads (each chunk's own rows)."""
        side_first, side_count = in_event
        present = _Present.of(opponents)
        out, failed = np.empty(len(who)), np.zeros(len(who), dtype=np.uint8)

        def one(lo: int) -> None:
            at = slice(lo, lo + chunk)
            count = side_count[at]
            mine = order[ranges(side_first[at], count)]
            owner = np.repeat(np.arange(len(count)), count)
            surplus = self.total[who[at]] - np.bincount(owner, s[mine], minlength=len(count))
            co_start, co_n, co_v, co_r = present.rows(who[at], without[at], groups, mine, owner, r)
            elo.refit_pairs(np.searchsorted(self.players, who[at]), r[who[at]], self.coef_a, self.coef_d, surplus,
                            np.cumsum(count) - count, count, r[j[mine]], co_start[:-1], np.diff(co_start), co_n,
                            co_v, co_r, SERIES_WIDTH, C, PRIOR_SD**2, 1e-4, 50, out[at], failed[at])
            if step is not None:
                step()

        starts = range(0, len(who), chunk)
        map_threads(one, starts, workers=workers)
        again = np.flatnonzero(failed)
        if len(again):
            out[again] = _refit(r, who[again], without[again], groups, order, (side_first[again], side_count[again]),
                                s, opponents)
        return out


@dataclass(frozen=True)
class _Present:
    """The players refit without each event who have a strength without it (the second pass's opponents, see
    :func:`_refit`), by event: ``player[start[e]:start[e] + count[e]]`` ascending, their strengths ``value``."""

    start: np.ndarray
    count: np.ndarray
    player: np.ndarray
    value: np.ndarray

    @staticmethod
    def of(opponents: tuple[np.ndarray, np.ndarray, int] | None) -> _Present:
        """From :func:`_refit`'s ``opponents`` (none before the second pass: no one)."""
        if opponents is None:
            return _Present(np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64),
                            np.zeros(0))
        keys, values, span = opponents
        known = ~np.isnan(values)
        keys, values = keys[known], values[known]
        event, player = keys % span, keys // span
        by_event = np.lexsort((player, event))
        count = np.bincount(event, minlength=span)
        return _Present(np.cumsum(count) - count, count, player[by_event], values[by_event])

    def rows(self, who: np.ndarray, without: np.ndarray, groups: Groups, mine: np.ndarray, owner: np.ndarray,
             r: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """For each pair (``who`` without ``without``; ``mine``: its sides in that event, ``owner`` their pair), its
        games elsewhere against opponents with a strength of their own without that event: each pair's first row
        (and the end), and per row the games outside the event, the opponent's strength without it and his
        whole-fit one."""
        if not len(self.player):
            return np.zeros(len(who) + 1, dtype=np.int64), np.zeros(0), np.zeros(0), np.zeros(0)
        args = (who, without, groups.first, groups.many, groups.opponent, self.start, self.count, self.player)
        rows = np.zeros(len(who), dtype=np.int64)
        most = int(np.minimum(groups.many[who], self.count[without]).sum())   # (each pair finds at most the shorter)
        group, at = np.empty(most, dtype=np.int64), np.empty(most, dtype=np.int64)
        elo.co_rows(*args, rows, group, at)
        group, at = group[:rows.sum()], at[:rows.sum()]
        # the games outside the event: the pair's games against that opponent, less those in the event
        size = len(groups.opponent) + 1
        in_event = np.sort(owner * size + groups.of_side[mine])
        key = np.repeat(np.arange(len(who)), rows) * size + group
        n = groups.count[group] - (np.searchsorted(in_event, key, side="right") - np.searchsorted(in_event, key))
        return np.r_[0, np.cumsum(rows)], n, self.value[at], r[groups.opponent[group]]


@dataclass(frozen=True)
class Groups:
    """The game sides gathered by (player, opponent): a group is all the games of one player against one
    opponent, in every event (``count`` of them, scoring ``score`` in all). A player's groups are
    ``first[p]:first[p] + many[p]``, opponents ascending; ``of_side`` is each side's group."""

    first: np.ndarray
    many: np.ndarray
    opponent: np.ndarray
    count: np.ndarray
    score: np.ndarray
    of_side: np.ndarray

    @staticmethod
    def of(j: np.ndarray, s: np.ndarray, sides: tuple[np.ndarray, np.ndarray, np.ndarray]) -> Groups:
        """The groups of the sides against ``j`` scoring ``s``, from the sides by player (:func:`sides_by_player`'s
        ``order, start, n_games``): one compiled pass, each player's sides sorted by opponent in place of a sort
        of them all."""
        order, start, n_games = sides
        wanted = np.ones(len(start), dtype=np.uint8)
        size = len(j)
        first, many = np.empty(len(start), dtype=np.int64), np.empty(len(start), dtype=np.int64)
        opponent, count, score = np.empty(size, dtype=np.int64), np.empty(size), np.empty(size)
        of_side = np.full(len(j), -1, dtype=np.int64)
        made = elo.side_groups(order, start, n_games, wanted, j, s, first, many, opponent, count, score, of_side)
        return Groups(first, many, opponent[:made], count[:made], score[:made], of_side)


def _refit(r: np.ndarray, who: np.ndarray, without: np.ndarray, groups: Groups, order: np.ndarray,
           in_event: tuple[np.ndarray, np.ndarray], s: np.ndarray,
           opponents: tuple[np.ndarray, np.ndarray, int] | None, chunk_rows: int = 2_000_000) -> np.ndarray:
    """Each player's strength from his games outside one event (Newton on one unknown each), game by game: where
    a refit leaves its series' interval (:class:`_Series`); NaN if none.

    A player's games are taken opponent by opponent (:class:`Groups`: his games against one opponent in all
    events, less those in the event left out), so that a player who meets the same opponents in many events is
    not read game by game once for each of his events. ``in_event``: where each pair's sides in its event lie in
    ``order`` (first, count). ``opponents`` (sorted keys
    ``player * span + event``, strengths, span): an opponent found there for the left-out event plays at that
    strength instead of his whole-fit one.
    """
    out = np.full(len(who), np.nan)
    lengths = groups.many[who]
    cum = np.r_[0, np.cumsum(lengths)]
    side_first, side_count = in_event
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
        many = side_count[sel]
        mine = order[ranges(side_first[sel], many)]
        at = np.repeat(base - first, many) + groups.of_side[mine]
        count -= np.bincount(at, minlength=len(g))
        score -= np.bincount(at, s[mine], minlength=len(g))
        keep = count > 0
        g, owner, count, score = g[keep], owner[keep], count[keep], score[keep]
        x = r[who[sel]].copy()
        opponent = groups.opponent[g]
        rj = r[opponent]
        if opponents is not None and len(opponents[0]):
            keys, values, span = opponents
            key = opponent * span + without[sel][owner]
            pos = np.minimum(np.searchsorted(keys, key), len(keys) - 1)
            found = (keys[pos] == key) & ~np.isnan(values[pos])
            rj = np.where(found, values[pos], rj)
        surplus, weight = np.empty(len(sel)), np.empty(len(sel))
        for _ in range(50):
            surplus[:] = 0
            weight[:] = 0
            elo.owner_terms(x, owner, rj, score, count, C, surplus, weight)   # (one compiled pass: elo.pyx)
            grad = C * surplus - x / PRIOR_SD**2
            hess = C**2 * weight + 1 / PRIOR_SD**2
            d = np.clip(grad / hess, -200, 200)
            x += d
            if np.abs(d).max() < 1e-4:
                break
        covered = np.bincount(owner, minlength=len(sel)) > 0
        out[sel] = np.where(covered, x, np.nan)
    return out


def played(i: np.ndarray, event: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each (player, event) pair with a side, in ``order`` (:func:`sides_by_player`'s): the position of its first
    side there, its player and its event."""
    i_sorted, e_sorted = i[order], event[order]
    head = np.ones(len(order), dtype=bool)
    head[1:] = (i_sorted[1:] != i_sorted[:-1]) | (e_sorted[1:] != e_sorted[:-1])
    return np.flatnonzero(head), i_sorted[head], e_sorted[head]


def leave_one_out(r: np.ndarray, j: np.ndarray, s: np.ndarray, sides: tuple[np.ndarray, np.ndarray, np.ndarray],
                  groups: Groups, pairs: tuple[np.ndarray, np.ndarray, np.ndarray], pair: np.ndarray,
                  who: np.ndarray, without: np.ndarray, passes: int,
                  step: Callable[[], None] | None = None, workers: int = 1) -> np.ndarray:
    """The strength of player ``who[k]`` from his games outside event ``without[k]`` (each of these pairs played
    in its event, ``pairs``' ``pair[k]``, and in another), from the whole fit ``r``, the sides by player
    (:func:`sides_by_player`), their groups (:meth:`Groups.of`) and pairs
    (:func:`played`). The first pass holds every opponent at his
    whole-fit strength; each further pass gives an opponent who also played in the event left out his strength
    without it, from the pass before (no pass: the whole-fit strengths). On ``workers`` threads."""
    if not passes:
        return r[who]
    order = sides[0]
    first, _, event = pairs
    span = int(max(event.max(initial=0), without.max(initial=0))) + 1
    keys = who * span + without
    by_key = np.argsort(keys, kind="stable")
    # each pair's sides in its event: order[side_first[k]:side_first[k] + side_count[k]]
    side_first, side_count = first[pair], np.diff(np.r_[first, len(order)])[pair]
    series = _Series.of(r, np.unique(who), groups, workers)
    opponents = None
    for _ in range(passes):
        loo = series.refit(r, who, without, groups, order, (side_first, side_count), s, j, opponents, step=step,
                           workers=workers)
        opponents = (keys[by_key], loo[by_key], span)
    return loo
