"""A dense view of a batch: players x rounds numpy arrays, padded to the longest event and masked.

Most tie-breaks become row-wise reductions over this view: an opponent's score is one gather through
``opp``, a cut is a row-wise masked arg-min. Players of all tournaments are stacked in one axis, ordered
by (tournament, start number); ``tix`` maps each player row to its tournament row.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
import polars as pl

from tbstats.games import GAME_TYPE, Batch

NO_OPP = -1
# Outcome of a round for the player: by the points awarded (C.07 16.3.1), or by the result of a game.
LOSS, DRAW, WIN = 0, 1, 2

#: Rounds a participant was not available for: requested byes, absences and forfeit losses (C.07 16.1.2).
VUR_TYPES = ("half_bye", "zero_bye", "absent", "forfeit_loss", "double_forfeit")
FORFEIT_TYPES = ("forfeit_win", "forfeit_loss", "double_forfeit")
REQUESTED_BYE_TYPES = ("half_bye", "zero_bye", "absent")


def _codes(names: tuple[str, ...]) -> np.ndarray:
    return np.array([GAME_TYPE[n] for n in names], dtype=np.int8)


@dataclass(frozen=True)
class Dense:
    """Players x rounds arrays for a batch (rounds beyond an event's counted rounds are masked out)."""

    # per tournament
    t_ids: np.ndarray        # tournament id per tournament row
    n: np.ndarray            # rounds counted
    planned: np.ndarray      # planned rounds (FB's final round)
    W: np.ndarray            # points for a win, units
    D: np.ndarray            # points for a draw, units
    scale: np.ndarray
    round_robin: np.ndarray  # bool: pre-determined pairings (C.07 15.2)
    # per player
    tix: np.ndarray          # tournament row of each player
    start_no: np.ndarray
    rating: np.ndarray       # int64, 0 = unrated
    # per player x round
    opp: np.ndarray          # global row of the opponent, NO_OPP when none
    pts: np.ndarray          # points awarded, units
    gtype: np.ndarray        # GAME_TYPE code
    black: np.ndarray        # bool: had black
    outcome: np.ndarray      # LOSS / DRAW / WIN of the round for the player
    counted: np.ndarray      # bool: round is within the event's counted rounds and the player has a row

    @property
    def players(self) -> int:
        return int(self.tix.shape[0])

    @property
    def rounds(self) -> int:
        return int(self.opp.shape[1])

    def is_type(self, names: tuple[str, ...]) -> np.ndarray:
        """Mask of counted player-rounds whose game type is one of ``names``."""
        table = np.zeros(len(GAME_TYPE), dtype=bool)
        table[_codes(names)] = True
        return table[self.gtype] & self.counted

    @cached_property
    def played(self) -> np.ndarray:
        """Over-the-board games."""
        return (self.gtype == GAME_TYPE["played"]) & self.counted

    @cached_property
    def has_opp(self) -> np.ndarray:
        """Rounds with a scheduled opponent (games and forfeits)."""
        return (self.opp != NO_OPP) & self.counted

    @cached_property
    def opp_row(self) -> np.ndarray:
        """The opponent's row, 0 where there is none (mask with ``has_opp``): safe for gathers."""
        return np.where(self.opp != NO_OPP, self.opp, 0)

    @cached_property
    def points(self) -> np.ndarray:
        """Points awarded in the counted rounds, 0 elsewhere."""
        return np.where(self.counted, self.pts, 0)

    @cached_property
    def score(self) -> np.ndarray:
        """Each player's score over the counted rounds, units."""
        return self.points.sum(axis=1)

    def per_player(self, per_tournament: np.ndarray) -> np.ndarray:
        """Broadcast a per-tournament array to players."""
        return per_tournament[self.tix]

    def with_counted_rounds(self, n: np.ndarray) -> Dense:
        """The same view with a different number of counted rounds per tournament."""
        r = np.arange(self.rounds)[None, :]
        counted = r < n[self.tix][:, None]
        return replace(self, n=n.astype(np.int64), counted=counted)


def build_dense(batch: Batch, *, force_type: str | None = None, after_round: int | None = None) -> Dense:
    """Build the dense view of ``batch``.

    ``force_type`` ('swiss' or 'round_robin') overrides the detected event type; ``after_round`` counts
    the rounds up to that one (standings part-way through an event, rules.md 4.8), instead of the rounds
    the reader found complete.
    """
    t = batch.tournaments.sort("tournament")
    p = batch.players.sort("tournament", "start_no")
    t_ids = t["tournament"].to_numpy()
    # rows by sorted int64 keys (tournament, start number): no joins on the hot path
    p_t = p["tournament"].to_numpy()
    tix = np.searchsorted(t_ids, p_t).astype(np.int64)
    P = p.height
    n = t["rounds_played"].to_numpy().astype(np.int64)
    if after_round is not None:
        in_file = t.select("tournament").join(
            batch.games.group_by("tournament").agg(pl.col("round").max().alias("_r")), on="tournament",
            how="left")["_r"].fill_null(0).to_numpy().astype(np.int64)
        n = np.minimum(in_file, after_round)
    R = int(n.max()) if len(n) else 0
    g = batch.games.filter(pl.col("round") <= R).select(
        "tournament", "player", "opponent", "round", "points",
        pl.col("game_type").to_physical().alias("gtype"),
        (pl.col("colour") == "b").fill_null(False).alias("black"),
        pl.col("result").replace_strict({"1": WIN, "W": WIN, "=": DRAW, "D": DRAW}, default=LOSS,
                                        return_dtype=pl.Int8).alias("outcome"))
    start_no = p["start_no"].to_numpy().astype(np.int64)
    first_row = np.searchsorted(tix, np.arange(len(t_ids)))          # each tournament's first player row
    count = np.bincount(tix, minlength=len(t_ids))
    g_tix = np.searchsorted(t_ids, g["tournament"].to_numpy())
    player_no = g["player"].to_numpy().astype(np.int64)
    opp_no = g["opponent"].fill_null(0).to_numpy().astype(np.int64)
    last_no = np.zeros(len(t_ids), dtype=np.int64)
    np.maximum.at(last_no, tix, start_no)
    if bool((last_no == count).all()):
        # start numbers 1..N in every tournament (the usual case): a row is an offset, no search needed
        base = first_row[g_tix] - 1
        rows = base + player_no
        opp_found = (opp_no > 0) & (opp_no <= count[g_tix])
        opp_rows = np.where(opp_found, base + opp_no, 0)
    else:
        p_keys = (tix << 24) | start_no
        g_t = g_tix.astype(np.int64) << 24
        rows = np.searchsorted(p_keys, g_t | player_no)
        opp_rows = np.searchsorted(p_keys, g_t | opp_no).clip(0, max(P - 1, 0))
        opp_found = (opp_no > 0) & (p_keys[opp_rows] == (g_t | opp_no)) if P else opp_no > 0
    cols = g["round"].to_numpy().astype(np.int64) - 1
    W = t["pts_win"].to_numpy().astype(np.int64)
    D = t["pts_draw"].to_numpy().astype(np.int64)
    points = g["points"].to_numpy()
    g_type = g["gtype"].to_numpy()
    # a game's outcome from its result; an unplayed round's from the points awarded (C.07 16.3.1)
    g_outcome = np.where(g_type == GAME_TYPE["played"], g["outcome"].to_numpy(),
                         np.where(points >= W[g_tix], WIN, np.where(points >= D[g_tix], DRAW, LOSS)))

    def grid(values: np.ndarray, fill: int, dtype: type) -> np.ndarray:
        """A players x rounds array holding ``values`` at the games' cells (one flat put per column)."""
        out: np.ndarray = np.full(P * R, fill, dtype=dtype)
        out[rows * R + cols] = values
        return out.reshape(P, R)

    opp = grid(np.where(opp_found, opp_rows, NO_OPP), NO_OPP, np.int32)  # int32: half the memory traffic
    pts = grid(points, 0, np.int32)
    gtype = grid(g_type, GAME_TYPE["absent"], np.int8)  # a round without a row is a round not paired
    black = grid(g["black"].to_numpy(), False, np.bool_)
    outcome = grid(g_outcome, LOSS, np.int8)
    if force_type is None:
        rr = (t["event_type"].cast(pl.String) == "round_robin").to_numpy()
    else:
        rr = np.full(len(t_ids), force_type == "round_robin")
    rating = p["rating"].fill_null(0).to_numpy().astype(np.int64)
    dense = Dense(
        t_ids=t_ids, n=n, planned=t["rounds"].to_numpy().astype(np.int64), W=W, D=D,
        scale=t["scale"].to_numpy().astype(np.int64), round_robin=rr, tix=tix,
        start_no=start_no, rating=rating,
        opp=opp, pts=pts, gtype=gtype, black=black, outcome=outcome, counted=np.zeros((P, R), dtype=bool))
    return dense.with_counted_rounds(n)
