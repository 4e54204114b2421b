"""The team model (rules.md 9.1): teams, members in board order, and one match row per team and round.

Built from a :class:`~tbstats.games.Batch`: the team records the TRF reader keeps verbatim in
``tournaments.records`` (``310``/``013`` teams, ``300`` line-ups, ``320`` team PABs, ``330`` forfeited
matches, ``240`` team byes, ``362`` team scoring) and the player and game tables. The reader keeps no line
numbers for these records, so errors and warnings quote the record itself.

Tables (all keyed by ``tournament`` like the player tables; ``team`` is the team's pairing number):

- ``events``: team scoring (``mp_win``/``mp_draw``/``mp_loss`` in units of ``1/mp_scale``), ``boards``,
  ``primary`` (``MP`` or ``GP``, from ``192``) and ``round_robin``.
- ``teams``: pairing number, name, nickname, strength, declared MP/GP/rank (``310``).
- ``members``: ``player`` (start number, joins ``players.start_no``) and ``order`` (board order, 1-based).
- ``matches``: per team and round, ``opponent`` team (null when none), ``match_type``, ``white``, ``mp``
  (units of ``1/mp_scale``) and ``gp`` (units of ``1/scale``, the individual scoring unit).
- ``boards``: per played match, each fielded board: ``board``, ``player``, ``points``.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Final

import polars as pl

from tbstats.errors import FormatError
from tbstats.games import WARNING_SCHEMA, Batch
from tbstats.teams.matches import (
    BYE_SCHEMA,
    FORFEIT_SCHEMA,
    PAB_SCHEMA,
    derive_matches,
)

EVENT_SCHEMA: Final[dict[str, pl.DataType]] = {
    "tournament": pl.Int64(), "mp_scale": pl.Int32(), "mp_win": pl.Int32(), "mp_draw": pl.Int32(),
    "mp_loss": pl.Int32(), "boards": pl.Int16(), "primary": pl.String(), "round_robin": pl.Boolean()}
TEAM_SCHEMA: Final[dict[str, pl.DataType]] = {
    "tournament": pl.Int64(), "team": pl.Int32(), "name": pl.String(), "nickname": pl.String(),
    "strength": pl.Int32(), "declared_mp": pl.String(), "declared_gp": pl.String(),
    "declared_rank": pl.Int32(), "record": pl.String()}
MEMBER_SCHEMA: Final[dict[str, pl.DataType]] = {
    "tournament": pl.Int64(), "team": pl.Int32(), "player": pl.Int32(), "order": pl.Int16()}
BOARD_SCHEMA: Final[dict[str, pl.DataType]] = {
    "tournament": pl.Int64(), "team": pl.Int32(), "round": pl.Int16(), "board": pl.Int16(),
    "player": pl.Int32(), "points": pl.Int32()}

TEAM_RECORDS: Final = ("013", "310")


@dataclass(frozen=True)
class TeamBatch:
    """The team tables of the team events of a batch, plus the warnings met while building them."""

    events: pl.DataFrame
    teams: pl.DataFrame
    members: pl.DataFrame
    matches: pl.DataFrame
    boards: pl.DataFrame
    warnings: pl.DataFrame

    @property
    def n_events(self) -> int:
        return self.events.height


def team_event_ids(batch: Batch) -> list[int]:
    """Tournaments that are team events: a team type (192/092) or team records (310/013)."""
    t = batch.tournaments
    has_teams = t["records"].list.eval(pl.element().str.slice(0, 3).is_in(TEAM_RECORDS)).list.any()
    return t.filter((pl.col("event_type") == "team") | has_teams.fill_null(False))["tournament"].to_list()


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


def _decimal(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{float(value):g}"


def _number(text: str) -> int | None:
    text = text.strip()
    return int(text) if text.isdigit() else None


def _numbers(text: str) -> list[int]:
    return [int(x) for x in text.split() if x.isdigit()]


def _units(text: str, scale: int) -> int | None:
    text = text.strip()
    if not text:
        return None
    try:
        value = Fraction(text) * scale
    except (ValueError, ZeroDivisionError):
        return None
    return int(value) if value.denominator == 1 else None


@dataclass
class _Event:
    """The parsed 320/330/240 records of one event (a handful per event)."""

    pab: dict[tuple[int, int], tuple[int, int]]     # (round, team) -> (mp, gp) units
    forfeits: dict[tuple[int, int], tuple[str, int, str]]  # (round, team) -> (type, opponent, colour)
    byes: dict[tuple[int, int], tuple[str, str]]    # (round, team) -> (H/Z/F, record)


def _parse_event(source: str, records: list[str], scale: int, mp_scale: int) -> _Event:
    ev = _Event({}, {}, {})
    for text in records:
        code = text[:3]
        if code == "320":
            mp, gp = _units(text[4:8], mp_scale), _units(text[9:13], scale)
            if mp is None or gp is None:
                raise FormatError(source, None, f"record {text!r}", "team PAB MP (cols 5-8) and GP (cols 10-13) "
                                  "must be points such as 1.0")
            for r, start in enumerate(range(13, len(text), 4), start=1):
                team = _number(text[start:start + 4])
                if team:
                    ev.pab[(r, team)] = (mp, gp)
        elif code == "330":
            kind, fields = text[4:6], _numbers(text[6:])
            if kind not in ("+-", "-+", "--") or len(fields) != 3:
                raise FormatError(source, None, f"record {text!r}", "forfeited match needs type +-, -+ or --, "
                                  "round, white team, black team")
            r, white, black = fields
            res = {"+-": ("forfeit_win", "forfeit_loss"), "-+": ("forfeit_loss", "forfeit_win"),
                   "--": ("double_forfeit", "double_forfeit")}[kind]
            ev.forfeits[(r, white)] = (res[0], black, "w")
            ev.forfeits[(r, black)] = (res[1], white, "b")
        elif code == "240":
            kind, fields = text[4:5].upper(), _numbers(text[5:])
            if kind not in ("H", "Z", "F") or not fields:
                raise FormatError(source, None, f"record {text!r}", "team bye needs type H, Z or F and a round")
            for team in fields[1:]:
                ev.byes[(fields[0], team)] = (kind, text)
    return ev


def _int(expr: pl.Expr) -> pl.Expr:
    return expr.str.strip_chars().cast(pl.Int32, strict=False)


def _team_records(t_rows: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Teams, members in board order and 300 line-ups of every event, sliced column-wise from the records.

    310 (TRF26): pairing number 5-7, name 9-40, nickname 42-46, strength 48-53, MP 55-60, GP 62-67, rank
    69-71, members from col 74; 013 (older files, used when an event has no 310): name 5-36, members from
    col 37, teams numbered in order. 300: round, team, opponent team, then the players by board (0 = empty).
    """
    recs = t_rows.select("tournament", "source", pl.col("records").alias("text")).explode("text").drop_nulls(
        "text").with_columns(pl.col("text").str.slice(0, 3).alias("code"))
    has_310 = recs.group_by("tournament").agg((pl.col("code") == "310").any().alias("_310"))
    recs = recs.join(has_310, on="tournament")
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
    members = both.select("tournament", "team", pl.col("_members").str.extract_all(r"\d+").alias("player")).explode(
        "player").drop_nulls("player").with_columns(
        pl.int_range(1, pl.len() + 1).over("tournament", "team").alias("order")).select(
        *MEMBER_SCHEMA).cast(MEMBER_SCHEMA)  # type: ignore[arg-type]
    r300 = recs.filter(pl.col("code") == "300").with_columns(
        pl.col("text").str.slice(4).str.extract_all(r"\d+").cast(pl.List(pl.Int32)).alias("_n"))
    for row in r300.filter(pl.col("_n").list.len() < 3).head(1).iter_rows(named=True):
        raise FormatError(row["source"], None, f"record {row['text']!r}", "line-up needs round, team, opponent team")
    lineups = r300.select(
        "tournament", pl.col("_n").list.get(0).cast(pl.Int16).alias("round"),
        pl.col("_n").list.get(1).alias("team"), pl.col("_n").list.slice(3).alias("player")).explode(
        "player").with_columns(pl.int_range(1, pl.len() + 1).over("tournament", "round", "team").cast(pl.Int16)
                               .alias("_board")).drop_nulls("player")
    return teams, members, lineups


def build_teams(batch: Batch, *, team_pab: tuple[Fraction, Fraction] | None = None) -> TeamBatch:
    """The team tables of every team event in ``batch`` (rules.md 9.1); other events are left out.

    Raises :class:`~tbstats.errors.FormatError` for a board whose opponent belongs to no team or to the
    player's own team, and for a team whose boards face several teams in one round. Warns (``warnings``)
    when a team without opponent in a round is marked by no 320/240 record, and when declared 310 MP/GP
    differ from the computed ones. ``team_pab`` (MP, GP) scores such an unmarked round as a team PAB worth these
    points when the team is the only one of the round without opponent and its boards scored nothing (for
    files that mark no team byes, rules.md 9.8).
    """
    ids = team_event_ids(batch)
    t_rows = batch.tournaments.filter(pl.col("tournament").is_in(ids)).sort("tournament")
    warnings: list[dict[str, object]] = []
    team_df, member_df, lineups = _team_records(t_rows)
    parsed: dict[int, _Event] = {}
    for t in t_rows.select("tournament", "source", "records", "scale").iter_rows(named=True):
        records = [r for r in t["records"] or [] if r[:3] in ("320", "330", "240", "362")]
        mp_scale = math.lcm(*(p.denominator for p in parse_team_scoring(records).values()))
        parsed[t["tournament"]] = _parse_event(t["source"], records, int(t["scale"]), mp_scale)
    games = batch.games.filter(pl.col("tournament").is_in(ids))
    sources = dict(zip(t_rows["tournament"].to_list(), t_rows["source"].to_list(), strict=True))
    g = games.join(member_df, left_on=["tournament", "player"], right_on=["tournament", "player"], how="left").join(
        member_df.select("tournament", "player", pl.col("team").alias("opp_team")),
        left_on=["tournament", "opponent"], right_on=["tournament", "player"], how="left")
    _check_boards(g, sources)
    # a board is fielded when it has an opponent, or was won by default against an empty board of a team
    # that did play a match that round ('0000 - +' beside boards with opponents)
    keys = ["tournament", "team", "round"]
    g = g.filter(pl.col("team").is_not_null()).sort("tournament", "team", "round", "order")
    paired = pl.col("opponent").is_not_null()
    by_default = (pl.col("result") == "+") & ~paired
    per = g.group_by(*keys, maintain_order=True).agg(
        pl.col("opp_team").drop_nulls().first().alias("_opp"),
        pl.col("points").sum().alias("_gp"),
        (pl.col("game_type") == "pending").any().alias("_pending"),
        paired.sum().alias("_paired"),
        by_default.sum().alias("_plus"),
        pl.col("colour").filter(paired).first().alias("_colour"))
    per = per.with_columns((pl.col("_paired") + pl.when(pl.col("_opp").is_not_null()).then(pl.col("_plus"))
                            .otherwise(0)).alias("_fielded")).drop("_paired")
    defaults = g.filter(by_default).join(per.filter(pl.col("_opp").is_not_null()).select(keys), on=keys)
    fielded_rows = pl.concat([g.filter(paired), defaults.select(g.columns)])
    boards_df = _boards(fielded_rows, lineups)
    event_df = _events(t_rows, lineups, per, member_df)
    matches, unmarked = _all_matches(t_rows, parsed, per, event_df, team_df, team_pab)
    warnings += _unmarked_warnings(unmarked, sources)
    warnings += _declared_warnings(team_df, matches, event_df, t_rows)
    return TeamBatch(event_df, team_df.sort("tournament", "team"), member_df.sort("tournament", "team", "order"),
                     matches.sort("tournament", "team", "round"), boards_df,
                     pl.DataFrame(warnings, schema=WARNING_SCHEMA, orient="row") if warnings
                     else pl.DataFrame(schema=WARNING_SCHEMA))


def _check_boards(g: pl.DataFrame, sources: dict[int, str]) -> None:
    """Every board's opponent is in a team other than the player's, and a team meets one team per round."""
    paired = g.filter(pl.col("opponent").is_not_null())
    bad = paired.filter(pl.col("team").is_null() | pl.col("opp_team").is_null()).head(1)
    for row in bad.iter_rows(named=True):
        who = row["player"] if row["team"] is None else row["opponent"]
        raise FormatError(sources[row["tournament"]], None, f"player {row['player']} round {row['round']}",
                          f"player {who} is in no team (310/013 members)")
    same = paired.filter(pl.col("team") == pl.col("opp_team")).head(1)
    for row in same.iter_rows(named=True):
        raise FormatError(sources[row["tournament"]], None, f"player {row['player']} round {row['round']}",
                          f"opponent {row['opponent']} belongs to the same team {row['team']}")
    several = paired.group_by("tournament", "team", "round").agg(pl.col("opp_team").unique().sort()).filter(
        pl.col("opp_team").list.len() > 1).sort("tournament", "team", "round").head(1)
    for row in several.iter_rows(named=True):
        others = ", ".join(str(x) for x in row["opp_team"])
        raise FormatError(sources[row["tournament"]], None, f"team {row['team']} round {row['round']}",
                          f"its boards face players of several teams ({others}); a board whose opponent "
                          "belongs to another team")


def _boards(fielded: pl.DataFrame, lineups: pl.DataFrame) -> pl.DataFrame:
    """Board of each fielded player: position in the 300 line-up, else rank in the team's board order."""
    lu = lineups.filter(pl.col("player") > 0).select("tournament", "round", "team", "player", "_board")
    out = fielded.sort("tournament", "team", "round", "order").join(
        lu, on=["tournament", "round", "team", "player"], how="left", maintain_order="left").with_columns(
        pl.coalesce(pl.col("_board"), pl.int_range(1, pl.len() + 1).over("tournament", "team", "round")
                    .cast(pl.Int16)).alias("board"))
    return out.select(*BOARD_SCHEMA).cast(BOARD_SCHEMA).sort(  # type: ignore[arg-type]
        "tournament", "team", "round", "board")


def _events(t_rows: pl.DataFrame, lineups: pl.DataFrame, per: pl.DataFrame,
            members: pl.DataFrame) -> pl.DataFrame:
    """One row per team event: team scoring (362), boards, primary score (192), round robin (rules.md 4.6)."""
    played = per.filter(pl.col("_opp").is_not_null())
    # boards: the longest line-up, else the most boards fielded in a match, else the most boards won
    # without opponent (a forfeited match won, a team PAB), else the smallest team
    sizes = played.group_by("tournament").agg(pl.col("_fielded").max().alias("_f")).join(
        per.group_by("tournament").agg(pl.col("_plus").max().alias("_p")), on="tournament", how="full",
        coalesce=True).join(members.group_by("tournament", "team").len().group_by("tournament").agg(
            pl.col("len").min().alias("_m")), on="tournament", how="full", coalesce=True)
    sizes = sizes.join(lineups.group_by("tournament").agg(pl.col("_board").max().alias("_l")), on="tournament",
                       how="full", coalesce=True)
    size = {r[0]: r[1:] for r in sizes.iter_rows()}
    pairs = played.filter(pl.col("team") < pl.col("_opp")).group_by("tournament", "team", "_opp").len().group_by(
        "tournament").agg(pl.len().alias("_pairs"), pl.col("len").n_unique().alias("_counts"))
    teams_played = played.group_by("tournament").agg(pl.col("team").n_unique().alias("_n"))
    structure = {r[0]: r[1:] for r in pairs.join(teams_played, on="tournament").iter_rows()}
    rows = []
    for t in t_rows.iter_rows(named=True):
        tid, records = t["tournament"], t["records"] or []
        points = parse_team_scoring(records)
        mp_scale = math.lcm(*(p.denominator for p in points.values()))
        f, plus, smallest, longest = size.get(tid, (None, None, None, None))
        boards = max(int(longest or 0), int(f or 0), int(plus or 0)) or int(smallest or 1)
        text = f"{t['type_code'] or ''} {t['type_text'] or ''}".upper().replace("_", "").replace(" ", "")
        rr = "ROUNDROBIN" in text or "BERGER" in text
        # a 192 code decides (FIDE_TEAM_MP_GP is a Swiss); without one, 092 or the pairings (rules.md 4.6)
        if not rr and not t["type_code"] and "SWISS" not in text and tid in structure:
            n_pairs, counts, n = structure[tid]
            rr = n >= 3 and n_pairs == n * (n - 1) // 2 and counts == 1
        code = str(t["type_code"] or "").upper()
        rows.append({"tournament": tid, "mp_scale": mp_scale, **{f"mp_{k}": int(v * mp_scale) for k, v in
                                                                  points.items()},
                     "boards": boards, "primary": "GP" if "GP_MP" in code else "MP", "round_robin": rr})
    return pl.DataFrame(rows, schema=EVENT_SCHEMA, orient="row") if rows else pl.DataFrame(schema=EVENT_SCHEMA)


def _all_matches(t_rows: pl.DataFrame, parsed: dict[int, _Event], per: pl.DataFrame, events: pl.DataFrame,
                 teams: pl.DataFrame, team_pab: tuple[Fraction, Fraction] | None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Every team's match in every round 1..rounds of its event, from the boards and the 330/320/240 records."""
    forfeits = [(tid, team, r, kind, opp, colour == "w") for tid, ev in parsed.items()
                for (r, team), (kind, opp, colour) in ev.forfeits.items()]
    pabs = [(tid, team, r, mp, gp) for tid, ev in parsed.items() for (r, team), (mp, gp) in ev.pab.items()]
    byes = [(tid, team, r, kind) for tid, ev in parsed.items() for (r, team), (kind, _) in ev.byes.items()]
    last = per.group_by("tournament").agg(pl.col("round").max().alias("_rmax"))
    ev = t_rows.select("tournament", "rounds", "scale", "pts_win", "pts_draw").join(
        last, on="tournament", how="left").join(events, on="tournament")
    if team_pab is not None:
        ev = ev.with_columns((pl.col("mp_scale") * team_pab[0].numerator // team_pab[0].denominator)
                             .cast(pl.Int32).alias("_gmp"),
                             (pl.col("scale") * team_pab[1].numerator // team_pab[1].denominator)
                             .cast(pl.Int32).alias("_ggp"))
    grid = teams.select("tournament", "team").join(ev.select(
        "tournament", pl.int_ranges(1, pl.max_horizontal("rounds", pl.col("_rmax").fill_null(0)).cast(pl.Int64) + 1)
        .alias("round")), on="tournament").explode("round").drop_nulls("round").with_columns(
        pl.col("round").cast(pl.Int16))
    return derive_matches(
        grid, per, ev.drop("rounds", "_rmax", "scale", "mp_scale", "primary"),
        pl.DataFrame(forfeits, schema=FORFEIT_SCHEMA, orient="row"),
        pl.DataFrame(pabs, schema=PAB_SCHEMA, orient="row"), pl.DataFrame(byes, schema=BYE_SCHEMA, orient="row"),
        team_pab is not None)


def _unmarked_warnings(unmarked: pl.DataFrame, sources: dict[int, str]) -> list[dict[str, object]]:
    """One warning per team with rounds without opponent that no 320/240 record marks."""
    out: list[dict[str, object]] = []
    per_team = unmarked.group_by("tournament", "team", "_given", maintain_order=True).agg(pl.col("round"))
    for tid, team, given, rounds in per_team.iter_rows():
        how = ("read as a team PAB with the given MP and GP" if given else
               "read from the points awarded (PAB when every board scored a win, else absent)")
        out.append({"source": sources[tid], "line": None, "field": f"team {team}",
                    "message": f"team {team} has no opponent in round(s) {', '.join(map(str, rounds))} and no "
                               f"320/240 record marks a bye: {how}"})
    return out


def _declared_warnings(teams: pl.DataFrame, matches: pl.DataFrame, events: pl.DataFrame,
                       t_rows: pl.DataFrame) -> list[dict[str, object]]:
    """Declared 310 MP/GP that differ from the ones the matches give (warnings, as for player points)."""
    totals = matches.group_by("tournament", "team").agg(pl.col("mp").sum(), pl.col("gp").sum())
    rows = teams.join(totals, on=["tournament", "team"], how="left").join(
        events.select("tournament", "mp_scale"), on="tournament").join(
        t_rows.select("tournament", "source", "scale"), on="tournament")
    out: list[dict[str, object]] = []
    for r in rows.iter_rows(named=True):
        for key, value, scale in (("mp", r["mp"], r["mp_scale"]), ("gp", r["gp"], r["scale"])):
            declared = _units(r[f"declared_{key}"] or "", scale)
            if declared is not None and value is not None and declared != value:
                out.append({"source": r["source"], "line": None, "field": f"team {r['team']} {key.upper()}",
                            "message": f"declared {key.upper()} {r[f'declared_{key}']} of team {r['team']} "
                                       f"differ from the computed {_decimal(Fraction(value, scale))} "
                                       f"(record {r['record'][:46].rstrip()!r})"})
    return out
