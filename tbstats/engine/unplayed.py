"""The unplayed-round stage: one pass per rule edition over the dense view (rules.md 4.2-4.7).

It derives, for every player-round, the C.07 16.2 category, the score each player shows as an opponent
(16.3 adjusted score, or the edition's equivalent), the element that round contributes to Buchholz and
Sonneborn-Berger (opponent's score, or the dummy / virtual opponent with its caps, 16.4) and whether
that element is a voluntary unplayed round for the Cut rule (16.5). Kernels read these arrays only.

The stage runs in compiled passes over the grid, without the GIL (:mod:`tbstats.engine.stage`: in numpy it
took some twenty calls per bucket, each handing the engine's other thread the GIL); the edition comes to them
as data (its :class:`~tbstats.model.rules.RuleSet`). Fore Buchholz (:func:`fore_elements`) runs the same stage
with the final round's paired games drawn (that round's cells, the scores, the categories they change); FB
without cuts needs only its sum (:func:`fore_total`), which changes the edition's sum by what changed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from tbstats.engine.stage import OPPONENT_MODES, OWN_MODES, final_cells, fore_sums, stage_cells
from tbstats.model.cached import cached_property
from tbstats.model.dense import (
    FORFEIT_TYPES,
    REQUESTED_BYE_TYPES,
    VUR_TYPES,
    Dense,
    type_table,
)
from tbstats.model.games import GAME_TYPE
from tbstats.model.grid import loop_view
from tbstats.model.rows import round_categories
from tbstats.model.rules import RuleSet

# C.07 16.2 categories of a player-round (0 = game played over the board)
PLAYED, CAT_PAB_FPB, CAT_FORFEIT_WIN, CAT_BYE_FOLLOWED, CAT_FORFEIT_LOSS, CAT_BYE_TRAILING = 0, 1, 2, 3, 4, 5
NOT_COUNTED = -1
# Which cap bounded a dummy (for explain)
CAP_NONE, CAP_OPPONENT, CAP_DRAWS = 0, 1, 2
_NO_FINAL = np.zeros(0, dtype=np.int64)

_VUR = type_table(VUR_TYPES)
_FORFEIT = type_table(FORFEIT_TYPES)
_REQUESTED = type_table(REQUESTED_BYE_TYPES)
#: The category of a round by its game type, requested byes aside (split by what follows them)
_BY_TYPE = np.full(len(GAME_TYPE), NOT_COUNTED, dtype=np.int8)
_BY_TYPE[GAME_TYPE["played"]] = PLAYED
_BY_TYPE[[GAME_TYPE["pab"], GAME_TYPE["full_bye"]]] = CAT_PAB_FPB
_BY_TYPE[GAME_TYPE["forfeit_win"]] = CAT_FORFEIT_WIN
_BY_TYPE[[GAME_TYPE["forfeit_loss"], GAME_TYPE["double_forfeit"]]] = CAT_FORFEIT_LOSS


@dataclass(frozen=True)
class Dummies:
    """The own unplayed elements of a stage as a list of cells (they are few): what explain shows of them."""

    rows: np.ndarray
    cols: np.ndarray
    uncapped: np.ndarray     # the dummy's (or virtual opponent's) value before caps
    cap: np.ndarray          # CAP_* that bounded it


@dataclass(frozen=True)
class Elements:
    """Per-edition arrays derived from a dense view; what every opponent-based kernel reads."""

    dense: Dense             # the view the stage ran on (for FB: the base view; its final round is in the arrays)
    rules: RuleSet
    score: np.ndarray        # [P] actual score, units
    as_opponent: np.ndarray  # [P] score seen by opponents (16.3 adjusted score or edition's equivalent)
    category: np.ndarray     # [P,R] 16.2 category, NOT_COUNTED outside the counted rounds
    present: np.ndarray      # [P,R] the round is an element of BH/SB
    oppscore: np.ndarray     # [P,R] the opponent's (or dummy's) score for that element, units
    vur: np.ndarray          # [P,R] the element is a voluntary unplayed round for Cut purposes (16.5)
    dummies: Dummies         # the player's own unplayed elements: their cells, values before caps and caps
    predetermined: np.ndarray  # [P] pre-determined (round-robin) rules apply to the player's event
    game_like: np.ndarray    # [P,R] the element is a game: the opponent's score counts
    own: np.ndarray          # [P,R] the element is the player's own unplayed round (dummy, virtual opponent)
    pts: np.ndarray          # [P,R] points scored in the counted rounds (FB: final round's games drawn)
    forfeit_games: tuple[np.ndarray, np.ndarray]  # cells of the forfeits counted as games (15.2, /P): few
    oppscore_total: np.ndarray  # [P] the sum of the elements' opponent scores (BH before cuts), units (int64)
    elements: np.ndarray     # [P] the number of elements (int64)
    forfeits: bool = False   # the stage was run with the /P modifier (every forfeit a game)

    @cached_property
    def uncapped(self) -> np.ndarray:
        """[P,R] the dummy's value before caps (explain; meaningful where an own element)."""
        out = np.zeros(self.oppscore.shape, dtype=self.oppscore.dtype)
        out[self.dummies.rows, self.dummies.cols] = self.dummies.uncapped
        return out

    @cached_property
    def cap(self) -> np.ndarray:
        """[P,R] CAP_* that bounded the dummy (where an own element)."""
        out = np.zeros(self.oppscore.shape, dtype=np.int8)
        out[self.dummies.rows, self.dummies.cols] = self.dummies.cap
        return out

    @cached_property
    def fore_total(self) -> np.ndarray:
        """Each player's Fore Buchholz before cuts, from this stage (:func:`fore_total`), int64."""
        return fore_total(self)

    @property
    def sb_contribution(self) -> np.ndarray:
        """Opponent score times points scored, units squared (C.07 9.1)."""
        return self.oppscore * self.pts


def categories(d: Dense) -> np.ndarray:
    """C.07 16.2 category of every counted player-round; requested byes split by what follows (16.2.3/5): one
    compiled pass per row (:func:`tbstats.model.rows.round_categories`)."""
    out = np.empty(d.gtype.shape, dtype=np.int8)
    round_categories(d.gtype, loop_view(d.counted), _BY_TYPE, loop_view(_REQUESTED), loop_view(_VUR),
                     CAT_BYE_FOLLOWED, CAT_BYE_TRAILING, NOT_COUNTED, out)
    return out


def _unit_bound(d: Dense) -> int:
    """The largest absolute points value of a round: any cell's points, a win's, a draw's."""
    return max(int(np.abs(d.W).max(initial=0)), int(np.abs(d.D).max(initial=0)), d.max_abs_points)


def _per_tournament(d: Dense) -> tuple[np.ndarray, ...]:
    """The view's ``tix``, ``n``, ``W`` and ``D`` as the compiled passes take them (contiguous int64)."""
    return tuple(np.ascontiguousarray(a, dtype=np.int64) for a in (d.tix, d.n, d.W, d.D))


def _value_dtype(d: Dense) -> type:
    """int32 for element values (opponent scores, dummies), their products with points and row sums if they fit."""
    m = _unit_bound(d)
    return np.int32 if 3 * m * m * max(d.rounds, 1) ** 2 < 2 ** 31 else np.int64


def apply_rules(d: Dense, rules: RuleSet, category: np.ndarray | None = None, *,
                forfeits: bool = False) -> Elements:
    """Run the unplayed-round stage of edition ``rules`` over the dense view (rules.md 4.7), in compiled passes
    (:func:`tbstats.engine.stage.stage_cells`).

    ``category`` (from :func:`categories`, edition-independent) may be passed in to share it. ``forfeits`` is
    the ``/P`` modifier (rules.md 5): every forfeit with a scheduled opponent is a game against that opponent,
    with the points awarded (no dummy, not a VUR), in any event; other unplayed rounds keep the edition's rules.
    In pre-determined events (15.2, where the edition has them) forfeits are games too and there are no dummies.
    """
    cat = categories(d) if category is None else category
    predetermined = np.ascontiguousarray(d.per_player(d.round_robin) & rules.predetermined)
    return _stage(d, rules, cat, d.points, d.score, predetermined, forfeits, _NO_FINAL)


def _stage(d: Dense, rules: RuleSet, cat: np.ndarray, pts: np.ndarray, score: np.ndarray, predetermined: np.ndarray,
           forfeits: bool, final_col: np.ndarray) -> Elements:
    """The stage of :func:`apply_rules` with these categories, points and scores; ``final_col`` (per player, or
    empty) a round that is a game whatever its type (FB's final round, :func:`fore_elements`)."""
    dtype = _value_dtype(d)
    P, R = d.opp.shape
    tix, n, win, draw = _per_tournament(d)
    as_opponent, total, count = (np.empty(P, dtype=np.int64) for _ in range(3))
    game_like, own, present, vur = (np.empty((P, R), dtype=bool) for _ in range(4))
    oppscore: np.ndarray = np.empty((P, R), dtype=dtype)
    # the lists of the few forfeits counted as games and own elements, as long as the view (pages never written
    # are never touched)
    game_at, own_at = np.empty(P * R, dtype=np.intp), np.empty(P * R, dtype=np.intp)
    uncapped, cap = np.empty(P * R, dtype=dtype), np.empty(P * R, dtype=np.int8)
    opp, gtype, points, category, played = (np.ascontiguousarray(a) for a in (d.opp, d.gtype, pts, cat,
                                                                              loop_view(d.played)))
    games, owns = stage_cells(opp, gtype, points, category, played, loop_view(d.counted), score,
                              loop_view(predetermined), tix, n, win, draw, loop_view(_VUR), loop_view(_FORFEIT),
                              OPPONENT_MODES[rules.opponent_score], OWN_MODES[rules.own_unplayed], rules.dummy_caps,
                              rules.vur_cuts, forfeits, PLAYED, CAT_BYE_TRAILING, as_opponent, loop_view(game_like),
                              loop_view(own), loop_view(present), loop_view(vur), oppscore, game_at, own_at, uncapped,
                              cap, final_col, total, count)
    rows, cols = np.divmod(own_at[:owns], max(R, 1))
    return Elements(dense=d, rules=rules, score=score, as_opponent=as_opponent, category=cat, present=present,
                    oppscore=oppscore, vur=vur, dummies=Dummies(rows, cols, uncapped[:owns].copy(), cap[:owns].copy()),
                    predetermined=predetermined, game_like=game_like, own=own, pts=pts,
                    forfeit_games=np.divmod(game_at[:games], max(R, 1)), oppscore_total=total, elements=count,
                    forfeits=forfeits)


def final_columns(d: Dense) -> np.ndarray:
    """Each player's cell of the final round that FB draws, as a column (-1: none; int64), C.07 8.3.

    The final round is the event's planned last round, with a scheduled opponent; events whose counted rounds
    stop before it have none (FB equals BH before the final round, rules.md 4.8). Byes keep their points.
    """
    final = (d.n == d.planned) & (d.n > 0)
    last = np.where(final, d.n - 1, -1).astype(np.int64)
    col = np.empty(d.players, dtype=np.int64)
    final_cells(np.ascontiguousarray(d.tix, dtype=np.int64), last, np.ascontiguousarray(d.opp, dtype=np.int32), col)
    return col


def final_round_cells(d: Dense) -> tuple[np.ndarray, np.ndarray]:
    """The paired cells of each event's final round (:func:`final_columns`) as rows and columns."""
    col = final_columns(d)
    rows = np.flatnonzero(col >= 0)
    return rows, col[rows]


def fore_elements(base: Elements) -> Elements:
    """The stage for Fore Buchholz from an edition's stage: every paired game of the final round drawn.

    Only the final round's paired cells change (a draw over the board), with the scores they change:
    the players' own scores, hence the scores seen by opponents in every round and the dummies' values.
    """
    d = base.dense
    final_col = final_columns(d)
    rows = np.flatnonzero(final_col >= 0)
    if not len(rows):
        return base
    cols = final_col[rows]
    at, drawn, score = _final_draws(base, rows, cols)
    pts = _with_cells(base.pts, at, drawn)
    cat = _with_cells(base.category, at, PLAYED)
    was_vur = _now_followed(d, rows, at)
    if len(was_vur):
        sub = cat[was_vur]
        sub[sub == CAT_BYE_TRAILING] = CAT_BYE_FOLLOWED
        cat[was_vur] = sub
    return _stage(d, base.rules, cat, pts, score, base.predetermined, base.forfeits, final_col)


def _final_draws(base: Elements, rows: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The final round's paired cells (``rows``, ``cols``) drawn: their flat positions, a draw's points, and
    every player's score with them."""
    d = base.dense
    at = rows * d.rounds + cols   # the cells as flat positions: one index array instead of two
    drawn = d.D[d.tix[rows]]
    score = base.score.copy()
    score[rows] += drawn - np.take(base.pts, at)
    return at, drawn, score


def _now_followed(d: Dense, rows: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The players whose final round, a forfeit loss, is a game once drawn: the requested byes before it are
    followed now (16.2.3)."""
    return rows[_VUR[np.take(d.gtype, at)]]


def fore_total(base: Elements) -> np.ndarray:
    """The sum of the elements of :func:`fore_elements` for each player (FB before cuts), int64, from an
    edition's stage without FB's own grids: one compiled pass (:func:`tbstats.engine.stage.fore_sums`).

    Drawing the final round's games changes the scores (as opponents too); every other element keeps its
    kind. An element that is a game changes by its opponent's change (the games played and the forfeits
    counted as games); a final-round cell that was no game becomes one; the dummies are valued again with the
    new scores (the final round's own cells are games now). A virtual opponent reads the points before its
    round, never a final-round game's, so the points need no change here.
    """
    d, rules = base.dense, base.rules
    P = d.players
    work = [np.empty(P, dtype=np.int64) for _ in range(4)]   # scores, change, and the sums
    predetermined = np.ascontiguousarray(base.predetermined, dtype=bool)
    tix, n, win, draw = _per_tournament(d)
    fore_sums(d.opp, d.gtype, base.pts, base.category, loop_view(d.played), loop_view(base.game_like),
              loop_view(d.counted), base.oppscore, base.score, base.as_opponent, base.oppscore_total,
              loop_view(predetermined), tix, n, win, draw, final_columns(d), *base.forfeit_games,
              base.dummies.rows, base.dummies.cols, loop_view(_VUR), loop_view(_FORFEIT),
              OPPONENT_MODES[rules.opponent_score], OWN_MODES[rules.own_unplayed], rules.dummy_caps,
              PLAYED, CAT_BYE_TRAILING, *work)
    return work[-1]


def _with_cells(grid: np.ndarray, at: np.ndarray, value: np.ndarray | int | bool) -> np.ndarray:
    """A copy of a players x rounds array with its flat positions ``at`` set to ``value``."""
    out = grid.copy()   # (C order: its flat view is the array itself)
    out.reshape(-1)[at] = value
    return out


def fore_view(d: Dense) -> Dense:
    """The view for Fore Buchholz: every paired game of the final round drawn (C.07 8.3)."""
    rows, cols = final_round_cells(d)
    pts = d.pts.copy()
    gtype = d.gtype.copy()
    outcome = d.outcome.copy()
    pts[rows, cols] = d.D[d.tix[rows]]
    gtype[rows, cols] = GAME_TYPE["played"]
    outcome[rows, cols] = 1
    return replace(d, pts=pts, gtype=gtype, outcome=outcome)
