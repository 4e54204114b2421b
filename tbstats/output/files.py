"""Result tables written to a file or to standard output, all or nothing, piece by piece as they come.

:class:`TableFile` writes the text formats as :mod:`tbstats.output.text` makes them (CSV/TSV pieces possibly
rendered elsewhere, e.g. on a Dask worker) and Parquet in row groups; :func:`unfinished` notes each output still
being written, so that Ctrl-C removes it (:func:`remove_unfinished`).
"""

from __future__ import annotations

import contextlib
import functools
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from tbstats.errors import TbstatsError
from tbstats.output.text import FORMATS, TEXT_FORMATS, Rendered, TextPieces, format_strings, render, text_ready

if TYPE_CHECKING:
    import polars as pl


#: Rows per Parquet row group: pieces are gathered and cut at these boundaries, so that a file written piece by
#: piece is the same, byte for byte, whatever the pieces' sizes (and its footer stays small).
ROW_GROUP_ROWS: Final = 65_536


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
#: them all when Ctrl-C stops it at once (:func:`remove_unfinished`), from its signal handler, so none of them
#: waits for a thread or takes a lock.
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
    nothing: the text, or Parquet row groups of :data:`ROW_GROUP_ROWS` rows (encoded on a thread, one at a time,
    while the command goes on; a failed write is raised by the next write or the commit), go to a hidden file
    beside the target (an unnamed temporary file for standard output) as each piece comes; :meth:`commit` renames it to
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
        self._text = TextPieces(fmt, csv_escape)
        self._handle: Any = None
        self._buffer: list[Any] = []   # Parquet: pieces not yet written as a row group
        self._buffered = 0
        self._writer: Any = None       # Parquet: the thread that encodes and writes row groups, one at a time
        self._pending: Any = None      # the row group it is writing

    def _open(self) -> Any:
        if self._handle is None and self.format != "parquet":
            # binary files: CSV pieces go in as polars writes them (:meth:`TextPieces.write`), other text as UTF-8
            if self._temp is None and self.path is not None:   # a device or a FIFO: written to directly
                self._handle = self.path.open("wb")
            elif self._temp is None:   # standard output: an unnamed file, deleted when commit or discard closes it
                self._handle = tempfile.TemporaryFile("w+b")  # noqa: SIM115
            else:   # noted before it exists: a Ctrl-C between the two never leaves a hidden file behind
                unfinished(self.abandon)
                self._handle = self._temp.open("wb")
        return self._handle

    @property
    def prepare(self) -> Callable[[pl.DataFrame], pl.DataFrame] | None:
        """The costly part of what :meth:`write` does to a piece (:func:`text_ready`), as a function that can run
        elsewhere (it pickles), or None when there is nothing worth moving (Parquet, Markdown, JSON); then
        :attr:`render` makes the prepared piece's bytes."""
        if self.format not in ("csv", "tsv"):
            return None
        return functools.partial(text_ready, fmt=self.format, csv_escape=self._text.csv_escape)

    @property
    def render(self) -> Callable[[pl.DataFrame], Rendered] | None:
        """A piece made by :attr:`prepare` as the bytes :meth:`write` copies (it pickles: the bytes can be made
        where the piece is), or None when :attr:`prepare` is None."""
        if self.format not in ("csv", "tsv"):
            return None
        return functools.partial(render, fmt=self.format, csv_escape=self._text.csv_escape, prepared=True)

    def write(self, df: pl.DataFrame | Rendered) -> None:
        """Add a piece of the table (a :class:`Rendered` piece: made by :attr:`prepare`, then :attr:`render`)."""
        if self.format != "parquet":
            self._text.write(self._open(), df)
            return
        if isinstance(df, Rendered):
            raise TbstatsError("a rendered piece is CSV or TSV, not parquet")
        import pyarrow.parquet as pq

        if self._handle is None:
            unfinished(self.abandon)
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
        """Write one row group on the writer thread, once the one before is written (encoding and compressing
        it, pyarrow releases the GIL: the command computes the next batch meanwhile); its Arrow copy is freed
        before the next one is made."""
        import pyarrow as pa

        tables = [self._arrow(p) for p in pieces]
        pieces.clear()
        self._wait()
        if self._writer is None:
            from concurrent.futures import ThreadPoolExecutor

            self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tbstats-write")

        def write() -> None:
            self._handle.write_table(pa.concat_tables(tables).combine_chunks(), row_group_size=ROW_GROUP_ROWS)
            tables.clear()

        self._pending = self._writer.submit(write)

    def _wait(self) -> None:
        """Until the row group being written is written (its error raised here)."""
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()

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
            self._wait()
            self._stop_writer()
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
        finished(self.abandon)

    def _stop_writer(self) -> None:
        if self._writer is not None:
            self._writer.shutdown(wait=True)
            self._writer = None

    def abandon(self) -> None:
        """Remove the hidden file being written, waiting for nothing: what Ctrl-C runs (:func:`remove_unfinished`)
        just before the process ends. It may run inside any of this object's own calls (a signal handler runs
        between two steps of the main thread), so it takes no lock and joins no thread: :meth:`discard`, which
        waits for the row group being written and stops the writer's thread, could wait for a lock its own
        thread holds (Ctrl-C inside ``submit``, which holds the pool's lock while it starts the thread)."""
        if self._temp is not None:
            with contextlib.suppress(OSError):
                self._temp.unlink(missing_ok=True)

    def discard(self) -> None:
        """Remove what was written (the target is left as it was)."""
        with contextlib.suppress(Exception):   # (a row group being written ends first; its error is moot)
            self._wait()
        self._pending = None
        self._stop_writer()
        if self._handle is not None:
            self._handle.close()
            self._handle = None
        if self._temp is not None:
            self._temp.unlink(missing_ok=True)
        self._buffer.clear()
        finished(self.abandon)
