"""Types of the TRF reader's compiled field loops (tbstats/io/trf/fields.pyx)."""

import numpy as np

def round_blocks(buf: np.ndarray, line_start: np.ndarray, line_length: np.ndarray, n_blocks: np.ndarray,
                 first_column: int, is_ws: np.ndarray, colour_id: np.ndarray, result_id: np.ndarray, opp: np.ndarray,
                 opp_ok: np.ndarray, opp_blank: np.ndarray, colour: np.ndarray, result: np.ndarray,
                 stray: np.ndarray) -> None: ...
def fixed_fields(buf: np.ndarray, line_start: np.ndarray, line_length: np.ndarray, spans: np.ndarray,
                 numbers: np.ndarray, is_ws: np.ndarray, first: np.ndarray, last: np.ndarray, value: np.ndarray,
                 ok: np.ndarray) -> None: ...
def gather_utf8(buf: np.ndarray, at: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...
def decimal_field(buf: np.ndarray, at: np.ndarray, first: np.ndarray, last: np.ndarray, value: np.ndarray,
                  state: np.ndarray) -> None: ...
