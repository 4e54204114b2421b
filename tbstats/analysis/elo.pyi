"""Types of the compiled passes of the archive fit (tbstats/analysis/elo.pyx)."""

import numpy as np

def side_terms(r: np.ndarray, i: np.ndarray, j: np.ndarray, s: np.ndarray, c: float, w: np.ndarray,
               surplus: np.ndarray, weight: np.ndarray) -> None: ...
def hessian_product(i: np.ndarray, j: np.ndarray, w: np.ndarray, diag: np.ndarray, q: np.ndarray,
                    out: np.ndarray) -> None: ...
def owner_terms(x: np.ndarray, owner: np.ndarray, rj: np.ndarray, s: np.ndarray, n: np.ndarray, c: float,
                surplus: np.ndarray, weight: np.ndarray) -> None: ...
