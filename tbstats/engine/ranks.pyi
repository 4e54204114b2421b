"""Types of the standings' compiled loops (tbstats/engine/ranks.pyx)."""

import numpy as np

def refine_groups(labels: np.ndarray, key: np.ndarray, tied: np.ndarray, out: np.ndarray,
                  still: np.ndarray, few: bool) -> None: ...
def kept_rows(rows: np.ndarray, keep: np.ndarray, out: np.ndarray) -> int: ...
