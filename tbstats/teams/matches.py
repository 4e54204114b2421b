"""One match row per team and round, derived for all team events at once (rules.md 9.1).

Inputs are the per team-round aggregates of the boards (opponent team, game points, ...), the parsed
330/320/240 records as tables, and the events' scoring. The match type follows, in this order: a 330
forfeited match; a played (or pending) match against the team of the boards' opponents; a 320 team PAB;
a 240 bye; the free round of a round robin; otherwise, without opponent and unmarked, a team PAB when every
board scored a win (or the ``team_pab`` points, when given), else an absence.
"""

from __future__ import annotations

from typing import Final

import polars as pl

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


def derive_matches(grid: pl.DataFrame, per: pl.DataFrame, events: pl.DataFrame, forfeits: pl.DataFrame,
                   pabs: pl.DataFrame, byes: pl.DataFrame, given_pab: bool) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The matches table and the unmarked team-rounds (tournament, team, round, given) for warnings.

    ``grid`` holds every (tournament, team, round); ``events`` per tournament ``mp_win``, ``mp_draw``,
    ``mp_loss``, ``boards``, ``round_robin``, ``pts_win``, ``pts_draw`` and, when ``given_pab``,
    ``_gmp``/``_ggp`` (the --team-pab points in units).
    """
    keys = ["tournament", "team", "round"]
    opp_gp = per.select("tournament", pl.col("team").alias("_opp"), "round", pl.col("_gp").alias("_ogp"))
    g = (grid.join(per, on=keys, how="left").join(forfeits, on=keys, how="left").join(pabs, on=keys, how="left")
         .join(byes, on=keys, how="left").join(opp_gp, on=["tournament", "_opp", "round"], how="left")
         .join(events, on="tournament", how="left")
         .with_columns(pl.col("_gp").fill_null(0), pl.col("_ogp").fill_null(0)))
    free = pl.col("_fkind").is_null() & pl.col("_opp").is_null() & pl.col("_pmp").is_null() & pl.col(
        "_bkind").is_null()
    g = g.with_columns(
        (free.sum().over("tournament", "round") == 1).alias("_alone"),
        pl.when(pl.col("_fkind").is_not_null() | pl.col("_opp").is_not_null()).then(pl.col("round"))
        .otherwise(0).max().over("tournament", "team").alias("_last"))
    all_won = pl.col("_gp") >= pl.col("boards") * pl.col("pts_win")
    given = (pl.lit(given_pab) & (pl.col("_gp") == 0) & pl.col("_alone")) if given_pab else pl.lit(False)
    kind = (pl.when(pl.col("_fkind").is_not_null()).then(pl.col("_fkind"))
            .when(pl.col("_opp").is_not_null()).then(pl.when(pl.col("_pending")).then(pl.lit("pending"))
                                                     .otherwise(pl.lit("played")))
            .when(pl.col("_pmp").is_not_null()).then(pl.lit("pab"))
            .when(pl.col("_bkind") == "H").then(pl.lit("half_bye"))
            .when(pl.col("_bkind") == "Z").then(pl.lit("zero_bye"))
            .when(pl.col("_bkind") == "F").then(pl.lit("full_bye"))
            .when(pl.col("round_robin")).then(pl.lit("free_round"))
            .when(given).then(pl.lit("pab"))
            .when(all_won & (pl.col("boards") * pl.col("pts_win") > 0)).then(pl.lit("pab"))
            .otherwise(pl.lit("absent")))
    g = g.with_columns(kind.alias("_kind"), given.alias("_given"))
    paired = pl.col("_kind").is_in(["played", "pending"])
    mp = (pl.when(pl.col("_kind") == "forfeit_win").then(pl.col("mp_win"))
          .when(pl.col("_kind").is_in(["forfeit_loss", "double_forfeit"])).then(pl.col("mp_loss"))
          .when(paired).then(pl.when(pl.col("_gp") > pl.col("_ogp")).then(pl.col("mp_win"))
                             .when(pl.col("_gp") == pl.col("_ogp")).then(pl.col("mp_draw"))
                             .otherwise(pl.col("mp_loss")))
          .when(pl.col("_pmp").is_not_null()).then(pl.col("_pmp"))
          .when(pl.col("_kind") == "half_bye").then(pl.col("mp_draw"))
          .when(pl.col("_kind") == "full_bye").then(pl.col("mp_win"))
          .when(pl.col("_given")).then(pl.col("_gmp") if given_pab else pl.lit(0))
          .when(pl.col("_kind") == "pab").then(pl.col("mp_win"))
          .otherwise(pl.col("mp_loss")))
    gp = (pl.when(pl.col("_fkind").is_not_null() | paired).then(pl.col("_gp"))
          .when(pl.col("_pmp").is_not_null()).then(pl.col("_pgp"))
          .when(pl.col("_kind") == "half_bye").then(pl.col("boards") * pl.col("pts_draw"))
          .when(pl.col("_kind") == "full_bye").then(pl.col("boards") * pl.col("pts_win"))
          .when(pl.col("_kind").is_in(["zero_bye", "free_round"])).then(pl.lit(0))
          .when(pl.col("_given")).then(pl.col("_ggp") if given_pab else pl.lit(0))
          .otherwise(pl.col("_gp")))
    white = (pl.when(pl.col("_fkind").is_not_null()).then(pl.col("_fwhite"))
             .when(paired).then(pl.col("_colour").cast(pl.String).fill_null("w") != "b")
             .otherwise(pl.lit(None, pl.Boolean)))
    matches = g.select(
        "tournament", "team", "round", pl.coalesce(pl.col("_fopp"), pl.col("_opp")).alias("opponent"),
        pl.col("_kind").cast(MatchTypeEnum).alias("match_type"), white.alias("white"), mp.alias("mp"),
        gp.alias("gp")).cast(MATCH_SCHEMA)  # type: ignore[arg-type]
    unmarked = g.filter(free & ~pl.col("round_robin") & (
        pl.col("_given") | (pl.col("_kind") == "pab") | (pl.col("round") <= pl.col("_last")) | pl.col("_alone"))
    ).select("tournament", "team", "round", "_given")
    return matches.sort(keys), unmarked.sort(keys)
