"""Reading inputs safely: regular files only, archive members as capped streams, safe member names.

Every function here either returns what it read or raises :class:`UnreadableInput` (a :class:`TbstatsError`)
whose message says why the input cannot be read; nothing here blocks on a FIFO, fills memory from a device
or a decompression bomb, or follows a link out of an archive.
"""

from __future__ import annotations

import os
import stat
import tarfile
import zipfile
from typing import IO, Final

from tbstats.errors import TbstatsError

#: Default cap on the decompressed size of one archive member (``--max-member-bytes``).
MAX_MEMBER_BYTES: Final = 64 * 2**20
_CHUNK: Final = 1 << 20
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


def not_regular(path: str) -> str | None:
    """Why ``path`` is not a regular file or a directory (following links), or None when it is one.

    Only :func:`os.stat` is used: a FIFO or a device is never opened.

    >>> not_regular("/dev/null")
    'not a regular file (a character device)'
    """
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        return f"cannot read the file ({exc.strerror or exc})"
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return f"not a regular file ({kind_of(mode)})"


def read_regular(path: str) -> bytes:
    """The bytes of a regular file; anything else (FIFO, device, socket, directory) raises UnreadableInput.

    The file is opened non-blocking and checked again on the open descriptor, so a FIFO put in its place
    after the first check neither blocks nor is read.
    """
    problem = not_regular(path)
    if problem is None and os.path.isdir(path):
        problem = "not a regular file (a directory)"
    if problem is not None:
        raise UnreadableInput(problem)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise UnreadableInput(f"cannot read the file ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as f:
        mode = os.fstat(f.fileno()).st_mode
        if not stat.S_ISREG(mode):
            raise UnreadableInput(f"not a regular file ({kind_of(mode)})")
        try:
            return f.read()
        except OSError as exc:
            raise UnreadableInput(f"cannot read the file ({exc.strerror or exc})") from None


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


def read_zip_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, cap: int) -> bytes:
    """A zip member's bytes, decompressed as a stream under ``cap``; any failure raises UnreadableInput."""
    problem = zip_member_problem(info)
    if problem is None and info.file_size > cap:
        problem = f"larger than {cap} bytes when decompressed (--max-member-bytes)"
    if problem is not None:
        raise UnreadableInput(problem)
    try:
        with archive.open(info) as f:
            return read_capped(f, cap)
    except UnreadableInput:
        raise
    except Exception as exc:  # zlib, bz2, lzma, CRC and format errors all differ: each loses this member only
        raise UnreadableInput(f"cannot read the member ({describe(exc)})") from None


def read_tar_member(archive: tarfile.TarFile, info: tarfile.TarInfo, cap: int) -> bytes:
    """A tar member's bytes, read as a stream under ``cap``; any failure raises UnreadableInput."""
    problem = tar_member_problem(info)
    if problem is None and info.size > cap:
        problem = f"larger than {cap} bytes when decompressed (--max-member-bytes)"
    if problem is not None:
        raise UnreadableInput(problem)
    try:
        f = archive.extractfile(info)
        if f is None:
            raise UnreadableInput("not a regular file")
        with f:
            data = read_capped(f, cap)
    except UnreadableInput:
        raise
    except Exception as exc:  # truncated gzip/bz2/xz streams raise EOFError, zlib.error, OSError, ...
        raise UnreadableInput(f"cannot read the member ({describe(exc)})") from None
    if len(data) != info.size:
        raise UnreadableInput(f"archive ends inside the member ({len(data)} of {info.size} bytes)")
    return data


def describe(exc: BaseException) -> str:
    """An exception as ``Type: first line`` for a ledger reason.

    >>> describe(EOFError("Compressed file ended"))
    'EOFError: Compressed file ended'
    """
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
