"""Extended direct encounter for teams (C.07 13.3, rules.md 9.5) and its 2026 chains, vectorised.

EDE applies Direct Encounter (Art. 6: 6.1.2 averages of repeated meetings, 6.2 separate standings when all
have met or in round robins, 6.3 in Swiss events) on the primary score between the tied teams; if that
separates nobody, on the secondary score; every new subset restarts from the primary score. The chains
``EDET``/``EDEB``/``EDEBT``/``EDEBB`` then order two teams still tied on MP and GP by Board Count, Top Board
Result or Bottom Board Elimination of their direct encounter (13.3.2).

All tied groups of all events are processed together, as :func:`tbstats.engine.standings.direct_encounter` does for
players: each pass applies one DE step to every open group, on the score that group is at (primary or
secondary), from the counted matches inside the group (pairs of teams, ``np.unique``/``np.bincount``).
A group that splits has its parts start again from the primary; one that does not moves on to the
secondary score, and is settled when that does not split it either. Passes are bounded by the group sizes
(each pass splits or advances every open group); there is no per-group Python loop.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from tbstats.engine.standings import place_from_top, refine
from tbstats.engine.teams.dense import TeamDense, board_points
from tbstats.engine.teams.tiebreaks import TeamContext
from tbstats.model.dense import FORFEIT_TYPES
from tbstats.model.spec import TieBreakSpec

#: EDE and its 2026 chains: the board steps of the direct encounter for two teams still tied (13.3.2).
CHAINS: Final = {"EDE": (), "EDET": ("TBR",), "EDEB": ("BBE",), "EDEBT": ("BC", "TBR"), "EDEBB": ("BC", "BBE")}


def _counted(td: TeamDense, forfeits: bool) -> np.ndarray:
    """[T, R] counted direct matches: played; forfeited too in round robins or with /P."""
    d = td.mp
    forfeit = d.is_type(FORFEIT_TYPES) & d.has_opp & (forfeits | d.per_player(d.round_robin))[:, None]
    counted: np.ndarray = (d.played | forfeit) & d.has_opp
    return counted


def _de_pass(labels: np.ndarray, active: np.ndarray, on_gp: np.ndarray, td: TeamDense,
             meetings: tuple[np.ndarray, ...]) -> np.ndarray:
    """One DE step (Art. 6) in every active group, each team on its group's score (``on_gp``): new labels.

    6.1.2: repeated meetings count as their average (scores in units of 1/L, L = lcm of the repeat counts).
    6.2 (all have met, or a round robin): the group splits by the scores among it. 6.3 (Swiss, not all have
    met): teams are placed from the top while each stays ahead of every rival below it whatever the missing
    matches; the rest stays one group. A group that nothing separates keeps its label.
    """
    T = len(labels)
    mi, mj, p_mp, p_gp = meetings
    size = np.bincount(labels, minlength=T)[labels]
    inside = active[mi] & (labels[mi] == labels[mj])
    i, j = mi[inside], mj[inside]
    p = np.where(on_gp[i], p_gp[inside], p_mp[inside])
    uniq, inv, cnt = np.unique(i * T + j, return_inverse=True, return_counts=True)
    L = int(np.lcm.reduce(np.arange(1, int(cnt.max()) + 1))) if len(cnt) else 1
    pair_pts = np.bincount(inv, weights=p, minlength=len(uniq)).astype(np.int64)
    owner = uniq // T
    score = np.bincount(owner, weights=pair_pts * (L // cnt), minlength=T).astype(np.int64)
    met = np.bincount(owner, minlength=T)
    d = td.mp
    rr = d.per_player(d.round_robin)
    not_all_met = np.bincount(labels, weights=active & (met != size - 1) & ~rr, minlength=T) > 0
    all_met = active & ~not_all_met[labels]
    open_63 = active & ~all_met
    sub = np.zeros(T, dtype=np.int64)
    if open_63.any():
        W = np.where(on_gp, td.gp.per_player(td.gp.W), d.per_player(d.W))
        best = score + W * L * (size - 1 - met)   # a rival winning every missing match
        sub = place_from_top(labels, score, best, open_63, size)[0]
    return refine(labels, np.where(all_met, -score, sub))


def _meetings(td: TeamDense, counted: np.ndarray, among: np.ndarray) -> tuple[np.ndarray, ...]:
    """Counted matches of the teams in ``among`` inside their tied groups: (team, opponent, MP, GP)."""
    sub = np.nonzero(among)[0]
    i, r = np.nonzero(counted[sub])
    i = sub[i]
    j = td.mp.opp[i, r].astype(np.int64)
    return i, j, td.mp.pts[i, r].astype(np.int64), td.gp.pts[i, r].astype(np.int64)


def ede_labels(td: TeamDense, labels: np.ndarray, *, forfeits: bool, restart: bool = True) -> np.ndarray:
    """Refine ``labels`` by EDE (13.3) within every tied group.

    With ``restart`` False a subset split off by the secondary score goes on with the secondary score only
    (the reading of Held's exercise 45; rules.md 9.5 says restart, the default).
    """
    T = len(labels)
    counted = _counted(td, forfeits)
    size = np.bincount(labels, minlength=T)[labels]
    m = _meetings(td, counted, size > 1)
    within = labels[m[0]] == labels[m[1]]      # only matches inside the first tied groups can matter
    meetings = tuple(a[within] for a in m)
    primary_gp = td.primary[td.mp.tix] != "MP"
    secondary = np.zeros(T, dtype=bool)       # the team's group is at its secondary score
    done = np.zeros(T, dtype=bool)
    while True:
        size = np.bincount(labels, minlength=T)[labels]
        active = (size > 1) & ~done
        if not active.any():
            return labels
        split = _de_pass(labels, active, primary_gp ^ secondary, td, meetings)
        changed = (np.bincount(labels, weights=split != labels, minlength=T) > 0)[labels] & active
        stuck = active & ~changed
        # a split restarts its parts from the primary (or, without restart, keeps them on the secondary);
        # a group the primary does not split tries the secondary; one the secondary does not split is settled
        if restart:
            secondary = np.where(changed, False, secondary)
        done |= stuck & secondary
        secondary |= stuck
        labels = split


def _pair_keys(td: TeamDense, counted: np.ndarray, a: np.ndarray, b: np.ndarray,
               steps: tuple[str, ...]) -> np.ndarray:
    """[n, k] keys of team ``a`` against ``b`` (ascending = better): BC, then TBR/BBE of their encounter."""
    bp = board_points(td)                                        # [T, R, B]
    met = counted[a] & (td.mp.opp[a] == b[:, None])              # [n, R]
    boards = (bp[a] * met[:, :, None]).sum(axis=1)               # [n, B]
    n, B = boards.shape
    count = td.boards[td.mp.tix[a]].astype(np.int64)             # boards of the event
    parts = []
    for step in steps:
        if step == "BC":       # board number x board points, lower first
            parts.append((boards * np.arange(1, B + 1)).sum(axis=1)[:, None])
        elif step == "TBR":    # board 1, board 2, ... higher first
            parts.append(-boards)
        else:                  # BBE: without the last board, the last two, ... higher first
            prefix = np.cumsum(boards, axis=1)
            k = count[:, None] - 1 - np.arange(1, max(B, 2))[None, :]   # last board kept, 0-based
            parts.append(np.where(k >= 0, -prefix[np.arange(n)[:, None], np.maximum(k, 0)], 0))
    return np.concatenate(parts, axis=1) if parts else np.zeros((n, 0), dtype=np.int64)


def tied_pairs(td: TeamDense, labels: np.ndarray, *, forfeits: bool) -> tuple[np.ndarray, ...]:
    """The groups of exactly two teams in ``labels`` (after EDE): teams ``a``, ``b``, whether they met, and
    whether their MP totals and their GP totals are equal. 13.3.2's chain orders a pair that met and is
    "tied in both MP and GP": tbstats reads that as both totals equal (rules.md 9.5)."""
    T = len(labels)
    size = np.bincount(labels, minlength=T)
    pairs = np.nonzero(size[labels] == 2)[0]
    order = pairs[np.argsort(labels[pairs], kind="stable")]
    a, b = order[0::2], order[1::2]
    counted = _counted(td, forfeits)
    met = (counted[a] & (td.mp.opp[a] == b[:, None])).any(axis=1)
    return a, b, met, td.mp.score[a] == td.mp.score[b], td.gp.score[a] == td.gp.score[b]


def chain_labels(td: TeamDense, labels: np.ndarray, steps: tuple[str, ...], *, forfeits: bool) -> np.ndarray:
    """Two teams still tied on MP and GP after EDE: the board steps of their direct encounter (13.3.2)."""
    if not steps:
        return labels
    a, b, met, same_mp, same_gp = tied_pairs(td, labels, forfeits=forfeits)
    same = same_mp & same_gp & met
    a, b = a[same], b[same]
    if len(a) == 0:
        return labels
    counted = _counted(td, forfeits)
    ka, kb = _pair_keys(td, counted, a, b, steps), _pair_keys(td, counted, b, a, steps)
    differ = ka != kb
    decided = differ.any(axis=1)
    first = differ.argmax(axis=1)
    rows = np.arange(len(a))
    a_first = ka[rows, first] < kb[rows, first]
    key = np.zeros(len(labels), dtype=np.int64)
    key[a[decided]] = np.where(a_first[decided], 0, 1)
    key[b[decided]] = np.where(a_first[decided], 1, 0)
    return refine(labels, key)


def extended_direct_encounter(tc: TeamContext, labels: np.ndarray, spec: TieBreakSpec, *,
                              restart: bool = True) -> np.ndarray:
    """Refine ``labels`` by EDE or one of its 2026 chains within every tied group."""
    labels = ede_labels(tc.td, labels, forfeits=spec.forfeits, restart=restart)
    return chain_labels(tc.td, labels, CHAINS[spec.name], forfeits=spec.forfeits)
