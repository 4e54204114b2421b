"""The compiled loops (tbstats.model.loops) against plain Python loops over the same arrays.

- ``place_games``: every game in its player's cell of its round, or in the trash cell when its round is not
  counted or wider than the block, or its player none of the event's; the opponent's row in the bucket or
  ``NO_OPP`` (a null opponent is none); the outcome by the result when played over the board (one-byte codes;
  longer codes and nulls are losses), else by the points (C.07 16.3.1); black by the colour's code (a null is
  white); the columns read from sliced Arrow arrays (an offset into the values and the validity bitmaps); runs in
  any order and of any length; bad arguments raise instead of writing out of bounds;
- ``placing.place``: a games table whose columns are cut into chunks at different rows placed as one array;
- the row loops, ``opponents_values`` and ``round_categories`` against numpy and the C.07 16.2 rules;
- the cuts (C.07 14, 16.5) in one pass: what the engine's ``cut_order`` leaves, for any number of cuts;
- ``half_up_quotients``: the averages rounded half up, as exact integer arithmetic gives;
- ``decimals``: the values for output as numpy divides them, NaN where undefined;
- ``refine_groups``: a tied player's new label counts its group's members with a smaller key, and it stays
  tied when another member has its key.
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


DTYPES = [np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(DTYPES), st.integers(0, 12), st.integers(0, 14), st.integers(0, 2 ** 32 - 1),
       st.sampled_from(["contiguous", "transposed", "broadcast"]))
def test_row_loops_equal_numpy(dtype: type, P: int, R: int, seed: int, layout: str) -> None:
    """Row sums, and counts of the cells equal to a target per row, of every cell dtype the engine uses, masks of
    any strides (a broadcast mask of one row, the transpose of an array), against numpy's masked reductions."""
    from tbstats.model.grid import row_count_equal, row_sum

    rng = np.random.default_rng(seed)
    if dtype is np.bool_:
        values = rng.random((P, R)) < 0.5
    else:
        info = np.iinfo(dtype)
        values = rng.integers(max(info.min, -1000), min(info.max, 1000), (P, R), endpoint=True).astype(dtype)
        if P and R:   # the dtype's extremes too
            values.reshape(-1)[rng.integers(0, P * R, 2)] = (info.min, info.max)
    mask = rng.random((P, R)) < 0.6
    if layout == "transposed":
        values, mask = np.ascontiguousarray(values.T).T, np.ascontiguousarray(mask.T).T
    elif layout == "broadcast":
        mask = np.broadcast_to(rng.random((1, R)) < 0.6, (P, R))
    wide = values.astype(np.int64)
    assert row_sum(values).tolist() == wide.sum(axis=1).tolist()
    assert row_sum(values, mask).tolist() == np.where(mask, wide, 0).sum(axis=1).tolist()
    target = wide[:, 0] if R else rng.integers(-3, 3, P)   # (each row's target found in it at least once)
    assert row_count_equal(values, target, mask).tolist() == ((wide == target[:, None]) & mask).sum(axis=1).tolist()



@settings(max_examples=300, deadline=None)
@given(st.sampled_from([np.int8, np.int16, np.int32, np.int64]), st.integers(0, 8), st.integers(0, 9),
       st.integers(0, 2 ** 32 - 1), st.integers(0, 4), st.integers(0, 4), st.booleans(), st.integers(1, 6),
       st.booleans())
def test_cuts_in_one_pass_leave_what_cut_order_leaves(dtype: type, P: int, R: int, seed: int, low: int, high: int,
                                                      by_score: bool, spread: int, transposed: bool) -> None:
    """Any number of cuts (C.07 14, 16.5) in one compiled pass: the sum and number of the elements that the
    engine's own cut_order (the order, the VUR's preferences, explain's choices) leaves, with many ties (values
    drawn from few), VUR elements present or not, arrays of any strides."""
    from helpers import cut_elements

    from tbstats.model.grid import row_after_cuts

    rng = np.random.default_rng(seed)
    values = rng.integers(-spread, spread + 1, (P, R)).astype(dtype)
    scores = rng.integers(0, spread + 1, (P, R)).astype(dtype)
    present = rng.random((P, R)) < 0.8
    vur = (rng.random((P, R)) < 0.25) & (rng.random((P, 1)) < 0.6)
    if transposed:
        values, scores, present, vur = (np.ascontiguousarray(a.T).T for a in (values, scores, present, vur))
    keep = cut_elements(present, values, scores, vur, low, high, by_score)
    total, count = row_after_cuts(values, scores, present, vur, low, high, by_score=by_score)
    assert total.tolist() == np.where(keep, values.astype(np.int64), 0).sum(axis=1).tolist()
    assert count.tolist() == keep.sum(axis=1).tolist()


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(DTYPES[1:]), st.integers(0, 10), st.integers(0, 9), st.integers(0, 2 ** 32 - 1),
       st.booleans(), st.sampled_from(["contiguous", "transposed", "none"]))
def test_one_cut_equals_a_loop_over_each_row(dtype: type, P: int, R: int, seed: int, highest: bool,
                                             vurs: str) -> None:
    """A single cut (C.07 14.1, 16.5) in one pass: a row with elements loses one of them and its value, the highest
    for a high cut; for a low cut the lowest VUR element when the row has one, else the lowest element."""
    from tbstats.model.grid import row_minus_cut

    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    values = rng.integers(max(info.min, -500), min(info.max, 500), (P, R), endpoint=True).astype(dtype)
    mask = rng.random((P, R)) < 0.7
    vur = rng.random((P, R)) < 0.2
    if vurs == "transposed":
        vur = np.ascontiguousarray(vur.T).T
    total = np.where(mask, values.astype(np.int64), 0).sum(axis=1)
    count = mask.sum(axis=1)
    before = total.copy()
    got_total, got_count = row_minus_cut(values, mask, None if vurs == "none" else vur, total, count,
                                         highest=highest)
    assert total.tolist() == before.tolist()   # the sums passed in are left as they were
    for i in range(P):
        elements = [int(v) for v, m in zip(values[i], mask[i], strict=True) if m]
        own_vurs = [int(v) for v, m, u in zip(values[i], mask[i], vur[i], strict=True) if m and u]
        if not elements:
            assert (got_total[i], got_count[i]) == (0, 0)
            continue
        removed = max(elements) if highest else min(own_vurs) if own_vurs and vurs != "none" else min(elements)
        assert (got_total[i], got_count[i]) == (sum(elements) - removed, len(elements) - 1)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(DTYPES), st.integers(0, 10), st.integers(0, 9), st.integers(0, 2 ** 32 - 1))
def test_opponents_values_equal_a_masked_gather(dtype: type, P: int, R: int, seed: int) -> None:
    """The opponent's value where the mask says so and the opponent is a row (none: -1; out of range: too),
    the pad elsewhere."""
    from tbstats.model.grid import loop_view
    from tbstats.model.loops import opponents_values

    rng = np.random.default_rng(seed)
    values = (rng.random(P) < 0.5) if dtype is np.bool_ else rng.integers(-100, 100, P).astype(dtype)
    opp = rng.integers(-1, P + 2, (P, R)).astype(np.int32)
    use = rng.random((P, R)) < 0.7
    pad = 1 if dtype is np.bool_ else 7 if dtype is np.uint8 else -7
    out = np.empty((P, R), dtype=values.dtype)
    opponents_values(loop_view(values), opp, loop_view(use), pad, loop_view(out))
    want = [[values[o] if u and 0 <= o < P else pad for o, u in zip(row, keep, strict=True)]
            for row, keep in zip(opp.tolist(), use.tolist(), strict=True)]
    assert out.tolist() == want


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(DTYPES), st.integers(0, 10), st.integers(0, 9), st.integers(0, 2 ** 32 - 1))
def test_opponents_sums_are_the_masked_gather_summed(dtype: type, P: int, R: int, seed: int) -> None:
    """Each row's sum of the opponents' values where the mask says so and the opponent is a row, in int64."""
    from tbstats.model.grid import loop_view
    from tbstats.model.loops import opponents_sums

    rng = np.random.default_rng(seed)
    values = (rng.random(P) < 0.5) if dtype is np.bool_ else rng.integers(-100, 100, P).astype(dtype)
    opp = rng.integers(-1, P + 2, (P, R)).astype(np.int32)
    use = rng.random((P, R)) < 0.7
    out = np.empty(P, dtype=np.int64)
    opponents_sums(loop_view(values), opp, loop_view(use), out)
    want = [sum(int(values[o]) for o, u in zip(row, keep, strict=True) if u and 0 <= o < P)
            for row, keep in zip(opp.tolist(), use.tolist(), strict=True)]
    assert out.tolist() == want


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([np.int8, np.int16, np.int32, np.int64]), st.integers(0, 10), st.integers(0, 9),
       st.integers(0, 2 ** 32 - 1), st.booleans())
def test_row_dot_is_the_masked_sum_of_products(dtype: type, P: int, R: int, seed: int, strided: bool) -> None:
    """Each row's sum of the products of two arrays where the mask says so, in int64 (products beyond the arrays'
    type too, within int64's); the right array in another type, and arrays of any stride."""
    from tbstats.model.grid import row_dot

    rng = np.random.default_rng(seed)
    top = min(int(np.iinfo(dtype).max), 2 ** 40)
    wide = rng.integers(-top, top, (P, 2 * R), endpoint=True).astype(dtype)
    left = wide[:, ::2] if strided else np.ascontiguousarray(wide[:, :R])
    right = rng.integers(-50, 50, (P, R)).astype(np.int32)
    mask = rng.random((P, R)) < 0.6
    want = [sum(int(a) * int(b) for a, b, m in zip(ra, rb, rm, strict=True) if m)
            for ra, rb, rm in zip(left.tolist(), right.astype(dtype).tolist(), mask.tolist(), strict=True)]
    assert row_dot(left, right, mask).tolist() == want


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(DTYPES), st.integers(0, 10), st.integers(0, 9), st.integers(0, 2 ** 32 - 1), st.booleans())
def test_opponents_flagged_sums_are_own_values_against_flagged_opponents(dtype: type, P: int, R: int, seed: int,
                                                                         strided: bool) -> None:
    """Each row's sum of its own values in the rounds where the mask says so and the opponent is a row whose flag
    is set, in int64 (values of any stride: a column slice of a wider array too)."""
    from tbstats.model.grid import loop_view
    from tbstats.model.loops import opponents_flagged_sums

    rng = np.random.default_rng(seed)
    flag = rng.random(P) < 0.5
    opp = rng.integers(-1, P + 2, (P, R)).astype(np.int32)
    use = rng.random((P, R)) < 0.7
    wide = (rng.random((P, 2 * R)) < 0.5) if dtype is np.bool_ else rng.integers(-100, 100, (P, 2 * R)).astype(dtype)
    values = wide[:, ::2] if strided else np.ascontiguousarray(wide[:, :R])
    out = np.empty(P, dtype=np.int64)
    opponents_flagged_sums(loop_view(flag), opp, loop_view(use), loop_view(values), out)
    want = [sum(int(v) for v, o, u in zip(vals, row, keep, strict=True) if u and 0 <= o < P and flag[o])
            for vals, row, keep in zip(values.tolist(), opp.tolist(), use.tolist(), strict=True)]
    assert out.tolist() == want


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 8), st.integers(0, 9), st.integers(0, 2 ** 32 - 1), st.booleans())
def test_round_categories_equal_a_loop_over_the_rounds(P: int, R: int, seed: int, broadcast: bool) -> None:
    """Categories by game type; a requested bye followed by a counted round that is not a VUR, or trailing;
    rounds beyond the counted ones not counted (a broadcast mask of one row too); codes out of range refused."""
    from tbstats.engine.unplayed import (
        _BY_TYPE,
        _REQUESTED,
        _VUR,
        CAT_BYE_FOLLOWED,
        CAT_BYE_TRAILING,
        NOT_COUNTED,
    )
    from tbstats.model.grid import loop_view
    from tbstats.model.loops import round_categories

    rng = np.random.default_rng(seed)
    gtype = rng.integers(0, len(GAME_TYPES), (P, R)).astype(np.int8)
    counted = np.broadcast_to(np.arange(R) < rng.integers(0, R + 1), (P, R)) if broadcast else \
        rng.random((P, R)) < 0.8
    want = []
    for row, keep in zip(gtype.tolist(), counted.tolist(), strict=True):
        later = [j for j in range(R) if keep[j] and not _VUR[row[j]]]
        last = later[-1] if later else -1
        want.append([NOT_COUNTED if not keep[j] else (CAT_BYE_FOLLOWED if j < last else CAT_BYE_TRAILING)
                     if _REQUESTED[row[j]] else int(_BY_TYPE[row[j]]) for j in range(R)])
    out = np.empty((P, R), dtype=np.int8)
    round_categories(gtype, loop_view(counted), _BY_TYPE, loop_view(_REQUESTED), loop_view(_VUR),
                     CAT_BYE_FOLLOWED, CAT_BYE_TRAILING, NOT_COUNTED, out)
    assert out.tolist() == want
    if P and R:
        gtype[0, 0] = len(GAME_TYPES)
        with pytest.raises(ValueError, match="out of range"):
            round_categories(gtype, loop_view(counted), _BY_TYPE, loop_view(_REQUESTED), loop_view(_VUR),
                             CAT_BYE_FOLLOWED, CAT_BYE_TRAILING, NOT_COUNTED, out)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 40), max_size=12), st.integers(0, 2 ** 32 - 1), st.sampled_from([1, 3, 40]),
       st.sampled_from([0.1, 0.7, 1.0]), st.booleans(), st.booleans())
def test_refine_groups_equals_counting_the_smaller_keys_of_each_group(sizes: list[int], seed: int, spread: int,
                                                                      share: float, undefined: bool,
                                                                      grouped: bool) -> None:
    """Each tied player's new label is its label plus its group's members with a smaller key (groups of one
    label; equal keys share a label); groups small and large (insertion sort, quicksort, or counted when the
    keys span few values), keys few and many, undefined ones (far above the others), the tied players sorted all
    at once or grouped by a counting sort first (either way for any share of them tied), or listed group by
    group already (the first step: each event's players in row order); rows not listed keep their labels; a
    member stays tied when another has its key; bad rows or labels refused."""
    from tbstats.model.loops import refine_groups

    rng = np.random.default_rng(seed)
    labels = np.repeat(np.cumsum([0, *sizes])[:-1], sizes).astype(np.int64)   # each group: its first position
    P = len(labels)
    key = rng.integers(-spread, spread + 1, P).astype(np.int64)
    if undefined:
        key[rng.random(P) < 0.1] = np.iinfo(np.int64).max // 4   # undefined values (standings' sort key)
    if not grouped:   # players of a group need not be next to each other in row order (else: as the first step's)
        perm = rng.permutation(P)
        labels, key = labels[perm], key[perm]
    tied = np.flatnonzero(rng.random(P) < share)
    want = labels.tolist()
    for r in tied.tolist():
        want[r] = int(labels[r]) + sum(1 for s in tied.tolist() if labels[s] == labels[r] and key[s] < key[r])
    # still tied: another listed member of the group has the same key
    want_still = [int(sum(1 for s in tied.tolist() if labels[s] == labels[r] and key[s] == key[r]) > 1)
                  for r in tied.tolist()]
    for few in (False, True):   # grouped by a counting sort of the labels first, or all sorted at once
        out = labels.copy()
        still = np.full(len(tied), 7, dtype=np.uint8)
        refine_groups(labels, key[tied], tied.astype(np.int64), out, still, few)
        assert out.tolist() == want
        assert still.tolist() == want_still
    one = np.zeros(1, dtype=np.uint8)
    if P:
        with pytest.raises(ValueError, match="out of range"):
            refine_groups(labels, key[:1], np.array([P], dtype=np.int64), out, one, False)
        bad = labels.copy()
        bad[0] = P
        with pytest.raises(ValueError, match="out of range"):
            refine_groups(bad, key[:1], np.array([0], dtype=np.int64), out, one, False)
        with pytest.raises(ValueError, match="differ in length"):
            refine_groups(labels, key[tied][:-1] if len(tied) else key[:1], tied.astype(np.int64), out, still, False)
        with pytest.raises(ValueError, match="differ in length"):
            refine_groups(labels, key[tied], tied.astype(np.int64), out, np.zeros(len(tied) + 1, dtype=np.uint8), False)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 30), max_size=10), st.integers(0, 2 ** 32 - 1), st.sampled_from([1, 2, 50]))
def test_refine_tied_is_refine_then_tied_players(sizes: list[int], seed: int, spread: int) -> None:
    """The standings' step (:func:`tbstats.engine.standings.refine_tied`): the labels of :func:`refine` and the
    players still tied by :func:`tied_players` of them, in ascending rows, from one compiled pass."""
    from tbstats.engine.standings import refine, refine_tied, tied_players

    rng = np.random.default_rng(seed)
    labels = np.repeat(np.cumsum([0, *sizes])[:-1], sizes).astype(np.int64)
    key = rng.integers(-spread, spread + 1, len(labels)).astype(np.int64)
    tied = tied_players(labels)
    new, still = refine_tied(labels, key[tied], tied)
    assert new.tolist() == refine(labels, key, tied).tolist()
    assert still.tolist() == tied_players(new, tied).tolist()
    assert still.tolist() == sorted(still.tolist())
    # in place, with the groups' members spread over the rows too: the same labels, written over the input
    for rows in (labels, labels[rng.permutation(len(labels))]):
        tied = tied_players(rows)
        want = refine_tied(rows, key[tied], tied)
        mine = rows.copy()
        got = refine_tied(mine, key[tied], tied, in_place=True)
        assert got[0] is mine or not len(tied)
        assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()
    held = labels.copy()
    held.flags.writeable = False
    if len(tied_players(held)):
        with pytest.raises(ValueError, match="in place"):
            refine_tied(held, key[tied_players(held)], tied_players(held), in_place=True)


_NEAR = st.sampled_from([0, 1, 2 ** 51, 2 ** 52 - 3, 2 ** 52, 2 ** 53 + 1, 2 ** 61])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(-2 ** 61, 2 ** 61), st.integers(-2 ** 30, 2 ** 30).filter(bool)), max_size=20),
       st.lists(st.tuples(_NEAR, st.integers(-3, 3), st.integers(1, 2 ** 20)), max_size=20))
def test_half_up_quotients_equal_exact_integer_rounding(pairs: list[tuple[int, int]],
                                                        near: list[tuple[int, int, int]]) -> None:
    """Each quotient rounded half up (``floor((2 num + den) / (2 den))`` in Python's exact integers), for any signs
    and sizes (``2 num + den`` within int64): by the floating-point division below ``DIVIDE_EXACT``, by integer
    division above it, and at its edge (numerators near 2**52, where an inexact division would cross an
    integer); a zero denominator refused; ``round_half_up`` is the same with a denominator per player or one for all."""
    from tbstats.engine.tiebreaks.base import round_half_up
    from tbstats.model.loops import DIVIDE_EXACT, half_up_quotients

    assert DIVIDE_EXACT == 2 ** 52
    pairs = pairs + [((sign * big - den) // 2 + k, den) for big, k, den in near for sign in (1, -1)]
    num = np.array([n for n, _ in pairs], dtype=np.int64)
    den = np.array([d for _, d in pairs], dtype=np.int64)
    want = [(2 * n + d) // (2 * d) for n, d in pairs]
    out = np.full(len(pairs), 7, dtype=np.int64)
    half_up_quotients(num, den, out)
    assert out.tolist() == want
    assert round_half_up(num, den).tolist() == want
    small = np.abs(num) < 2 ** 40
    assert round_half_up(num[small], 3).tolist() == [(2 * n + 3) // 6 for n in num[small].tolist()]
    with pytest.raises(ZeroDivisionError):
        half_up_quotients(np.ones(2, dtype=np.int64), np.array([1, 0], dtype=np.int64), np.empty(2, dtype=np.int64))
    with pytest.raises(ValueError, match="differ in length"):
        half_up_quotients(num, den[:-1] if len(den) else np.ones(1, dtype=np.int64), out)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(-2 ** 62, 2 ** 62), st.integers(-10 ** 6, 10 ** 6).filter(bool), st.booleans()),
                max_size=30))
def test_decimals_are_numpys_true_division_with_nan_where_undefined(rows: list[tuple[int, int, bool]]) -> None:
    """The values as decimals for output: numpy's division of the two converted arrays, bit for bit, and NaN
    where a value is undefined (:meth:`Values.as_float`)."""
    from tbstats.engine.tiebreaks.base import Values
    from tbstats.model.loops import decimals

    num = np.array([n for n, _, _ in rows], dtype=np.int64)
    den = np.array([d for _, d, _ in rows], dtype=np.int64)
    defined = np.array([k for _, _, k in rows], dtype=bool)
    want = np.where(defined, np.divide(num, den, dtype=np.float64), np.nan)
    out = np.full(len(rows), 7.0)
    decimals(num, den, defined.view(np.uint8), out)
    assert out.tobytes() == want.tobytes()
    assert Values(num, den, defined).as_float().tobytes() == want.tobytes()
    with pytest.raises(ValueError, match="differ in length"):
        decimals(num, den, np.ones(len(rows) + 1, dtype=np.uint8), out)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 40), st.integers(0, 6), st.integers(1, 5), st.integers(0, 2 ** 32 - 1))
def test_final_cells_equal_the_gather_of_each_final_round(P: int, R: int, T: int, seed: int) -> None:
    """FB's final-round column per player (:func:`tbstats.engine.stage.final_cells`): the tournament's last column
    where the player has an opponent there, -1 elsewhere, as numpy's gather gives it; bad rows are refused."""
    from tbstats.engine.stage import final_cells

    rng = np.random.default_rng(seed)
    tix = np.sort(rng.integers(0, T, P)).astype(np.int64)
    last = rng.integers(-1, R, T).astype(np.int64)
    opp = np.where(rng.random((P, R)) < 0.3, -1, rng.integers(0, max(P, 1), (P, R))).astype(np.int32)
    out = np.empty(P, dtype=np.int64)
    final_cells(tix, last, opp, out)
    col = last[tix]
    want = np.where(col >= 0, opp[np.arange(P), np.maximum(col, 0)] if R else -1, -1) != -1
    assert out.tolist() == np.where(want & (col >= 0), col, -1).tolist()
    if P:
        with pytest.raises(ValueError, match="out of range"):
            final_cells(np.full(P, T, dtype=np.int64), last, opp, out)
        with pytest.raises(ValueError, match="out of range"):
            final_cells(tix, np.full(T, R, dtype=np.int64), opp, out)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 60), st.integers(0, 2 ** 32 - 1), st.sampled_from([np.int64, np.bool_, np.int32]))
def test_put_rows_is_numpys_assignment(P: int, seed: int, dtype: type) -> None:
    """A block's values put in the batch's order (:func:`tbstats.model.grid.put_rows`; compiled for int64 and
    bools): as numpy's ``out[rows] = values``, rows of any order; a row out of range is refused."""
    from tbstats.model.grid import put_rows
    from tbstats.model.loops import scatter_rows

    rng = np.random.default_rng(seed)
    rows = rng.permutation(P)[:rng.integers(0, P + 1)]
    values = rng.integers(-5, 6, len(rows)).astype(dtype)
    want, got = np.zeros(P, dtype=dtype), np.zeros(P, dtype=dtype)
    want[rows] = values
    put_rows(got, rows, values)
    assert got.tolist() == want.tolist()
    with pytest.raises(ValueError, match="out of range"):
        scatter_rows(np.zeros(1, dtype=np.int64), np.array([P], dtype=np.int64), np.zeros(P, dtype=np.int64))
    with pytest.raises(ValueError, match="out of range"):
        scatter_rows(np.zeros(1, dtype=np.int64), np.array([-1], dtype=np.int64), np.zeros(P, dtype=np.int64))


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 80), st.integers(0, 2 ** 32 - 1), st.floats(0, 1))
def test_kept_rows_is_numpys_boolean_index(n: int, seed: int, share: float) -> None:
    """The rows kept, in order (:func:`tbstats.model.loops.kept_rows`): numpy's ``rows[keep]``; lengths checked."""
    from tbstats.model.loops import kept_rows

    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(10 * n + 1, n, replace=False)).astype(np.int64)
    keep = (rng.random(n) < share).astype(np.uint8)
    out = np.full(n, -7, dtype=np.int64)
    k = kept_rows(rows, keep, out)
    assert out[:k].tolist() == rows[keep.view(bool)].tolist()
    with pytest.raises(ValueError, match="differ in length"):
        kept_rows(rows, np.zeros(n + 1, dtype=np.uint8), out)
    if n:
        with pytest.raises(ValueError, match="shorter"):
            kept_rows(rows, keep, np.zeros(n - 1, dtype=np.int64))
