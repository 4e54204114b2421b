"""Types of the compiled passes of the archive fit (tbstats/analysis/elo.pyx)."""

import numpy as np

def side_terms(r: np.ndarray, i: np.ndarray, j: np.ndarray, s: np.ndarray, games: np.ndarray, c: float, w: np.ndarray,
               surplus: np.ndarray, weight: np.ndarray, lo: int = 0, hi: int = -1, first: int = 0,
               last: int = -1) -> None: ...
def hessian_product(i: np.ndarray, j: np.ndarray, w: np.ndarray, diag: np.ndarray, q: np.ndarray,
                    out: np.ndarray, lo: int = 0, hi: int = -1, first: int = 0, last: int = -1) -> None: ...
def owner_terms(x: np.ndarray, owner: np.ndarray, rj: np.ndarray, s: np.ndarray, n: np.ndarray, c: float,
                surplus: np.ndarray, weight: np.ndarray) -> None: ...
def chebyshev_sums(players: np.ndarray, first: np.ndarray, many: np.ndarray, opponent: np.ndarray, n: np.ndarray,
                   r: np.ndarray, nodes: np.ndarray, basis: np.ndarray, width: float, c: float, coef_a: np.ndarray,
                   coef_d: np.ndarray) -> None: ...
def refit_pairs(row: np.ndarray, center: np.ndarray, coef_a: np.ndarray, coef_d: np.ndarray, surplus: np.ndarray,
                side_start: np.ndarray, side_count: np.ndarray, side_r: np.ndarray, co_start: np.ndarray,
                co_count: np.ndarray, co_n: np.ndarray, co_v: np.ndarray, co_r: np.ndarray, width: float, c: float,
                prior_var: float, tol: float, steps: int, out: np.ndarray, failed: np.ndarray) -> None: ...
def co_rows(player: np.ndarray, event: np.ndarray, first: np.ndarray, many: np.ndarray, opponent: np.ndarray,
            at_start: np.ndarray, at_count: np.ndarray, at_player: np.ndarray, counts: np.ndarray,
            out_group: np.ndarray, out_at: np.ndarray) -> None: ...
def side_groups(order: np.ndarray, start: np.ndarray, n_games: np.ndarray, wanted: np.ndarray, j: np.ndarray,
                s: np.ndarray, first: np.ndarray, many: np.ndarray, opponent: np.ndarray, count: np.ndarray,
                score: np.ndarray, of_side: np.ndarray) -> int: ...
