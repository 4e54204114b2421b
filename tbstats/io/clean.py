"""A fast proof that a model's players and games are clean, so that the model's checker builds no ledger.

The checker (:mod:`tbstats.io.check`) states each rule as a polars expression and lists the rows that break
it. On a clean table that costs joins, hashing and a dozen working columns per row. The same rules hold, and
are much cheaper to prove, in the layout ``tbstats ingest`` (and the TRF reader) writes: games sorted by
tournament, player and round, each tournament a full grid of its players 1..n by its rounds 1..R (unplayed
rounds are explicit rows). Then an opponent's row of a round is found by arithmetic, not by a join, and the
whole proof is a few numpy passes.

A proof only ever answers "clean" or "not proven": any doubt (another layout, a null, an id out of range, a
failing row) is "not proven", and the checker then runs on those rows and writes the ledger as it always
has. So the ledger is the checker's in every case; this module only skips its work when it would find
nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import numpy as np
import polars as pl
import pyarrow as pa

from tbstats.model.games import GAME_TYPE, SCORING_KINDS

#: Start numbers below ``1 << _PLAYER_BITS`` and tournament ids below :data:`_ID_LIMIT` are packed into one
#: Int64 key.
_PLAYER_BITS: Final = 20
_ID_LIMIT: Final = 1 << (62 - _PLAYER_BITS)
_PTS: Final = tuple(f"pts_{kind}" for kind in SCORING_KINDS)   # the columns of a round's points
_ZERO: Final = len(_PTS)   # the column of a round worth nothing (pending)


@dataclass(frozen=True)
class Rules:
    """The checker's tables of result codes, as numpy lookups (built by :mod:`tbstats.io.check`).

    ``byte_code`` maps the byte of a one-byte result to its code (an empty one has ``no_code``); codes index
    ``allowed`` and ``kind`` through ``game_type * 64 + code``; ``complement`` maps a played result's code to
    its partner's, ``partner`` a game type to its partner's (its own for unpaired types; ``paired`` tells
    which are); ``kind`` is the ``pts_*`` column a round is worth.
    """

    byte_code: np.ndarray
    no_code: int
    allowed: np.ndarray
    complement: np.ndarray
    partner: np.ndarray
    paired: np.ndarray
    kind: np.ndarray
    codes: Callable[[pl.Series], pl.Series]   # the checker's coding, for results of more than one byte


@dataclass(frozen=True)
class Context:
    """What a proof over games chunks needs from the tournaments and players tables, built once per model."""

    ids: np.ndarray | None        # sorted tournament ids of the events (None: not provable)
    rounds: np.ndarray
    points: np.ndarray            # (events, len(_PTS) + 1) units per kind of round, last column 0
    players: np.ndarray           # sorted packed keys (tournament, start number) of the players


def context(p: pl.DataFrame, t: pl.DataFrame) -> Context:
    """The events (when their ids, rounds and points are all set and the ids unique) and the players' keys."""
    keys = _player_keys(p)
    tid = t["tournament"]
    columns = [t[c] for c in ("rounds", *_PTS)]
    if tid.null_count() or any(c.null_count() for c in columns):
        return Context(None, np.zeros(0), np.zeros((0, 0)), keys)
    ids = tid.to_numpy()
    order = np.argsort(ids, kind="stable")
    ids = ids[order]
    if len(ids) > 1 and not (ids[1:] > ids[:-1]).all():
        return Context(None, np.zeros(0), np.zeros((0, 0)), keys)
    rounds = columns[0].to_numpy()[order].astype(np.int64)
    points = np.zeros((len(ids), _ZERO + 1), dtype=np.int64)
    for k, c in enumerate(columns[1:]):
        points[:, k] = c.to_numpy()[order]
    return Context(ids, rounds, points, keys)


def _player_keys(p: pl.DataFrame) -> np.ndarray:
    """Sorted keys ``tournament << 20 | start_no`` of the players whose ids fit (others can match no game)."""
    both = p.select("tournament", "start_no")
    both = both.drop_nulls() if both["tournament"].null_count() or both["start_no"].null_count() else both
    tid, sno = both["tournament"].to_numpy().astype(np.int64), both["start_no"].to_numpy().astype(np.int64)
    fits = (tid >= 0) & (tid < _ID_LIMIT) & (sno >= 0) & (sno < 1 << _PLAYER_BITS)
    keys = (tid[fits] << _PLAYER_BITS) | sno[fits]
    return keys if len(keys) < 2 or (keys[1:] >= keys[:-1]).all() else np.sort(keys)


def run_starts(ids: pl.Series) -> tuple[np.ndarray, bool]:
    """The rows where a new tournament starts (the first excepted) and whether the ids only go up there, read
    chunk by chunk of the column (no copy of it)."""
    starts, ordered, offset, last = [], True, 0, None
    for chunk in ids.get_chunks():
        values = chunk.to_numpy()
        if not len(values):
            continue
        inner = np.flatnonzero(values[1:] != values[:-1]) + 1
        ordered = ordered and bool((values[inner] > values[inner - 1]).all())
        if last is not None and values[0] != last:
            starts.append(np.array([offset]))
            ordered = ordered and bool(values[0] > last)
        starts.append(inner + offset)
        offset, last = offset + len(values), values[-1]
    return (np.concatenate(starts) if starts else np.zeros(0, dtype=np.int64)), ordered


def players_clean(p: pl.DataFrame, t: pl.DataFrame) -> bool:
    """Whether the players table passes every players check: keys set, unique and of known events, start
    numbers >= 1, ratings >= 0, declared ranks >= 1 (proven when the players are in key order)."""
    if not p.height:
        return True
    if p["tournament"].null_count() or p["start_no"].null_count():
        return False
    tid, sno = p["tournament"].to_numpy(), p["start_no"].to_numpy()
    if (sno < 1).any() or (sno >= 1 << _PLAYER_BITS).any() or (tid < 0).any() or (tid >= _ID_LIMIT).any():
        return False
    keys = (tid.astype(np.int64) << _PLAYER_BITS) | sno
    if not (keys[1:] > keys[:-1]).all():
        return False
    rating, rank = p["rating"].min(), p["declared_rank"].min()
    if (rating is not None and rating < 0) or (rank is not None and rank < 1):  # type: ignore[operator]
        return False
    events = t["tournament"].drop_nulls().to_numpy()
    events = events if len(events) < 2 or (events[1:] >= events[:-1]).all() else np.sort(events)
    firsts = tid[np.r_[0, np.flatnonzero(tid[1:] != tid[:-1]) + 1]]
    at = np.minimum(np.searchsorted(events, firsts), len(events) - 1)
    return bool(len(events) and (events[at] == firsts).all())


def _values(column: pl.Series) -> tuple[np.ndarray, np.ndarray | None]:
    """An integer column's values (whatever a null slot holds) and its validity (None: no nulls), no copy."""
    arrow = column.to_arrow()
    if isinstance(arrow, pa.ChunkedArray):
        arrow = arrow.combine_chunks()
    values = np.frombuffer(arrow.buffers()[1], dtype=arrow.type.to_pandas_dtype())
    values = values[arrow.offset:arrow.offset + len(arrow)]
    return values, column.is_not_null().to_numpy() if arrow.null_count else None


def result_codes(results: pl.Series, rules: Rules) -> np.ndarray:
    """The checker's code of each result, read from the strings' inline bytes (the checker's own coding
    when some result is longer than one byte or the strings are not in view layout)."""
    arrow = results.to_arrow(compat_level=pl.CompatLevel.newest())
    if isinstance(arrow, pa.ChunkedArray):
        arrow = arrow.combine_chunks()
    if arrow.type != pa.string_view():
        return rules.codes(results).to_numpy()
    views = np.frombuffer(arrow.buffers()[1], dtype=np.uint8).reshape(-1, 16)[arrow.offset:arrow.offset + len(arrow)]
    length = views[:, :4].view(np.uint32)[:, 0]
    if (length > 1).any():
        return rules.codes(results).to_numpy()
    codes = np.take(rules.byte_code, views[:, 4])   # a view holds a string of up to 12 bytes inline
    codes[length == 0] = rules.no_code
    if arrow.null_count:
        codes[results.is_null().to_numpy()] = rules.no_code
    return codes


def games_clean(g: pl.DataFrame, ctx: Context, rules: Rules) -> bool:
    """Whether a chunk of whole tournaments' games passes every games check (see the module's docstring)."""
    n = g.height
    if not n:
        return True
    if ctx.ids is None or any(g[c].null_count() for c in ("tournament", "player", "round", "game_type",
                                                           "played", "points")):
        return False
    tid = g["tournament"].to_numpy()
    starts = np.r_[0, np.flatnonzero(tid[1:] != tid[:-1]) + 1]
    lengths = np.diff(np.r_[starts, n])
    ends = starts + lengths - 1
    events = tid[starts]
    if (len(events) > 1 and not (events[1:] > events[:-1]).all()) or events[0] < 0 or events[-1] >= _ID_LIMIT:
        return False   # a tournament's games are not together (or not in id order)
    ev = np.minimum(np.searchsorted(ctx.ids, events), len(ctx.ids) - 1)
    if not len(ctx.ids) or not (ctx.ids[ev] == events).all():
        return False
    rnd, player = g["round"].to_numpy(), g["player"].to_numpy()
    rounds = np.maximum.reduceat(rnd, starts)
    if (rounds < 1).any() or (rounds > ctx.rounds[ev]).any():
        return False
    if rnd.min() < 1 or player.min() < 1 or player.max() >= 1 << _PLAYER_BITS or not (rnd[ends] == rounds).all():
        return False
    run = np.repeat(np.arange(len(starts), dtype=np.int32), lengths)
    width = np.take(rounds, run)   # the rounds R of each row's tournament
    # each tournament a grid: its row of player p in round r (1 <= r <= R) is (p - 1) * R + r - 1, and it
    # ends on a round R (so its last player has every round)
    first_round = np.take((starts - 1).astype(np.int32), run) + rnd   # where this round of player 1 is
    if not ((player - 1) * width + first_round == np.arange(n, dtype=np.int32)).all():
        return False
    size = player[ends]   # the players of each tournament: 1..size
    firsts = np.flatnonzero(rnd == 1)
    keys = (tid[firsts].astype(np.int64) << _PLAYER_BITS) | player[firsts]
    if not _all_in(keys, ctx.players):
        return False   # a game's player is not in the players table
    gt = g["game_type"].to_physical().to_numpy()
    if not (g["played"].to_numpy() == (gt == GAME_TYPE["played"])).all():
        return False
    opp, valid = _values(g["opponent"])
    has = np.ones(n, dtype=bool) if valid is None else valid
    if not (has == np.take(rules.paired, gt)).all():
        return False   # an opponent exactly for the paired game types
    codes = result_codes(g["result"], rules)
    rule = gt.astype(np.int32) * 64 + codes
    if not np.take(rules.allowed, rule).all():
        return False
    base = np.take((ev * ctx.points.shape[1]).astype(np.int32), run)
    if not (g["points"].to_numpy() == np.take(ctx.points, base + np.take(rules.kind, rule))).all():
        return False
    opp = np.where(has, opp, player)   # an unpaired row stands for itself below
    if (opp < 1).any() or (opp > np.take(size, run)).any() or np.count_nonzero(opp == player) != n - has.sum():
        return False   # an opponent out of the event, or a player paired with themself
    back = (opp - 1) * width + first_round   # the opponent's row of that round
    if not ((np.take(opp, back) == player).all() and (np.take(gt, back) == np.take(rules.partner, gt)).all()):
        return False   # an opponent's row does not point back, or has not the partner game type
    return bool(((gt != GAME_TYPE["played"]) | (np.take(codes, back) == np.take(rules.complement, codes))).all())


def _all_in(keys: np.ndarray, known: np.ndarray) -> bool:
    """Whether every one of the sorted ``keys`` is among the sorted ``known`` (first tried as one run of it)."""
    if not len(keys):
        return True
    lo = int(np.searchsorted(known, keys[0]))
    if lo + len(keys) <= len(known) and (known[lo:lo + len(keys)] == keys).all():
        return True
    at = np.minimum(np.searchsorted(known, keys), max(len(known) - 1, 0))
    return bool(len(known) and (known[at] == keys).all())
