"""A dense view of a batch: players x rounds numpy arrays, one block per round count or a few close ones, masked.

Most tie-breaks become row-wise reductions over this view: an opponent's score is one gather through
``opp``, a cut is a row-wise masked arg-min. Players of all tournaments are stacked in one axis, ordered
by (tournament, start number); ``tix`` maps each player row to its tournament row.

Tournaments are bucketed by their number of counted rounds (:func:`build_buckets`), so a batch is never
padded to its longest event: each :class:`Bucket` holds a :class:`Dense` of its own tournaments, as wide as
their longest (close round counts share a bucket, :func:`width_groups`: each bucket repeats the engine's
fixed costs). :meth:`Buckets.merge` gives the one padded view of the whole batch where a caller wants it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import polars as pl

from tbstats.model.adjust import bonus_cells
from tbstats.model.batch import Batch
from tbstats.model.cached import cached_property
from tbstats.model.columns import PerGame, integers, is_value, player_rows, rows_of, runs_of
from tbstats.model.games import DRAW as DRAW  # outcome codes, defined with the game types
from tbstats.model.games import GAME_TYPE
from tbstats.model.games import LOSS as LOSS
from tbstats.model.games import WIN as WIN
from tbstats.model.grid import cells, lookup, loop_view, rounds_below, row_sum
from tbstats.model.placing import place
from tbstats.model.rows import opponents_flagged_sums, opponents_sums, opponents_values

NO_OPP = -1

#: Rounds a participant was not available for: requested byes, absences and forfeit losses (C.07 16.1.2).
VUR_TYPES = ("half_bye", "zero_bye", "absent", "forfeit_loss", "double_forfeit")
FORFEIT_TYPES = ("forfeit_win", "forfeit_loss", "double_forfeit")
REQUESTED_BYE_TYPES = ("half_bye", "zero_bye", "absent")


def _codes(names: tuple[str, ...]) -> np.ndarray:
    return np.array([GAME_TYPE[n] for n in names], dtype=np.int8)


def type_table(names: tuple[str, ...]) -> np.ndarray:
    """A lookup table over game type codes: True for the types in ``names``."""
    table = np.zeros(len(GAME_TYPE), dtype=bool)
    table[_codes(names)] = True
    return table


@dataclass(frozen=True)
class Roster:
    """The per-tournament and per-player arrays of a batch: everything without a rounds axis."""

    # per tournament
    t_ids: np.ndarray        # tournament id per tournament row
    n: np.ndarray            # rounds counted
    planned: np.ndarray      # planned rounds (FB's final round)
    W: np.ndarray            # points for a win, units
    D: np.ndarray            # points for a draw, units
    scale: np.ndarray
    round_robin: np.ndarray  # bool: pre-determined pairings (C.07 15.2)
    # per player
    tix: np.ndarray          # tournament row of each player
    start_no: np.ndarray
    rating: np.ndarray       # int64, 0 = unrated

    @property
    def players(self) -> int:
        return int(self.tix.shape[0])

    @cached_property
    def sizes(self) -> np.ndarray:
        """Players per tournament (int64; the players are in tournament order: tournament ``t``'s are the
        ``sizes[t]`` rows after those of the tournaments before it)."""
        out: np.ndarray = np.bincount(self.tix, minlength=len(self.t_ids))
        return out

    def per_player(self, per_tournament: np.ndarray) -> np.ndarray:
        """Broadcast a per-tournament array to players (a new array); one value in every tournament (points of a
        win, a draw, the scale: the usual batch) is filled in, not gathered."""
        if per_tournament.dtype.kind in "biu" and per_tournament.ndim == 1 and len(per_tournament) \
                and per_tournament.min() == per_tournament.max():
            return np.full(self.players, per_tournament[0], dtype=per_tournament.dtype)
        return per_tournament[self.tix]


@dataclass(frozen=True)
class Dense(Roster):
    """Players x rounds arrays for a batch (rounds beyond an event's counted rounds are masked out)."""

    # per player x round
    opp: np.ndarray          # int32 global row of the opponent, NO_OPP when none
    pts: np.ndarray          # int32 points awarded, units
    gtype: np.ndarray        # int8 GAME_TYPE code
    black: np.ndarray        # bool: had black
    outcome: np.ndarray      # int8 LOSS / DRAW / WIN of the round for the player
    counted: np.ndarray      # bool: round is within the event's counted rounds
    #: int64 score changes of 299 records by round (tbstats.model.adjust), None when there are none: they enter
    #: the score a player is ranked by (PTS), never the results tie-breaks read
    bonus: np.ndarray | None = None
    #: the cells outside the counted rounds are blank (no opponent, 0 points, ``absent``), as :func:`build_buckets`
    #: places games: masks of games and points need no ``counted`` then
    blank: bool = False

    @property
    def rounds(self) -> int:
        return int(self.opp.shape[1])

    @cached_property
    def all_counted(self) -> bool:
        """Every cell is a counted round (a bucket of one round count): masks by ``counted`` are no-ops."""
        return bool(self.counted.all())

    def release_gathers(self) -> None:
        """Drop the cached opponent-row index arrays (8 bytes a cell; rebuilt on demand)."""
        for name in ("opp_row", "forfeit_cells"):
            self.__dict__.pop(name, None)

    def in_counted(self, mask: np.ndarray) -> np.ndarray:
        """``mask`` restricted to the counted rounds."""
        return mask if self.all_counted else mask & self.counted

    def in_counted_blank(self, mask: np.ndarray) -> np.ndarray:
        """:meth:`in_counted` of a ``mask`` that is False on blank cells (no cell outside the counted rounds is
        set when the view is :attr:`blank`)."""
        return mask if self.blank else self.in_counted(mask)

    def is_type(self, names: tuple[str, ...]) -> np.ndarray:
        """Mask of counted player-rounds whose game type is one of ``names``."""
        return self.in_counted(lookup(type_table(names), self.gtype))

    @cached_property
    def played(self) -> np.ndarray:
        """Over-the-board games."""
        return self.in_counted_blank(self.gtype == GAME_TYPE["played"])

    @cached_property
    def has_opp(self) -> np.ndarray:
        """Rounds with a scheduled opponent (games and forfeits)."""
        return self.in_counted_blank(self.opp != NO_OPP)

    @cached_property
    def opp_row(self) -> np.ndarray:
        """The opponent's row, 0 where there is none (mask with ``has_opp``): safe for gathers (intp: numpy
        converts narrower index arrays before every gather)."""
        return np.maximum(self.opp, 0).astype(np.intp)

    @cached_property
    def forfeit_cells(self) -> tuple[np.ndarray, np.ndarray]:
        """Rows and columns of the rounds with a scheduled opponent not played over the board (forfeits: few)."""
        return cells(self.has_opp & ~self.played)

    def through(self, values: np.ndarray, pad: int | bool = 0, *, scheduled: bool = False) -> np.ndarray:
        """Per player-round, the opponent's entry of the per-player ``values`` in games played over the board
        (``scheduled``: in every round with a scheduled opponent), ``pad`` elsewhere: one compiled pass
        (:func:`tbstats.model.rows.opponents_values`)."""
        out = np.empty(self.opp.shape, dtype=values.dtype)
        opponents_values(loop_view(np.ascontiguousarray(values)), self.opp,
                         loop_view(self.has_opp if scheduled else self.played), int(pad), loop_view(out))
        return out

    def opponents_sum(self, values: np.ndarray) -> np.ndarray:
        """Per player, the sum of the per-player ``values`` (integers or bools) of the opponents of the games played
        over the board, int64: ``row_sum(self.through(values))`` in one compiled pass, without its players x rounds
        array (:func:`tbstats.model.rows.opponents_sums`)."""
        out = np.empty(self.players, dtype=np.int64)
        opponents_sums(loop_view(np.ascontiguousarray(values)), self.opp, loop_view(self.played), out)
        return out

    def sum_against(self, flag: np.ndarray, values: np.ndarray, *, scheduled: bool = False) -> np.ndarray:
        """Per player, the sum of its own players x rounds ``values`` in the games played over the board
        (``scheduled``: the rounds with a scheduled opponent) against an opponent whose per-player ``flag`` (bool)
        is set, int64: ``row_sum(values, self.through(flag, False, scheduled=scheduled))`` in one compiled pass
        (:func:`tbstats.model.rows.opponents_flagged_sums`)."""
        out = np.empty(self.players, dtype=np.int64)
        opponents_flagged_sums(loop_view(np.ascontiguousarray(flag, dtype=bool)), self.opp,
                               loop_view(self.has_opp if scheduled else self.played), loop_view(values), out)
        return out

    @cached_property
    def games(self) -> np.ndarray:
        """Each player's number of games played over the board (int64; read by ARO, TPR, AOB and others)."""
        out = row_sum(self.played)
        out.flags.writeable = False
        return out

    @cached_property
    def points(self) -> np.ndarray:
        """Points awarded in the counted rounds, 0 elsewhere."""
        return self.pts if self.all_counted or self.blank else np.where(self.counted, self.pts, 0)

    @cached_property
    def max_abs_points(self) -> int:
        """The largest points value of any cell, in absolute value (bounds for compact dtypes)."""
        return max(int(self.pts.max(initial=0)), -int(self.pts.min(initial=0)))

    @cached_property
    def score(self) -> np.ndarray:
        """Each player's score over the counted rounds, units (int64)."""
        return row_sum(self.points)

    @cached_property
    def adjusted_score(self) -> np.ndarray:
        """The score plus the 299 changes of the counted rounds: what the player is ranked by (PTS)."""
        return self.score if self.bonus is None else self.score + row_sum(self.bonus, self.counted)

    def with_counted_rounds(self, n: np.ndarray) -> Dense:
        """The same view with a different number of counted rounds per tournament (blank still where no round
        stops being counted)."""
        n = n.astype(np.int64)
        return replace(self, n=n, counted=rounds_below(n[self.tix], self.rounds),
                       blank=self.blank and bool((n >= self.n).all()))


@dataclass(frozen=True)
class Bucket:
    """The tournaments of a batch that count the same or close numbers of rounds, as their own dense view."""

    rows: np.ndarray         # the bucket's player rows in the batch (ascending)
    tournaments: np.ndarray  # the bucket's tournament rows in the batch (ascending)
    dense: Dense             # rows and tournaments renumbered from 0; ``opp`` points into the bucket


@dataclass(frozen=True)
class Buckets:
    """A batch's roster and its dense view as buckets of equal or close round counts."""

    roster: Roster
    parts: list[Bucket]
    #: rows of ``batch.players`` in the view's order, None when the table is in that order already
    player_order: np.ndarray | None = None

    def merge(self) -> Dense:
        """The one view of the whole batch, padded to its longest event (the bucket itself if only one)."""
        if len(self.parts) == 1 and len(self.parts[0].rows) == self.roster.players:
            return self.parts[0].dense
        ro = self.roster
        P = ro.players
        R = max((b.dense.rounds for b in self.parts), default=0)
        opp = np.full((P, R), NO_OPP, dtype=np.int32)
        pts = np.zeros((P, R), dtype=np.int32)
        gtype = np.full((P, R), GAME_TYPE["absent"], dtype=np.int8)
        black = np.zeros((P, R), dtype=bool)
        outcome = np.full((P, R), LOSS, dtype=np.int8)
        bonus = np.zeros((P, R), dtype=np.int64) if any(b.dense.bonus is not None for b in self.parts) else None
        for b in self.parts:
            d, w = b.dense, b.dense.rounds
            opp[b.rows, :w] = np.where(d.opp != NO_OPP, b.rows[d.opp_row], NO_OPP)
            pts[b.rows, :w] = d.pts
            gtype[b.rows, :w] = d.gtype
            black[b.rows, :w] = d.black
            outcome[b.rows, :w] = d.outcome
            if bonus is not None and d.bonus is not None:
                bonus[b.rows, :w] = d.bonus
        counted = rounds_below(ro.n[ro.tix], R)
        return Dense(**_fields(ro), opp=opp, pts=pts, gtype=gtype, black=black, outcome=outcome, counted=counted,
                     bonus=bonus, blank=all(b.dense.blank for b in self.parts))


def tournaments_by_id(batch: Batch) -> pl.DataFrame:
    """The tournaments table in the order of the ids: the table itself when it is (as the readers write it)."""
    t = batch.tournaments
    return t if t["tournament"].is_sorted() else t.sort("tournament")


def _fields(ro: Roster) -> dict[str, np.ndarray]:
    return {k: getattr(ro, k) for k in ("t_ids", "n", "planned", "W", "D", "scale", "round_robin", "tix",
                                        "start_no", "rating")}


def _is_sorted(major: np.ndarray, minor: np.ndarray) -> bool:
    """Whether rows are in strictly increasing (major, minor) order."""
    if len(major) < 2:
        return True
    step = major[1:] - major[:-1]
    return bool(((step > 0) | ((step == 0) & (minor[1:] > minor[:-1]))).all())


def players_in_order(players: pl.DataFrame, order: np.ndarray | None = None) -> pl.DataFrame:
    """The players table in the dense view's row order, (tournament, start number); sorted only if needed.

    ``order`` is :attr:`Buckets.player_order` when known.
    """
    if order is not None:
        return players[order]
    if _is_sorted(players["tournament"].to_numpy(), players["start_no"].to_numpy()):
        return players
    return players.sort("tournament", "start_no")


#: A round count joins the block of longer events above it when padding it to their width adds at most this
#: share of its cells (see :func:`width_groups`)
PAD_SHARE = 0.5
#: ... or when it has fewer players than this, whatever the padding
SMALL_BLOCK = 5_000


def width_groups(widths: np.ndarray, players: np.ndarray, *, pad_share: float | None = None,
                 small: int | None = None) -> np.ndarray:
    """The block of each round count (``widths`` ascending, ``players`` per round count), from 0: consecutive
    round counts share a block as wide as its longest one, their shorter events' rounds beyond their own masked
    (``counted``).

    Every block repeats the engine's fixed costs, hundreds of numpy calls whose Python side holds the GIL;
    every padded cell adds to its per-cell costs. Going down from the longest round count, a shorter one
    joins the current block while padding it to the block's width adds at most ``pad_share`` of its cells
    (default :data:`PAD_SHARE`), or while it has fewer than ``small`` players (:data:`SMALL_BLOCK`). On the
    10k mix (rounds 3 to 14) in the command line's batches of 2,000 events this makes 3 blocks of 12, and
    the engine was 1.1x (one thread) and 1.5x (two) faster (benchmarks/RESULTS.md, 2026-12-02 11:20-12:10).
    """
    pad_share = PAD_SHARE if pad_share is None else pad_share
    small = SMALL_BLOCK if small is None else small
    group = np.zeros(len(widths), dtype=np.int64)
    top, blocks = 0, 0
    for i in range(len(widths) - 1, -1, -1):
        w = max(int(widths[i]), 1)
        if not blocks or (top - w > pad_share * w and players[i] >= small):
            blocks, top = blocks + 1, w
        group[i] = blocks
    return blocks - group


def build_buckets(batch: Batch, *, force_type: str | None = None, after_round: int | None = None) -> Buckets:
    """Build the roster and the bucketed dense view of ``batch``.

    ``force_type`` ('swiss' or 'round_robin') overrides the detected event type; ``after_round`` counts
    the rounds up to that one (standings part-way through an event, rules.md 4.8), instead of the rounds
    the reader found complete.
    """
    t = tournaments_by_id(batch)
    t_ids = t["tournament"].to_numpy()
    T = len(t_ids)
    p = batch.players
    p_t, start_no = p["tournament"].to_numpy(), p["start_no"].to_numpy().astype(np.int64)
    rating = integers(p["rating"], np.int64)   # (unrated: 0)
    player_order = None
    if not _is_sorted(p_t, start_no):
        player_order = np.argsort((p_t.astype(np.int64) << 32) | start_no, kind="stable")
        p_t, start_no, rating = p_t[player_order], start_no[player_order], rating[player_order]
    tix = rows_of(p_t, t_ids).astype(np.int64)
    P = len(tix)
    n = t["rounds_played"].to_numpy().astype(np.int64)
    g = batch.games
    g_tix: np.ndarray | None = None
    if after_round is not None:
        g_round = g["round"].to_numpy()
        g_tix = rows_of(g["tournament"].to_numpy(), t_ids)
        in_file = np.zeros(T, dtype=np.int64)
        if len(g_tix):
            np.maximum.at(in_file, g_tix, g_round.astype(np.int64))   # (one type: ufunc.at casts cell by cell)
        n = np.minimum(in_file, after_round)
    W = t["pts_win"].to_numpy().astype(np.int64)
    D = t["pts_draw"].to_numpy().astype(np.int64)
    if force_type is None:
        rr = is_value(t["event_type"], "round_robin")
    else:
        rr = np.full(T, force_type == "round_robin")
    roster = Roster(t_ids=t_ids, n=n, planned=t["rounds"].to_numpy().astype(np.int64), W=W, D=D,
                    scale=t["scale"].to_numpy().astype(np.int64), round_robin=rr, tix=tix, start_no=start_no,
                    rating=rating)
    count = roster.sizes   # (counted once: the engine's ranking reads the roster's too)

    # buckets by counted rounds, each a block of one flat buffer per array; close round counts share a block
    first = np.zeros(T, dtype=np.int64)
    first[1:] = np.cumsum(count)[:-1]
    counts_n, n_bucket = np.unique(n, return_inverse=True)
    n_bucket = n_bucket.reshape(-1)
    # (players per round count, by tournament: float sums of counts, exact)
    group = width_groups(counts_n, np.bincount(n_bucket, weights=count, minlength=len(counts_n)).astype(np.int64))
    widths = np.maximum.reduceat(counts_n, np.flatnonzero(np.diff(group, prepend=-1))) if len(counts_n) else counts_n
    t_bucket = group[n_bucket].astype(np.int16 if len(widths) < 2 ** 15 else np.int64)  # radix sorts
    R_of = np.maximum(widths, 1)
    # a bucket's players are its tournaments' players, tournament after tournament in order: the layout is
    # worked out per tournament, and a player's row and cells follow from its place in its tournament
    t_order = np.argsort(t_bucket, kind="stable") if len(widths) > 1 else np.arange(T)
    t_first = np.zeros(len(widths) + 1, dtype=np.int64)
    np.cumsum(np.bincount(t_bucket, minlength=len(widths)), out=t_first[1:])
    before = np.zeros(T + 1, dtype=np.int64)                # players of the tournaments before, in that order
    np.cumsum(count[t_order], out=before[1:])
    b_first = before[t_first]                               # each bucket's players before it
    offset = np.zeros(len(widths) + 1, dtype=np.int64)      # each bucket's first cell in the flat buffers
    np.cumsum(np.diff(b_first) * R_of, out=offset[1:])
    stride = R_of[t_bucket].astype(np.int64)                # cells per player
    first_local = np.empty(T, dtype=np.int64)               # each tournament's first player's row in its bucket
    first_local[t_order] = before[:-1] - b_first[t_bucket[t_order]]
    first_cell = offset[t_bucket] + first_local * stride    # and its first cell
    trash = int(offset[-1])                                 # one spare cell for games beyond the counted rounds

    def row_cell(rows: np.ndarray) -> np.ndarray:
        """The players' (rows) first cells."""
        t = tix[rows]
        out: np.ndarray = first_cell[t] + (rows - first[t]) * stride[t]
        return out

    # each game in its player's cell of its round, compiled (tbstats.model.loops): the games as runs of one
    # tournament's rows, players and opponents numbered from 1 within their tournament
    if g_tix is None:
        per_game = PerGame(g["tournament"], t_ids)
        run_t, run_len = per_game.runs()
    else:
        run_t, run_len = runs_of(g_tix)
    last_no = np.where(count > 0, start_no[np.maximum(first + count - 1, 0)] if P else 0, 0)
    numbers = None
    if not (last_no == count).all():   # start numbers other than 1..N: their positions among the event's
        g_of = np.repeat(run_t, run_len)
        numbers = (_positions(_column(g["player"], np.int32), g_of, tix, start_no, first),
                   _positions(integers(g["opponent"], np.int32), g_of, tix, start_no, first))   # (none: 0)
    size = trash + 1
    opp = np.full(size, NO_OPP, dtype=np.int32)
    pts = np.zeros(size, dtype=np.int32)
    gtype = np.full(size, GAME_TYPE["absent"], dtype=np.int8)   # a round without a row is a round not paired
    outcome = np.full(size, LOSS, dtype=np.int8)
    black = np.zeros(size, dtype=bool)
    place(g, run_t, run_len, numbers, (first_cell, stride, count, first_local, n, W, D),
          (opp, pts, gtype, outcome, black.view(np.uint8)))
    bonus = bonus_cells(batch, t_ids, tix, start_no, row_cell, n, trash, (pts, gtype, outcome))
    parts = []
    for b, width in enumerate(widths):
        b_t = t_order[t_first[b]:t_first[b + 1]]
        b_tix = np.repeat(np.arange(len(b_t)), count[b_t])   # each of its players' tournament, in the bucket
        b_rows = np.arange(P) if len(widths) == 1 else np.arange(len(b_tix)) + (first - first_local)[b_t][b_tix]
        R = int(R_of[b])
        lo, hi = int(offset[b]), int(offset[b + 1])

        def grid(values: np.ndarray, lo: int = lo, hi: int = hi, R: int = R) -> np.ndarray:
            return values[lo:hi].reshape(-1, R)

        b_roster = Roster(t_ids=t_ids[b_t], n=n[b_t], planned=roster.planned[b_t], W=W[b_t], D=D[b_t],
                          scale=roster.scale[b_t], round_robin=rr[b_t], tix=b_tix,
                          start_no=start_no[b_rows], rating=rating[b_rows])
        b_n = n[b_t]
        counted = np.broadcast_to(np.arange(R)[None, :] < width, (len(b_rows), R)) if (b_n == width).all() else \
            rounds_below(b_n[b_roster.tix], R)
        dense = Dense(**_fields(b_roster), opp=grid(opp), pts=grid(pts), gtype=grid(gtype), black=grid(black),
                      outcome=grid(outcome), counted=counted, bonus=None if bonus is None else grid(bonus), blank=True)
        parts.append(Bucket(rows=b_rows, tournaments=b_t, dense=dense))
    return Buckets(roster, parts, player_order)


def _column(column: pl.Series, dtype: type) -> np.ndarray:
    """A games column as a contiguous numpy array of ``dtype`` (the model's own: no copy beyond polars')."""
    return np.ascontiguousarray(column.to_numpy(), dtype=dtype)


def _positions(numbers: np.ndarray, g_tix: np.ndarray, tix: np.ndarray, start_no: np.ndarray,
               first: np.ndarray) -> np.ndarray:
    """Each game's player (or opponent) start number as its position among its event's start numbers, from 1;
    0 when it is none of them."""
    rows, found = player_rows(tix, start_no, g_tix, numbers)
    return np.where(found & (numbers > 0), rows - first[g_tix] + 1, 0).astype(np.int32)


def build_dense(batch: Batch, *, force_type: str | None = None, after_round: int | None = None) -> Dense:
    """The dense view of ``batch`` in one block, padded to its longest event (see :func:`build_buckets`)."""
    return build_buckets(batch, force_type=force_type, after_round=after_round).merge()
