"""Helpers over players x rounds arrays (:mod:`tbstats.model.dense`): a small table looked up per cell, row-wise
sums and extremes, the cells of a mask. Rows are a tournament's rounds, far too short for numpy's row-wise
reductions; each helper says which faster form it takes instead.
"""

from __future__ import annotations

import numpy as np


def lookup(table: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """``table[codes]`` for a small table of one-byte values (bool, int8) indexed by valid one-byte codes.

    The whole table is packed into one word (a few bits per entry, offset by its smallest value) and each cell
    shifts its entry out: elementwise ufuncs, which release the GIL (a numpy gather would first convert the
    codes to an intp array 8 times their size; ``bytes.translate`` holds the GIL, which serialises the
    engine's threads). Tables too large to pack are gathered.
    """
    lo = int(table.min(initial=0))
    entries = [int(v) - lo for v in table.tolist()]
    bits = max(max(entries, default=0).bit_length(), 1)
    if codes.dtype.itemsize != 1 or table.dtype.itemsize != 1 or len(table) * bits > 64:
        out: np.ndarray = table[codes]
        return out
    wide: type[np.unsignedinteger] = np.uint16 if len(table) * bits <= 16 else \
        np.uint32 if len(table) * bits <= 32 else np.uint64
    shift: np.ndarray = codes.astype(wide)
    if bits > 1:
        np.multiply(shift, wide(bits), out=shift)
    np.right_shift(wide(sum(v << (bits * i) for i, v in enumerate(entries))), shift, out=shift)
    np.bitwise_and(shift, wide((1 << bits) - 1), out=shift)
    out = shift.astype(table.dtype)
    if lo:
        out += table.dtype.type(lo)
    return out


def row_sum(values: np.ndarray, mask: np.ndarray | None = None, *, bound: int | None = None) -> np.ndarray:
    """Per-player sum of a players x rounds array (where ``mask``), int64.

    ``einsum`` runs several times faster than ``sum(axis=1)`` on rows as short as a tournament's rounds.
    ``bound`` (the largest absolute value of ``values``, when the caller knows it) lets integer sums that
    cannot leave int32 accumulate in int32, twice as fast.
    """
    if values.dtype == np.bool_:
        values = values.view(np.uint8) if values.shape[1] < 256 else values.astype(np.int32)
        if mask is None and values.dtype == np.uint8:
            return np.einsum("ij->i", values).astype(np.int64)
    acc = np.int32 if bound is not None and values.dtype.itemsize <= 4 and values.dtype.kind in "iu" and \
        bound * max(values.shape[1], 1) < 2 ** 31 else np.int64
    if mask is None:
        return np.einsum("ij->i", values, dtype=acc).astype(np.int64, copy=False)
    return np.einsum("ij,ij->i", mask.view(np.uint8), values, dtype=acc).astype(np.int64, copy=False)


def row_extreme(values: np.ndarray, mask: np.ndarray, *, highest: bool) -> np.ndarray:
    """Per-player minimum (or maximum) of ``values`` where ``mask``; the dtype's maximum (minimum) where none.

    One pass per round column: rows are a tournament's rounds, far too short for a row-wise reduction.
    """
    info = np.iinfo(values.dtype)
    masked = np.where(mask, values, info.min if highest else info.max)
    if not masked.shape[1]:
        return np.full(masked.shape[0], info.min if highest else info.max, dtype=values.dtype)
    out = masked[:, 0].copy()
    step = np.maximum if highest else np.minimum
    for c in range(1, masked.shape[1]):
        step(out, masked[:, c], out=out)
    return out


def row_two_extremes(values: np.ndarray, mask: np.ndarray, *, highest: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per player, the lowest (highest) two of ``values`` where ``mask``, equal values counted twice; the dtype's
    maximum (minimum) where there are fewer. One pass per round column, as :func:`row_extreme`."""
    fill = np.iinfo(values.dtype).min if highest else np.iinfo(values.dtype).max
    masked = np.where(mask, values, fill)
    first = np.full(masked.shape[0], fill, dtype=values.dtype)
    second = first.copy()
    best, worst = (np.maximum, np.minimum) if highest else (np.minimum, np.maximum)
    for c in range(masked.shape[1]):
        column = masked[:, c]
        best(second, worst(first, column), out=second)
        best(first, column, out=first)
    return first, second


def cells(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row and column of every True cell of a players x rounds mask, row-major (faster than ``nonzero``)."""
    return np.divmod(np.flatnonzero(mask), max(mask.shape[1], 1))
