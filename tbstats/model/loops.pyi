"""Types of the games' compiled loops (tbstats/model/loops.pyx)."""

import numpy as np

CODES: dict[str, int]

def place_games(run_t: np.ndarray, run_len: np.ndarray, player: np.ndarray, rnd: np.ndarray, points: np.ndarray,
                gtype: np.ndarray, opponent: np.ndarray, opp_valid: np.ndarray, opp_bit: int, views: np.ndarray,
                res_valid: np.ndarray, res_bit: int, table: np.ndarray, colour: np.ndarray, col_valid: np.ndarray,
                col_bit: int, black: int, played: int, first_cell: np.ndarray, stride: np.ndarray,
                players: np.ndarray, first_local: np.ndarray, counted: np.ndarray, win: np.ndarray,
                draw: np.ndarray, out_opp: np.ndarray, out_pts: np.ndarray, out_type: np.ndarray,
                out_outcome: np.ndarray, out_black: np.ndarray) -> None: ...
def game_hash_sums(run_t: np.ndarray, run_len: np.ndarray, player: np.ndarray, opponent: np.ndarray,
                   rnd: np.ndarray, points: np.ndarray, gtype: np.ndarray, colour: np.ndarray,
                   out: np.ndarray) -> None: ...
