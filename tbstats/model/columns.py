"""The games table's columns as arrays for the dense view (:mod:`tbstats.model.dense`): each game's outcome from
its result code, read from the Arrow buffers, and whether the table already is the grid of the view."""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa

from tbstats.model.games import DRAW, LOSS, WIN


def game_outcomes(results: pl.Series) -> np.ndarray:
    """LOSS / DRAW / WIN of each game's result code ('1'/'W' win, '='/'D' draw, anything else a loss).

    Reads the first byte of one-byte codes straight from the Arrow buffers, chunk by chunk (no per-string
    work, no copy of the strings).
    """
    table = np.full(256, LOSS, dtype=np.int8)
    table[[ord("1"), ord("W")]] = WIN
    table[[ord("="), ord("D")]] = DRAW
    parts = [_chunk_outcomes(chunk.to_arrow(compat_level=pl.CompatLevel.newest()), table)
             for chunk in results.cast(pl.String).get_chunks()]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int8)


def _chunk_outcomes(arr: pa.Array, table: np.ndarray) -> np.ndarray:
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if not len(arr):
        return np.zeros(0, dtype=np.int8)
    if pa.types.is_string_view(arr.type):
        # 16-byte views: int32 length, then up to 12 bytes inline
        views = arr.buffers()[1]
        lengths = np.frombuffer(views, dtype=np.int32).reshape(-1, 4)[arr.offset: arr.offset + len(arr), 0]
        first = np.frombuffer(views, dtype=np.uint8).reshape(-1, 16)[arr.offset: arr.offset + len(arr), 4]
        out = _translate(table, first)
        out[lengths != 1] = LOSS
    else:
        if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
            arr = arr.cast(pa.large_string())
        _, off_buf, data_buf = arr.buffers()
        wide = np.int64 if pa.types.is_large_string(arr.type) else np.int32
        offsets: np.ndarray = np.frombuffer(off_buf, dtype=wide)[arr.offset: arr.offset + len(arr) + 1]
        data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None and len(data_buf) else np.zeros(
            1, dtype=np.uint8)
        out = _translate(table, data[np.minimum(offsets[:-1], len(data) - 1)])
        out[(offsets[1:] - offsets[:-1]) != 1] = LOSS
    if arr.null_count:
        out[~_valid(arr)] = LOSS
    return out


def _translate(table: np.ndarray, first: np.ndarray) -> np.ndarray:
    """``table[first]`` for a 256-entry int8 table and uint8 bytes, by one ``bytes.translate`` (a gather would
    convert the bytes to an index array 8 times their size first); writable."""
    out: np.ndarray = np.frombuffer(bytearray(first.tobytes().translate(table.tobytes())), dtype=np.int8)
    return out


def _valid(arr: pa.Array) -> np.ndarray:
    """The validity bitmap of ``arr`` as a bool mask, unpacked with numpy (``is_valid`` would import
    ``pyarrow.compute``, a tenth of a second in a fresh process)."""
    bits = np.frombuffer(arr.buffers()[0], dtype=np.uint8)
    mask: np.ndarray = np.unpackbits(bits, bitorder="little")[arr.offset: arr.offset + len(arr)].view(np.bool_)
    return mask


def in_grid_order(g: pl.DataFrame, g_round: np.ndarray, player_no: np.ndarray, player_t: np.ndarray,
                   start_no: np.ndarray, widths: np.ndarray) -> bool:
    """Whether the games table is exactly the grid of a single bucket, row by row: each player's rounds 1..R
    in order, players in the view's order (``player_t``, ``start_no``), nothing else."""
    P = len(player_t)
    if len(widths) != 1 or widths[0] < 1 or g.height != P * int(widths[0]):
        return False
    R = int(widths[0])
    # start numbers compared in the games' own integer type (they come from an Int32 column as well)
    if not ((g_round.reshape(P, R) == np.arange(1, R + 1, dtype=g_round.dtype)).all()
            and (player_no.reshape(P, R) == start_no.astype(player_no.dtype)[:, None]).all()):
        return False
    # tournaments: a sorted column whose first and last row of every player's block are the player's
    # tournament holds it on every row of the block (searched in place, no copy of the column)
    t = g["tournament"]
    if P == 0 or not t.is_sorted():
        return P == 0
    return all(bool((t.gather_every(R, first).to_numpy() == player_t).all()) for first in (0, R - 1))
