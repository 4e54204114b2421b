"""Writing the columnar model: flat files, directory datasets, and the batch-by-batch ArchiveWriter."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Final

import numpy as np
import polars as pl

from tbstats.errors import TbstatsError
from tbstats.io import check
from tbstats.io.tabular import proof
from tbstats.io.tabular.layout import (
    EXTENSIONS,
    FLAT_COLUMNS,
    FLAT_OPTIONAL,
    FLAT_RENAMES,
    SPARSE_MARK,
    SUFFIX,
    TABLES,
    Format,
    _parts,
    _table_source,
    model_format,
)
from tbstats.io.tabular.read import (
    _read_table,
)
from tbstats.io.tabular.sparse import sparsify
from tbstats.model.batch import Batch, renumber
from tbstats.model.columns import SortedChunks
from tbstats.model.games import empty
from tbstats.output import finished, unfinished

# ----------------------------------------------------------------------------------------------- writing

def flatten(batch: Batch, *, json_lists: bool = False) -> pl.DataFrame:
    """The flat table of a batch: one row per player and round, then one row per warning.

    With ``json_lists`` the list columns are JSON strings (as in CSV files).

    >>> from tbstats.model.batch import Batch
    >>> from tbstats.model.games import empty
    >>> flatten(Batch(empty("tournaments"), empty("players"), empty("games"))).columns[:4]
    ['tournament', 'source', 'event_name', 'city']
    """
    t = batch.tournaments.rename(FLAT_RENAMES["tournaments"])
    t = _json_lists(t) if json_lists else t
    p = batch.players.rename(FLAT_RENAMES["players"])
    g = batch.games.rename(FLAT_RENAMES["games"])
    w = batch.warnings.rename(FLAT_RENAMES["warnings"])
    rows = t.join(p, on="tournament", how="left", maintain_order="left").join(
        g, on=["tournament", "start_no"], how="left", maintain_order="left").with_columns(
        pl.when(pl.col("tournament").is_first_distinct()).then(pl.col("records")).alias("records"))
    extra = [c for c in FLAT_OPTIONAL if c in rows.columns]
    return pl.concat([rows, w], how="diagonal").select([*FLAT_COLUMNS, *extra])


def write_model(batch: Batch, path: str | Path, *, format: Format | None = None) -> Path:
    """Write a batch as a single flat file (path with a model extension) or a directory dataset; return path.

    A directory dataset is written in ``format`` (default Parquet), one file per table; existing table files
    of the same names are replaced.
    """
    p = Path(path)
    fmt, single = _target(p, format)
    if single:   # streamed a few row groups of whole tournaments at a time: never the whole flat table at once
        with ArchiveWriter(p, fmt) as writer:
            writer._write_batch(batch)
        return p
    p.mkdir(parents=True, exist_ok=True)
    for table in TABLES:
        if (p / table).is_dir():
            raise TbstatsError(f"{p}: already holds a {table}/ part directory (written by ArchiveWriter); "
                               "write to a new directory")
        _write_file(getattr(batch, table), p / f"{table}{SUFFIX[fmt]}", fmt)
    return p


def _target(path: Path, format: Format | None) -> tuple[Format, bool]:
    """Format and whether the target is a single file."""
    by_ext = model_format(path)
    if format is not None and format not in SUFFIX:
        raise TbstatsError(f"unknown model format {format!r} (expected one of {', '.join(SUFFIX)})")
    if by_ext is not None and not path.is_dir():
        if format is not None and format != by_ext:
            raise TbstatsError(f"{path}: extension {path.suffix} does not match format {format!r}")
        return by_ext, True
    if path.suffix and not path.is_dir():   # (x.xlsx would silently become a directory of that name)
        raise TbstatsError(f"{path}: unknown extension {path.suffix!r} (expected one file ending in "
                           f"{', '.join(EXTENSIONS)}, or a directory, named without an extension)")
    return format or "parquet", False


def _json_lists(df: pl.DataFrame) -> pl.DataFrame:
    """List columns as JSON arrays (CSV cells)."""
    lists = [c for c, t in df.schema.items() if isinstance(t, pl.List)]
    return df.with_columns(pl.Series(c, [None if v is None else json.dumps(v, ensure_ascii=False)
                                         for v in df[c].to_list()], dtype=pl.String) for c in lists)


#: Row groups hold whole tournaments and about this many rows (one group when a tournament is larger): a
#: directory's part files.
ROW_GROUP_ROWS: Final = 1 << 17
#: ... and a flat file's, fewer: a flat row is wide (about 50 columns, some 400 bytes a row once converted to Arrow
#: for the Parquet writer, which takes a row group's table whole), and the writer holds a group's table and its
#: encoding at a time. ``simulate -p 40 -r 9 --archive FILE.parquet`` peaked at 1.90-1.95x / 1.50-1.60x / 1.18-1.24x
#: the memory of ``simulate`` alone (1,000 / 3,000 / 10,000 events) with groups of 131,072 rows, at 1.22-1.29x /
#: 1.01-1.06x / 0.96x with 32,768 (65,536: 1.36x at 1,000); ``ingest -o FILE.parquet`` of the 10k mix 580 -> 410 MB.
#: The price: flat files 9-14% larger (fewer names share a group's dictionary), written 6-20% slower, read up to
#: 1.10x the time of the directory (benchmarks/RESULTS.md, 2026-12-04 21:15-21:35).
FLAT_GROUP_ROWS: Final = 1 << 15


def _row_groups(df: pl.DataFrame, rows: int | None = None) -> list[tuple[int, int]]:
    """Offsets and lengths of row groups of whole tournaments of about ``rows`` rows (default
    :data:`ROW_GROUP_ROWS`; rows sorted by tournament)."""
    rows = ROW_GROUP_ROWS if rows is None else rows
    if "tournament" not in df.columns or df.height <= rows:
        return [(0, df.height)]
    ids = SortedChunks.of(df["tournament"])
    if ids is not None:   # each cut at the end of the tournament of the row it reaches
        out, lo = [], 0
        while lo < df.height:
            end = ids.search(ids.value(min(lo + rows, df.height) - 1), "right")
            out.append((lo, end - lo))
            lo = end
        return out
    # lazy, on the one column: the eager group_by would carry every column of the table through its plan
    ends = df.lazy().select("tournament").with_row_index("_i").group_by("tournament", maintain_order=True).agg(
        pl.col("_i").max() + 1).collect()["_i"]
    out, lo = [], 0
    for end in ends.to_list():
        if end - lo >= rows:
            out.append((lo, end - lo))
            lo = end
    if lo < df.height:
        out.append((lo, df.height - lo))
    return out


def _write_file(df: pl.DataFrame, path: Path, fmt: Format) -> None:
    if fmt == "parquet":
        groups = _row_groups(df)
        if len(groups) == 1:
            # one group whatever the table's chunks (polars writes a group a chunk by default, and a batch read
            # here is chunked otherwise than one read on a Dask worker: the files would differ)
            df.write_parquet(path, row_group_size=max(df.height, 1))
            return
        import pyarrow.parquet as pq

        # a row group converted to Arrow at a time: the whole table is never copied at once
        with pq.ParquetWriter(str(path), df.head(0).to_arrow().schema) as writer:
            for lo, n in groups:
                writer.write_table(df.slice(lo, n).to_arrow(), row_group_size=n)
    elif fmt == "arrow":
        df.write_ipc(path, compression="zstd")
    else:
        _json_lists(df).write_csv(path)


def flat_pieces(batch: Batch, *, json_lists: bool = False) -> Iterator[pl.DataFrame]:
    """:func:`flatten` of a batch in pieces of whole tournaments, each of about :data:`FLAT_GROUP_ROWS` rows (one
    row group of the flat file; a tournament larger than that is a piece of its own; the warnings rows come with
    the last piece): the pieces, stacked, are the flat table, but only one of them is ever in memory.

    A tournament's rows are counted by a bound that needs no pass over the games' players: its players and its
    game rows together (a player makes one row per game row, or one without any; an event without players makes
    one). A piece's players and games are found in their tables' rows between its first and last tournament when
    the tables are sorted by tournament (as the readers and :func:`_sorted` leave them), so that the pieces
    together cost one pass over the tables, not one each."""
    t = batch.tournaments
    if batch.players.height + batch.games.height <= FLAT_GROUP_ROWS or t.height < 2:
        yield flatten(batch, json_lists=json_lists)
        return
    t_ids = t["tournament"]
    tables = (batch.players, batch.games)
    searches = [SortedChunks.of(df["tournament"]) for df in tables]   # (None where a table is not sorted)
    rows = np.maximum(sum(_counts(df["tournament"], of, t_ids) for df, of in zip(tables, searches, strict=True)),
                      1).tolist()
    cuts, total = [0], 0
    for k, n in enumerate(rows):
        total += n
        if total >= FLAT_GROUP_ROWS and k + 1 < len(rows):
            cuts.append(k + 1)
            total = 0
    cuts.append(len(rows))
    sorted_ids = searches if t_ids.is_sorted() else [None, None]
    for lo, hi in itertools.pairwise(cuts):
        ids = t_ids.slice(lo, hi - lo)
        keep = pl.col("tournament").is_in(ids.implode())
        players, games = (_between(df, of, ids[0], ids[-1]).filter(keep)
                          for df, of in zip(tables, sorted_ids, strict=True))
        last = hi == len(rows)
        yield flatten(Batch(t.slice(lo, hi - lo), players, games, batch.warnings if last else batch.warnings.clear()),
                      json_lists=json_lists)


def _counts(ids: pl.Series, sorted_ids: SortedChunks | None, t_ids: pl.Series) -> np.ndarray:
    """How many of a table's tournament ids ``ids`` are each of ``t_ids``: by two binary searches each when ``ids``
    are sorted (``sorted_ids``, their searches; no pass over them), else counted (int64)."""
    if sorted_ids is not None:
        wanted = t_ids.to_numpy()
        return sorted_ids.search_all(wanted, "right") - sorted_ids.search_all(wanted, "left")
    counted = t_ids.to_frame().join(ids.value_counts(name="_n"), on=t_ids.name, how="left", maintain_order="left")
    return counted["_n"].fill_null(0).to_numpy().astype(np.int64)


def _between(df: pl.DataFrame, ids: SortedChunks | None, first: int, last: int) -> pl.DataFrame:
    """The rows of ``df`` whose tournament lies between ``first`` and ``last`` (both included), a slice, when its
    tournament ids are sorted (``ids``, their searches); else ``df`` whole."""
    if ids is None:
        return df
    lo, hi = ids.search(first, "left"), ids.search(last, "right")
    return df.slice(lo, hi - lo)


def _sorted(batch: Batch) -> Batch:
    """The batch's tables in tournament order (stable: players and rounds keep their order within one)."""
    def sort(df: pl.DataFrame) -> pl.DataFrame:
        return df if df["tournament"].is_sorted() else df.sort("tournament", maintain_order=True)

    return Batch(sort(batch.tournaments), sort(batch.players), sort(batch.games), batch.warnings)


@dataclass(frozen=True)
class PartFiles:
    """Where one batch of a directory target goes: its first tournament id and one file per table."""

    first_id: int
    files: tuple[str, ...]      # in the order of TABLES
    format: Format
    proof: bool = False         # record the checks it passed (tbstats.io.tabular.proof)


def write_part(batch: Batch, part: PartFiles) -> int:
    """Write a batch as the part files ``part`` names, its tournaments numbered from ``part.first_id``, sorted
    by tournament in row groups of whole tournaments, and with ``part.proof`` the proof that it passed the
    reader's checks (when they find it clean); return the tournaments written (module level: a Dask worker
    writes the batch it read, and only this count travels back)."""
    batch = _sorted(renumber(batch, part.first_id))
    for table, path in zip(TABLES, part.files, strict=True):
        _write_file(getattr(batch, table), Path(path), part.format)
    n = batch.n_tournaments
    if part.proof and n and _proven(batch):
        proof.record(part.files, part.first_id, part.first_id + n - 1)
    return n


def _proven(batch: Batch) -> bool:
    """Whether the reader's checks find ``batch`` clean, as written (what a proof records)."""
    return check.proven_clean({t: getattr(batch, t) for t in TABLES})


class ArchiveWriter:
    """Write batches one after another into one model, keeping tournament ids unique across batches.

    A directory target gets one part file per table and batch (``games/part-00000.parquet``, ...); with
    ``append=True`` an existing part directory dataset is continued. A single-file target (``.parquet``,
    ``.arrow``, ``.csv``) gets the flat table, streamed batch by batch; its optional columns
    (:data:`tbstats.model.games.OPTIONAL`) are those of the first batch: later batches without them get nulls,
    and optional columns the first batch lacked are left out (a directory keeps each part's own). Leaving a
    ``with`` block on an exception removes what this writer created.
    """

    def __init__(self, path: str | Path, format: Format | None = None, *, append: bool = False) -> None:
        self.path = Path(path)
        self.format, self.single = _target(self.path, format)
        self.tournaments_written = 0
        self._next_id = 0
        self._part = 0
        self._created: list[Path] = []
        self._writer: Any = None
        self._schema: Any = None
        self._columns: list[str] | None = None
        self._proven = self.format == "parquet"   # a flat Parquet file: every batch proven clean so far
        self._first_written: int | None = None
        self._closed = False
        unfinished(self.remove_created)   # removed if the command line must stop at once (Ctrl-C)
        if self.single:
            if append:
                raise TbstatsError(f"{self.path}: cannot append to a single-file model; write a directory")
            self.path.parent.mkdir(parents=True, exist_ok=True)
            proof.flat_proof_path(self.path).unlink(missing_ok=True)   # a proof of the file this one replaces
            return
        if self.path.exists() and any(self.path.iterdir()):
            if not append:
                raise TbstatsError(f"{self.path}: directory is not empty (append to it, or choose a new one)")
            self._resume()
        elif not self.path.exists():
            self._created.append(self.path)
        self.path.mkdir(parents=True, exist_ok=True)

    def _resume(self) -> None:
        src = _table_source(self.path, "tournaments")
        if src is None or not src.is_dir():
            raise TbstatsError(f"{self.path}: not a part-file dataset written by ArchiveWriter, "
                               "so it cannot be appended to")
        parts = _parts(src)
        self._part = len(parts)
        ids = pl.concat([_read_table(q, "tournaments")["tournament"] for q in parts]) if parts else None
        top = None if ids is None else ids.max()
        self._next_id = top + 1 if isinstance(top, int) else 0

    def write(self, batch: Batch) -> None:
        """Append a batch: its tournaments get the next free ids."""
        if self.single:
            if self._closed:
                raise TbstatsError(f"{self.path}: writer is closed")
            batch = _sorted(renumber(batch, self._next_id))
            if batch.n_tournaments and self._first_written is None:
                self._first_written = self._next_id
            self._next_id += batch.n_tournaments
            self._write_batch(batch, proven=self._proven and (not batch.n_tournaments or _proven(batch)))
            return
        write_part(batch, self.reserve(batch.n_tournaments))

    def _write_batch(self, batch: Batch, *, proven: bool = False) -> None:
        """Write a batch into a single-file target as it is (its ids and order), piece by piece; unless
        ``proven`` (clean, and numbered by :meth:`write`), the file gets no proof."""
        if self._closed:
            raise TbstatsError(f"{self.path}: writer is closed")
        self._proven = self._proven and proven
        self.tournaments_written += batch.n_tournaments
        for piece in flat_pieces(batch, json_lists=self.format == "csv"):
            self._write_flat(piece)

    def reserve(self, tournaments: int) -> PartFiles:
        """The next part of a directory target for a batch of ``tournaments`` (its first id and file names),
        counted as written: :func:`write_part` then writes it, here or in another process."""
        if self._closed:
            raise TbstatsError(f"{self.path}: writer is closed")
        if self.single:
            raise TbstatsError(f"{self.path}: a single-file model is written here, batch by batch")
        name = f"part-{self._part:05d}{SUFFIX[self.format]}"
        files = []
        proved = self.format != "csv"   # CSV parts are always checked row by row when read
        if proved:
            proofs = self.path / proof.PROOFS
            if not proofs.exists():
                proofs.mkdir()
                self._created.append(proofs)
            self._created.append(proof.proof_path(self.path / TABLES[0] / name))
        for table in TABLES:
            directory = self.path / table
            if not directory.exists():
                directory.mkdir()
                self._created.append(directory)
            self._created.append(directory / name)
            files.append(str((directory / name).absolute()))   # (a Dask worker's directory is its own)
        part = PartFiles(self._next_id, tuple(files), self.format, proved)
        self._next_id += tournaments
        self.tournaments_written += tournaments
        self._part += 1
        return part

    def _write_flat(self, flat: pl.DataFrame) -> None:
        if self._columns is None:
            self._columns = flat.columns
        elif flat.columns != self._columns:   # optional columns follow the first batch (class docstring)
            flat = flat.select([pl.col(c) if c in flat.columns else pl.lit(None).alias(c) for c in self._columns])
        if self.format == "csv":
            first = self._writer is None
            if first:
                self._created.append(self.path)
                self._writer = self.path.open("w", encoding="utf-8", newline="")
            flat.write_csv(self._writer, include_header=first)
            return
        import pyarrow.ipc as ipc
        import pyarrow.parquet as pq

        table = sparsify(flat).to_arrow()   # (Parquet and Arrow alike: sparse.py)
        if self._writer is None:
            self._created.append(self.path)
            self._schema = table.schema.with_metadata(SPARSE_MARK)
            self._writer = (pq.ParquetWriter(str(self.path), self._schema) if self.format == "parquet"
                            else ipc.new_file(str(self.path), self._schema,
                                              options=ipc.IpcWriteOptions(compression="zstd")))
        # (a cast to the schema it already has would import pyarrow.compute: 0.05 s and some 15 MB)
        table = table.replace_schema_metadata(self._schema.metadata) if table.schema.equals(self._schema) else \
            table.cast(self._schema)
        if self.format != "parquet":
            self._writer.write_table(table)
            return
        starts = [lo for lo, _ in _row_groups(flat.filter(pl.col("tournament").is_not_null()), FLAT_GROUP_ROWS)]
        for lo, hi in itertools.pairwise([*starts, flat.height]):   # the warnings rows join the last group
            self._writer.write_table(table.slice(lo, hi - lo), row_group_size=max(hi - lo, 1))

    def close(self) -> None:
        """Finish the files; a writer that wrote nothing leaves an empty model."""
        if self._closed:
            return
        if self.single and self._writer is None:
            self._write_flat(flatten(Batch(empty("tournaments"), empty("players"), empty("games")),
                                     json_lists=self.format == "csv"))
        elif not self.single and self._part == 0 and not self._created:
            self.write(Batch(empty("tournaments"), empty("players"), empty("games")))
        if self._writer is not None:
            self._writer.close()
        if self.single and self._proven and self._first_written is not None:
            self._created.append(proof.flat_proof_path(self.path))
            proof.record([self.path], self._first_written, self._next_id - 1, flat=True)
        self._closed = True
        finished(self.remove_created)

    def abort(self) -> None:
        """Close and remove every file and directory this writer created."""
        if self._writer is not None and not self._closed:
            self._writer.close()
        self._closed = True
        self.remove_created()

    def remove_created(self) -> None:
        """Remove every file and directory this writer created, closing nothing: what Ctrl-C runs just before the
        process ends (:func:`tbstats.output.remove_unfinished`, from a signal handler that may run inside this
        writer's own calls)."""
        for p in reversed(list(self._created)):
            with contextlib.suppress(OSError):
                if p.is_dir():
                    shutil.rmtree(p, ignore_errors=True)
                elif p.exists():
                    os.remove(p)
        self._created.clear()
        finished(self.remove_created)

    def __enter__(self) -> ArchiveWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc is None:
            self.close()
        else:
            self.abort()
