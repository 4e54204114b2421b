"""The state of a block of simulated tournaments: players, the round arrays, and the pairing history."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from tbstats.model.games import (
    GAME_TYPE,
)
from tbstats.simulation.config import Bools, Floats, Idx, Ints, SimulationConfig, _units

RATING_MIN: Final = 1000
RATING_MAX: Final = 2900
# result codes, as small integers in the simulation arrays (0 = null: the block is absent)
_CODES: Final = (None, "1", "=", "0", "+", "-", "U", "H", "Z")
_WIN, _DRAW, _LOSS, _FWIN, _FLOSS, _PAB, _HALF, _ZERO = range(1, 9)
_CODE_KIND: Final = ("zero_bye", "win", "draw", "loss", "forfeit_win", "forfeit_loss", "pab", "half_bye",
                     "zero_bye")
#: game type per result code (a '-' on both sides is a double forfeit instead)
_CODE_TYPE: Final = np.array([GAME_TYPE[k] for k in ("absent", "played", "played", "played", "forfeit_win",
                                                    "forfeit_loss", "pab", "half_bye", "zero_bye")], np.int8)
_WHITE, _BLACK = 1, 2


@dataclass
class _Block:
    """The state of ``T`` tournaments of ``N`` players (index = start number - 1) over ``R`` rounds."""

    strength: Floats                       # (T, N)
    rating: npt.NDArray[np.int32]          # (T, N)
    rated: Bools                           # (T, N)
    present_rounds: npt.NDArray[np.int16]  # (T, N): rounds before withdrawal (R when staying)
    initial_white: Bools                   # (T,): initial colour drawn by lot
    opponent: npt.NDArray[np.int32]        # (T, N, R): opponent index, -1 for none
    colour: npt.NDArray[np.int8]           # (T, N, R): 0 none, 1 white, 2 black (as written in the file)
    code: npt.NDArray[np.int8]             # (T, N, R): index into _CODES
    game_type: npt.NDArray[np.int8]        # (T, N, R): index into GAME_TYPES
    points: npt.NDArray[np.int32]          # (T, N, R): units of 1/scale
    score: Ints                            # (T, N)
    met: Bools                             # (T, N, N)
    played_colour: npt.NDArray[np.int8]    # (T, N, R): +1 white, -1 black over the board, else 0
    colour_diff: Ints                      # (T, N): whites - blacks over the board
    last1: npt.NDArray[np.int8]            # (T, N): last colour over the board (+1/-1, 0 none)
    last2: npt.NDArray[np.int8]            # (T, N): the one before
    no_pab: Bools                          # (T, N): had a PAB or a forfeit win
    pts: npt.NDArray[np.int32]             # points per result code, units of 1/scale

    @staticmethod
    def start(cfg: SimulationConfig, rng: np.random.Generator, count: int) -> _Block:
        t, n, r = count, cfg.players, cfg.n_rounds
        level = cfg.strength_mean + cfg.event_sd * rng.standard_normal(t)
        strength = level[:, None] + cfg.strength_sd * rng.standard_normal((t, n))
        rating = np.clip(np.rint(strength + cfg.rating_noise * rng.standard_normal((t, n))),
                         RATING_MIN, RATING_MAX).astype(np.int32)
        rated = rng.random((t, n)) >= cfg.unrated_rate
        order = np.argsort(-np.where(rated, rating, 0), axis=1, kind="stable")  # start numbers
        strength = np.take_along_axis(strength, order, axis=1)
        rating = np.take_along_axis(rating, order, axis=1)
        rated = np.take_along_axis(rated, order, axis=1)
        leaves = rng.random((t, n)) < cfg.withdrawal_rate
        after = rng.integers(1, max(r, 2), size=(t, n))
        present_rounds = np.where(leaves & (r >= 2), after, r).astype(np.int16)
        initial_white = rng.random(t) < 0.5
        units = _units(cfg)
        pts = np.array([units[k] for k in _CODE_KIND], dtype=np.int32)
        return _Block(
            strength=strength, rating=rating, rated=rated, present_rounds=present_rounds,
            initial_white=initial_white,
            opponent=np.full((t, n, r), -1, np.int32), colour=np.zeros((t, n, r), np.int8),
            code=np.zeros((t, n, r), np.int8),
            game_type=np.full((t, n, r), GAME_TYPE["absent"], np.int8),
            points=np.zeros((t, n, r), np.int32), score=np.zeros((t, n), np.int64),
            met=np.zeros((t, n, n), np.bool_), played_colour=np.zeros((t, n, r), np.int8),
            colour_diff=np.zeros((t, n), np.int64), last1=np.zeros((t, n), np.int8),
            last2=np.zeros((t, n), np.int8), no_pab=np.zeros((t, n), np.bool_), pts=pts)

    def record_single(self, t: Idx, p: Idx, r: int, code: int) -> None:
        """A round without opponent (PAB, requested bye)."""
        self.code[t, p, r] = code
        self.game_type[t, p, r] = _CODE_TYPE[code]
        self.points[t, p, r] = self.pts[code]
        if code == _PAB:
            self.no_pab[t, p] = True

    def record_games(self, t: Idx, white: Idx, black: Idx, r: int, code_w: npt.NDArray[np.int8],
                     code_b: npt.NDArray[np.int8], double: Bools) -> None:
        """Paired boards: opponents, colours, results; update the pairing state."""
        self.opponent[t, white, r] = black
        self.opponent[t, black, r] = white
        self.colour[t, white, r] = _WHITE
        self.colour[t, black, r] = _BLACK
        self.code[t, white, r] = code_w
        self.code[t, black, r] = code_b
        self.game_type[t, white, r] = np.where(double, GAME_TYPE["double_forfeit"], _CODE_TYPE[code_w])
        self.game_type[t, black, r] = np.where(double, GAME_TYPE["double_forfeit"], _CODE_TYPE[code_b])
        self.points[t, white, r] = self.pts[code_w]
        self.points[t, black, r] = self.pts[code_b]
        self.met[t, white, black] = True
        self.met[t, black, white] = True
        self.no_pab[t[code_w == _FWIN], white[code_w == _FWIN]] = True
        self.no_pab[t[code_b == _FWIN], black[code_b == _FWIN]] = True
        otb = code_w <= _LOSS
        for side, sign in ((white, 1), (black, -1)):
            tt, pp = t[otb], side[otb]
            self.played_colour[tt, pp, r] = sign
            self.colour_diff[tt, pp] += sign
            self.last2[tt, pp] = self.last1[tt, pp]
            self.last1[tt, pp] = sign

    def close_round(self, r: int) -> None:
        self.score += self.points[:, :, r]

    def release(self) -> None:
        """Drop the pairing state once every round is played (only the output arrays are kept)."""
        self.met = np.zeros((0, 0, 0), np.bool_)
        self.played_colour = np.zeros((0, 0, 0), np.int8)
