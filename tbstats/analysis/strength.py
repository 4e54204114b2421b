"""Strength proxies for ``tbstats evaluate``: the rating, a players column, or a fit on the other events.

``archive``: a Bradley-Terry fit (the Elo model: expected score ``1 / (1 + 10^(-(r_i - r_j) / 400))``, draws
half a win) on every game played over the board between two players with a FIDE id, over the whole
archive; players are identified by FIDE id across events. Each strength has a normal prior ``N(0, 400²)``
(so that a player with only wins gets a finite strength) and the fit is the posterior's mode, found by
Newton's method on all players at once (each step solved by conjugate gradients). Leave-one-event-out: the
strength used for a player in an event is refit from his games in the *other* events only (again with the
prior), his opponents keeping their strengths of the whole fit, except that an opponent who also played in
that event is taken at his own strength without it (a second refit pass; the event still reaches the others
only through their other opponents). A player is covered when he has a FIDE id and at least one such game in
another event; the others are left out like unrated players. The scale is relative (Elo points about 0): only
the order counts here.

The refit of a player in each of his events would read all his games once an event (a player of 100 events
with new opponents in each: 100 x 900 games, per Newton step and pass). Each player is refit from one Chebyshev
series of the sum of his expected scores over all his games (:mod:`tbstats.analysis.bradley_terry`, made once,
exact to rounding about his whole-fit strength): each refit then reads only the games of the event left out, and
in the second pass his games against opponents who also played in it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, cast

import numpy as np
import polars as pl

from tbstats.analysis import bradley_terry
from tbstats.errors import TbstatsError
from tbstats.model.batch import Batch
from tbstats.model.games import OPTIONAL, PLAYER_SCHEMA

_GAMES_SCHEMA: Final = {"tournament": pl.Int64, "fide": pl.Int64, "opp": pl.Int64, "score": pl.Float64}
_PARTICIPANT_SCHEMA: Final = {"tournament": pl.Int64, "start_no": pl.Int32, "fide": pl.Int64}
PROXIES: Final = ("rating", "archive")


def proxy(batch: Batch, name: str, fitted: pl.DataFrame | None = None) -> np.ndarray:
    """Per player in (tournament, start_no) order: the proxy's strength, NaN where unknown.

    ``rating``: the rating in the event (null = unrated); ``archive``: the leave-one-event-out fit
    (``fitted``, from :func:`fit`); any other name: that numeric column of the players table.
    """
    # the keys and the proxy's column only: sorting the whole table carries its strings through the sort
    # (44 MB for 8,000 events of 25 players, against 1 MB)
    wanted = ["tournament", "start_no", *([name] if name in batch.players.columns else [])]
    players = batch.players.select(list(dict.fromkeys(wanted))).sort("tournament", "start_no")
    if name == "archive":
        if fitted is None:
            raise TbstatsError("the archive strength needs a fit of the whole archive first")
        column = players.select("tournament", "start_no").join(
            _rows_for(fitted, players["tournament"]), on=["tournament", "start_no"], how="left",
            maintain_order="left")["strength"]
    else:
        if name not in players.columns:
            numeric = [c for c, t in {**PLAYER_SCHEMA, **OPTIONAL["players"]}.items()
                       if t.is_numeric() and c not in ("tournament", "start_no", "line")]
            raise TbstatsError(f"--strength {name}: the players table has no such column (expected rating, "
                               f"archive or a numeric players column: {', '.join(numeric)})")
        column = players[name]
        if not (column.dtype.is_numeric() or column.dtype == pl.Null):
            raise TbstatsError(f"--strength {name}: column {name} is not numeric ({column.dtype})")
    return column.cast(pl.Float64).fill_null(math.nan).to_numpy().astype(np.float64)


def _rows_for(fitted: pl.DataFrame, tournaments: pl.Series) -> pl.DataFrame:
    """The rows of a fit's table whose tournaments lie between the least and the greatest of ``tournaments``,
    when the table is in tournament order (as :func:`fit` makes it): a batch joins these, not the whole
    archive's (a hash table of 2.7 million players built for each of the 100k mix's 50 batches took 6 s)."""
    ids = fitted["tournament"]
    if not len(tournaments):
        return fitted.clear()
    if not ids.is_sorted():
        return fitted
    least, greatest = cast(int, tournaments.min()), cast(int, tournaments.max())
    lo, hi = ids.search_sorted(least, "left"), ids.search_sorted(greatest, "right")
    return fitted.slice(lo, hi - lo)


def games_of(batch: Batch) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The over-the-board games between two players with a FIDE id (one row per side), and the participants."""
    ids = batch.players.select("tournament", "start_no",
                               pl.when(pl.col("fide_id") > 0).then(pl.col("fide_id")).alias("fide"))
    played = batch.games.filter(pl.col("played") & pl.col("opponent").is_not_null()).select(
        "tournament", pl.col("player").alias("start_no"), "opponent",
        pl.col("result").replace_strict({"1": 1.0, "W": 1.0, "=": 0.5, "D": 0.5}, default=0.0,
                                        return_dtype=pl.Float64).alias("score"))
    games = played.join(ids, on=["tournament", "start_no"], how="inner").join(
        ids.rename({"start_no": "opponent", "fide": "opp"}), on=["tournament", "opponent"], how="inner").filter(
        pl.col("fide").is_not_null() & pl.col("opp").is_not_null()).select(list(_GAMES_SCHEMA))
    return games.cast(_GAMES_SCHEMA), ids.cast(_PARTICIPANT_SCHEMA)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Fit:
    """A leave-one-event-out fit: the strength per (tournament, start_no), and what it rests on."""

    table: pl.DataFrame      # tournament, start_no, strength (null when not covered)
    ratings: pl.DataFrame    # fide, strength: the fit of the whole archive
    games: int               # games used (each once)
    fide_ids: int            # distinct FIDE ids with at least one game
    participants: int        # players of all events
    covered: int             # players with a strength

    def describe(self) -> str:
        """One line for stderr: how the fit was made and how many players it covers."""
        return (f"archive strength: Bradley-Terry (Elo) fit, leave-one-event-out, on {self.games} games among "
                f"{self.fide_ids} FIDE ids; covers {self.covered} of {self.participants} players")


@dataclass(frozen=True)
class Sides:
    """The game sides of :func:`games_of` with their FIDE ids numbered: what the fit reads of them (the table
    itself can go before the fit: its id columns are half of it, 256 MB on the 100k mix)."""

    ids: pl.Series           # the FIDE ids with a game side of their own, sorted (a side's number: its place)
    i: np.ndarray            # each side's player, numbered
    j: np.ndarray            # his opponent, numbered
    s: np.ndarray            # his score (1, 0.5, 0)
    event: np.ndarray        # the tournament

    @staticmethod
    def of(games: pl.DataFrame) -> Sides:
        # each FIDE id numbered by a hash join (a sort of every side, and a binary search of every opponent, took
        # 7 s on the 100k mix's 16 million sides)
        ids = games["fide"].unique().sort()
        i = _numbered(games["fide"], ids).to_numpy()
        opp = _numbered(games["opp"], ids)
        if opp.null_count():
            raise TbstatsError("the archive fit needs both sides of every game (an opponent has no side of his own)")
        return Sides(ids, i, opp.to_numpy(), games["score"].to_numpy(), games["tournament"].to_numpy())


def _numbered(column: pl.Series, ids: pl.Series) -> pl.Series:
    """Each FIDE id's number in ``ids`` (null where it has no game side of its own)."""
    index = pl.DataFrame({"fide": ids, "_k": np.arange(len(ids), dtype=np.int64)})
    return column.alias("fide").to_frame().join(index, on="fide", how="left", maintain_order="left")["_k"]


def fit(games: pl.DataFrame | Sides, participants: pl.DataFrame, *, iterations: int = 100, tol: float = 1e-4,
        passes: int = 2, step: Callable[[], None] | None = None, workers: int = 1) -> Fit:
    """Fit the archive's strengths, then refit each participant's without his event (module docstring), from
    the game sides of :func:`games_of` (or their :class:`Sides`, so that the caller need not keep the table).

    The first refit pass holds every opponent at his whole-fit strength; each further pass gives an opponent
    who also played in the event left out his strength without it, from the pass before. ``step`` is called
    after each Newton step of the whole fit and each run of players refit (a progress bar's tick). Its passes over
    the games run on ``workers`` threads (the strengths are those of one, to the bit).
    """
    numbered = games if isinstance(games, Sides) else Sides.of(games)
    ids, i, j, s, event = numbered.ids, numbered.i, numbered.j, numbered.s, numbered.event
    del games, numbered   # (the caller's table, when it keeps none)
    sides = bradley_terry.sides_by_player(i, event, len(ids))
    order = sides[0]
    groups = bradley_terry.Groups.of(j, s, sides)   # (for the whole fit and the refits)
    r = bradley_terry.whole_fit(i, j, s, event, len(ids), iterations, tol, sides, groups, step, workers)
    p_number = _numbered(participants["fide"], ids)
    p_event = participants["tournament"].to_numpy()
    known = p_number.is_not_null().to_numpy()
    row = p_number.fill_null(0).to_numpy()
    out = np.where(known, r[row], np.nan) if len(ids) else np.full(len(row), np.nan)   # no game: none known
    # players who played in their event: refit without it
    pairs = bradley_terry.played(i, event, order)
    played = pl.DataFrame({"_k": pairs[1], "tournament": pairs[2]}).with_row_index("_pair")
    refit = pl.DataFrame({"_k": p_number, "tournament": participants["tournament"]}).with_row_index("_row").join(
        played, on=["_k", "tournament"], how="inner", maintain_order="left")
    rows, pair = (refit[c].to_numpy().astype(np.int64) for c in ("_row", "_pair"))
    # a player of one event has no game outside it: no strength without it (refit: those of several events)
    alone = np.bincount(pairs[1], minlength=len(ids))[row[rows]] < 2
    out[rows[alone]] = np.nan
    rows, pair = rows[~alone], pair[~alone]
    out[rows] = bradley_terry.leave_one_out(r, j, s, sides, groups, pairs, pair, row[rows], p_event[rows], passes,
                                            step, workers)
    strength = pl.Series("strength", out).fill_nan(None)
    table = participants.select("tournament", "start_no").with_columns(strength)
    # in tournament order, and known to be (:func:`proxy` takes a batch's rows by a slice)
    table = table.with_columns(pl.col("tournament").set_sorted()) if table["tournament"].is_sorted() else \
        table.sort("tournament", "start_no", maintain_order=True)
    ratings = pl.DataFrame({"fide": ids, "strength": r}, schema={"fide": pl.Int64, "strength": pl.Float64})
    return Fit(table, ratings, len(i) // 2, len(ids), participants.height, int(strength.is_not_null().sum()))


