"""The standings' compiled loops (tbstats.engine.ranks) against plain Python.

- ``refine_groups``: a tied player's new label counts its group's members with a smaller key, and it stays
  tied when another member has its key; ``refine_tied`` is ``refine`` then the players still tied;
- ``kept_rows``: numpy's boolean index.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st


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
    from tbstats.engine.ranks import refine_groups

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


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 80), st.integers(0, 2 ** 32 - 1), st.floats(0, 1))
def test_kept_rows_is_numpys_boolean_index(n: int, seed: int, share: float) -> None:
    """The rows kept, in order (:func:`tbstats.engine.ranks.kept_rows`): numpy's ``rows[keep]``; lengths checked."""
    from tbstats.engine.ranks import kept_rows

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
