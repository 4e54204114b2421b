"""Game outcomes: the Elo model with a strength-dependent draw rate, forfeits and double forfeits."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from tbstats.simulation.config import Bools, Floats, Idx, SimulationConfig
from tbstats.simulation.state import _DRAW, _FLOSS, _FWIN, _LOSS, _WIN, _Block


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


def expected_score(difference: Floats | float) -> Floats:
    """Elo expected score for a true-strength difference (400 scale).

    >>> round(float(expected_score(400.0)), 4)
    0.9091
    """
    return np.asarray(1.0 / (1.0 + np.power(10.0, -np.asarray(difference, np.float64) / 400.0)))
