"""Seeded simulation of many Swiss or round-robin tournaments at once, as a :class:`~tbstats.games.Batch`.

:func:`simulate` draws players with a hidden true strength, pairs them round by round and plays the games
with an Elo model, vectorised with numpy over whole blocks of tournaments: Python loops run over blocks,
rounds and a bounded number of repair passes, never over tournaments or players (except the rare pairing
fallback below). It returns the batch and a ``truth`` table (tournament, start_no, strength), so that later
code can measure how well a tie-break order recovers true strength.

Players (per tournament)
    event level ``m ~ N(strength_mean, event_sd)``; strength ``s ~ N(m, strength_sd)``; published rating
    ``round(s + N(0, rating_noise))`` clipped to 1000..2900, or null for a share ``unrated_rate`` of players.
    Start numbers follow descending rating, unrated players last (ties in random order).

Results (Elo model, 400 scale)
    ``d = s_white + white_advantage - s_black``; expected score of White ``E = 1 / (1 + 10^(-d / 400))``.
    Draw probability ``p_draw = clip(draw_base + draw_slope * (mean - draw_pivot) / 100, draw_min, draw_max)
    * exp(-|d| / draw_gap)``, ``mean`` being the mean true strength of the two players, then capped at
    ``2 * min(E, 1 - E)``. White wins with probability ``E - p_draw / 2``, draws with ``p_draw``, so White's
    expected score is exactly ``E``.

Unplayed rounds (rates are probabilities; rules.md 2.2 and 4.2)
    Per player and round: a requested half-point bye ``H`` (``half_bye_rate``, any round including the last)
    or zero-point bye ``Z`` (``zero_bye_rate``). Per player and event: withdrawal (``withdrawal_rate``) after a
    round drawn uniformly from 1..rounds-1; every later round is ``absent`` (no opponent, null result). Per
    game: a double forfeit ``-``/``-`` (``double_forfeit_rate``), else a forfeit ``+``/``-`` with the absent
    side drawn at random (``forfeit_rate``). Forfeited games keep their scheduled colours in the file.

Swiss pairing, close to the FIDE Dutch system (C.04.3), with these simplifications
    * Players are ranked by score (in the event's scoring units, so 3-1-0 events pair on 3-1-0 points), then
      start number; score groups are the runs of equal score. Downfloaters are
      decided by parity alone: when the players of the groups so far are odd in number, the lowest-ranked
      player of the group floats to the next one (Dutch chooses floaters by its quality criteria and avoids
      floating the same player twice in a row; we do not look at float history).
    * A bracket with a downfloater pairs it with the highest resident, then the rest top half against
      bottom half (S1[i] - S2[i]), like the first candidate of the Dutch system.
    * Dutch's exhaustive, ordered search over transpositions and exchanges is replaced by a bounded local
      search: for each board with a defect, 2-opt re-pairings with up to 4 boards before and after it
      ((a,b),(c,d) -> (a,d),(c,b) "transposition" or (a,c),(b,d) "exchange") are scored and the best strictly
      improving one is taken, in a few vectorised passes. Defects are weighted lexicographically: rematch >
      same absolute colour preference > score difference (floats) > same colour preference; exchanges and
      moves across brackets carry a small penalty, so colour alone never justifies crossing a score group.
      Boards still holding a rematch get passes with a 16-board window, then a per-tournament depth-first
      search for a rematch-free matching of the whole round (bounded; counted in ``stats.fallback_rounds``).
      If even that fails the rematch is played and counted (``stats.rematches``).
    * Every pairing (forfeits included) counts as a meeting for the rematch rule; colour history counts
      games played over the board only.
    * Colours follow C.04.3 E.1-E.5 (both preferences, the stronger one, alternate to the last round with
      different colours, the higher-ranked player's preference, the initial colour drawn by lot per event).
      Topscorer exceptions are ignored; the absolute colour criterion is a weighted cost, not absolute.
    * The pairing-allocated bye (``U``, one per round at most) goes to the lowest-ranked player of the
      lowest score group who has had neither a PAB nor a forfeit win (anyone, counted, when nobody
      qualifies); it is decided before pairing, not as part of it. No acceleration, no late entries.

Round robins use the FIDE Berger tables (C.05 Annex 1). In an odd field the player drawn against the dummy
has a free round, written as ``absent`` without opponent. Requested byes are not granted (the pairings are
fixed); an absent player forfeits: rounds after a withdrawal are forfeit losses (double forfeits when both
players have withdrawn). With ``rounds`` above one cycle a second cycle with reversed colours follows.

Reproducibility: block ``k`` of ``chunk`` tournaments draws from ``PCG64(SeedSequence(seed, spawn_key=(k,)))``
in a fixed order, so the same configuration gives an identical batch on any machine. ``chunk`` is part of
the random stream: the events of a configuration with another ``chunk`` differ.
"""

from __future__ import annotations

import datetime as dt
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields
from fractions import Fraction
from typing import Final, Literal

import numpy as np
import numpy.typing as npt
import polars as pl

from tbstats.errors import TbstatsError
from tbstats.games import (
    GAME_TYPE,
    GAME_TYPES,
    SCORING_KINDS,
    Batch,
    ColourEnum,
    EventTypeEnum,
    GameTypeEnum,
    empty,
)
from tbstats.rules import STANDARD_SCORING, scoring_scale

__all__ = ["SCORING_SYSTEMS", "Simulation", "SimulationConfig", "SimulationStats", "expected_score", "simulate"]

Kind = Literal["swiss", "round_robin"]
Idx = npt.NDArray[np.intp]
Ints = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]
Floats = npt.NDArray[np.float64]

#: Scoring systems by name (rules.md 2.4): 1-½-0 and football scoring 3-1-0 (forfeit win, PAB, FPB = 3).
SCORING_SYSTEMS: Final[dict[str, dict[str, Fraction]]] = {
    "standard": dict(STANDARD_SCORING),
    "3-1-0": {"win": Fraction(3), "draw": Fraction(1), "loss": Fraction(0), "forfeit_win": Fraction(3),
              "forfeit_loss": Fraction(0), "pab": Fraction(3), "full_bye": Fraction(3),
              "half_bye": Fraction(1), "zero_bye": Fraction(0)},
}

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

# local-search weights (lexicographic in practice) and bounds
_W_REMATCH: Final = 1_000_000
_W_ABSOLUTE: Final = 10_000
_W_SCORE: Final = 100      # per scoring unit of score difference inside a pair
_W_PREFERENCE: Final = 10  # both want the same colour


def _colour_cost_table() -> Ints:
    """Cost of pairing colour states ``x`` and ``y`` at index ``8x + y``.

    States: 0 prefers Black, 1 no preference, 2 prefers White, 3 / 4 absolute Black / White preference.
    """
    direction = np.array([-1, 0, 1, -1, 1, 0, 0, 0])
    absolute = np.array([0, 0, 0, 1, 1, 0, 0, 0])
    same = np.outer(direction, direction) == 1
    return (_W_PREFERENCE * same + _W_ABSOLUTE * (same & (np.outer(absolute, absolute) == 1))).ravel()


_COLOUR_COST: Final = _colour_cost_table()
_P_EXCHANGE: Final = 4     # an exchange (a,c),(b,d) rather than a transposition
_P_CROSS: Final = 5        # a move between two brackets
_WINDOW: Final = 4
_WIDE_WINDOW: Final = 16
_PASSES: Final = 8
_SEARCH_BUDGET: Final = 20_000
_MATRIX_BUDGET: Final = 1 << 25  # bytes for the per-block "have met" matrix


@dataclass(frozen=True)
class SimulationConfig:
    """What to simulate; every rate is a probability (per player and round, per game or per player)."""

    tournaments: int = 100
    players: int = 60
    #: None: 9 for Swiss, one full cycle for round robins.
    rounds: int | None = None
    kind: Kind = "swiss"
    seed: int = 0
    start_date: dt.date = dt.date(2026, 3, 1)
    scoring: str = "standard"
    # players
    strength_mean: float = 1800.0
    event_sd: float = 200.0
    strength_sd: float = 250.0
    rating_noise: float = 50.0
    unrated_rate: float = 0.05
    # results
    white_advantage: float = 0.0
    draw_base: float = 0.30
    draw_pivot: float = 2000.0
    draw_slope: float = 0.03
    draw_gap: float = 400.0
    draw_min: float = 0.02
    draw_max: float = 0.75
    # unplayed rounds
    half_bye_rate: float = 0.02
    zero_bye_rate: float = 0.005
    forfeit_rate: float = 0.01
    double_forfeit_rate: float = 0.002
    withdrawal_rate: float = 0.03
    #: tournaments per vectorised block (part of the random stream; capped by memory for large fields)
    chunk: int = 2048

    def __post_init__(self) -> None:
        if self.kind not in ("swiss", "round_robin"):
            raise TbstatsError(f"unknown tournament kind {self.kind!r} (expected 'swiss' or 'round_robin')")
        if self.scoring not in SCORING_SYSTEMS:
            raise TbstatsError(f"unknown scoring system {self.scoring!r} (expected one of "
                               f"{', '.join(SCORING_SYSTEMS)})")
        if self.tournaments < 0 or self.chunk < 1:
            raise TbstatsError("tournaments must be >= 0 and chunk >= 1")
        if not 2 <= self.players <= 9999:
            raise TbstatsError(f"players must be between 2 and 9999 (got {self.players})")
        if self.seed < 0:
            raise TbstatsError(f"seed must be a non-negative integer (got {self.seed})")
        rounds = self.n_rounds
        if rounds < 1:
            raise TbstatsError(f"rounds must be at least 1 (got {rounds})")
        if self.kind == "round_robin" and rounds > 2 * self.cycle:
            raise TbstatsError(f"a round robin of {self.players} players has at most {2 * self.cycle} rounds "
                               f"(two cycles; got {rounds})")
        for f in fields(self):
            if f.name.endswith("_rate"):
                value = getattr(self, f.name)
                if not 0.0 <= value <= 1.0:
                    raise TbstatsError(f"{f.name} must be a probability in [0, 1] (got {value})")
        if self.half_bye_rate + self.zero_bye_rate > 1 or self.forfeit_rate + self.double_forfeit_rate > 1:
            raise TbstatsError("half_bye_rate + zero_bye_rate and forfeit_rate + double_forfeit_rate must not "
                               "exceed 1")
        if self.draw_gap <= 0 or not 0 <= self.draw_min <= self.draw_max <= 1:
            raise TbstatsError("draw_gap must be > 0 and 0 <= draw_min <= draw_max <= 1")

    @property
    def cycle(self) -> int:
        """Rounds of one round-robin cycle (the field made even with a dummy, minus one)."""
        return self.players + self.players % 2 - 1

    @property
    def n_rounds(self) -> int:
        """The number of rounds, with the default resolved."""
        if self.rounds is not None:
            return self.rounds
        return 9 if self.kind == "swiss" else self.cycle


@dataclass
class SimulationStats:
    """Counters of what the Swiss pairing had to do (all zero for round robins except ``paired_rounds``)."""

    paired_rounds: int = 0           # (tournament, round) pairings made
    pairs: int = 0                   # boards paired
    repair_moves: int = 0            # 2-opt re-pairings accepted by the vectorised local search
    fallback_rounds: int = 0         # (tournament, round) pairings handed to the per-tournament search
    fallback_failures: int = 0       # ... for which no rematch-free matching was found in the budget
    rematches: int = 0               # boards repeating an earlier meeting (only when unavoidable)
    absolute_colour_clashes: int = 0  # boards whose players had the same absolute colour preference
    repeated_pabs: int = 0           # PABs given to a player who already had a PAB or forfeit win


@dataclass(frozen=True)
class Simulation:
    """A simulated batch, the players' true strengths, and pairing counters."""

    batch: Batch
    truth: pl.DataFrame  # tournament, start_no, strength
    stats: SimulationStats
    config: SimulationConfig = field(repr=False)


# ------------------------------------------------------------------------------------------------ driver

def simulate(config: SimulationConfig, *, workers: int = 1) -> Simulation:
    """Simulate ``config.tournaments`` events; the same configuration always gives the same batch.

    ``workers`` > 1 simulates blocks of tournaments on that many threads (numpy releases the GIL for most of
    the work); the result does not depend on it.

    >>> sim = simulate(SimulationConfig(tournaments=3, players=8, rounds=5, seed=7))
    >>> sim.batch.games.height, sim.truth.columns
    (120, ['tournament', 'start_no', 'strength'])
    """
    chunk = max(1, min(config.chunk, _MATRIX_BUDGET // (config.players * config.players)))
    jobs = [(k, min(chunk, config.tournaments - first))
            for k, first in enumerate(range(0, config.tournaments, chunk))]
    if workers > 1 and len(jobs) > 1:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            done = list(pool.map(lambda job: _run_block(config, *job), jobs))
    else:
        done = [_run_block(config, *job) for job in jobs]
    blocks = [block for block, _ in done]
    stats = SimulationStats(**{f.name: sum(getattr(s, f.name) for _, s in done) for f in fields(SimulationStats)})
    return Simulation(_assemble(config, blocks), _truth(config, blocks), stats, config)


def _run_block(config: SimulationConfig, k: int, count: int) -> tuple[_Block, SimulationStats]:
    """Simulate block ``k`` (``count`` tournaments) from its own random stream."""
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(config.seed, spawn_key=(k,))))
    stats = SimulationStats()
    block = _Block.start(config, rng, count)
    play_round = _swiss_round if config.kind == "swiss" else _round_robin_round
    for r in range(config.n_rounds):
        play_round(config, rng, block, r, stats)
    block.release()
    return block, stats


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


def _units(cfg: SimulationConfig) -> dict[str, int]:
    points = SCORING_SYSTEMS[cfg.scoring]
    scale = scoring_scale(points)
    return {"scale": scale, **{k: int(v * scale) for k, v in points.items()}}


# -------------------------------------------------------------------------------------------- results

def _play(cfg: SimulationConfig, rng: np.random.Generator, block: _Block, t: Idx, white: Idx, black: Idx,
          absent_w: Bools, absent_b: Bools) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int8],
                                                       Bools]:
    """Result codes for White and Black, and which boards are double forfeits."""
    n = len(t)
    u_forfeit = rng.random(n)
    u_side = rng.random(n) < 0.5
    u_result = rng.random(n)
    sw, sb = block.strength[t, white], block.strength[t, black]
    d = sw + cfg.white_advantage - sb
    expected = expected_score(d)
    level = np.clip(cfg.draw_base + cfg.draw_slope * ((sw + sb) / 2 - cfg.draw_pivot) / 100.0,
                    cfg.draw_min, cfg.draw_max)
    p_draw = np.minimum(level * np.exp(-np.abs(d) / cfg.draw_gap), 2 * np.minimum(expected, 1 - expected))
    win = u_result < expected - p_draw / 2
    draw = ~win & (u_result < expected + p_draw / 2)
    code_w = np.where(win, _WIN, np.where(draw, _DRAW, _LOSS)).astype(np.int8)
    code_b = np.where(win, _LOSS, np.where(draw, _DRAW, _WIN)).astype(np.int8)
    double = (absent_w & absent_b) | (~absent_w & ~absent_b & (u_forfeit < cfg.double_forfeit_rate))
    single = ~double & (absent_w | absent_b | (u_forfeit < cfg.double_forfeit_rate + cfg.forfeit_rate))
    w_loses = np.where(absent_w | absent_b, absent_w, u_side)
    code_w = np.where(single, np.where(w_loses, _FLOSS, _FWIN), code_w).astype(np.int8)
    code_b = np.where(single, np.where(w_loses, _FWIN, _FLOSS), code_b).astype(np.int8)
    code_w[double] = _FLOSS
    code_b[double] = _FLOSS
    return code_w, code_b, double


# --------------------------------------------------------------------------------------- round robin

def _berger(n_players: int, rounds: int) -> tuple[npt.NDArray[np.int32], Bools]:
    """Opponent index (-1 = free round) and 'plays White' per round and player, from the Berger tables.

    With ``n`` even (a dummy added to odd fields) and ``m = n - 1``, in round ``r`` players ``i, j < n``
    meet when ``i + j = r + 1 (mod m)``, and the player with ``2i = r + 1 (mod m)`` meets player ``n``;
    ``i`` has White when ``(j - i) mod m`` is odd, and player ``n`` has Black in odd rounds.

    >>> opp, white = _berger(6, 5)
    >>> [(int(i) + 1, int(opp[1, i]) + 1) for i in range(6) if white[1, i]]  # round 2: 6-4 5-3 1-2
    [(1, 2), (5, 3), (6, 4)]
    """
    n = n_players + n_players % 2
    m = n - 1
    i = np.arange(1, m + 1)
    opp = np.empty((rounds, n), np.int32)
    white = np.empty((rounds, n), np.bool_)
    for k in range(rounds):
        r = k % m + 1
        j = (r + 1 - i) % m
        j = np.where(j == 0, m, j)
        vs_last = j == i
        opp[k, :m] = np.where(vs_last, n, j) - 1
        white[k, :m] = np.where(vs_last, r % 2 == 1, (j - i) % m % 2 == 1)
        opp[k, m] = int(np.flatnonzero(vs_last)[0])
        white[k, m] = r % 2 == 0
        if k >= m:  # second cycle: colours reversed
            white[k] = ~white[k]
    if n != n_players:  # the dummy: its opponent has a free round
        opp[opp == n - 1] = -1
        opp, white = opp[:, :n_players], white[:, :n_players]
    return opp, white


def _round_robin_round(cfg: SimulationConfig, rng: np.random.Generator, block: _Block, r: int,
                       stats: SimulationStats) -> None:
    n_t, n = block.score.shape
    opp, white = _berger(n, r + 1)
    boards = np.flatnonzero(white[r] & (opp[r] >= 0))
    t = np.repeat(np.arange(n_t), len(boards))
    w = np.tile(boards, n_t)
    b = opp[r][w].astype(np.intp)
    present = block.present_rounds > r
    code_w, code_b, double = _play(cfg, rng, block, t, w, b, ~present[t, w], ~present[t, b])
    block.record_games(t, w, b, r, code_w, code_b, double)
    block.close_round(r)
    stats.paired_rounds += n_t
    stats.pairs += len(t)


# --------------------------------------------------------------------------------------------- Swiss

def _swiss_round(cfg: SimulationConfig, rng: np.random.Generator, block: _Block, r: int,
                 stats: SimulationStats) -> None:
    """Byes, pairing, colours and results of round ``r`` (0-based) of every tournament of the block."""
    n_t, n = block.score.shape
    present = block.present_rounds > r
    u = rng.random((n_t, n))
    half = present & (u < cfg.half_bye_rate)
    zero = present & ~half & (u < cfg.half_bye_rate + cfg.zero_bye_rate)
    pairable = present & ~half & ~zero
    for mask, code in ((half, _HALF), (zero, _ZERO)):
        tt, pp = np.nonzero(mask)
        block.record_single(tt, pp, r, code)

    # the pairing-allocated bye: lowest-ranked player of the lowest score group without PAB / forfeit win
    odd = pairable.sum(axis=1) % 2 == 1
    eligible = pairable & ~block.no_pab
    any_eligible: Bools = np.asarray(eligible.any(axis=1))
    candidates = np.where(any_eligible[:, None], eligible, pairable)
    key = np.where(candidates, -block.score * n + np.arange(n), np.iinfo(np.int64).min)
    pab_t = np.flatnonzero(odd)
    pab_p = np.argmax(key[pab_t], axis=1)
    stats.repeated_pabs += int((odd & ~any_eligible).sum())
    block.record_single(pab_t, pab_p, r, _PAB)
    pairable[pab_t, pab_p] = False

    pref, strength = _preferences(block)
    t, hi, lo = _pair(block, pairable, pref, strength, stats)
    stats.paired_rounds += int(pairable.any(axis=1).sum())
    stats.pairs += len(t)
    stats.rematches += int(block.met[t, hi, lo].sum())
    white_hi = _allocate_colours(block, pref, strength, t, hi, lo, r, stats)
    white = np.where(white_hi, hi, lo)
    black = np.where(white_hi, lo, hi)
    no = np.zeros(len(t), np.bool_)
    code_w, code_b, double = _play(cfg, rng, block, t, white, black, no, no)
    block.record_games(t, white, black, r, code_w, code_b, double)
    block.close_round(r)


def _preferences(block: _Block) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int8]]:
    """Colour preference (+1 White, -1 Black, 0 none) and its strength (3 absolute, 2 strong, 1 mild, 0).

    C.04.3 A.6: absolute when the colour difference exceeds 1 or the last two games had the same colour;
    strong when the difference is 1; mild (alternate) when it is 0 after at least one game.
    """
    cd, last1, last2 = block.colour_diff, block.last1, block.last2
    twice = (last1 == last2) & (last1 != 0)
    big = np.abs(cd) > 1
    pref = np.where(big, -np.sign(cd), np.where(twice, -last1, np.where(cd != 0, -np.sign(cd), -last1)))
    strength = np.where(big | twice, 3, np.where(cd != 0, 2, np.where(last1 != 0, 1, 0)))
    return pref.astype(np.int8), strength.astype(np.int8)


class _Ranked:
    """The players to pair in one round, flattened in (tournament, -score, start number) order."""

    def __init__(self, block: _Block, pairable: Bools, pref: npt.NDArray[np.int8],
                 strength: npt.NDArray[np.int8]) -> None:
        n = pairable.shape[1]
        score = block.score
        top = int(score.max()) + 1 if score.size else 1
        key = np.where(pairable, (top - score) * n + np.arange(n), np.iinfo(np.int64).max)
        order = np.argsort(key, axis=1)
        counts = pairable.sum(axis=1)
        tt, pos = np.nonzero(np.arange(n)[None, :] < counts[:, None])
        self.t: Idx = tt
        self.pos: Idx = pos
        self.player: Idx = order[tt, pos]
        self.score: Ints = score[tt, self.player]
        # colour state 0..4: preference -1/0/+1, +2 when absolute; packed under the score (3 bits)
        p, absolute = pref[tt, self.player].astype(np.int64), strength[tt, self.player] == 3
        self._packed: Ints = self.score * 8 + np.where(absolute, 3 + (p > 0), p + 1)  # see _COLOUR_COST
        self.met = block.met
        self._met_flat = block.met.reshape(-1)
        self._met_row: Ints = (tt * n + self.player) * n

    def entries(self, x: Idx) -> tuple[Ints, Ints, Idx]:
        """What :meth:`pair_cost` needs of flat entries ``x``, gathered once."""
        return self._packed[x], self._met_row[x], self.player[x]

    def pair_cost(self, x: tuple[Ints, Ints, Idx], y: tuple[Ints, Ints, Idx]) -> Ints:
        """Defect weight of pairing the (gathered) entries ``x`` and ``y`` of the same tournaments."""
        px, py = x[0], y[0]
        c: Ints = _COLOUR_COST[(px & 7) * 8 + (py & 7)]
        c += _W_SCORE * np.abs((px >> 3) - (py >> 3))
        c += _W_REMATCH * self._met_flat[x[1] + y[2]]
        return c

    def cost(self, x: Idx, y: Idx) -> Ints:
        """Defect weight of pairing flat entries ``x`` and ``y`` (same tournament)."""
        return self.pair_cost(self.entries(x), self.entries(y))


def _brackets(ranked: _Ranked) -> tuple[Idx, Idx]:
    """Segment id of every flat entry and the first boards (top half vs bottom half of each segment).

    Score groups are runs of equal score; when the players of the groups up to one are odd in number, its
    last player floats down and opens the next bracket, where it is paired with the highest resident (a
    segment of two); every other segment pairs its top half against its bottom half.
    """
    tt, pos, score = ranked.t, ranked.pos, ranked.score
    size = len(tt)
    same_next = np.zeros(size, np.bool_)
    same_next[:-1] = tt[1:] == tt[:-1]
    group_end = ~same_next
    group_end[:-1] |= score[1:] != score[:-1]
    odd_so_far = pos % 2 == 0
    floater = group_end & odd_so_far
    start = pos == 0
    start[1:] |= group_end[:-1] & ~odd_so_far[:-1]
    start |= floater
    start[2:] |= floater[:-2] & (tt[2:] == tt[:-2])
    first = np.flatnonzero(start)
    seg = np.cumsum(start) - 1
    length = np.diff(np.append(first, size))
    if (length % 2).any():  # pragma: no cover - guaranteed by construction
        raise AssertionError("odd pairing segment")
    offset = np.arange(size) - first[seg]
    half = length[seg] // 2
    s1 = np.flatnonzero(offset < half)
    return seg, s1


def _pair(block: _Block, pairable: Bools, pref: npt.NDArray[np.int8], strength: npt.NDArray[np.int8],
          stats: SimulationStats) -> tuple[Idx, Idx, Idx]:
    """Pair every tournament of the block: tournament, higher-ranked and lower-ranked player per board."""
    ranked = _Ranked(block, pairable, pref, strength)
    if len(ranked.t) == 0:
        empty_idx = np.zeros(0, np.intp)
        return empty_idx, empty_idx, empty_idx
    seg, s1 = _brackets(ranked)
    hi = s1.copy()
    lo = s1 + (np.bincount(seg)[seg[s1]] // 2)
    board_t = ranked.t[hi]
    cost = ranked.cost(hi, lo)
    for window, threshold in ((_WINDOW, 1), (_WIDE_WINDOW, _W_REMATCH)):
        todo = cost >= threshold
        for _ in range(_PASSES):
            changed = _improve(ranked, seg, board_t, hi, lo, cost, window, np.flatnonzero(todo))
            stats.repair_moves += len(changed) // 2
            if not changed.size:
                break
            # only boards near a change can improve in the next pass
            near = np.zeros(len(hi) + 2 * window + 1, np.int64)
            near[changed] += 1
            near[changed + 2 * window + 1] -= 1
            todo = (np.cumsum(near)[window:window + len(hi)] > 0) & (cost >= threshold)
    bad = np.unique(board_t[cost >= _W_REMATCH])
    for t in bad.tolist():  # rare: see stats.fallback_rounds
        stats.fallback_rounds += 1
        if not _search(ranked, board_t, hi, lo, t):
            stats.fallback_failures += 1
    return board_t, ranked.player[hi], ranked.player[lo]


def _improve(ranked: _Ranked, seg: Idx, board_t: Idx, hi: Idx, lo: Idx, cost: Ints, window: int,
             start: Idx) -> Idx:
    """One pass of 2-opt re-pairings from boards ``start`` to boards at most ``window`` away.

    Updates ``hi``, ``lo`` and ``cost`` in place and returns the boards changed.
    """
    boards = len(hi)
    none = np.zeros(0, np.intp)
    if not start.size:
        return none
    steps = np.concatenate([np.arange(1, window + 1), -np.arange(1, window + 1)])
    other = start[:, None] + steps[None, :]
    valid = (other >= 0) & (other < boards)
    other = np.clip(other, 0, boards - 1)
    valid &= board_t[other] == board_t[start][:, None]
    a, b = hi[start][:, None], lo[start][:, None]
    c, d = hi[other], lo[other]
    before = cost[start][:, None] + cost[other]
    cross = _P_CROSS * (seg[a] != seg[c])
    ea, eb, ec, ed = ranked.entries(a), ranked.entries(b), ranked.entries(c), ranked.entries(d)
    transpose = ranked.pair_cost(ea, ed) + ranked.pair_cost(ec, eb) - before + cross
    exchange = ranked.pair_cost(ea, ec) + ranked.pair_cost(eb, ed) - before + cross + _P_EXCHANGE
    delta = np.stack([transpose, exchange], axis=2).reshape(len(start), -1)
    delta[~np.repeat(valid, 2, axis=1)] = np.iinfo(np.int64).max
    best = np.argmin(delta, axis=1)
    gain = delta[np.arange(len(start)), best] < 0
    if not gain.any():
        return none
    j = start[gain]
    k = other[gain, best[gain] // 2]
    variant = best[gain] % 2
    # boards claimed by several moves: the move started by the highest board wins
    ident = np.arange(len(j))
    claim = np.full(boards, len(j))
    np.minimum.at(claim, j, ident)
    np.minimum.at(claim, k, ident)
    keep = (claim[j] == ident) & (claim[k] == ident)
    j, k, variant = j[keep], k[keep], variant[keep]
    a1, b1, c1, d1 = hi[j], lo[j], hi[k], lo[k]
    x1, y1 = a1, np.where(variant == 0, d1, c1)
    x2, y2 = np.where(variant == 0, c1, b1), np.where(variant == 0, b1, d1)
    hi[j], lo[j] = np.minimum(x1, y1), np.maximum(x1, y1)
    hi[k], lo[k] = np.minimum(x2, y2), np.maximum(x2, y2)
    cost[j] = ranked.cost(hi[j], lo[j])
    cost[k] = ranked.cost(hi[k], lo[k])
    return np.concatenate([j, k])


def _search(ranked: _Ranked, board_t: Idx, hi: Idx, lo: Idx, t: int) -> bool:
    """Re-pair tournament ``t`` without rematches by a bounded depth-first search; False when none found.

    The highest unpaired player takes, in turn, the unpaired players nearest in rank to its current partner.
    """
    b0, b1 = np.searchsorted(board_t, [t, t + 1])
    f0, f1 = np.searchsorted(ranked.t, [t, t + 1])
    size = int(f1 - f0)
    players = ranked.player[f0:f1]
    allowed = ~ranked.met[t][np.ix_(players, players)]
    np.fill_diagonal(allowed, False)
    ok: list[list[bool]] = allowed.tolist()
    partner = [0] * size
    for x, y in zip((hi[b0:b1] - f0).tolist(), (lo[b0:b1] - f0).tolist(), strict=True):
        partner[x], partner[y] = y, x
    mate = [-1] * size
    nodes = 0

    def extend(first: int) -> bool:
        nonlocal nodes
        while first < size and mate[first] >= 0:
            first += 1
        if first == size:
            return True
        nodes += 1
        if nodes > _SEARCH_BUDGET:
            return False
        near = partner[first]
        options = sorted((v for v in range(first + 1, size) if mate[v] < 0 and ok[first][v]),
                         key=lambda v: (abs(v - near), v))
        for v in options:
            mate[first], mate[v] = v, first
            if extend(first + 1):
                return True
            mate[first] = mate[v] = -1
            if nodes > _SEARCH_BUDGET:
                return False
        return False

    if not extend(0):
        return False
    pairs = sorted((x, mate[x]) for x in range(size) if x < mate[x])
    hi[b0:b1] = [f0 + x for x, _ in pairs]
    lo[b0:b1] = [f0 + y for _, y in pairs]
    return True


def _allocate_colours(block: _Block, pref: npt.NDArray[np.int8], strength: npt.NDArray[np.int8], t: Idx,
                      hi: Idx, lo: Idx, r: int, stats: SimulationStats) -> Bools:
    """Whether the higher-ranked player of each board gets White (C.04.3 E.1-E.5)."""
    ph, pl_ = pref[t, hi], pref[t, lo]
    sh, sl = strength[t, hi], strength[t, lo]
    initial = np.where(hi % 2 == 0, block.initial_white[t], ~block.initial_white[t])  # E.5
    white = np.where(ph != 0, ph > 0, np.where(pl_ != 0, pl_ < 0, initial))  # E.1 (and no preference)
    clash = (ph == pl_) & (ph != 0)
    stats.absolute_colour_clashes += int((clash & (sh == 3) & (sl == 3)).sum())
    cdh, cdl = np.abs(block.colour_diff[t, hi]), np.abs(block.colour_diff[t, lo])
    stronger = (sh != sl) | ((sh == 3) & (cdh != cdl))  # E.2
    hi_wins = np.where(sh != sl, sh > sl, cdh > cdl)
    white = np.where(clash & stronger, np.where(hi_wins, ph > 0, pl_ < 0), white)
    rest = np.flatnonzero(clash & ~stronger)
    if rest.size and r > 0:  # E.3: alternate to the last round with different colours, else E.4
        hh = block.played_colour[t[rest], hi[rest], :r]
        hl = block.played_colour[t[rest], lo[rest], :r]
        differ = (hh * hl) == -1
        has = differ.any(axis=1)
        last = r - 1 - np.argmax(differ[:, ::-1], axis=1)
        white[rest] = np.where(has, hh[np.arange(len(rest)), last] < 0, ph[rest] > 0)
    return white


# ------------------------------------------------------------------------------------------ assembling

def _assemble(cfg: SimulationConfig, blocks: list[_Block]) -> Batch:
    n, rounds = cfg.players, cfg.n_rounds
    count = cfg.tournaments
    units = _units(cfg)
    if count == 0:
        return Batch(empty("tournaments"), empty("players"), empty("games"))

    def cat(name: str) -> npt.NDArray[np.generic]:
        return np.concatenate([getattr(b, name) for b in blocks], axis=0)

    ids = np.arange(count, dtype=np.int64)
    round_robin = cfg.kind == "round_robin"
    end = cfg.start_date + dt.timedelta(days=rounds - 1)
    tournaments = pl.DataFrame({
        "tournament": ids,
        "source": [f"sim/{cfg.seed}/{i}" for i in range(count)],
        "name": [f"Simulated {cfg.kind.replace('_', ' ')} {i}" for i in range(count)],
    }).with_columns(
        pl.lit(None, pl.String).alias("city"), pl.lit(None, pl.String).alias("federation"),
        pl.lit(cfg.start_date).alias("start_date"), pl.lit(end).alias("end_date"),
        pl.lit(f"{cfg.start_date:%Y/%m/%d}").alias("date_text"), pl.lit(rounds, pl.Int16).alias("rounds"),
        pl.lit(rounds, pl.Int16).alias("rounds_played"),
        pl.lit(cfg.kind, EventTypeEnum).alias("event_type"),
        pl.lit("Round robin (Berger tables), simulated" if round_robin else "Swiss system, simulated")
        .alias("type_text"),
        pl.lit(_type_code(cfg)).alias("type_code"),
        pl.lit(n, pl.Int32).alias("declared_players"),
        pl.lit(units["scale"], pl.Int32).alias("scale"),
        *[pl.lit(units[k], pl.Int32).alias(f"pts_{k}") for k in SCORING_KINDS],
        *[pl.lit([], pl.List(pl.String)).alias(c) for c in ("tiebreaks", "standings_tiebreaks", "records")],
    )
    rating = cat("rating")
    rated = cat("rated")
    total = cat("points").sum(axis=2, dtype=np.int64)
    players = pl.DataFrame({
        "tournament": np.repeat(ids, n),
        "start_no": np.tile(np.arange(1, n + 1, dtype=np.int32), count),
        "rating": rating.ravel(),
        "_rated": rated.ravel(),
        "declared_points": total.ravel().astype(np.int32),
    }).select(
        "tournament", "start_no", pl.format("Player {}", pl.col("start_no")).alias("name"),
        pl.lit(None, pl.String).alias("sex"), pl.lit(None, pl.String).alias("title"),
        pl.when(pl.col("_rated")).then(pl.col("rating")).alias("rating"),
        pl.lit(None, pl.String).alias("federation"), pl.lit(None, pl.Int64).alias("fide_id"),
        pl.lit(None, pl.String).alias("birth"), "declared_points",
        pl.lit(None, pl.Int32).alias("declared_rank"), pl.lit(0, pl.Int32).alias("line"),
    )
    per_player = n * rounds
    raw = pl.DataFrame({
        "tournament": np.repeat(ids, per_player),
        "player": np.tile(np.repeat(np.arange(1, n + 1, dtype=np.int32), rounds), count),
        "round": np.tile(np.arange(1, rounds + 1, dtype=np.int16), count * n),
        "_opp": cat("opponent").ravel() + 1,
        "_colour": cat("colour").ravel(),
        "_code": cat("code").ravel(),
        "points": cat("points").ravel(),
        "_type": cat("game_type").ravel(),
    })
    games = raw.select(
        "tournament", "player", "round",
        pl.when(pl.col("_opp") > 0).then(pl.col("_opp")).alias("opponent"),
        pl.col("_colour").replace_strict({_WHITE: "w", _BLACK: "b"}, default=None, return_dtype=ColourEnum)
        .alias("colour"),
        pl.col("_code").replace_strict({i: c for i, c in enumerate(_CODES) if c is not None}, default=None,
                                       return_dtype=pl.String).alias("result"),
        "points",
        (pl.col("_type") == GAME_TYPE["played"]).alias("played"),
        pl.col("_type").replace_strict(dict(enumerate(GAME_TYPES)), return_dtype=GameTypeEnum)
        .alias("game_type"),
    )
    return Batch(tournaments, players, games)


def _type_code(cfg: SimulationConfig) -> str:
    if cfg.kind == "swiss":
        return "CUSTOM_SWISS"
    return "FIDE_ROUNDROBIN" if cfg.n_rounds <= cfg.cycle else "FIDE_DOUBLEROUNDROBIN"


def _truth(cfg: SimulationConfig, blocks: list[_Block]) -> pl.DataFrame:
    n = cfg.players
    strength = (np.concatenate([b.strength for b in blocks]) if blocks else np.zeros((0, n))).ravel()
    count = len(strength) // n
    return pl.DataFrame({
        "tournament": np.repeat(np.arange(count, dtype=np.int64), n),
        "start_no": np.tile(np.arange(1, n + 1, dtype=np.int32), count),
        "strength": strength,
    })


def expected_score(difference: Floats | float) -> Floats:
    """Elo expected score for a true-strength difference (400 scale).

    >>> round(float(expected_score(400.0)), 4)
    0.9091
    """
    return np.asarray(1.0 / (1.0 + np.power(10.0, -np.asarray(difference, np.float64) / 400.0)))

