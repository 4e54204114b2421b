"""The team records of every team event at once, parsed by record code (rules.md 9.1).

The TRF reader keeps these records verbatim in ``tournaments.records``; here they are exploded into one row
per record and sliced column-wise with polars, all events together: ``310``/``013`` teams and members,
``300`` line-ups, ``362`` team scoring, ``320`` team PABs, ``330`` forfeited matches and ``240`` team byes.
Python runs only over distinct values (each distinct 362 text, each distinct points text of a 320 or 310)
and over the first bad record when one is found. The reader keeps no line numbers for these records, so
errors quote the record itself.
"""

from __future__ import annotations

import functools
import math
import re
from fractions import Fraction
from typing import Final

import polars as pl

from tbstats.errors import FormatError
from tbstats.model.teams.matches import BYE_SCHEMA, FORFEIT_SCHEMA, PAB_SCHEMA

TEAM_SCHEMA: Final[dict[str, pl.DataType]] = {
    "tournament": pl.Int64(), "team": pl.Int32(), "name": pl.String(), "nickname": pl.String(),
    "strength": pl.Int32(), "declared_mp": pl.String(), "declared_gp": pl.String(),
    "declared_rank": pl.Int32(), "record": pl.String()}
MEMBER_SCHEMA: Final[dict[str, pl.DataType]] = {
    "tournament": pl.Int64(), "team": pl.Int32(), "player": pl.Int32(), "order": pl.Int16()}
SCORING_SCHEMA: Final[dict[str, pl.DataType]] = {
    "_362": pl.String(), "mp_scale": pl.Int32(), "mp_win": pl.Int32(), "mp_draw": pl.Int32(),
    "mp_loss": pl.Int32()}
CODES: Final = ("013", "310", "300", "320", "330", "240", "362")
_SEP: Final = "\n"   # joins an event's 362 texts into one key (records hold no newline)


def parse_team_scoring(records: list[str]) -> dict[str, Fraction]:
    """Match points per match result from ``362`` (``TW 2.0 TD 1.0 TL 0.0``); defaults 2/1/0 (rules.md 9.1).

    >>> parse_team_scoring(["362 TW 3.0   TD 1.0   TL 0.0"])["win"]
    Fraction(3, 1)
    """
    return dict(_team_scoring(tuple(text for text in records if text.startswith("362"))))


@functools.lru_cache(maxsize=256)
def _team_scoring(records: tuple[str, ...]) -> tuple[tuple[str, Fraction], ...]:
    """The 362 records' points, once per distinct text (most archives use a handful of scorings)."""
    points = {"win": Fraction(2), "draw": Fraction(1), "loss": Fraction(0)}
    for text in records:
        for code, value in re.findall(r"T([WDL])\s*(-?\d+(?:\.\d+)?)", text[3:]):
            points[{"W": "win", "D": "draw", "L": "loss"}[code]] = Fraction(value)
    return tuple(points.items())


def units(text: str, scale: int) -> int | None:
    """``text`` (points such as ``1.5``) in units of ``1/scale``; None when blank, not a number or not exact."""
    text = text.strip()
    if not text:
        return None
    try:
        value = Fraction(text) * scale
    except (ValueError, ZeroDivisionError):
        return None
    return int(value) if value.denominator == 1 else None


def units_of(frame: pl.DataFrame, text: str, scale: str) -> pl.Series:
    """``units`` of every row's ``text`` column in its ``scale`` column, computed once per distinct pair."""
    pairs = frame.select(pl.col(text).alias("_t"), pl.col(scale).cast(pl.Int64).alias("_s"))
    distinct = pairs.unique().drop_nulls()
    table = distinct.with_columns(pl.Series("_u", [units(t, s) for t, s in distinct.iter_rows()],
                                            dtype=pl.Int64))
    return pairs.join(table, on=["_t", "_s"], how="left", maintain_order="left")["_u"]


def exploded(t_rows: pl.DataFrame) -> pl.DataFrame:
    """One row per team record of every event: tournament, source, ``seq`` (position in the batch), text, code."""
    return t_rows.select("tournament", "source", pl.col("records").alias("text")).explode("text").drop_nulls(
        "text").with_columns(pl.col("text").str.slice(0, 3).alias("code")).filter(
        pl.col("code").is_in(CODES)).with_row_index("seq")


def _int(expr: pl.Expr) -> pl.Expr:
    return expr.str.strip_chars().cast(pl.Int32, strict=False)


def _digits(expr: pl.Expr) -> pl.Expr:
    """The whitespace-separated tokens of ``expr`` made of digits only, as integers (a list)."""
    return expr.str.extract_all(r"\S+").list.eval(
        pl.element().filter(pl.element().str.contains(r"^[0-9]+$")).cast(pl.Int64))


def team_records(t_rows: pl.DataFrame, recs: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Teams, members in board order and 300 line-ups of every event, sliced column-wise from the records.

    310 (TRF26): pairing number 5-7, name 9-40, nickname 42-46, strength 48-53, MP 55-60, GP 62-67, rank
    69-71, members from col 74; 013 (older files, used when an event has no 310): name 5-36, members from
    col 37, teams numbered in order. 300: round, team, opponent team, then the players by board (0 = empty).
    """
    has_310 = recs.group_by("tournament").agg((pl.col("code") == "310").any().alias("_310"))
    recs = recs.join(has_310, on="tournament", maintain_order="left")
    r310 = recs.filter((pl.col("code") == "310") & pl.col("_310")).select(
        "tournament", "source", _int(pl.col("text").str.slice(4, 3)).alias("team"),
        pl.col("text").str.slice(8, 32).str.strip_chars().alias("name"),
        pl.col("text").str.slice(41, 5).str.strip_chars().replace("", None).alias("nickname"),
        _int(pl.col("text").str.slice(47, 6)).alias("strength"),
        pl.col("text").str.slice(54, 6).str.strip_chars().replace("", None).alias("declared_mp"),
        pl.col("text").str.slice(61, 6).str.strip_chars().replace("", None).alias("declared_gp"),
        _int(pl.col("text").str.slice(68, 3)).alias("declared_rank"),
        pl.col("text").alias("record"), pl.col("text").str.slice(73).alias("_members"))
    for row in r310.filter(pl.col("team").is_null()).head(1).iter_rows(named=True):
        raise FormatError(row["source"], None, f"record {row['record'][:40]!r}",
                          "team pairing number (cols 5-7) is not a number")
    r013 = recs.filter((pl.col("code") == "013") & ~pl.col("_310")).select(
        "tournament", "source", pl.int_range(1, pl.len() + 1).over("tournament").cast(pl.Int32).alias("team"),
        pl.col("text").str.slice(4, 32).str.strip_chars().alias("name"), pl.lit(None, pl.String).alias("nickname"),
        pl.lit(None, pl.Int32).alias("strength"), pl.lit(None, pl.String).alias("declared_mp"),
        pl.lit(None, pl.String).alias("declared_gp"), pl.lit(None, pl.Int32).alias("declared_rank"),
        pl.col("text").alias("record"), pl.col("text").str.slice(36).alias("_members"))
    both = pl.concat([r310, r013])
    missing = t_rows.filter(~pl.col("tournament").is_in(both["tournament"].implode())).head(1)
    for row in missing.iter_rows(named=True):
        raise FormatError(row["source"], None, "teams", "a team event needs 310 or 013 team records")
    teams = both.select(*TEAM_SCHEMA).cast(TEAM_SCHEMA)  # type: ignore[arg-type]
    # board order: the position in the team's record (a team given by two records is an error later)
    members = both.select("tournament", "team", pl.col("_members").str.extract_all(r"\d+").alias("player")
                          ).with_columns(pl.int_ranges(1, pl.col("player").list.len() + 1).alias("order")).explode(
        "player", "order").drop_nulls("player").select(*MEMBER_SCHEMA).cast(MEMBER_SCHEMA)  # type: ignore[arg-type]
    r300 = recs.filter(pl.col("code") == "300").with_columns(
        pl.col("text").str.slice(4).str.extract_all(r"\d+").cast(pl.List(pl.Int32)).alias("_n"))
    for row in r300.filter(pl.col("_n").list.len() < 3).head(1).iter_rows(named=True):
        raise FormatError(row["source"], None, f"record {row['text']!r}", "line-up needs round, team, opponent team")
    lineups = r300.select(
        "tournament", "seq", pl.col("_n").list.get(0).cast(pl.Int16).alias("round"),
        pl.col("_n").list.get(1).alias("team"), pl.col("_n").list.get(2).alias("_lopp"),
        pl.col("_n").list.slice(3).alias("player")).explode(
        "player").with_columns(pl.int_range(1, pl.len() + 1).over("tournament", "round", "team").cast(pl.Int16)
                               .alias("_board")).drop_nulls("player")
    return teams, members, lineups


def scoring(t_rows: pl.DataFrame, recs: pl.DataFrame) -> pl.DataFrame:
    """Per event the team match scoring (362; defaults 2/1/0) in units of ``1/mp_scale``, parsed once per text."""
    keys = recs.filter(pl.col("code") == "362").group_by("tournament", maintain_order=True).agg(
        pl.col("text").str.join(_SEP).alias("_362"))
    per_event = t_rows.select("tournament").join(keys, on="tournament", how="left", maintain_order="left").with_columns(
        pl.col("_362").fill_null(""))
    rows = []
    for key in per_event["_362"].unique().to_list():
        points = dict(_team_scoring(tuple(key.split(_SEP)) if key else ()))
        mp_scale = math.lcm(*(p.denominator for p in points.values()))
        rows.append((key, mp_scale, *(int(points[k] * mp_scale) for k in ("win", "draw", "loss"))))
    table = pl.DataFrame(rows, schema=SCORING_SCHEMA, orient="row")
    return per_event.join(table, on="_362", how="left", maintain_order="left").drop("_362")


def unplayed_records(recs: pl.DataFrame, events: pl.DataFrame
                     ) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The 330 forfeited matches, 320 team PABs and 240 team byes of every event, keyed by team and round,
    and every team and round they name (``refs``: tournament, seq, team, round; for the checks of
    :mod:`tbstats.model.teams.checks`).

    ``events`` gives per tournament ``scale`` (board points) and ``mp_scale``. A later record of the same
    code for the same team and round replaces an earlier one. Raises :class:`FormatError` for the first
    record (in batch order) that cannot be read.
    """
    r320 = recs.filter(pl.col("code") == "320").join(events.select("tournament", "scale", "mp_scale"),
                                                     on="tournament", maintain_order="left")
    r320 = r320.with_columns(pl.col("text").str.slice(4, 4).alias("_mpt"), pl.col("text").str.slice(9, 4).alias("_gpt"))
    r320 = r320.with_columns(units_of(r320, "_mpt", "mp_scale").alias("_pmp"),
                             units_of(r320, "_gpt", "scale").alias("_pgp"))
    r330 = recs.filter(pl.col("code") == "330").with_columns(
        pl.col("text").str.slice(4, 2).alias("_kind"), _digits(pl.col("text").str.slice(6)).alias("_n"))
    r240 = recs.filter(pl.col("code") == "240").with_columns(
        pl.col("text").str.slice(4, 1).str.to_uppercase().alias("_kind"),
        _digits(pl.col("text").str.slice(5)).alias("_n"))
    bad = [
        (r320.filter(pl.col("_pmp").is_null() | pl.col("_pgp").is_null()),
         "team PAB MP (cols 5-8) and GP (cols 10-13) must be points such as 1.0"),
        (r330.filter(~pl.col("_kind").is_in(["+-", "-+", "--"]) | (pl.col("_n").list.len() != 3)),
         "forfeited match needs type +-, -+ or --, round, white team, black team"),
        (r240.filter(~pl.col("_kind").is_in(["H", "Z", "F"]) | (pl.col("_n").list.len() == 0)),
         "team bye needs type H, Z or F and a round")]
    first = pl.concat([b.select("seq", "source", "text", pl.lit(reason).alias("reason")) for b, reason in bad])
    for row in first.sort("seq").head(1).iter_rows(named=True):
        raise FormatError(row["source"], None, f"record {row['text']!r}", row["reason"])
    keys = ["tournament", "team", "round"]
    # 320: from col 14, 4 columns a round, the team that received the PAB (blank or 0 = none)
    pabs = r320.select("tournament", "seq", "_pmp", "_pgp", pl.col("text").str.slice(13).str.extract_all(
        r".{1,4}").alias("team")).with_columns(pl.int_ranges(1, pl.col("team").list.len() + 1).alias("round")
                                                 ).explode("team", "round").with_columns(
        _int(pl.col("team")).alias("team")).filter(pl.col("team") > 0)
    refs = [pabs.select("tournament", "seq", "team", "round")]
    pabs = pabs.unique(keys, keep="last", maintain_order=True).select(*PAB_SCHEMA).cast(
        PAB_SCHEMA)  # type: ignore[arg-type]
    fields = [pl.col("_n").list.get(i) for i in range(3)]
    refs += [r330.select("tournament", "seq", fields[k].alias("team"), fields[0].alias("round")) for k in (1, 2)]
    sides = [r330.select("tournament", (pl.col("seq") * 2 + k).alias("seq"), fields[1 + k].alias("team"),
                         fields[0].alias("round"), pl.col("_kind").replace(
                             {"+-": win_loss[0], "-+": win_loss[1], "--": "double_forfeit"}).alias("_fkind"),
                         fields[2 - k].alias("_fopp"), pl.lit(k == 0).alias("_fwhite"))
             for k, win_loss in ((0, ("forfeit_win", "forfeit_loss")), (1, ("forfeit_loss", "forfeit_win")))]
    forfeits = pl.concat(sides).sort("seq").unique(keys, keep="last", maintain_order=True).select(
        *FORFEIT_SCHEMA).cast(FORFEIT_SCHEMA, strict=False)  # type: ignore[arg-type]
    byes = r240.select("tournament", "seq", pl.col("_n").list.get(0).alias("round"), pl.col("_n").list.slice(1).alias(
        "team"), pl.col("_kind").alias("_bkind")).explode("team").drop_nulls("team")
    refs.append(byes.select("tournament", "seq", "team", "round"))
    byes = byes.unique(keys, keep="last", maintain_order=True).select(*BYE_SCHEMA).cast(
        BYE_SCHEMA, strict=False)  # type: ignore[arg-type]
    ref_schema = {"tournament": pl.Int64, "seq": pl.Int64, "team": pl.Int64, "round": pl.Int64}
    return forfeits, pabs, byes, pl.concat([r.cast(ref_schema) for r in refs])  # type: ignore[arg-type]
