"""Reading a batch of TRF files at once into the columnar model (rules.md Section 2).

All files go into one character buffer (:mod:`.buffer`); player lines are sliced into fields
(:mod:`.players`) and round blocks (:mod:`.games`) by numpy over every line at once; the few header records of
each event are interpreted once per distinct text (:mod:`.headers`). Bad files go to the error table.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import polars as pl

from tbstats.errors import FormatError
from tbstats.io.trf.buffer import Lines, build_buffer, character_codes, decode, int_column, split_lines
from tbstats.io.trf.games import event_rounds, games, games_frame
from tbstats.io.trf.headers import MAX_ROUNDS, ROUND0, tournament_headers
from tbstats.io.trf.players import Players, no_problems, player_fields, problem_rows
from tbstats.io.trf.text import utf8_characters
from tbstats.model.adjust import penalties
from tbstats.model.batch import Batch, source_files
from tbstats.model.columns import lists_with
from tbstats.model.games import (
    GAME_SCHEMA,
    GAME_TYPE,
    PLAYER_SCHEMA,
    SCORING_KINDS,
    TOURNAMENT_SCHEMA,
    WARNING_SCHEMA,
)
from tbstats.model.teams import team_events

ERROR_SCHEMA: Final = {"path": pl.String, "line": pl.Int32, "column": pl.String, "reason": pl.String}
MAX_LINE: Final = ROUND0 + 10 * MAX_ROUNDS
#: Problems that explain others (an opponent that "does not exist", results that "do not complement"...):
#: within a file they come first, so that raise mode reports the cause, not a symptom.
CAUSES: Final = (r"^(duplicate starting rank|'.*' is not a starting rank|player \d+ is paired with themself|"
                 r"line ends at column|line of [\d,]+ characters|round \d+ block '.*' is out of line|"
                 r"(XXR|142|062) \d+|scoring value)")


@dataclass(frozen=True)
class ReadResult:
    """What a read produced: the batch of good events, and one row per problem of each rejected file."""

    batch: Batch
    errors: pl.DataFrame  # path, line, column, reason
    sources: list[str]    # every input, in order


def read_trf(inputs: Sequence[tuple[str, bytes]], *, first_id: int = 0) -> ReadResult:
    """Read TRF files given as ``(source, bytes)`` pairs into one batch; bad files go to ``errors``."""
    errors: list[dict[str, object]] = []
    warnings: list[dict[str, object]] = []
    paths: list[str] = []
    raws: list[bytes] = []
    parts: list[bytes | str] = []
    # ASCII and UTF-8 files (most) by a compiled pass; the others decoded as they come
    quick = utf8_characters([raw for _, raw in inputs])
    for (path, raw), codes in zip(inputs, quick, strict=True):
        if codes is None:
            try:
                codes, note = character_codes(path, raw)
            except (FormatError, UnicodeDecodeError) as exc:
                reason = exc.reason if isinstance(exc, FormatError) else f"undecodable bytes ({exc})"
                errors.append({"path": path, "line": None, "column": None, "reason": reason})
                continue
            if note:
                warnings.append({"source": path, "line": None, "field": "encoding", "message": note})
        paths.append(path)
        raws.append(raw)
        parts.append(codes)

    lines = split_lines(*build_buffer(parts))
    del parts, quick   # (the decoded texts, a copy of the buffer: not held while the fields are read)
    too_long = np.flatnonzero(lines.length > MAX_LINE)
    for i in too_long.tolist():
        errors.append({"path": paths[lines.file[i]], "line": int(lines.line[i]), "column": "line length",
                       "reason": f"line of {int(lines.length[i]):,} characters (at most {MAX_LINE:,}: 91 columns "
                                 f"and {MAX_ROUNDS} round blocks of 10); only its first {MAX_LINE:,} are read"})
    if too_long.size:
        lines = Lines(lines.buf, lines.file, lines.line, lines.start, np.minimum(lines.length, MAX_LINE))
    is001 = lines.code_is("001")
    with_players = np.zeros(len(paths), dtype=bool)
    with_players[lines.file[is001]] = True
    for i in np.flatnonzero(~with_players).tolist():
        text = decode(paths[i], raws[i])[0]
        first = text.lstrip()[:24].splitlines()[0] if text.strip() else ""
        errors.append({"path": paths[i], "line": None, "column": None,
                       "reason": f"no TRF player record '001' found (file starts {first!r}); "
                                 "expected a TRF-16/TRF26 tournament report"})
    keep = with_players[lines.file]
    lines, is001 = lines.subset(keep), is001[keep]
    event, ev_file, ev_k = _events(lines, is001)
    n_events = len(ev_file)
    kfile = np.zeros(len(paths), dtype=np.int64)
    np.maximum.at(kfile, ev_file, ev_k)
    sources = [paths[f] if kfile[f] == 1 else f"{paths[f]}#{k}" for f, k in zip(ev_file.tolist(), ev_k.tolist(),
                                                                               strict=True)]

    players, perr, pnotes = player_fields(lines.subset(is001), event[is001])
    rounds_ev = event_rounds(players, n_events)
    heads = lines.subset(~is001)
    tournaments, twarn, terr = tournament_headers(
        sources, [paths[f] for f in ev_file.tolist()], heads, event[~is001], rounds_ev,
        np.bincount(players.event, minlength=n_events))
    errors.extend(terr)
    points = np.column_stack([tournaments.get_column(f"pts_{k}").to_numpy() for k in SCORING_KINDS]).astype(
        np.int64) if n_events else np.zeros((0, len(SCORING_KINDS)), dtype=np.int64)
    g, gerr, gwarn = games(players, rounds_ev, points)
    tournaments = _complete(tournaments, g, rounds_ev)
    declared, pwarn, pts_err = _declared_points(players, g, tournaments, points, rounds_ev,
                                                bool(heads.code_is("299").any()))
    warnings.extend(twarn)
    warnings.extend(_pending(g, players, tournaments, sources))
    # (the problems of lines and round blocks, which can be one per player, stay columns: no Python row each)
    err_df = pl.concat([_rows(errors, ERROR_SCHEMA), _with_path([perr, pts_err, gerr], paths)])
    # (sets, not ``np.isin`` or ``in`` a list: on object arrays both compare every path with every bad one)
    bad_set = set(err_df["path"].to_list())
    bad = np.fromiter((p in bad_set for p in paths), dtype=bool, count=len(paths))
    good_event = ~bad[ev_file] if n_events else np.zeros(0, dtype=bool)
    ids = np.cumsum(good_event) - 1 + first_id
    t_out = _final(tournaments, TOURNAMENT_SCHEMA, np.arange(n_events), ids, good_event)
    p_out = _final(players.table, PLAYER_SCHEMA, players.event, ids, good_event, declared)
    g_out = _final(games_frame(g), GAME_SCHEMA, g["event"], ids, good_event)
    read = set(paths)
    bad_paths = [p for p, b in zip(paths, bad.tolist(), strict=True) if b] + [
        e["path"] for e in errors if e["path"] not in read]
    w_df = pl.concat([_rows(warnings, WARNING_SCHEMA), _with_path([gwarn, pnotes, pwarn], paths).rename(
        dict(zip(ERROR_SCHEMA, WARNING_SCHEMA, strict=True)))])
    if bad_paths and w_df.height:
        w_df = w_df.filter(~source_files().is_in(bad_paths))
    batch = Batch(t_out, p_out, g_out, w_df)
    if err_df.height > 1:
        cause = pl.col("reason").str.contains(CAUSES)
        err_df = err_df.sort(pl.col("path"), cause.not_(), pl.col("line"), nulls_last=False, maintain_order=True)
    return ReadResult(batch, err_df, [p for p, _ in inputs])


def _final(df: pl.DataFrame, columns: Iterable[str], event: np.ndarray, ids: np.ndarray, good: np.ndarray,
           *extra: pl.Series) -> pl.DataFrame:
    """The model's ``columns`` of a table (from ``df``, or ``extra`` by name), each row's tournament the id of
    its ``event``, only the rows of ``good`` events."""
    given = {s.name: s for s in extra}
    out = pl.DataFrame([pl.Series("tournament", ids[event] if len(event) else [], dtype=pl.Int64)
                        if c == "tournament" else given[c] if c in given else df.get_column(c) for c in columns])
    return out if good.all() else out.filter(pl.Series(good[event]))


def _with_path(frames: list[pl.DataFrame], paths: list[str]) -> pl.DataFrame:
    """The problem rows of ``frames`` in order (file, line, column, reason), each with its file's path instead of
    its file's number: an :data:`ERROR_SCHEMA` frame."""
    rows = [df for df in frames if df.height]
    if not rows:
        return pl.DataFrame(schema=ERROR_SCHEMA)
    df = pl.concat(rows)
    return pl.DataFrame({"path": pl.Series(paths, dtype=pl.String).gather(df["file"]), "line": df["line"],
                         "column": df["column"], "reason": df["reason"]}, schema=ERROR_SCHEMA)


def _rows(rows: list[dict[str, object]], schema: Mapping[str, pl.DataType | type[pl.DataType]]) -> pl.DataFrame:
    """A few problem or warning rows made one by one, as a frame of ``schema``."""
    return pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)


def _run_base(values: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Per row, the running count ``values`` had before the row's run (runs start where ``first``)."""
    starts = np.flatnonzero(first)
    return values[starts][np.cumsum(first) - 1]


def _events(lines: Lines, is001: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Split files into events: a '012' record after player lines starts a new event (``source#k``).

    Returns each line's event number, and each event's file and 1-based number within its file.
    """
    n = len(lines.file)
    if not n:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    new_file = np.ones(n, dtype=bool)
    new_file[1:] = lines.file[1:] != lines.file[:-1]
    count = np.cumsum(is001)
    n001 = count - _run_base(count - is001, new_file)
    at012 = np.flatnonzero(lines.code_is("012"))
    seen = n001[at012]
    prev = np.concatenate([[0], seen[:-1]])
    prev[np.concatenate([[True], lines.file[at012][1:] != lines.file[at012][:-1]])] = 0
    start = np.zeros(n, dtype=bool)
    start[at012[(seen > 0) & (seen != prev)]] = True
    begins = np.cumsum(start)
    k = begins - _run_base(begins - start, new_file) + 1
    event = np.cumsum(new_file | start) - 1
    firsts = np.flatnonzero(new_file | start)
    return event.astype(np.int64), lines.file[firsts].astype(np.int64), k[firsts].astype(np.int64)


#: Game types where the players met (a round with a pairing), by game type id.
_PAIRED: Final = np.isin(np.arange(len(GAME_TYPE)),
                         [GAME_TYPE[k] for k in ("played", "forfeit_win", "forfeit_loss", "double_forfeit")])


def _complete(t: pl.DataFrame, g: dict[str, np.ndarray], rounds_ev: np.ndarray) -> pl.DataFrame:
    """Rounds played and the event type of every event (every line already has a block per round)."""
    n = t.height
    ev, rnd, gt = g["event"], g["round"].astype(np.int64), g["game_type"]
    pending = gt == GAME_TYPE["pending"]
    paired = _PAIRED[gt]
    first_pending = np.full(n, 10_000 + 1, dtype=np.int64)
    np.minimum.at(first_pending, ev[pending], rnd[pending])
    last_paired = _event_max(np.where(paired, rnd, 0), ev, n)
    has_paired = last_paired > 0  # rounds count from 1
    planned = t["rounds"].to_numpy().astype(np.int64)
    # (an event without round blocks and without declared rounds has played none: it used to read as 10,000
    # rounds, each a round without opponent, which gave a Buchholz of millions under the pre-2023 rules)
    counted = np.where(rounds_ev >= planned, rounds_ev, np.where(has_paired, last_paired, rounds_ev))
    played = np.minimum(counted, first_pending - 1)
    declared = t["_declared_type"]
    kind = declared
    if declared.null_count():
        rr = _round_robin(g, declared.is_null().to_numpy(), rounds_ev)
        kind = declared.fill_null(pl.Series(np.where(rr, "round_robin", "swiss")))
    # (a frame of the columns, not a with_columns plan: most calls read a few hundred events)
    return pl.DataFrame({**{c: t.get_column(c) for c in t.columns}, "rounds": t.get_column("rounds").cast(pl.Int16),
                         "rounds_played": pl.Series("rounds_played", played.astype(np.int16)),  # (at most 10,000)
                         "event_type": kind.cast(TOURNAMENT_SCHEMA["event_type"]).alias("event_type")})


def _event_max(values: np.ndarray, event: np.ndarray, n: int) -> np.ndarray:
    """Per event the largest of ``values`` (0 for an event without rows); rows come sorted by event and values
    are at least 0 (one reduction over runs of rows, not a scattered maximum per row)."""
    out = np.zeros(n, dtype=values.dtype)
    if len(event):
        starts = np.flatnonzero(np.concatenate([[True], event[1:] != event[:-1]]))
        out[event[starts]] = np.maximum.reduceat(values, starts)
    return out


def _round_robin(g: dict[str, np.ndarray], undeclared: np.ndarray, rounds_ev: np.ndarray) -> np.ndarray:
    """Events where every pair of players meets the same number of times (at least once), of the undeclared.

    Only events of at least three players with a round block for each of the others can be (each pair meets in
    a round of its own): most undeclared events, Swiss events of fewer rounds than players, are told apart by
    counts alone, and the pairs are counted for the few others (a TRF-16 file has no 192 type code, and a 092
    text may name no type: then every event of an archive comes here). A line without a valid starting rank
    counts as one more player who meets nobody (the file is rejected anyway)."""
    out = np.zeros(len(undeclared), dtype=bool)
    event = g["event"]
    if not undeclared.any() or not len(event):
        return out
    # players per event (rows sorted by event and player; the lines without a valid number first, as one)
    player = np.where(g["player_ok"], g["player"], -1).astype(np.int64)
    new = np.ones(len(event), dtype=bool)
    new[1:] = (event[1:] != event[:-1]) | (player[1:] != player[:-1])
    players = np.bincount(event[new], minlength=len(undeclared))
    maybe = undeclared & (players >= 3) & (rounds_ev >= players - 1)
    if not maybe.any():
        return out
    # each pair once (the lower number's rows), then per event: pairs met, and the fewest and most meetings
    opponent = g["opponent"].astype(np.int64)
    rows = np.flatnonzero(maybe[event] & g["player_ok"] & g["has_opp"] & (player < opponent))
    span = 1 << 15   # (starting ranks have 4 characters: -999 to 9999, shifted to 1 to 11,000)
    pair, met = np.unique((event[rows].astype(np.int64) * span + player[rows] + 1000) * span
                          + opponent[rows] + 1000, return_counts=True)
    ev = pair // (span * span)
    pairs = np.bincount(ev, minlength=len(out))
    fewest = np.full(len(out), np.iinfo(np.int64).max, dtype=np.int64)
    most = np.zeros(len(out), dtype=np.int64)
    np.minimum.at(fewest, ev, met)
    np.maximum.at(most, ev, met)
    return maybe & (pairs == players * (players - 1) // 2) & (fewest == most)


def _declared_points(p: Players, g: dict[str, np.ndarray], t: pl.DataFrame, points: np.ndarray,
                     rounds_ev: np.ndarray, any299: bool) -> tuple[pl.Series, pl.DataFrame, pl.DataFrame]:
    """Declared points in units; a warning where they disagree with the results' total, an error where they
    are not finite or more than the event's rounds can give. ``any299``: some header line starts with 299."""
    n = len(p.event)
    scale = t["scale"].to_numpy()
    sc = scale[p.event] if n else np.zeros(0, dtype=np.int64)
    rounds = np.maximum(t["rounds"].to_numpy().astype(np.int64), rounds_ev)[p.event] if n else sc
    most = (points.max(axis=1) if len(points) else np.zeros(0, dtype=np.int64))[p.event] * rounds if n else sc
    finite = p.points_ok & np.isfinite(p.points)
    scaled = np.where(finite, p.points, 0) * sc
    in_range = finite & (np.abs(scaled) <= np.maximum(most, 0))
    units = np.where(in_range, np.round(np.where(in_range, scaled, 0)), 0).astype(np.int64)
    declared = int_column("declared_points", units, np.int32, ~in_range)
    errors = []
    for mask, reason in ((p.points_ok & ~finite, "'{}' is not a number of points (expected e.g. 11.5)"),
                         (finite & ~in_range, "declared points {} are more than {} rounds can give ({})")):
        rows = mask.nonzero()[0]
        rows = rows[np.argsort(p.order[rows], kind="stable")]
        if rows.size:
            df = pl.DataFrame({"file": p.lines.file[rows], "line": p.lines.line[rows],
                               "_points": p.points_texts(rows), "_rounds": rounds[rows],
                               "_most": most[rows] / sc[rows]})
            args = [pl.col("_points"), pl.col("_rounds"), pl.col("_most").cast(pl.String)][:reason.count("{}")]
            errors.append(problem_rows(df, "points (cols 81-84)", pl.format(reason, *args)))
    blocks = np.bincount(g["line"], minlength=n)  # (a line's blocks are consecutive: one sum per line)
    has_games = blocks > 0
    total = np.zeros(n, dtype=np.int64)
    total[has_games] = np.add.reduceat(g["points"], (np.cumsum(blocks) - blocks)[has_games], dtype=np.int64)
    rows = np.flatnonzero(in_range & has_games & (units != total) & (units != total + _penalties(p, t, any299)))
    rows = rows[np.argsort(p.order[rows], kind="stable")]
    warn = no_problems()
    if rows.size:
        df = pl.DataFrame({"file": p.lines.file[rows], "line": p.lines.line[rows],
                           "_points": p.points_texts(rows), "_sum": total[rows], "scale": sc[rows]})
        warn = problem_rows(df, "points (cols 81-84)", pl.format(
            "declared points {} differ from the results' total {}; the results count", pl.col("_points"),
            (pl.col("_sum") / pl.col("scale")).cast(pl.String)))
    return declared, warn, pl.concat(errors) if errors else no_problems()


def _penalties(p: Players, t: pl.DataFrame, any299: bool) -> np.ndarray:
    """Per player line the points (units) of the 299 penalties/bonuses naming it, which the declared points
    may include (rules.md 2.4: look for 299 records, then warn)."""
    out = np.zeros(len(p.event), dtype=np.int64)
    if not len(p.event) or not any299 or not lists_with(t["records"], (b"299",)).any():
        return out
    team = team_events(t).tolist()
    keys = p.event.astype(np.int64) * 20000 + p.start_no
    scale = t["scale"].to_numpy()
    for ev, pid, points in penalties(t["records"].to_list(), team):
        row = int(np.searchsorted(keys, ev * 20000 + pid))
        if row < len(keys) and keys[row] == ev * 20000 + pid:
            out[row] += int(points * int(scale[ev]))
    return out


def _pending(g: dict[str, np.ndarray], p: Players, t: pl.DataFrame, sources: list[str]) -> list[dict[str, object]]:
    """One warning per event and round with games without result, saying which standings are computed."""
    rows = np.flatnonzero(g["pending"])
    if not rows.size:
        return []
    played = t["rounds_played"].to_numpy()
    rows = rows[np.lexsort((p.order[g["line"][rows]], g["round"][rows], g["event"][rows]))]
    ev, rnd = g["event"][rows], g["round"][rows]
    first = np.ones(len(rows), dtype=bool)
    first[1:] = (ev[1:] != ev[:-1]) | (rnd[1:] != rnd[:-1])
    counts = np.diff(np.concatenate([np.flatnonzero(first), [len(rows)]]))
    out = []
    for i, k in zip(np.flatnonzero(first).tolist(), counts.tolist(), strict=True):
        r = rows[i]
        e = int(g["event"][r])
        out.append({"source": sources[e], "line": int(p.lines.line[g["line"][r]]),
                    "field": f"round {int(g['round'][r])} result",
                    "message": f"games without result in round {int(g['round'][r])}: standings after round "
                               f"{int(played[e])} ({k} game{'s' if k > 1 else ''}, first "
                               f"{int(g['player'][r])}-{int(g['opponent'][r])})"})
    return out
