"""Types of the compiled line finder of CSV files (tbstats/io/csvrows.pyx)."""

from collections.abc import Sequence

import numpy as np

CHUNK: int

def line_starts(path: str, lines: Sequence[int] | np.ndarray, quote: str = ...) -> np.ndarray: ...
def first_long_row(path: str, fields: int, separator: str = ..., quote: str = ...) -> tuple[int, int] | None: ...
