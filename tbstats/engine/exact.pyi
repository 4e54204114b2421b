"""Types of the exact values' compiled loops (tbstats/engine/exact.pyx)."""

import numpy as np

DIVIDE_EXACT: int

def half_up_quotients(num: np.ndarray, den: np.ndarray, out: np.ndarray) -> None: ...
def decimals(num: np.ndarray, den: np.ndarray, defined: np.ndarray, out: np.ndarray) -> None: ...
