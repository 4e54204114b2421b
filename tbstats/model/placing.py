"""The games placed in the dense view's cells (:func:`tbstats.model.dense.build_buckets`), read as Arrow lays
them out.

The compiled :func:`tbstats.model.loops.place_games` reads each games column once, from its Arrow buffers:
values, an Enum's codes, a string's 16-byte view (the result code is inline), and the validity bitmaps of the
columns that may hold nulls (opponent, result, colour). Nothing is converted first. On a run of 1.04M game rows
of the 10k mix, converting the columns to numpy arrays (chunks joined, nulls filled, outcomes and colours
decoded) took about 10 ms before a 4.1 ms placement; reading them in place takes 6.9 ms in all, and the engine
took 6-7% less time (benchmarks/RESULTS.md, 2026-12-05 23:00).

A column of several chunks is read chunk by chunk: the rows are cut where any column's chunk ends, and the
games' runs of one tournament with them.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence

import numpy as np
import polars as pl
import pyarrow as pa

from tbstats.model.columns import stored_integers, string_views, valid_mask
from tbstats.model.games import DRAW, GAME_TYPE, LOSS, WIN
from tbstats.model.loops import place_games

#: The games columns placed, in the order :func:`place` reads them.
COLUMNS = ("player", "round", "points", "game_type", "opponent", "result", "colour")

_NONE = np.zeros(0, dtype=np.uint8)

#: The outcome of a one-byte result code: '1'/'W' a win, '='/'D' a draw, any other a loss.
OUTCOMES = np.full(256, LOSS, dtype=np.int8)
OUTCOMES[[ord("1"), ord("W")]] = WIN
OUTCOMES[[ord("="), ord("D")]] = DRAW


def place(games: pl.DataFrame, run_t: np.ndarray, run_len: np.ndarray, numbers: tuple[np.ndarray, np.ndarray] | None,
          per_tournament: Sequence[np.ndarray], out: Sequence[np.ndarray]) -> None:
    """Place every row of ``games`` in the flat buffers ``out`` (opponent, points, game type, outcome, black), by
    :func:`tbstats.model.loops.place_games`; ``run_t`` / ``run_len``: the rows as runs of one tournament;
    ``numbers``: each row's player and opponent as positions among the event's start numbers, when they are not
    the start numbers themselves; ``per_tournament``: the loop's per-tournament arrays."""
    black = _code(games["colour"], "b")
    chunks = [_arrow_chunks(games[name]) for name in COLUMNS]
    for lo, hi, pieces in _segments(chunks, games.height):
        player, rnd, points, gtype, opponent, result, colour = (
            piece.slice(lo - start, hi - lo) for piece, start in pieces)
        seg_t, seg_len = _runs_within(run_t, run_len, lo, hi)
        if numbers is None:
            p_values = _values(player, np.int32, fill=0)
            o_values, o_valid, o_bit = _nullable(opponent, np.int32)
        else:
            p_values, o_values, o_valid, o_bit = numbers[0][lo:hi], numbers[1][lo:hi], _NONE, 0
        views, r_valid, r_bit = _views(result)
        c_values, c_valid, c_bit = _nullable(colour, np.uint8)
        place_games(seg_t, seg_len, p_values, _values(rnd, np.int16, fill=0), _values(points, np.int32, fill=0),
                    _values(gtype, np.uint8, fill=GAME_TYPE["absent"]), o_values, o_valid, o_bit,
                    views, r_valid, r_bit, OUTCOMES, c_values, c_valid, c_bit, black, GAME_TYPE["played"],
                    *per_tournament, *out)


def _code(column: pl.Series, value: str) -> int:
    """The code of ``value`` in an Enum column (256, no code, when it is none of its categories)."""
    categories = column.dtype.categories.to_list() if isinstance(column.dtype, pl.Enum) else []
    return categories.index(value) if value in categories else 256


def _arrow_chunks(column: pl.Series) -> list[pa.Array]:
    """The column's chunks as Arrow arrays (no copy; polars exports strings as views); an Enum's as its codes."""
    out = []
    for chunk in column.get_chunks():
        arr = chunk.to_arrow(compat_level=pl.CompatLevel.newest())
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        if pa.types.is_dictionary(arr.type):
            arr = arr.indices
        out.append(arr)
    return out


def _segments(columns: list[list[pa.Array]], n: int) -> Iterator[tuple[int, int, list[tuple[pa.Array, int]]]]:
    """Rows ``lo`` .. ``hi`` that no column's chunk boundary cuts, with each column's chunk there and its first
    row."""
    bounds = sorted({0, n, *(int(b) for chunks in columns for b in np.cumsum([len(c) for c in chunks]))})
    starts = [np.cumsum([0, *(len(c) for c in chunks)]) for chunks in columns]
    for lo, hi in itertools.pairwise(bounds):
        if hi > lo:
            pieces = []
            for chunks, first in zip(columns, starts, strict=True):
                k = int(np.searchsorted(first, lo, "right")) - 1
                pieces.append((chunks[k], int(first[k])))
            yield lo, hi, pieces


def _runs_within(run_t: np.ndarray, run_len: np.ndarray, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """The runs of rows ``lo`` .. ``hi``: the runs that overlap them, cut to them."""
    if lo == 0 and int(run_len.sum()) == hi:
        return run_t, run_len
    ends = np.cumsum(run_len)
    starts = ends - run_len
    k0, k1 = int(np.searchsorted(ends, lo, "right")), int(np.searchsorted(starts, hi, "left"))
    lengths = np.minimum(ends[k0:k1], hi) - np.maximum(starts[k0:k1], lo)
    return np.ascontiguousarray(run_t[k0:k1]), lengths


def _raw(arr: pa.Array, dtype: type) -> np.ndarray:
    """An integer array's values as ``dtype``, from its first row (no copy where they are stored so)."""
    return np.ascontiguousarray(stored_integers(arr), dtype=dtype)


def _values(arr: pa.Array, dtype: type, fill: int) -> np.ndarray:
    """Values of a column the model's checks keep free of nulls (one, should it come, as ``fill``: player and
    round 0 place the game in the trash cell)."""
    values = _raw(arr, dtype)
    if arr.null_count:
        values = np.where(valid_mask(arr), values, fill).astype(dtype)
    return values


def _nullable(arr: pa.Array, dtype: type) -> tuple[np.ndarray, np.ndarray, int]:
    """Values, validity bitmap (empty without nulls) and the bit of the first row."""
    return _raw(arr, dtype), _bitmap(arr), arr.offset


def _views(arr: pa.Array) -> tuple[np.ndarray, np.ndarray, int]:
    """The 16-byte views of a string-view array from its first row, its validity bitmap and first bit."""
    if not pa.types.is_string_view(arr.type):
        raise TypeError(f"results are strings, not {arr.type}")
    return string_views(arr), _bitmap(arr), arr.offset


def _bitmap(arr: pa.Array) -> np.ndarray:
    bitmap = arr.buffers()[0]
    return np.frombuffer(bitmap, dtype=np.uint8) if arr.null_count and bitmap is not None else _NONE

