"""The team model (rules.md 9.1): teams, members in board order, and one match row per team and round.

Built from a :class:`~tbstats.model.batch.Batch`: the team records the TRF reader keeps verbatim in
``tournaments.records`` (``310``/``013`` teams, ``300`` line-ups, ``320`` team PABs, ``330`` forfeited
matches, ``240`` team byes, ``362`` team scoring; parsed by :mod:`tbstats.model.teams.records`) and the player and
game tables, all events at once. The reader keeps no line numbers for these records: errors and warnings
find a record's line again in its file (:mod:`tbstats.model.teams.where`), else quote the record itself.

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

from dataclasses import dataclass
from fractions import Fraction
from typing import Final

import polars as pl

from tbstats.errors import TbstatsError
from tbstats.model.adjust import team_deltas
from tbstats.model.batch import Batch
from tbstats.model.games import WARNING_SCHEMA
from tbstats.model.teams import team_event_ids
from tbstats.model.teams.boards import team_games
from tbstats.model.teams.checks import check_references, empty_teams
from tbstats.model.teams.matches import derive_matches
from tbstats.model.teams.records import (
    MEMBER_SCHEMA,
    TEAM_SCHEMA,
    exploded,
    parse_team_scoring,
    scoring,
    team_records,
    units_of,
    unplayed_records,
)
from tbstats.model.teams.where import record_lines

__all__ = ["BOARD_SCHEMA", "EVENT_SCHEMA", "MEMBER_SCHEMA", "TEAM_SCHEMA", "TeamBatch", "build_teams",
           "parse_team_scoring", "team_event_ids"]

EVENT_SCHEMA: Final[dict[str, pl.DataType]] = {
    "tournament": pl.Int64(), "mp_scale": pl.Int32(), "mp_win": pl.Int32(), "mp_draw": pl.Int32(),
    "mp_loss": pl.Int32(), "boards": pl.Int16(), "primary": pl.String(), "round_robin": pl.Boolean()}
BOARD_SCHEMA: Final[dict[str, pl.DataType]] = {
    "tournament": pl.Int64(), "team": pl.Int32(), "round": pl.Int16(), "board": pl.Int16(),
    "player": pl.Int32(), "points": pl.Int32()}


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


def _decimal(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{float(value):g}"


def build_teams(batch: Batch, *, team_pab: tuple[Fraction, Fraction] | None = None) -> TeamBatch:
    """The team tables of every team event in ``batch`` (rules.md 9.1); other events are left out.

    Raises :class:`~tbstats.errors.FormatError` for a board whose opponent belongs to no team or to the
    player's own team, for a team whose boards face several teams in one round (:mod:`tbstats.model.teams.boards`),
    for team records that do not fit the event's teams, rounds and boards (:mod:`tbstats.model.teams.checks`) and
    for a 299 record naming no team of its event (:func:`tbstats.model.adjust.team_changes`). Warns (``warnings``)
    when a team lists no member or is given two kinds of unplayed round, when a team without opponent in a
    round is marked by no 320/240 record, and when declared 310 MP/GP differ from the computed ones (after
    the 299 changes). ``team_pab`` (MP, GP) scores such an unmarked round as a team PAB worth these
    points when the team is the only one of the round without opponent and its boards scored nothing (for
    files that mark no team byes, rules.md 9.8).

    All events are built together, record codes and games as columns; Python only formats the warnings.
    """
    ids = team_event_ids(batch)
    t_rows = batch.tournaments.filter(pl.col("tournament").is_in(ids)).sort("tournament")
    recs = exploded(t_rows)
    team_df, member_df, lineups = team_records(t_rows, recs)
    scores = scoring(t_rows, recs).join(t_rows.select("tournament", "scale"), on="tournament",
                                        maintain_order="left")
    forfeits, pabs, byes, refs = unplayed_records(recs, scores)
    games = batch.games.filter(pl.col("tournament").is_in(ids))
    players = batch.players.filter(pl.col("tournament").is_in(ids)).select("tournament", "start_no", "line")
    sorted_teams = team_df.sort("tournament", "team")
    tg = team_games(games, member_df, sorted_teams, t_rows, players, recs)
    per = tg.per
    record_warnings = check_references(recs, refs, lineups, team_df, member_df, per, t_rows)
    boards_df = _boards(tg.fielded, lineups)
    event_df = _events(t_rows, lineups, per, member_df, scores)
    matches, unmarked = _all_matches(t_rows, forfeits, pabs, byes, per, event_df, team_df, team_pab)
    adjusted = team_deltas(batch, event_df, team_df, matches).filter("in_event")
    warnings = (empty_teams(sorted_teams[tg.empty], t_rows) + record_warnings + _unmarked_warnings(unmarked, t_rows)
                + _declared_warnings(team_df, matches, adjusted, event_df, t_rows))
    return TeamBatch(event_df, team_df.sort("tournament", "team"), member_df.sort("tournament", "team", "order"),
                     matches.sort("tournament", "team", "round"), boards_df,
                     pl.DataFrame(warnings, schema=WARNING_SCHEMA, orient="row") if warnings
                     else pl.DataFrame(schema=WARNING_SCHEMA))


def _boards(fielded: pl.DataFrame, lineups: pl.DataFrame) -> pl.DataFrame:
    """Board of each fielded player (rows sorted by team, round and board order): position in the 300
    line-up, else rank in the team's board order."""
    out = fielded
    if lineups.height:
        lu = lineups.filter(pl.col("player") > 0).select("tournament", "round", "team", "player", "_board")
        out = out.join(lu, on=["tournament", "round", "team", "player"], how="left", maintain_order="left"
                       ).with_columns(pl.coalesce("_board", "board").alias("board")).sort(
            "tournament", "team", "round", "board")
    return out.select(*BOARD_SCHEMA).cast(BOARD_SCHEMA)  # type: ignore[arg-type]


def _events(t_rows: pl.DataFrame, lineups: pl.DataFrame, per: pl.DataFrame, members: pl.DataFrame,
            scores: pl.DataFrame) -> pl.DataFrame:
    """One row per team event: team scoring (362), boards, primary score (192), round robin (rules.md 4.6)."""
    played = per.filter(pl.col("_opp").is_not_null())
    # boards: the longest line-up, else the most boards fielded in a match, else the most boards won
    # without opponent (a forfeited match won, a team PAB), else the smallest team
    ev = t_rows.select("tournament", "type_code", "type_text").join(
        scores.drop("scale"), on="tournament", maintain_order="left")
    for part in (played.group_by("tournament").agg(pl.col("_fielded").max().alias("_f")),
                 per.group_by("tournament").agg(pl.col("_plus").max().alias("_p")),
                 members.group_by("tournament", "team").len().group_by("tournament").agg(
                     pl.col("len").min().alias("_m")),
                 lineups.group_by("tournament").agg(pl.col("_board").max().alias("_l")),
                 played.filter(pl.col("team") < pl.col("_opp")).group_by("tournament", "team", "_opp").len()
                 .group_by("tournament").agg(pl.len().alias("_pairs"), pl.col("len").n_unique().alias("_counts")),
                 played.group_by("tournament").agg(pl.col("team").n_unique().alias("_n"))):
        ev = ev.join(part, on="tournament", how="left", maintain_order="left")
    largest = pl.max_horizontal(*(pl.col(c).fill_null(0).cast(pl.Int64) for c in ("_l", "_f", "_p")))
    boards = pl.when(largest > 0).then(largest).otherwise(pl.col("_m").fill_null(1))
    text = pl.concat_str(pl.col("type_code").fill_null(""), pl.lit(" "), pl.col("type_text").fill_null(
        "")).str.to_uppercase().str.replace_all("[_ ]", "")
    named_rr = text.str.contains("ROUNDROBIN", literal=True) | text.str.contains("BERGER", literal=True)
    # a 192 code decides (FIDE_TEAM_MP_GP is a Swiss); without one, 092 or the pairings (rules.md 4.6)
    n = pl.col("_n")
    by_pairings = ((pl.col("type_code").fill_null("") == "") & ~text.str.contains("SWISS", literal=True)
                   & pl.col("_pairs").is_not_null() & (n >= 3) & (pl.col("_pairs") == n * (n - 1) // 2)
                   & (pl.col("_counts") == 1))
    primary = pl.when(pl.col("type_code").fill_null("").str.to_uppercase().str.contains("GP_MP", literal=True)
                      ).then(pl.lit("GP")).otherwise(pl.lit("MP"))
    return ev.select("tournament", "mp_scale", "mp_win", "mp_draw", "mp_loss", boards.alias("boards"),
                     primary.alias("primary"), (named_rr | by_pairings.fill_null(False)).alias("round_robin")
                     ).cast(EVENT_SCHEMA)  # type: ignore[arg-type]


def _all_matches(t_rows: pl.DataFrame, forfeits: pl.DataFrame, pabs: pl.DataFrame, byes: pl.DataFrame,
                 per: pl.DataFrame, events: pl.DataFrame, teams: pl.DataFrame,
                 team_pab: tuple[Fraction, Fraction] | None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Every team's match in every round 1..rounds of its event, from the boards and the 330/320/240 records."""
    last = per.group_by("tournament").agg(pl.col("round").max().alias("_rmax"))
    ev = t_rows.select("tournament", "rounds", "scale", "pts_win", "pts_draw").join(
        last, on="tournament", how="left").join(events, on="tournament")
    if team_pab is not None:
        _check_team_pab(team_pab, ev, t_rows)
        ev = ev.with_columns((pl.col("mp_scale") * team_pab[0].numerator // team_pab[0].denominator)
                             .cast(pl.Int32).alias("_gmp"),
                             (pl.col("scale") * team_pab[1].numerator // team_pab[1].denominator)
                             .cast(pl.Int32).alias("_ggp"))
    return derive_matches(teams.sort("tournament", "team"), per, ev.sort("tournament"), forfeits, pabs, byes,
                          team_pab is not None)


def _check_team_pab(team_pab: tuple[Fraction, Fraction], ev: pl.DataFrame, t_rows: pl.DataFrame) -> None:
    """A team PAB's points must be whole units of each event's match and game points (never rounded)."""
    mp, gp = team_pab
    given = f"--team-pab {float(mp):g}:{float(gp):g}"
    if mp < 0 or gp < 0:
        raise TbstatsError(f"{given}: a team PAB's points cannot be negative")
    inexact = ev.filter(((pl.col("mp_scale") * mp.numerator) % mp.denominator != 0)
                        | ((pl.col("scale") * gp.numerator) % gp.denominator != 0))
    if inexact.height:
        row = inexact.row(0, named=True)
        source = t_rows.filter(pl.col("tournament") == row["tournament"])["source"][0]
        raise TbstatsError(f"{given} is not a whole number of {source}'s points (match points count in steps "
                           f"of {1 / row['mp_scale']:g}, game points in steps of {1 / row['scale']:g})")


def _unmarked_warnings(unmarked: pl.DataFrame, t_rows: pl.DataFrame) -> list[dict[str, object]]:
    """One warning per team with rounds without opponent that no 320/240 record marks."""
    out: list[dict[str, object]] = []
    per_team = unmarked.group_by("tournament", "team", "_given", maintain_order=True).agg(pl.col("round")).join(
        t_rows.select("tournament", "source"), on="tournament", maintain_order="left")
    for _, team, given, rounds, source in per_team.iter_rows():
        how = ("read as a team PAB with the given MP and GP" if given else
               "read from the points awarded (PAB when every board scored a win, else absent)")
        out.append({"source": source, "line": None, "field": f"team {team}",
                    "message": f"team {team} has no opponent in round(s) {', '.join(map(str, rounds))} and no "
                               f"320/240 record marks a bye: {how}"})
    return out


def _declared_warnings(teams: pl.DataFrame, matches: pl.DataFrame, adjusted: pl.DataFrame, events: pl.DataFrame,
                       t_rows: pl.DataFrame) -> list[dict[str, object]]:
    """Declared 310 MP/GP that differ from the ones the matches give after the 299 changes (``adjusted``:
    :func:`tbstats.model.adjust.team_deltas`), as for player points; the warning says when a 299 was applied."""
    keys = ["tournament", "team"]
    totals = pl.concat([matches.select(*keys, "mp", "gp", pl.lit(0).alias("_n")),
                        adjusted.select(*keys, "mp", "gp", ((pl.col("mp") != 0) | (pl.col("gp") != 0)).cast(
                            pl.Int64).alias("_n"))], how="vertical_relaxed").group_by(
        keys).agg(pl.col("mp").sum(), pl.col("gp").sum(), pl.col("_n").sum())
    rows = teams.join(totals, on=keys, how="left", maintain_order="left").join(
        events.select("tournament", "mp_scale"), on="tournament", maintain_order="left").join(
        t_rows.select("tournament", "source", "scale"), on="tournament", maintain_order="left")
    rows = rows.with_columns(units_of(rows, "declared_mp", "mp_scale").alias("_dmp"),
                             units_of(rows, "declared_gp", "scale").alias("_dgp"))
    differs = [(pl.col(f"_d{k}") != pl.col(k)).fill_null(False) for k in ("mp", "gp")]
    out: list[dict[str, object]] = []
    rows = rows.filter(differs[0] | differs[1])
    lines = {source: dict(zip(part["record"], record_lines(source, part["record"].to_list()), strict=True))
             for (source,), part in rows.partition_by("source", as_dict=True).items()}
    for r in rows.iter_rows(named=True):
        after = f" after {r['_n']} applied 299 record{'s' if r['_n'] > 1 else ''}" if r["_n"] else ""
        for key, scale in (("mp", r["mp_scale"]), ("gp", r["scale"])):
            declared, value = r[f"_d{key}"], r[key]
            if declared is not None and value is not None and declared != value:
                out.append({"source": r["source"], "line": lines[r["source"]][r["record"]],
                            "field": f"team {r['team']} {key.upper()}",
                            "message": f"declared {key.upper()} {r[f'declared_{key}']} of team {r['team']} "
                                       f"differ from the computed {_decimal(Fraction(value, scale))}{after} "
                                       f"(record {r['record'][:46].rstrip()!r})"})
    return out
