"""The fields of '001' player lines, over all lines at once (rules.md 2.1)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import polars as pl

from tbstats.io.trf.buffer import Field, Lines, int_column

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


#: The fixed fields of a player line (rules.md 2.1): first column and one past the last, 0-based.
START: Final = (4, 8)
SEX: Final = (9, 10)
TITLE: Final = (10, 13)
NAME: Final = (14, 47)
RATING: Final = (48, 52)
FEDERATION: Final = (53, 56)
FIDE_ID: Final = (57, 68)
BIRTH: Final = (69, 79)
POINTS: Final = (80, 84)
RANK: Final = (85, 89)


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
    points_field: Field    # where each line's declared points are written
    table: pl.DataFrame    # file, line, event, start_no, and the text and number fields

    def points_texts(self, rows: np.ndarray) -> list[str]:
        """The declared points field of some lines as written (stripped), for messages."""
        return self.lines.text(self.points_field, "t", rows).to_list()


def player_fields(lines: Lines, event: np.ndarray) -> tuple[Players, pl.DataFrame, pl.DataFrame]:
    """Slice every player line into its fields; problems (bad starting ranks and ratings, duplicates) and
    warnings (points, rank or FIDE id that are not numbers)."""
    start_field = lines.field(START, number=True)
    assert start_field.value is not None and start_field.ok is not None
    # sort by event and starting rank (file order among equals), so games come out in the model's order
    key = event.astype(np.int64) * 20000 + np.where(start_field.ok, start_field.value, -10000) + 10000
    order = np.argsort(key, kind="stable")
    lines = lines.subset(order)
    spans = [SEX, TITLE, NAME, RATING, FEDERATION, FIDE_ID, BIRTH, POINTS, RANK]
    fields = {START: start_field.subset(order)} | dict(zip(spans, lines.fields(
        spans, [span in (RATING, FIDE_ID, RANK) for span in spans]), strict=True))
    event, start, start_ok = event[order], fields[START].value, fields[START].ok
    assert start is not None and start_ok is not None
    rating, fide, rank = fields[RATING], fields[FIDE_ID], fields[RANK]
    points, points_ok = lines.decimal(fields[POINTS])
    n = len(order)

    def positive(f: Field, dtype: type[np.signedinteger[Any]]) -> pl.Series:
        assert f.value is not None and f.ok is not None
        return int_column("", f.value, dtype, ~(f.ok & (f.value > 0)))

    def optional(name: str, span: tuple[int, int]) -> pl.Series:
        return lines.text(fields[span], name, blank_null=True)

    table = pl.DataFrame({
        "file": lines.file, "line": lines.line, "event": event,
        "start_no": int_column("", start, np.int32, ~start_ok),
        "name": lines.text(fields[NAME], "name"), "sex": optional("sex", SEX),
        "title": optional("title", TITLE), "rating": positive(rating, np.int32),
        "federation": optional("federation", FEDERATION), "fide_id": positive(fide, np.int64),
        "birth": optional("birth", BIRTH), "declared_rank": positive(rank, np.int32),
    }) if n else pl.DataFrame(schema={"file": pl.Int32, "line": pl.Int32, "event": pl.Int64, "start_no": pl.Int32,
                                      "name": pl.String, "sex": pl.String, "title": pl.String,
                                      "rating": pl.Int32, "federation": pl.String, "fide_id": pl.Int64,
                                      "birth": pl.String, "declared_rank": pl.Int32})
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = np.arange(n)

    # problems, in file order: starting ranks, ratings, then duplicates
    problems = []
    assert rating.value is not None and rating.ok is not None
    bad_start = ~start_ok | (start <= 0)
    bad_rating = (~rating.ok & rating.filled) | (rating.ok & (rating.value < 0))  # '-100' is no rating either
    first = np.ones(n, dtype=bool)
    first[1:] = (key[order][1:] != key[order][:-1])
    first_line = lines.line[np.maximum.accumulate(np.where(first, np.arange(n), 0))] if n else lines.line
    dup = start_ok & ~first
    for mask, column, reason, span in (
            (bad_start, "starting rank (cols 5-8)", "'{}' is not a starting rank (expected a number 1-9999)", START),
            (bad_rating, "rating (cols 49-52)", "'{}' is not a rating (expected digits, or blank/0 for unrated)",
             RATING)):
        rows = _file_order(mask, order)
        if rows.size:
            df = pl.DataFrame({"file": lines.file[rows], "line": lines.line[rows],
                               "_text": lines.text(fields[span], "_text", rows)})
            problems.append(problem_rows(df, column, pl.format(reason, pl.col("_text"))))
    rows = _file_order(dup, order)
    if rows.size:
        df = pl.DataFrame({"file": lines.file[rows], "line": lines.line[rows], "_no": start[rows],
                           "_first": first_line[rows]})
        problems.append(problem_rows(df, "starting rank (cols 5-8)", pl.format(
            "duplicate starting rank {} (first used on line {})", pl.col("_no"), pl.col("_first"))))
    # fields that only check or describe: a warning, and the field left blank
    notes = []
    for field, ok, column, reason in (
            (fields[POINTS], points_ok, "points (cols 81-84)",
             "'{}' is not a number of points: declared points not checked"),
            (rank, rank.ok, "rank (cols 86-89)", "'{}' is not a rank (expected digits): declared rank left blank"),
            (fide, fide.ok, "FIDE id (cols 58-68)", "'{}' is not a FIDE id (expected digits): left blank")):
        assert ok is not None
        rows = _file_order(~ok & field.filled, order)
        if rows.size:
            df = pl.DataFrame({"file": lines.file[rows], "line": lines.line[rows],
                               "_text": lines.text(field, "_text", rows)})
            notes.append(problem_rows(df, column, pl.format(reason, pl.col("_text"))))
    players = Players(lines, event, inverse, start, start_ok, points, points_ok, fields[POINTS], table)
    return (players, pl.concat(problems) if problems else no_problems(),
            pl.concat(notes) if notes else no_problems())


def _file_order(mask: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Rows (in sorted order) where ``mask`` holds, listed in file order."""
    rows = np.flatnonzero(mask)
    return rows[np.argsort(order[rows], kind="stable")]
