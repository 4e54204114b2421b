"""What to simulate (:class:`SimulationConfig`), the scoring systems, and the pairing counters."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, fields
from fractions import Fraction
from typing import Final, Literal

import numpy as np
import numpy.typing as npt

from tbstats.errors import TbstatsError
from tbstats.model.rules import STANDARD_SCORING, scoring_scale

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

    def notes(self) -> list[str]:
        """Warnings about settings that are valid but probably not meant: a Swiss event with more rounds
        than opponents, where players meet again (C.04 forbids it; the simulator pairs them all the same)."""
        if self.kind == "swiss" and self.n_rounds > self.cycle:
            return [f"{self.n_rounds} rounds for {self.players} players: a Swiss event of {self.players} players "
                    f"has at most {self.cycle} rounds before players meet again (the simulator pairs them again; "
                    "C.04 forbids it)"]
        return []

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


def _units(cfg: SimulationConfig) -> dict[str, int]:
    points = SCORING_SYSTEMS[cfg.scoring]
    scale = scoring_scale(points)
    return {"scale": scale, **{k: int(v * scale) for k, v in points.items()}}
