"""Types of the compiled loops (tbstats/model/loops.pyx)."""

import numpy as np

CODES: dict[str, int]

def place_games(run_t: np.ndarray, run_len: np.ndarray, player: np.ndarray, opponent: np.ndarray, rnd: np.ndarray,
                points: np.ndarray, gtype: np.ndarray, result_outcome: np.ndarray, black: np.ndarray, played: int,
                first_cell: np.ndarray, stride: np.ndarray, players: np.ndarray, first_local: np.ndarray,
                counted: np.ndarray, win: np.ndarray, draw: np.ndarray, out_opp: np.ndarray, out_pts: np.ndarray,
                out_type: np.ndarray, out_outcome: np.ndarray, out_black: np.ndarray) -> None: ...
def view_outcomes(views: np.ndarray, valid: np.ndarray, bit_offset: int, table: np.ndarray,
                  out: np.ndarray) -> None: ...
def row_sums(values: np.ndarray, mask: np.ndarray, out: np.ndarray) -> None: ...
def row_extremes(values: np.ndarray, mask: np.ndarray, highest: bool, fill: int, first: np.ndarray,
                 second: np.ndarray) -> None: ...
def opponents_values(values: np.ndarray, opp: np.ndarray, use: np.ndarray, pad: int, out: np.ndarray) -> None: ...
