"""Inputs to batches: files, directories, globs, archives; the ledger of rejected and skipped files."""

from __future__ import annotations

import io
import os
import tarfile
import zipfile
from pathlib import Path

import polars as pl
import pytest
from helpers import SHARED, requires_shared
from trf_samples import GOOD, LINES, player, variant, with_names

from tbstats.errors import FormatError
from tbstats.io import sources
from tbstats.io.expand import READERS
from tbstats.io.sources import iter_batches, load
from tbstats.io.tabular import write_model
from tbstats.io.trf import read_trf

#: Malformed files: name -> (text, the line of the first problem or None, a phrase of its reason).
BAD: dict[str, tuple[bytes, int | None, str]] = {
    "empty.trf": (b"", None, "empty file"),
    "blank.trf": (b"  \n\n", None, "empty file"),
    "binary.trf": (bytes(range(256)) * 4, None, "binary data"),
    "no_players.trf": (b"012 Only a header\nXXR 5\n", None, "no TRF player record '001' found"),
    "short_line.trf": (variant(3, LINES[3][:96]).encode(), 4, "line ends at column 95 inside the round block"),
    "rating.trf": (variant(3, LINES[3][:48] + "20x0" + LINES[3][52:]).encode(), 4, "'20x0' is not a rating"),
    "start_no.trf": (variant(3, LINES[3][:4] + "  x2" + LINES[3][8:]).encode(), 4,
                     "'x2' is not a starting rank"),
    "duplicate.trf": (variant(3, LINES[3][:4] + "   1" + LINES[3][8:]).encode(), 4,
                      "duplicate starting rank 1 (first used on line 3)"),
    "no_opponent.trf": (variant(3, player(2, "Beta, Bob", "2000", ["   1 b 0", "   9 w 1"])).encode(), 4,
                        "opponent 9 does not exist"),
    "self.trf": (variant(3, player(2, "Beta, Bob", "2000", ["   1 b 0", "   2 w 1"])).encode(), 4,
                 "player 2 is paired with themself"),
    "result.trf": (variant(3, player(2, "Beta, Bob", "2000", ["   1 b 0", "   4 w Q"])).encode(), 4,
                   "'Q' is not a TRF result code"),
    "colour.trf": (variant(3, player(2, "Beta, Bob", "2000", ["   1 b 0", "   4 x 1"])).encode(), 4,
                   "'x' is not a TRF colour code"),
    "point_back.trf": (variant(3, player(2, "Beta, Bob", "2000", ["   3 b 0", "   4 w 1"])).encode(), 3,
                       "player 1 meets 2 but 2's line says 3"),
    "both_win.trf": (variant(3, player(2, "Beta, Bob", "2000", ["   1 b 1", "   4 w 1"])).encode(), 3,
                     "results do not complement: 1 has '1' against 2 who has '1'"),
}
#: Other problems listed too: a cause comes first (above), its consequences on other lines are listed after it.
ON_THE_LINE: dict[str, tuple[int, str]] = {
    "short_line.trf": (3, "results do not complement"),
    "duplicate.trf": (3, "opponent 2 does not exist"),
    "start_no.trf": (3, "opponent 2 does not exist"),
    "both_win.trf": (4, "results do not complement: 2 has '1' against 1 who has '1'"),
    "point_back.trf": (4, "player 2 meets 3 but 3's line says 4"),
}


def write(directory: Path, files: dict[str, bytes | str]) -> None:
    for name, data in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)


def test_readers_table() -> None:
    assert {ext for ext, kind in READERS.items() if kind == "trf"} == {".trf", ".txt", ".tab"}
    assert {ext for ext, kind in READERS.items() if kind == "tabular"} == {
        ".parquet", ".arrow", ".ipc", ".feather", ".csv"}


# --------------------------------------------------------------------------------- good and bad files

def test_a_batch_of_good_and_bad_files_loads_every_good_one_and_lists_every_bad_one(tmp_path: Path) -> None:
    write(tmp_path, {name: text for name, (text, _, _) in BAD.items()})
    write(tmp_path, {"good1.trf": GOOD, "sub/good2.trf": GOOD, "sub/good3.txt": GOOD})
    result = load([str(tmp_path)], on_error="collect")
    assert result.summary() == f"{len(BAD) + 3} files: 3 loaded, {len(BAD)} rejected"
    assert result.batch.n_tournaments == 3
    assert sorted(result.batch.tournaments["source"].to_list()) == [
        f"{tmp_path}/good1.trf", f"{tmp_path}/sub/good2.trf", f"{tmp_path}/sub/good3.txt"]
    ledger = result.ledger.with_columns(pl.col("path").str.strip_prefix(f"{tmp_path}/"))
    assert set(ledger["path"]) == set(BAD)
    for name, (_, line, phrase) in BAD.items():
        rows = ledger.filter(pl.col("path") == name)
        first = rows.row(0, named=True)
        assert first["line"] == line, (name, rows)
        assert phrase in first["reason"], (name, rows)
        if name in ON_THE_LINE:
            at, what = ON_THE_LINE[name]
            assert rows.filter((pl.col("line") == at) & pl.col("reason").str.contains(what, literal=True)
                               ).height == 1, (name, rows)


@pytest.mark.parametrize("name", sorted(BAD))
def test_raise_mode_stops_at_the_first_problem_with_file_and_line(tmp_path: Path, name: str) -> None:
    text, line, phrase = BAD[name]
    write(tmp_path, {name: text})
    with pytest.raises(FormatError) as info:
        load([str(tmp_path / name)], on_error="raise")
    assert (info.value.path, info.value.line) == (str(tmp_path / name), line)
    assert phrase in info.value.reason
    where = f"{tmp_path / name}" + ("" if line is None else f":{line}")
    assert str(info.value).startswith(f"{where}: ")


def test_ledger_is_in_input_order_without_duplicates(tmp_path: Path) -> None:
    write(tmp_path, {"b.trf": BAD["duplicate.trf"][0], "a.trf": BAD["rating.trf"][0]})
    result = load([str(tmp_path / "b.trf"), str(tmp_path / "a.trf")], on_error="collect")
    assert result.ledger["path"].unique(maintain_order=True).to_list() == [
        str(tmp_path / "b.trf"), str(tmp_path / "a.trf")]
    assert result.ledger.height == result.ledger.unique().height
    assert result.ledger.columns == ["path", "line", "column", "reason"]


# --------------------------------------------------------------------------------------------- encodings

def test_cp1252_file_with_accented_names(tmp_path: Path) -> None:
    text = with_names("Müller, Jörg", "García")
    write(tmp_path, {"cp.trf": text.encode("cp1252")})
    result = load([str(tmp_path / "cp.trf")], on_error="raise")
    assert result.batch.players["name"].to_list()[:2] == ["Müller, Jörg", "García"]
    assert result.batch.warnings["message"].to_list()[0] == "not UTF-8: decoded as Windows-1252"


@pytest.mark.parametrize(("name", "data"), [
    ("bom.trf", b"\xef\xbb\xbf" + with_names("Müller, Jörg", "García").encode()),
    ("cr.trf", with_names("Müller, Jörg", "García").replace("\n", "\r").encode()),
    ("crlf.trf", with_names("Müller, Jörg", "García").replace("\n", "\r\n").encode()),
    ("cp_crlf.trf", with_names("Müller, Jörg", "García").replace("\n", "\r\n").encode("cp1252")),
])
def test_bom_and_line_ends(tmp_path: Path, name: str, data: bytes) -> None:
    write(tmp_path, {name: data})
    result = load([str(tmp_path / name)], on_error="raise")
    assert result.ledger.is_empty()
    assert result.batch.players["name"].to_list() == ["Müller, Jörg", "García", "Gamma, Carl", "Delta, Dora"]
    assert result.batch.players["line"].to_list() == [3, 4, 5, 6]
    assert result.batch.tournaments["name"].to_list() == ["Test Open"]


# ------------------------------------------------------------------------------------------ input kinds

def test_zip_members_are_sources(tmp_path: Path) -> None:
    with zipfile.ZipFile(tmp_path / "arc.zip", "w") as z:
        z.writestr("inner/a.trf", GOOD)
        z.writestr("inner/b.TXT", GOOD)
        z.writestr("inner/bad.trf", BAD["rating.trf"][0])
        z.writestr("README.md", "hello")
        z.writestr("__MACOSX/inner/._a.trf", "junk")
    result = load([str(tmp_path / "arc.zip")], on_error="collect")
    arc = f"{tmp_path}/arc.zip"
    assert result.batch.tournaments["source"].to_list() == [f"{arc}!inner/a.trf", f"{arc}!inner/b.TXT"]
    assert result.ledger.rows() == [
        (f"{arc}!README.md", None, None, "not a tournament file (extension .md)"),
        (f"{arc}!inner/bad.trf", 4, "rating (cols 49-52)",
         "'20x0' is not a rating (expected digits, or blank/0 for unrated)"),
    ]
    assert result.summary() == "3 files: 2 loaded, 1 rejected"
    assert result.skipped == 1


@pytest.mark.parametrize("name", ["arc.tar.gz", "arc.tgz", "arc.tar"])
def test_tar_members_are_sources(tmp_path: Path, name: str) -> None:
    with tarfile.open(tmp_path / name, "w" if name.endswith(".tar") else "w:gz") as t:
        for member in ("x/one.trf", "x/two.tab", "x/notes.html"):
            data = GOOD.encode()
            info = tarfile.TarInfo(member)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    result = load([str(tmp_path / name)], on_error="collect")
    assert result.batch.tournaments["source"].to_list() == [
        f"{tmp_path}/{name}!x/one.trf", f"{tmp_path}/{name}!x/two.tab"]
    assert result.ledger["reason"].to_list() == ["not a tournament file (extension .html)"]
    assert result.summary() == "2 files: 2 loaded, 0 rejected"


def test_archives_inside_a_directory_and_a_broken_archive(tmp_path: Path) -> None:
    with zipfile.ZipFile(tmp_path / "a.zip", "w") as z:
        z.writestr("a.trf", GOOD)
    (tmp_path / "broken.zip").write_bytes(b"PK\x03\x04 not really")
    result = load([str(tmp_path)], on_error="collect")
    assert result.batch.tournaments["source"].to_list() == [f"{tmp_path}/a.zip!a.trf"]
    assert result.ledger["path"].to_list() == [f"{tmp_path}/broken.zip"]
    assert result.ledger["reason"][0].startswith("not a readable archive")
    assert result.summary() == "2 files: 1 loaded, 1 rejected"


def test_glob_patterns(tmp_path: Path) -> None:
    write(tmp_path, {"a/x.trf": GOOD, "a/y.dat": GOOD, "b/z.trf": GOOD, "b/notes.md": "hi"})
    result = load([f"{tmp_path}/**/*.trf"], on_error="collect")
    assert result.batch.tournaments["source"].to_list() == [f"{tmp_path}/a/x.trf", f"{tmp_path}/b/z.trf"]
    # a file that a pattern matches is read as TRF, as if named on the command line
    result = load([f"{tmp_path}/a/*"], on_error="collect")
    assert result.summary() == "2 files: 2 loaded, 0 rejected"
    result = load([f"{tmp_path}/*.nothing"], on_error="collect")
    assert result.ledger.rows() == [(f"{tmp_path}/*.nothing", None, None, "no file matches the pattern")]
    assert result.summary() == "1 files: 0 loaded, 1 rejected"


def test_a_pattern_over_many_files_looks_at_each_directory_once(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A pattern's matches are planned as the directory's files (the same items, in order), each directory
    looked at once for a model it belongs to, not once for every file in it (10,000 files in 10 directories took
    1.5 s to plan, against 20 ms for the directory); a model's part matched by the pattern is the model."""
    from tbstats.io import expand, tabular

    write(tmp_path / "in", {f"{d}/{k:02d}.trf": GOOD for d in "abc" for k in range(20)})
    looked: list[str] = []
    real = tabular.is_model_dir

    def counted(path: str) -> bool:
        looked.append(os.path.normpath(path))
        return real(path)

    monkeypatch.setattr(tabular, "is_model_dir", counted)
    by_pattern = sources.plan([f"{tmp_path}/in/**/*.trf"]).parts
    assert len(looked) == len(set(looked)) and len(looked) <= 3 + len(tmp_path.parts) + 1
    assert by_pattern == sources.plan([str(tmp_path / "in")]).parts
    write_model(read_trf([("x.trf", GOOD.encode())]).batch, tmp_path / "model")
    matched = expand._expand([f"{tmp_path}/model/**/*.parquet"])
    assert [(i.name, i.kind) for i in matched] == [(str(tmp_path / "model"), "tabular")]


def test_a_model_is_told_from_a_directory_listing_as_from_its_path(tmp_path: Path) -> None:
    """:func:`tbstats.io.kinds.lists_model` (the walk's, from the entries it listed) says what ``is_model_dir`` says:
    a ``tournaments`` table file, or a ``tournaments`` part directory holding table files; and a walk finds a
    model nested in a directory tree as a model (10,000 files in 3,026 directories planned in 128-166 ms, each
    directory stat'ed 7 times for it, now 46-58 ms)."""
    from tbstats.io import expand, kinds

    write(tmp_path, {"flat/tournaments.parquet": "x", "csv/tournaments.csv": "x", "parts/tournaments/p0.parquet": "x",
                     "empty_parts/tournaments/notes.md": "x", "other/tournaments.trf": GOOD,
                     "other/tournament.parquet": "x", "plain/a.trf": GOOD})
    (tmp_path / "dirlike" / "tournaments.parquet").mkdir(parents=True)   # (a directory by a table's name)
    for d in sorted(p for p in tmp_path.iterdir() if p.is_dir()):
        with os.scandir(d) as listed:
            entries = list(listed)
        assert kinds.lists_model(str(d), entries) == kinds.is_model_dir(d), d.name
    assert [d.name for d in tmp_path.iterdir() if kinds.is_model_dir(d)] != []
    write_model(read_trf([("x.trf", GOOD.encode())]).batch, tmp_path / "deep" / "er" / "model")
    found = expand._walk(str(tmp_path / "deep"))
    assert [(i.name, i.kind) for i in found] == [(str(tmp_path / "deep" / "er" / "model"), "tabular")]


def test_directory_walk_skips_other_extensions_and_hidden_entries(tmp_path: Path) -> None:
    write(tmp_path, {"a.trf": GOOD, "notes.md": "x", "page.HTML": "<html>", "expected.csv": "a,b\n1,2\n",
                     "README": "x", ".hidden.trf": "junk", ".git/x.trf": "junk"})
    result = load([str(tmp_path)], on_error="raise")  # skipped files are not problems
    assert result.ledger.rows() == [
        (f"{tmp_path}/README", None, None, "not a tournament file (no extension)"),
        (f"{tmp_path}/expected.csv", None, None,
         "not a tournament file (extension .csv, not a tbstats model)"),
        (f"{tmp_path}/notes.md", None, None, "not a tournament file (extension .md)"),
        (f"{tmp_path}/page.HTML", None, None, "not a tournament file (extension .HTML)"),
    ]
    assert result.summary() == "1 files: 1 loaded, 0 rejected"
    assert result.skipped == 4


def test_a_folder_per_event_with_other_files_beside_each(tmp_path: Path) -> None:
    """Folders of events as results sites give them: each TRF file beside a page (skipped) and a note that is no
    TRF file (its extension is one TRF files have: read and rejected), a page linked from another folder counted
    once. Every file is accounted for in input order, and the pieces' ledgers (one frame for a piece's files,
    the reader's rejected files found by a set) hold each file once, as does the bad-file mark of the batch."""
    n = 60
    for k in range(n):
        write(tmp_path, {f"e{k:02d}/report.trf": GOOD, f"e{k:02d}/page.html": "<html>", f"e{k:02d}/notes.txt": "notes"})
    os.symlink(tmp_path / "e00" / "page.html", tmp_path / "e01" / "shared.html")
    result = load([str(tmp_path)], on_error="collect", batch_files=25)
    assert result.summary() == f"{2 * n} files: {n} loaded, {n} rejected"
    assert result.skipped == n and result.batch.n_tournaments == n
    assert result.batch.tournaments["source"].to_list() == [f"{tmp_path}/e{k:02d}/report.trf" for k in range(n)]
    ledger = result.ledger.with_columns(pl.col("path").str.strip_prefix(f"{tmp_path}/"))
    assert ledger["path"].to_list() == [f"e{k:02d}/{name}" for k in range(n) for name in ("notes.txt", "page.html")]
    notes = ledger.filter(pl.col("path").str.ends_with("notes.txt"))["reason"]
    assert notes.str.starts_with("no TRF player record '001' found").all()
    assert ledger.filter(pl.col("path").str.ends_with(".html"))["reason"].str.starts_with(
        "not a tournament file (extension .html)").all()


def test_explicit_file_is_tried_as_trf_whatever_its_extension(tmp_path: Path) -> None:
    write(tmp_path, {"event.dat": GOOD, "notes.md": "hello"})
    result = load([str(tmp_path / "event.dat"), str(tmp_path / "notes.md")], on_error="collect")
    assert result.batch.tournaments["source"].to_list() == [str(tmp_path / "event.dat")]
    assert result.ledger["reason"][0].startswith("no TRF player record '001' found")


def test_tabular_models_as_inputs(tmp_path: Path) -> None:
    batch = read_trf([("m.trf", GOOD.encode())]).batch
    write_model(batch, tmp_path / "models" / "flat.parquet")
    write_model(batch, tmp_path / "models" / "flat.csv")
    write_model(batch, tmp_path / "models" / "dataset", format="arrow")
    write(tmp_path, {"models/plain.trf": GOOD})
    result = load([str(tmp_path / "models")], on_error="raise")
    assert result.summary() == "4 files: 4 loaded, 0 rejected"
    assert result.batch.tournaments["tournament"].to_list() == [0, 1, 2, 3]
    assert result.batch.tournaments["source"].to_list() == ["m.trf", "m.trf", "m.trf",
                                                            f"{tmp_path}/models/plain.trf"]
    # a model directory named on the command line, and a broken model file
    assert load([str(tmp_path / "models" / "dataset")], on_error="raise").batch.n_tournaments == 1
    (tmp_path / "bad.parquet").write_bytes(b"nope")
    with pytest.raises(FormatError, match=r"bad\.parquet: not a readable parquet file"):
        load([str(tmp_path / "bad.parquet")], on_error="raise")
    collected = load([str(tmp_path / "bad.parquet")], on_error="collect")
    assert collected.summary() == "1 files: 0 loaded, 1 rejected"
    assert collected.ledger["path"].to_list() == [str(tmp_path / "bad.parquet")]


def test_missing_path(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.trf")
    result = load([missing], on_error="collect")
    assert result.ledger.rows() == [(missing, None, None, "no such file or directory")]
    assert result.summary() == "1 files: 0 loaded, 1 rejected"
    with pytest.raises(FormatError, match=r"nope\.trf: no such file or directory$"):
        load([missing], on_error="raise")


def test_same_file_twice_is_read_once(tmp_path: Path) -> None:
    write(tmp_path, {"a.trf": GOOD})
    result = load([str(tmp_path / "a.trf"), str(tmp_path), f"{tmp_path}/*.trf"], on_error="raise")
    assert result.summary() == "1 files: 1 loaded, 0 rejected"


# ------------------------------------------------------------------------------------------- streaming

def test_chunks_of_whole_files_with_unique_ids(tmp_path: Path) -> None:
    write(tmp_path, {f"f{i}.trf": GOOD for i in range(5)})
    write(tmp_path, {"f2.trf": BAD["rating.trf"][0], "notes.md": "x"})
    stream = iter_batches([str(tmp_path)], batch_files=2)
    chunks = list(stream)
    assert [b.n_tournaments for b, _ in chunks] == [2, 1, 1]
    assert [ledger["path"].to_list() for _, ledger in chunks] == [
        [], [f"{tmp_path}/f2.trf"], [f"{tmp_path}/notes.md"]]
    ids = [i for b, _ in chunks for i in b.tournaments["tournament"].to_list()]
    assert ids == [0, 1, 2, 3]
    assert stream.summary() == "5 files: 4 loaded, 1 rejected"
    assert stream.skipped == 1
    whole = load([str(tmp_path)], on_error="collect", batch_files=2000)
    chunked = load([str(tmp_path)], on_error="collect", batch_files=1)
    for table in ("tournaments", "players", "games", "warnings"):
        assert getattr(whole.batch, table).equals(getattr(chunked.batch, table))
    assert whole.ledger.equals(chunked.ledger)


def test_progress_bar_only_on_a_terminal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, {"a.trf": GOOD})
    load([str(tmp_path)], on_error="collect", progress=True)
    assert capsys.readouterr() == ("", "")


# ---------------------------------------------------------------------------------------- the real corpus

@requires_shared()
def test_every_real_file_is_loaded_rejected_or_skipped() -> None:
    root = SHARED / "data" / "trf"
    result = load([str(root)], on_error="collect")
    prefix = f"{root}/"
    loaded = {s.removeprefix(prefix).split("#")[0] for s in result.batch.tournaments["source"]}
    ledger = result.ledger.with_columns(pl.col("path").str.strip_prefix(prefix))
    skipped = set(ledger.filter(pl.col("reason").str.starts_with("not a tournament file"))["path"])
    rejected = set(ledger["path"]) - skipped
    files = {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}
    trf_like = {f for f in files if Path(f).suffix.lower() in (".trf", ".tab")}

    assert rejected == {"openswisspairings/test_file.trf",       # deliberately corrupted sample
                        "arbitools_pypi/testing.txt",            # a Swiss-Manager CSV export
                        "icu_swissperfect/gonzaga_challengers_2010.txt"}  # a SwissPerfect text export
    assert loaded == trf_like - rejected | {"competichess/testTrfFile.txt"}
    assert skipped == files - loaded - rejected
    assert {Path(f).suffix.lower() for f in skipped} == {
        ".csv", ".html", ".pgn", ".json", ".md", ".ini", ".sco", ".trn", ".tsv"}
    assert loaded.isdisjoint(skipped) and loaded.isdisjoint(rejected)
    assert result.summary() == f"{len(loaded) + 3} files: {len(loaded)} loaded, 3 rejected"
    assert result.files == len(files) - len(skipped)
    test_file = ledger.filter(pl.col("path") == "openswisspairings/test_file.trf")
    assert test_file["line"].null_count() == 0


def test_a_chunk_of_files_parsed_a_few_at_a_time_is_the_same_batch(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The reader takes READ_FILES files per call; the batch and the ledger do not depend on it."""
    from tbstats.io import kinds

    write(tmp_path, {name: text for name, (text, _, _) in BAD.items()})
    write(tmp_path, {f"good{k}.trf": GOOD for k in range(9)})
    write(tmp_path, {"two.trf": GOOD + "\n" + GOOD.replace("012 ", "012 Second ", 1)})
    whole = load([str(tmp_path)], on_error="collect")
    monkeypatch.setattr(kinds, "READ_FILES", 2)
    cut = load([str(tmp_path)], on_error="collect")
    assert whole.batch.n_tournaments >= 10 and whole.ledger.height >= len(BAD)
    for table in ("tournaments", "players", "games", "warnings"):
        assert getattr(cut.batch, table).equals(getattr(whole.batch, table)), table
    assert cut.ledger.equals(whole.ledger) and cut.summary() == whole.summary()


def test_large_files_come_in_pieces_of_about_read_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A piece holds READ_FILES files, fewer when they are large (several events each): about READ_BYTES of them, by
    a sample of their sizes; the batch and the ledger are those of any other cut."""
    from tbstats.io import kinds

    events = "\n".join(GOOD.replace("012 ", f"012 Event {k} ", 1) for k in range(20))   # (20 events a file)
    write(tmp_path, {f"multi{k}.trf": events for k in range(12)})
    write(tmp_path, {f"small{k}.trf": GOOD for k in range(4)})
    part = sources.plan([str(tmp_path)]).parts[0]
    size = len(events.encode())
    assert [len(p.items) for p in sources.pieces(part)] == [16]   # (far below READ_BYTES: one piece)
    whole = load([str(tmp_path)], on_error="collect")
    monkeypatch.setattr(kinds, "READ_BYTES", 3 * size)
    # 16 files of about 12/16 * size each on average: pieces of int(3 * size / mean) files
    mean = (12 * size + 4 * len(GOOD.encode())) / 16
    assert [len(p.items) for p in sources.pieces(part)] == [int(3 * size // mean)] * (16 // int(3 * size // mean)) + (
        [16 % int(3 * size // mean)] if 16 % int(3 * size // mean) else [])
    cut = load([str(tmp_path)], on_error="collect")
    assert whole.batch.n_tournaments == 12 * 20 + 4
    for table in ("tournaments", "players", "games", "warnings"):
        assert getattr(cut.batch, table).equals(getattr(whole.batch, table)), table
    assert cut.ledger.equals(whole.ledger)
