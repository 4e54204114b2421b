"""The exact values' compiled loops (tbstats.engine.exact) against exact arithmetic and numpy.

- ``half_up_quotients``: the averages rounded half up, as exact integer arithmetic gives;
- ``decimals``: the values for output as numpy divides them, NaN where undefined.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
    from tbstats.engine.exact import DIVIDE_EXACT, half_up_quotients
    from tbstats.engine.tiebreaks.base import round_half_up

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
    from tbstats.engine.exact import decimals
    from tbstats.engine.tiebreaks.base import Values

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
