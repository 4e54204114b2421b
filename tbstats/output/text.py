"""Result tables written as CSV, TSV, JSON, Markdown or Parquet, to a file or to standard output.

Floats are written as plain decimals (``35.5``, ``17.25``, ``10.0``; never ``1e+01``); nulls are empty cells
in CSV/TSV/Markdown and ``null`` in JSON; list cells are JSON arrays.

CSV and TSV are spreadsheet-safe by default: a text cell that a spreadsheet would read as a formula (it starts
with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return, and is not a plain number) gets a leading ``'``
(:func:`escape_formulas`); numeric columns, negative numbers included, are never changed.
"""

from __future__ import annotations

import io
import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, Final

from tbstats.errors import TbstatsError

if TYPE_CHECKING:   # numpy and polars are imported where they are used: a table of text needs neither
    import polars as pl

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
    import numpy as np

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


def _text_columns(df: pl.DataFrame, *, csv: bool = False) -> pl.DataFrame:
    """Float and nested columns as strings, so that every text writer prints them alike (``csv``: float columns
    that polars' CSV writer prints as :func:`plain` already stay numbers, see :func:`_float_text`)."""
    import polars as pl

    nested = [c for c, t in df.schema.items() if t.is_nested()]
    floats = [_float_text(df[c], csv=csv) for c, t in df.schema.items() if t.is_float()]
    return df.with_columns(*floats, *(pl.Series(c, [None if v is None else _cell(v) for v in df[c].to_list()],
                                                dtype=pl.String) for c in nested))


def _float_text(column: pl.Series, *, csv: bool = False) -> pl.Series:
    """A float column as :func:`plain` text: polars' shortest round-trip text, which is :func:`plain`'s but for
    the few cells it writes in scientific notation (below 1e-4 or from 1e16), done one by one.

    With ``csv``, a Float64 column without such cells is returned as it is: polars' CSV writer prints each value
    as the same shortest text as its cast to text (``tests/test_output.py`` checks it on random values), and
    printing the numbers costs less than making their text first.

    >>> import polars as pl
    >>> _float_text(pl.Series("x", [2.5, None, 1e-7, 1e20, -0.25, float("nan")])).to_list()
    ['2.5', None, '0.0000001', '100000000000000000000.0', '-0.25', 'NaN']
    >>> _float_text(pl.Series("x", [2.5, None]), csv=True).dtype, _float_text(pl.Series("x", [1e-7]), csv=True).dtype
    (Float64, String)
    """
    import polars as pl

    values = column.cast(pl.Float64)
    size = values.abs()
    maybe = ((size < 1e-3) & (size > 0)) | ((size >= 1e15) & values.is_finite())   # polars' scientific range
    if not maybe.any():   # (null compares as null: never a candidate)
        return column if csv and column.dtype == pl.Float64 else values.cast(pl.String)
    text = values.cast(pl.String)
    at = (maybe.fill_null(False) & text.str.contains("e", literal=True)).arg_true()
    return text.scatter(at, [plain(v) for v in values.gather(at).to_list()]) if len(at) else text


#: Columns whose cells tbstats validated against a closed vocabulary (TRF result codes such as ``+``, ``-``,
#: ``=``; game types; C.07 16.2 categories): never free text from a file, so never escaped.
CODE_COLUMNS: Final = frozenset({"result", "colour", "type", "game_type", "match_type", "category"})


def escape_formulas(df: pl.DataFrame) -> pl.DataFrame:
    """Text columns with a ``'`` before every cell a spreadsheet would run as a formula; numbers untouched.

    Only free text is escaped (names, places, sources, ...): the columns of :data:`CODE_COLUMNS` hold codes
    tbstats validated, which must read back as they are.

    >>> import polars as pl
    >>> df = pl.DataFrame({"name": ["=HYPERLINK(1)", "-1+2", "Ann", "-3.5", "@x"], "points": [-1, 2, 3, 4, 5]})
    >>> escape_formulas(df).rows()[:2], escape_formulas(df)["name"].to_list()[2:]
    ([("'=HYPERLINK(1)", -1), ("'-1+2", 2)], ['Ann', '-3.5', "'@x"])
    >>> escape_formulas(pl.DataFrame({"result": ["+", "=", "-"]}))["result"].to_list()
    ['+', '=', '-']
    """
    import polars as pl

    text = [c for c, t in df.schema.items() if (t == pl.String() or isinstance(t, pl.Enum | pl.Categorical))
            and c not in CODE_COLUMNS]

    def escaped(name: str) -> pl.Expr:
        cell = pl.col(name).cast(pl.String)
        risky = cell.str.contains(f"^[{re.escape(FORMULA_STARTS)}]") & ~cell.str.contains(_PLAIN_NUMBER)
        return pl.when(risky.fill_null(False)).then(pl.lit("'") + cell).otherwise(cell).alias(name)

    return df.with_columns(escaped(c) for c in text)



def format_table(df: pl.DataFrame, fmt: str, *, csv_escape: bool = True) -> str:
    """The text of a table in a text format (csv, tsv, json, md); ``csv_escape``: see :func:`escape_formulas`.

    >>> import polars as pl
    >>> print(format_table(pl.DataFrame({"name": ["Ann", None], "BH": [35.5, 17.25]}), "md"), end="")
    | name | BH |
    | --- | ---: |
    | Ann | 35.5 |
    |  | 17.25 |
    """
    if fmt not in TEXT_FORMATS:
        raise TbstatsError(f"unknown text format {fmt!r} (expected one of {', '.join(TEXT_FORMATS)})")
    text = TextPieces(fmt, csv_escape)
    return text.piece(df) + text.end()


@dataclass(frozen=True)
class Rendered:
    """A CSV/TSV piece as the bytes of its file: its header line and its rows (:func:`render`), made where its
    table is (a Dask worker), so that only bytes travel and the writer copies them (:meth:`TableFile.write`)."""

    header: bytes
    body: bytes


def render(df: pl.DataFrame, fmt: str, *, csv_escape: bool = True, prepared: bool = False) -> Rendered:
    """The bytes of a CSV/TSV piece (``prepared``: already passed through :func:`text_ready`).

    >>> import polars as pl
    >>> render(pl.DataFrame({"name": ["=1"], "BH": [2.5]}), "csv")
    Rendered(header=b'name,BH\\n', body=b"'=1,2.5\\n")
    """
    if not prepared:
        df = text_ready(df, fmt, csv_escape=csv_escape)
    separator = "," if fmt == "csv" else "\t"
    header, body = io.BytesIO(), io.BytesIO()
    df.head(0).write_csv(header, separator=separator)
    df.write_csv(body, separator=separator, include_header=False)
    return Rendered(header.getvalue(), body.getvalue())


class TextPieces:
    """The text of a table piece by piece: each piece's rows as they come (the header with the first piece),
    then :meth:`end`; the pieces' texts joined are :func:`format_table` of the pieces concatenated."""

    def __init__(self, fmt: str, csv_escape: bool) -> None:
        self.format, self.csv_escape = fmt, csv_escape
        self.started = False   # the header is written
        self.rows = 0

    def write(self, handle: Any, df: pl.DataFrame | Rendered) -> None:
        """Write a piece's text to a binary file: CSV/TSV as the bytes :func:`render` makes of it (or that it made
        elsewhere: a :class:`Rendered` piece), the other formats as UTF-8."""
        if self.format not in ("csv", "tsv"):
            if isinstance(df, Rendered):
                raise TbstatsError(f"a rendered piece is CSV or TSV, not {self.format}")
            handle.write(self.piece(df).encode("utf-8"))
            return
        if not isinstance(df, Rendered):
            df = render(df, self.format, csv_escape=self.csv_escape)
        if not self.started:
            handle.write(df.header)
        self.started = True
        handle.write(df.body)

    def piece(self, df: pl.DataFrame) -> str:
        if self.format in ("csv", "tsv"):   # one way to write CSV: :meth:`write`
            buffer = io.BytesIO()
            self.write(buffer, df)
            return buffer.getvalue().decode("utf-8")
        first, self.started = not self.started, True
        head = ""
        if self.format == "md" and first:
            align = ["---:" if t.is_numeric() else "---" for t in df.schema.values()]
            head = _md_line(df.columns) + _md_line(align)
        if self.format == "md":
            return head + "".join(_md_lines(df))
        lines = _json_lines(df)
        text = ("[\n  " if self.rows == 0 else ",\n  ") + ",\n  ".join(lines) if lines else ""
        self.rows += len(lines)
        return text

    def end(self) -> str:
        if self.format != "json":
            return ""
        return "\n]\n" if self.rows else "[]\n"


def text_ready(df: pl.DataFrame, fmt: str, *, csv_escape: bool = True) -> pl.DataFrame:
    """A piece of a CSV/TSV table as its writer prints it: floats as plain decimals, nested values as JSON text,
    formula-like text escaped (``csv_escape``). This is the costly part of writing text (a few ms per column of
    50,000 rows), so a run can do it where each piece is made (:attr:`TableFile.prepare`: on a Dask worker)."""
    if fmt not in ("csv", "tsv"):
        raise TbstatsError(f"text_ready is for csv and tsv pieces, not {fmt}")
    return _text_columns(escape_formulas(df) if csv_escape else df, csv=True)


def _json_lines(df: pl.DataFrame) -> list[str]:
    """Each row of a table as the JSON object :func:`_json` makes of it, made column by column (polars' JSON
    encoder escapes text as :func:`json.dumps` does; floats are :func:`plain`, not finite ones null); columns of
    other types (lists, datetimes) go through :func:`_json` cell by cell."""
    import polars as pl

    if not df.width:
        return ["{}"] * df.height
    parts: list[pl.Expr | pl.Series] = []
    for k, (name, column) in enumerate(df.to_dict().items()):
        parts += [pl.lit(("{" if not k else ", ") + json.dumps(str(name)) + ": "), _json_values(column).alias(f"_{k}")]
    return pl.select(pl.concat_str([*parts, pl.lit("}")])).to_series().to_list()


def _json_values(column: pl.Series) -> pl.Series:
    """The cells of a column as :func:`_json` writes them."""
    import polars as pl

    kind = column.dtype
    if kind.is_integer() or kind == pl.Boolean():
        text = column.cast(pl.String)
    elif kind.is_float():
        text = pl.select(pl.when(column.is_finite()).then(_float_text(column))).to_series()
    elif kind == pl.String() or isinstance(kind, pl.Enum | pl.Categorical):
        text = pl.select(pl.struct(column.cast(pl.String).alias("v")).struct.json_encode()).to_series()
        text = text.str.slice(5, text.str.len_chars() - 6)   # (``{"v":...}``: the value alone)
    elif kind == pl.Date():
        text = '"' + column.cast(pl.String) + '"'
    else:
        return pl.Series([_json(v) for v in column.to_list()], dtype=pl.String)
    return text.fill_null("null")


def _md_lines(df: pl.DataFrame) -> list[str]:
    """Each row of a table as :func:`_md_line` writes it (of :func:`_text_columns`), made column by column;
    columns of types whose text polars writes otherwise than Python (datetimes, binary) cell by cell."""
    import polars as pl

    if not df.width:
        return ["|  |\n"] * df.height
    columns = []
    for column in _text_columns(df).to_dict().values():
        kind = column.dtype
        if not (kind.is_numeric() or kind in (pl.Boolean(), pl.String(), pl.Date())
                or isinstance(kind, pl.Enum | pl.Categorical)):
            column = pl.Series([None if v is None else str(v) for v in column.to_list()], dtype=pl.String)
        columns.append(column.cast(pl.String).fill_null("").str.replace_all("|", "\\|", literal=True)
                       .str.replace_all("\n", " ", literal=True))
    return pl.select(pl.concat_str([pl.lit("| "), pl.concat_str(columns, separator=" | "), pl.lit(" |\n")])
                     ).to_series().to_list()


def _md_line(cells: Iterable[object]) -> str:
    def esc(value: object) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        return "" if value is None else str(value).replace("|", "\\|").replace("\n", " ")

    return "| " + " | ".join(esc(v) for v in cells) + " |\n"


def _risky(cell: str) -> bool:
    """Whether a spreadsheet would run a text cell as a formula (:func:`escape_formulas`' rule)."""
    return cell[:1] != "" and cell[0] in FORMULA_STARTS and re.search(_PLAIN_NUMBER, cell) is None


def _csv_line(cells: Iterable[str | None], separator: str) -> str:
    """One CSV/TSV line as polars writes it: a cell quoted when it is empty text or holds the separator, a quote
    or a line break; a missing cell empty."""
    def quoted(cell: str | None) -> str:
        if cell is None:
            return ""
        if cell == "" or any(c in cell for c in (separator, '"', "\n", "\r")):
            return '"' + cell.replace('"', '""') + '"'
        return cell

    return separator.join(quoted(c) for c in cells) + "\n"


def format_strings(columns: Sequence[str], rows: Iterable[Sequence[str | None]], fmt: str, *,
                   csv_escape: bool = True) -> str:
    """:func:`format_table` of a table of text cells (a short listing), without numpy or polars.

    >>> print(format_strings(["name", "note"], [["BH", "=1"], ["SB", None]], "csv"), end="")
    name,note
    BH,'=1
    SB,
    """
    if fmt not in TEXT_FORMATS:
        raise TbstatsError(f"unknown text format {fmt!r} (expected one of {', '.join(TEXT_FORMATS)})")
    rows = [list(row) for row in rows]
    if fmt in ("csv", "tsv"):
        escaped = [csv_escape and c not in CODE_COLUMNS for c in columns]
        lines: list[list[str | None]] = [list(columns)]
        lines += [[("'" + c) if e and c is not None and _risky(c) else c for c, e in zip(row, escaped, strict=True)]
                  for row in rows]
        return "".join(_csv_line(cells, "," if fmt == "csv" else "\t") for cells in lines)
    if fmt == "md":
        return "".join(_md_line(cells) for cells in [columns, ["---"] * len(columns), *rows])
    if not rows:
        return "[]\n"
    return "[\n  " + ",\n  ".join(_json(dict(zip(columns, row, strict=True))) for row in rows) + "\n]\n"
