"""The team games: each game row's team and opponent team, per team and round aggregates, fielded boards.

All events at once with numpy (rules.md 9.1). A player belongs to at most one team of an event (a player
listed in two teams is a format error, :func:`check_members`), so a game row finds its team and its
opponent's team by one gather in a dense per-event table of start numbers; the per team-round aggregates
are bincounts over ``team row x rounds + round`` and the board of a fielded player its rank in board order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NoReturn

import numpy as np
import polars as pl

from tbstats.errors import FormatError
from tbstats.model.games import GAME_TYPE
from tbstats.model.teams.checks import check_teams
from tbstats.model.teams.where import place, record_lines, source_of

_NONE = -1   # no team


@dataclass(frozen=True)
class TeamGames:
    """``per``: one row per team and round with a game row of a member (tournament, team, round, ``_opp``
    opponent team or null, ``_gp`` game points, ``_pending``, ``_plus`` boards won by default without
    opponent, ``_colour`` of the first paired board in board order, ``_fielded`` boards fielded), in
    (tournament, team, round) order; ``fielded``: the fielded boards (tournament, team, round, player,
    points, ``board``: rank in board order), in (tournament, team, round, board order) order; ``empty``:
    the rows (of ``teams``) of the teams that list no member."""

    per: pl.DataFrame
    fielded: pl.DataFrame
    empty: np.ndarray       # rows of the teams that list no member


def check_members(members: pl.DataFrame, teams: pl.DataFrame, t_rows: pl.DataFrame) -> None:
    """A player is listed once in the teams of an event (310/013 members): else a FormatError naming both
    team records (rules.md 9.1: a player is one of the members of his team)."""
    twice = members.filter(pl.struct("tournament", "player").is_duplicated())
    if twice.is_empty():
        return
    first = twice.sort("tournament", "player", "team", "order").head(2)
    tid, player = first["tournament"][0], first["player"][0]
    both = first.join(teams.select("tournament", "team", "record"), on=["tournament", "team"],
                      maintain_order="left")
    source = source_of(t_rows, tid)
    records = both["record"].to_list()
    lines = record_lines(source, records)
    where = [place(ln, rec[:40]) for ln, rec in zip(lines, records, strict=True)]
    a, b = both["team"].to_list()
    what = (f"player {player} is listed twice in team {a} ({where[0]})" if a == b else
            f"player {player} is listed in team {a} ({where[0]}) and in team {b} ({where[1]})")
    raise FormatError(source, lines[1], "310/013 members",
                      f"{what}; a player plays for one team of an event (expected each start rank once)")


def team_games(games: pl.DataFrame, members: pl.DataFrame, teams: pl.DataFrame, t_rows: pl.DataFrame,
               players: pl.DataFrame, recs: pl.DataFrame) -> TeamGames:
    """The team games of the team events ``t_rows`` (sorted by tournament; ``teams`` sorted by tournament and
    pairing number; ``players`` their 001 records; ``recs`` their team records, to name one in an error).

    Raises FormatError for a player listed twice (:func:`check_members`), for two teams with one pairing
    number, for the problems of :func:`tbstats.model.teams.checks.check_teams` (a pairing number below 1, a member
    without 001 record), for a board whose opponent belongs to no team or to the player's own team, and for
    a team whose boards face several teams in one round.
    """
    t_ids = t_rows["tournament"].to_numpy()
    g_tix = _index(t_ids, games["tournament"].to_numpy())
    m_tix = _index(t_ids, members["tournament"].to_numpy())
    player = games["player"].to_numpy().astype(np.int64)
    opp_col = games["opponent"]
    paired = opp_col.is_not_null().to_numpy()
    opponent = opp_col.fill_null(0).to_numpy().astype(np.int64)
    m_player = members["player"].to_numpy().astype(np.int64)
    # a dense table per event of start numbers 0..widest: the team row of each member, else _NONE
    width = np.zeros(len(t_ids), dtype=np.int64)
    for frame, widest in ((members, pl.col("player")), (players, pl.col("start_no")),
                          (games, pl.max_horizontal("player", pl.col("opponent").fill_null(0)))):
        w = frame.group_by("tournament").agg(widest.max().cast(pl.Int64).alias("_w"))
        at = _index(t_ids, w["tournament"].to_numpy())
        width[at] = np.maximum(width[at], w["_w"].fill_null(0).to_numpy())
    offset = np.concatenate([[0], np.cumsum(width + 1)])
    team_keys = (_index(t_ids, teams["tournament"].to_numpy()) << 20) | teams["team"].to_numpy()
    if (np.diff(team_keys) == 0).any():
        _same_number(teams, int(np.argmax(np.diff(team_keys) == 0)), t_rows)
    row_of = np.full(int(offset[-1]), _NONE, dtype=np.int64)
    order_of = np.zeros(int(offset[-1]), dtype=np.int64)
    at = offset[m_tix] + m_player
    if len(at) and int(np.bincount(at).max()) > 1:
        check_members(members, teams, t_rows)
    listed = np.zeros(int(offset[-1]), dtype=bool)
    p_no = players["start_no"].to_numpy().astype(np.int64)
    listed[(offset[_index(t_ids, players["tournament"].to_numpy())] + p_no)[p_no >= 0]] = True
    if (teams["team"].to_numpy() < 1).any() or not listed[at].all():
        check_teams(recs, teams, members, players)
    m_row = np.searchsorted(team_keys, (m_tix << 20) | members["team"].to_numpy())
    row_of[at] = m_row
    order_of[at] = members["order"].to_numpy()
    ok = (player >= 0) & (opponent >= 0)
    cell = np.where(ok, offset[g_tix] + player, 0)
    row = np.where(ok, row_of[cell], _NONE)
    opp_row = np.where(ok & paired, row_of[np.where(ok, offset[g_tix] + opponent, 0)], _NONE)
    _check_boards(games, t_rows, paired & ((row == _NONE) | (opp_row == _NONE)), paired & (row == opp_row),
                  row, teams, players)
    mine = np.flatnonzero(row != _NONE)
    R = int(games["round"].max() or 0) if len(mine) else 0  # type: ignore[arg-type]
    row, opp_row, paired = row[mine], opp_row[mine], paired[mine]
    order = order_of[cell[mine]]
    gid = row * R + games["round"].to_numpy()[mine].astype(np.int64) - 1
    n = len(teams) * R
    points = games["points"].fill_null(0).to_numpy()[mine]
    by_default = ((games["result"] == "+").fill_null(False).to_numpy()[mine]) & ~paired
    pending = games["game_type"].to_physical().to_numpy()[mine] == GAME_TYPE["pending"]
    present = np.bincount(gid, minlength=n) > 0
    opp_any = np.full(n, _NONE, dtype=np.int64)    # the team row one of its paired boards faces
    opp_any[gid[paired]] = opp_row[paired]
    several = paired & (opp_row != opp_any[gid])
    if several.any():
        _several_opponents(int(gid[several].min()), R, gid, opp_row, paired, teams, t_rows)
    has_opp = opp_any != _NONE
    # a board is fielded when it has an opponent, or was won by default against an empty board of a team
    # that did play a match that round ('0000 - +' beside boards with opponents); sorted by board order
    fielded = np.flatnonzero(paired | (by_default & has_opp[gid]))
    key = gid[fielded] * (int(order.max(initial=0)) + 1) + order[fielded]
    sort = fielded[np.argsort(key, kind="stable")]
    s_gid = gid[sort]
    start = np.ones(len(sort), dtype=bool)
    start[1:] = s_gid[1:] != s_gid[:-1]
    # the colour of the first paired board in board order
    lead = sort[paired[sort]]
    first = np.ones(len(lead), dtype=bool)
    first[1:] = gid[lead][1:] != gid[lead][:-1]
    colour = np.full(n, 2, dtype=np.int8)     # ColourEnum codes, 2: none
    colour[gid[lead[first]]] = games["colour"].to_physical().fill_null(2).to_numpy()[mine][lead[first]]
    gp = np.bincount(gid, weights=points, minlength=n).astype(np.int64)
    n_paired = np.bincount(gid, weights=paired, minlength=n).astype(np.int64)
    plus = np.bincount(gid, weights=by_default, minlength=n).astype(np.int64)
    any_pending = np.bincount(gid, weights=pending, minlength=n) > 0
    cells = np.flatnonzero(present)
    t_row = cells // R if R else cells
    team_no = teams["team"].to_numpy()
    opp_team = pl.Series("_opp", team_no[np.where(has_opp, opp_any, 0)[cells]], dtype=pl.Int32).scatter(
        np.flatnonzero(~has_opp[cells]), None)
    per = pl.DataFrame({
        "tournament": teams["tournament"].to_numpy()[t_row], "team": pl.Series(team_no[t_row], dtype=pl.Int32),
        "round": pl.Series(cells % R + 1 if R else cells, dtype=pl.Int16), "_opp": opp_team,
        "_gp": gp[cells], "_pending": any_pending[cells], "_plus": plus[cells],
        "_colour": pl.Series(colour[cells]).replace_strict({0: "w", 1: "b"}, default=None, return_dtype=pl.String),
        "_fielded": n_paired[cells] + np.where(has_opp[cells], plus[cells], 0)})
    pos = np.arange(len(sort))
    board = pos - np.maximum.accumulate(np.where(start, pos, 0)) + 1
    s_row = row[sort]
    boards = pl.DataFrame({
        "tournament": teams["tournament"].to_numpy()[s_row], "team": pl.Series(team_no[s_row], dtype=pl.Int32),
        "round": pl.Series(s_gid % R + 1 if R else s_gid, dtype=pl.Int16),
        "player": pl.Series(player[mine][sort], dtype=pl.Int32), "points": pl.Series(points[sort], dtype=pl.Int32),
        "board": pl.Series(board, dtype=pl.Int16)})
    return TeamGames(per, boards, np.flatnonzero(np.bincount(m_row, minlength=len(teams)) == 0))


def _same_number(teams: pl.DataFrame, i: int, t_rows: pl.DataFrame) -> NoReturn:
    """Two team records of an event give the same pairing number (rows ``i`` and ``i + 1`` of ``teams``)."""
    tid, team = teams["tournament"][i], teams["team"][i]
    source = source_of(t_rows, tid)
    records = teams["record"][i:i + 2].to_list()
    lines = record_lines(source, records)
    where = " and ".join(f"line {ln}" if ln is not None else repr(rec[:40].rstrip())
                         for ln, rec in zip(lines, records, strict=True))
    raise FormatError(source, lines[1], "310 team pairing number (cols 5-7)",
                      f"team {team} is given twice ({where}); expected each pairing number once")


def _index(ids: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The position of each of ``values`` in the sorted ``ids`` (each value is one of them): a lookup table
    when the ids are small (batch-local ids are 0..n-1), else a binary search."""
    if len(ids) and ids[0] >= 0 and ids[-1] < 4 * len(ids) + 4096:
        table = np.zeros(int(ids[-1]) + 1, dtype=np.int64)
        table[ids] = np.arange(len(ids))
        return table[values]
    return np.searchsorted(ids, values)


def _check_boards(games: pl.DataFrame, t_rows: pl.DataFrame, teamless: np.ndarray, same: np.ndarray,
                  row: np.ndarray, teams: pl.DataFrame, players: pl.DataFrame) -> None:
    """Every board's opponent is in a team, and not in the player's own (the error at the player's 001 line)."""
    for bad in (teamless, same):
        if not bad.any():
            continue
        i = int(np.argmax(bad))
        g = games.row(i, named=True)
        source = source_of(t_rows, g["tournament"])
        found = players.filter((pl.col("tournament") == g["tournament"]) & (pl.col("start_no") == g["player"]))
        line = int(found["line"][0]) if found.height and found["line"][0] else None
        if bad is teamless:
            who = g["player"] if row[i] == _NONE else g["opponent"]
            reason = f"player {who} is in no team (310/013 members)"
        else:
            reason = f"opponent {g['opponent']} belongs to the same team {teams['team'][int(row[i])]}"
        raise FormatError(source, line, f"player {g['player']} round {g['round']}", reason)


def _several_opponents(bad: int, R: int, gid: np.ndarray, opp_row: np.ndarray, paired: np.ndarray,
                       teams: pl.DataFrame, t_rows: pl.DataFrame) -> NoReturn:
    """A team meets one team per round: all its boards' opponents belong to that team."""
    t_row = bad // R
    tid, team = teams["tournament"][t_row], teams["team"][t_row]
    faced = np.unique(opp_row[paired & (gid == bad)])
    names = ", ".join(str(teams["team"][int(r)]) for r in faced)
    source = source_of(t_rows, tid)
    raise FormatError(source, None, f"team {team} round {bad % R + 1}",
                      f"its boards face players of several teams ({names}); a board whose opponent belongs to "
                      "another team")
