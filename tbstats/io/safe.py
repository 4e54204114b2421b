"""Reading inputs safely: regular files only, archive members as capped streams, safe member names.

Every function here either returns what it read or raises :class:`UnreadableInput` (a :class:`TbstatsError`)
whose message says why the input cannot be read (:func:`read_regular_files` returns it in the file's place);
nothing here blocks on a FIFO, fills memory from a device or a decompression bomb, or follows a link out of an
archive.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import zipfile
from collections.abc import Iterator, Sequence
from typing import IO, TYPE_CHECKING, Final

import polars as pl

from tbstats.errors import FormatError, TbstatsError
from tbstats.io.trf import ERROR_SCHEMA, read_trf
from tbstats.model.batch import Batch, renumber
from tbstats.model.games import empty

if sys.platform != "win32":   # compiled on POSIX systems only (setup.py): its system calls are POSIX ones
    from tbstats.io.files import read_files as _bulk
else:  # pragma: no cover - each file read by Python
    _bulk = None

if TYPE_CHECKING:
    import tarfile

_CHUNK: Final = 1 << 20
_MORE: Final = 1 << 16  # what a regular file is read by past its size at open (it grew meanwhile)
ONE_READ: Final = 1 << 30   # the most one read of a regular file asks for
_OPEN_FLAGS: Final = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
_ZIP_METHODS: Final = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflate", zipfile.ZIP_BZIP2: "bzip2",
                       zipfile.ZIP_LZMA: "lzma"}
_KINDS: Final = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                 (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a directory"))


class UnreadableInput(TbstatsError):
    """One input (file or archive member) cannot be read; the message is the ledger reason."""


def kind_of(mode: int) -> str:
    """What a file mode is, for messages.

    >>> kind_of(stat.S_IFIFO), kind_of(stat.S_IFREG)
    ('a FIFO', 'a regular file')
    """
    for test, name in _KINDS:
        if test(mode):
            return name
    return "a regular file" if stat.S_ISREG(mode) else "a special file"


def checked_stat(path: str) -> tuple[os.stat_result | None, str | None]:
    """:func:`os.stat` of ``path`` (following links), and why it is not a regular file or a directory (None
    when it is one); the stat is None when it cannot be taken.

    >>> checked_stat("/dev/null")[1]
    'not a regular file (a character device)'
    """
    try:
        st = os.stat(path)
    except OSError as exc:
        return None, f"cannot read the file ({exc.strerror or exc})"
    if stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode):
        return st, None
    return st, f"not a regular file ({kind_of(st.st_mode)})"


def not_regular(path: str) -> str | None:
    """Why ``path`` is not a regular file or a directory (following links), or None when it is one.

    Only :func:`os.stat` is used: a FIFO or a device is never opened.

    >>> not_regular("/dev/null")
    'not a regular file (a character device)'
    """
    return checked_stat(path)[1]


def read_regular(path: str) -> bytes:
    """The bytes of a regular file; anything else (FIFO, device, socket, directory) raises UnreadableInput.

    The file is opened non-blocking and checked again on the open descriptor, so a FIFO put in its place
    after the first check neither blocks nor is read.
    """
    st, problem = checked_stat(path)
    if st is not None and stat.S_ISDIR(st.st_mode):
        problem = "not a regular file (a directory)"
    if problem is not None:
        raise UnreadableInput(problem)
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        raise UnreadableInput(f"cannot read the file ({exc.strerror or exc})") from None
    try:
        now = os.fstat(fd)
        if not stat.S_ISREG(now.st_mode):
            raise UnreadableInput(f"not a regular file ({kind_of(now.st_mode)})")
        # the size is a hint: a file that grows meanwhile is read to its end; a read of a regular file
        # returns less than asked only at its end (asked at most ONE_READ, below Linux's cap on one read of
        # about 2 GiB), so most files take one read
        size, parts, done = now.st_size, [], 0
        want = min(size + 1, ONE_READ)
        while True:
            chunk = os.read(fd, want)
            parts.append(chunk)
            done += len(chunk)
            if not chunk or (len(chunk) < want and done <= size):
                return parts[0] if len(parts) == 1 else b"".join(parts)
            want = _MORE if done > size else min(size + 1 - done, ONE_READ)
    except OSError as exc:
        raise UnreadableInput(f"cannot read the file ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


def read_regular_files(paths: Sequence[str]) -> list[bytes | UnreadableInput]:
    """:func:`read_regular` of each path, in one compiled loop that makes the system calls without the GIL
    (:mod:`tbstats.io.files`; file by file where it is not built): each file's bytes, or the error it would
    raise, with the same reason."""
    if _bulk is None:
        out: list[bytes | UnreadableInput] = []
        for path in paths:
            try:
                out.append(read_regular(path))
            except UnreadableInput as exc:
                out.append(exc)
        return out
    got = _bulk([os.fsencode(p) for p in paths], ONE_READ)
    return [one if isinstance(one, bytes) else _unreadable(*one) for one in got]


def _unreadable(step: str, detail: int) -> UnreadableInput:
    """The error of :func:`read_regular` for a failed step of :func:`tbstats.io.files.read_files`."""
    if step == "kind":
        return UnreadableInput(f"not a regular file ({kind_of(detail)})")
    return UnreadableInput(f"cannot read the file ({os.strerror(detail)})")


def read_capped(stream: IO[bytes], cap: int) -> bytes:
    """Read a stream in chunks; more than ``cap`` bytes raises UnreadableInput without reading further.

    >>> import io
    >>> read_capped(io.BytesIO(b"abc"), 3)
    b'abc'
    >>> read_capped(io.BytesIO(b"abcd"), 3)
    Traceback (most recent call last):
    ...
    tbstats.io.safe.UnreadableInput: larger than 3 bytes when decompressed (--max-member-bytes)
    """
    parts: list[bytes] = []
    size = 0
    while True:
        chunk = stream.read(min(_CHUNK, cap + 1 - size))
        if not chunk:
            return b"".join(parts)
        size += len(chunk)
        if size > cap:
            raise UnreadableInput(f"larger than {cap} bytes when decompressed (--max-member-bytes)")
        parts.append(chunk)


def unsafe_name(name: str) -> str | None:
    """Why an archive member name is unsafe to use (absolute, drive letter, ``..``), or None.

    >>> unsafe_name("a/b.trf"), unsafe_name("../x.trf")
    (None, "unsafe member name (it contains '..')")
    >>> unsafe_name("/etc/x.trf"), unsafe_name("C:/x.trf")
    ('unsafe member name (absolute path)', 'unsafe member name (absolute path)')
    """
    normal = name.replace("\\", "/")
    if normal.startswith("/") or (len(normal) > 1 and normal[1] == ":"):
        return "unsafe member name (absolute path)"
    if ".." in normal.split("/"):
        return "unsafe member name (it contains '..')"
    if "\x00" in name:
        return "unsafe member name (it contains a NUL byte)"
    return None


def zip_member_problem(info: zipfile.ZipInfo) -> str | None:
    """Why a zip member cannot be read (unsafe name, link or device, encrypted, unknown method), or None."""
    problem = unsafe_name(info.filename)
    if problem is not None:
        return problem
    mode = info.external_attr >> 16  # Unix mode when the zip was written on Unix; no type bits otherwise
    if stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR):
        return f"not a regular file ({kind_of(mode)})"
    if info.flag_bits & 0x1:
        return "encrypted member (a password is needed; tbstats does not decrypt)"
    if info.compress_type not in _ZIP_METHODS:
        return (f"compression method {info.compress_type} is not supported (expected one of "
                f"{', '.join(_ZIP_METHODS.values())})")
    return None


def tar_member_problem(info: tarfile.TarInfo) -> str | None:
    """Why a tar member cannot be read (unsafe name, link, device, FIFO), or None for a regular file."""
    problem = unsafe_name(info.name)
    if problem is not None:
        return problem
    if info.isfile():
        return None
    what = ("a symbolic link" if info.issym() else "a hard link" if info.islnk() else
            "a character device" if info.ischr() else "a block device" if info.isblk() else
            "a FIFO" if info.isfifo() else "a special member")
    return f"not a regular file ({what})"


def _admit(problem: str | None, size: int, cap: int) -> None:
    """Raise UnreadableInput for a member that is not a regular file (``problem``) or is over ``cap``."""
    if problem is None and size > cap:
        problem = f"larger than {cap} bytes when decompressed (--max-member-bytes)"
    if problem is not None:
        raise UnreadableInput(problem)


@contextlib.contextmanager
def _member_errors() -> Iterator[None]:
    """Any failure while a member is read becomes UnreadableInput: zlib, bz2, lzma, CRC and format errors and
    truncated streams (EOFError, zlib.error, OSError, ...) all differ, and each loses this member only."""
    try:
        yield
    except UnreadableInput:
        raise
    except Exception as exc:
        raise UnreadableInput(f"cannot read the member ({describe(exc)})") from None


def read_zip_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, cap: int) -> bytes:
    """A zip member's bytes, decompressed as a stream under ``cap``; any failure raises UnreadableInput."""
    _admit(zip_member_problem(info), info.file_size, cap)
    with _member_errors(), archive.open(info) as f:
        return read_capped(f, cap)


def read_tar_member(archive: tarfile.TarFile, info: tarfile.TarInfo, cap: int) -> bytes:
    """A tar member's bytes, read as a stream under ``cap``; any failure raises UnreadableInput."""
    _admit(tar_member_problem(info), info.size, cap)
    with _member_errors():
        f = archive.extractfile(info)
        if f is None:
            raise UnreadableInput("not a regular file")
        with f:
            data = read_capped(f, cap)
    if len(data) != info.size:
        raise UnreadableInput(f"archive ends inside the member ({len(data)} of {info.size} bytes)")
    return data


# ------------------------------------------------------------------------------------ failing alone

def ledger_rows(found: Sequence[tuple[str, str]]) -> pl.DataFrame:
    """Ledger rows of whole files, ``(path, reason)`` each: one frame for them all (a frame a row costs 0.1 ms,
    and a directory of events may hold as many other files as TRF files)."""
    paths = [path for path, _ in found]
    return pl.DataFrame({"path": paths, "line": [None] * len(paths), "column": [None] * len(paths),
                         "reason": [reason for _, reason in found]}, schema=ERROR_SCHEMA)


def _row(path: str, reason: str) -> pl.DataFrame:
    return ledger_rows([(path, reason)])


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
                    _row(raw[0][0], f"the TRF reader failed on this file ({describe(exc)})"))
    half = len(raw) // 2
    first, first_errors = read_trf_isolated(raw[:half], first_id)
    second, second_errors = read_trf_isolated(raw[half:], first_id + first.n_tournaments)
    batch = renumber(Batch.concat([first, second]), first_id)
    return batch, pl.concat([first_errors, second_errors])


def model_ledger(name: str, path: str, exc: Exception) -> pl.DataFrame:
    """The ledger rows of a model that failed to read: the checker's rows, a FormatError's place, or the text."""
    rows = getattr(exc, "ledger", None)
    if isinstance(rows, pl.DataFrame) and rows.height:
        return rows
    if isinstance(exc, FormatError):
        return pl.DataFrame([{"path": exc.path, "line": exc.line, "column": exc.column, "reason": exc.reason}],
                            schema=ERROR_SCHEMA, orient="row")
    if isinstance(exc, TbstatsError):
        return _row(name, without_prefix(str(exc), path))
    return _row(name, f"cannot read the model ({describe(exc)})")


def without_prefix(message: str, path: str) -> str:
    """A message without its leading ``path: ``.

    >>> without_prefix("a.csv: bad", "a.csv")
    'bad'
    """
    return message[len(path) + 2:] if message.startswith(f"{path}: ") else message


def describe(exc: BaseException) -> str:
    """An exception as ``Type: first line`` for a ledger reason.

    >>> describe(EOFError("Compressed file ended"))
    'EOFError: Compressed file ended'
    """
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
