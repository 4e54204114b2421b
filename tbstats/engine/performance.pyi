"""Types of the Perfect Tournament Performance's compiled search (tbstats/engine/performance.pyx)."""

import numpy as np

def perfect_ratings(ratings: np.ndarray, played: np.ndarray, halves: np.ndarray, expected: np.ndarray, none: int,
                    out: np.ndarray) -> None: ...
