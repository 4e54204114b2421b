"""One match row per team and round, derived for all team events at once (rules.md 9.1).

Inputs are the per team-round aggregates of the boards (opponent team, game points, ...), the parsed
330/320/240 records as tables, and the events' scoring. The match type follows, in this order: a 330
forfeited match; a played (or pending) match against the team of the boards' opponents; a 320 team PAB;
a 240 bye; the free round of a round robin; otherwise, without opponent and unmarked, a team PAB when every
board scored a win (or the ``team_pab`` points, when given), else an absence.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import polars as pl
import pyarrow as pa

#: Team match types (rules.md 9.1), in the order of their codes.
MATCH_TYPES: Final = (
    "played",          # a match played over the boards
    "pab",             # team pairing-allocated bye (320, or read from the points awarded)   16.2.1
    "forfeit_win",     # forfeited match won (330 +- / -+)                                  16.2.2
    "forfeit_loss",    # forfeited match lost                                                16.2.4 (VUR)
    "double_forfeit",  # double-forfeited match (330 --)                                    16.2.4 (VUR)
    "full_bye",        # team full-point bye (240 F)                                         16.2.1
    "half_bye",        # team half-point bye (240 H)                                         (VUR)
    "zero_bye",        # team zero-point bye (240 Z)                                         (VUR)
    "absent",          # no opponent, not marked: absence or withdrawal                      (VUR)
    "free_round",      # free round of an odd round robin (no element, 15.2)
    "pending",         # paired, result not yet known
)
MatchTypeEnum = pl.Enum(list(MATCH_TYPES))
#: The individual game type a team match type behaves as in the unplayed-round stage (C.07 16.2).
AS_GAME_TYPE: Final = {"free_round": "absent"} | {m: m for m in MATCH_TYPES if m != "free_round"}

MATCH_SCHEMA: Final[dict[str, pl.DataType]] = {
    "tournament": pl.Int64(), "team": pl.Int32(), "round": pl.Int16(), "opponent": pl.Int32(),
    "match_type": MatchTypeEnum, "white": pl.Boolean(), "mp": pl.Int32(), "gp": pl.Int32()}

FORFEIT_SCHEMA = {"tournament": pl.Int64, "team": pl.Int32, "round": pl.Int16, "_fkind": pl.String,
                  "_fopp": pl.Int32, "_fwhite": pl.Boolean}
PAB_SCHEMA = {"tournament": pl.Int64, "team": pl.Int32, "round": pl.Int16, "_pmp": pl.Int32, "_pgp": pl.Int32}
BYE_SCHEMA = {"tournament": pl.Int64, "team": pl.Int32, "round": pl.Int16, "_bkind": pl.String}


def derive_matches(teams: pl.DataFrame, per: pl.DataFrame, events: pl.DataFrame, forfeits: pl.DataFrame,
                   pabs: pl.DataFrame, byes: pl.DataFrame, given_pab: bool) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The matches table and the unmarked team-rounds (tournament, team, round, given) for warnings.

    Every team (``teams``, sorted by tournament and pairing number) has a match in every round 1..n of its
    event, n the larger of ``rounds`` and ``_rmax`` (the last round of its boards); ``events`` (sorted by
    tournament) gives also ``mp_win``, ``mp_draw``, ``mp_loss``, ``boards``, ``round_robin``, ``pts_win``,
    ``pts_draw`` and, when ``given_pab``, ``_gmp``/``_ggp`` (the --team-pab points in units). The records
    name teams and rounds of their events (tbstats.model.teams.checks). All cells at once on a teams x rounds grid.
    """
    t_ids = events["tournament"].to_numpy()
    tix = np.searchsorted(t_ids, teams["tournament"].to_numpy())
    team_no = teams["team"].to_numpy().astype(np.int64)
    keys = (tix << 20) | team_no
    n = np.maximum(events["rounds"].fill_null(0).to_numpy().astype(np.int64),
                   events["_rmax"].fill_null(0).to_numpy().astype(np.int64))
    T, R = len(team_no), int(n.max(initial=0))
    rnd = np.tile(np.arange(1, R + 1), T)
    valid = rnd <= np.repeat(n[tix], R)
    c_tix = np.repeat(tix, R)

    def cells(frame: pl.DataFrame) -> np.ndarray:
        f_tix = np.searchsorted(t_ids, frame["tournament"].to_numpy())
        rows = np.searchsorted(keys, (f_tix << 20) | frame["team"].to_numpy().astype(np.int64))
        return rows * R + frame["round"].to_numpy().astype(np.int64) - 1

    at = {id(f): cells(f) for f in (per, forfeits, pabs, byes)}

    def spread(frame: pl.DataFrame, column: str | pl.Expr, fill: object, dtype: type) -> np.ndarray:
        out: np.ndarray = np.full(T * R, fill, dtype=dtype)
        out[at[id(frame)]] = frame.select(column).to_series().to_numpy()
        return out

    opp = spread(per, pl.col("_opp").fill_null(-1), -1, np.int64)
    gp = spread(per, "_gp", 0, np.int64)
    pending = spread(per, "_pending", False, np.bool_)
    black = spread(per, pl.col("_colour").fill_null("w") == "b", False, np.bool_)
    fkind = spread(forfeits, pl.col("_fkind").replace_strict(
        {"forfeit_win": 0, "forfeit_loss": 1, "double_forfeit": 2}, return_dtype=pl.Int8), -1, np.int8)
    fopp = spread(forfeits, pl.col("_fopp").fill_null(-1), -1, np.int64)
    fwhite = spread(forfeits, "_fwhite", False, np.bool_)
    has_pab = spread(pabs, pl.lit(True), False, np.bool_)
    pmp, pgp = spread(pabs, "_pmp", 0, np.int64), spread(pabs, "_pgp", 0, np.int64)
    bkind = spread(byes, pl.col("_bkind").replace_strict({"H": 0, "Z": 1, "F": 2}, return_dtype=pl.Int8), -1, np.int8)

    def per_event(column: str) -> np.ndarray:
        return events[column].to_numpy().astype(np.int64)[c_tix]

    mp_win, mp_draw, mp_loss = per_event("mp_win"), per_event("mp_draw"), per_event("mp_loss")
    boards, pts_win, pts_draw = per_event("boards"), per_event("pts_win"), per_event("pts_draw")
    round_robin = events["round_robin"].to_numpy()[c_tix]
    has_opp = opp >= 0
    opp_cell = np.searchsorted(keys, (c_tix << 20) | np.where(has_opp, opp, 0)).clip(0, max(T - 1, 0)) * R + rnd - 1
    ogp = np.where(has_opp, gp[opp_cell.clip(0, max(T * R - 1, 0))] if T * R else 0, 0)
    free = (fkind < 0) & ~has_opp & ~has_pab & (bkind < 0)
    slot = c_tix * R + rnd - 1
    alone = (np.bincount(slot, weights=free & valid, minlength=len(t_ids) * R) == 1)[slot]
    last = np.where(((fkind >= 0) | has_opp) & valid, rnd, 0).reshape(T, R).max(axis=1, initial=0)
    given = (gp == 0) & alone if given_pab else np.zeros(T * R, dtype=bool)
    all_won = (gp >= boards * pts_win) & (boards * pts_win > 0)
    code = {m: i for i, m in enumerate(MATCH_TYPES)}
    kind = np.select(
        [fkind == 0, fkind == 1, fkind == 2, has_opp & pending, has_opp, has_pab, bkind == 0, bkind == 1, bkind == 2,
         round_robin, given, all_won],
        [code[k] for k in ("forfeit_win", "forfeit_loss", "double_forfeit", "pending", "played", "pab", "half_bye",
                           "zero_bye", "full_bye", "free_round", "pab", "pab")], code["absent"])
    paired = (kind == code["played"]) | (kind == code["pending"])
    gmp = per_event("_gmp") if given_pab else np.zeros(T * R, dtype=np.int64)
    ggp = per_event("_ggp") if given_pab else np.zeros(T * R, dtype=np.int64)
    mp = np.select(
        [kind == code["forfeit_win"], (kind == code["forfeit_loss"]) | (kind == code["double_forfeit"]),
         paired & (gp > ogp), paired & (gp == ogp), paired, has_pab, kind == code["half_bye"],
         kind == code["full_bye"], given, kind == code["pab"]],
        [mp_win, mp_loss, mp_win, mp_draw, mp_loss, pmp, mp_draw, mp_win, gmp, mp_win], mp_loss)
    gp_out = np.select(
        [(fkind >= 0) | paired, has_pab, kind == code["half_bye"], kind == code["full_bye"],
         (kind == code["zero_bye"]) | (kind == code["free_round"]), given],
        [gp, pgp, boards * pts_draw, boards * pts_win, np.zeros_like(gp), ggp], gp)
    keep = np.flatnonzero(valid)
    white = pl.Series("white", np.where(fkind >= 0, fwhite, ~black)[keep]).scatter(
        np.flatnonzero(~((fkind >= 0) | paired)[keep]), None)
    opponent = np.where(fkind >= 0, fopp, opp)[keep]
    row = keep // R if R else keep
    base = {"tournament": teams["tournament"].to_numpy()[row], "team": team_no[row], "round": rnd[keep]}
    matches = pl.DataFrame({
        **base, "opponent": pl.Series(opponent).scatter(np.flatnonzero(opponent < 0), None),
        "match_type": _match_types(kind[keep]), "white": white, "mp": mp[keep],
        "gp": gp_out[keep]}).cast(MATCH_SCHEMA)  # type: ignore[arg-type]
    marked = keep[(free & ~round_robin & (given | (kind == code["pab"]) | (rnd <= np.repeat(last, R)) | alone))[keep]]
    r2 = marked // R if R else marked
    unmarked = pl.DataFrame({"tournament": teams["tournament"].to_numpy()[r2], "team": team_no[r2],
                             "round": rnd[marked], "_given": given[marked]}).cast(
        {"tournament": pl.Int64, "team": pl.Int32, "round": pl.Int16})
    return matches, unmarked


def _match_types(codes: np.ndarray) -> pl.Series:
    """The :data:`MatchTypeEnum` column of match type codes (indices in :data:`MATCH_TYPES`)."""
    arr = pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32)), pa.array(list(MATCH_TYPES)))
    return pl.Series("match_type", pl.from_arrow(arr)).cast(MatchTypeEnum)
