"""The compiled bulk reader of regular files (tbstats/io/files.pyx) against its plain reference,
:func:`tbstats.io.safe.read_regular`, file by file: the same bytes, or the same reason, in input order."""

from __future__ import annotations

import os
import random
import stat
from pathlib import Path

import pytest

from tbstats.io import safe

files = pytest.importorskip("tbstats.io.files", reason="the bulk reader is built on POSIX systems only")


def _reference(path: str) -> bytes | str:
    try:
        return safe.read_regular(path)
    except safe.UnreadableInput as exc:
        return f"unreadable: {exc}"


def _bulk(paths: list[str]) -> list[bytes | str]:
    return [got if isinstance(got, bytes) else f"unreadable: {got}" for got in safe.read_regular_files(paths)]


def test_files_of_every_size_read_as_the_reference_reads_them(tmp_path: Path) -> None:
    rng = random.Random(7)
    # sizes around the arena's first capacity (1 MiB) and past it, so that it grows between and within files
    sizes = [0, 1, 4095, 4096, 4097, (1 << 20) - 1, 1 << 20, (1 << 20) + 1, 3 << 20,
             *[rng.randrange(0, 20_000) for _ in range(200)]]
    paths = []
    for i, size in enumerate(sizes):
        path = tmp_path / f"f{i:03}.trf"
        path.write_bytes(rng.randbytes(size))
        paths.append(str(path))
    rng.shuffle(paths)
    got = _bulk(paths)
    assert got == [_reference(p) for p in paths]
    assert [len(g) for g in got] == [os.path.getsize(p) for p in paths]


def test_what_is_not_a_readable_regular_file_fails_with_the_reference_reason(tmp_path: Path) -> None:
    good = tmp_path / "good.trf"
    good.write_bytes(b"012 A\n")
    (tmp_path / "dir.trf").mkdir()
    (tmp_path / "to_good.trf").symlink_to(good)
    (tmp_path / "dangling.trf").symlink_to(tmp_path / "nowhere")
    (tmp_path / "loop.trf").symlink_to(tmp_path / "loop.trf")
    (tmp_path / "null.trf").symlink_to("/dev/null")
    names = ["good.trf", "dir.trf", "to_good.trf", "missing.trf", "dangling.trf", "loop.trf", "null.trf",
             "good.trf/below.trf", "good.trf"]
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "fifo.trf")   # never opened: a FIFO's open could block, its read would
        names.insert(3, "fifo.trf")
    paths = [str(tmp_path / n) for n in names]
    got = _bulk(paths)
    assert got == [_reference(p) for p in paths]
    reasons = dict(zip(names, got, strict=True))
    assert reasons["good.trf"] == reasons["to_good.trf"] == b"012 A\n"
    assert reasons["dir.trf"] == "unreadable: not a regular file (a directory)"
    assert reasons["null.trf"] == "unreadable: not a regular file (a character device)"
    assert reasons["missing.trf"] == "unreadable: cannot read the file (No such file or directory)"
    assert reasons["good.trf/below.trf"] == "unreadable: cannot read the file (Not a directory)"
    if "fifo.trf" in reasons:
        assert reasons["fifo.trf"] == "unreadable: not a regular file (a FIFO)"


def test_files_found_by_name_within_their_directories_read_as_the_reference_reads_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run of paths in one directory is read by name within it, opened once; any path is read as the reference
    reads it whatever comes before it: directories in turn and back, links to directories, ``..``, paths
    relative to the working directory or without a directory, a directory that is a file or missing, a
    trailing slash, and the root directory's own entries."""
    for name in ("a", "b", "b/c"):
        (tmp_path / name).mkdir()
    for name in ("a/1.trf", "a/2.trf", "b/1.trf", "b/c/1.trf", "top.trf"):
        (tmp_path / name).write_bytes(name.encode())
    (tmp_path / "to_b").symlink_to(tmp_path / "b")
    monkeypatch.chdir(tmp_path)
    paths = [str(tmp_path / p) for p in ("a/1.trf", "b/1.trf", "a/2.trf", "a/1.trf", "a/missing.trf", "to_b/1.trf",
                                         "b/c/../1.trf", "b/c/1.trf", "top.trf/1.trf", "nowhere/1.trf", "a/",
                                         "a/2.trf")]
    paths += ["top.trf", "a/2.trf", "./b/1.trf", "missing.trf", "/", "/nowhere.trf"]
    got = _bulk(paths)
    assert got == [_reference(p) for p in paths]
    assert got[:3] == [b"a/1.trf", b"b/1.trf", b"a/2.trf"] and got[5] == got[6] == b"b/1.trf"


def test_a_file_longer_than_its_size_is_read_to_its_end() -> None:
    # /proc files say they are empty regular files: the first read (size + 1 bytes) fills, the rest follows
    path = "/proc/self/cmdline"
    if not os.path.exists(path) or os.stat(path).st_size != 0 or not stat.S_ISREG(os.stat(path).st_mode):
        pytest.skip("needs Linux's /proc, whose files report a size of 0")
    got = _bulk([path])[0]
    assert isinstance(got, bytes) and len(got) > 1
    assert got == _reference(path) == files.read_files([path.encode()], 2)[0]


@pytest.mark.parametrize("size", [0, 999, 1000, 1001, 4500])
def test_files_larger_than_one_read_are_read_in_several(tmp_path: Path, size: int,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # (the cap on one read stands for Linux's, about 2 GiB: files that large are read in reads of 1 GiB)
    path = tmp_path / "big.trf"
    path.write_bytes(random.Random(size).randbytes(size))
    assert files.read_files([os.fsencode(path)], 1000) == [path.read_bytes()]
    monkeypatch.setattr(safe, "ONE_READ", 1000)
    assert safe.read_regular(str(path)) == path.read_bytes()
    assert safe.read_regular_files([str(path)]) == [path.read_bytes()]


def test_a_path_no_system_call_takes_is_a_reason_not_an_exception() -> None:
    assert files.read_files([b"a\0b.trf", b"/"]) == [("stat", 22), ("kind", os.stat("/").st_mode)]
    assert str(safe.read_regular_files(["a\0b.trf"])[0]) == f"cannot read the file ({os.strerror(22)})"


def test_no_file_at_all() -> None:
    assert safe.read_regular_files([]) == []


def test_file_by_file_where_the_bulk_reader_is_not_built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # (Windows: tbstats.io.files is POSIX-only, and safe.read_regular_files reads each file with read_regular)
    good = tmp_path / "good.trf"
    good.write_bytes(b"012 A\n")
    paths = [str(good), str(tmp_path / "missing.trf"), str(tmp_path)]
    bulk = _bulk(paths)
    monkeypatch.setattr(safe, "_bulk", None)
    assert _bulk(paths) == bulk == [b"012 A\n", "unreadable: cannot read the file (No such file or directory)",
                                    "unreadable: not a regular file (a directory)"]
