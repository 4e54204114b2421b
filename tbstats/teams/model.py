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

import math
import re
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from typing import Final

import polars as pl

from tbstats.errors import FormatError
from tbstats.games import WARNING_SCHEMA, Batch

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

EVENT_SCHEMA: Final[dict[str, pl.DataType]] = {
    "tournament": pl.Int64(), "mp_scale": pl.Int32(), "mp_win": pl.Int32(), "mp_draw": pl.Int32(),
    "mp_loss": pl.Int32(), "boards": pl.Int16(), "primary": pl.String(), "round_robin": pl.Boolean()}
TEAM_SCHEMA: Final[dict[str, pl.DataType]] = {
    "tournament": pl.Int64(), "team": pl.Int32(), "name": pl.String(), "nickname": pl.String(),
    "strength": pl.Int32(), "declared_mp": pl.String(), "declared_gp": pl.String(),
    "declared_rank": pl.Int32(), "record": pl.String()}
MEMBER_SCHEMA: Final[dict[str, pl.DataType]] = {
    "tournament": pl.Int64(), "team": pl.Int32(), "player": pl.Int32(), "order": pl.Int16()}
MATCH_SCHEMA: Final[dict[str, pl.DataType]] = {
    "tournament": pl.Int64(), "team": pl.Int32(), "round": pl.Int16(), "opponent": pl.Int32(),
    "match_type": MatchTypeEnum, "white": pl.Boolean(), "mp": pl.Int32(), "gp": pl.Int32()}
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
    points = {"win": Fraction(2), "draw": Fraction(1), "loss": Fraction(0)}
    for text in records:
        if text.startswith("362"):
            for code, value in re.findall(r"T([WDL])\s*(-?\d+(?:\.\d+)?)", text[3:]):
                points[{"W": "win", "D": "draw", "L": "loss"}[code]] = Fraction(value)
    return points


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
    """The parsed team records of one event."""

    teams: list[dict[str, object]]
    members: list[tuple[int, int, int]]              # team, player, order
    lineups: dict[tuple[int, int], list[int]]       # (round, team) -> players by board (0 = empty)
    pab: dict[tuple[int, int], tuple[int, int]]     # (round, team) -> (mp, gp) units
    forfeits: dict[tuple[int, int], tuple[str, int, str]]  # (round, team) -> (type, opponent, record)
    byes: dict[tuple[int, int], tuple[str, str]]    # (round, team) -> (H/Z/F, record)
    has_320: bool


def _parse_event(source: str, records: list[str], scale: int, mp_scale: int) -> _Event:
    ev = _Event([], [], {}, {}, {}, {}, False)
    use_310 = any(r.startswith("310") for r in records)
    k013 = 0
    for text in records:
        code = text[:3]
        if code == "310" and use_310:
            team = _number(text[4:7])
            if team is None:
                raise FormatError(source, None, f"record {text[:40]!r}", "team pairing number (cols 5-7) "
                                  "is not a number")
            ev.teams.append({"team": team, "name": text[8:40].strip(), "nickname": text[41:46].strip() or None,
                             "strength": _number(text[47:53]), "declared_mp": text[54:60].strip() or None,
                             "declared_gp": text[61:67].strip() or None, "declared_rank": _number(text[68:71]),
                             "record": text})
            ev.members += [(team, p, k + 1) for k, p in enumerate(_numbers(text[73:]))]
        elif code == "013" and not use_310:
            k013 += 1
            ev.teams.append({"team": k013, "name": text[4:36].strip(), "nickname": None, "strength": None,
                             "declared_mp": None, "declared_gp": None, "declared_rank": None, "record": text})
            ev.members += [(k013, p, k + 1) for k, p in enumerate(_numbers(text[36:]))]
        elif code == "300":
            fields = _numbers(text[4:])
            if len(fields) < 3:
                raise FormatError(source, None, f"record {text!r}", "line-up needs round, team, opponent team")
            ev.lineups[(fields[0], fields[1])] = fields[3:]
        elif code == "320":
            ev.has_320 = True
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


def _event_table(t: dict[str, object], records: list[str], boards: int, round_robin: bool) -> dict[str, object]:
    points = parse_team_scoring(records)
    mp_scale = math.lcm(*(p.denominator for p in points.values()))
    code = str(t["type_code"] or "").upper()
    return {"tournament": t["tournament"], "mp_scale": mp_scale,
            **{f"mp_{k}": int(v * mp_scale) for k, v in points.items()}, "boards": boards,
            "primary": "GP" if "GP_MP" in code else "MP", "round_robin": round_robin}


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
    teams: list[dict[str, object]] = []
    members: list[tuple[int, int, int, int]] = []
    parsed: dict[int, _Event] = {}
    for t in t_rows.iter_rows(named=True):
        records = t["records"] or []
        mp_scale = math.lcm(*(p.denominator for p in parse_team_scoring(records).values()))
        ev = _parse_event(t["source"], records, int(t["scale"]), mp_scale)
        if not ev.teams:
            raise FormatError(t["source"], None, "teams", "a team event needs 310 or 013 team records")
        parsed[t["tournament"]] = ev
        teams += [{"tournament": t["tournament"], **row} for row in ev.teams]
        members += [(t["tournament"], *m) for m in ev.members]
    team_df = pl.DataFrame(teams, schema=TEAM_SCHEMA, orient="row") if teams else pl.DataFrame(schema=TEAM_SCHEMA)
    member_df = pl.DataFrame(members, schema=MEMBER_SCHEMA, orient="row")
    games = batch.games.filter(pl.col("tournament").is_in(ids))
    sources = dict(zip(t_rows["tournament"].to_list(), t_rows["source"].to_list(), strict=True))
    g = games.join(member_df, left_on=["tournament", "player"], right_on=["tournament", "player"], how="left").join(
        member_df.select("tournament", "player", pl.col("team").alias("opp_team")),
        left_on=["tournament", "opponent"], right_on=["tournament", "player"], how="left")
    _check_boards(g, sources)
    fielded = pl.col("opponent").is_not_null() | ((pl.col("result") == "+") & pl.col("_has_opp_team"))
    g = g.filter(pl.col("team").is_not_null()).with_columns(
        pl.col("opp_team").is_not_null().any().over("tournament", "team", "round").alias("_has_opp_team"))
    per = g.group_by("tournament", "team", "round").agg(
        pl.col("opp_team").drop_nulls().first().alias("_opp"),
        pl.col("points").sum().alias("_gp"),
        (pl.col("game_type") == "pending").any().alias("_pending"),
        fielded.sum().alias("_fielded"),
        ((pl.col("result") == "+") & pl.col("opponent").is_null()).sum().alias("_plus"),
        pl.col("colour").sort_by(pl.when(fielded).then(pl.col("order")).otherwise(9999)).first().alias("_colour"))
    boards_df = _boards(g.filter(fielded), parsed)
    event_rows = []
    match_parts = []
    for t in t_rows.iter_rows(named=True):
        tid = t["tournament"]
        ev = parsed[tid]
        mine = per.filter(pl.col("tournament") == tid)
        played = mine.filter(pl.col("_opp").is_not_null())
        # boards: the longest line-up, else the most boards fielded in a match, else the most boards won
        # without opponent (a forfeited match won, a team PAB), else the smallest team
        n_boards = max([len(v) for v in ev.lineups.values()] + [int(played["_fielded"].max() or 0)]  # type: ignore[arg-type]
                       + [int(mine["_plus"].max() or 0)]) or min(  # type: ignore[arg-type]
            Counter(team for team, _, _ in ev.members).values(), default=1)
        rr = _is_round_robin(t, played)
        erow = _event_table(t, t["records"] or [], n_boards, rr)
        event_rows.append(erow)
        pab = None if team_pab is None else (_units(str(team_pab[0]), int(erow["mp_scale"])),  # type: ignore[call-overload]
                                             _units(str(team_pab[1]), int(t["scale"])))
        match_parts.append(_matches(t, ev, mine, erow, warnings, pab))
    event_df = pl.DataFrame(event_rows, schema=EVENT_SCHEMA, orient="row") if event_rows else pl.DataFrame(
        schema=EVENT_SCHEMA)
    matches = pl.concat(match_parts) if match_parts else pl.DataFrame(schema=MATCH_SCHEMA)
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


def _boards(fielded: pl.DataFrame, parsed: dict[int, _Event]) -> pl.DataFrame:
    """Board of each fielded player: position in the 300 line-up, else rank in the team's board order."""
    lineups = [(tid, rnd, team, player, k + 1) for tid, ev in parsed.items()
               for (rnd, team), players in ev.lineups.items() for k, player in enumerate(players) if player]
    lu = pl.DataFrame(lineups, schema={"tournament": pl.Int64, "round": pl.Int16, "team": pl.Int32,
                                       "player": pl.Int32, "_board": pl.Int16}, orient="row")
    out = fielded.join(lu, on=["tournament", "round", "team", "player"], how="left").with_columns(
        pl.coalesce(pl.col("_board"), pl.col("order").rank("ordinal").over("tournament", "team", "round")
                    .cast(pl.Int16)).alias("board"))
    return out.select(*BOARD_SCHEMA).cast(BOARD_SCHEMA).sort(  # type: ignore[arg-type]
        "tournament", "team", "round", "board")


def _is_round_robin(t: dict[str, object], played: pl.DataFrame) -> bool:
    """A team round robin: declared in 192/092, or every pair of teams met equally often (rules.md 4.6)."""
    text = f"{t['type_code'] or ''} {t['type_text'] or ''}".upper().replace("_", "").replace(" ", "")
    if "ROUNDROBIN" in text or "BERGER" in text:
        return True
    if "SWISS" in text or played.is_empty():
        return False
    teams = played["team"].n_unique()
    pairs = played.filter(pl.col("team") < pl.col("_opp")).group_by("team", "_opp").len()
    return teams >= 3 and pairs.height == teams * (teams - 1) // 2 and pairs["len"].n_unique() == 1


def _matches(t: dict[str, object], ev: _Event, per: pl.DataFrame, erow: dict[str, object],
             warnings: list[dict[str, object]], team_pab: tuple[int | None, int | None] | None) -> pl.DataFrame:
    """One row per team and round 1..rounds: the match type, opponent, MP and GP (rules.md 9.1)."""
    tid, source = int(t["tournament"]), str(t["source"])  # type: ignore[call-overload]
    rounds = max(int(t["rounds"]), int(per["round"].max() or 0))  # type: ignore[call-overload,arg-type]
    W, D = int(t["pts_win"]), int(t["pts_draw"])  # type: ignore[call-overload]
    tw, td, tl = int(erow["mp_win"]), int(erow["mp_draw"]), int(erow["mp_loss"])  # type: ignore[call-overload]
    B = int(erow["boards"])  # type: ignore[call-overload]
    cells = {(r["round"], r["team"]): r for r in per.iter_rows(named=True)}
    team_nos = [int(x["team"]) for x in ev.teams]  # type: ignore[call-overload]
    last_active = {team: max([r for (r, tm), c in cells.items() if tm == team and c["_opp"] is not None]
                             + [r for (r, tm) in ev.forfeits if tm == team] + [0]) for team in team_nos}
    rows: list[tuple[object, ...]] = []
    unmarked: dict[int, list[int]] = {}
    given: dict[int, list[int]] = {}
    # the one team of a round without opponent and without 330/320/240: the pairing-allocated bye candidate
    free: dict[int, list[int]] = {}
    for team in team_nos:
        for r in range(1, rounds + 1):
            c = cells.get((r, team))
            if (c is None or c["_opp"] is None) and not {(r, team)} & (ev.forfeits.keys() | ev.pab.keys()
                                                                    | ev.byes.keys()):
                free.setdefault(r, []).append(team)
    alone = {r: teams[0] for r, teams in free.items() if len(teams) == 1}
    for team in team_nos:
        for r in range(1, rounds + 1):
            c = cells.get((r, team))
            gp = int(c["_gp"]) if c else 0
            if (r, team) in ev.forfeits:
                kind, opp, colour = ev.forfeits[(r, team)]
                mp = tw if kind == "forfeit_win" else tl
                rows.append((tid, team, r, opp, kind, colour == "w", mp, gp))
            elif c is not None and c["_opp"] is not None:
                opp = int(c["_opp"])
                o = cells.get((r, opp))
                ogp = int(o["_gp"]) if o else 0
                kind = "pending" if c["_pending"] else "played"
                mp = tw if gp > ogp else td if gp == ogp else tl
                rows.append((tid, team, r, opp, kind, c["_colour"] != "b", mp, gp))
            elif (r, team) in ev.pab:
                mp, gp = ev.pab[(r, team)]
                rows.append((tid, team, r, None, "pab", None, mp, gp))
            elif (r, team) in ev.byes:
                kind = {"H": "half_bye", "Z": "zero_bye", "F": "full_bye"}[ev.byes[(r, team)][0]]
                mp, gp = {"half_bye": (td, B * D), "zero_bye": (tl, 0), "full_bye": (tw, B * W)}[kind]
                rows.append((tid, team, r, None, kind, None, mp, gp))
            elif team_pab is not None and gp == 0 and alone.get(r) == team:
                given.setdefault(team, []).append(r)
                rows.append((tid, team, r, None, "pab", None, team_pab[0], team_pab[1]))
            elif bool(erow["round_robin"]):
                rows.append((tid, team, r, None, "free_round", None, tl, 0))
            elif gp >= B * W > 0:
                # no 320: every board scored a win without opponent -> a PAB (match win, rules.md 9.1)
                unmarked.setdefault(team, []).append(r)
                rows.append((tid, team, r, None, "pab", None, tw, gp))
            else:
                if r <= last_active[team] or alone.get(r) == team:
                    unmarked.setdefault(team, []).append(r)
                rows.append((tid, team, r, None, "absent", None, tl, gp))
    for team, rs in given.items():
        warnings.append({"source": source, "line": None, "field": f"team {team}",
                         "message": f"team {team} has no opponent in round(s) {', '.join(map(str, rs))} and no "
                                    "320/240 record marks a bye: read as a team PAB with the given MP and GP"})
    for team, rs in unmarked.items():
        warnings.append({"source": source, "line": None, "field": f"team {team}",
                         "message": f"team {team} has no opponent in round(s) {', '.join(map(str, rs))} and no "
                                    "320/240 record marks a bye: read from the points awarded (PAB when every "
                                    "board scored a win, else absent)"})
    return pl.DataFrame(rows, schema=MATCH_SCHEMA, orient="row")


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
