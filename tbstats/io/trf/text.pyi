"""Types of the TRF reader's compiled front (tbstats/io/trf/text.pyx)."""

import numpy as np

def latin1_texts(raws: list[bytes]) -> list[bytes | None]: ...
def split_codes(buf: np.ndarray, offsets: np.ndarray, is_ws: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                                 np.ndarray]: ...
