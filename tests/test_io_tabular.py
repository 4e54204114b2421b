"""The model to and from Parquet, Arrow IPC and CSV: round trips, part files, schema errors."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import polars as pl
import pytest
from helpers import FIXTURES, REAL, ROOT, requires_shared
from polars.testing import assert_frame_equal
from trf_samples import GOOD, player, variant

from tbstats.errors import FormatError, SchemaError, TbstatsError
from tbstats.io.tabular import FLAT_COLUMNS, ArchiveWriter, flatten, iter_model, read_model, write_model
from tbstats.io.trf import read_trf
from tbstats.model.batch import Batch
from tbstats.model.games import empty

TABLES = ("tournaments", "players", "games", "warnings")
SINGLE = ["archive.parquet", "archive.arrow", "archive.ipc", "archive.feather", "archive.csv"]
DIRECTORY = ["parquet", "arrow", "csv"]


def assert_batch_equal(left: Batch, right: Batch) -> None:
    for table in TABLES:
        assert_frame_equal(getattr(left, table), getattr(right, table), check_row_order=True)


def small_batch() -> Batch:
    return read_trf([("small.trf", GOOD.encode())]).batch


@pytest.fixture(scope="module")
def real_batch() -> Batch:
    """Every TRF file of the shared corpus and fixtures that reads without errors (with warnings)."""
    if not REAL.is_dir():
        pytest.skip("../shared is not beside the checkout")
    paths = [p for root in (REAL, FIXTURES) for p in sorted(root.rglob("*"))
             if p.suffix.lower() in (".trf", ".tab", ".txt")]
    result = read_trf([(str(p), p.read_bytes()) for p in paths])
    assert result.batch.n_tournaments > 80
    assert result.batch.warnings.height > 0
    return result.batch


def unusual_batch() -> Batch:
    """Edge cases: an event without players, a player without rounds, empty vs null strings, quotes."""
    b = read_trf([("a.trf", GOOD.encode()),
                  ("b.trf", (GOOD + player(5, 'Late, "Lou"', "", []) + "\n").encode())]).batch
    lonely = b.tournaments.head(1).with_columns(
        pl.lit(7, pl.Int64).alias("tournament"), pl.lit("none.trf").alias("source"),
        pl.lit(None, pl.List(pl.String)).alias("records"), pl.lit(["BH", "SB, x"]).alias("tiebreaks"))
    players = b.players.with_columns(
        pl.when(pl.col("start_no") == 2).then(pl.lit("")).otherwise(pl.col("name")).alias("name"))
    games = b.games.filter(pl.col("player") != 5)
    return Batch(pl.concat([b.tournaments, lonely]), players, games, b.warnings)


# ------------------------------------------------------------------------------------------- round trips

@requires_shared()
@pytest.mark.parametrize("name", SINGLE)
def test_single_file_round_trip_on_the_real_corpus(real_batch: Batch, tmp_path: Path, name: str) -> None:
    path = write_model(real_batch, tmp_path / name)
    assert path.is_file()
    assert_batch_equal(read_model(path), real_batch)


@requires_shared()
@pytest.mark.parametrize("fmt", DIRECTORY)
def test_directory_round_trip_on_the_real_corpus(real_batch: Batch, tmp_path: Path, fmt: str) -> None:
    path = write_model(real_batch, tmp_path / "archive", format=fmt)  # type: ignore[arg-type]
    assert sorted(p.name for p in path.iterdir()) == sorted(f"{t}.{'arrow' if fmt == 'arrow' else fmt}"
                                                              for t in TABLES)
    assert_batch_equal(read_model(path), real_batch)


@pytest.mark.parametrize("name", [*SINGLE, "dir-parquet", "dir-arrow", "dir-csv"])
def test_round_trip_of_edge_cases(tmp_path: Path, name: str) -> None:
    batch = unusual_batch()
    fmt = name.removeprefix("dir-") if name.startswith("dir-") else None
    path = write_model(batch, tmp_path / name, format=fmt)  # type: ignore[arg-type]
    back = read_model(path)
    assert_batch_equal(back, batch)
    assert back.players.filter(pl.col("start_no") == 2)["name"].to_list() == ["", ""]
    assert back.players.filter(pl.col("start_no") == 1)["name"].to_list() == ["Alpha, Anna"] * 2
    assert back.players.filter(pl.col("start_no") == 5)["name"].to_list() == ['Late, "Lou"']


@pytest.mark.parametrize("name", [*SINGLE, "dir"])
def test_empty_batch_round_trip(tmp_path: Path, name: str) -> None:
    batch = Batch(empty("tournaments"), empty("players"), empty("games"))
    assert_batch_equal(read_model(write_model(batch, tmp_path / name)), batch)


def test_flat_layout() -> None:
    batch = unusual_batch()
    flat = flatten(batch)
    assert flat.columns == list(FLAT_COLUMNS)
    assert flat.columns[:4] == ["tournament", "source", "event_name", "city"]
    assert {"event_federation", "start_no", "name", "federation", "player_line", "round", "game_type",
            "warning_line", "warning_field", "warning_message"} <= set(flat.columns)
    assert "line" not in flat.columns and "player" not in flat.columns
    # one row per player-round, a row for the player without rounds and for the event without players
    games = batch.games.height
    assert flat.filter(pl.col("tournament").is_not_null()).height == games + 2
    late = flat.filter(pl.col("start_no") == 5)
    assert late.height == 1 and late["round"].to_list() == [None]
    assert flat.filter(pl.col("tournament") == 7)["start_no"].to_list() == [None]
    # warnings are rows of their own, without a tournament
    warnings = flat.filter(pl.col("tournament").is_null())
    assert warnings.height == batch.warnings.height > 0
    assert warnings["warning_message"].null_count() == 0
    # records only on each tournament's first row
    assert flat.group_by("tournament").agg(pl.col("records").is_not_null().sum()).filter(
        pl.col("tournament").is_not_null() & (pl.col("tournament") != 7))["records"].to_list() == [1, 1]


def test_csv_cells(tmp_path: Path) -> None:
    path = write_model(unusual_batch(), tmp_path / "a.csv")
    head, first = path.read_text(encoding="utf-8").splitlines()[:2]
    assert head.startswith("tournament,source,event_name,city,event_federation,start_date,")
    assert ',"[""BH"", ""SB, x""]",' in path.read_text(encoding="utf-8")
    assert first.startswith("0,a.trf,Test Open,,,,,,2,2,swiss,")
    assert ",true,played," in first


# ------------------------------------------------------------------------------------------- part files

def parts_of(batch: Batch) -> list[Batch]:
    ids = batch.tournaments["tournament"].to_list()
    return [batch.select(ids[:1]), batch.select(ids[1:2]), batch.select(ids[2:])]


@pytest.mark.parametrize("name", ["dir-parquet", "dir-arrow", "dir-csv", "a.parquet", "a.arrow", "a.csv"])
def test_archive_writer_appends_batches_with_unique_ids(tmp_path: Path, name: str) -> None:
    batch = unusual_batch()
    parts = parts_of(batch)
    fmt = name.removeprefix("dir-") if name.startswith("dir-") else None
    with ArchiveWriter(tmp_path / name, fmt) as writer:  # type: ignore[arg-type]
        for part in parts:
            writer.write(Batch.concat([part]))  # every part numbered from 0: the writer offsets them
    assert writer.tournaments_written == 3
    back = read_model(tmp_path / name)
    assert back.tournaments["tournament"].to_list() == [0, 1, 2]
    assert_batch_equal(back, Batch.concat(parts))
    if name.startswith("dir-"):
        ext = "arrow" if fmt == "arrow" else fmt
        assert sorted(p.name for p in (tmp_path / name / "games").iterdir()) == [
            f"part-0000{i}.{ext}" for i in range(3)]
        assert [b.tournaments["tournament"].to_list() for b in iter_model(tmp_path / name)] == [[0], [1], [2]]


def test_games_as_a_directory_of_parts(tmp_path: Path) -> None:
    batch = unusual_batch()
    path = write_model(batch, tmp_path / "arc")
    games = pl.read_parquet(path / "games.parquet")
    (path / "games.parquet").unlink()
    (path / "games").mkdir()
    games.head(5).write_parquet(path / "games" / "part-0.parquet")
    games.slice(5).write_parquet(path / "games" / "part-1.parquet")
    assert_batch_equal(read_model(path), batch)
    games.write_parquet(path / "games.parquet")
    with pytest.raises(SchemaError, match="table games is stored more than once"):
        read_model(path)


def test_archive_writer_append_continues_ids(tmp_path: Path) -> None:
    parts = parts_of(unusual_batch())
    with ArchiveWriter(tmp_path / "arc") as writer:
        writer.write(parts[0])
    with pytest.raises(TbstatsError, match="not empty"):
        ArchiveWriter(tmp_path / "arc")
    with ArchiveWriter(tmp_path / "arc", append=True) as writer:
        writer.write(Batch.concat(parts[1:]))
    back = read_model(tmp_path / "arc")
    assert_batch_equal(back, Batch.concat(parts))


def test_archive_writer_removes_its_files_on_error(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), ArchiveWriter(tmp_path / "arc") as writer:
        writer.write(small_batch())
        raise RuntimeError("boom")
    assert not (tmp_path / "arc").exists()
    with pytest.raises(RuntimeError), ArchiveWriter(tmp_path / "a.parquet") as writer:
        writer.write(small_batch())
        raise RuntimeError("boom")
    assert not (tmp_path / "a.parquet").exists()


def test_archive_writer_without_batches_leaves_an_empty_model(tmp_path: Path) -> None:
    with ArchiveWriter(tmp_path / "a.parquet"):
        pass
    assert read_model(tmp_path / "a.parquet").n_tournaments == 0


# ------------------------------------------------------------------------------------------- schema errors

def test_wrong_type_in_a_flat_file_names_column_and_file(tmp_path: Path) -> None:
    flat = flatten(small_batch()).with_columns(pl.col("rating").cast(pl.String))
    flat.write_parquet(tmp_path / "x.parquet")
    with pytest.raises(SchemaError, match=r"x\.parquet: column 'rating' has type String \(expected Int32\)"):
        read_model(tmp_path / "x.parquet")
    flatten(small_batch()).with_columns(pl.col("played").cast(pl.Int8)).write_ipc(tmp_path / "x.arrow")
    with pytest.raises(SchemaError, match=r"x\.arrow: column 'played' has type Int8 \(expected Boolean\)"):
        read_model(tmp_path / "x.arrow")


def test_missing_column_in_a_flat_file(tmp_path: Path) -> None:
    flatten(small_batch()).drop("event_name", "round").write_parquet(tmp_path / "x.parquet")
    with pytest.raises(SchemaError, match=r"x\.parquet: flat model table lacks column\(s\) event_name, rou"):
        read_model(tmp_path / "x.parquet")


def test_wrong_type_in_a_directory_table(tmp_path: Path) -> None:
    path = write_model(small_batch(), tmp_path / "arc")
    games = pl.read_parquet(path / "games.parquet").with_columns(pl.col("round").cast(pl.String))
    games.write_parquet(path / "games.parquet")
    with pytest.raises(SchemaError, match=r"games\.parquet: games column 'round' has type String"):
        read_model(path)


def test_bad_csv_cell_names_column_line_and_file(tmp_path: Path) -> None:
    flat = flatten(small_batch(), json_lists=True).with_row_index().with_columns(
        pl.when(pl.col("index") == 2).then(pl.lit("20x0")).otherwise(pl.col("rating").cast(pl.String))
        .alias("rating")).drop("index")
    path = tmp_path / "x.csv"
    flat.write_csv(path)
    with pytest.raises(SchemaError, match=r"x\.csv: column 'rating' line 4: '20x0' is not a whole number"):
        read_model(path)


@pytest.mark.parametrize(("column", "value", "kind"), [
    ("game_type", "lost", "value of played, forfeit_win"),
    ("played", "yes", "boolean"),
    ("start_date", "2024/01/02", "date"),
    ("records", "[oops", "JSON array of strings"),
])
def test_bad_csv_cells_of_other_types(tmp_path: Path, column: str, value: str, kind: str) -> None:
    flat = flatten(small_batch(), json_lists=True).with_columns(pl.lit(value).alias(column))
    flat.write_csv(tmp_path / "x.csv")
    with pytest.raises(SchemaError, match=rf"x\.csv: column '{column}' line 2: .* is not a {kind}"):
        read_model(tmp_path / "x.csv")


def test_unreadable_and_unknown_files(tmp_path: Path) -> None:
    (tmp_path / "x.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(SchemaError, match=r"x\.parquet: not a readable parquet file"):
        read_model(tmp_path / "x.parquet")
    (tmp_path / "x.trf").write_text(GOOD)
    with pytest.raises(SchemaError, match="not a tbstats model file"):
        read_model(tmp_path / "x.trf")
    (tmp_path / "d").mkdir()
    with pytest.raises(SchemaError, match="no tournaments table"):
        read_model(tmp_path / "d")


def test_format_and_extension_must_agree(tmp_path: Path) -> None:
    with pytest.raises(TbstatsError, match="does not match format 'csv'"):
        write_model(small_batch(), tmp_path / "a.parquet", format="csv")


def test_variant_helper_keeps_columns() -> None:
    assert variant(2, "x").splitlines()[2] == "x"


def _events(n: int) -> Batch:
    return read_trf([(f"e{k}.trf", GOOD.encode()) for k in range(n)]).batch


@pytest.mark.parametrize("layout", ["flat.csv", "dir"])
def test_a_csv_model_in_tournament_order_is_read_run_by_run(tmp_path: Path, layout: str) -> None:
    """The plan gives each run of a sorted CSV model its own rows of each file; runs read back the model."""
    from tbstats.io import parts

    batch = _events(9)
    target = tmp_path / layout
    if layout == "dir":
        with ArchiveWriter(target, "csv") as writer:
            writer.write(batch.select([0, 1, 2, 3]))
            writer.write(batch.select([4, 5, 6, 7, 8]))
    else:
        write_model(batch, target)
    runs = parts.plan_model(str(target), "m", 2)
    assert runs is not None and [r.tournaments for r in runs] == [2, 2, 2, 2, 1]
    assert all(r.rows for r in runs) and runs[1].rows[0][1][0][0] > 0   # a later run starts past the first rows
    assert_batch_equal(Batch.concat([parts.read_part(r) for r in runs]), read_model(target))


def test_runs_of_a_csv_file_read_their_own_bytes_with_names_across_lines(tmp_path: Path) -> None:
    """A flat CSV file read by several runs: the plan finds where each run's rows start (one pass over the file),
    and each run parses only its bytes (before, the reader skipped every row before the run, a cost that grew with
    the square of the file); names with quotes, commas and line breaks inside do not shift the rows."""
    from tbstats.io import parts

    batch = _events(9)
    odd = ['Smith, "Bob"\nJr', "O'Neil,\r\nAnn", '""', "plain"]
    batch = Batch(batch.tournaments, batch.players.with_columns(
        pl.Series("name", [odd[k % 4] for k in range(batch.players.height)])), batch.games)
    target = tmp_path / "flat.csv"
    write_model(batch, target)
    runs = parts.plan_model(str(target), "m", 2)
    assert runs is not None and len(runs) == 5
    assert all(r.spans and r.spans[0][0] == str(target) for r in runs)   # (every run of a file several read)
    header = target.read_bytes().index(b"\n") + 1
    assert {r.spans[0][1] for r in runs} == {header}
    assert runs[1].spans[0][2][0][0] > header                             # a later run starts at its own bytes
    assert_batch_equal(Batch.concat([parts.read_part(r) for r in runs]), read_model(target))
    assert read_model(target).players["name"].to_list() == batch.players["name"].to_list()


def test_a_csv_run_whose_bytes_moved_is_read_by_its_rows(tmp_path: Path) -> None:
    """Bytes that no longer hold a run's rows (the file rewritten after the plan) are not trusted: the run is
    read by its row numbers, as before the plan found the bytes."""
    from tbstats.io import parts

    batch = _events(6)
    target = tmp_path / "flat.csv"
    write_model(batch, target)
    runs = parts.plan_model(str(target), "m", 2)
    assert runs is not None and all(r.spans for r in runs)
    text = target.read_bytes()
    cut = text.index(b"\n") + 1
    target.write_bytes(text[:cut] + b"\n" * 7 + text[cut:])   # seven blank rows pushed in after the header
    moved = [dataclasses.replace(r, rows=tuple((f, tuple((a + 7, b + 7) for a, b in rr)) for f, rr in r.rows))
             for r in runs]
    assert_batch_equal(Batch.concat([parts.read_part(r) for r in moved]), batch)


def test_a_bad_csv_cell_in_a_later_run_names_its_own_line(tmp_path: Path) -> None:
    from tbstats.io import parts

    flat = flatten(_events(6), json_lists=True).with_row_index().with_columns(
        pl.when(pl.col("index") == 40).then(pl.lit("20x0")).otherwise(pl.col("rating").cast(pl.String))
        .alias("rating")).drop("index")
    flat.write_csv(tmp_path / "x.csv")
    runs = parts.plan_model(str(tmp_path / "x.csv"), "x", 2)
    assert runs is not None and len(runs) == 3
    parts.read_part(runs[0])
    with pytest.raises(SchemaError, match=r"x\.csv: column 'rating' line 42: '20x0' is not a whole number"):
        parts.read_part(runs[(40 // (flat.height // 6)) // 2])
    with pytest.raises(SchemaError, match=r"x\.csv: column 'rating' line 42: '20x0' is not a whole number"):
        read_model(tmp_path / "x.csv")


def test_a_csv_row_with_a_field_too_many_names_its_line(tmp_path: Path) -> None:
    """A row with more fields than the header (a stray separator, or a quote left open): the CSV reader's own
    error names no row; tbstats names the line, read whole or run by run (quoted separators are text)."""
    from tbstats.io import parts

    write_model(_events(6), tmp_path / "x.csv")
    lines = (tmp_path / "x.csv").read_bytes().split(b"\n")
    lines[41] += b",surplus"
    (tmp_path / "x.csv").write_bytes(b"\n".join(lines))
    expected = r"x\.csv:42: a row of \d+ fields, where the header has \d+"
    with pytest.raises(FormatError, match=expected):
        read_model(tmp_path / "x.csv")
    runs = parts.plan_model(str(tmp_path / "x.csv"), "x", 2)
    assert runs is not None
    with pytest.raises(FormatError, match=expected):
        for run in runs:
            parts.read_part(run)


def test_a_csv_model_out_of_order_is_read_whole(tmp_path: Path) -> None:
    from tbstats.io import parts

    flat = flatten(_events(4), json_lists=True)
    flat.reverse().write_csv(tmp_path / "r.csv")
    assert parts.plan_model(str(tmp_path / "r.csv"), "r", 2) is None
    flat.with_columns(pl.col("tournament").cast(pl.String).replace({"1": "one"})).write_csv(tmp_path / "s.csv")
    assert parts.plan_model(str(tmp_path / "s.csv"), "s", 2) is None   # the whole read reports the cell


# ------------------------------------------------------------------------------------------- sparse flat files

def _sparse_batches() -> list[Batch]:
    """Batches with a sparse file's edge cases: warnings, an event without players, a player without rounds,
    list columns (empty, null, quoted), optional columns (the sample archive's strength), many events."""
    from tbstats.io import sources

    examples = sources.load([str(ROOT / "data" / "examples")], on_error="raise").batch
    sample = read_model(ROOT / "data" / "sample_archive.parquet")
    return [small_batch(), unusual_batch(), examples, sample.select(list(range(0, 60))), _events(12)]


def _rewrite(path: Path, flat: pl.DataFrame, **options: object) -> None:
    """``flat`` written over ``path`` with ``path``'s schema metadata (its sparse mark) and row groups."""
    import pyarrow.parquet as pq

    meta = pq.read_metadata(path)
    table = flat.to_arrow().replace_schema_metadata(pq.read_schema(path).metadata)
    with pq.ParquetWriter(str(path), table.schema, **options) as writer:  # type: ignore[arg-type]
        at = 0
        for k in range(meta.num_row_groups):
            n = meta.row_group(k).num_rows
            writer.write_table(table.slice(at, n), row_group_size=max(n, 1))
            at += n


def test_a_flat_parquet_file_is_sparse_and_reads_back_as_the_dense_file_and_the_directory(tmp_path: Path) -> None:
    """Issue 22 item 5: tournament and player columns on first rows only, marked in the schema metadata; the
    batch read back is the one the dense file (no mark: read as before) and the directory give."""
    import pyarrow.parquet as pq

    from tbstats.io.tabular import SPARSE_MARK, sparsify

    for k, batch in enumerate(_sparse_batches()):
        sparse, dense, directory = tmp_path / f"s{k}.parquet", tmp_path / f"d{k}.parquet", tmp_path / f"dir{k}"
        write_model(batch, sparse)
        write_model(batch, directory)
        flatten(batch).write_parquet(dense)
        meta = pq.read_schema(sparse).metadata
        marks = {key.decode(): value.decode() for key, value in meta.items() if key.startswith(b"tbstats")}
        assert marks == SPARSE_MARK
        written = pl.read_parquet(sparse)
        assert written.equals(sparsify(flatten(batch)))
        games = written.filter(pl.col("tournament").is_not_null())
        later = games.filter(pl.col("tournament").is_first_distinct().not_())
        assert later.height and later["event_name"].null_count() == later["source"].null_count() == later.height
        assert games["tiebreaks"].dtype == pl.String   # list columns as JSON arrays
        for path in (dense, directory):
            assert_batch_equal(read_model(sparse), read_model(path))


def test_a_sparse_flat_file_without_its_mark_reads_as_a_dense_one(tmp_path: Path) -> None:
    """The mark switches the reader: the same rows without it are a dense file whose rows disagree."""
    write_model(_events(3), tmp_path / "x.parquet")
    flat = pl.read_parquet(tmp_path / "x.parquet")
    flat.with_columns(pl.col(c).str.json_decode(pl.List(pl.String)) for c in ("tiebreaks", "standings_tiebreaks",
                                                                              "records")).write_parquet(
        tmp_path / "plain.parquet")
    with pytest.raises(FormatError, match=r"plain\.parquet: .*row 2: rows of tournament 0 disagree about source"):
        read_model(tmp_path / "plain.parquet")


@pytest.mark.parametrize("statistics", [True, False])
@pytest.mark.parametrize("column, row, kind", [("city", 3, "tournament"), ("rating", 3, "player"),
                                                ("tiebreaks", 5, "tournament")])
def test_a_value_on_a_row_that_is_not_the_first_is_reported(tmp_path: Path, column: str, row: int, kind: str,
                                                             statistics: bool) -> None:
    """A value on a row that is not its tournament's (player's) first is named by file, row and column, whether
    the row groups' statistics find it or the rows are read (no statistics); in parts, only its own run fails."""
    from tbstats.io import parts

    path = tmp_path / "x.parquet"
    write_model(_events(5), path)
    flat = pl.read_parquet(path).with_row_index()
    late = flat.filter(pl.col("tournament") == 3)["index"][row]
    value = pl.lit('["X"]') if column == "tiebreaks" else pl.lit("Here") if column == "city" else pl.lit(1999)
    flat = flat.with_columns(pl.when(pl.col("index") == late).then(value.cast(flat.schema[column]))
                             .otherwise(pl.col(column)).alias(column)).drop("index")
    _rewrite(path, flat, write_statistics=statistics)
    reason = (rf"x\.parquet: {column}: row {late + 1}: {column} is set on a row of "
              + ("tournament 3 that is not its first" if kind == "tournament" else r"player \d+ of tournament 3"))
    with pytest.raises(FormatError, match=reason):
        read_model(path)
    runs = parts.plan_model(str(path), "x", 1)
    assert runs is not None and len(runs) == 5
    for k, run in enumerate(runs):
        if k == 3:
            with pytest.raises(FormatError, match=reason):
                parts.read_part(run)
        else:
            assert parts.read_part(run).n_tournaments == 1


def test_a_missing_marker_and_an_unknown_layout_are_reported(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    from tbstats.io.tabular import FIRST

    path = tmp_path / "x.parquet"
    write_model(unusual_batch(), path)
    flat = pl.read_parquet(path).with_row_index()
    lonely = flat.filter(pl.col("tournament") == 7)["index"][0]   # the event without players: its only row
    _rewrite(path, flat.with_columns(pl.when(pl.col("index") == lonely).then(None).otherwise(pl.col(FIRST))
                                     .alias(FIRST)).drop("index"))
    with pytest.raises(FormatError, match=rf"x\.parquet: {FIRST}: row {lonely + 1}: marker is empty on the only "
                                          "row of tournament 7"):
        read_model(path)
    table = pq.read_table(path)
    pq.write_table(table.replace_schema_metadata({"tbstats.flat": "sparse", "tbstats.flat.version": "9"}),
                   tmp_path / "new.parquet")
    with pytest.raises(SchemaError, match=r"new\.parquet: flat layout .* is not one this tbstats reads"):
        read_model(tmp_path / "new.parquet")


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 6, 7])
def test_a_sparse_file_read_in_parts_is_the_file_read_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            size: int) -> None:
    """Runs that start inside a row group (and row groups of several runs) still find each tournament's and
    each player's first row: the stacked runs are the whole file."""
    from tbstats.io import parts

    monkeypatch.setattr("tbstats.io.tabular.write.FLAT_GROUP_ROWS", 40)
    path = tmp_path / "x.parquet"
    batch = Batch.concat([_events(9), unusual_batch()])
    write_model(batch, path)
    import pyarrow.parquet as pq

    assert pq.read_metadata(path).num_row_groups > 2
    runs = parts.plan_model(str(path), "x", size)
    assert runs is not None and len(runs) == -(-batch.n_tournaments // size)
    assert_batch_equal(Batch.concat([parts.read_part(r) for r in runs]), read_model(path))
    assert_batch_equal(read_model(path), read_model(tmp_path / "x.parquet"))


def _groups_by_rule(ids: list[int], rows: int) -> list[tuple[int, int]]:
    """Row groups as the rule says, one tournament at a time: a group ends with the first tournament that brings
    it to ``rows`` rows or more."""
    ends = [k + 1 for k in range(len(ids)) if k + 1 == len(ids) or ids[k + 1] != ids[k]]
    out, lo = [], 0
    for end in ends:
        if end - lo >= rows or end == len(ids):
            out.append((lo, end - lo))
            lo = end
    return out


@pytest.mark.parametrize("seed", range(6))
def test_row_groups_of_a_sorted_table_cut_at_tournament_ends(seed: int) -> None:
    """Sorted tables are cut by binary searches, as the rule says (whole tournaments, each group closed by the
    first tournament that fills it); unsorted ones go the group-by's way, which must still cover every row."""
    import numpy as np

    from tbstats.io.tabular.write import _row_groups

    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 60, size=int(rng.integers(2, 80)))
    ids = np.repeat(np.cumsum(rng.integers(1, 4, size=len(sizes))), sizes).tolist()
    for rows in (1, 7, 50, 120, len(ids), len(ids) + 5):
        expected = _groups_by_rule(ids, rows) if len(ids) > rows else [(0, len(ids))]
        df = pl.DataFrame({"tournament": ids, "x": range(len(ids))})
        assert _row_groups(df, rows) == expected
        tail_first = pl.concat([df.tail(1), df.head(len(ids) - 1)])   # unsorted: the group-by's way
        assert sum(n for _, n in _row_groups(tail_first, rows)) == len(ids)
