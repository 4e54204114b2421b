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

import glob
import os
import sys
import tarfile
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import polars as pl

from tbstats.errors import FormatError, TbstatsError
from tbstats.games import Batch, empty
from tbstats.io import safe, tabular
from tbstats.io.trf import ERROR_SCHEMA, read_trf

OnError = Literal["raise", "collect"]
Kind = Literal["trf", "tabular", "skip", "reject"]

#: Reader by file extension (lower case).
READERS: Final[dict[str, Literal["trf", "tabular"]]] = {
    ".trf": "trf", ".txt": "trf", ".tab": "trf",
    ".parquet": "tabular", ".arrow": "tabular", ".ipc": "tabular", ".feather": "tabular", ".csv": "tabular",
}
ARCHIVES: Final = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")
MISSING: Final = "no such file or directory"
#: How every skip reason starts; skipped files are listed in the ledger but are not problems.
SKIPPED: Final = "not a tournament file ("
_GLOB_CHARS: Final = frozenset("*?[")


@dataclass(frozen=True)
class _Item:
    """One input file: how to read it, or why it is skipped or rejected without reading."""

    name: str                       # the source name: a path, or 'archive.zip!member'
    kind: Kind
    path: str = ""                  # the file on disk (the archive for a member)
    member: str | None = None
    reason: str = ""


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


def _suffix(name: str) -> str:
    """The extension that decides the reader: '.tar.gz' style double ones included, lower case.

    >>> _suffix("a/B.TAR.GZ"), _suffix("x.trf"), _suffix("README")
    ('.tar.gz', '.trf', '')
    """
    lower = name.lower()
    for ext in ARCHIVES:
        if lower.endswith(ext):
            return ext
    return os.path.splitext(lower)[1]


def is_archive(path: str) -> bool:
    """Whether a path names a zip or tar archive by its extension.

    >>> is_archive("x/a.TGZ"), is_archive("a.trf")
    (True, False)
    """
    return _suffix(path) in ARCHIVES


def is_pattern(text: str) -> bool:
    """Whether an input is a glob pattern (it has ``*``, ``?`` or ``[``)."""
    return bool(_GLOB_CHARS & set(text))


def _skip(name: str, ext: str, note: str = "") -> _Item:
    what = f"extension {name[-len(ext):]}" if ext else "no extension"
    return _Item(name, "skip", reason=f"{SKIPPED}{what}{note})")


# --------------------------------------------------------------------------------------- expanding inputs

def _expand(inputs: Sequence[str]) -> list[_Item]:
    """Every file the inputs name, in order, each real file once (links and loops followed to one identity)."""
    items: list[_Item] = []
    for text in inputs:
        if os.path.isdir(text):
            items.extend(_walk(os.path.normpath(text)))
        elif os.path.isfile(text):
            items.extend(_explicit(os.path.normpath(text)))
        elif os.path.lexists(text):
            items.append(_Item(os.path.normpath(text), "reject", text,
                               reason=safe.not_regular(text) or MISSING))
        elif is_pattern(text):
            matches = sorted(os.path.normpath(m) for m in glob.glob(text, recursive=True))
            if not matches:
                items.append(_Item(text, "reject", reason="no file matches the pattern"))
            for m in matches:
                items.extend(_walk(m) if os.path.isdir(m) else _explicit(m))
        else:
            items.append(_Item(text, "reject", reason=MISSING))
    return once_each(items)


def once_each(items: list[_Item]) -> list[_Item]:
    """The items without repeats of one real file: the same (device, inode) and member count once."""
    seen: set[object] = set()
    unique = []
    for item in items:
        key = _identity(item)
        if key not in seen:
            seen.add(key)
            unique.append(item)
    return unique


def _identity(item: _Item) -> object:
    path = item.path or item.name.split("!", 1)[0]
    member = item.member if item.member is not None else item.name.partition("!")[2]
    try:
        st = os.stat(os.path.realpath(path))  # realpath first: a path deep in a symlink loop fails plain stat
    except OSError:
        return item.name
    return st.st_dev, st.st_ino, member


def _explicit(path: str) -> list[_Item]:
    problem = safe.not_regular(path)
    if problem is not None:
        return [_Item(path, "reject", path, reason=problem)]
    ext = _suffix(path)
    if ext in ARCHIVES:
        return _archive(path)
    if READERS.get(ext) == "tabular":
        return [_Item(path, "tabular", path)]
    return [_Item(path, "trf", path)]


def _walk(top: str) -> list[_Item]:
    if tabular.is_model_dir(top):
        return [_Item(top, "tabular", top)]
    items: list[_Item] = []
    for root, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        models = [d for d in dirs if tabular.is_model_dir(os.path.join(root, d))]
        for d in models:
            path = os.path.normpath(os.path.join(root, d))
            items.append(_Item(path, "tabular", path))
        dirs[:] = [d for d in dirs if d not in models]
        for name in sorted(f for f in files if not f.startswith(".")):
            path = os.path.normpath(os.path.join(root, name))
            ext = _suffix(name)
            reader = READERS.get(ext)
            problem = safe.not_regular(path) if reader is not None or ext in ARCHIVES else None
            if problem is not None:
                items.append(_Item(path, "reject", path, reason=problem))
            elif ext in ARCHIVES:
                items.extend(_archive(path))
            elif reader == "trf":
                items.append(_Item(path, "trf", path))
            elif reader == "tabular":
                items.append(_Item(path, "tabular", path) if _looks_flat(path)
                             else _skip(path, ext, ", not a tbstats model"))
            else:
                items.append(_skip(path, ext))
    return sorted(items, key=lambda i: i.name)


def _looks_flat(path: str) -> bool:
    """Whether a tabular file has the flat model's key columns (cheap: schema or header only)."""
    try:
        fmt = tabular.model_format(path)
        if fmt == "parquet":
            names = list(pl.read_parquet_schema(path))
        elif fmt == "arrow":
            names = list(pl.read_ipc_schema(path))
        else:
            with open(path, encoding="utf-8", errors="replace") as f:
                names = [c.strip().strip('"') for c in f.readline().split(",")]
    except (OSError, pl.exceptions.PolarsError):
        return False
    return all(c in names for c in tabular.FLAT_SIGNATURE)


def _archive(path: str) -> list[_Item]:
    """The members of a zip or tar archive; a member that is not TRF by extension is skipped.

    A member that cannot be read safely (unsafe name, link or device, encrypted, unknown compression)
    is rejected by name; an archive that ends early keeps the members listed before the damage.
    """
    problem = safe.not_regular(path)
    if problem is not None:
        return [_Item(path, "reject", path, reason=problem)]
    members, damage = _list_members(path)
    if damage is not None and not members:
        return [_Item(path, "reject", path, reason=f"not a readable archive ({damage})")]
    items = []
    for member, problem in sorted(members):
        hidden = any(part.startswith(".") or part == "__MACOSX" for part in member.split("/"))
        if hidden and safe.unsafe_name(member) is None:
            continue
        name = f"{path}!{member}"
        ext = _suffix(member)
        if problem is not None:
            items.append(_Item(name, "reject", path, member, reason=problem))
        elif READERS.get(ext) == "trf":
            items.append(_Item(name, "trf", path, member))
        elif READERS.get(ext) == "tabular" or ext in ARCHIVES:
            items.append(_skip(name, ext, ", inside an archive: extract it to read it"))
        else:
            items.append(_skip(name, ext))
    if damage is not None:
        items.append(_Item(path, "reject", path, reason=f"archive damaged after {len(members)} members "
                                                          f"({damage}); the members listed before are read"))
    return items


def _list_members(path: str) -> tuple[list[tuple[str, str | None]], str | None]:
    """(member name, why it cannot be read or None) for every file-like member, and the archive's damage."""
    members: list[tuple[str, str | None]] = []
    try:
        if _suffix(path) == ".zip":
            with zipfile.ZipFile(path) as z:
                members = [(i.filename, safe.zip_member_problem(i)) for i in z.infolist() if not i.is_dir()]
        else:
            with tarfile.open(path, "r:*") as t:
                for m in t:  # one by one: a truncated stream still yields the members before the cut
                    if not m.isdir():
                        members.append((m.name, safe.tar_member_problem(m)))
    except Exception as exc:  # zipfile, tarfile, gzip, bz2 and lzma each raise their own errors
        return members, safe.describe(exc)
    return members, None


class _Archives:
    """Open archives, kept open while their members are read in order; members are capped streams."""

    def __init__(self, max_member_bytes: int = safe.MAX_MEMBER_BYTES) -> None:
        self.cap = max_member_bytes
        self._open: dict[str, tuple[zipfile.ZipFile | tarfile.TarFile, dict[str, Any]]] = {}

    def read(self, path: str, member: str) -> bytes:
        """A member's bytes; any failure (damage, size cap, encryption) raises UnreadableInput."""
        entry = self._open.get(path)
        if entry is None:
            entry = self._open[path] = self._open_archive(path)
        handle, infos = entry
        info = infos.get(member)
        if info is None:
            raise safe.UnreadableInput("member not found in the archive")
        if isinstance(handle, zipfile.ZipFile):
            return safe.read_zip_member(handle, info, self.cap)
        return safe.read_tar_member(handle, info, self.cap)

    @staticmethod
    def _open_archive(path: str) -> tuple[zipfile.ZipFile | tarfile.TarFile, dict[str, Any]]:
        problem = safe.not_regular(path)
        if problem is not None:
            raise safe.UnreadableInput(problem)
        infos: dict[str, Any] = {}
        try:
            if _suffix(path) == ".zip":
                z = zipfile.ZipFile(path)  # kept open across members; close() ends them all
                return z, {i.filename: i for i in z.infolist()}
            t = tarfile.open(path, "r:*")  # noqa: SIM115 - kept open like the zip
        except Exception as exc:
            raise safe.UnreadableInput(f"not a readable archive ({safe.describe(exc)})") from None
        try:
            for m in t:
                infos[m.name] = m
        except Exception:  # the damage was ledgered when the archive was listed
            pass
        return t, infos

    def close(self) -> None:
        for handle, _ in self._open.values():
            handle.close()
        self._open.clear()


# --------------------------------------------------------------------------------------------- loading

def _rows(path: str, reason: str) -> pl.DataFrame:
    return pl.DataFrame({"path": [path], "line": [None], "column": [None], "reason": [reason]},
                        schema=ERROR_SCHEMA)


def _is_skip() -> pl.Expr:
    return pl.col("reason").str.starts_with(SKIPPED)


@dataclass
class BatchStream:
    """Batches of whole files as they are read, with running counts; iterate for ``(batch, ledger)``."""

    inputs: Sequence[str]
    on_error: OnError = "collect"
    progress: bool = False
    batch_files: int = 2000
    max_member_bytes: int = safe.MAX_MEMBER_BYTES
    files: int = 0
    loaded: int = 0
    rejected: int = 0
    skipped: int = 0
    _started: bool = field(default=False, repr=False)

    def summary(self) -> str:
        """The one-line count so far, ``N files: K loaded, E rejected``."""
        return summary(self.files, self.loaded, self.rejected)

    def __iter__(self) -> Iterator[tuple[Batch, pl.DataFrame]]:
        if self._started:
            raise TbstatsError("a BatchStream can be iterated only once")
        self._started = True
        if self.on_error not in ("raise", "collect"):
            raise TbstatsError(f"on_error must be 'raise' or 'collect', not {self.on_error!r}")
        if self.batch_files < 1:
            raise TbstatsError(f"batch_files must be at least 1, not {self.batch_files}")
        items = _expand(self.inputs)
        bar = _progress_bar(sum(i.kind != "skip" for i in items), self.progress)
        if self.max_member_bytes < 1:
            raise TbstatsError(f"max_member_bytes must be at least 1, not {self.max_member_bytes}")
        archives = _Archives(self.max_member_bytes)
        try:
            yield from self._chunks(items, archives, bar)
        finally:
            archives.close()
            if bar is not None:
                bar.close()

    def _chunks(self, items: list[_Item], archives: _Archives, bar: Any) -> Iterator[
            tuple[Batch, pl.DataFrame]]:
        next_id = 0
        chunk: list[_Item] = []  # TRF files to read, and skipped or rejected names, in input order
        n_trf = 0

        def flush() -> Iterator[tuple[Batch, pl.DataFrame]]:
            nonlocal next_id, n_trf
            batch, ledger = self._read_trf(chunk, archives, next_id)
            next_id += batch.n_tournaments
            _advance(bar, sum(i.kind != "skip" for i in chunk))
            chunk.clear()
            n_trf = 0
            yield batch, ledger

        for item in items:
            if item.kind == "tabular":
                if chunk:
                    yield from flush()
                for batch, ledger in self._read_tabular(item, next_id):
                    next_id += batch.n_tournaments
                    yield batch, ledger
                _advance(bar, 1)
                continue
            chunk.append(item)
            n_trf += item.kind == "trf"
            if n_trf >= self.batch_files:
                yield from flush()
        if chunk:
            yield from flush()

    def _read_trf(self, chunk: list[_Item], archives: _Archives, first_id: int) -> tuple[Batch, pl.DataFrame]:
        """Read the TRF files of a chunk at once; the ledger lists problems in input order."""
        raw: list[tuple[str, bytes]] = []
        ledger = [_rows(i.name, i.reason) for i in chunk if i.kind != "trf"]
        order = {i.name: n for n, i in enumerate(chunk)}
        pending = [i for i in chunk if i.kind == "trf"]
        for item in pending:
            try:
                data = read_input(item, archives)
            except TbstatsError as exc:
                ledger.append(_rows(item.name, str(exc)))
                continue
            raw.append((item.name, data))
        batch, errors = read_trf_isolated(raw, first_id)
        ledger.append(errors)
        table = pl.concat(ledger).unique(maintain_order=True).with_columns(
            pl.col("path").replace_strict(order, default=len(order), return_dtype=pl.Int64).alias("_order"))
        table = table.sort("_order", "line", nulls_last=False, maintain_order=True).drop("_order")
        bad = set(table.filter(~_is_skip())["path"].to_list())
        self.skipped += sum(i.kind == "skip" for i in chunk)
        self.files += sum(i.kind != "skip" for i in chunk)
        self.rejected += len(bad)
        self.loaded += sum(i.name not in bad for i in pending)
        self._check(table)
        return batch, table

    def _read_tabular(self, item: _Item, first_id: int) -> Iterator[tuple[Batch, pl.DataFrame]]:
        self.files += 1
        try:
            problem = safe.not_regular(item.path)
            if problem is not None:
                raise safe.UnreadableInput(problem)
            parts = tabular.iter_model(item.path)
            batch = next(parts)
        except Exception as exc:  # one model is one input: whatever fails, only this input is lost
            self.rejected += 1
            ledger = tabular_ledger(item.name, item.path, exc)
            self._check(ledger)
            yield Batch(empty("tournaments"), empty("players"), empty("games")), ledger
            return
        self.loaded += 1
        while True:
            batch = tabular.renumber(batch, first_id)
            first_id += batch.n_tournaments
            yield batch, pl.DataFrame(schema=ERROR_SCHEMA)
            try:
                batch = next(parts)
            except StopIteration:
                return
            except Exception as exc:
                self.loaded -= 1
                self.rejected += 1
                ledger = tabular_ledger(item.name, item.path, exc)
                self._check(ledger)
                yield Batch(empty("tournaments"), empty("players"), empty("games")), ledger
                return

    def _check(self, ledger: pl.DataFrame) -> None:
        """In raise mode, the first problem (skips are not problems) raises :class:`FormatError`."""
        if self.on_error != "raise":
            return
        problems = ledger.filter(~_is_skip())
        if problems.height:
            row = problems.row(0, named=True)
            raise FormatError(row["path"], row["line"], row["column"], row["reason"])


def read_input(item: _Item, archives: _Archives) -> bytes:
    """The bytes of one TRF input: a regular file, or an archive member read as a capped stream.

    Every failure raises :class:`tbstats.io.safe.UnreadableInput` with the ledger reason.
    """
    if item.member is not None:
        return archives.read(item.path, item.member)
    return safe.read_regular(item.path)


def read_trf_isolated(raw: list[tuple[str, bytes]], first_id: int) -> tuple[Batch, pl.DataFrame]:
    """:func:`read_trf` on a chunk; should the reader fail on the chunk, halve it until the culprit is alone.

    The culprit gets a ledger row with the reader's exception text; every other file is read as usual.
    """
    try:
        result = read_trf(raw, first_id=first_id)
        return result.batch, result.errors
    except Exception as exc:  # a reader bug on one file must not cost the other files of the chunk
        if len(raw) == 1:
            return (Batch(empty("tournaments"), empty("players"), empty("games")),
                    _rows(raw[0][0], f"the TRF reader failed on this file ({safe.describe(exc)})"))
    half = len(raw) // 2
    first, first_errors = read_trf_isolated(raw[:half], first_id)
    second, second_errors = read_trf_isolated(raw[half:], first_id + first.n_tournaments)
    batch = tabular.renumber(Batch.concat([first, second]), first_id)
    return batch, pl.concat([first_errors, second_errors])


def tabular_ledger(name: str, path: str, exc: Exception) -> pl.DataFrame:
    """The ledger rows of a model that failed to read: the checker's rows, a FormatError's place, or the text."""
    rows = getattr(exc, "ledger", None)
    if isinstance(rows, pl.DataFrame) and rows.height:
        return rows
    if isinstance(exc, FormatError):
        return pl.DataFrame([{"path": exc.path, "line": exc.line, "column": exc.column, "reason": exc.reason}],
                            schema=ERROR_SCHEMA, orient="row")
    if isinstance(exc, TbstatsError):
        return _rows(name, _without_prefix(str(exc), path))
    return _rows(name, f"cannot read the model ({safe.describe(exc)})")


def _without_prefix(message: str, path: str) -> str:
    return message[len(path) + 2:] if message.startswith(f"{path}: ") else message


def _progress_bar(total: int, wanted: bool) -> Any:
    if not wanted or not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="file", file=sys.stderr, dynamic_ncols=True)


def _advance(bar: Any, n: int) -> None:
    if bar is not None and n:
        bar.update(n)


def iter_batches(inputs: Sequence[str], *, on_error: OnError = "collect", progress: bool = False,
                 batch_files: int = 2000, max_member_bytes: int = safe.MAX_MEMBER_BYTES) -> BatchStream:
    """Batches of whole files, ``batch_files`` TRF files (or one model part) at a time, with their ledgers.

    The returned :class:`BatchStream` yields ``(batch, ledger)`` pairs and keeps running counts
    (``files``, ``loaded``, ``rejected``, ``skipped``). Tournament ids are unique across the batches.
    An archive member larger than ``max_member_bytes`` once decompressed is rejected without reading it all.
    """
    return BatchStream(inputs, on_error, progress, batch_files, max_member_bytes)


def load(inputs: Sequence[str], *, on_error: OnError, progress: bool = False,
         batch_files: int = 2000, max_member_bytes: int = safe.MAX_MEMBER_BYTES) -> LoadResult:
    """Read every input into one batch; with ``on_error="raise"`` the first problem raises FormatError.

    ``progress`` shows a bar on stderr when stderr is a terminal.
    """
    stream = iter_batches(inputs, on_error=on_error, progress=progress, batch_files=batch_files,
                          max_member_bytes=max_member_bytes)
    batches: list[Batch] = []
    ledgers: list[pl.DataFrame] = [pl.DataFrame(schema=ERROR_SCHEMA)]
    for batch, ledger in stream:
        if batch.n_tournaments or not batches:
            batches.append(batch)
        ledgers.append(ledger)
    batch = batches[0] if len(batches) == 1 else Batch.concat(batches)
    return LoadResult(batch, pl.concat(ledgers), stream.files, stream.loaded, stream.rejected, stream.skipped)
