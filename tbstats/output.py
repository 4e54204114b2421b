"""Result tables written as CSV, TSV, JSON, Markdown or Parquet, to a file or to standard output.

Floats are written as plain decimals (``35.5``, ``17.25``, ``10.0``; never ``1e+01``); nulls are empty cells
in CSV/TSV/Markdown and ``null`` in JSON; list cells are JSON arrays.

CSV and TSV are spreadsheet-safe by default: a text cell that a spreadsheet would read as a formula (it starts
with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return, and is not a plain number) gets a leading ``'``
(:func:`escape_formulas`); numeric columns, negative numbers included, are never changed.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import math
import re
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from datetime import date, datetime
from pathlib import Path
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


def _text_columns(df: pl.DataFrame) -> pl.DataFrame:
    """Float and nested columns as strings, so that every text writer prints them alike."""
    import polars as pl

    nested = [c for c, t in df.schema.items() if t.is_nested()]
    floats = [_float_text(df[c]) for c, t in df.schema.items() if t.is_float()]
    return df.with_columns(*floats, *(pl.Series(c, [None if v is None else _cell(v) for v in df[c].to_list()],
                                                dtype=pl.String) for c in nested))


def _float_text(column: pl.Series) -> pl.Series:
    """A float column as :func:`plain` text: polars' shortest round-trip text, which is :func:`plain`'s but for
    the few cells it writes in scientific notation (below 1e-4 or from 1e16), done one by one.

    >>> import polars as pl
    >>> _float_text(pl.Series("x", [2.5, None, 1e-7, 1e20, -0.25, float("nan")])).to_list()
    ['2.5', None, '0.0000001', '100000000000000000000.0', '-0.25', 'NaN']
    """
    import polars as pl

    values = column.cast(pl.Float64)
    text = values.cast(pl.String)
    size = values.abs()
    maybe = ((size < 1e-3) & (size > 0)) | ((size >= 1e15) & values.is_finite())   # polars' scientific range
    if not maybe.any():   # (null compares as null: never a candidate)
        return text
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


#: Rows per Parquet row group: pieces are gathered and cut at these boundaries, so that a file written piece by
#: piece is the same, byte for byte, whatever the pieces' sizes (and its footer stays small).
ROW_GROUP_ROWS: Final = 65_536


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
    text = _Text(fmt, csv_escape)
    return text.piece(df) + text.end()


class _Text:
    """The text of a table piece by piece: each piece's rows as they come (the header with the first piece),
    then :meth:`end`; the pieces' texts joined are :func:`format_table` of the pieces concatenated."""

    def __init__(self, fmt: str, csv_escape: bool) -> None:
        self.format, self.csv_escape = fmt, csv_escape
        self.started = False   # the header is written
        self.rows = 0

    def write(self, handle: Any, df: pl.DataFrame, *, prepared: bool = False) -> None:
        """Write a piece's text to a binary file: CSV/TSV by polars straight into it (no Python string of the
        piece: half the time of :meth:`piece` for a large one), the other formats as UTF-8."""
        if self.format not in ("csv", "tsv"):
            handle.write(self.piece(df, prepared=prepared).encode("utf-8"))
            return
        first, self.started = not self.started, True
        if not prepared:
            df = text_ready(df, self.format, csv_escape=self.csv_escape)
        df.write_csv(handle, separator="," if self.format == "csv" else "\t", include_header=first)

    def piece(self, df: pl.DataFrame, *, prepared: bool = False) -> str:
        if self.format in ("csv", "tsv"):   # one way to write CSV: :meth:`write`
            buffer = io.BytesIO()
            self.write(buffer, df, prepared=prepared)
            return buffer.getvalue().decode("utf-8")
        first, self.started = not self.started, True
        head = ""
        if self.format == "md" and first:
            align = ["---:" if t.is_numeric() else "---" for t in df.schema.values()]
            head = _md_line(df.columns) + _md_line(align)
        if self.format == "md":
            return head + "".join(_md_line(row) for row in _text_columns(df).iter_rows())
        lines = [("[\n  " if self.rows == 0 and k == 0 else ",\n  ") + _json(row)
                 for k, row in enumerate(df.iter_rows(named=True))]
        self.rows += len(lines)
        return "".join(lines)

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
    return _text_columns(escape_formulas(df) if csv_escape else df)


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


def write_strings(columns: Sequence[str], rows: Sequence[Sequence[str | None]], fmt: str, path: str | Path | None,
                  *, csv_escape: bool = True) -> None:
    """:func:`write_table` of a table of text cells; the text formats without numpy or polars."""
    if fmt not in TEXT_FORMATS:
        import polars as pl

        write_table(pl.DataFrame([list(r) for r in rows], schema=dict.fromkeys(columns, pl.String), orient="row"),
                    fmt, path, csv_escape=csv_escape)
        return
    text = format_strings(columns, rows, fmt, csv_escape=csv_escape)
    if path is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        with Path(path).open("w", encoding="utf-8", newline="") as out:
            out.write(text)


def write_table(df: pl.DataFrame, fmt: str, path: str | Path | None, *, csv_escape: bool = True) -> None:
    """Write a table in ``fmt`` to ``path``, or to standard output when ``path`` is None.

    Parquet needs a path: without one it raises :class:`TbstatsError`. ``csv_escape`` (CSV/TSV only) prefixes
    formula-like text cells with ``'`` (:func:`escape_formulas`).
    """
    out = TableFile(fmt, path, csv_escape=csv_escape)
    try:
        out.write(df)
    except BaseException:
        out.discard()
        raise
    out.commit(df)   # (removes its hidden file itself when it fails)


#: How to remove each output still being written (a hidden file, a dataset's new parts): the command line runs
#: them all when Ctrl-C stops it at once (:func:`remove_unfinished`).
_UNFINISHED: set[Callable[[], None]] = set()


def unfinished(remove: Callable[[], None]) -> None:
    """Note an output being written and how to remove it (until :func:`finished` with the same function)."""
    _UNFINISHED.add(remove)


def finished(remove: Callable[[], None]) -> None:
    """The output that ``remove`` would remove is complete, or removed."""
    _UNFINISHED.discard(remove)


def remove_unfinished() -> None:
    """Remove every output still being written (errors ignored: the process is about to stop)."""
    for remove in list(_UNFINISHED):
        with contextlib.suppress(Exception):
            remove()
    _UNFINISHED.clear()


def _copy_to_stdout(binary: Any) -> None:
    """Copy a binary file to standard output: to its byte stream when it has one (after what its text layer
    holds), else decoded as UTF-8 (a stream without bytes, e.g. one a host program set)."""
    sys.stdout.flush()
    out = getattr(sys.stdout, "buffer", None)
    if out is not None:
        shutil.copyfileobj(binary, out)
        out.flush()
    else:
        import codecs

        decoder = codecs.getincrementaldecoder("utf-8")()   # a block may end inside a character
        for block in iter(lambda: binary.read(1 << 20), b""):
            sys.stdout.write(decoder.decode(block))
        sys.stdout.write(decoder.decode(b"", final=True))
    sys.stdout.flush()


def _special(path: Path) -> bool:
    """Whether ``path`` exists and is neither a regular file nor a directory (a device, a FIFO, a socket)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


class TableFile:
    """A result table written piece by piece to a file (or to standard output when ``path`` is None), all or
    nothing: the text, or Parquet row groups of :data:`ROW_GROUP_ROWS` rows, go to a hidden file beside the
    target (an unnamed temporary file for standard output) as each piece comes; :meth:`commit` renames it to
    the target (copies it to standard output), :meth:`discard` removes it. The whole table is never held in
    memory, and the output is the same, byte for byte, as :func:`write_table` of the pieces concatenated, for
    any cut into pieces. Pieces must have the first piece's columns and types.
    """

    def __init__(self, fmt: str, path: str | Path | None, *, csv_escape: bool = True) -> None:
        if fmt not in FORMATS:
            raise TbstatsError(f"unknown format {fmt!r} (expected one of {', '.join(FORMATS)})")
        if fmt == "parquet" and path is None:
            raise TbstatsError("parquet output needs a file (-o FILE); it cannot go to standard output")
        self.format = fmt
        self.path = None if path is None else Path(path)
        # a target that exists and is not a regular file (/dev/null, a FIFO) is written as it is, never replaced
        self._temp = None if self.path is None or _special(self.path) else \
            self.path.with_name(f".{self.path.name}.partial")
        self._text = _Text(fmt, csv_escape)
        self._handle: Any = None
        self._buffer: list[Any] = []   # Parquet: pieces not yet written as a row group
        self._buffered = 0

    def _open(self) -> Any:
        if self._handle is None and self.format != "parquet":
            # binary files: CSV pieces go in as polars writes them (:meth:`_Text.write`), other text as UTF-8
            if self._temp is None and self.path is not None:   # a device or a FIFO: written to directly
                self._handle = self.path.open("wb")
            elif self._temp is None:   # standard output: an unnamed file, deleted when commit or discard closes it
                self._handle = tempfile.TemporaryFile("w+b")  # noqa: SIM115
            else:   # noted before it exists: a Ctrl-C between the two never leaves a hidden file behind
                unfinished(self.discard)
                self._handle = self._temp.open("wb")
        return self._handle

    @property
    def prepare(self) -> Callable[[pl.DataFrame], pl.DataFrame] | None:
        """What :meth:`write` does to a piece before writing it, as a function that can run elsewhere (it
        pickles), or None when there is nothing worth moving (Parquet, Markdown, JSON). Give :meth:`write`
        pieces it made with ``prepared=True``."""
        if self.format not in ("csv", "tsv"):
            return None
        return functools.partial(text_ready, fmt=self.format, csv_escape=self._text.csv_escape)

    def write(self, df: pl.DataFrame, *, prepared: bool = False) -> None:
        """Add a piece of the table (``prepared``: already passed through :attr:`prepare`)."""
        if self.format != "parquet":
            self._text.write(self._open(), df, prepared=prepared)
            return
        import pyarrow.parquet as pq

        if self._handle is None:
            unfinished(self.discard)
            self._handle = pq.ParquetWriter(str(self._temp or self.path), df.head(0).to_arrow().schema)
        if df.height:
            self._buffer.append(df)   # converted to Arrow a row group at a time, when written
            self._buffered += df.height
        if self._buffered >= ROW_GROUP_ROWS:
            self._flush(final=False)
        elif len(self._buffer) >= 64:   # many small pieces (small batches): one table, not thousands
            import pyarrow as pa

            self._buffer = [pa.concat_tables([self._arrow(p) for p in self._buffer]).combine_chunks()]

    def _arrow(self, piece: Any) -> Any:
        """A buffered piece (polars, or Arrow once joined) as an Arrow table of the file's schema."""
        import polars as pl

        if not isinstance(piece, pl.DataFrame):
            return piece
        table = piece.to_arrow()   # (a cast to the same schema would only import pyarrow.compute, ~0.05 s)
        return table if table.schema.equals(self._handle.schema, check_metadata=True) else table.cast(
            self._handle.schema)

    def _flush(self, *, final: bool) -> None:
        """Write the buffered rows as row groups of :data:`ROW_GROUP_ROWS` (the rest too when ``final``), each
        converted to Arrow on its own: a large piece is never copied whole."""
        whole = self._buffered if final else self._buffered - self._buffered % ROW_GROUP_ROWS
        for lo in range(0, whole, ROW_GROUP_ROWS):
            self._write_group(self._take(min(ROW_GROUP_ROWS, whole - lo)))
        self._buffered -= whole
        import polars as pl

        # the rows left (fewer than a row group) copied out of their piece, which can then go (a batch's table)
        self._buffer = [p.rechunk() if isinstance(p, pl.DataFrame) else p for p in self._buffer]

    def _write_group(self, pieces: list[Any]) -> None:
        """Write one row group (its Arrow copy is freed before the next one is made)."""
        import pyarrow as pa

        group = pa.concat_tables([self._arrow(p) for p in pieces]).combine_chunks()
        pieces.clear()
        self._handle.write_table(group, row_group_size=ROW_GROUP_ROWS)

    def _take(self, rows: int) -> list[Any]:
        """The first ``rows`` buffered rows, as slices of the pieces, taken out of the buffer."""
        out = []
        while rows:
            piece = self._buffer[0]
            if len(piece) <= rows:
                out.append(self._buffer.pop(0))
                rows -= len(piece)
            else:
                out.append(piece.slice(0, rows))
                self._buffer[0] = piece.slice(rows)
                rows = 0
        return out

    def commit(self, empty: pl.DataFrame) -> None:
        """Finish the output and put it in place (``empty``: the table's columns, when no piece came); when
        that fails (a full disk, a closed pipe) the hidden file is removed, as by :meth:`discard`."""
        try:
            self._finish(empty)
        except BaseException:
            self.discard()
            raise

    def _finish(self, empty: pl.DataFrame) -> None:
        if self._handle is None:
            self.write(empty.clear())
        if self.format == "parquet":
            self._flush(final=True)
        else:
            self._handle.write(self._text.end().encode("utf-8"))
        if self._temp is None and self.path is not None:   # a device or a FIFO, written as it came
            self._handle.close()
        elif self._temp is None:
            self._handle.seek(0)
            _copy_to_stdout(self._handle)
            self._handle.close()
        else:
            self._handle.close()
            self._temp.replace(self.path)  # type: ignore[arg-type]
        self._handle = None
        finished(self.discard)

    def discard(self) -> None:
        """Remove what was written (the target is left as it was)."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None
        if self._temp is not None:
            self._temp.unlink(missing_ok=True)
        self._buffer.clear()
        finished(self.discard)
