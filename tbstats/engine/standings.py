"""Standings: points, then tie-breaks in order, each applied only to groups still tied (C.07 4.2).

Players carry a group label, ordered so that a lower label ranks higher; every tie-break refines the labels
of the groups it splits. A numeric tie-break is a sort key; DE (Art. 6) orders each tied group by the games
among its members, vectorised over all groups of the batch at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tbstats.engine import encounters
from tbstats.engine.ranks import kept_rows, refine_groups
from tbstats.engine.tiebreaks import FIXED_EDITION, get_tiebreak, kernel_of
from tbstats.engine.tiebreaks.base import Context, Values
from tbstats.model.dense import FORFEIT_TYPES, Roster, type_table
from tbstats.model.grid import loop_view
from tbstats.model.spec import TieBreakSpec

_BIG = np.iinfo(np.int64).max // 4
#: DE's passes, and refine's grouping of the tied players, work on them alone when they are fewer than one in
#: this many of the batch's players (else one pass over every player costs less)
FEW_TIED = 4
_FORFEIT = type_table(FORFEIT_TYPES)


def tied_players(labels: np.ndarray, among: np.ndarray | None = None) -> np.ndarray:
    """The players in groups of two or more (ascending rows); ``among``: when only those can be (the tied
    players of an earlier step: refining never joins groups)."""
    if among is None:
        return np.flatnonzero(np.bincount(labels, minlength=len(labels))[labels] > 1)
    lab = labels[among]
    out: np.ndarray = among[np.bincount(lab, minlength=len(labels))[lab] > 1]
    return out


def refine(labels: np.ndarray, key: np.ndarray, tied: np.ndarray | None = None) -> np.ndarray:
    """Split tied groups by ``key`` (ascending = better); only players in groups of two or more are sorted.

    Labels are positions: a group's label is the global position (0-based, players of all tournaments in
    order) of its first member, so a group of size s covers positions label .. label + s - 1. Splitting a
    group gives each part the position of its first member; other groups keep their labels. ``tied`` may
    pass in :func:`tied_players` of ``labels`` when known. Each group is sorted on its own, in one compiled
    pass without the GIL (:func:`tbstats.engine.ranks.refine_groups`).
    """
    if tied is None:
        tied = tied_players(labels)
    return refine_tied(labels, key[tied], tied)[0]


def refine_tied(labels: np.ndarray, key: np.ndarray, tied: np.ndarray, *,
                in_place: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """:func:`refine` of the groups of ``tied`` (:func:`tied_players` of ``labels``, ascending rows) by ``key``,
    one per player of ``tied`` (``key[tied]`` of :func:`refine`'s: a late step, with few players tied, makes no
    key for the others), and the players still tied after it (:func:`tied_players` of the new labels among
    ``tied``), from the same pass. ``in_place``: the new labels are written over ``labels`` (contiguous int64, the
    caller's own), not into a copy."""
    if len(tied) == 0:
        return labels, tied
    if key.dtype.kind not in "iub":
        raise TypeError(f"refine: keys are exact integers, not {key.dtype}")
    if in_place and not (labels.dtype == np.int64 and labels.flags.c_contiguous and labels.flags.writeable):
        raise ValueError("refine_tied: labels refined in place are writeable contiguous int64")
    labels = np.ascontiguousarray(labels, dtype=np.int64)
    out = labels if in_place else labels.copy()   # (the pass reads every label before it writes one)
    tied = np.ascontiguousarray(tied, dtype=np.int64)
    still = np.empty(len(tied), dtype=np.uint8)
    few = FEW_TIED * len(tied) < len(labels)
    refine_groups(labels, np.ascontiguousarray(key, dtype=np.int64), tied, out, still, few)
    kept = np.empty(len(tied), dtype=np.int64)
    return out, kept[:kept_rows(tied, still, kept)]


def tournament_first(tix: np.ndarray, sizes: np.ndarray | None = None) -> np.ndarray:
    """Each player's tournament's first position (players sorted by tix); ``sizes``: the players per tournament,
    when known (:attr:`~tbstats.model.dense.Roster.sizes`)."""
    if not len(tix):
        return np.zeros(0, dtype=np.int64)
    count = np.bincount(tix) if sizes is None else sizes
    starts = np.cumsum(count) - count
    out: np.ndarray = starts[tix]
    return out


def initial_labels(tix: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Position labels of the groups of equal ``key`` within each tournament (players sorted by tix)."""
    return refine(tournament_first(tix), key)


def sort_key(values: Values, higher_is_better: bool, rows: np.ndarray | None = None) -> np.ndarray:
    """A key whose ascending order is best first; undefined values go last. ``rows``: of those players only."""
    key = values.num.copy() if rows is None else values.num[rows]   # (a copy either way)
    if higher_is_better:
        np.negative(key, out=key)
    if values.defined.all():   # (the usual case: every value defined)
        return key
    key[~(values.defined if rows is None else values.defined[rows])] = _BIG
    return key


def competition_rank(labels: np.ndarray, tix: np.ndarray, first: np.ndarray | None = None, *,
                     dtype: type = np.int64) -> np.ndarray:
    """Rank 1, 2, 2, 4 within each tournament from position labels (players sorted by tix).

    ``first`` (from :func:`tournament_first`) may be passed in when ranking the same players repeatedly;
    ``dtype`` may be narrower (:func:`rank_dtype`).
    """
    rank = labels - (tournament_first(tix) if first is None else first) + 1
    return rank.astype(dtype, copy=False)


def rank_dtype(roster: Roster) -> type:
    """The narrowest integer type that holds every rank of the roster's players (int16 for events below 32,767
    players, else int32)."""
    largest = int(roster.sizes.max(initial=0))
    return np.int16 if largest < np.iinfo(np.int16).max else np.int32


@dataclass(frozen=True)
class _Meetings:
    """Counted direct games as pairs (i, j, points of i), for DE."""

    i: np.ndarray
    j: np.ndarray
    pts: np.ndarray


def _meetings(ctx: Context, forfeits: bool, among: np.ndarray, labels: np.ndarray) -> _Meetings:
    """The counted direct games of the players in ``among`` (a mask over the batch's players) against a member
    of their own group (by ``labels``; no other game can matter to DE): the games played over the board, and
    the forfeits with a scheduled opponent where they count (``forfeits``: DE/P; round robins, 15.2). Each
    view's cached masks and forfeit cells serve (they are few), in any order."""
    parts = []
    for rows, part in ctx.parts():
        d = part.dense
        mask = among if rows is None else among[rows]
        group = labels if rows is None else labels[rows]
        R = max(d.rounds, 1)
        # the games' cells as flat positions (one index array, read with np.take)
        if int(mask.sum()) * FEW_TIED < len(mask):   # their rows only: DE late in a list has few tied players
            players = np.flatnonzero(mask)
            k, r = np.nonzero(d.played[players])
            at = players[k] * R + r
            at = at[group[at // R] == group[np.take(d.opp, at)]]
        else:   # one compiled pass over the grid: most games are between groups when DE comes right after points
            at = np.empty(d.opp.size, dtype=np.int64)   # (pages never written are never touched)
            n = encounters.group_games(d.opp, loop_view(d.played), np.ascontiguousarray(group, dtype=np.int64),
                                       loop_view(np.ascontiguousarray(mask)), at)
            at = at[:n]
        fi, fr = d.forfeit_cells
        keep = mask[fi] & _FORFEIT[d.gtype[fi, fr]] & (forfeits | d.round_robin[d.tix[fi]])
        if keep.any():
            keep &= group[fi] == group[d.opp[fi, fr]]
            at = np.concatenate([at, fi[keep] * R + fr[keep]])
        i, j, p = at // R, np.take(d.opp, at).astype(np.int64), np.take(d.pts, at).astype(np.int64)
        parts.append((i, j, p) if rows is None else (rows[i], rows[j], p))
    if not parts:
        return _Meetings(*(np.zeros(0, dtype=np.int64) for _ in range(3)))
    return _Meetings(*(np.concatenate(a) for a in zip(*parts, strict=True)))


def place_from_top(labels: np.ndarray, score: np.ndarray, best: np.ndarray, candidates: np.ndarray,
                   size: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """C.07 6.3 over every group at once: among the ``candidates`` of each group (by ``labels``, of ``size``
    members), rank from the top while one stays alone on top whatever its missing encounters give: its
    ``score`` beats the ``best`` case of every member below it; the last one left is placed too. One compiled
    pass (:func:`tbstats.engine.encounters.place_from_top`).

    Returns per participant the place from the top (the group size when not placed), and whether none of
    its group was placed (for the candidates).
    """
    sub, nothing = np.empty(len(labels), dtype=np.int64), np.empty(len(labels), dtype=bool)
    labels, score, best, size = (np.ascontiguousarray(a, dtype=np.int64) for a in (labels, score, best, size))
    encounters.place_from_top(labels, score, best, loop_view(np.ascontiguousarray(candidates, dtype=bool)), size,
                              sub, loop_view(nothing))
    return sub, nothing


def direct_encounter(ctx: Context, labels: np.ndarray, *, forfeits: bool, partial: bool,
                     tied: np.ndarray | None = None) -> np.ndarray:
    """Refine ``labels`` by Direct Encounter within every tied group (C.07 6; rules.md 5.1).

    6.1.2: repeat meetings count as the average of their games. 6.2: when all have met, separate standings
    decide, reapplied to any still-tied subset. 6.3 (``partial``, Swiss): a player alone on top whatever the
    missing games is ranked first, and so on; DE then restarts on the rest. All tied groups of the batch
    are processed together; each pass splits or settles every group still open.

    When few players are still tied, the passes run on them alone, numbered 0..k-1 in the order of their
    rows, with their groups' labels renumbered as positions among them (a group keeps its members, so the
    split of each group is the same as among all players); the new labels are then shifted back.

    ``tied``: the players whose groups are refined (whole groups of :func:`tied_players`; default: all of them);
    other players' labels are then left undefined.
    """
    d = ctx.roster
    if tied is None:
        tied = tied_players(labels)
    if not len(tied):
        return labels
    among = np.zeros(d.players, dtype=bool)
    among[tied] = True
    if len(tied) * FEW_TIED >= d.players:   # most players tied (DE early in a list): renumbering costs more
        m = _meetings(ctx, forfeits, among, labels)
        return _encounters(labels, m.i, m.j, m.pts, d.per_player(d.round_robin), d.per_player(d.W),
                           partial=partial)
    lab = labels[tied]
    local = np.searchsorted(np.sort(lab), lab)     # each group's first position among the tied players
    m = _meetings(ctx, forfeits, among, labels)
    index = np.full(d.players, -1, dtype=np.int64)   # batch row -> number among the tied players
    index[tied] = np.arange(len(tied))
    i, j = index[m.i], index[m.j]
    found = (i >= 0) & (j >= 0)
    i, j, pts = i[found], j[found], m.pts[found]
    t_tied = d.tix[tied]
    refined = _encounters(local, i, j, pts, d.round_robin[t_tied], d.W[t_tied], partial=partial)
    out = labels.copy()
    out[tied] = lab + (refined - local)
    return out


def _encounters(labels: np.ndarray, i: np.ndarray, j: np.ndarray, pts: np.ndarray, rr: np.ndarray,
                W: np.ndarray, *, partial: bool) -> np.ndarray:
    """:func:`direct_encounter`'s passes over players 0..P-1 with position ``labels``: games ``i`` against ``j``
    of the same group (:func:`_meetings`; ``pts`` the points of ``i``), ``rr`` the players of round robins,
    ``W`` the points of a win."""
    P = len(labels)
    labels = np.ascontiguousarray(labels, dtype=np.int64)
    rr = np.ascontiguousarray(rr).view(np.uint8)
    # each pair of players once (6.1.2: repeated meetings count as their average, scaled by L to stay exact);
    # the passes below only choose which pairs are still inside an open group
    owner, partner, pair_score, cnt = (np.empty(len(i), dtype=np.int64) for _ in range(4))
    i, j, pts = (np.ascontiguousarray(a, dtype=np.int64) for a in (i, j, pts))
    n = encounters.pair_sums(i, j, pts, P, owner, partner, pair_score, cnt)
    cnt = cnt[:n]
    L = int(np.lcm.reduce(np.arange(1, int(cnt.max()) + 1))) if n else 1
    pair_score[:n] *= L // cnt
    done = np.zeros(P, dtype=bool)
    score, met = np.empty(P, dtype=np.int64), np.empty(P, dtype=np.int64)
    all_met = np.empty(P, dtype=bool)
    while True:
        size = np.bincount(labels, minlength=P)[labels]
        active = (size > 1) & ~done
        if not active.any():
            return labels
        # the pairs still inside an open group, moved to the front; each player's points and opponents among them
        n = encounters.group_scores(labels, active.view(np.uint8), owner, partner, pair_score, n, score, met)
        encounters.all_met(labels, active.view(np.uint8), met, size, rr, all_met.view(np.uint8))

        # 6.3: rank from the top while a player stays alone on top whatever the missing games
        open_63 = active & ~all_met
        sub = np.zeros(P, dtype=np.int64)
        unresolved = np.zeros(P, dtype=bool)
        if partial and open_63.any():
            best = score + W * L * (size - 1 - met)   # a rival winning every missing game
            sub, unresolved = place_from_top(labels, score, best, open_63, size)
        else:
            unresolved |= open_63
        # 6.2: separate standings among a group where all have met (its key is -score alone, so its split is
        # the same in this one refine as on its own); such a group that does not split stays tied
        refined = refine(labels, np.where(all_met, -score, sub))
        changed = np.bincount(labels, weights=refined != labels, minlength=P) > 0
        unresolved |= all_met & ~changed[labels]
        labels = refined
        done |= unresolved


#: A step of a ranking: a spec and the edition its values are computed under ('' for DE: no edition applies)
StepKey = tuple[str, str]


def step_keys(specs: list[TieBreakSpec], edition: str) -> tuple[StepKey, ...]:
    """What each step of :func:`rank_steps` depends on: two lists whose keys begin alike give the same steps
    as far as they agree (points come first under every edition)."""
    return tuple((str(s), "" if get_tiebreak(s.name).kind == "partition" else FIXED_EDITION.get(s.name, edition))
                 for s in specs)


class SharedSteps:
    """Steps shared by rankings whose lists begin alike (``BH/C1,BH`` in several lists of one edition, ``DE``
    first under any edition): a caller ranking many lists passes one to :func:`rank_steps` and takes the lists
    in the order of their :func:`step_keys`, so that a beginning is computed once and let go as soon as a list
    does not begin with it (no later list does). It holds the steps of one list at most."""

    def __init__(self) -> None:
        self._held: dict[tuple[StepKey, ...], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def begin(self, keys: tuple[StepKey, ...]) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """The held steps (labels, tied players, ranks) of the longest beginning of ``keys``, in order; what
        ``keys`` does not begin with is let go."""
        self._held = {k: v for k, v in self._held.items() if keys[:len(k)] == k}
        out = []
        for n in range(1, len(keys) + 1):
            if keys[:n] not in self._held:
                break
            out.append(self._held[keys[:n]])
        return out

    def hold(self, keys: tuple[StepKey, ...], labels: np.ndarray, tied: np.ndarray, ranks: np.ndarray) -> None:
        for array in (labels, tied, ranks):   # shared by the rankings: read-only
            array.flags.writeable = False
        self._held[keys] = (labels, tied, ranks)


def rank_steps(ctx: Context, specs: list[TieBreakSpec], edition: str, *, dtype: type = np.int64,
               shared: SharedSteps | None = None, among: np.ndarray | None = None) -> list[np.ndarray]:
    """Competition ranks after points, then after each spec in turn (C.07 4.2): ``len(specs) + 1`` arrays
    of ``dtype`` (a caller that keeps many may pass :func:`rank_dtype`; with ``shared`` the arrays of steps
    other lists share are read-only). ``among`` (a mask of whole tournaments' players): rank those only,
    the others' ranks are left undefined (a :class:`SharedSteps` then serves lists ranked among the same).

    Each tie-break refines only the groups still tied; players tied at the end share a rank.
    """
    d = ctx.roster
    first, labels, tied = _by_points(ctx)   # tied: only they can still change; values are computed for every spec
    if among is not None:
        tied = tied[among[tied]]
    steps = [competition_rank(labels, d.tix, first, dtype=dtype)]
    keys = step_keys(specs, edition)
    held = shared.begin(keys) if shared is not None else []
    if held:   # the steps of the longest beginning computed for another list
        labels, tied = held[-1][:2]
        steps += [ranks if ranks.dtype == dtype else ranks.astype(dtype) for _, _, ranks in held]
    own = False   # labels this call made, refined in place when no other ranking holds them
    for n in range(len(steps) - 1, len(specs)):
        spec = specs[n]
        tb = get_tiebreak(spec.name)
        was_tied = tied
        if tb.kind == "partition":
            if len(tied):
                refined = direct_encounter(ctx, labels, forfeits=spec.forfeits, partial=spec.name == "DE", tied=tied)
                own, labels = own or refined is not labels, refined   # (none split: the same array)
            tied = tied_players(labels, tied)
        else:
            values = ctx.values(spec, FIXED_EDITION.get(spec.name, edition), kernel_of(spec.name))
            key = sort_key(values, tb.higher_is_better != spec.reverse, tied)
            labels, tied = refine_tied(labels, key, tied, in_place=own and shared is None)
            own = True
        steps.append(_next_ranks(steps[-1], labels, was_tied, d.tix, first))
        if shared is not None:
            shared.hold(keys[:n + 1], labels, tied, steps[-1])
    return steps


def _next_ranks(ranks: np.ndarray, labels: np.ndarray, was_tied: np.ndarray, tix: np.ndarray,
                first: np.ndarray) -> np.ndarray:
    """The competition ranks after a step, from those before it: a step refines only the groups still tied
    (``was_tied``), so only their players' ranks can change (the others' are copied, not worked out again)."""
    if FEW_TIED * len(was_tied) >= len(labels):
        return competition_rank(labels, tix, first, dtype=ranks.dtype.type)
    out = ranks.copy()
    out[was_tied] = competition_rank(labels[was_tied], tix[was_tied], first[was_tied], dtype=ranks.dtype.type)
    return out


def _by_points(ctx: Context) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each player's tournament's first position, the position labels of the groups tied on points and the
    players in groups of two or more: once per context (the score is the same under every edition, C.07 4)."""
    key = "\0points"
    cached = ctx.standings_cache.get(key)
    if cached is None:
        pts = ctx.values(TieBreakSpec("PTS"), "fide-2026", kernel_of("PTS"))
        first = tournament_first(ctx.roster.tix, ctx.roster.sizes)
        # every player a candidate (one alone in its event stays so): no count of the groups before or after
        labels, tied = refine_tied(first, -pts.num, np.arange(len(first)))
        cached = ctx.standings_cache[key] = (first, labels, tied)
        for array in cached:   # shared by every configuration's steps: read-only
            array.flags.writeable = False
    return cached  # type: ignore[return-value]


def ranks(ctx: Context, specs: list[TieBreakSpec], edition: str) -> np.ndarray:
    """Competition ranks by points then ``specs`` in order (C.07 4.2); remaining ties share a rank."""
    return rank_steps(ctx, specs, edition)[-1]
