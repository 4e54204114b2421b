"""Archives read piece by piece: each opened once per process, a compressed tar from one decompressed copy, the same
tournaments as the files they hold (tbstats.io.archives)."""

from __future__ import annotations

import io
import os
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tbstats.io import archives, kinds
from tbstats.io.sources import load
from tests.trf_samples import GOOD

NAMES = [f"e{k:02d}.trf" for k in range(7)]


def _text(k: int) -> bytes:
    return GOOD.replace("012 ", f"012 Event {k} ", 1).encode()


def _tar(path: Path, mode: str, prefix: str = "") -> Path:
    with tarfile.open(path, mode) as t:
        if prefix:
            folder = tarfile.TarInfo(prefix.rstrip("/"))
            folder.type = tarfile.DIRTYPE
            t.addfile(folder)
        for k, name in enumerate(NAMES):
            data = _text(k)
            info = tarfile.TarInfo(prefix + name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return path


def _zip(path: Path) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for k, name in enumerate(NAMES):
            z.writestr(name, _text(k))
    return path


@pytest.fixture(autouse=True)
def nothing_kept() -> Iterator[None]:
    archives._forget()
    yield
    archives._forget()


def _events(path: Path) -> list[str]:
    result = load([str(path)], on_error="collect")
    assert result.ledger.is_empty(), result.ledger
    return result.batch.tournaments["name"].to_list()


@pytest.mark.parametrize("name,mode", [("a.zip", ""), ("a.tar", "w"), ("a.tar.gz", "w:gz"), ("a.tgz", "w:gz"),
                                       ("a.tar.bz2", "w:bz2"), ("a.tar.xz", "w:xz")])
def test_an_archive_is_opened_once_per_process_whatever_its_pieces(name: str, mode: str, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A piece a member (READ_FILES 1): the archive is opened once, by the plan's listing, and every piece reads
    from what the process keeps; the tournaments are those of the files themselves."""
    path = _zip(tmp_path / name) if name.endswith(".zip") else _tar(tmp_path / name, mode)
    opens: list[str] = []
    real = archives._open

    def counted(p: str) -> archives.Opened:
        opens.append(p)
        return real(p)

    files = tmp_path / "files"
    files.mkdir()
    for k, member in enumerate(NAMES):
        (files / member).write_bytes(_text(k))
    monkeypatch.setattr(archives, "_open", counted)
    monkeypatch.setattr(kinds, "READ_FILES", 1)
    assert _events(path) == _events(files) and len(_events(files)) == 7
    assert opens == [str(path)]
    entry = archives.opened(str(path))
    assert (entry.copy is not None) == mode.startswith("w:")   # (a compressed tar: read from its copy)
    assert opens == [str(path)]


def test_members_of_a_tar_made_with_a_dot_are_read_and_hidden_ones_are_not(tmp_path: Path) -> None:
    """``tar czf a.tgz -C folder .`` names every member './...': they are no hidden files (all of them were
    skipped, and the run read nothing)."""
    path = _tar(tmp_path / "dot.tgz", "w:gz", prefix="./")
    with tarfile.open(tmp_path / "hidden.tar", "w") as t:
        data = _text(9)
        info = tarfile.TarInfo("./.cache/e09.trf")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    assert len(_events(path)) == 7
    result = load([str(tmp_path / "hidden.tar")], on_error="collect")
    assert result.files == 0 and result.batch.n_tournaments == 0


def test_a_compressed_tar_copy_leaves_nothing_and_without_room_the_stream_serves(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The decompressed copy has no name in the temporary directory (nothing is left, however the process
    ends); where the directory has no room for it, or the archive decompresses to far more than TRF text does (a
    bomb), the members are read from the compressed stream."""
    import shutil
    import tempfile

    path = _tar(tmp_path / "a.tar.gz", "w:gz")
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.setattr(kinds, "READ_FILES", 2)
    with_copy = _events(path)
    assert archives.opened(str(path)).copy is not None and not list(temp.iterdir())
    archives._forget()
    monkeypatch.setattr(archives, "_COPY_LEAST", 0)
    monkeypatch.setattr(archives, "_COPY_RATIO", 1)   # (it decompresses to more than its size: a "bomb")
    assert _events(path) == with_copy and archives.opened(str(path)).copy is None
    monkeypatch.setattr(archives, "_COPY_RATIO", 64)
    archives._forget()
    usage = shutil.disk_usage(str(temp))
    monkeypatch.setattr(shutil, "disk_usage", lambda _: usage._replace(free=0))
    assert _events(path) == with_copy
    assert archives.opened(str(path)).copy is None and not list(temp.iterdir())


def test_an_archive_written_again_is_opened_again(tmp_path: Path) -> None:
    path = _zip(tmp_path / "a.zip")
    first = _events(path)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("only.trf", _text(42))
    assert len(first) == 7 and _events(path) == [first[0].replace("Event 0", "Event 42")]


def test_threads_read_one_kept_archive_at_once(tmp_path: Path) -> None:
    """Pieces on two threads read members of one kept zip and one kept copy at once: each its own bytes."""
    paths = [_zip(tmp_path / "a.zip"), _tar(tmp_path / "a.tar.gz", "w:gz")]
    got: list[Any] = []

    def read(path: Path) -> None:
        piece = archives.Archives(1 << 20)
        try:
            got.append([piece.read(str(path), n) for _ in range(20) for n in NAMES])
        finally:
            piece.close()

    threads = [threading.Thread(target=read, args=(p,)) for p in paths for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == [[_text(k) for _ in range(20) for k in range(7)]] * 4


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_child_keeps_nothing_of_its_parent(tmp_path: Path) -> None:
    """A child's copies of its parent's handles and locks are not its own: it opens what it reads again."""
    path = _tar(tmp_path / "a.tar.gz", "w:gz")
    parent = archives.opened(str(path))
    pid = os.fork()
    if pid == 0:   # the child: exit status 0 when it kept nothing and reads the members from a copy of its own
        code = 1
        try:
            mine = archives.opened(str(path))
            piece = archives.Archives(1 << 20)
            code = 0 if mine is not parent and piece.read(str(path), NAMES[3]) == _text(3) else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert archives.opened(str(path)) is parent


def test_members_are_sized_as_the_archive_lists_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Archive members are sized by the archive's own list (a file's size says nothing of its members'): large
    members come fewer to a piece, and enough of their text starts worker processes, as files would (306 events
    of 600 players in a zip, 40 MB: 0.656 -> 0.455 s)."""
    from tbstats.io import sources
    from tbstats.run import sizing, work

    path = _zip(tmp_path / "a.zip")
    files = tmp_path / "files"
    files.mkdir()
    for k, member in enumerate(NAMES):
        (files / member).write_bytes(_text(k))
    zipped, plain = (sources.plan([str(p)]).parts for p in (path, files))
    mean = sum(len(_text(k)) for k in range(7)) / 7
    assert sources.trf_bytes(zipped[0].items, 7, 64) == pytest.approx(7 * mean) == sources.trf_bytes(
        plain[0].items, 7, 64)
    monkeypatch.setattr(kinds, "READ_BYTES", int(2 * mean) + 1)   # (two members a piece)
    assert [len(p.items) for p in sources.pieces(zipped[0])] == [2, 2, 2, 1] == [
        len(p.items) for p in sources.pieces(plain[0])]
    monkeypatch.setattr(kinds, "READ_BYTES", int(mean // 2))   # (a member a piece: seven items)
    for cap, few in ((7 * mean - 100, False), (7 * mean + 100, True)):
        monkeypatch.setattr(sizing, "PAIR_BYTES", cap)
        assert work.few_trf(zipped, 2) is few is work.few_trf(plain, 2)
