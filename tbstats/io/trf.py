"""TRF-16, TRF26 and TRF(x) in and out (rules.md Section 2).

Reading is vectorised over every file of a batch at once: the lines of all files go into one polars frame,
fixed-width fields are sliced over whole columns, and checks are joins. Only header records (a handful per
event) are interpreted in Python.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Final

import numpy as np
import polars as pl

from tbstats.errors import FormatError
from tbstats.games import (
    GAME_SCHEMA,
    PLAYER_SCHEMA,
    SCORING_KINDS,
    TOURNAMENT_SCHEMA,
    WARNING_SCHEMA,
    Batch,
    empty,
)
from tbstats.io.dates import resolve_dates
from tbstats.rules import STANDARD_SCORING, TRF26_SCORING_CODES, XXS_CODES, scoring_scale

#: Records interpreted into tournament columns (the writer regenerates them); others are kept verbatim.
HEADER_RECORDS: Final = ("012", "022", "032", "042", "052", "062", "092", "142", "162", "192", "202", "212",
                         "XXR", "XXS")
RESULT_CODES_WITH_OPPONENT: Final = "10=WDL+-"
RESULT_CODES_WITHOUT_OPPONENT: Final = "UFHZ+-"
#: Game results written against no opponent (Krause-style files): read as the matching bye, with a warning.
BYE_ALIASES: Final = {"1": "F", "=": "H", "0": "Z"}
#: Complementary result pairs (rules.md 2.2); a pending pair is blank on both sides.
COMPLEMENTS: Final = {("1", "0"), ("0", "1"), ("=", "="), ("W", "L"), ("L", "W"), ("D", "D"),
                      ("+", "-"), ("-", "+"), ("-", "-"), ("", "")}
ERROR_SCHEMA: Final = {"path": pl.String, "line": pl.Int32, "column": pl.String, "reason": pl.String}
_ROUND0: Final = 91  # 0-based column of round 1's block


@dataclass(frozen=True)
class ReadResult:
    """What a read produced: the batch of good events, and one row per problem of each rejected file."""

    batch: Batch
    errors: pl.DataFrame  # path, line, column, reason
    sources: list[str]    # every input, in order


# ------------------------------------------------------------------------------------------- decoding

def decode(path: str, raw: bytes) -> tuple[str, str | None]:
    """Decode TRF bytes: UTF-8 (BOM or not), else cp1252, else Latin-1; return text and a note.

    Raises :class:`FormatError` for empty files and bytes that are not text.
    """
    if not raw.strip():
        raise FormatError(path, None, None, "empty file (expected TRF records such as '001' player lines)")
    if b"\x00" in raw[:4096]:
        raise FormatError(path, None, None, "binary data, not a TRF text file (NUL bytes found)")
    if raw.startswith(b"\xef\xbb\xbf"):
        return raw[3:].decode("utf-8", errors="strict"), None
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError:
        pass
    try:
        return raw.decode("cp1252"), "not UTF-8: decoded as Windows-1252"
    except UnicodeDecodeError:
        return raw.decode("latin-1"), "not UTF-8 or Windows-1252: decoded as Latin-1"


_LINE_SPLIT = re.compile(r"\r\n|\r|\n")


# --------------------------------------------------------------------------------------------- reading

def read_trf(inputs: Sequence[tuple[str, bytes]], *, first_id: int = 0) -> ReadResult:
    """Read TRF files given as ``(source, bytes)`` pairs into one batch; bad files go to ``errors``."""
    errors: list[dict[str, object]] = []
    warnings: list[dict[str, object]] = []
    paths: list[str] = []
    texts: list[str] = []
    for path, raw in inputs:
        try:
            text, note = decode(path, raw)
        except (FormatError, UnicodeDecodeError) as exc:
            reason = exc.reason if isinstance(exc, FormatError) else f"undecodable bytes ({exc})"
            errors.append({"path": path, "line": None, "column": None, "reason": reason})
            continue
        if note:
            warnings.append({"source": path, "line": None, "field": "encoding", "message": note})
        paths.append(path)
        texts.append(text)

    lines = _lines_frame(paths, texts)
    with_players = set(lines.filter(pl.col("code") == "001")["file"].unique().to_list())
    for i, path in enumerate(paths):
        if i not in with_players:
            first = texts[i].lstrip()[:24].splitlines()[0] if texts[i].strip() else ""
            errors.append({"path": path, "line": None, "column": None,
                           "reason": f"no TRF player record '001' found (file starts {first!r}); "
                                     "expected a TRF-16/TRF26 tournament report"})
    lines = _assign_events(lines.filter(pl.col("file").is_in(list(with_players))), _events(lines))

    players, blocks, perr = _player_lines(lines.filter(pl.col("code") == "001"))
    tournaments, twarn = _tournament_headers(lines, paths, players, blocks)
    games, gerr, gwarn = _games(blocks, players, tournaments)
    games, tournaments = _complete(games, players, tournaments)
    players, pwarn = _declared_points_check(players, games, tournaments)
    errors.extend(_with_path(pl.concat([perr, gerr]), paths))
    warnings.extend(twarn)
    warnings.extend(_with_path_w(pl.concat([gwarn, pwarn]), paths))

    err_df = pl.DataFrame(errors, schema=ERROR_SCHEMA, orient="row") if errors else pl.DataFrame(
        schema=ERROR_SCHEMA)
    bad_paths = set(err_df["path"].to_list())
    good = tournaments.filter(~pl.col("source_file").is_in(list(bad_paths))).sort("event")
    ids = good.select("event", pl.int_range(first_id, first_id + good.height, dtype=pl.Int64).alias("tournament"))
    t_out = good.join(ids, on="event").select(list(TOURNAMENT_SCHEMA))
    p_out = players.join(ids, on="event").select(list(PLAYER_SCHEMA)).sort("tournament", "start_no")
    g_out = games.join(ids, on="event").select(list(GAME_SCHEMA)).sort("tournament", "player", "round")
    w_df = (pl.DataFrame(warnings, schema=WARNING_SCHEMA, orient="row") if warnings else empty("warnings"))
    w_df = w_df.filter(~pl.col("source").str.replace(r"#\d+$", "").is_in(list(bad_paths)))
    batch = Batch(t_out, p_out, g_out, w_df)
    return ReadResult(batch, err_df.sort("path", "line", nulls_last=False), [p for p, _ in inputs])


def _with_path(df: pl.DataFrame, paths: list[str]) -> list[dict[str, object]]:
    if df.is_empty():
        return []
    return [{"path": paths[r["file"]], "line": r["line"], "column": r["column"], "reason": r["reason"]}
            for r in df.iter_rows(named=True)]


def _with_path_w(df: pl.DataFrame, paths: list[str]) -> list[dict[str, object]]:
    return [{"source": s["path"], "line": s["line"], "field": s["column"], "message": s["reason"]}
            for s in _with_path(df, paths)]


def _lines_frame(paths: list[str], texts: list[str]) -> pl.DataFrame:
    """One row per non-blank line of every file: file index, 1-based line number, text, record code."""
    split = [_LINE_SPLIT.split(t) for t in texts]
    lines = pl.DataFrame({
        "file": pl.Series([i for i, s in enumerate(split) for _ in s], dtype=pl.Int32),
        "line": pl.Series([j for s in split for j in range(1, len(s) + 1)], dtype=pl.Int32),
        "text": pl.Series([x for s in split for x in s], dtype=pl.String),
    })
    return lines.with_columns(pl.col("text").str.strip_chars_end()).filter(
        pl.col("text").str.len_chars() > 0).with_columns(
        pl.col("text").str.slice(0, 3).str.to_uppercase().alias("code"))


def _events(lines: pl.DataFrame) -> pl.DataFrame:
    """Split files into events: a '012' record after player lines starts a new event (`source#k`)."""
    lines = lines.with_columns(
        (pl.col("code") == "001").cast(pl.Int32).cum_sum().over("file").alias("_n001"))
    starts = lines.filter(pl.col("code") == "012").with_columns(
        pl.col("_n001").shift(1, fill_value=0).over("file").alias("_prev"))
    starts = starts.filter((pl.col("_n001") > 0) & (pl.col("_n001") != pl.col("_prev")))
    return starts.select("file", "line")


def _assign_events(lines: pl.DataFrame, events: pl.DataFrame) -> pl.DataFrame:
    """Add ``k`` (1-based event within its file) and ``event`` (a global event number)."""
    marks = events.with_columns(pl.lit(1, pl.Int32).alias("_start"))
    out = lines.join(marks, on=["file", "line"], how="left").with_columns(
        (pl.col("_start").fill_null(0).cum_sum().over("file") + 1).alias("k")).drop("_start")
    return out.with_columns((pl.struct("file", "k").rank("dense").cast(pl.Int64) - 1).alias("event"))


def _strip(col: str, start: int, length: int) -> pl.Expr:
    return pl.col(col).str.slice(start, length).str.strip_chars()


def _int_field(name: str, start: int, length: int) -> pl.Expr:
    return _strip("text", start, length).alias(name)


def _error_rows(df: pl.DataFrame, mask: pl.Expr | pl.Series, column: str | pl.Expr, reason: pl.Expr) -> pl.DataFrame:
    col_expr = pl.lit(column) if isinstance(column, str) else column
    return df.filter(mask).select(
        "file", "line", col_expr.cast(pl.String).alias("column"), reason.cast(pl.String).alias("reason"))


def _player_lines(p: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Slice '001' lines into player fields and raw round blocks (rules.md 2.1), over whole columns."""
    p = p.with_columns(pl.col("text").str.len_chars().alias("_len"))
    longest = int(p.select(pl.col("_len").max().fill_null(0)).item())
    p = p.with_columns(pl.col("text").str.pad_end(longest + 10))
    f = p.select(
        "file", "line", "event", "_len",
        _int_field("_start", 4, 4), _strip("text", 9, 1).alias("sex"), _strip("text", 10, 3).alias("title"),
        _strip("text", 14, 33).alias("name"), _int_field("_rating", 48, 4), _strip("text", 53, 3).alias("federation"),
        _int_field("_fide", 57, 11), _strip("text", 69, 10).alias("birth"), _int_field("_points", 80, 4),
        _int_field("_rank", 85, 4),
    ).with_columns(
        pl.col("_start").cast(pl.Int32, strict=False).alias("start_no"),
        pl.col("_rating").cast(pl.Int32, strict=False).alias("rating"),
        pl.col("_fide").cast(pl.Int64, strict=False).alias("fide_id"),
        pl.col("_rank").cast(pl.Int32, strict=False).alias("declared_rank"),
        pl.col("_points").str.replace(",", ".").cast(pl.Float64, strict=False).alias("_points_f"),
    )
    errors = pl.concat([
        _error_rows(f, pl.col("start_no").is_null() | (pl.col("start_no") <= 0), "starting rank (cols 5-8)",
                    pl.format("'{}' is not a starting rank (expected a number 1-9999)", pl.col("_start"))),
        _error_rows(f, pl.col("rating").is_null() & (pl.col("_rating") != ""), "rating (cols 49-52)",
                    pl.format("'{}' is not a rating (expected digits, or blank/0 for unrated)",
                              pl.col("_rating"))),
    ])
    f = f.with_columns(
        pl.when(pl.col("rating") > 0).then(pl.col("rating")).alias("rating"),
        pl.when(pl.col("fide_id") > 0).then(pl.col("fide_id")).alias("fide_id"),
        pl.when(pl.col("declared_rank") > 0).then(pl.col("declared_rank")).alias("declared_rank"),
        pl.col("line").alias("line"),
        *[pl.when(pl.col(c) != "").then(pl.col(c)).alias(c) for c in ("sex", "title", "federation", "birth")],
    )
    dups = f.filter(pl.col("start_no").is_not_null()).with_columns(
        pl.col("line").rank("ordinal").over("event", "start_no").alias("_nth"),
        pl.col("line").min().over("event", "start_no").alias("_firstline"))
    errors = pl.concat([errors, _error_rows(
        dups, pl.col("_nth") > 1, "starting rank (cols 5-8)",
        pl.format("duplicate starting rank {} (first used on line {})", pl.col("start_no"),
                  pl.col("_firstline")))])

    # every line gets a block for each round up to its event's longest line (missing blocks read as blank)
    p = p.with_columns(
        _strip("text", 4, 4).cast(pl.Int32, strict=False).alias("start_no"),
        ((pl.col("_len").cast(pl.Int64) - _ROUND0 + 9) // 10).clip(0).max().over("event").alias("_rounds"))
    n_blocks = (longest - _ROUND0 + 9) // 10
    blocks = []
    for r in range(max(n_blocks, 0)):
        at = _ROUND0 + 10 * r
        blocks.append(p.filter(pl.col("_rounds") > r).select(
            "file", "line", "event", "start_no", "_len", pl.lit(r + 1, pl.Int16).alias("round"),
            _strip("text", at, 4).alias("_opp"), pl.col("text").str.slice(at + 5, 1).alias("_col"),
            pl.col("text").str.slice(at + 7, 1).str.to_uppercase().str.strip_chars().alias("_res"),
            pl.lit(at, pl.Int32).alias("_at")))
    raw = pl.concat(blocks) if blocks else pl.DataFrame(schema={
        "file": pl.Int32, "line": pl.Int32, "event": pl.Int64, "start_no": pl.Int32, "_len": pl.UInt32,
        "round": pl.Int16, "_opp": pl.String, "_col": pl.String, "_res": pl.String, "_at": pl.Int32})
    return f, raw, errors


def _tournament_headers(lines: pl.DataFrame, paths: list[str], players: pl.DataFrame,
                        raw: pl.DataFrame) -> tuple[pl.DataFrame, list[dict[str, object]]]:
    """One row per event from its header records; small per-event Python work (dates, scoring)."""
    head = lines.filter(pl.col("code") != "001")
    top = lines["event"].max()
    n_events = 0 if top is None else int(top) + 1  # type: ignore[arg-type]
    per_event: list[list[tuple[str, str, int]]] = [[] for _ in range(n_events)]
    for ev, code, text, line in head.select("event", "code", "text", "line").iter_rows():
        per_event[ev].append((code, text, line))
    meta = lines.group_by("event").agg(pl.col("file").first(), pl.col("k").first(),
                                       pl.col("k").max().alias("_kmax"))
    # events per file, to know whether to suffix '#k'
    kmax = meta.group_by("file").agg(pl.col("k").max().alias("_kfile"))
    meta = meta.join(kmax, on="file").sort("event")
    longest = raw.group_by("event").agg(pl.col("round").max().alias("_longest"))
    longest_map = dict(longest.iter_rows())
    rows: list[dict[str, object]] = []
    warns: list[dict[str, object]] = []
    for ev, file, k, _kmax, kfile in meta.iter_rows():
        path = paths[file]
        source = path if kfile == 1 else f"{path}#{k}"
        rec: dict[str, str] = {}
        scoring_recs: list[tuple[str, str]] = []
        kept: list[str] = []
        round_dates: list[str] = []
        for code, text, _line in per_event[ev]:
            if code in ("162", "XXS"):
                scoring_recs.append((code, text))
            elif code == "132":
                round_dates = [text[i:i + 8] for i in range(_ROUND0, len(text), 10)]
                kept.append(text)
            elif code in HEADER_RECORDS:
                rec.setdefault(code, text[4:].strip() if len(text) > 3 else "")
            elif code == "###" or text.startswith(("DDD SSSS", "         1 ")) or text[:10].strip().isdigit():
                continue
            elif re.match(r"^[0-9A-Z]{3}( |$)", text[:4] if len(text) > 3 else text + " "):
                kept.append(text)
        try:
            points = parse_scoring(scoring_recs)
        except ValueError as exc:
            warns.append({"source": source, "line": None, "field": "scoring", "message": str(exc)})
            points = dict(STANDARD_SCORING)
        start, end, date_warn = resolve_dates(rec.get("042"), rec.get("052"), round_dates)
        if date_warn:
            warns.append({"source": source, "line": None, "field": "042 start date", "message": date_warn})
        planned = _to_int(rec.get("XXR")) or _to_int(rec.get("142")) or longest_map.get(ev, 0)
        type_code = rec.get("192") or None
        type_text = rec.get("092") or None
        rows.append({
            "event": ev, "source_file": path, "source": source, "name": rec.get("012") or None,
            "city": rec.get("022") or None, "federation": rec.get("032") or None,
            "start_date": start, "end_date": end, "date_text": rec.get("042") or None,
            "rounds": max(planned, 0), "type_text": type_text, "type_code": type_code,
            "declared_players": _to_int((rec.get("062") or "").split(" ")[0]),
            **scoring_columns(points),
            "tiebreaks": _tb_list(rec.get("202")), "standings_tiebreaks": _tb_list(rec.get("212")),
            "records": kept,
            "_declared_type": _declared_type(type_code, type_text),
        })
    schema: dict[str, pl.DataType] = {"event": pl.Int64(), "source_file": pl.String(), **{
        k: v for k, v in TOURNAMENT_SCHEMA.items() if k not in ("tournament", "rounds_played", "event_type")},
        "_declared_type": pl.String()}
    return pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema), warns


def _to_int(text: str | None) -> int | None:
    if not text:
        return None
    m = re.match(r"\s*(\d+)", text)
    return int(m.group(1)) if m else None


def _tb_list(text: str | None) -> list[str]:
    return [t.strip() for t in (text or "").split(",") if t.strip()]


def _declared_type(code: str | None, text: str | None) -> str | None:
    """Event type from 192 or 092 (rules.md 2.3); None when the pairing structure must decide."""
    for value in (code, text):
        v = (value or "").upper().replace(" ", "").replace("-", "").replace("_", "")
        if "TEAM" in v:
            return "team"
        if "ROUNDROBIN" in v or "BERGER" in v or "RUNDENTURNIER" in v or "SCHEVENINGEN" in v:
            return "round_robin"
        if "SWISS" in v or "DUTCH" in v or "SCHWEIZER" in v:
            return "swiss"
    return None


def _row_key(event: np.ndarray, start_no: np.ndarray, rnd: np.ndarray) -> np.ndarray:
    """One int64 per (event, start number, round): event < 2^29, start number < 2^20, round < 2^14."""
    return (event.astype(np.int64) << 34) | (start_no.astype(np.int64) << 14) | rnd.astype(np.int64)


def _lookup(keys: np.ndarray, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row of each query key in ``keys`` (any order) and whether it was found (first match)."""
    order = np.argsort(keys, kind="stable")
    pos = np.searchsorted(keys[order], queries).clip(0, max(len(keys) - 1, 0))
    found = keys[order][pos] == queries if len(keys) else np.zeros(len(queries), dtype=bool)
    return order[pos] if len(keys) else pos, found


def _games(raw: pl.DataFrame, players: pl.DataFrame, tournaments: pl.DataFrame) -> tuple[
        pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Classify round blocks into the long games table; check pairings point back and results complement."""
    g = raw.with_columns(
        pl.col("_opp").cast(pl.Int32, strict=False).alias("opponent"),
        pl.col("_col").str.to_lowercase().alias("_colour"),
    )
    g = g.with_columns(pl.when(pl.col("opponent") > 0).then(pl.col("opponent")).alias("opponent"))
    # the opponent's own block in the same round, by sorted int64 keys (no multi-column joins)
    ev = g["event"].to_numpy()
    me = g["start_no"].fill_null(0).to_numpy()
    opp = g["opponent"].fill_null(0).to_numpy()
    rnd = g["round"].to_numpy()
    row, found = _lookup(_row_key(ev, me, rnd), _row_key(ev, opp, rnd))
    found &= opp > 0
    known_keys = (players["event"].to_numpy().astype(np.int64) << 20) | players["start_no"].fill_null(0).to_numpy()
    _, exists = _lookup(known_keys, (ev.astype(np.int64) << 20) | opp)
    idx = pl.Series(row)
    mask = pl.Series(found)
    g = g.with_columns(
        pl.Series("_exists", exists & (opp > 0)),
        pl.when(mask).then(g["opponent"].gather(idx)).alias("_back"),
        pl.when(mask).then(g["_res"].gather(idx)).alias("_ores"),
        pl.when(mask).then(g["_colour"].gather(idx)).alias("_ocol"),
    ).rechunk()
    has_opp = pl.col("opponent").is_not_null()
    res = pl.col("_res")
    points_back = pl.col("_back") == pl.col("start_no")
    pairs = ["".join(c) for c in COMPLEMENTS] + ["X", "?", "XX", "??"]
    checks: list[tuple[pl.Expr, pl.Expr, pl.Expr]] = [
        (pl.col("_opp").cast(pl.Int32, strict=False).is_null() & (pl.col("_opp") != ""),
         pl.format("round {} opponent", pl.col("round")),
         pl.format("'{}' is not a starting rank (expected digits, or 0000 for no opponent)", pl.col("_opp"))),
        (~pl.col("_colour").is_in(["w", "b", "-", " ", ""]), pl.format("round {} colour", pl.col("round")),
         pl.format("'{}' is not a TRF colour code (expected w, b or -)", pl.col("_col"))),
        (has_opp & (pl.col("_len") < pl.col("_at") + 6), pl.format("round {}", pl.col("round")),
         pl.format("line ends at column {} inside the round block (expected opponent, colour and "
                   "result up to column {})", pl.col("_len"), pl.col("_at") + 8)),
        (has_opp & ~res.is_in([*RESULT_CODES_WITH_OPPONENT, "", "X", "?"]),
         pl.format("round {} result", pl.col("round")),
         pl.format("'{}' is not a TRF result code for a game (expected one of 1 0 = W D L + -)", res)),
        (~has_opp & ~res.is_in([*RESULT_CODES_WITHOUT_OPPONENT, *BYE_ALIASES, ""]),
         pl.format("round {} result", pl.col("round")),
         pl.format("'{}' is not a TRF result code for a round without opponent "
                   "(expected one of U F H Z + - or blank)", res)),
        (pl.col("opponent") == pl.col("start_no"), pl.format("round {} opponent", pl.col("round")),
         pl.format("player {} is paired with themself", pl.col("start_no"))),
        (has_opp & ~pl.col("_exists"), pl.format("round {} opponent", pl.col("round")),
         pl.format("opponent {} does not exist (no player line with that starting rank)", pl.col("opponent"))),
        (pl.col("_exists") & (pl.col("_back").is_null() | ~points_back) & (pl.col("opponent") != pl.col("start_no")),
         pl.format("round {} opponent", pl.col("round")),
         pl.format("player {} meets {} but {}'s line says {} in that round (expected {})",
                   pl.col("start_no"), pl.col("opponent"), pl.col("opponent"),
                   pl.col("_back").cast(pl.String).fill_null("no opponent"), pl.col("start_no"))),
        (points_back.fill_null(False) & ~pl.concat_str("_res", "_ores").is_in(pairs),
         pl.format("round {} result", pl.col("round")),
         pl.format("results do not complement: {} has '{}' against {} who has '{}' "
                   "(expected 1/0, =/=, W/L, D/D, +/-, -/- )", pl.col("start_no"), res,
                   pl.col("opponent"), pl.col("_ores"))),
    ]
    notes: list[tuple[pl.Expr, pl.Expr, pl.Expr]] = [
        (points_back.fill_null(False) & (pl.col("_colour") == pl.col("_ocol")) & pl.col("_colour").is_in(["w", "b"])
         & (pl.col("start_no") < pl.col("opponent")), pl.format("round {} colour", pl.col("round")),
         pl.format("players {} and {} both have colour '{}'", pl.col("start_no"), pl.col("opponent"),
                   pl.col("_colour"))),
        (has_opp & res.is_in(["", "X", "?"]) & (pl.col("start_no") < pl.col("opponent")),
         pl.format("round {} result", pl.col("round")),
         pl.format("game {}-{} has no result yet; standings count only the rounds before it",
                   pl.col("start_no"), pl.col("opponent"))),
        (~has_opp & res.is_in(list(BYE_ALIASES)), pl.format("round {} result", pl.col("round")),
         pl.format("result '{}' without an opponent read as bye '{}'", res,
                   res.replace_strict(BYE_ALIASES, default=""))),
    ]
    err = _problems(g, checks)
    warn = _problems(g, notes)
    g = g.with_columns(pl.when(~has_opp & res.is_in(list(BYE_ALIASES))).then(
        res.replace_strict(BYE_ALIASES, default="")).otherwise(res).alias("_res"))
    gt = (pl.when(has_opp & res.is_in(["1", "0", "=", "W", "D", "L"])).then(pl.lit("played"))
          .when(has_opp & (res == "+")).then(pl.lit("forfeit_win"))
          .when(has_opp & (res == "-") & (pl.col("_ores") == "-")).then(pl.lit("double_forfeit"))
          .when(has_opp & (res == "-")).then(pl.lit("forfeit_loss"))
          .when(has_opp).then(pl.lit("pending"))
          .when(res == "U").then(pl.lit("pab"))
          .when(res.is_in(["F", "+"])).then(pl.lit("full_bye"))
          .when(res == "H").then(pl.lit("half_bye"))
          .when(res.is_in(["Z", "-"])).then(pl.lit("zero_bye"))
          .otherwise(pl.lit("absent")))
    g = g.with_columns(gt.alias("game_type"),
                       pl.when(pl.col("_colour").is_in(["w", "b"])).then(pl.col("_colour")).alias("colour"),
                       pl.when(res != "").then(res).alias("result"))
    return g, err, warn


def _problems(df: pl.DataFrame, checks: list[tuple[pl.Expr, pl.Expr, pl.Expr]]) -> pl.DataFrame:
    """Rows failing any check, one per failed check: file, line, column, reason (one pass when all pass)."""
    flags = df.select([cond.fill_null(False).alias(f"_c{i}") for i, (cond, _, _) in enumerate(checks)])
    if not flags.select(pl.any_horizontal(pl.all()).any()).item():
        return pl.DataFrame(schema={"file": pl.Int32, "line": pl.Int32, "column": pl.String, "reason": pl.String})
    return pl.concat([_error_rows(df, flags[f"_c{i}"], column, reason)
                      for i, (_, column, reason) in enumerate(checks)])


def _complete(games: pl.DataFrame, players: pl.DataFrame, tournaments: pl.DataFrame) -> tuple[
        pl.DataFrame, pl.DataFrame]:
    """Points per round, rounds played and the event type (every line already has a block per round)."""
    n_rounds = games.group_by("event").agg(pl.col("round").max().alias("_n"))
    t = tournaments.sort("event").join(n_rounds, on="event", how="left")
    event = pl.Series(games["event"])
    scoring = {k: t[f"pts_{k}"].gather(event) for k in SCORING_KINDS}  # events are numbered 0..E-1
    gtype = pl.col("game_type")
    kind = (pl.when(gtype == "played").then(
                pl.when(pl.col("result").is_in(["1", "W"])).then(scoring["win"])
                .when(pl.col("result").is_in(["=", "D"])).then(scoring["draw"])
                .otherwise(scoring["loss"]))
            .when(gtype == "forfeit_win").then(scoring["forfeit_win"])
            .when(gtype.is_in(["forfeit_loss", "double_forfeit"])).then(scoring["forfeit_loss"])
            .when(gtype == "pab").then(scoring["pab"])
            .when(gtype == "full_bye").then(scoring["full_bye"])
            .when(gtype == "half_bye").then(scoring["half_bye"])
            .when(gtype.is_in(["zero_bye", "absent"])).then(scoring["zero_bye"])
            .otherwise(0))
    g = games.select("event", "start_no", "round", "opponent", "colour", "result", "game_type").with_columns(
        kind.cast(pl.Int32).alias("points"),
        (gtype == "played").alias("played"),
        gtype.cast(GAME_SCHEMA["game_type"]),
        pl.col("colour").cast(GAME_SCHEMA["colour"]),
    ).rename({"start_no": "player"})
    # rounds played: leading rounds with at least one result and no pending game
    by_round = g.group_by("event", "round").agg(
        (pl.col("game_type") == "pending").any().alias("_pending"),
        pl.col("game_type").is_in(["played", "forfeit_win", "forfeit_loss", "double_forfeit"]).any()
        .alias("_paired"))
    first_pending = by_round.filter(pl.col("_pending")).group_by("event").agg(
        (pl.col("round").min() - 1).alias("_fp"))
    last_paired = by_round.filter(pl.col("_paired")).group_by("event").agg(pl.col("round").max().alias("_lp"))
    undeclared = t.filter(pl.col("_declared_type").is_null())["event"]
    rr = _round_robin_structure(g.filter(pl.col("event").is_in(undeclared.implode())))
    t = t.join(first_pending, on="event", how="left").join(last_paired, on="event", how="left").join(
        rr, on="event", how="left").with_columns(
        # a file holding every planned round is complete; otherwise trailing rounds without a single
        # paired game are announced byes of rounds still to come (e.g. a file sent after round 4)
        pl.min_horizontal(pl.when(pl.col("_n").fill_null(0) >= pl.col("rounds")).then(pl.col("_n"))
                          .otherwise(pl.col("_lp").fill_null(pl.col("_n").fill_null(0))),
                          pl.col("_fp").fill_null(10_000)).cast(pl.Int16).alias("rounds_played"),
        pl.coalesce(pl.col("_declared_type"),
                    pl.when(pl.col("_rr").fill_null(False)).then(pl.lit("round_robin")).otherwise(
                        pl.lit("swiss"))).alias("event_type"),
        pl.col("rounds").cast(pl.Int16))
    return g, t


def _round_robin_structure(g: pl.DataFrame) -> pl.DataFrame:
    """Events where every pair of players meets the same number of times (at least once)."""
    pairs = g.filter(pl.col("opponent").is_not_null() & (pl.col("player") < pl.col("opponent"))).group_by(
        "event", "player", "opponent").len()
    n = g.group_by("event").agg(pl.col("player").n_unique().alias("_np"))
    agg = pairs.group_by("event").agg(pl.len().alias("_pairs"), pl.col("len").min().alias("_lo"),
                                      pl.col("len").max().alias("_hi"))
    return agg.join(n, on="event").select(
        "event", ((pl.col("_pairs") == pl.col("_np") * (pl.col("_np") - 1) // 2) & (pl.col("_lo") == pl.col("_hi"))
                  & (pl.col("_np") >= 3)).alias("_rr"))


def _declared_points_check(players: pl.DataFrame, games: pl.DataFrame, t: pl.DataFrame) -> tuple[
        pl.DataFrame, pl.DataFrame]:
    """Declared points in units, and a warning row where they disagree with the results."""
    scale = t.select("event", "scale")
    p = players.join(scale, on="event").with_columns(
        (pl.col("_points_f") * pl.col("scale")).round(0).cast(pl.Int32).alias("declared_points"))
    total = games.group_by("event", "player").agg(pl.col("points").sum().alias("_sum"))
    chk = p.join(total, left_on=["event", "start_no"], right_on=["event", "player"], how="left")
    warn = _error_rows(chk, pl.col("declared_points").is_not_null() & (pl.col("declared_points") != pl.col("_sum")),
                       "points (cols 81-84)",
                       pl.format("declared points {} differ from the results' total {}", pl.col("_points"),
                                 (pl.col("_sum") / pl.col("scale")).cast(pl.String)))
    return p, warn

def parse_scoring(records: Iterable[tuple[str, str]]) -> dict[str, Fraction]:
    """Points per kind from 162 (TRF26) and XXS (TRF(x)) records; defaults 1-½-0 (rules.md 2.3, 2.4).

    >>> s = parse_scoring([("162", "162  W 3.0    D 1.0    L 0.0")])
    >>> s["win"], s["draw"], s["pab"], s["half_bye"]
    (Fraction(3, 1), Fraction(1, 1), Fraction(3, 1), Fraction(1, 1))
    >>> s = parse_scoring([("XXS", "XXS W=3 D=1"), ("XXS", "XXS PAB=3")])
    >>> s["win"], s["forfeit_win"], s["pab"], s["half_bye"]
    (Fraction(3, 1), Fraction(3, 1), Fraction(3, 1), Fraction(1, 1))
    """
    pts = dict(STANDARD_SCORING)
    pab_set = False
    for code, text in records:
        if code == "162":
            body = text[5:]
            for m in re.finditer(r"([WDLAPX])\s*(\d+(?:[.,]\d+)?)", body):
                letter, value = m.group(1), Fraction(m.group(2).replace(",", "."))
                for kind in TRF26_SCORING_CODES.get(letter, ()):
                    pts[kind] = value
                pab_set |= letter == "P"
        elif code == "XXS":
            for m in re.finditer(r"([A-Z]+)\s*=\s*(\d+(?:[.,]\d+)?)", text[3:].upper()):
                key, value = m.group(1), Fraction(m.group(2).replace(",", "."))
                if key not in XXS_CODES:
                    raise ValueError(f"unknown XXS scoring code {key!r} (expected one of "
                                     f"{', '.join(XXS_CODES)})")
                for kind in XXS_CODES[key]:
                    pts[kind] = value
                pab_set |= key == "PAB"
    if not pab_set:
        pts["pab"] = pts["win"]
    return pts


def scoring_columns(points: dict[str, Fraction]) -> dict[str, int]:
    """Scale and ``pts_<kind>`` integer columns for a scoring system."""
    scale = scoring_scale(points)
    return {"scale": scale, **{f"pts_{k}": int(points[k] * scale) for k in SCORING_KINDS}}


# --------------------------------------------------------------------------------------------- writing

def _decimal(units: int, scale: int) -> str:
    """Exact decimal text of ``units / scale`` points: 7/2 -> '3.5', 4/2 -> '2.0' (TRF style)."""
    value = Fraction(units, scale)
    if value.denominator == 1:
        return f"{value.numerator}.0"
    text = f"{float(value):.4f}".rstrip("0")
    if Fraction(text) != value:
        raise ValueError(f"{units}/{scale} points has no short decimal form")
    return text


def write_trf(batch: Batch, *, version: str = "trf16") -> dict[str, str]:
    """TRF text per tournament source: header records, kept records, then '001' player lines.

    ``version`` 'trf16' writes rounds and scoring as TRF(x) ``XXR``/``XXS``; 'trf26' as ``142``/``162``.
    """
    if version not in ("trf16", "trf26"):
        raise ValueError(f"unknown TRF version {version!r} (expected trf16 or trf26)")
    lines = _player_lines_text(batch)
    by_t = dict(lines.group_by("tournament").agg(pl.col("_text")).iter_rows())
    out: dict[str, str] = {}
    for t in batch.tournaments.iter_rows(named=True):
        head = _header_lines(t, version)
        body = by_t.get(t["tournament"], [])
        out[t["source"]] = "\n".join([*head, *(t["records"] or []), *body]) + "\n"
    return out


def _header_lines(t: dict[str, object], version: str) -> list[str]:
    out = []
    for code, key in (("012", "name"), ("022", "city"), ("032", "federation")):
        if t[key] is not None:
            out.append(f"{code} {t[key]}")
    if t["date_text"] is not None:
        out.append(f"042 {t['date_text']}")
    elif t["start_date"] is not None:
        out.append(f"042 {t['start_date']:%Y/%m/%d}")
    if t["end_date"] is not None:
        out.append(f"052 {t['end_date']:%Y/%m/%d}")
    if t["declared_players"] is not None:
        out.append(f"062 {t['declared_players']}")
    if t["type_text"] is not None:
        out.append(f"092 {t['type_text']}")
    if t["type_code"] is not None:
        out.append(f"192 {t['type_code']}")
    if t["tiebreaks"]:
        out.append("202 " + ",".join(t["tiebreaks"]))  # type: ignore[arg-type]
    if t["standings_tiebreaks"]:
        out.append("212 " + ",".join(t["standings_tiebreaks"]))  # type: ignore[arg-type]
    scale = int(t["scale"])  # type: ignore[call-overload]
    pts = {k: int(t[f"pts_{k}"]) for k in SCORING_KINDS}  # type: ignore[call-overload]
    standard = {k: int(v * scale) for k, v in STANDARD_SCORING.items()}
    if version == "trf16":
        out.append(f"XXR {t['rounds']}")
        if pts != standard:
            names = {"win": "WW", "draw": "WD", "loss": "WL", "forfeit_win": "FW", "forfeit_loss": "FL",
                     "pab": "PAB", "full_bye": "FPB", "half_bye": "HPB", "zero_bye": "ZPB"}
            extra = {"win": "BW", "draw": "BD", "loss": "BL"}
            items = [f"{names[k]}={_decimal(v, scale)}" for k, v in pts.items()]
            items += [f"{extra[k]}={_decimal(pts[k], scale)}" for k in extra]
            out.append("XXS " + " ".join(items))
    else:
        out.append(f"142 {t['rounds']}")
        if pts != standard:
            if not (pts["forfeit_win"] == pts["full_bye"] == pts["win"] and pts["half_bye"] == pts["draw"]
                    and pts["forfeit_loss"] == pts["zero_bye"]):
                raise ValueError(f"{t['source']}: this scoring system cannot be written as a TRF26 162 record")
            parts = [("W", "win"), ("D", "draw"), ("L", "loss"), ("A", "zero_bye"), ("P", "pab")]
            out.append("162 " + "".join(f" {c}{_decimal(pts[k], scale):>4}    " for c, k in parts).rstrip())
    return out


def _player_lines_text(batch: Batch) -> pl.DataFrame:
    """Fixed-width '001' lines for every player, built column-wise."""
    p = batch.players.join(batch.tournaments.select("tournament", "scale"), on="tournament")

    def fmt_points(col: str) -> pl.Expr:
        whole = pl.col(col) // pl.col("scale")
        frac = (pl.col(col) % pl.col("scale")) * 10 // pl.col("scale")
        return pl.when(pl.col(col).is_null()).then(pl.lit("")).otherwise(
            pl.format("{}.{}", whole, frac))

    def field(expr: pl.Expr, width: int, right: bool = False) -> pl.Expr:
        e = expr.cast(pl.String).fill_null("").str.slice(0, width)
        return e.str.pad_start(width) if right else e.str.pad_end(width)

    blocks = batch.games.sort("round").group_by("tournament", "player", maintain_order=True).agg(
        pl.format("{} {} {}",
                  pl.when(pl.col("opponent").is_null()).then(pl.lit("0000"))
                  .otherwise(pl.col("opponent").cast(pl.String).str.pad_start(4)),
                  pl.col("colour").cast(pl.String).fill_null("-"),
                  pl.col("result").fill_null(" ")).str.join("  ").alias("_rounds"))
    p = p.join(blocks, left_on=["tournament", "start_no"], right_on=["tournament", "player"], how="left")
    text = pl.concat_str([
        pl.lit("001 "), field(pl.col("start_no"), 4, True), pl.lit(" "), field(pl.col("sex"), 1),
        field(pl.col("title"), 3, True), pl.lit(" "), field(pl.col("name"), 33), pl.lit(" "),
        field(pl.col("rating"), 4, True), pl.lit(" "), field(pl.col("federation"), 3), pl.lit(" "),
        field(pl.col("fide_id"), 11, True), pl.lit(" "), field(pl.col("birth"), 10), pl.lit(" "),
        field(fmt_points("declared_points"), 4, True), pl.lit(" "), field(pl.col("declared_rank"), 4, True),
        pl.lit("  "), pl.col("_rounds").fill_null(""),
    ]).str.strip_chars_end()
    return p.select("tournament", "start_no", text.alias("_text")).sort("tournament", "start_no")
