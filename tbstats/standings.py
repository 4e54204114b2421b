"""Standings: points, then tie-breaks in order, each applied only to groups still tied (C.07 4.2).

Players carry a group label, ordered so that a lower label ranks higher; every tie-break refines the labels
of the groups it splits. A numeric tie-break is a sort key; DE (Art. 6) orders each tied group by the games
among its members, vectorised over all groups of the batch at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tbstats.dense import FORFEIT_TYPES, NO_OPP
from tbstats.spec import TieBreakSpec
from tbstats.tiebreaks import FIXED_EDITION, get_tiebreak, kernel_of
from tbstats.tiebreaks.base import Context, Values

_BIG = np.iinfo(np.int64).max // 4


def refine(labels: np.ndarray, key: np.ndarray) -> np.ndarray:
    """New dense labels ordered by (label, key): groups split where ``key`` differs."""
    order = np.lexsort((key, labels))
    ls, ks = labels[order], key[order]
    change = np.ones(len(order), dtype=bool)
    change[1:] = (ls[1:] != ls[:-1]) | (ks[1:] != ks[:-1])
    out = np.empty(len(order), dtype=np.int64)
    out[order] = np.cumsum(change) - 1
    return out


def sort_key(values: Values, higher_is_better: bool) -> np.ndarray:
    """A key whose ascending order is best first; undefined values go last."""
    key = -values.num if higher_is_better else values.num.copy()
    return np.where(values.defined, key, _BIG)


def competition_rank(labels: np.ndarray, tix: np.ndarray) -> np.ndarray:
    """Rank 1, 2, 2, 4 within each tournament from ordered labels."""
    order = np.lexsort((labels, tix))
    ls, ts = labels[order], tix[order]
    pos = np.arange(len(order))
    t_start = np.ones(len(order), dtype=bool)
    t_start[1:] = ts[1:] != ts[:-1]
    g_start = t_start.copy()
    g_start[1:] |= ls[1:] != ls[:-1]
    first_t = np.maximum.accumulate(np.where(t_start, pos, 0))
    first_g = np.maximum.accumulate(np.where(g_start, pos, 0))
    out = np.empty(len(order), dtype=np.int64)
    out[order] = first_g - first_t + 1
    return out


@dataclass(frozen=True)
class _Meetings:
    """Counted direct games as pairs (i, j, points of i), for DE."""

    i: np.ndarray
    j: np.ndarray
    pts: np.ndarray


def _meetings(ctx: Context, forfeits: bool) -> _Meetings:
    d = ctx.dense
    with_forfeits = d.is_type(FORFEIT_TYPES) & (d.opp != NO_OPP) & (forfeits | d.per_player(d.round_robin))[:, None]
    counted = d.played | with_forfeits
    i, r = np.nonzero(counted)
    return _Meetings(i, d.opp[i, r], d.pts[i, r])


def direct_encounter(ctx: Context, labels: np.ndarray, *, forfeits: bool, partial: bool) -> np.ndarray:
    """Refine ``labels`` by Direct Encounter within every tied group (C.07 6; rules.md 5.1).

    6.1.2: repeat meetings count as the average of their games. 6.2: when all have met, separate standings
    decide, reapplied to any still-tied subset. 6.3 (``partial``, Swiss): a player alone on top whatever the
    missing games is ranked first, and so on; DE then restarts on the rest.
    """
    d = ctx.dense
    m = _meetings(ctx, forfeits)
    max_meet = 1
    if len(m.i):
        _, counts = np.unique(m.i * d.players + m.j, return_counts=True)
        max_meet = int(counts.max())
    L = int(np.lcm.reduce(np.arange(1, max_meet + 1)))  # common denominator of the 6.1.2 averages
    Wl = d.per_player(d.W) * L
    rr = d.per_player(d.round_robin)
    labels = refine(labels, np.zeros_like(labels))
    done = np.zeros(d.players, dtype=bool)
    while True:
        size = np.bincount(labels, minlength=labels.max() + 1)[labels]
        active = (size > 1) & ~done
        if not active.any():
            return labels
        inside = active[m.i] & (labels[m.i] == labels[m.j])
        i, j, p = m.i[inside], m.j[inside], m.pts[inside]
        pair = i * d.players + j
        uniq, inv, cnt = np.unique(pair, return_inverse=True, return_counts=True)
        pair_pts = np.bincount(inv, weights=p, minlength=len(uniq)).astype(np.int64)
        owner = uniq // d.players
        score = np.bincount(owner, weights=pair_pts * (L // cnt), minlength=d.players).astype(np.int64)
        met = np.bincount(owner, minlength=d.players)
        all_met_player = (met == size - 1) | rr
        g_all = np.ones(labels.max() + 1, dtype=bool)
        np.logical_and.at(g_all, labels, all_met_player)
        all_met = g_all[labels]

        # 6.2: separate standings among the group
        split = refine(labels, np.where(active & all_met, -score, 0))
        n_parts = np.zeros(labels.max() + 1, dtype=np.int64)
        first = np.unique(np.stack([labels, split]), axis=1)
        np.add.at(n_parts, first[0], 1)
        unresolved_62 = active & all_met & (n_parts[labels] == 1)

        # 6.3: rank from the top while a player stays alone on top whatever the missing games
        cand = active & ~all_met & bool(partial)
        sub = np.zeros(d.players, dtype=np.int64)
        unresolved_63 = active & ~all_met
        if cand.any():
            best = score + Wl * (size - 1 - met)   # a rival's best case: winning every missing game
            rows = np.nonzero(cand)[0]
            order = rows[np.lexsort((-score[rows], labels[rows]))]
            lab = labels[order]
            g_starts = _starts(lab)
            # c is alone on top if its score beats the best case of every member below it
            rev = order[::-1]
            beaten = score[rev] > _segment_cummax_exclusive(best[rev], _starts(lab[::-1]))
            ranked = _segment_cumand(beaten[::-1], g_starts)
            group_size = size[order]
            n_ranked = np.zeros(labels.max() + 1, dtype=np.int64)
            np.add.at(n_ranked, lab, ranked)
            ranked |= n_ranked[lab] >= group_size - 1    # the last one left is placed too
            first = np.maximum.accumulate(np.where(g_starts, np.arange(len(order)), 0))
            sub[order] = np.where(ranked, np.arange(len(order)) - first, group_size)
            unresolved_63 = np.zeros(d.players, dtype=bool)
            unresolved_63[order] = n_ranked[lab] == 0
            if not partial:
                unresolved_63 |= active & ~all_met
        new_labels = refine(labels, np.where(active & all_met, -score, sub))
        done |= unresolved_62 | unresolved_63
        labels = new_labels


def _starts(labels: np.ndarray) -> np.ndarray:
    starts = np.ones(len(labels), dtype=bool)
    starts[1:] = labels[1:] != labels[:-1]
    return starts


def _segment_cummax_exclusive(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per contiguous segment, the max of the values strictly before each position (a floor at starts)."""
    floor = values.min() - 1
    shifted = np.empty_like(values)
    shifted[0] = floor
    shifted[1:] = values[:-1]
    shifted[starts] = floor
    span = values.max() - floor + 1
    base = (np.cumsum(starts) - 1) * span   # segments never see an earlier segment's maximum
    return np.maximum.accumulate(shifted - floor + base) - base + floor


def _segment_cumand(ok: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per contiguous segment, True while every value so far is True."""
    bad = np.cumsum(~ok)
    first = np.maximum.accumulate(np.where(starts, np.arange(len(ok)), 0))
    return bad - (bad[first] - (~ok[first])) == 0


def rank_steps(ctx: Context, specs: list[TieBreakSpec], edition: str) -> list[np.ndarray]:
    """Competition ranks after points, then after each spec in turn (C.07 4.2): ``len(specs) + 1`` arrays.

    Each tie-break refines only the groups still tied; players tied at the end share a rank.
    """
    d = ctx.dense
    pts = ctx.values(TieBreakSpec("PTS"), edition, kernel_of("PTS"))
    labels = refine(d.tix, -pts.num)
    steps = [competition_rank(labels, d.tix)]
    for spec in specs:
        tb = get_tiebreak(spec.name)
        if tb.kind == "partition":
            labels = direct_encounter(ctx, labels, forfeits=spec.forfeits, partial=spec.name == "DE")
        else:
            values = ctx.values(spec, FIXED_EDITION.get(spec.name, edition), kernel_of(spec.name))
            labels = refine(labels, sort_key(values, tb.higher_is_better != spec.reverse))
        steps.append(competition_rank(labels, d.tix))
    return steps


def ranks(ctx: Context, specs: list[TieBreakSpec], edition: str) -> np.ndarray:
    """Competition ranks by points then ``specs`` in order (C.07 4.2); remaining ties share a rank."""
    return rank_steps(ctx, specs, edition)[-1]
