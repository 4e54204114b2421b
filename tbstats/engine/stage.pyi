"""Types of the unplayed-round stage's compiled passes (tbstats/engine/stage.pyx)."""

import numpy as np

OPPONENT_MODES: dict[str, int]
OWN_MODES: dict[str, int]

def fore_sums(opp: np.ndarray, gtype: np.ndarray, pts: np.ndarray, category: np.ndarray, played: np.ndarray,
              game_like: np.ndarray, counted: np.ndarray, oppscore: np.ndarray, score: np.ndarray,
              as_opponent: np.ndarray, total: np.ndarray, predetermined: np.ndarray, tix: np.ndarray, n: np.ndarray,
              win: np.ndarray, draw: np.ndarray, final_col: np.ndarray, game_rows: np.ndarray, game_cols: np.ndarray,
              own_rows: np.ndarray, own_cols: np.ndarray, vur: np.ndarray, forfeit: np.ndarray, opponent_mode: int,
              own_mode: int, caps: bool, played_category: int, trailing_category: int, new_score: np.ndarray,
              new_as_opponent: np.ndarray, delta: np.ndarray, out: np.ndarray) -> None: ...
def stage_cells(opp: np.ndarray, gtype: np.ndarray, pts: np.ndarray, category: np.ndarray, played: np.ndarray,
                counted: np.ndarray, score: np.ndarray, predetermined: np.ndarray, tix: np.ndarray, n: np.ndarray,
                win: np.ndarray, draw: np.ndarray, vur_type: np.ndarray, forfeit_type: np.ndarray, opponent_mode: int,
                own_mode: int, caps: bool, vur_cuts: bool, forfeits: bool, played_category: int,
                trailing_category: int, as_opponent: np.ndarray, game_like: np.ndarray, own: np.ndarray,
                present: np.ndarray, vur: np.ndarray, oppscore: np.ndarray, game_at: np.ndarray, own_at: np.ndarray,
                uncapped: np.ndarray, cap: np.ndarray, final_col: np.ndarray, total: np.ndarray,
                elements: np.ndarray) -> tuple[int, int]: ...
def final_cells(tix: np.ndarray, last: np.ndarray, opp: np.ndarray, out: np.ndarray) -> None: ...
