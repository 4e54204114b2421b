"""Helpers over players x rounds arrays (:mod:`tbstats.model.dense`): a small table looked up per cell, row-wise
sums, with cuts too, the cells of a mask, and a block's rows put in the batch's order. Rows are a tournament's
rounds, far too short for numpy's row-wise reductions; each helper says which faster form it takes instead (the
row-wise ones: compiled loops, :mod:`tbstats.model.rows`).
"""

from __future__ import annotations

import numpy as np

from tbstats.model.rows import row_cut_one, row_cuts, row_matches, row_products, row_sums, scatter_rows

_NO_MASK = np.zeros((0, 0), dtype=np.uint8)


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


def rounds_below(n: np.ndarray, width: int) -> np.ndarray:
    """Per player, whether each of ``width`` rounds is one of its first ``n`` (players x rounds, bool): the rows of a
    small table of every count, taken (a comparison broadcast over rows this short costs about 5 times more)."""
    table = np.arange(width)[None, :] < np.arange(width + 1)[:, None]
    out: np.ndarray = table.take(np.clip(n, 0, width), axis=0)
    return out


def row_sum(values: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """Per-player sum of a players x rounds array of integers or bools (where ``mask``), int64: one compiled
    pass over the rows (:func:`tbstats.model.rows.row_sums`)."""
    out = np.empty(values.shape[0], dtype=np.int64)
    row_sums(loop_view(values), _NO_MASK if mask is None else loop_view(mask), out)
    return out


def row_count_equal(values: np.ndarray, target: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per player, the cells of ``mask`` where the integer players x rounds ``values`` equal the player's
    ``target``, int64: ``row_sum(values == target[:, None], mask)`` in one compiled pass
    (:func:`tbstats.model.rows.row_matches`)."""
    out = np.empty(values.shape[0], dtype=np.int64)
    row_matches(loop_view(values), np.ascontiguousarray(target, dtype=np.int64), loop_view(mask), out)
    return out


def row_dot(left: np.ndarray, right: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per player, the sum of ``left * right`` over the cells of ``mask`` (integer players x rounds arrays, int64):
    ``row_sum(left * right, mask)`` in one compiled pass, without the products' array
    (:func:`tbstats.model.rows.row_products`; ``right`` is taken in ``left``'s type where they differ)."""
    out = np.empty(left.shape[0], dtype=np.int64)
    row_products(loop_view(left), loop_view(right.astype(left.dtype, copy=False)), loop_view(mask), out)
    return out


def row_minus_cut(values: np.ndarray, mask: np.ndarray, vur: np.ndarray | None, total: np.ndarray, count: np.ndarray,
                  *, highest: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per player, ``total`` and ``count`` (new int64 arrays) less the one value that a single cut removes from the
    elements (``mask``), where ``count`` > 0: the highest (``highest``), else the lowest of the VUR elements
    (``vur`` where ``mask``; None: none) when there is one, else the lowest (one compiled pass,
    :func:`tbstats.model.rows.row_cut_one`)."""
    total, count = np.array(total, dtype=np.int64), np.array(count, dtype=np.int64)
    row_cut_one(loop_view(values), loop_view(mask), _NO_MASK if vur is None else loop_view(vur), highest, total, count)
    return total, count


def row_after_cuts(values: np.ndarray, scores: np.ndarray, mask: np.ndarray, vur: np.ndarray, low: int, high: int,
                   *, by_score: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per player, the sum of ``values`` and the number of the elements (``mask``) left after ``low`` least and
    ``high`` most significant cuts, int64 both: one compiled pass (:func:`tbstats.model.rows.row_cuts`, where the
    order of the cuts and the VUR's preferences are spelled out). ``scores`` rank the elements first when
    ``by_score``; ``vur`` marks the VUR elements."""
    common = np.result_type(values, scores)
    total, count = np.empty(values.shape[0], dtype=np.int64), np.empty(values.shape[0], dtype=np.int64)
    row_cuts(loop_view(values.astype(common, copy=False)), loop_view(scores.astype(common, copy=False)),
             loop_view(mask), loop_view(vur), low, high, by_score, total, count)
    return total, count


def loop_view(values: np.ndarray) -> np.ndarray:
    """An array as the compiled loops take it: bools as bytes (any strides)."""
    return values.view(np.uint8) if values.dtype == np.bool_ else values


def cells(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row and column of every True cell of a players x rounds mask, row-major (faster than ``nonzero``)."""
    return np.divmod(np.flatnonzero(mask), max(mask.shape[1], 1))


def put_rows(out: np.ndarray, rows: np.ndarray, values: np.ndarray) -> None:
    """``out[rows] = values``: a block's per-player values put in the batch's player order; in one compiled pass
    (:func:`tbstats.model.rows.scatter_rows`) for int64 and bools of one type, by numpy otherwise."""
    if values.dtype == out.dtype and out.dtype in (np.int64, np.bool_) and values.ndim == out.ndim == 1 \
            and out.flags.c_contiguous:
        scatter_rows(loop_view(np.ascontiguousarray(values)), np.ascontiguousarray(rows, dtype=np.int64),
                     loop_view(out))
    else:
        out[rows] = values
