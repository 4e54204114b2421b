"""CSV files read by runs of their rows: a run of a CSV model parses its own rows only.

A CSV file has no row groups. The plan (:mod:`tbstats.io.parts`) scans each file's ``tournament`` column once
(:func:`csv_ids`) to find the rows of each run and, for a file that several runs read (a flat file above all:
one table of the whole archive), where those rows start (:func:`row_starts`: one pass over the file at the speed
of ``memchr``, :mod:`tbstats.io.csvrows`). A run then parses the bytes of its rows (:func:`read_rows`), checked
to hold them (as many rows, of the run's tournaments); otherwise, or when the plan found no bytes, the CSV reader
skips the rows before the run without parsing their cells, which costs each run as much as every row before it.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from tbstats.io import check, tabular


def csv_ids(file: str) -> tuple[pl.Series, pl.Series]:
    """A CSV file's ``tournament`` cells as text and as whole numbers (null where empty or not a number);
    a file cut inside its last row raises :class:`FormatError`, as reading it whole does."""
    scan = pl.scan_csv(file, infer_schema=False)
    columns = scan.collect_schema().names()
    text = scan.select(pl.col("tournament")).collect(engine="streaming")["tournament"]
    tabular.read._check_last_row(Path(file), len(text), columns)
    return text, text.str.strip_chars().cast(pl.Int64, strict=False)


def row_starts(runs: list[tuple[tuple[str, tuple[tuple[int, int], ...]], ...]]
               ) -> dict[str, tuple[int, dict[int, int]]]:
    """For each CSV file that several runs read: where its header ends and where each data row that a run
    starts or ends at starts (:func:`tbstats.io.csvrows.line_starts`: one pass over the file at the speed of
    ``memchr``, instead of the reader skipping every row before each run, which cost each run as much as all
    the rows before it: the square of the file's length in all)."""
    from tbstats.io.csvrows import line_starts

    wanted: dict[str, set[int]] = {}
    readers: dict[str, int] = {}
    for rows in runs:
        for file, ranges in rows:
            wanted.setdefault(file, set()).update(r for r0, r1 in ranges for r in (r0, r1))
            readers[file] = readers.get(file, 0) + bool(ranges)
    out = {}
    for file, numbers in wanted.items():
        if readers[file] < 2:
            continue   # (read by one run: no rows before it to skip)
        at = sorted(numbers | {0})   # (data row r is the file's line r + 1: line 0 is the header)
        found = dict(zip(at, line_starts(file, [r + 1 for r in at]).tolist(), strict=True))
        out[file] = (found[0], found)
    return out


def merged(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Row ranges sorted, the touching or overlapping ones joined.

    >>> merged([(5, 6), (0, 3), (3, 4), (9, 10)])
    [(0, 4), (5, 6), (9, 10)]
    """
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def read_rows(file: str, ranges: tuple[tuple[int, int], ...], types: dict[str, pl.DataType],
              where: str, drop_loose: bool, spans: tuple[int, tuple[tuple[int, int], ...]] | None = None,
              ids: tuple[int, int] | None = None) -> pl.DataFrame:
    """The data rows ``ranges`` of a CSV file parsed into ``types``, with ``_file`` and ``_row``; with
    ``drop_loose``, rows without a tournament (a flat file's warnings, read by the first run) are left out.
    ``spans``: the header's end and each range's bytes (:func:`row_starts`), when the plan found them, for
    rows of the tournaments ``ids`` (lowest, highest), when known."""
    frames = None if spans is None else _spans(file, ranges, *spans, ids)
    if frames is None:   # (the reader skips the rows before each range)
        try:
            frames = [pl.scan_csv(file, infer_schema=False, skip_rows_after_header=r0, n_rows=r1 - r0,
                                  row_index_name="_row", row_index_offset=r0).collect() for r0, r1 in ranges]
        except pl.exceptions.PolarsError as exc:
            tabular.read.long_row(Path(file), exc)   # (a row too long: named by its line)
            raise
    raw = pl.concat(frames) if frames else pl.scan_csv(file, infer_schema=False).head(0).collect().with_columns(
        pl.lit(None, pl.UInt32).alias("_row"))
    if drop_loose:
        raw = raw.filter(pl.col("tournament").is_not_null())
    parsed = tabular.read._parse_csv(raw, types, where)
    return parsed.with_columns(pl.lit(file, check.FILE).alias("_file"), pl.col("_row").cast(check.ROW))


def _spans(file: str, ranges: tuple[tuple[int, int], ...], header: int, spans: tuple[tuple[int, int], ...],
           ids: tuple[int, int] | None) -> list[pl.DataFrame] | None:
    """The data rows ``ranges`` of a CSV file parsed from their own bytes (``spans``, after the header's
    ``header`` bytes), or None when a range's bytes do not hold its rows, as many as the range and of the
    tournaments ``ids`` (the file changed since the plan, or a quote the line finder counts and a CSV reader
    does not): then the reader skips the rows before it."""
    frames = []
    try:
        with open(file, "rb") as handle:
            names = pl.read_csv(handle.read(header), infer_schema=False, n_rows=0).columns
            for (r0, r1), (b0, b1) in zip(ranges, spans, strict=True):
                handle.seek(b0)
                data = handle.read(b1 - b0)
                frame = pl.read_csv(data, has_header=False, new_columns=names, infer_schema=False,
                                    row_index_name="_row", row_index_offset=r0) if data else None
                if frame is None or frame.height != r1 - r0 or frame.width != len(names) + 1:
                    return None
                found = frame["tournament"].str.strip_chars().cast(pl.Int64, strict=False).drop_nulls().to_numpy()
                if ids is not None and len(found) and (found.min() < ids[0] or found.max() > ids[1]):
                    return None
                frames.append(frame)
    except (OSError, pl.exceptions.PolarsError):   # (the reader then meets the problem and names it, as ever)
        return None
    return frames
