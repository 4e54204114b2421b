"""Types of the compiled loops (tbstats/analysis/segments.pyx)."""

import numpy as np

def segment_counts(order_a: np.ndarray, place_b: np.ndarray, edge_a: np.ndarray, edge_b: np.ndarray,
                   code_a: np.ndarray, code_b: np.ndarray, need: np.ndarray, event_of: np.ndarray, largest: int,
                   per_event: np.ndarray, large: np.ndarray) -> int: ...
def group_pair_counts(bounds: np.ndarray, x: np.ndarray, y: np.ndarray, largest: int, discordant: np.ndarray,
                      tied_x: np.ndarray, tied_both: np.ndarray) -> int: ...
