"""The unplayed-round stage: one pass per rule edition over the dense view (rules.md 4.2-4.7).

It derives, for every player-round, the C.07 16.2 category, the score each player shows as an opponent
(16.3 adjusted score, or the edition's equivalent), the element that round contributes to Buchholz and
Sonneborn-Berger (opponent's score, or the dummy / virtual opponent with its caps, 16.4) and whether
that element is a voluntary unplayed round for the Cut rule (16.5). Kernels read these arrays only.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from tbstats.dense import FORFEIT_TYPES, NO_OPP, REQUESTED_BYE_TYPES, VUR_TYPES, Dense
from tbstats.games import GAME_TYPE
from tbstats.rules import RuleSet

# C.07 16.2 categories of a player-round (0 = game played over the board)
PLAYED, CAT_PAB_FPB, CAT_FORFEIT_WIN, CAT_BYE_FOLLOWED, CAT_FORFEIT_LOSS, CAT_BYE_TRAILING = 0, 1, 2, 3, 4, 5
NOT_COUNTED = -1
# Which cap bounded a dummy (for explain)
CAP_NONE, CAP_OPPONENT, CAP_DRAWS = 0, 1, 2


@dataclass(frozen=True)
class Elements:
    """Per-edition arrays derived from a dense view; what every opponent-based kernel reads."""

    dense: Dense
    rules: RuleSet
    score: np.ndarray        # [P] actual score, units
    as_opponent: np.ndarray  # [P] score seen by opponents (16.3 adjusted score or edition's equivalent)
    category: np.ndarray     # [P,R] 16.2 category, NOT_COUNTED outside the counted rounds
    present: np.ndarray      # [P,R] the round is an element of BH/SB
    oppscore: np.ndarray     # [P,R] the opponent's (or dummy's) score for that element, units
    vur: np.ndarray          # [P,R] the element is a voluntary unplayed round for Cut purposes (16.5)
    uncapped: np.ndarray     # [P,R] the dummy's value before caps (explain; meaningful where an own element)
    cap: np.ndarray          # [P,R] CAP_* that bounded the dummy (where an own element)
    predetermined: np.ndarray  # [P] pre-determined (round-robin) rules apply to the player's event

    @property
    def sb_contribution(self) -> np.ndarray:
        """Opponent score times points scored, units squared (C.07 9.1)."""
        return self.oppscore * self.dense.pts


def categories(d: Dense) -> np.ndarray:
    """C.07 16.2 category of every counted player-round; requested byes split by what follows (16.2.3/5)."""
    table = np.full(len(GAME_TYPE), NOT_COUNTED, dtype=np.int8)
    table[GAME_TYPE["played"]] = PLAYED
    table[[GAME_TYPE["pab"], GAME_TYPE["full_bye"]]] = CAT_PAB_FPB
    table[GAME_TYPE["forfeit_win"]] = CAT_FORFEIT_WIN
    table[[GAME_TYPE["forfeit_loss"], GAME_TYPE["double_forfeit"]]] = CAT_FORFEIT_LOSS
    cat = table[d.gtype]
    non_vur = d.counted & ~d.is_type(VUR_TYPES)
    # any non-VUR round strictly after r: reverse cumulative OR, shifted by one
    later = np.zeros_like(non_vur)
    later[:, :-1] = np.flip(np.logical_or.accumulate(np.flip(non_vur[:, 1:], axis=1), axis=1), axis=1)
    requested = d.is_type(REQUESTED_BYE_TYPES)
    cat[requested] = np.where(later[requested], CAT_BYE_FOLLOWED, CAT_BYE_TRAILING)
    cat[~d.counted] = NOT_COUNTED
    return cat


def apply_rules(d: Dense, rules: RuleSet, category: np.ndarray | None = None) -> Elements:
    """Run the unplayed-round stage of edition ``rules`` over the dense view (rules.md 4.7).

    ``category`` (from :func:`categories`, edition-independent) may be passed in to share it.
    """
    cat = categories(d) if category is None else category
    pts = d.points
    score = d.score
    Dp = d.per_player(d.D)
    n = d.per_player(d.n)
    predetermined = d.per_player(d.round_robin) & rules.predetermined
    unplayed = d.counted & (cat != PLAYED)

    if rules.opponent_score == "fide":
        adjusted = score + ((cat == CAT_BYE_TRAILING) * (Dp[:, None] - pts)).sum(axis=1)
    elif rules.opponent_score == "all_unplayed_draw":
        adjusted = score + (unplayed * (Dp[:, None] - pts)).sum(axis=1)
    else:
        adjusted = score
    as_opponent = np.where(predetermined, score, adjusted)

    opp_value = as_opponent[d.opp_row]
    forfeit = d.is_type(FORFEIT_TYPES) & d.has_opp
    game_like = d.played | (forfeit & predetermined[:, None]) if predetermined.any() else d.played

    # the element of an unplayed round (4.4 dummy, C.02 virtual opponent, US 0, or none)
    cap = np.zeros((1, 1), dtype=np.int8)
    own = rules.own_unplayed
    if own == "dummy":
        uncapped = np.broadcast_to(score[:, None], pts.shape)
        dummy = uncapped
        if rules.dummy_caps:
            cap_value = np.where(forfeit, opp_value, (Dp * n)[:, None])
            over = uncapped > cap_value
            cap = np.where(over, np.where(forfeit, CAP_OPPONENT, CAP_DRAWS), CAP_NONE).astype(np.int8)
            dummy = np.where(over, cap_value, uncapped)
    elif own == "virtual_opponent":
        before = np.cumsum(pts, axis=1) - pts                      # S_P(r-1)
        r = np.arange(1, d.rounds + 1)[None, :]
        uncapped = before + (d.per_player(d.W)[:, None] - pts) + Dp[:, None] * (n[:, None] - r)
        dummy = uncapped
    else:
        uncapped = dummy = np.zeros((1, 1), dtype=pts.dtype)
    own_element = unplayed & ~game_like & ~predetermined[:, None] if own != "none" else np.zeros_like(unplayed)

    present = game_like | own_element
    oppscore = np.where(game_like, opp_value, np.where(own_element, dummy, 0))
    vur = own_element & d.is_type(VUR_TYPES) if rules.vur_cuts else np.zeros_like(own_element)
    return Elements(dense=d, rules=rules, score=score, as_opponent=as_opponent, category=cat, present=present,
                    oppscore=oppscore, vur=vur, uncapped=np.broadcast_to(uncapped, pts.shape),
                    cap=np.broadcast_to(cap, pts.shape), predetermined=predetermined)


def fore_view(d: Dense) -> Dense:
    """The view for Fore Buchholz: every paired game of the final round drawn (C.07 8.3).

    The final round is the event's planned last round; events whose counted rounds stop before it are
    unchanged (FB equals BH before the final round, rules.md 4.8). Byes keep their points.
    """
    final = (d.n == d.planned) & (d.n > 0)
    last = d.per_player(np.where(final, d.n - 1, -1))
    rows = np.nonzero(last >= 0)[0]
    cols = last[rows]
    paired = d.opp[rows, cols] != NO_OPP
    rows, cols = rows[paired], cols[paired]
    pts = d.pts.copy()
    gtype = d.gtype.copy()
    outcome = d.outcome.copy()
    pts[rows, cols] = d.D[d.tix[rows]]
    gtype[rows, cols] = GAME_TYPE["played"]
    outcome[rows, cols] = 1
    return replace(d, pts=pts, gtype=gtype, outcome=outcome)
