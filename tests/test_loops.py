"""The games' compiled loops (tbstats.model.loops) and the column helpers they read through, against plain Python.

- ``place_games``: every game in its player's cell of its round, or in the trash cell when its round is not
  counted or wider than the block, or its player none of the event's; the opponent's row in the bucket or
  ``NO_OPP`` (a null opponent is none); the outcome by the result when played over the board (one-byte codes;
  longer codes and nulls are losses), else by the points (C.07 16.3.1); black by the colour's code (a null is
  white); the columns read from sliced Arrow arrays (an offset into the values and the validity bitmaps); runs in
  any order and of any length; bad arguments raise instead of writing out of bounds;
- ``placing.place``: a games table whose columns are cut into chunks at different rows placed as one array;
- ``starts_with``, ``lists_with`` and ``integers`` (tbstats.model.columns) against polars.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tbstats.model.columns import integers, lists_with, starts_with
from tbstats.model.dense import NO_OPP
from tbstats.model.games import DRAW, GAME_TYPE, GAME_TYPES, LOSS, WIN, ColourEnum, GameTypeEnum
from tbstats.model.loops import CODES, place_games
from tbstats.model.placing import OUTCOMES, place

PLAYED = GAME_TYPE["played"]


def test_the_compiled_codes_are_the_models() -> None:
    assert CODES == {"NO_OPP": NO_OPP, "LOSS": LOSS, "DRAW": DRAW, "WIN": WIN}


def _reference(runs: list[tuple[int, int]], games: dict[str, np.ndarray], per_t: dict[str, np.ndarray],
               size: int) -> dict[str, list[int]]:
    """The placement, one game at a time, in plain Python."""
    out = {"opp": [NO_OPP] * size, "pts": [0] * size, "type": [GAME_TYPE["absent"]] * size,
           "outcome": [LOSS] * size, "black": [0] * size}
    trash = size - 1
    i = 0
    for t, length in runs:
        for _ in range(length):
            p, r = int(games["player"][i]), int(games["round"][i])
            o = 0 if games["opponent"][i] is None else int(games["opponent"][i])
            players, stride = int(per_t["players"][t]), int(per_t["stride"][t])
            cell = int(per_t["first_cell"][t]) + (p - 1) * stride + r - 1
            counted = min(int(per_t["counted"][t]), stride)
            if not (1 <= r <= counted and 1 <= p <= players and 0 <= cell < trash):
                cell = trash
            out["opp"][cell] = int(per_t["first_local"][t]) + o - 1 if 1 <= o <= players else NO_OPP
            pts, g = int(games["points"][i]), int(games["gtype"][i])
            out["pts"][cell] = pts
            out["type"][cell] = g
            if g == PLAYED:
                code = games["result"][i]
                outcome = LOSS if code is None or len(code.encode()) != 1 else int(OUTCOMES[code.encode()[0]])
            else:
                outcome = WIN if pts >= per_t["win"][t] else DRAW if pts >= per_t["draw"][t] else LOSS
            out["outcome"][cell] = outcome
            out["black"][cell] = int(games["colour"][i] == "b")
            i += 1
    return out


#: Result codes: one byte (wins, draws, losses and others), none, and longer ones.
RESULT_CODES = ["1", "0", "=", "W", "D", "L", "", "1/2", "+", "==", "é"]


@st.composite
def placements(draw: st.DrawFn) -> tuple[list[tuple[int, int]], dict[str, np.ndarray], dict[str, np.ndarray],
                                         int]:
    """Tournaments laid out one after another in a flat buffer, and games (some out of range) in runs."""
    T = draw(st.integers(1, 5))
    players = [draw(st.integers(0, 6)) for _ in range(T)]
    stride = [draw(st.integers(1, 5)) for _ in range(T)]
    counted = [draw(st.integers(0, 6)) for _ in range(T)]
    first_cell = np.cumsum([0, *(p * s for p, s in zip(players, stride, strict=True))])
    first_local = np.cumsum([0, *players])[:-1]
    win = [draw(st.integers(0, 3)) for _ in range(T)]
    per_t = {"first_cell": first_cell[:-1], "stride": np.array(stride), "players": np.array(players),
             "first_local": first_local, "counted": np.array(counted), "win": np.array(win),
             "draw": np.array([draw(st.integers(0, 3)) for _ in range(T)])}
    runs = draw(st.lists(st.tuples(st.integers(0, T - 1), st.integers(0, 8)), max_size=8))
    n = sum(length for _, length in runs)
    ints = st.integers(-1, 8)
    def column(values: st.SearchStrategy) -> list:  # type: ignore[type-arg]
        return draw(st.lists(values, min_size=n, max_size=n))

    games = {
        "player": np.array(column(ints), dtype=np.int32),
        "opponent": column(st.one_of(st.none(), ints)),
        "round": np.array(column(ints), dtype=np.int16),
        "points": np.array(column(st.integers(0, 3)), dtype=np.int32),
        "gtype": np.array(column(st.integers(0, len(GAME_TYPES) - 1)), dtype=np.uint8),
        "result": column(st.one_of(st.none(), st.sampled_from(RESULT_CODES), st.text(max_size=14))),
        "colour": column(st.sampled_from([None, "w", "b"])),
    }
    return runs, games, per_t, int(first_cell[-1]) + 1


def _sliced(values: list, kind: pa.DataType, head: int) -> pa.Array:  # type: ignore[type-arg]
    """``values`` as an Arrow array that is a slice (``head`` rows in: an offset into its buffers and bitmap)."""
    return pa.array([values[0] if values else None] * head + values, type=kind).slice(head)


def _place(runs: list[tuple[int, int]], games: dict[str, Any], per_t: dict[str, np.ndarray],
           size: int, head: int = 0) -> dict[str, np.ndarray]:
    """:func:`place_games` of the games, their nullable columns as sliced Arrow arrays."""
    out = {"opp": np.full(size, NO_OPP, dtype=np.int32), "pts": np.zeros(size, dtype=np.int32),
           "type": np.full(size, GAME_TYPE["absent"], dtype=np.int8), "outcome": np.full(size, LOSS, dtype=np.int8),
           "black": np.zeros(size, dtype=np.uint8)}
    run_t = np.array([t for t, _ in runs], dtype=np.int64)
    run_len = np.array([length for _, length in runs], dtype=np.int64)
    opponent = _sliced(games["opponent"], pa.int32(), head)
    result = _sliced(games["result"], pa.string_view(), head)
    colour = _sliced([None if c is None else int(c == "b") for c in games["colour"]], pa.uint8(), head)

    def bitmap(arr: pa.Array) -> np.ndarray:
        return np.frombuffer(arr.buffers()[0], dtype=np.uint8) if arr.null_count else np.zeros(0, dtype=np.uint8)

    def values(arr: pa.Array, dtype: type) -> np.ndarray:
        return np.frombuffer(arr.buffers()[1], dtype=dtype)[arr.offset:arr.offset + len(arr)] if len(arr) else \
            np.zeros(0, dtype=dtype)

    views = np.frombuffer(result.buffers()[1], dtype=np.uint8).reshape(-1, 16)[result.offset:]
    place_games(run_t, run_len, games["player"], games["round"], games["points"], games["gtype"],
                values(opponent, np.int32), bitmap(opponent), opponent.offset,
                views, bitmap(result), result.offset, OUTCOMES,
                values(colour, np.uint8), bitmap(colour), colour.offset, 1, PLAYED,
                *(per_t[k].astype(np.int64) for k in ("first_cell", "stride", "players", "first_local", "counted",
                                                      "win", "draw")),
                out["opp"], out["pts"], out["type"], out["outcome"], out["black"])
    return out


@settings(max_examples=300, deadline=None)
@given(placements())
def test_place_games_equals_a_loop_over_the_games(case: tuple) -> None:  # type: ignore[type-arg]
    runs, games, per_t, size = case
    want = _reference(runs, games, per_t, size)
    for head in (0, 3, 11):   # slices starting within a bitmap's byte, and past it
        got = _place(runs, games, per_t, size, head)
        for name, values in want.items():
            assert got[name].tolist() == values, (name, head)


@settings(max_examples=150, deadline=None)
@given(placements(), st.data())
def test_place_reads_a_table_of_any_chunks(case: tuple, data: st.DataObject) -> None:  # type: ignore[type-arg]
    """The games table with each column cut into chunks at its own rows (as tables stacked from several files,
    or sliced, come), placed by :func:`tbstats.model.placing.place`, equals the loop over the games."""
    runs, games, per_t, size = case
    n = sum(length for _, length in runs)
    values = {"player": games["player"].tolist(), "round": games["round"].tolist(),
              "points": games["points"].tolist(), "game_type": [GAME_TYPES[g] for g in games["gtype"].tolist()],
              "opponent": games["opponent"], "result": games["result"], "colour": games["colour"]}
    types = {"player": pl.Int32, "round": pl.Int16, "points": pl.Int32, "game_type": GameTypeEnum,
             "opponent": pl.Int32, "result": pl.String, "colour": ColourEnum}
    columns = []
    for name, column in values.items():
        cuts = sorted(data.draw(st.lists(st.integers(0, n), max_size=3), label=name))
        pieces = [pl.Series(name, column[a:b], dtype=types[name]) for a, b in itertools.pairwise([0, *cuts, n])]
        columns.append(pl.concat(pieces, rechunk=False))
    table = pl.DataFrame(columns)
    out = (np.full(size, NO_OPP, dtype=np.int32), np.zeros(size, dtype=np.int32),
           np.full(size, GAME_TYPE["absent"], dtype=np.int8), np.full(size, LOSS, dtype=np.int8),
           np.zeros(size, dtype=np.uint8))
    run_t = np.array([t for t, _ in runs], dtype=np.int64)
    run_len = np.array([length for _, length in runs], dtype=np.int64)
    per_tournament = [per_t[k].astype(np.int64) for k in ("first_cell", "stride", "players", "first_local",
                                                            "counted", "win", "draw")]
    place(table, run_t, run_len, None, per_tournament, out)
    want = _reference(runs, games, per_t, size)
    for got, (name, expected) in zip(out, want.items(), strict=True):
        assert got.tolist() == expected, name


def test_place_games_refuses_arguments_it_cannot_place() -> None:
    games = {"player": np.ones(2, dtype=np.int32), "opponent": [1, 1],
             "round": np.ones(2, dtype=np.int16), "points": np.ones(2, dtype=np.int32),
             "gtype": np.zeros(2, dtype=np.uint8), "result": ["1", "0"], "colour": ["w", "b"]}
    per_t = {k: np.ones(1, dtype=np.int64) for k in ("first_cell", "stride", "players", "first_local", "counted",
                                                     "win", "draw")}
    per_t["first_cell"] = np.zeros(1, dtype=np.int64)
    assert _place([(0, 2)], games, per_t, 2)["pts"].tolist() == [1, 0]   # both in cell 0; the trash untouched
    with pytest.raises(ValueError, match="do not cover"):
        _place([(0, 1)], games, per_t, 2)
    with pytest.raises(ValueError, match="names no tournament"):
        _place([(1, 2)], games, per_t, 2)
    with pytest.raises(ValueError, match="differ in length"):
        _place([(0, 2)], {**games, "points": np.ones(3, dtype=np.int32)}, per_t, 2)
    with pytest.raises(ValueError, match="differ in length"):
        _place([(0, 2)], games, {**per_t, "win": np.ones(2, dtype=np.int64)}, 2)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.sampled_from(["299", "29", "2990", "", "x299", "299 0001 ..."]),
                          st.text(max_size=20)), max_size=30),
       st.sampled_from(["string", "large_string", "string_view"]), st.integers(0, 4), st.integers(0, 4),
       st.sampled_from([b"299", b"0", b"", b"2990"]))
def test_starts_with_equals_the_strings_compared(strings: list[str | None], kind: str, head: int, tail: int,
                                                 prefix: bytes) -> None:
    """Every string layout, sliced, with nulls, short and long strings (a view's inline bytes or its prefix)."""
    arr = pa.array(strings, type=getattr(pa, kind)())
    sliced = arr.slice(min(head, len(strings)), max(len(strings) - head - tail, 0))
    want = [s is not None and s.encode().startswith(prefix) for s in sliced.to_pylist()]
    assert starts_with(sliced, prefix).tolist() == want


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.lists(st.one_of(st.none(), st.sampled_from(["013 a", "310", "0133", " 310",
                                                                                    "299", "01", ""]),
                                                          st.text(max_size=6)), max_size=4)), max_size=12),
       st.integers(0, 3), st.integers(1, 4))
def test_lists_with_equals_polars_on_the_lists(rows: list[list[str | None] | None], head: int, cut: int) -> None:
    """Lists of strings (the records) with null lists and null strings, sliced and in chunks: whether a string of
    each list begins with one of the prefixes, as polars' own list and string expressions tell it."""
    import polars as pl

    column = pl.Series(rows, dtype=pl.List(pl.String)).slice(min(head, len(rows)))
    column = pl.concat([column.slice(0, cut), column.slice(cut)], rechunk=False)
    want = column.list.eval(pl.element().str.starts_with("013") | pl.element().str.starts_with("310")).list.any()
    assert lists_with(column, (b"013", b"310")).tolist() == want.fill_null(False).to_list()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.one_of(st.none(), st.integers(-(2 ** 31), 2 ** 31 - 1)), max_size=12), min_size=1,
                max_size=3), st.integers(0, 3), st.sampled_from([np.int64, np.int32]), st.integers(-5, 5))
def test_integers_fill_nulls_as_polars_does(chunks: list[list[int | None]], head: int, dtype: type,
                                            fill: int) -> None:
    """Columns of several chunks, sliced, with nulls: the values polars' ``fill_null`` gives, as ``dtype``."""
    import polars as pl

    column = pl.concat([pl.Series(c, dtype=pl.Int64) for c in chunks], rechunk=False)
    column = column.slice(min(head, len(column)))
    want = column.fill_null(fill).to_list()
    if dtype is np.int32:
        column = column.clip(-(2 ** 31), 2 ** 31 - 1).cast(pl.Int32)
    assert integers(column, dtype, fill=fill).tolist() == want
    assert integers(column, dtype, fill=fill).dtype == dtype


def test_integers_of_an_enum_are_its_codes() -> None:
    import polars as pl

    kinds = pl.Enum(GAME_TYPES)
    column = pl.concat([pl.Series(["pab", None, "played"], dtype=kinds),
                        pl.Series(["absent", "half_bye"], dtype=kinds)], rechunk=False).slice(1)
    assert integers(column, np.uint8, fill=99).tolist() == [99, *column.drop_nulls().to_physical().to_list()]
    with pytest.raises(TypeError, match="not integers or an Enum"):
        integers(pl.Series("name", ["a"]), np.int64)
