"""Rows sorted by (label, key) in the compiled loops: :func:`sort_rows`, shared by
:func:`tbstats.engine.ranks.refine_groups` and :func:`tbstats.engine.encounters.place_from_top` (inline: each module
has its own copy, no import at run time)."""

from libc.stdint cimport int64_t

ctypedef struct KeyRow:
    int64_t label
    int64_t key
    int64_t at    # the row's place in the caller's list (a player's in ``tied``)

cdef enum:
    INSERTION_MAX = 24   # runs up to this long are sorted by insertion


cdef inline bint row_before(const KeyRow* a, const KeyRow* b) noexcept nogil:
    return a.label < b.label or (a.label == b.label and a.key < b.key)


cdef inline void sort_rows(KeyRow* items, Py_ssize_t n) noexcept nogil:
    """Sort by (label, key): quicksort (Hoare's partition around the middle item; the smaller side first, the
    larger one in the loop), runs of up to INSERTION_MAX items by insertion."""
    cdef Py_ssize_t i, j
    cdef KeyRow item, pivot
    while n > INSERTION_MAX:
        pivot = items[n // 2]
        i = -1
        j = n
        while True:
            i += 1
            while row_before(&items[i], &pivot):
                i += 1
            j -= 1
            while row_before(&pivot, &items[j]):
                j -= 1
            if i >= j:
                break
            item = items[i]
            items[i] = items[j]
            items[j] = item
        if j + 1 < n - j - 1:
            sort_rows(items, j + 1)
            items += j + 1
            n -= j + 1
        else:
            sort_rows(items + j + 1, n - j - 1)
            n = j + 1
    for i in range(1, n):
        item = items[i]
        j = i - 1
        while j >= 0 and row_before(&item, &items[j]):
            items[j + 1] = items[j]
            j -= 1
        items[j + 1] = item
