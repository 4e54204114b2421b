"""Archive members read piece by piece, each archive opened once per process.

A run reads an archive's members in pieces (:func:`tbstats.io.sources.pieces`), on threads and in worker
processes. Opening an archive is not free: a zip's central directory is parsed (33 ms for 10,000 members), a
tar's members are found by walking it, and a compressed tar (gzip, bzip2, xz) has no random access at all, so
that a member is found by decompressing everything before it. When each piece opened its archives afresh, a zip
of the 10k mix's files computed in 1.0 s against 0.67 s from the same files in a directory, and a ``.tar.gz`` of
them in 188 s (benchmarks/RESULTS.md, 2026-12-05).

So a process keeps what it opened (:func:`opened`), by the archive's identity (path, device, inode, size and
modification time: an archive written again is opened again), the last :data:`KEPT` of them:

- a zip's ``ZipFile`` and its members (reads of members from several threads are safe: each has its own
  position in the file, under the ``ZipFile``'s lock);
- a tar's members, read by each piece through a handle of its own (a ``TarFile`` has one position);
- a compressed tar decompressed once into a temporary plain tar without a name (nothing is left behind, however
  the process ends), whose members are then read by their offsets, where the temporary directory has room for
  twice its size; else its members are read from the compressed stream as before.

A forked child starts with nothing kept: its parent's handles, locks and copies are not its own.
"""

from __future__ import annotations

import os
import threading
import weakref
import zipfile
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, Final

from tbstats.io.safe import (
    UnreadableInput,
    describe,
    not_regular,
    read_tar_member,
    read_zip_member,
    tar_member_problem,
    zip_member_problem,
)
from tbstats.model.cached import cached_property

if TYPE_CHECKING:
    import tarfile

#: Archives a process keeps open: a run reads its archives' members in order, one archive after another.
KEPT: Final = 4
_COPY_CHUNK: Final = 1 << 20
_CHECK_ROOM: Final = 64 << 20   # the temporary directory's room looked at again after this many bytes of a copy
#: A compressed tar's copy is made up to this many times its compressed size (at least _COPY_LEAST bytes): TRF text
#: compresses about 4 to 5 times, and a decompression bomb (gzip: up to about 1,000 times) fills no disk.
_COPY_RATIO: Final = 64
_COPY_LEAST: Final = 64 << 20


@dataclass
class Opened:
    """An archive as a process keeps it: its members by name, and where they are read."""

    members: list[tuple[str, Any]]           # (name, info) of each member, in the archive's order
    damage: str | None = None                 # why the archive could not be listed past its last member
    zip: zipfile.ZipFile | None = None
    tar_path: str = ""                        # a tar's members, read from the archive itself ...
    copy: IO[bytes] | None = field(default=None, repr=False)   # ... or from its decompressed copy (a plain tar)

    @cached_property
    def infos(self) -> dict[str, Any]:
        """The members by name."""
        return dict(self.members)

    def tar(self) -> tarfile.TarFile:
        """A handle of its own on the tar's members (a ``TarFile`` has one position in its file)."""
        import tarfile

        if self.copy is None:
            return tarfile.open(self.tar_path, "r:*")
        return tarfile.open(fileobj=_At(self.copy.fileno()), mode="r:")   # type: ignore[call-overload]


class _At:
    """A read-only view of an open file with a position of its own: ``os.pread`` leaves the descriptor's offset
    alone, which threads and forked children share."""

    def __init__(self, fd: int) -> None:
        self.fd, self.pos = fd, 0

    def read(self, n: int | None = -1) -> bytes:
        if n is None or n < 0:
            n = os.fstat(self.fd).st_size - self.pos
        data = os.pread(self.fd, n, self.pos)
        self.pos += len(data)
        return data

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        base = 0 if whence == os.SEEK_SET else self.pos if whence == os.SEEK_CUR else os.fstat(self.fd).st_size
        self.pos = base + offset
        return self.pos

    def tell(self) -> int:
        return self.pos


_lock = threading.Lock()
_kept: OrderedDict[tuple[Any, ...], Opened] = OrderedDict()


def _forget() -> None:
    """In a forked child: nothing kept (its parent's handles, positions and locks are not its own)."""
    global _lock, _kept
    _lock, _kept = threading.Lock(), OrderedDict()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget)


class _Unopened(Exception):
    """An archive that cannot be opened at all (the text says why)."""


def opened(path: str) -> Opened:
    """The archive at ``path`` as this process keeps it, opened now if it is not kept; UnreadableInput when it
    cannot be opened."""
    problem = not_regular(path)
    if problem is not None:
        raise UnreadableInput(problem)
    try:
        return _kept_or_opened(path)
    except _Unopened as exc:
        raise UnreadableInput(f"not a readable archive ({exc})") from None


def list_members(path: str) -> tuple[list[tuple[str, str | None]], str | None]:
    """(member name, why it cannot be read or None) for every file-like member, and the archive's damage; the
    archive is then kept open for the pieces that read its members in this process (:func:`opened`)."""
    try:
        entry = _kept_or_opened(path)
    except _Unopened as exc:
        return [], str(exc)
    if entry.zip is not None:
        return [(n, zip_member_problem(i)) for n, i in entry.members if not i.is_dir()], entry.damage
    return [(n, tar_member_problem(i)) for n, i in entry.members if not i.isdir()], entry.damage


def _kept_or_opened(path: str) -> Opened:
    try:
        st = os.stat(path)
    except OSError as exc:
        raise _Unopened(describe(exc)) from None
    key = (path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    with _lock:   # (held while an archive is opened: two pieces of one archive wait for one opening)
        entry = _kept.get(key)
        if entry is None:
            entry = _kept[key] = _open(path)
            while len(_kept) > KEPT:   # (dropped, not closed: a piece may still read it; closed when unused)
                _kept.popitem(last=False)
        else:
            _kept.move_to_end(key)
        return entry


def _open(path: str) -> Opened:
    import tarfile  # (tar archives only)

    try:
        if path.lower().endswith(".zip"):
            z = zipfile.ZipFile(path)   # (kept open for the process's pieces)
            return Opened([(i.filename, i) for i in z.infolist()], zip=z)
        with tarfile.open(path, "r:*") as t:
            compressed = type(t.fileobj).__module__ in ("gzip", "bz2", "lzma")
            if not compressed:   # a plain tar: its members are read from it by their offsets
                return Opened(*_members(t), tar_path=path)
            most = max(_COPY_LEAST, _COPY_RATIO * os.stat(path).st_size)
            copy = _plain_copy(t.fileobj, most) if hasattr(os, "pread") else None
        if copy is None:   # no room for a copy, or the stream ends early: its members are read from the stream
            with tarfile.open(path, "r:*") as t:
                return Opened(*_members(t), tar_path=path)
    except Exception as exc:   # zipfile, tarfile, gzip, bz2 and lzma each raise their own errors
        raise _Unopened(describe(exc)) from None
    entry = Opened([], tar_path=path, copy=copy)
    weakref.finalize(entry, copy.close)   # (closed once no piece holds the entry: dropped, or at exit)
    with entry.tar() as t:
        entry.members, entry.damage = _members(t)
    return entry


def _members(t: tarfile.TarFile) -> tuple[list[tuple[str, Any]], str | None]:
    """A tar's members one by one (a truncated stream still yields the members before the cut), and the damage
    that ended the walk."""
    members: list[tuple[str, Any]] = []
    try:
        for m in t:
            members.append((m.name, m))
    except Exception as exc:
        return members, describe(exc)
    return members, None


def _plain_copy(stream: Any, most: int) -> IO[bytes] | None:
    """The decompressed ``stream`` of a tar written to a temporary file without a name (removed when closed, or
    when the process ends however it ends): the file, or None where the temporary directory would keep less than
    the copy's size free, the stream decompresses to more than ``most`` bytes (a bomb: no disk is filled with it),
    or it cannot be read to its end (its members are then read from the stream, as each member is capped)."""
    import shutil
    import tempfile

    stream.seek(0)
    out = tempfile.TemporaryFile(prefix="tbstats-", suffix=".tar")   # noqa: SIM115 - kept by the entry
    folder = tempfile.gettempdir()
    try:
        written = 0
        while chunk := stream.read(_COPY_CHUNK):
            out.write(chunk)
            written += len(chunk)
            if written > most or (written % _CHECK_ROOM < len(chunk) and shutil.disk_usage(folder).free < written):
                raise OSError("no room for the copy, or more than a tar of TRF text decompresses to")
        out.flush()
        if shutil.disk_usage(folder).free < written:
            raise OSError("no room for the copy")
        return out
    except Exception:
        out.close()
        return None


class Archives:
    """The archives of one piece: members read from what the process keeps (:func:`opened`), through tar
    handles of the piece's own; members are capped streams."""

    def __init__(self, max_member_bytes: int) -> None:
        self.cap = max_member_bytes
        self._entries: dict[str, Opened] = {}
        self._tars: dict[str, tarfile.TarFile] = {}

    def read(self, path: str, member: str) -> bytes:
        """A member's bytes; any failure (damage, size cap, encryption) raises UnreadableInput."""
        entry = self._entries.get(path)
        if entry is None:
            entry = self._entries[path] = opened(path)
        info = entry.infos.get(member)
        if info is None:
            raise UnreadableInput("member not found in the archive")
        if entry.zip is not None:
            return read_zip_member(entry.zip, info, self.cap)
        tar = self._tars.get(path)
        if tar is None:
            try:
                tar = self._tars[path] = entry.tar()
            except Exception as exc:
                raise UnreadableInput(f"not a readable archive ({describe(exc)})") from None
        return read_tar_member(tar, info, self.cap)

    def close(self) -> None:
        """Close the piece's tar handles (what the process keeps stays open)."""
        for handle in self._tars.values():
            handle.close()
        self._tars.clear()
        self._entries.clear()
