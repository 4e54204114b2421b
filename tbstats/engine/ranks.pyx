# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The standings' compiled loops (Cython, without the GIL): :func:`refine_groups` splits the tied groups of a
standings step by a key (:func:`tbstats.engine.standings.refine`), each group sorted on its own (they are small)
instead of the whole batch's tied players at once; :func:`kept_rows` is numpy's boolean index without a branch
per row (:func:`tbstats.engine.standings.refine_tied`). Checked against plain Python by tests/test_ranks.py.
"""

from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.stdlib cimport calloc, free, malloc

from tbstats.model.keyrows cimport INSERTION_MAX, KeyRow, sort_rows

def kept_rows(const int64_t[::1] rows, const uint8_t[::1] keep, int64_t[::1] out) -> int:
    """Write the ``rows`` whose ``keep`` is set to the front of ``out``, in order, and return how many: numpy's
    ``rows[keep]`` without a branch per row (a standings step's still tied players, kept or not as no predictor
    learns: ten times faster)."""
    cdef Py_ssize_t n = rows.shape[0], i, k = 0
    if keep.shape[0] != n or out.shape[0] < n:
        raise ValueError("kept_rows: rows and keep differ in length, or out is shorter")
    with nogil:
        for i in range(n):
            out[k] = rows[i]
            k += keep[i] != 0
    return k


cdef void _assign(const KeyRow* items, Py_ssize_t n, const int64_t[::1] tied, int64_t[::1] out,
                  uint8_t[::1] still) noexcept nogil:
    """The new labels of a group sorted by key: its label plus the position of the first of its key's run; a
    member stays tied when its run has another member."""
    cdef Py_ssize_t i, first = 0
    for i in range(n):
        if items[i].key != items[first].key:
            first = i
        out[tied[items[i].at]] = items[i].label + first
        still[items[i].at] = i > first or (i + 1 < n and items[i + 1].key == items[i].key)


def refine_groups(const int64_t[::1] labels, const int64_t[::1] key, const int64_t[::1] tied,
                  int64_t[::1] out, uint8_t[::1] still, bint few) -> None:
    """Split the groups of the players ``tied`` (rows; a group: the players of one label) by ``key`` (one per
    player of ``tied``, in its order): each member's ``out`` is its label plus the number of its group's members
    with a smaller key (equal keys, equal labels), and ``still`` (by place in ``tied``) whether another member has
    its key (it stays tied). Labels are positions (0 .. P-1, P players); the other rows of ``out`` are left as
    they are.

    The groups are put together by a counting sort of their labels (unless ``tied`` lists them together already,
    in label order: the first step's events), then each is sorted, or, when its keys span fewer values than twice
    its size (points), counted; with ``few`` (few players tied), they are sorted all at once instead (no pass
    over every label)."""
    cdef Py_ssize_t P = labels.shape[0], n = tied.shape[0], t, a, b, i, at
    cdef int64_t r, lab, lo, hi
    cdef uint64_t span, k
    cdef int64_t* end = NULL
    cdef int64_t* count = NULL
    cdef KeyRow* items
    cdef bint bad = False, grouped = True
    if out.shape[0] != P or key.shape[0] != n or still.shape[0] != n:
        raise ValueError("refine_groups: labels and out (or tied, key and still) differ in length")
    if n == 0:
        return
    with nogil:
        lab = 0
        for t in range(n):
            r = tied[t]
            if r < 0 or r >= P or labels[r] < 0 or labels[r] >= P:
                bad = True
                break
            grouped = grouped and labels[r] >= lab   # the groups already together, in label order
            lab = labels[r]
    if bad:
        raise ValueError("refine_groups: a tied row or its label is out of range")
    with nogil:
        items = <KeyRow*>malloc(n * sizeof(KeyRow))
        if not few:
            if not grouped:
                end = <int64_t*>calloc(P + 1, sizeof(int64_t))
            count = <int64_t*>malloc((2 * n + 1) * sizeof(int64_t))
        bad = items == NULL or (not few and ((end == NULL and not grouped) or count == NULL))
    if bad:
        free(end)
        free(count)
        free(items)
        raise MemoryError()
    with nogil:
        if few:
            for t in range(n):
                r = tied[t]
                items[t].label = labels[r]
                items[t].key = key[t]
                items[t].at = t
            sort_rows(items, n)
            a = 0
            while a < n:
                b = a + 1
                while b < n and items[b].label == items[a].label:
                    b += 1
                _assign(items + a, b - a, tied, out, still)
                a = b
        else:
            if grouped:   # (the first step: each event's players, in row order)
                for t in range(n):
                    items[t].label = labels[tied[t]]
                    items[t].key = key[t]
                    items[t].at = t
            else:
                for t in range(n):   # the members of each group together, in label order
                    end[labels[tied[t]] + 1] += 1
                for i in range(P):
                    end[i + 1] += end[i]
                for t in range(n):
                    r = tied[t]
                    lab = labels[r]
                    at = end[lab]
                    items[at].label = lab
                    items[at].key = key[t]
                    items[at].at = t
                    end[lab] = at + 1   # at last the end of the group
            a = 0
            while a < n:
                if grouped:
                    b = a + 1
                    while b < n and items[b].label == items[a].label:
                        b += 1
                else:
                    b = end[items[a].label]
                lo = hi = items[a].key
                for i in range(a + 1, b):
                    lo = min(lo, items[i].key)
                    hi = max(hi, items[i].key)
                span = <uint64_t>hi - <uint64_t>lo   # (exact: hi >= lo)
                if b - a > INSERTION_MAX and span < <uint64_t>(2 * (b - a)):
                    # a member's place: the members with a smaller key, counted (no sort)
                    for i in range(<Py_ssize_t>span + 2):
                        count[i] = 0
                    for i in range(a, b):
                        count[<uint64_t>items[i].key - <uint64_t>lo + 1] += 1
                    for i in range(<Py_ssize_t>span + 1):
                        count[i + 1] += count[i]
                    for i in range(a, b):
                        k = <uint64_t>items[i].key - <uint64_t>lo
                        out[tied[items[i].at]] = items[i].label + count[k]
                        still[items[i].at] = count[k + 1] - count[k] > 1
                else:
                    sort_rows(items + a, b - a)
                    _assign(items + a, b - a, tied, out, still)
                a = b
        free(end)
        free(count)
        free(items)
