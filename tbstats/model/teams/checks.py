"""Consistency of an event's team records with its teams and its boards (rules.md 9.1), all events at once.

Every check is a join or a group over the parsed records; only the first problem (in batch record order)
is formatted, as a :class:`~tbstats.errors.FormatError` naming the file, the record's line (found again in
the file, :mod:`tbstats.model.teams.where`; else the record is quoted), the field and what was expected:

- a team's pairing number is at least 1, and each member (310/013) has a 001 record;
- the 320, 330, 240 and 300 records name teams of the event and rounds of the event;
- a 300 line-up lists members of its team (or 0000, an empty board), and names the team's opponent of
  that round when the boards show one;
- a 320 team PAB, a 330 forfeited match or a 240 bye is not given to a team whose boards show a match
  played against another team in that round.

A team that lists no member is a warning (:func:`empty_teams`): it can only be absent. So is one team and
round given two kinds of unplayed round (320, 330, 240): the first of 330, 320, 240 decides.
"""

from __future__ import annotations

from typing import Final, NoReturn

import polars as pl

from tbstats.errors import FormatError
from tbstats.model.teams.where import place, record_lines

#: The field of each record code that names teams and rounds (rules.md 9.1).
FIELDS: Final = {"320": "320 team PAB (team per round from col 14)", "330": "330 forfeited match (round 8-10, "
                 "teams 12-18)", "240": "240 team bye (round 7-9, teams from col 11)",
                 "300": "300 line-up (round 5-7, team 9-11, opponent 13-15)"}


def _raise(recs: pl.DataFrame, seq: int, field: str, reason: str, other: int | None = None) -> NoReturn:
    """The FormatError at record ``seq`` (and naming record ``other``, when given)."""
    rows = {r["seq"]: r for r in recs.filter(pl.col("seq").is_in([seq, other])).iter_rows(named=True)}
    row = rows[seq]
    texts = [row["text"]] + ([rows[other]["text"]] if other is not None else [])
    lines = record_lines(row["source"], texts)
    quoted = f" (record {row['text'].rstrip()!r})" if lines[0] is None else ""
    if other is not None:
        reason += f" ({place(lines[1], texts[1])})"
    raise FormatError(row["source"], lines[0], field, reason + quoted)


def _first(frame: pl.DataFrame) -> dict[str, object] | None:
    return frame.sort("seq").row(0, named=True) if frame.height else None


def check_teams(recs: pl.DataFrame, teams: pl.DataFrame, members: pl.DataFrame, players: pl.DataFrame) -> None:
    """Pairing numbers are at least 1 and every member has a 001 record."""
    seq_of = recs.select("tournament", "seq", pl.col("text").alias("record"))
    bad = teams.filter(pl.col("team") < 1).join(seq_of, on=["tournament", "record"])
    if (row := _first(bad)) is not None:
        _raise(recs, int(str(row["seq"])), "310 team pairing number (cols 5-7)",
               f"team number {row['team']} is not a pairing number (expected 1 or more)")
    lost = members.join(players.select("tournament", pl.col("start_no").alias("player")),
                        on=["tournament", "player"], how="anti").join(
        teams.select("tournament", "team", "record"), on=["tournament", "team"]).join(
        seq_of, on=["tournament", "record"])
    if (row := _first(lost)) is not None:
        _raise(recs, int(str(row["seq"])), "310/013 members",
               f"member {row['player']} of team {row['team']} has no 001 record (expected the start rank of a "
               "player of the event)")


def check_references(recs: pl.DataFrame, refs: pl.DataFrame, lineups: pl.DataFrame, teams: pl.DataFrame,
                     members: pl.DataFrame, per: pl.DataFrame, t_rows: pl.DataFrame) -> list[dict[str, object]]:
    """The 320/330/240/300 records against the teams, the rounds and the boards (module docstring); the
    warnings for team-rounds given two kinds of unplayed round."""
    code = recs.select("seq", "code")
    lu = lineups.select("tournament", "seq", "team", "round")
    opp = lineups.select("tournament", "seq", pl.col("_lopp").alias("team"), "round")
    named = pl.concat([refs, lu, opp], how="vertical_relaxed").unique(maintain_order=True).with_columns(
        pl.col("seq").cast(pl.Int64)).join(code.with_columns(pl.col("seq").cast(pl.Int64)), on="seq")
    known = teams.select("tournament", pl.col("team").cast(pl.Int64), pl.lit(True).alias("_known"))
    last = per.group_by("tournament").agg(pl.col("round").max().alias("_last"))
    rounds = t_rows.select("tournament", pl.col("rounds").cast(pl.Int64)).join(last, on="tournament", how="left")
    named = named.join(known, on=["tournament", "team"], how="left").join(rounds, on="tournament", how="left")
    most = pl.max_horizontal(pl.col("rounds").fill_null(0), pl.col("_last").fill_null(0).cast(pl.Int64))
    if (row := _first(named.filter(pl.col("_known").is_null()))) is not None:
        _raise(recs, int(str(row["seq"])), FIELDS[str(row["code"])],
               f"team {row['team']} is not a team of the event (expected a 310/013 pairing number)")
    if (row := _first(named.filter((pl.col("round") < 1) | (pl.col("round") > most)).with_columns(
            most.alias("_most")))) is not None:
        _raise(recs, int(str(row["seq"])), FIELDS[str(row["code"])],
               f"round {row['round']} is not a round of the event (expected 1 to {row['_most']})")
    stranger = lineups.filter(pl.col("player") > 0).join(
        members.select("tournament", "team", "player"), on=["tournament", "team", "player"], how="anti")
    if (row := _first(stranger)) is not None:
        _raise(recs, int(str(row["seq"])), "300 line-up players (from col 17)",
               f"player {row['player']} is not a member of team {row['team']} (expected its 310/013 members or "
               "0000 for an empty board)")
    keys = ["tournament", "team", "round"]
    played = per.filter(pl.col("_opp").is_not_null()).select(*keys, "_opp").cast(
        {"team": pl.Int64, "round": pl.Int64})
    other = lu.join(opp.rename({"team": "_lopp"}), on=["tournament", "seq", "round"]).cast(
        {"team": pl.Int64, "round": pl.Int64}).join(played, on=keys).filter(pl.col("_lopp") != pl.col("_opp"))
    if (row := _first(other)) is not None:
        _raise(recs, int(str(row["seq"])), FIELDS["300"],
               f"team {row['team']} meets team {row['_opp']} in round {row['round']} on the boards, not team "
               f"{row['_lopp']}")
    unplayed = named.filter(pl.col("code") != "300").select(*keys, "seq", "code")
    clash = unplayed.join(played, on=keys)
    if (row := _first(clash)) is not None:
        _raise(recs, int(str(row["seq"])), FIELDS[str(row["code"])],
               f"team {row['team']} played a match against team {row['_opp']} in round {row['round']} (its "
               "boards have opponents of that team), so it has no unplayed round there")
    return _two_kinds(recs, unplayed)


#: Which record decides a team-round given two kinds of unplayed round (tbstats.model.teams.matches).
_PRECEDENCE: Final = {"330": 0, "320": 1, "240": 2}
_NAMES: Final = {"330": "330 forfeited match", "320": "320 team PAB", "240": "240 bye"}


def _two_kinds(recs: pl.DataFrame, unplayed: pl.DataFrame) -> list[dict[str, object]]:
    """A warning per team and round given two kinds of unplayed round (320, 330, 240): FIDE's TRF-2026
    sample gives a team both a 240 half-point bye and the 320 PAB of a round. The first of 330, 320, 240
    decides (tbstats.model.teams.matches); rules.md is silent."""
    keys = ["tournament", "team", "round"]
    both = unplayed.unique([*keys, "code"], keep="last", maintain_order=True).filter(
        pl.col("code").n_unique().over(keys) > 1).join(recs.select(
            pl.col("seq").cast(pl.Int64), "source", "text"), on="seq").with_columns(
        pl.col("code").replace_strict(_PRECEDENCE, return_dtype=pl.Int8).alias("_rank")).sort(*keys, "_rank")
    out: list[dict[str, object]] = []
    for _, part in both.group_by(keys, maintain_order=True):
        rows = part.to_dicts()
        lines = record_lines(str(rows[0]["source"]), [str(r["text"]) for r in rows])
        named = " and ".join(f"{_NAMES[str(r['code'])]} ({place(ln, str(r['text']))})"
                             for r, ln in zip(rows, lines, strict=True))
        out.append({"source": rows[0]["source"], "line": lines[0], "field": f"team {rows[0]['team']} round "
                    f"{rows[0]['round']}", "message": f"team {rows[0]['team']} is given {named} in round "
                    f"{rows[0]['round']}: read as the {_NAMES[str(rows[0]['code'])]}"})
    return out


def empty_teams(teams: pl.DataFrame, t_rows: pl.DataFrame) -> list[dict[str, object]]:
    """One warning per team of ``teams`` (the teams that list no member): it is read as absent in every round."""
    empty = teams.join(t_rows.select("tournament", "source"), on="tournament", maintain_order="left")
    out: list[dict[str, object]] = []
    for (source,), part in empty.partition_by("source", as_dict=True, maintain_order=True).items():
        lines = record_lines(str(source), part["record"].to_list())
        for team, line in zip(part["team"].to_list(), lines, strict=True):
            out.append({"source": source, "line": line, "field": "310/013 members",
                        "message": f"team {team} lists no member (expected start ranks from col 74 of 310, col 37 "
                                   "of 013): it is absent in every round"})
    return out
