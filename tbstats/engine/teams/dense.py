"""Teams x rounds views of a :class:`~tbstats.model.teams.batch.TeamBatch`, one per reference score (MP, GP).

Each view is an ordinary :class:`~tbstats.model.dense.Dense` whose participants are teams: ``pts`` holds the match
points (or game points) awarded, ``opp`` the opponent team's row, ``gtype`` the team match type as the game
type it behaves as in C.07 16.2, and ``W``/``D`` the points of a match win/draw in that unit (for GP: a win /
draw on every board). The unplayed-round stage and every individual kernel then apply to teams unchanged
(rules.md 9.2-9.3: "points" read once as MP and once as GP, "participant" as team).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import polars as pl

from tbstats.model.adjust import grid as grid_of
from tbstats.model.adjust import team_deltas
from tbstats.model.batch import Batch
from tbstats.model.dense import DRAW, LOSS, NO_OPP, WIN, Dense
from tbstats.model.games import GAME_TYPE
from tbstats.model.teams.batch import TeamBatch
from tbstats.model.teams.matches import AS_GAME_TYPE, MATCH_TYPES

Reference = Literal["MP", "GP"]
_TYPE_CODE = np.array([GAME_TYPE[AS_GAME_TYPE[m]] for m in MATCH_TYPES], dtype=np.int8)
PLAYED, PAB, FORFEIT_WIN, FULL_BYE, HALF_BYE = (MATCH_TYPES.index(m) for m in
                                                ("played", "pab", "forfeit_win", "full_bye", "half_bye"))


@dataclass(frozen=True)
class TeamDense:
    """The MP and GP views plus the board grid (for BC, TBR, BBE) of the team events of a batch."""

    mp: Dense
    gp: Dense
    mtype: np.ndarray        # [T, R] team match type code (MATCH_TYPES)
    board_pts: np.ndarray    # [T, R, B] board points of played matches, units of the individual scale
    boards: np.ndarray       # [E] boards per event
    primary: np.ndarray      # [E] 'MP' or 'GP'
    names: np.ndarray        # [T] team names

    def view(self, reference: Reference) -> Dense:
        return self.mp if reference == "MP" else self.gp


def build_team_dense(batch: Batch, tb: TeamBatch, *, force_type: str | None = None) -> TeamDense:
    """The teams x rounds views of ``tb`` (teams ordered by tournament and pairing number)."""
    ev = tb.events.sort("tournament").join(batch.tournaments.select(
        "tournament", "rounds", "rounds_played", "scale", "pts_win", "pts_draw"), on="tournament",
        maintain_order="left")
    teams = tb.teams.sort("tournament", "team")
    t_ids = ev["tournament"].to_numpy()
    tix = np.searchsorted(t_ids, teams["tournament"].to_numpy()).astype(np.int64)
    T = teams.height
    n = ev["rounds_played"].to_numpy().astype(np.int64)
    R = int(max(int(ev["rounds"].max() or 0), int(tb.matches["round"].max() or 0))) if T else 0  # type: ignore[arg-type]
    keys = (tix << 20) | teams["team"].to_numpy().astype(np.int64)
    m = tb.matches
    m_tix = np.searchsorted(t_ids, m["tournament"].to_numpy()).astype(np.int64)
    rows = np.searchsorted(keys, (m_tix << 20) | m["team"].to_numpy().astype(np.int64))
    opp_no = m["opponent"].fill_null(0).to_numpy().astype(np.int64)
    opp_rows = np.searchsorted(keys, (m_tix << 20) | opp_no).clip(0, max(T - 1, 0))
    has_opp = (opp_no > 0) & (keys[opp_rows] == ((m_tix << 20) | opp_no)) if T else opp_no > 0
    cols = m["round"].to_numpy().astype(np.int64) - 1
    mtype_codes = m["match_type"].to_physical().to_numpy().astype(np.int8)

    def grid(values: np.ndarray, fill: int, dtype: type) -> np.ndarray:
        out: np.ndarray = np.full(T * R, fill, dtype=dtype)
        out[rows * R + cols] = values
        return out.reshape(T, R)

    opp = grid(np.where(has_opp, opp_rows, NO_OPP), NO_OPP, np.int32)
    mtype = grid(mtype_codes, MATCH_TYPES.index("absent"), np.int8)
    gtype = _TYPE_CODE[mtype]
    black = grid(~m["white"].fill_null(True).to_numpy(), False, np.bool_)
    mp = grid(m["mp"].to_numpy(), 0, np.int32)
    gp = grid(m["gp"].to_numpy(), 0, np.int32)
    boards = ev["boards"].to_numpy().astype(np.int64)
    mp_W, mp_D = ev["mp_win"].to_numpy().astype(np.int64), ev["mp_draw"].to_numpy().astype(np.int64)
    gp_W = boards * ev["pts_win"].to_numpy().astype(np.int64)
    gp_D = boards * ev["pts_draw"].to_numpy().astype(np.int64)
    played = mtype == PLAYED
    # a played match's outcome is the match result; an unplayed round's the points awarded (C.07 16.3.1)
    match_outcome = np.where(mp >= mp_W[tix][:, None], WIN, np.where(mp >= mp_D[tix][:, None], DRAW, LOSS))
    if force_type is None:
        rr = ev["round_robin"].to_numpy()
    else:
        rr = np.full(len(t_ids), force_type == "round_robin")
    strength = teams["strength"].fill_null(0).to_numpy().astype(np.int64)
    counted = np.arange(R)[None, :] < n[tix][:, None]
    common: dict[str, Any] = dict(   # (arrays, shared by the two views)
        t_ids=t_ids, n=n, planned=ev["rounds"].to_numpy().astype(np.int64), round_robin=rr, tix=tix,
        start_no=teams["team"].to_numpy().astype(np.int64), rating=strength, opp=opp, gtype=gtype,
                  black=black, counted=counted)

    def outcome(pts: np.ndarray, W: np.ndarray, D: np.ndarray) -> np.ndarray:
        by_points = np.where(pts >= W[tix][:, None], WIN, np.where(pts >= D[tix][:, None], DRAW, LOSS))
        return np.where(played, match_outcome, by_points).astype(np.int8)

    changes = team_deltas(batch, tb.events, tb.teams, tb.matches)
    bonus: dict[str, np.ndarray | None] = {"mp": None, "gp": None}
    if changes.height and T:
        c_tix = np.searchsorted(t_ids, changes["tournament"].to_numpy()).astype(np.int64)
        c_rows = np.searchsorted(keys, (c_tix << 20) | changes["team"].to_numpy().astype(np.int64))
        rnd = changes["round"].to_numpy().astype(np.int64)
        for unit in ("mp", "gp"):
            bonus[unit] = grid_of(c_rows, rnd, changes[unit].to_numpy(), (T, R))
    mp_view = Dense(W=mp_W, D=mp_D, scale=ev["mp_scale"].to_numpy().astype(np.int64), pts=mp,
                    outcome=outcome(mp, mp_W, mp_D), bonus=bonus["mp"], **common)
    gp_view = Dense(W=gp_W, D=gp_D, scale=ev["scale"].to_numpy().astype(np.int64), pts=gp,
                    outcome=outcome(gp, gp_W, gp_D), bonus=bonus["gp"], **common)
    B = int(boards.max()) if len(boards) else 1
    board_pts = np.zeros((T, R, B), dtype=np.int64)
    b = tb.boards.filter(pl.col("board") <= B)
    if b.height:
        b_tix = np.searchsorted(t_ids, b["tournament"].to_numpy()).astype(np.int64)
        b_rows = np.searchsorted(keys, (b_tix << 20) | b["team"].to_numpy().astype(np.int64))
        np.add.at(board_pts, (b_rows, b["round"].to_numpy().astype(np.int64) - 1,
                              b["board"].to_numpy().astype(np.int64) - 1), b["points"].to_numpy())
    return TeamDense(mp_view, gp_view, mtype, board_pts, boards, ev["primary"].to_numpy(),
                     teams["name"].to_numpy())


def board_points(td: TeamDense) -> np.ndarray:
    """[T, R, B] points per board with the conventions of rules.md 9.5 for unplayed matches.

    Individual forfeits inside a played match count as they were scored; a team PAB, full-point bye and a
    won forfeited match count as a win on every board of the event, a team HPB as a draw on every board, a
    ZPB, absence or lost forfeited match as nothing. Boards beyond the event's count are 0.
    """
    d = td.gp
    W = (d.W // np.maximum(td.boards, 1))[d.tix][:, None, None]
    D = (d.D // np.maximum(td.boards, 1))[d.tix][:, None, None]
    m = td.mtype[:, :, None]
    on_board = np.arange(td.board_pts.shape[2])[None, None, :] < td.boards[d.tix][:, None, None]
    whole = np.isin(m, [PAB, FORFEIT_WIN, FULL_BYE])
    pts = np.where(m == PLAYED, td.board_pts, np.where(whole, W, np.where(m == HALF_BYE, D, 0)))
    return np.where(on_board & d.counted[:, :, None], pts, 0)
