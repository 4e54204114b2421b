"""``299`` records: points adjustments (penalties, bonuses, abnormal points) for players or teams (rules.md 2.3, 9.1).

A 299 record: type at col 5, match points (MP) around cols 8-11, points (game points for a team) around cols
14-17, round around cols 20-22, then the participants (start ranks in an individual event, team pairing
numbers in a team event). FIDE's TRF-2026 team sample writes the same fields one to three columns to the
left (``299 +  2.0  2.5   1    1``, header ``T MMMM GGGG RRR PPP1``), so fields are read as blank-separated
numbers placed by the column where they end: MP up to col 11, points up to col 17, round up to col 22, ids
after.

How tbstats applies them (rules.md is silent; a decision, documented in the README):

- blank type: a penalty or bonus, added to the participant's score as written (signed);
- a type ``W D L F H Z + -``: abnormal points for a round of that kind: the participant gets the record's
  points instead of the event's scoring for that kind, so the score changes by the difference (for a team:
  MP against the 362 match scoring, GP against that kind on every board);
- the change enters the participant's own score, hence its rank and the ``points`` / ``mp`` / ``gp``
  columns (and MPvGP and SSSC, which read the scores), from its round on (no round: from round 1). It does
  not change the round results that tie-breaks read: opponents' Buchholz, Sonneborn-Berger, ESB, EDE and
  the dummy of an unplayed round (16.4) use the scores the results give.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Final, NoReturn

import numpy as np
import polars as pl

from tbstats.errors import FormatError
from tbstats.model.batch import Batch
from tbstats.model.columns import lists_with, player_rows
from tbstats.model.games import DRAW, GAME_TYPE, LOSS, WIN
from tbstats.model.teams import team_event_ids
from tbstats.model.teams.where import record_lines, source_of

#: A 299 type: the kind of round it re-scores (blank: a penalty or bonus).
KINDS: Final = {"W": "win", "D": "draw", "L": "loss", "+": "forfeit_win", "-": "forfeit_loss",
                "F": "full_bye", "H": "half_bye", "Z": "zero_bye"}
#: The rounds each type re-scores: game types (a team's match type read as one, tbstats.engine.teams.dense) and
#: the outcome a played round must have.
ROUND_KINDS: Final = {
    "win": (("played",), WIN), "draw": (("played",), DRAW), "loss": (("played",), LOSS),
    "forfeit_win": (("forfeit_win",), None), "forfeit_loss": (("forfeit_loss", "double_forfeit"), None),
    "full_bye": (("full_bye", "pab"), None), "half_bye": (("half_bye",), None),
    "zero_bye": (("zero_bye", "absent"), None)}
_MP_END, _POINTS_END, _ROUND_END = 11, 17, 22
CHANGE_SCHEMA: Final[dict[str, pl.DataType]] = {
    "tournament": pl.Int64(), "id": pl.Int32(), "round": pl.Int16(), "kind": pl.String(), "value": pl.Int64(),
    "record": pl.String()}
TEAM_CHANGE_SCHEMA: Final[dict[str, pl.DataType]] = {
    "tournament": pl.Int64(), "id": pl.Int32(), "round": pl.Int16(), "kind": pl.String(), "mp": pl.Int64(),
    "gp": pl.Int64()}
DELTA_SCHEMA: Final[dict[str, pl.DataType]] = {
    "tournament": pl.Int64(), "team": pl.Int32(), "round": pl.Int16(), "mp": pl.Int64(), "gp": pl.Int64(),
    "in_event": pl.Boolean()}


@dataclass(frozen=True)
class Adjustment:
    """One 299 record: ``kind`` '' (penalty/bonus) or a :data:`KINDS` value; None where a field is blank."""

    kind: str
    mp: Fraction | None
    points: Fraction | None
    round: int | None
    ids: tuple[int, ...]


def parse_adjustment(text: str) -> Adjustment:
    """Read a 299 record; ValueError (with a reason) when it cannot be read or names nobody.

    >>> parse_adjustment("299 +  2.0  2.5   1    1")
    Adjustment(kind='forfeit_win', mp=Fraction(2, 1), points=Fraction(5, 2), round=1, ids=(1,))
    >>> parse_adjustment("299    -1.0  -0.5         7   12")      # rules.md columns, no round
    Adjustment(kind='', mp=Fraction(-1, 1), points=Fraction(-1, 2), round=None, ids=(7, 12))
    """
    code = text[4:5].upper() if len(text) > 4 else " "
    if code.strip() and code not in KINDS:
        raise ValueError(f"type {code!r} (col 5) is not one of W D L F H Z + - or blank")
    mp = points = None
    round_no: int | None = None
    ids: list[int] = []
    for m in re.finditer(r"\S+", text[5:]):
        end, value = m.end() + 5, m.group()
        try:
            if end <= _MP_END:
                mp = Fraction(value)
            elif end <= _POINTS_END:
                points = Fraction(value)
            elif end <= _ROUND_END:
                round_no = int(value)
            else:
                ids.append(int(value))
        except (ValueError, ZeroDivisionError):
            raise ValueError(f"{value!r} (ending at col {end}) is not a number") from None
    if not ids:
        raise ValueError("it names no player or team (ids from col 24)")
    if mp is None and points is None:
        raise ValueError("it gives neither match points (cols 8-11) nor points (cols 14-17)")
    if round_no is not None and round_no < 1:
        raise ValueError(f"round {round_no} (cols 20-22) is not a round")
    if code.strip() and round_no is None:
        raise ValueError(f"type {code} re-scores a round: it needs the round (cols 20-22)")
    return Adjustment(KINDS.get(code, ""), mp, points, round_no, tuple(ids))


def describe(text: str, team_event: bool) -> str:
    """What tbstats does with a 299 record, for the reader's warning at its line."""
    try:
        a = parse_adjustment(text)
    except ValueError as exc:
        return f"299 record not understood ({exc}): ignored"
    who = ("team" if team_event else "player") + ("s " if len(a.ids) > 1 else " ") + ", ".join(map(str, a.ids))
    signed = not a.kind
    if team_event:
        fields = [f"MP {_num(a.mp, signed)}"] if a.mp is not None else []
        fields += [f"GP {_num(a.points, signed)}"] if a.points is not None else []
    else:
        fields = [f"points {_num(a.points, signed)}"] if a.points is not None else ["no points (cols 14-17)"]
    if signed:
        when = f" from round {a.round}" if a.round else ""
        return (f"299 adjusts {who}: penalty/bonus {', '.join(fields)}; applied to the score{when} (the rank "
                "follows), not to the results that tie-breaks read")
    kind = a.kind.replace("_", " ")
    return (f"299 adjusts {who}: round {a.round} scores {', '.join(fields)} where that round is a {kind}; "
            "applied to the score (the rank follows), not to the results that tie-breaks read")


def _num(value: Fraction, signed: bool) -> str:
    text = str(value.numerator) if value.denominator == 1 else f"{float(value):g}"
    return f"+{text}" if signed and value > 0 else text


def records(batch: Batch, tournaments: list[int] | None = None) -> list[tuple[int, str, Adjustment]]:
    """The readable 299 records of the given tournaments (default: all), with their tournament ids and texts.

    Records that cannot be read are left out (the reader warned at their line); a record of a round past the
    event's last round (its planned rounds) raises :class:`FormatError` at its line.
    """
    t = batch.tournaments.select("tournament", "rounds", "records")
    if tournaments is not None:
        t = t.filter(pl.col("tournament").is_in(tournaments))
    rows = t.explode("records").drop_nulls("records").filter(pl.col("records").str.starts_with("299"))
    out = []
    for tid, rounds, text in rows.iter_rows():
        try:
            a = parse_adjustment(text)
        except ValueError:
            continue
        if a.round is not None and a.round > rounds:
            source = source_of(batch.tournaments, tid)
            raise FormatError(source, record_lines(source, [text])[0], "299 round (cols 20-22)",
                              f"round {a.round} is past the event's last round ({rounds}) "
                              f"(record {text.rstrip()!r})")
        out.append((int(tid), text, a))
    return out


def penalties(records: list[list[str] | None], team: list[bool]) -> list[tuple[int, int, Fraction]]:
    """(event, start rank, points) of every player penalty/bonus (a blank-type 299 record) of the individual
    events among ``records`` (one list of kept records per event): what declared points may include."""
    out = []
    for ev, recs in enumerate(records):
        if team[ev]:
            continue
        for text in recs or []:
            if not text.startswith("299"):
                continue
            try:
                a = parse_adjustment(text)
            except ValueError:
                continue
            if not a.kind and a.points is not None:
                out += [(ev, pid, a.points) for pid in a.ids]
    return out


def has_adjustments(batch: Batch) -> bool:
    """Whether any tournament of ``batch`` keeps a 299 record (cheap; most batches have none)."""
    return bool(lists_with(batch.tournaments["records"], (b"299",)).any())


def units(value: Fraction | None, scale: int) -> int | None:
    """A record's value in units of ``1/scale``; None when absent or not a whole number of units."""
    if value is None:
        return None
    u = value * scale
    return int(u) if u.denominator == 1 else None


def player_changes(batch: Batch) -> pl.DataFrame:
    """The 299 changes of the players of the individual events of ``batch``: ``tournament``, ``id`` (start
    rank), ``round``, ``kind`` ('' for a penalty/bonus), ``value`` (units of the event's scale: the change
    itself for a penalty/bonus, the points the round is worth for a type) and the ``record``. Values that
    are absent or not a whole number of units are left out (the reader's warning says what the record asks)."""
    teams = set(team_event_ids(batch))
    adj = [(tid, text, a) for tid, text, a in records(batch) if tid not in teams]
    wanted = {tid for tid, _, _ in adj}
    scale = dict(batch.tournaments.filter(pl.col("tournament").is_in(list(wanted))).select(
        "tournament", "scale").iter_rows())
    out = []
    for tid, text, a in adj:
        value = units(a.points, int(scale[tid]))
        if value is not None:
            out += [(tid, pid, a.round or 1, a.kind, value, text) for pid in a.ids]
    return pl.DataFrame(out, schema=CHANGE_SCHEMA, orient="row")


def unknown_id(batch: Batch, tournament: int, record: str, who: str, wanted: str) -> NoReturn:
    """Raise the FormatError of a 299 record naming a participant its event does not have."""
    source = source_of(batch.tournaments, tournament)
    line = record_lines(source, [record])[0]
    raise FormatError(source, line, "299 ids (from col 24)",
                      f"{who} is not {wanted} (record {record.rstrip()!r})")


def team_changes(batch: Batch, events: pl.DataFrame, teams: pl.DataFrame) -> pl.DataFrame:
    """The 299 changes of the teams of the team events of ``batch`` (``events``, ``teams``: the team model's
    tables), as :func:`player_changes` with ``mp`` (units of 1/mp_scale) and ``gp`` (of 1/scale), null
    where the record gives none. Raises FormatError for a record naming a team its event does not have."""
    known = set(teams.select("tournament", "team").iter_rows())
    adj = records(batch, events["tournament"].to_list())
    info = {r["tournament"]: r for r in events.join(batch.tournaments, on="tournament").iter_rows(named=True)}
    out = []
    for tid, text, a in adj:
        for team in a.ids:
            if (tid, team) not in known:
                unknown_id(batch, tid, text, f"team {team}", "a team of the event (310/013 pairing numbers)")
        e = info[tid]
        mp, gp = units(a.mp, int(e["mp_scale"])), units(a.points, int(e["scale"]))
        if mp is not None or gp is not None:
            out += [(tid, team, a.round or 1, a.kind, mp, gp) for team in a.ids]
    return pl.DataFrame(out, schema=TEAM_CHANGE_SCHEMA, orient="row")


def team_deltas(batch: Batch, events: pl.DataFrame, teams: pl.DataFrame, matches: pl.DataFrame) -> pl.DataFrame:
    """The score change of every 299 record of the team events and team it names (:func:`deltas` read on the
    team's match of that round, as the team views read it, tbstats.engine.teams.dense): ``tournament``, ``team``,
    ``round``, ``mp`` and ``gp`` (units of 1/mp_scale and of 1/scale) and ``in_event`` (the event has that
    round). Empty when the batch has no 299 record; FormatError as :func:`team_changes`."""
    from tbstats.model.teams.matches import AS_GAME_TYPE, MATCH_TYPES  # (team events only)

    if not has_adjustments(batch):
        return pl.DataFrame(schema=DELTA_SCHEMA)
    changes = team_changes(batch, events, teams)
    keys = ["tournament", "team", "round"]
    cells = changes.rename({"id": "team", "mp": "_vmp", "gp": "_vgp"}).join(
        matches.select(*keys, "match_type", "mp", "gp"), on=keys, how="left", maintain_order="left").join(
        events.select("tournament", "mp_win", "mp_draw"), on="tournament", how="left", maintain_order="left")
    as_game = {m: GAME_TYPE[AS_GAME_TYPE[m]] for m in MATCH_TYPES}
    played = (cells["match_type"] == "played").fill_null(False).to_numpy()
    mp = cells["mp"].fill_null(0).to_numpy()
    outcome = np.where(played, np.where(mp >= cells["mp_win"].to_numpy(), WIN,
                                        np.where(mp >= cells["mp_draw"].to_numpy(), DRAW, LOSS)), LOSS)
    gtype = cells["match_type"].cast(pl.String).replace_strict(as_game, default=GAME_TYPE["absent"],
                                                              return_dtype=pl.Int8).to_numpy()
    kind = cells["kind"].to_numpy()
    out = {k: cells[k] for k in keys} | {"in_event": cells["match_type"].is_not_null()}
    for unit in ("mp", "gp"):
        value = cells[f"_v{unit}"]
        out[unit] = pl.Series(unit, deltas(kind, value.fill_null(0).to_numpy(), value.is_not_null().to_numpy(),
                                           cells[unit].fill_null(0).to_numpy(), gtype, outcome))
    return pl.DataFrame(out).select(*DELTA_SCHEMA).cast(DELTA_SCHEMA)  # type: ignore[arg-type]


def deltas(kind: np.ndarray, value: np.ndarray, present: np.ndarray, pts: np.ndarray, gtype: np.ndarray,
           outcome: np.ndarray) -> np.ndarray:
    """Score change of each 299 row: a penalty/bonus as written; a type only where the round (``pts``,
    ``gtype``, ``outcome`` of that participant and round) is of that kind, by the value minus the points
    the round gave; 0 where ``present`` is False (the record gives no value for this unit)."""
    match = np.zeros(len(kind), dtype=bool)
    for name, (types, result) in ROUND_KINDS.items():
        codes = [GAME_TYPE[t] for t in types]
        match |= (kind == name) & np.isin(gtype, codes) & ((outcome == result) if result is not None else True)
    delta = np.where(kind == "", value, np.where(match, value - pts, 0))
    return np.where(present, delta, 0).astype(np.int64)


def grid(rows: np.ndarray, rounds: np.ndarray, delta: np.ndarray, shape: tuple[int, int]) -> np.ndarray | None:
    """A participants x rounds grid of score changes, None when there are none; changes of rounds past the
    grid (never counted) are left out."""
    keep = (rounds <= shape[1]) & (delta != 0)
    if not keep.any():
        return None
    out = np.zeros(shape, dtype=np.int64)
    np.add.at(out, (rows[keep], rounds[keep] - 1), delta[keep])
    return out


def bonus_cells(batch: Batch, t_ids: np.ndarray, tix: np.ndarray, start_no: np.ndarray,
                row_cell: Callable[[np.ndarray], np.ndarray], n: np.ndarray, trash: int,
                flats: tuple[np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray | None:
    """The dense view's flat buffer of 299 score changes of the individual events' players (None when there
    are none); ``row_cell``: the first cells of players (rows); ``flats``: the points, game type and outcome
    buffers (a type re-scores only a round of its kind), their last cell the spare ``trash`` one."""
    if not has_adjustments(batch):
        return None
    adj = player_changes(batch)
    if adj.is_empty():
        return None
    a_tix = np.searchsorted(t_ids, adj["tournament"].to_numpy())   # t_ids: sorted
    rows, found = player_rows(tix, start_no, a_tix, adj["id"].to_numpy())
    if not found.all():
        bad = int(np.argmin(found))
        unknown_id(batch, int(adj["tournament"][bad]), str(adj["record"][bad]), f"player {adj['id'][bad]}",
                   "a start rank of the event (its 001 records)")
    rnd = adj["round"].to_numpy().astype(np.int64)
    ok = found & (rnd <= n[a_tix])
    cell = np.where(ok, row_cell(rows) + rnd - 1, trash)
    at = np.where(ok, cell, 0)
    pts, gtype, outcome = (f[at] if len(f) else np.zeros(len(at), dtype=f.dtype) for f in flats)
    delta = deltas(adj["kind"].to_numpy(), adj["value"].to_numpy(), ok, pts, gtype, outcome)
    if not delta.any():
        return None
    out = np.zeros(trash + 1, dtype=np.int64)
    np.add.at(out, cell, delta)
    out[trash] = 0
    return out
