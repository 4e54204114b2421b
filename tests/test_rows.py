"""The compiled loops over the rows of a players x rounds view (tbstats.model.rows, tbstats.engine.stage)
against numpy and plain Python loops over the same arrays.

- the row loops, ``opponents_values`` and ``round_categories`` against numpy and the C.07 16.2 rules;
- the cuts (C.07 14, 16.5) in one pass: what the engine's ``cut_order`` leaves, for any number of cuts;
- ``scatter_rows`` (``put_rows``) against numpy's assignment, and the final rounds' cells against their gather.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tbstats.model.games import GAME_TYPES

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
    from tbstats.model.rows import opponents_values

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
    from tbstats.model.rows import opponents_sums

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
    from tbstats.model.rows import opponents_flagged_sums

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
    from tbstats.model.rows import round_categories

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
    from tbstats.model.rows import scatter_rows

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
