# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The exact values' compiled loops (Cython, one pass each without the GIL): the averages rounded half up
(:func:`tbstats.engine.tiebreaks.base.round_half_up`) and the values as decimals for output
(:meth:`tbstats.engine.tiebreaks.base.Values.as_float`). Checked against exact integer arithmetic and numpy by
tests/test_exact.py.
"""

from libc.math cimport NAN, floor
from libc.stdint cimport int64_t, uint8_t

cdef int64_t _EXACT = 1LL << 52
#: Quotients whose numerator is below this in size are found by a floating-point division, exactly
DIVIDE_EXACT = _EXACT


def half_up_quotients(const int64_t[::1] num, const int64_t[::1] den, int64_t[::1] out) -> None:
    """``out[i]``: ``num[i] / den[i]`` rounded to the nearest integer, .5 up: ``floor((2 num + den) / (2 den))``,
    for any signs (``2 num + den`` within int64; a zero ``den`` raises).

    Where ``2 num + den`` is below :data:`DIVIDE_EXACT` in size and ``den`` positive (every average of ratings or
    points), by one floating-point division, which is exact there: a quotient ``a / b`` that is no integer lies
    at least ``1 / b`` from one, and its rounding error is below ``|a / b| / 2**53 < 1 / (2 b)``. Elsewhere by
    integer division (several times slower: numpy's ``floor_divide`` of two arrays took 1.2 ms for 143,000
    players, this pass about a fifth of that)."""
    cdef Py_ssize_t n = num.shape[0], i
    cdef int64_t a, b, q
    cdef bint zero = False
    if den.shape[0] != n or out.shape[0] != n:
        raise ValueError("half_up_quotients: num, den and out differ in length")
    with nogil:
        for i in range(n):
            a = 2 * num[i] + den[i]
            b = 2 * den[i]
            if b > 0 and -_EXACT < a < _EXACT:
                out[i] = <int64_t>floor(<double>a / <double>b)
            elif b == 0:
                zero = True
                out[i] = 0
            else:
                q = a / b   # (C: toward zero; floor below)
                if (a % b != 0) and ((a < 0) != (b < 0)):
                    q -= 1
                out[i] = q
    if zero:
        raise ZeroDivisionError("half_up_quotients: a zero denominator")


def decimals(const int64_t[::1] num, const int64_t[::1] den, const uint8_t[::1] defined, double[::1] out) -> None:
    """``out[i]``: ``num[i] / den[i]`` as the nearest double (numpy's true division: both converted, then
    divided), NaN where not ``defined``: one pass, where numpy converted both arrays through buffers first."""
    cdef Py_ssize_t n = num.shape[0], i
    if den.shape[0] != n or defined.shape[0] != n or out.shape[0] != n:
        raise ValueError("decimals: num, den, defined and out differ in length")
    with nogil:
        for i in range(n):
            out[i] = <double>num[i] / <double>den[i] if defined[i] else NAN
