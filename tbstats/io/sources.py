"""Inputs to batches: files, directories, glob patterns and zip/tar archives of TRF files, read in chunks.

How an input is read depends on its extension (:data:`READERS`): TRF text (``.trf .txt .tab``) goes through
:func:`tbstats.io.trf.read_trf`, ``batch_files`` files at a time; a tabular model (``.parquet .arrow .ipc
.feather .csv``, or a directory dataset) through :mod:`tbstats.io.tabular`.

- A **file** named on the command line is always tried as TRF unless its extension says tabular model or
  archive. So are the files a **glob pattern** matches (as if the shell had expanded it).
- A **directory** is walked recursively in name order (hidden entries are ignored). A directory dataset
  (``tournaments.parquet`` ...) is read as one model. Other files are read by extension: a tabular file only
  when it has the flat model's columns; a file of any other extension is skipped, with the ledger reason
  ``not a tournament file (extension .html)``.
- **Archives** (``.zip``, ``.tar``, ``.tar.gz``, ``.tgz``, ``.tar.bz2``, ``.tar.xz``) are read like a
  directory; a member is named ``archive.zip!inner/path.trf``.

Every problem is one row of the ledger (path, line, column, reason); every rejected or skipped input has at
least one. Skipped files do not count among ``files``; a missing path counts as a rejected file.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal

import polars as pl

from tbstats.errors import FormatError, TbstatsError
from tbstats.io import archives, batches, progress, safe, tabular
from tbstats.io.archives import Archives
from tbstats.io.expand import (
    SKIPPED,
    _expand,
    _Item,
)
from tbstats.io.kinds import MAX_MEMBER_BYTES, estimated_bytes, files_a_piece
from tbstats.io.trf import ERROR_SCHEMA
from tbstats.model.batch import Batch, renumber
from tbstats.model.games import empty

if TYPE_CHECKING:
    from tbstats.io import parts

OnError = Literal["raise", "collect"]


@dataclass(frozen=True)
class LoadResult:
    """A loaded batch with its ledger of problems and the file counts."""

    batch: Batch
    ledger: pl.DataFrame  # path, line, column, reason
    files: int
    loaded: int
    rejected: int
    skipped: int = 0

    def summary(self) -> str:
        """The one-line count, ``N files: K loaded, E rejected``."""
        return summary(self.files, self.loaded, self.rejected)


def summary(files: int, loaded: int, rejected: int) -> str:
    """The one-line count of a load.

    >>> summary(3, 2, 1)
    '3 files: 2 loaded, 1 rejected'
    """
    return f"{files} files: {loaded} loaded, {rejected} rejected"


# ------------------------------------------------------------------------------------------------ planning

@dataclass(frozen=True)
class Part:
    """One unit of reading, planned without reading data: a chunk of TRF files (with the skipped and rejected
    names among them, in input order), a run of whole tournaments of a tabular model, or a model read whole.

    A part holds names and paths only, so it can travel to a worker process that reads it.
    """

    items: tuple[_Item, ...] = ()
    table: parts.TablePart | None = None
    model: _Item | None = None
    first_of_model: bool = True
    max_member_bytes: int = MAX_MEMBER_BYTES  # the cap on an archive member, decompressed

    @property
    def files(self) -> int:
        """Input files this part counts (a model counts once, on its first part)."""
        if self.items:
            return sum(i.kind != "skip" for i in self.items)
        return int(self.first_of_model)

    @property
    def skipped(self) -> int:
        return sum(i.kind == "skip" for i in self.items)


@dataclass(frozen=True)
class Plan:
    """The parts of the inputs in order; ``tournaments`` is their total when every part knows its count."""

    parts: tuple[Part, ...]
    tournaments: int | None

    @property
    def files(self) -> int:
        """The input files the parts count (skipped ones left out; a model counts once), known before reading."""
        return sum(part.files for part in self.parts)


def plan(inputs: Sequence[str], *, batch_size: int = 2000, batch_files: int = 2000,
         max_member_bytes: int = MAX_MEMBER_BYTES, part_size: int | None = None) -> Plan:
    """Expand the inputs and cut them into parts: ``batch_files`` TRF files, or whole batches of ``batch_size``
    tournaments of a columnar model, at least ``part_size`` (:data:`~tbstats.io.batches.UNIT_TOURNAMENTS` when
    None; only its tournament column is scanned here). An
    archive member larger than ``max_member_bytes`` once decompressed is rejected without reading it all."""
    if isinstance(inputs, str | os.PathLike):
        raise TbstatsError("inputs must be a list of paths, not one string")
    for name, value in (("batch_size", batch_size), ("batch_files", batch_files),
                        ("max_member_bytes", max_member_bytes)):
        if value < 1:
            raise TbstatsError(f"{name} must be at least 1, not {value}")
    out: list[Part] = []
    chunk: list[_Item] = []
    n_trf = 0  # TRF files in ``chunk`` (counted, not recounted per file)
    known = True
    total = 0
    for item in _expand([str(i) for i in inputs]):
        if item.kind != "tabular":
            chunk.append(item)
            if item.kind == "trf":
                known = False
                n_trf += 1
                if n_trf >= batch_files:
                    out.append(Part(tuple(chunk), max_member_bytes=max_member_bytes))
                    chunk, n_trf = [], 0
            continue
        if chunk:
            out.append(Part(tuple(chunk), max_member_bytes=max_member_bytes))
            chunk, n_trf = [], 0
        from tbstats.io import parts  # (the model readers load only for a model)

        try:
            runs = parts.plan_model(item.path, item.name, batches.unit_size(batch_size, part_size))
        except Exception as exc:  # one model is one input: whatever fails, only this input is lost
            reason = safe.model_ledger(item.name, item.path, exc)["reason"][0]
            out.append(Part((_Item(item.name, "reject", item.path, reason=reason),)))
            continue
        if runs is None:
            known = False
            out.append(Part(model=item))
            continue
        total += sum(r.tournaments for r in runs)
        out.extend(Part(table=r, model=item, first_of_model=k == 0) for k, r in enumerate(runs))
    if chunk:
        out.append(Part(tuple(chunk), max_member_bytes=max_member_bytes))
    return Plan(tuple(out), total if known else None)


def anchored(part: Part, cwd: str) -> Part:
    """``part`` with the paths it reads made absolute against ``cwd`` (the command's working directory), its names
    as they were: what a Dask worker, whose working directory is its own, reads (the output still names each input
    as it was typed, as a run here does)."""
    def at(path: str) -> str:
        return path if not path or os.path.isabs(path) else os.path.join(cwd, path)

    def item(i: _Item) -> _Item:
        return i if at(i.path) == i.path else dataclasses.replace(i, path=at(i.path))

    table = part.table if part.table is None else dataclasses.replace(
        part.table, files=tuple((name, at(base), tuple(map(at, files))) for name, base, files in part.table.files),
        rows=tuple((at(file), ranges) for file, ranges in part.table.rows),   # (found by the files' paths)
        spans=tuple((at(file), header, spans) for file, header, spans in part.table.spans))
    return dataclasses.replace(part, items=tuple(map(item, part.items)),
                               model=None if part.model is None else item(part.model), table=table)


def split(part: Part, files: int) -> list[Part]:
    """A part of TRF files cut into parts of at most ``files`` TRF files each, in order (the skipped and
    rejected names stay with the files they came among); any other part is itself."""
    if sum(i.kind == "trf" for i in part.items) <= files:
        return [part]
    out: list[Part] = []
    chunk: list[_Item] = []
    n_trf = 0
    for item in part.items:
        chunk.append(item)
        n_trf += item.kind == "trf"
        if n_trf == files:
            out.append(dataclasses.replace(part, items=tuple(chunk)))
            chunk, n_trf = [], 0
    if chunk:
        out.append(dataclasses.replace(part, items=tuple(chunk)))
    return out


# --------------------------------------------------------------------------------------------- reading

def is_skipped() -> pl.Expr:
    """Ledger rows of files skipped as not tournament files (the others are problems of rejected files)."""
    return pl.col("reason").str.starts_with(SKIPPED)


def read_part(part: Part, batch_size: int = 2000) -> tuple[pl.DataFrame, list[Batch]]:
    """Read one part: its ledger, and its tournaments as batches of at most ``batch_size`` whole tournaments,
    each numbered from 0 (the caller offsets the ids). Problems go to the ledger, never raise."""
    return assemble(part, [read_piece(piece) for piece in pieces(part)], batch_size)


#: Files of a part whose sizes tell the mean (a stat each): a rough mean serves, and each part of a run pays it.
PIECE_SAMPLE: Final = 8


def pieces(part: Part) -> list[Part]:
    """What is read at a time: pieces of :func:`piece_size` TRF files of a part, or a run of a model whole."""
    return split(part, piece_size(part)) if part.items else [part]


def piece_size(part: Part) -> int:
    """The TRF files of a part read at a time: :data:`~tbstats.io.kinds.READ_FILES`, fewer when they are large
    (:func:`tbstats.io.kinds.files_a_piece` of their mean size, from a sample: :func:`trf_bytes`)."""
    several = sum(i.kind == "trf" for i in part.items) > 1
    return files_a_piece(trf_bytes(part.items, 1, PIECE_SAMPLE) if several else 0.0)


def trf_bytes(items: Sequence[_Item], files: int, sample: int) -> float:
    """The bytes of ``files`` TRF files told from the sizes of ``sample`` of the TRF ``items`` spread over them in
    name order: a file's from a stat (:func:`tbstats.io.kinds.estimated_bytes`), an archive member's as the
    archive lists it (opened once by this process: :func:`tbstats.io.archives.opened`; a member that cannot be
    told counts as empty); 0 without TRF items."""
    trf = sorted((i for i in items if i.kind == "trf"), key=lambda i: i.name)
    if not trf:
        return 0.0
    chosen = trf[::max(1, len(trf) // sample)][:sample]
    paths = [i.path for i in chosen if i.member is None]
    total = estimated_bytes(paths, len(paths), len(paths))
    for item in chosen:
        if item.member is None:
            continue
        try:
            info = archives.opened(item.path).infos.get(item.member)
        except safe.UnreadableInput:
            info = None
        total += getattr(info, "file_size", getattr(info, "size", 0))
    return files * total / len(chosen)


def piece_files(piece: Part) -> list[str]:
    """The regular TRF files of a piece (archive members aside), in order: what :func:`read_piece` reads of it at
    once (:func:`tbstats.io.safe.read_regular_files`), or another thread for it ahead of time."""
    return _regular_paths(piece.items)


def _regular_paths(items: Sequence[_Item]) -> list[str]:
    return [i.path for i in items if i.kind == "trf" and i.member is None]


def read_piece(piece: Part, files: Sequence[bytes | TbstatsError] | None = None
               ) -> tuple[pl.DataFrame, Batch | None]:
    """Read a piece of a part (see :func:`pieces`): its ledger, unsorted, and its tournaments numbered from 0
    (none when nothing was read). Problems go to the ledger, never raise. ``files``: what
    :func:`tbstats.io.safe.read_regular_files` gave for :func:`piece_files`, when it was read ahead."""
    if piece.items:
        archives = Archives(piece.max_member_bytes)
        try:
            return _read_trf(piece.items, archives, files)
        finally:
            archives.close()
    assert piece.model is not None
    from tbstats.io import parts

    try:
        problem = safe.not_regular(piece.model.path)
        if problem is not None:
            raise safe.UnreadableInput(problem)
        batch = parts.read_part(piece.table) if piece.table is not None else tabular.read_model(piece.model.path)
        return pl.DataFrame(schema=ERROR_SCHEMA), batch
    except Exception as exc:  # one model is one input: whatever fails, only this input is lost
        if piece.table is None:
            return safe.model_ledger(piece.model.name, piece.model.path, exc), None
        from tbstats.io import recover

        ledger, good = recover.run(piece.model, piece.table, exc)
        return ledger, Batch.stacked(good) if good else None


def assemble(part: Part, read: Sequence[tuple[pl.DataFrame, Batch | None]], batch_size: int
             ) -> tuple[pl.DataFrame, list[Batch]]:
    """The ledger and batches of a part from what :func:`read_piece` read of its pieces, in order: the
    tournaments stacked with ids running on, cut into batches of at most ``batch_size`` numbered from 0."""
    got, next_id = [], 0
    for _, batch in read:
        if batch is not None and batch.n_tournaments:
            got.append(renumber(batch, next_id) if next_id else batch)
            next_id += batch.n_tournaments
    ledger = pl.concat([ledger for ledger, _ in read])
    if part.items and ledger.height:   # the ledger of TRF files in input order (the reader orders a file's rows)
        order = {i.name: n for n, i in enumerate(part.items)}
        ledger = ledger.unique(maintain_order=True).with_columns(
            pl.col("path").replace_strict(order, default=len(order), return_dtype=pl.Int64).alias("_order"))
        ledger = ledger.sort("_order", maintain_order=True).drop("_order")
    if not got:
        return ledger, []
    batch = got[0] if len(got) == 1 else Batch.stacked(got)
    return ledger, [renumber(b, 0) for b in batches.runs(batch, batch_size, by_source=bool(part.items))]


def _read_trf(chunk: Sequence[_Item], archives: Archives, files: Sequence[bytes | TbstatsError] | None = None
              ) -> tuple[pl.DataFrame, Batch | None]:
    """Read the TRF files of a piece at once: the ledger (unsorted) and the batch, numbered from 0; ``files``
    as :func:`read_piece` takes it."""
    raw: list[tuple[str, bytes]] = []
    found = [(i.name, i.reason) for i in chunk if i.kind != "trf"]   # (whole files' rows: skipped, unreadable)
    if files is None:   # (in one compiled loop)
        files = safe.read_regular_files(_regular_paths(chunk))
    read = iter(files)
    for item in (i for i in chunk if i.kind == "trf"):
        data: bytes | TbstatsError
        if item.member is None:
            data = next(read)
        else:
            try:
                data = archives.read(item.path, item.member)
            except TbstatsError as exc:
                data = exc
        if isinstance(data, TbstatsError):
            found.append((item.name, str(data)))
        else:
            raw.append((item.name, data))
    batch, errors = safe.read_trf_isolated(raw, 0) if raw else (None, pl.DataFrame(schema=ERROR_SCHEMA))
    return (pl.concat([safe.ledger_rows(found), errors]) if found else errors), batch


@dataclass
class Tally:
    """Running counts of files and the ledger over parts taken in order; raise mode raises the first problem."""

    on_error: OnError = "collect"
    files: int = 0
    skipped: int = 0
    ledgers: list[pl.DataFrame] = field(default_factory=lambda: [pl.DataFrame(schema=ERROR_SCHEMA)])
    _bad: set[str] = field(default_factory=set)
    _listed: set[tuple[Any, ...]] = field(default_factory=set, repr=False)

    def __post_init__(self) -> None:
        if self.on_error not in ("raise", "collect"):
            raise TbstatsError(f"on_error must be 'raise' or 'collect', not {self.on_error!r}")

    @property
    def rejected(self) -> int:
        return len(self._bad)

    @property
    def loaded(self) -> int:
        return self.files - self.rejected

    @property
    def ledger(self) -> pl.DataFrame:
        return pl.concat(self.ledgers)

    def summary(self) -> str:
        """The one-line count so far, ``N files: K loaded, E rejected``."""
        return summary(self.files, self.loaded, self.rejected)

    def reject(self, ledger: pl.DataFrame) -> None:
        """Files the engine could not use after they were read and counted (a file whose events give no result
        that was asked for): listed and counted as rejected, like the reader's problems; never raised, since
        the files themselves were read (the command then exits 1)."""
        self._list(ledger, None, raising=False)

    def add(self, part: Part, ledger: pl.DataFrame) -> None:
        """Count a part and its ledger (in raise mode its first problem raises :class:`FormatError`)."""
        self.files += part.files
        self.skipped += part.skipped
        self._list(ledger, part.model)

    def _list(self, ledger: pl.DataFrame, model: Any, *, raising: bool = True) -> None:
        if ledger.height:   # a problem met again (the same file, place and reason) is listed once
            rows = ledger.rows()
            fresh = [k for k, row in enumerate(rows) if row not in self._listed]
            self._listed.update(rows)
            ledger = ledger[fresh] if len(fresh) < len(rows) else ledger
            self.ledgers.append(ledger)
        problems = ledger.filter(~is_skipped())
        if model is not None:   # a model is one input, whichever of its files the problems name
            self._bad.update([model.name] if problems.height else [])
        else:
            self._bad.update(problems["path"].to_list())
        if raising and self.on_error == "raise" and problems.height:
            row = problems.row(0, named=True)
            raise FormatError(row["path"], row["line"], row["column"], row["reason"])


@dataclass
class BatchStream(Tally):
    """Batches of whole tournaments as they are read, with running counts; iterate for ``(batch, ledger)``.

    Tournament ids run on across the batches; a part's ledger comes with its first batch.
    """

    inputs: Sequence[str] = ()
    batch_size: int = 2000
    batch_files: int = 2000
    progress: bool = False
    max_member_bytes: int = MAX_MEMBER_BYTES
    _started: bool = field(default=False, repr=False)

    def __iter__(self) -> Iterator[tuple[Batch, pl.DataFrame]]:
        if self._started:
            raise TbstatsError("a BatchStream can be iterated only once")
        self._started = True
        the_plan = plan(self.inputs, batch_size=self.batch_size, batch_files=self.batch_files,
                        max_member_bytes=self.max_member_bytes)
        next_id = 0
        with progress_of(the_plan, self.progress) as bar:
            for part in the_plan.parts:
                ledger, batches = read_part(part, self.batch_size)
                self.add(part, ledger)
                done = progress_shares(the_plan, part, [b.n_tournaments for b in batches])
                for k, batch in enumerate(batches or [Batch(empty("tournaments"), empty("players"),
                                                            empty("games"))]):
                    yield renumber(batch, next_id), ledger if k == 0 else ledger.clear()
                    next_id += batch.n_tournaments
                    bar.advance(done[k], batch.games.height)


def progress_of(the_plan: Plan, wanted: bool, label: str = "") -> progress.Progress:
    """The bar of a run over a plan: over its tournaments when every part knows its count (columnar models),
    else over its input files; drawn when ``wanted`` and standard error is a terminal."""
    if the_plan.tournaments is not None:
        return progress.progress(the_plan.tournaments, "tournaments", wanted, label=label, rows=True)
    return progress.progress(the_plan.files, "files", wanted, label=label, rows=True)


def progress_shares(the_plan: Plan, part: Part, tournaments: Sequence[int]) -> list[int]:
    """How far each batch of a part moves the plan's bar (:func:`progress_of`): its tournaments, or its share
    of the part's files (in proportion to its tournaments); a part without batches moves it by its files."""
    if the_plan.tournaments is not None:
        return list(tournaments) or [0]
    return progress.shares(part.files, tournaments) or [part.files]


#: What the readers accept as inputs: one path, or a sequence of paths (files, directories, globs, archives).
Paths = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


def as_paths(inputs: Paths) -> list[str]:
    """The inputs as a list of path strings: one path (str or Path) is one input, not its characters.

    >>> from pathlib import Path
    >>> as_paths("a.trf"), as_paths(Path("data")), as_paths(["a.trf", Path("b")])
    (['a.trf'], ['data'], ['a.trf', 'b'])
    """
    if isinstance(inputs, str | os.PathLike):
        return [os.fspath(inputs)]
    if isinstance(inputs, bytes):
        raise TbstatsError("inputs must be paths (str or Path) or a list of them, not bytes")
    return [os.fspath(p) for p in inputs]


def iter_batches(inputs: Paths, *, on_error: OnError = "collect", progress: bool = False,
                 batch_files: int = 2000, batch_size: int = 2000,
                 max_member_bytes: int = MAX_MEMBER_BYTES) -> BatchStream:
    """Batches of at most ``batch_size`` whole tournaments (``batch_files`` TRF files read at a time), with
    their ledgers.

    The returned :class:`BatchStream` yields ``(batch, ledger)`` pairs and keeps running counts
    (``files``, ``loaded``, ``rejected``, ``skipped``). Tournament ids are unique across the batches.
    An archive member larger than ``max_member_bytes`` once decompressed is rejected without reading it all.
    """
    return BatchStream(on_error, inputs=as_paths(inputs), batch_size=batch_size, batch_files=batch_files,
                       progress=progress, max_member_bytes=max_member_bytes)


def load(inputs: Paths, *, on_error: OnError = "raise", progress: bool = False,
         batch_files: int = 2000, max_member_bytes: int = MAX_MEMBER_BYTES) -> LoadResult:
    """Read every input into one batch; with ``on_error="raise"`` the first problem raises FormatError.

    ``progress`` shows a bar on stderr when stderr is a terminal.
    """
    stream = iter_batches(inputs, on_error=on_error, progress=progress, batch_files=batch_files,
                          max_member_bytes=max_member_bytes)
    batches = [batch for batch, _ in stream if batch.n_tournaments]
    batch = batches[0] if len(batches) == 1 else Batch.concat(batches)
    return LoadResult(batch, stream.ledger, stream.files, stream.loaded, stream.rejected, stream.skipped)
