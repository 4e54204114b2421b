"""Each event's fingerprint: a 64-bit number computed from what was played, the same however the event reaches
the engine.

The drawing of lots (``LOTS``, ``--lots SEED``) is keyed on it, so that one seed gives one draw for an event
whether it was read from its TRF file, from a model that ``tbstats ingest`` wrote, from another directory or under
another name, alone or in any batch, in any order of rows. What it is made of: the event's rounds and start date;
each player's start number, rating and FIDE id; each game row's player, opponent, round, points, game type and
colour. Names and other text are left out. Two events alike in all of that (a copy of one file) draw alike;
an event changed in any one of those fields draws afresh.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from tbstats.model.batch import Batch
from tbstats.model.columns import PerGame, integers, rows_of
from tbstats.model.dense import tournaments_by_id
from tbstats.model.loops import game_hash_sums

#: a constant for each part (odd: the first hexadecimal digits of the fractions of pi and e)
_PLAYERS, _GAMES = np.uint64(0x243F6A8885A308D3), np.uint64(0xB7E151628AED2A6B)


def event_keys(batch: Batch) -> np.ndarray:
    """Each tournament's fingerprint (uint64), in the order of the tournament ids."""
    t = tournaments_by_id(batch)
    t_ids = t["tournament"].to_numpy()
    g = batch.games
    run_t, run_len = PerGame(g["tournament"], t_ids).runs()
    games = np.zeros(len(t_ids), dtype=np.uint64)
    game_hash_sums(run_t, run_len, _own(g["player"], np.int32), integers(g["opponent"], np.int32),
                   _own(g["round"], np.int16), _own(g["points"], np.int32),
                   integers(g["game_type"], np.uint8), integers(g["colour"], np.uint8, fill=2), games)
    p = batch.players
    with np.errstate(over="ignore"):
        each = mix64(mix64(integers(p["start_no"], np.uint64) | (integers(p["rating"], np.uint64) << np.uint64(32)))
                    + integers(p["fide_id"], np.uint64))
        players = np.zeros(len(t_ids), dtype=np.uint64)
        np.add.at(players, rows_of(p["tournament"].to_numpy(), t_ids), each)
        head = integers(t["rounds"], np.uint64) | (integers(t["start_date"].to_physical().cast(pl.Int64), np.uint64)
                                                   << np.uint64(16))
        return mix64(mix64(mix64(head) + players * _PLAYERS) + games * _GAMES)


def _own(column: pl.Series, dtype: type) -> np.ndarray:
    """A column without nulls (the model's player, round and points) as a contiguous array: polars' own buffer
    when it is of ``dtype`` and in one chunk."""
    return np.ascontiguousarray(column.to_numpy(), dtype=dtype)


def mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, element by element (uint64, wrapping; ``x`` is overwritten): every bit of a
    result depends on every bit of its input."""
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x
