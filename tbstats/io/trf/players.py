"""The fields of '001' player lines, over all lines at once (rules.md 2.1)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import polars as pl

from tbstats.io.trf.buffer import Lines, int_column, is_whitespace, parse_int, stripped, text_column, texts_of

ERROR_COLUMNS: Final = {"file": pl.Int32, "line": pl.Int32, "column": pl.String, "reason": pl.String}
_NO_PROBLEMS: Final = pl.DataFrame(schema=ERROR_COLUMNS)


def no_problems() -> pl.DataFrame:
    """The empty problem table (one shared frame: callers only read and concatenate it)."""
    return _NO_PROBLEMS


def problem_rows(df: pl.DataFrame, column: str | pl.Expr, reason: pl.Expr) -> pl.DataFrame:
    """Rows of ``df`` (a frame of failing rows with ``file`` and ``line``) as problems: column and reason."""
    col_expr = pl.lit(column) if isinstance(column, str) else column
    return df.select(pl.col("file").cast(pl.Int32), pl.col("line").cast(pl.Int32),
                     col_expr.cast(pl.String).alias("column"), reason.cast(pl.String).alias("reason"))


@dataclass(frozen=True)
class Players:
    """Player lines sorted by event and starting rank, with their fields; ``order`` is their file order."""

    lines: Lines
    event: np.ndarray      # int64
    order: np.ndarray      # position of each line in file order (for messages in file order)
    start_no: np.ndarray   # int64 (0 where not a number)
    start_ok: np.ndarray   # bool: the starting rank field is a number
    points: np.ndarray     # float64 declared points (nan where absent)
    points_ok: np.ndarray  # bool
    points_window: np.ndarray
    table: pl.DataFrame    # file, line, event, start_no, and the text and number fields


def player_fields(lines: Lines, event: np.ndarray) -> tuple[Players, pl.DataFrame, pl.DataFrame]:
    """Slice every player line into its fields; problems (bad starting ranks and ratings, duplicates) and
    warnings (points, rank or FIDE id that are not numbers)."""
    start, start_ok = parse_int(lines.window(4, 4))
    # sort by event and starting rank (file order among equals), so games come out in the model's order
    key = event.astype(np.int64) * 20000 + np.where(start_ok, start, -10000) + 10000
    order = np.argsort(key, kind="stable")
    lines = lines.subset(order)
    event, start, start_ok = event[order], start[order], start_ok[order]
    win = lines.window(0, 91)  # after sorting: the lines' fields in their final order
    ws = is_whitespace(win)
    rating, rating_ok = parse_int(win[48:52], ws[48:52])
    fide, fide_ok = parse_int(win[57:68], ws[57:68])
    rank, rank_ok = parse_int(win[85:89], ws[85:89])
    points, points_ok = parse_points(win[80:84], ws[80:84])
    n = len(order)

    def positive(values: np.ndarray, ok: np.ndarray, dtype: type[np.signedinteger[Any]]) -> pl.Series:
        return int_column("", values, dtype, ~(ok & (values > 0)))

    def optional(name: str, lo: int, hi: int) -> pl.Series:
        return text_column(win[lo:hi], name, ws[lo:hi], blank_null=True)

    table = pl.DataFrame({
        "file": lines.file, "line": lines.line, "event": event,
        "start_no": int_column("", start, np.int32, ~start_ok),
        "name": text_column(win[14:47], "name", ws[14:47]), "sex": optional("sex", 9, 10),
        "title": optional("title", 10, 13), "rating": positive(rating, rating_ok, np.int32),
        "federation": optional("federation", 53, 56), "fide_id": positive(fide, fide_ok, np.int64),
        "birth": optional("birth", 69, 79), "declared_rank": positive(rank, rank_ok, np.int32),
    }) if n else pl.DataFrame(schema={"file": pl.Int32, "line": pl.Int32, "event": pl.Int64, "start_no": pl.Int32,
                                      "name": pl.String, "sex": pl.String, "title": pl.String,
                                      "rating": pl.Int32, "federation": pl.String, "fide_id": pl.Int64,
                                      "birth": pl.String, "declared_rank": pl.Int32})
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = np.arange(n)

    # problems, in file order: starting ranks, ratings, then duplicates
    problems = []
    bad_start = ~start_ok | (start <= 0)
    bad_rating = (~rating_ok & ~ws[48:52].all(axis=0)) | (rating_ok & (rating < 0))  # '-100' is no rating either
    first = np.ones(n, dtype=bool)
    first[1:] = (key[order][1:] != key[order][:-1])
    first_line = lines.line[np.maximum.accumulate(np.where(first, np.arange(n), 0))] if n else lines.line
    dup = start_ok & ~first
    for mask, column, reason, field in (
            (bad_start, "starting rank (cols 5-8)", "'{}' is not a starting rank (expected a number 1-9999)",
             (4, 8)),
            (bad_rating, "rating (cols 49-52)", "'{}' is not a rating (expected digits, or blank/0 for unrated)",
             (48, 52))):
        rows = _file_order(mask, order)
        if rows.size:
            df = pl.DataFrame({"file": lines.file[rows], "line": lines.line[rows],
                               "_text": texts_of(win[field[0]:field[1]], rows)})
            problems.append(problem_rows(df, column, pl.format(reason, pl.col("_text"))))
    rows = _file_order(dup, order)
    if rows.size:
        df = pl.DataFrame({"file": lines.file[rows], "line": lines.line[rows], "_no": start[rows],
                           "_first": first_line[rows]})
        problems.append(problem_rows(df, "starting rank (cols 5-8)", pl.format(
            "duplicate starting rank {} (first used on line {})", pl.col("_no"), pl.col("_first"))))
    # fields that only check or describe: a warning, and the field left blank
    notes = []
    for lo, hi, ok, column, reason in (
            (80, 84, points_ok, "points (cols 81-84)", "'{}' is not a number of points: declared points not checked"),
            (85, 89, rank_ok, "rank (cols 86-89)", "'{}' is not a rank (expected digits): declared rank left blank"),
            (57, 68, fide_ok, "FIDE id (cols 58-68)", "'{}' is not a FIDE id (expected digits): left blank")):
        rows = _file_order(~ok & ~ws[lo:hi].all(axis=0), order)
        if rows.size:
            df = pl.DataFrame({"file": lines.file[rows], "line": lines.line[rows],
                               "_text": texts_of(win[lo:hi], rows)})
            notes.append(problem_rows(df, column, pl.format(reason, pl.col("_text"))))
    players = Players(lines, event, inverse, start, start_ok, points, points_ok, win[80:84], table)
    return (players, pl.concat(problems) if problems else no_problems(),
            pl.concat(notes) if notes else no_problems())


def _file_order(mask: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Rows (in sorted order) where ``mask`` holds, listed in file order."""
    rows = np.flatnonzero(mask)
    return rows[np.argsort(order[rows], kind="stable")]


def parse_points(win: np.ndarray, ws: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Declared points as polars reads the stripped text (``,`` for ``.``) as a float; nan where absent.

    Plain decimals are computed here; any other text (exponents, ``inf``, ``nan``...) goes through polars.
    """
    a, b = stripped(win, ws)
    n = win.shape[1]
    first = win[np.minimum(a, win.shape[0] - 1), np.arange(n)]
    signed = (first == 43) | (first == 45)
    plain = np.ones(n, dtype=bool)
    digits = np.zeros(n, dtype=np.int64)
    seps = np.zeros(n, dtype=np.int64)
    frac = np.zeros(n, dtype=np.int64)
    whole = np.zeros(n, dtype=np.int64)
    for j in range(win.shape[0]):
        col = win[j]
        inside = (j >= a + signed) & (j < b)
        digit = (col >= 48) & (col <= 57)
        sep = (col == 46) | (col == 44)
        plain &= digit | sep | ~inside
        seps += inside & sep
        use = inside & digit
        digits += use
        frac += use & (seps > 0)
        whole = np.where(use, whole * 10 + (col.astype(np.int64) - 48), whole)
    plain &= (seps <= 1) & (digits > 0)
    value = whole / 10.0 ** frac
    value = np.where(first == 45, -value, value)
    ok = plain.copy()
    other = np.flatnonzero(~plain & (b > a))
    if other.size:
        parsed = pl.Series(texts_of(win, other)).str.replace(",", ".").cast(pl.Float64, strict=False)
        ok[other] = parsed.is_not_null().to_numpy()
        value[other] = parsed.fill_null(np.nan).to_numpy()
    return np.where(ok, value, np.nan), ok
