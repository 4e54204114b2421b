"""What kernels share: exact values, the per-batch context with its caches, and row-wise cut helpers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tbstats.engine.exact import decimals, half_up_quotients
from tbstats.engine.unplayed import Elements, apply_rules, categories, fore_elements, fore_view
from tbstats.model.dense import Buckets, Dense, Roster
from tbstats.model.grid import loop_view, put_rows, row_after_cuts, row_minus_cut, row_sum
from tbstats.model.rules import DEFAULT_EDITION, get_ruleset
from tbstats.model.spec import TieBreakSpec

_BIG = np.iinfo(np.int64).max // 4


@dataclass(frozen=True)
class Values:
    """One tie-break value per player, exact: ``num / den``; ``defined`` False means undefined (null).

    Within a tournament all players share ``den``, so ranking compares ``num`` directly.
    """

    num: np.ndarray      # int64
    den: np.ndarray      # int64, per player
    defined: np.ndarray  # bool

    def take(self, rows: np.ndarray) -> Values:
        """The values of the given rows (indices or mask)."""
        return Values(self.num[rows], self.den[rows], self.defined[rows])

    def as_float(self) -> np.ndarray:
        """Decimal values for output (exact for the usual scales), NaN when undefined: one compiled pass
        (:func:`tbstats.engine.exact.decimals`)."""
        out = np.empty(len(self.num), dtype=np.float64)
        decimals(np.ascontiguousarray(self.num, dtype=np.int64), np.ascontiguousarray(self.den, dtype=np.int64),
                 loop_view(np.ascontiguousarray(self.defined, dtype=bool)), out)
        return out


def round_half_up(num: np.ndarray, den: np.ndarray | int) -> np.ndarray:
    """``num / den`` rounded to the nearest integer, .5 up, for non-negative and negative values alike: one
    compiled pass for a denominator per player (:func:`tbstats.engine.exact.half_up_quotients`)."""
    if isinstance(den, np.ndarray) and den.shape == np.shape(num):
        out = np.empty(den.shape, dtype=np.int64)
        half_up_quotients(np.ascontiguousarray(num, dtype=np.int64), np.ascontiguousarray(den, dtype=np.int64), out)
        return out
    return np.floor_divide(2 * num + den, 2 * np.asarray(den))


class LotsKeys:
    """Each tournament row's key for the drawing of lots, made when first asked for (from the batch:
    :func:`tbstats.model.fingerprint.event_keys`) and shared by a context, its parts and its padded view, each
    taking its own tournaments' rows (no context is referred to: no reference cycle keeps one alive)."""

    def __init__(self, make: Callable[[], np.ndarray]) -> None:
        self._make = make
        self._keys: np.ndarray | None = None

    def all(self) -> np.ndarray:
        keys = self._keys
        if keys is None:   # (two threads asking at once make the same keys twice)
            keys = self._keys = self._make()
        return keys

    def of(self, rows: np.ndarray) -> LotsKeys:
        """The keys of the tournament ``rows`` (a part's), taken from these when first asked for."""
        return LotsKeys(lambda: self.all()[rows])


class Context:
    """A batch's dense view plus caches, so that each edition's stage and each spec run once.

    Built from one :class:`Dense` (a leaf: kernels run on it) or from :class:`Buckets` (tournaments
    grouped by round count): then every value is computed per bucket, on the bucket's own leaf context,
    and put back in the batch's player order; ``dense`` is the padded view of the whole batch, assembled
    only when something asks for it.
    """

    def __init__(self, dense: Dense | Buckets, edition_of: np.ndarray, unrated_rating: int | None = None,
                 lots_keys: LotsKeys | None = None) -> None:
        self.edition_of = edition_of            # [T] resolved edition name per tournament (for 'auto')
        self.unrated_rating = unrated_rating
        self._lots_seed = 0
        self._lots_keys: np.ndarray | None = None
        self._lots_source = lots_keys           # where the keys come from when none were set
        self._elements: dict[tuple[str, bool, bool], Elements] = {}
        self._values: dict[tuple[str, str], Values] = {}
        #: rankings per configuration (filled by :func:`tbstats.analysis.compare.standings`)
        self.standings_cache: dict[str, object] = {}
        self._buckets: Buckets | None = None
        self._parts: list[tuple[np.ndarray, Context]] = []
        self._part_tournaments: list[np.ndarray] = []   # each part's tournament rows in the batch
        self._dense: Dense | None = None
        self._flat: Context | None = None
        self._categories: np.ndarray | None = None
        self._shared: dict[str, np.ndarray] = {}    # read-only per-player arrays that many values share
        self._editions: list[tuple[str, np.ndarray | None]] | None = None   # (see _by_edition)
        #: rows of the batch's players table in the view's order (None: already in order, or unknown)
        self.player_order: np.ndarray | None = None
        if isinstance(dense, Dense):
            self._dense = dense
            self.roster: Roster = dense
        else:
            self._buckets = dense
            self.roster = dense.roster
            self.player_order = dense.player_order
            if len(dense.parts) == 1 and len(dense.parts[0].rows) == dense.roster.players:
                self._dense = dense.parts[0].dense       # one bucket: the context is a leaf
            else:
                self._parts = [(b.rows, Context(b.dense, edition_of[b.tournaments], unrated_rating,
                                                None if lots_keys is None else lots_keys.of(b.tournaments)))
                               for b in dense.parts]
                self._part_tournaments = [b.tournaments for b in dense.parts]

    @property
    def dense(self) -> Dense:
        """The dense view of the whole batch (assembled from the buckets on first use)."""
        if self._dense is None:
            assert self._buckets is not None
            self._dense = self._buckets.merge()
        return self._dense

    @property
    def lots_seed(self) -> int:
        """The seed of the drawing of lots (LOTS)."""
        return self._lots_seed

    @property
    def lots_keys(self) -> np.ndarray:
        """Per tournament row, the number that names the tournament in the drawing of lots (uint64): the
        keys given to :meth:`set_lots`, else those of the batch (:func:`tbstats.engine.compute.make_context`:
        each event's fingerprint, the same in any batch and from any input), else the tournament ids."""
        if self._lots_keys is None:
            if self._lots_source is None:
                return self.roster.t_ids.astype(np.uint64)
            self._lots_keys = self._lots_source.all()
        return self._lots_keys

    def set_lots(self, seed: int, keys: np.ndarray | None = None) -> None:
        """Seed the drawing of lots; ``keys`` (uint64 per tournament row), when given, replace the context's own
        (see :attr:`lots_keys`)."""
        self._lots_seed = seed
        if keys is not None:
            self._lots_keys = keys
        for (_, part), rows in zip(self._parts, self._part_tournaments, strict=True):
            part.set_lots(seed, None if keys is None else keys[rows])

    def _leaf(self) -> Context:
        """A context that runs kernels itself: this one, or one over the padded view of the whole batch."""
        if not self._parts:
            return self
        if self._flat is None:
            self._flat = Context(self.dense, self.edition_of, self.unrated_rating, self._lots_source)
        self._flat.set_lots(self._lots_seed, self._lots_keys)
        return self._flat

    def fore(self) -> Dense:
        """The dense view for Fore Buchholz (final round's paired games drawn)."""
        return fore_view(self._leaf().dense)

    def elements(self, edition: str, fore: bool = False, forfeits: bool = False) -> Elements:
        """The unplayed-round stage of ``edition`` (with FB's final round drawn when ``fore``; with forfeits
        counted as games, the ``/P`` modifier, when ``forfeits``), cached."""
        if self._parts:
            return self._leaf().elements(edition, fore, forfeits)
        key = (edition, fore, forfeits)
        if key not in self._elements:
            if fore:
                self._elements[key] = fore_elements(self.elements(edition, forfeits=forfeits))
            else:
                self._elements[key] = apply_rules(self.dense, get_ruleset(edition), self.categories(),
                                                  forfeits=forfeits)
        return self._elements[key]

    def categories(self) -> np.ndarray:
        """C.07 16.2 categories of the view (edition-independent), computed once."""
        if self._categories is None:
            self._categories = categories(self.dense)
        return self._categories

    def values(self, spec: TieBreakSpec, edition: str,
               kernel: Callable[[Context, TieBreakSpec, str], Values]) -> Values:
        """Values of ``spec`` under ``edition`` ('auto' picks each tournament's own edition), cached."""
        edition = spec.edition or edition
        key = (spec.plain, edition)
        if key in self._values:
            return self._values[key]
        if self._parts:
            result = self._scatter([(rows, part, part.values(spec, edition, kernel)) for rows, part in self._parts])
        elif edition == "auto":
            plain, by_edition = spec.without_edition(), self._by_edition()
            if len(by_edition) == 1:   # (the usual batch: every event of one edition, its values as they are)
                result = self.values(plain, by_edition[0][0], kernel)
            else:
                result = self._scatter([(rows, self, self.values(plain, e, kernel).take(rows))
                                        for e, rows in by_edition if rows is not None])
        else:
            result = kernel(self, spec, edition)
        self._values[key] = result
        return result

    def _by_edition(self) -> list[tuple[str, np.ndarray | None]]:
        """The editions 'auto' picks among the tournaments, each with its players' rows (None when it is the only
        one): grouped once per context, not compared name by name for every tie-break."""
        if self._editions is None:
            names, code = np.unique(self.edition_of, return_inverse=True)
            if len(names) <= 1:
                self._editions = [(str(names[0]) if len(names) else DEFAULT_EDITION, None)]
            else:
                per_player = code.reshape(-1)[self.dense.tix]
                self._editions = [(str(e), np.flatnonzero(per_player == k)) for k, e in enumerate(names.tolist())]
        return self._editions

    def unit(self, power: int = 1) -> np.ndarray:
        """Per-player denominator of points (``scale``), squared for products of points (shared, read-only)."""
        return self._shared_array(f"unit{power}")

    def ones(self) -> np.ndarray:
        """A denominator of 1 for every player (shared, read-only)."""
        return self.constant(1)

    def constant(self, value: int) -> np.ndarray:
        """A denominator of ``value`` for every player (shared, read-only: parts' values with it need no copy)."""
        return self._shared_array(f"const{int(value)}")

    def everyone(self) -> np.ndarray:
        """``defined`` True for every player (shared, read-only)."""
        return self._shared_array("everyone")

    def _shared_array(self, key: str) -> np.ndarray:
        """One array per context instead of one per tie-break: read-only, so no kernel can change another's."""
        if key not in self._shared:
            ro = self.roster
            if key.startswith("unit"):
                out = ro.per_player(ro.scale ** int(key[4:]))   # (the power per tournament, then a new array)
            elif key.startswith("const"):
                out = np.full(ro.players, int(key[5:]), dtype=np.int64)
            else:   # everyone
                out = np.ones(ro.players, dtype=bool)
            out.flags.writeable = False
            self._shared[key] = out
        return self._shared[key]

    def _scatter(self, parts: list[tuple[np.ndarray, Context, Values]]) -> Values:
        """One :class:`Values` for the batch from its parts' values (disjoint rows). A denominator or ``defined``
        that is the same shared array in every part (:meth:`unit`, :meth:`everyone`: the usual case) is this
        context's shared array, not a copy of theirs."""
        def shared_key(part: Context, array: np.ndarray) -> str | None:
            return next((k for k, a in part._shared.items() if a is array), None)

        out = {}
        covered = sum(len(rows) for rows, _, _ in parts) == self.roster.players   # (the parts are disjoint)
        for field, fill, dtype in (("num", 0, np.int64), ("den", 1, np.int64), ("defined", False, bool)):
            keys = {shared_key(part, getattr(v, field)) for _, part, v in parts} if field != "num" else {None}
            key = keys.pop() if len(keys) == 1 else None
            if key is not None:
                out[field] = self._shared_array(key)
                continue
            array = np.empty(self.roster.players, dtype=dtype) if covered else \
                np.full(self.roster.players, fill, dtype=dtype)
            for rows, _, v in parts:
                put_rows(array, rows, getattr(v, field))
            out[field] = array
        return Values(out["num"], out["den"], out["defined"])

    def release_stages(self, *, gathers: bool = False) -> None:
        """Drop the cached unplayed-round stages (players x rounds arrays; values stay cached), and with
        ``gathers`` the views' opponent-row index arrays: what a caller that has the values it needs does to
        keep memory low. They are rebuilt on demand."""
        self._elements.clear()
        self._categories = None
        if gathers and self._dense is not None:
            self._dense.release_gathers()
        if self._flat is not None:
            self._flat.release_stages(gathers=gathers)
        for _, part in self._parts:
            part.release_stages(gathers=gathers)

    def parts(self) -> list[tuple[np.ndarray | None, Context]]:
        """The leaf contexts with the batch rows of their players (None: all rows, in order)."""
        if self._parts:
            return [(rows, part) for rows, part in self._parts]
        return [(None, self)]

    def gathered(self, f: Callable[[Dense], np.ndarray]) -> np.ndarray:
        """``f`` of each leaf's view (an array with a row per player of the view), put together in the batch's
        player order: per-player figures of the grids without the padded view of the whole batch
        (:attr:`dense`, which copies every grid once more)."""
        if self._dense is not None or not self._parts:
            return f(self.dense)
        pieces = [(rows, f(part.dense)) for rows, part in self._parts]
        first = pieces[0][1]
        out = np.empty((self.roster.players, *first.shape[1:]), dtype=first.dtype)
        for rows, piece in pieces:
            put_rows(out, rows, piece)
        return out


# ----------------------------------------------------------------------------------- row-wise selection

def _fold(keys: list[np.ndarray]) -> np.ndarray | None:
    """The keys folded into one integer array whose order is their lexicographic order; None when too wide.

    A single key is used as it is; several are folded into int32 when their ranges allow, else int64.
    """
    if len(keys) == 1 and keys[0].dtype.kind == "i":
        key = keys[0]
        if not key.size or int(key.max()) < np.iinfo(key.dtype).max:  # the dtype's maximum marks "no candidate"
            return key
    ranges = [(int(k.min()), int(k.max())) if k.size else (0, 0) for k in keys]
    span = 1
    for lo, hi in ranges:
        span *= hi - lo + 1
    if span >= _BIG // 4:
        return None
    dtype = np.int32 if span < np.iinfo(np.int32).max else np.int64
    combined = np.zeros(keys[0].shape, dtype=dtype)
    for key, (lo, hi) in zip(keys, ranges, strict=True):
        combined *= hi - lo + 1
        combined += key - lo if lo else key
    return combined


def _pick_folded(mask: np.ndarray, folded: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if not mask.shape[1]:
        return np.zeros(len(mask), dtype=np.int64), np.zeros(len(mask), dtype=bool)
    col = np.where(mask, folded, np.iinfo(folded.dtype).max).argmin(axis=1)
    return col, mask[np.arange(len(mask)), col]


def _pick_keys(mask: np.ndarray, keys: list[np.ndarray], folded: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    if folded is not None:
        return _pick_folded(mask, folded)
    has = np.asarray(mask.any(axis=1), dtype=bool)
    return _pick_lexicographic(mask, keys), has


def pick(mask: np.ndarray, keys: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise lexicographic arg-min of ``keys`` over ``mask``; ties go to the earliest column.

    Returns (column index, row has a candidate). The keys are folded into one int64 when their ranges
    allow it (one masked arg-min), else compared one after the other.
    """
    return _pick_keys(mask, keys, _fold(keys))


def _pick_lexicographic(mask: np.ndarray, keys: list[np.ndarray]) -> np.ndarray:
    cand = mask.copy()
    for key in keys:
        vals = np.where(cand, key, _BIG)
        cand &= vals == vals.min(axis=1, keepdims=True)
    return cand.argmax(axis=1)


#: Why an element was cut (explain): the least significant value, a VUR cut first (16.5), the most significant.
CUT_LOWEST, CUT_VUR, CUT_HIGHEST = 1, 2, 3


def cut_order(present: np.ndarray, contribution: np.ndarray, oppscore: np.ndarray, vur: np.ndarray,
              low: int, high: int, by_oppscore: bool) -> tuple[np.ndarray, np.ndarray]:
    """Which elements ``low`` least and ``high`` most significant cuts remove, in order (C.07 14, 16.5).

    Least significant value: the lowest contribution (BH), or the contribution of the lowest-scored
    opponent (SB: ``by_oppscore``); ties prefer a VUR element, then the earliest round. When the player
    still has a VUR element and the LSV is not one, the lowest VUR contribution is cut instead as long as
    it is not lower than the LSV (16.5.1, 16.5.2). High cuts remove the most significant value.
    Returns ``columns`` and ``reasons`` of shape [P, low + high]; reason 0 means nothing was left to cut.
    """
    keep = present.copy()
    P = present.shape[0]
    rows = np.arange(P)
    columns = np.zeros((P, low + high), dtype=np.int64)
    reasons = np.zeros((P, low + high), dtype=np.int8)
    # rows with a VUR element: only there do VUR preferences and cuts apply (16.5); they are few
    v_rows = np.flatnonzero(row_sum(vur) > 0) if low else np.zeros(0, dtype=np.int64)
    low_keys = [oppscore, contribution] if by_oppscore else [contribution]
    low_fold = _fold(low_keys) if low else None
    if len(v_rows):
        not_vur = (~vur[v_rows]).astype(np.int8)
        v_low_keys = [k[v_rows] for k in low_keys] + [not_vur]
        v_low_fold = _fold(v_low_keys)
        v_keys = [contribution[v_rows], oppscore[v_rows]]
        v_fold = _fold(v_keys)
    if high:
        high_keys = [-oppscore, -contribution] if by_oppscore else [-contribution]
        high_fold = _fold(high_keys)
    for step in range(low + high):
        if step < low:
            col, has = _pick_keys(keep, low_keys, low_fold)
            reason = np.full(P, CUT_LOWEST, dtype=np.int8)
            if len(v_rows):
                keep_v = keep[v_rows]
                lsv, _ = _pick_keys(keep_v, v_low_keys, v_low_fold)    # ties prefer a VUR element
                v, has_vur = _pick_keys(keep_v & vur[v_rows], v_keys, v_fold)
                use_v = has_vur & ~vur[v_rows, lsv] & (contribution[v_rows, v] >= contribution[v_rows, lsv])
                col[v_rows] = np.where(use_v, v, lsv)
                reason[v_rows] = np.where(use_v, CUT_VUR, CUT_LOWEST)
        else:
            col, has = _pick_keys(keep, high_keys, high_fold)
            reason = np.full(P, CUT_HIGHEST, dtype=np.int8)
        keep[rows[has], col[has]] = False
        columns[:, step] = col
        reasons[:, step] = np.where(has, reason, 0)
    return columns, reasons


def cut_sum(present: np.ndarray, contribution: np.ndarray, oppscore: np.ndarray, vur: np.ndarray, low: int,
            high: int, by_oppscore: bool, *, total: np.ndarray | None = None,
            count: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per player, the sum of the contributions and the number of the elements left after the cuts of
    :func:`cut_order` (int64 both). ``total`` and ``count`` may pass in the uncut sum and count, when known.

    Cuts are one compiled pass over the rows: :func:`~tbstats.model.grid.row_after_cuts`, which makes the same
    choices as :func:`cut_order` (tests/test_loops.py checks it). A single cut by value needs only the value it
    removes, not which of tied elements it was (:func:`~tbstats.model.grid.row_minus_cut`): the row's highest
    contribution (high cut), else its lowest VUR contribution when it has a VUR element (the VUR is cut when it is
    the LSV and when it is not lower than the LSV, and it never is, 16.5), else its lowest contribution.
    """
    if low + high == 0:
        return (row_sum(contribution, present) if total is None else total,
                row_sum(present) if count is None else count)
    if low + high == 1 and not by_oppscore:
        return row_minus_cut(contribution, present, vur if low else None,
                             row_sum(contribution, present) if total is None else total,
                             row_sum(present) if count is None else count, highest=high > 0)
    return row_after_cuts(contribution, oppscore, present, vur, low, high, by_score=by_oppscore)
