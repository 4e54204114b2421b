"""Inputs that must fail alone: damaged archives, special files, unsafe members, links, oversized members."""

from __future__ import annotations

import io
import os
import struct
import tarfile
import zipfile
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from tbstats.cli import main
from tbstats.io import safe, sources
from tbstats.io.sources import load
from tests.trf_samples import GOOD


def _reasons(result: sources.LoadResult) -> dict[str, str]:
    return {p: r for p, _, _, r in result.ledger.rows()}


def _patch_zip(path: Path, member: str, *, flag: int | None = None, method: int | None = None) -> None:
    """Set a member's general-purpose flag or compression method in its local and central headers."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as z:
        info = z.getinfo(member)
    local = info.header_offset
    at = 0  # this member's central directory entry, found by its name
    while True:
        at = data.find(b"PK\x01\x02", at)
        name_len = struct.unpack_from("<H", data, at + 28)[0]
        if data[at + 46:at + 46 + name_len].decode() == member:
            central = at
            break
        at += 4
    if flag is not None:
        struct.pack_into("<H", data, local + 6, flag)
        struct.pack_into("<H", data, central + 8, flag)
    if method is not None:
        struct.pack_into("<H", data, local + 8, method)
        struct.pack_into("<H", data, central + 10, method)
    path.write_bytes(bytes(data))


def _zip(path: Path, members: dict[str, str | bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in members.items():
            z.writestr(name, text)
    return path


def test_an_encrypted_member_and_an_unknown_method_lose_only_themselves(tmp_path: Path) -> None:
    arc = _zip(tmp_path / "arc.zip", {"a.trf": GOOD, "locked.trf": GOOD, "odd.trf": GOOD})
    _patch_zip(arc, "locked.trf", flag=0x1)
    _patch_zip(arc, "odd.trf", method=9)  # deflate64
    result = load([str(arc)], on_error="collect")
    assert result.batch.tournaments["source"].to_list() == [f"{arc}!a.trf"]
    reasons = _reasons(result)
    assert reasons[f"{arc}!locked.trf"].startswith("encrypted member")
    assert reasons[f"{arc}!odd.trf"].startswith("compression method 9 is not supported")
    assert result.summary() == "3 files: 1 loaded, 2 rejected"


def test_a_corrupt_member_is_one_ledger_row(tmp_path: Path) -> None:
    arc = _zip(tmp_path / "arc.zip", {"a.trf": GOOD, "b.trf": GOOD * 3})
    data = bytearray(arc.read_bytes())
    with zipfile.ZipFile(arc) as z:
        info = z.getinfo("b.trf")
    start = info.header_offset + 30 + len("b.trf")
    data[start:start + 8] = b"\xff" * 8  # damage the deflate stream
    arc.write_bytes(bytes(data))
    result = load([str(arc)], on_error="collect")
    assert result.batch.tournaments["source"].to_list() == [f"{arc}!a.trf"]
    assert _reasons(result)[f"{arc}!b.trf"].startswith("cannot read the member (")


def test_a_truncated_tar_gz_keeps_the_members_before_the_cut(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for n in range(6):
            data = (GOOD + "### " + os.urandom(3000).hex() + "\n").encode()
            info = tarfile.TarInfo(f"e{n}.trf")
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    arc = tmp_path / "cut.tar.gz"
    arc.write_bytes(buf.getvalue()[: len(buf.getvalue()) * 2 // 3])
    result = load([str(arc)], on_error="collect")
    loaded = result.batch.tournaments["source"].to_list()
    assert loaded, "the members before the cut are read"
    assert f"{arc}" in _reasons(result), "the damage is named"
    listed = {p for p in result.ledger["path"].to_list()}
    # every member listed is loaded or ledgered, and the archive itself has a row
    assert result.files == result.loaded + result.rejected
    assert all(p in listed or p in loaded for p in [f"{arc}!e{n}.trf" for n in range(len(loaded))])


def test_a_damaged_archive_in_a_directory_does_not_stop_the_others(tmp_path: Path) -> None:
    (tmp_path / "good.trf").write_text(GOOD)
    (tmp_path / "bad.tar.gz").write_bytes(b"\x1f\x8b\x08\x00" + os.urandom(200))
    result = load([str(tmp_path)], on_error="collect")
    assert result.batch.tournaments["source"].to_list() == [f"{tmp_path}/good.trf"]
    assert _reasons(result)[f"{tmp_path}/bad.tar.gz"].startswith("not a readable archive")


def test_an_oversized_member_is_rejected_under_the_cap(tmp_path: Path) -> None:
    arc = _zip(tmp_path / "arc.zip", {"a.trf": GOOD, "big.trf": GOOD + "### " + "x" * 3_000_000 + "\n"})
    result = load([str(arc)], on_error="collect", max_member_bytes=1_000_000)
    assert result.batch.tournaments["source"].to_list() == [f"{arc}!a.trf"]
    assert "larger than 1000000 bytes" in _reasons(result)[f"{arc}!big.trf"]


def test_a_member_that_lies_about_its_size_is_still_capped(tmp_path: Path) -> None:
    arc = _zip(tmp_path / "arc.zip", {"big.trf": b"\0" * 2_000_000})
    with zipfile.ZipFile(arc) as z:
        info = z.getinfo("big.trf")
        info.file_size = 10  # the header claims 10 bytes
        with pytest.raises(safe.UnreadableInput):
            safe.read_zip_member(z, info, 1_000)


def test_unsafe_zip_names_get_a_row_each(tmp_path: Path) -> None:
    arc = _zip(tmp_path / "arc.zip", {"ok.trf": GOOD, "../evil.trf": GOOD, "/abs.trf": GOOD})
    result = load([str(arc)], on_error="collect")
    reasons = _reasons(result)
    assert result.batch.tournaments["source"].to_list() == [f"{arc}!ok.trf"]
    assert reasons[f"{arc}!../evil.trf"] == "unsafe member name (it contains '..')"
    assert reasons[f"{arc}!/abs.trf"] == "unsafe member name (absolute path)"


def test_a_zip_symlink_member_is_not_followed(tmp_path: Path) -> None:
    arc = tmp_path / "arc.zip"
    with zipfile.ZipFile(arc, "w") as z:
        z.writestr("ok.trf", GOOD)
        link = zipfile.ZipInfo("link.trf")
        link.external_attr = (0o120777) << 16
        z.writestr(link, "/etc/passwd")
    result = load([str(arc)], on_error="collect")
    assert _reasons(result)[f"{arc}!link.trf"] == "not a regular file (a symbolic link)"
    assert result.loaded == 1


def test_special_tar_members_get_a_row_each(tmp_path: Path) -> None:
    arc = tmp_path / "arc.tar"
    with tarfile.open(arc, "w") as t:
        data = GOOD.encode()
        info = tarfile.TarInfo("ok.trf")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
        for name, kind in [("sym.trf", tarfile.SYMTYPE), ("hard.trf", tarfile.LNKTYPE),
                           ("dev.trf", tarfile.CHRTYPE), ("fifo.trf", tarfile.FIFOTYPE)]:
            special = tarfile.TarInfo(name)
            special.type = kind
            special.linkname = "ok.trf"
            t.addfile(special)
        evil = tarfile.TarInfo("../up.trf")
        evil.size = len(data)
        t.addfile(evil, io.BytesIO(data))
    result = load([str(arc)], on_error="collect")
    reasons = _reasons(result)
    assert result.batch.tournaments["source"].to_list() == [f"{arc}!ok.trf"]
    assert reasons[f"{arc}!sym.trf"] == "not a regular file (a symbolic link)"
    assert reasons[f"{arc}!hard.trf"] == "not a regular file (a hard link)"
    assert reasons[f"{arc}!dev.trf"] == "not a regular file (a character device)"
    assert reasons[f"{arc}!fifo.trf"] == "not a regular file (a FIFO)"
    assert reasons[f"{arc}!../up.trf"] == "unsafe member name (it contains '..')"
    assert result.summary() == "6 files: 1 loaded, 5 rejected"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifos_and_devices_are_never_opened(tmp_path: Path) -> None:
    (tmp_path / "good.trf").write_text(GOOD)
    os.mkfifo(tmp_path / "fifo.trf")
    os.symlink("/dev/zero", tmp_path / "zero.trf")
    os.mkfifo(tmp_path / "model.parquet")
    result = load([str(tmp_path)], on_error="collect")
    reasons = _reasons(result)
    assert result.batch.tournaments["source"].to_list() == [f"{tmp_path}/good.trf"]
    assert reasons[f"{tmp_path}/fifo.trf"] == "not a regular file (a FIFO)"
    assert reasons[f"{tmp_path}/zero.trf"] == "not a regular file (a character device)"
    assert reasons[f"{tmp_path}/model.parquet"] == "not a regular file (a FIFO)"
    # named explicitly, and as an archive or a model
    os.mkfifo(tmp_path / "x.zip")
    explicit = load([str(tmp_path / "fifo.trf"), str(tmp_path / "x.zip"), str(tmp_path / "model.parquet")],
                    on_error="collect")
    assert set(_reasons(explicit).values()) == {"not a regular file (a FIFO)"}
    assert explicit.summary() == "3 files: 0 loaded, 3 rejected"


def test_a_symlink_loop_is_read_once(tmp_path: Path) -> None:
    top = tmp_path / "top"
    top.mkdir()
    (top / "a.trf").write_text(GOOD)
    os.symlink(top, top / "loop")
    os.symlink(top / "a.trf", top / "alias.trf")
    for inputs in ([f"{top}/**/*.trf"], [str(top)], [str(top), str(top / "a.trf"), f"{top}/**"]):
        result = load(inputs, on_error="collect")
        assert result.batch.n_tournaments == 1, inputs
        assert result.files == 1, inputs


def test_a_reader_failure_on_one_file_loses_only_that_file(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    real = safe.read_trf

    def fragile(inputs: list[tuple[str, bytes]], *, first_id: int = 0) -> object:
        if any(name.endswith("c.trf") for name, _ in inputs):
            raise OverflowError("simulated reader bug")
        return real(inputs, first_id=first_id)

    monkeypatch.setattr(safe, "read_trf", fragile)
    for name in "abcde":
        (tmp_path / f"{name}.trf").write_text(GOOD)
    result = load([str(tmp_path)], on_error="collect")
    assert result.batch.tournaments["source"].to_list() == [f"{tmp_path}/{n}.trf" for n in "abde"]
    assert result.batch.tournaments["tournament"].to_list() == [0, 1, 2, 3]
    assert result.ledger.rows() == [(f"{tmp_path}/c.trf", None, None,
                                     "the TRF reader failed on this file (OverflowError: simulated reader bug)")]
    assert result.summary() == "5 files: 4 loaded, 1 rejected"


def test_cli_names_the_damaged_member_and_computes_the_rest(tmp_path: Path) -> None:
    arc = _zip(tmp_path / "arc.zip", {"a.trf": GOOD, "locked.trf": GOOD})
    _patch_zip(arc, "locked.trf", flag=0x1)
    out = CliRunner().invoke(main, ["compute", str(arc), "-t", "BH", "--errors", str(tmp_path / "e.csv")])
    assert out.exit_code == 1, out.output
    assert out.exception is None or isinstance(out.exception, SystemExit)
    assert f"{arc}!locked.trf: encrypted member" in out.stderr
    assert pl.read_csv(out.stdout.encode())["source"].unique().to_list() == [f"{arc}!a.trf"]
    assert pl.read_csv(tmp_path / "e.csv")["path"].to_list() == [f"{arc}!locked.trf"]


def test_cli_max_member_bytes(tmp_path: Path) -> None:
    arc = _zip(tmp_path / "arc.zip", {"a.trf": GOOD})
    out = CliRunner().invoke(main, ["info", str(arc), "--max-member-bytes", "100"])
    assert out.exit_code == 1
    assert "larger than 100 bytes when decompressed" in out.stderr
