"""Result tables written as CSV, TSV, JSON, Markdown or Parquet, to a file or to standard output.

Floats are written as plain decimals (``35.5``, ``17.25``, ``10.0``; never ``1e+01``); nulls are empty cells
in CSV/TSV/Markdown and ``null`` in JSON; list cells are JSON arrays.

CSV and TSV are spreadsheet-safe by default: a text cell that a spreadsheet would read as a formula (it starts
with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return, and is not a plain number) gets a leading ``'``
(:func:`escape_formulas`); numeric columns, negative numbers included, are never changed.
"""

from __future__ import annotations

import json
import math
import re
import sys
from datetime import date, datetime
from pathlib import Path
from typing import Any, Final

import numpy as np
import polars as pl

from tbstats.errors import TbstatsError

#: Output formats; the text ones can go to standard output.
FORMATS: Final = ("csv", "tsv", "json", "md", "parquet")
TEXT_FORMATS: Final = ("csv", "tsv", "json", "md")
#: First characters that make a spreadsheet read a cell as a formula.
FORMULA_STARTS: Final = "=+-@\t\r"
_PLAIN_NUMBER: Final = r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$"


def plain(value: float) -> str:
    """A float as a plain decimal, with the fewest digits that read back to it.

    >>> plain(35.5), plain(10.0), plain(1e20), plain(1e-7), plain(-0.25)
    ('35.5', '10.0', '100000000000000000000.0', '0.0000001', '-0.25')
    """
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return str(np.format_float_positional(value, trim="0"))


def _cell(value: object) -> object:
    """A cell for the text formats: floats and lists as text, the rest as it is."""
    if isinstance(value, float):
        return plain(value)
    if isinstance(value, list):
        return _json(value)
    return value


def _json(value: object) -> str:
    """JSON text of one value, floats as plain decimals (NaN and infinities as null)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return plain(value) if math.isfinite(value) else "null"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_json(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))}: {_json(v)}" for k, v in value.items()) + "}"
    if isinstance(value, date | datetime):
        return json.dumps(value.isoformat())
    return json.dumps(str(value), ensure_ascii=False)


def _text_columns(df: pl.DataFrame) -> pl.DataFrame:
    """Float and nested columns as strings, so that every text writer prints them alike."""
    convert = [c for c, t in df.schema.items() if t.is_float() or t.is_nested()]
    return df.with_columns(pl.Series(c, [None if v is None else _cell(v) for v in df[c].to_list()],
                                     dtype=pl.String) for c in convert)


def escape_formulas(df: pl.DataFrame) -> pl.DataFrame:
    """Text columns with a ``'`` before every cell a spreadsheet would run as a formula; numbers untouched.

    >>> df = pl.DataFrame({"name": ["=HYPERLINK(1)", "-1+2", "Ann", "-3.5", "@x"], "points": [-1, 2, 3, 4, 5]})
    >>> escape_formulas(df).rows()[:2], escape_formulas(df)["name"].to_list()[2:]
    ([("'=HYPERLINK(1)", -1), ("'-1+2", 2)], ['Ann', '-3.5', "'@x"])
    """
    text = [c for c, t in df.schema.items() if t == pl.String() or isinstance(t, pl.Enum | pl.Categorical)]

    def escaped(name: str) -> pl.Expr:
        cell = pl.col(name).cast(pl.String)
        risky = cell.str.contains(f"^[{re.escape(FORMULA_STARTS)}]") & ~cell.str.contains(_PLAIN_NUMBER)
        return pl.when(risky.fill_null(False)).then(pl.lit("'") + cell).otherwise(cell).alias(name)

    return df.with_columns(escaped(c) for c in text)


def format_table(df: pl.DataFrame, fmt: str, *, csv_escape: bool = True) -> str:
    """The text of a table in a text format (csv, tsv, json, md); ``csv_escape``: see :func:`escape_formulas`.

    >>> print(format_table(pl.DataFrame({"name": ["Ann", None], "BH": [35.5, 17.25]}), "md"), end="")
    | name | BH |
    | --- | ---: |
    | Ann | 35.5 |
    |  | 17.25 |
    """
    if fmt in ("csv", "tsv"):
        df = escape_formulas(df) if csv_escape else df
        return _text_columns(df).write_csv(separator="," if fmt == "csv" else "\t")
    if fmt == "json":
        rows = [_json(row) for row in df.iter_rows(named=True)]
        return "[\n" + ",\n".join(f"  {r}" for r in rows) + "\n]\n" if rows else "[]\n"
    if fmt == "md":
        return _markdown(df)
    raise TbstatsError(f"unknown text format {fmt!r} (expected one of {', '.join(TEXT_FORMATS)})")


def _markdown(df: pl.DataFrame) -> str:
    def esc(value: object) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        return "" if value is None else str(value).replace("|", "\\|").replace("\n", " ")

    text = _text_columns(df)
    align = ["---:" if t.is_numeric() else "---" for t in df.schema.values()]
    lines = ["| " + " | ".join(esc(c) for c in df.columns) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(esc(v) for v in row) + " |" for row in text.iter_rows()]
    return "\n".join(lines) + "\n"


def write_table(df: pl.DataFrame, fmt: str, path: str | Path | None, *, csv_escape: bool = True) -> None:
    """Write a table in ``fmt`` to ``path``, or to standard output when ``path`` is None.

    Parquet needs a path: without one it raises :class:`TbstatsError`. ``csv_escape`` (CSV/TSV only) prefixes
    formula-like text cells with ``'`` (:func:`escape_formulas`).
    """
    if fmt == "parquet":
        if path is None:
            raise TbstatsError("parquet output needs a file (-o FILE); it cannot go to standard output")
        df.write_parquet(path)
        return
    text = format_table(df, fmt, csv_escape=csv_escape)
    if path is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        Path(path).write_text(text, encoding="utf-8", newline="")


class TableFile:
    """A result table written to a file piece by piece, all or nothing: CSV/TSV text and Parquet row groups go
    to a hidden file beside the target as each piece comes, which :meth:`commit` renames to the target (the
    whole table is never held in memory); :meth:`discard` removes it. The file reads back as the table of the
    pieces concatenated would be written by :func:`write_table` (JSON and Markdown are kept and written at
    commit). Pieces must have the first piece's columns and types.
    """

    def __init__(self, fmt: str, path: str | Path, *, csv_escape: bool = True) -> None:
        self.format, self.path, self.csv_escape = fmt, Path(path), csv_escape
        self._temp = self.path.with_name(f".{self.path.name}.partial")
        self._kept: list[pl.DataFrame] = []
        self._handle: Any = None
        self._first: pl.DataFrame | None = None

    def write(self, df: pl.DataFrame) -> None:
        """Add a piece of the table."""
        if self._first is None:
            self._first = df.clear()
        if self.format == "parquet":
            import pyarrow.parquet as pq

            table = df.to_arrow()
            if self._handle is None:
                self._handle = pq.ParquetWriter(str(self._temp), table.schema)
            if table.num_rows:
                self._handle.write_table(table.cast(self._handle.schema))
        elif self.format in ("csv", "tsv"):
            first = self._handle is None
            if first:
                self._handle = self._temp.open("w", encoding="utf-8", newline="")
            piece = escape_formulas(df) if self.csv_escape else df
            self._handle.write(_text_columns(piece).write_csv(separator="," if self.format == "csv" else "\t",
                                                              include_header=first))
        else:
            self._kept.append(df)

    def commit(self, empty: pl.DataFrame) -> None:
        """Finish the file and put it in place (``empty``: the table's columns, when no piece came)."""
        if self._handle is None:
            write_table(pl.concat(self._kept) if self._kept else empty, self.format, self.path,
                        csv_escape=self.csv_escape)
            return
        self._handle.close()
        self._handle = None
        self._temp.replace(self.path)

    def discard(self) -> None:
        """Remove what was written (the target is left as it was)."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None
        self._temp.unlink(missing_ok=True)
        self._kept.clear()
