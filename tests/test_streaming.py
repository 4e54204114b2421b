"""Streaming: every archive command gives the same output for every batch size, layout and executor."""

from __future__ import annotations

import io
import itertools
import shutil
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner
from helpers import REAL, ROOT

from tbstats.analysis.compare import breakdown
from tbstats.cli import main
from tbstats.engine.configs import parse_config
from tbstats.io import batches, parts, sources, tabular
from tbstats.io import flat as flat_io
from tbstats.io.tabular import write_model
from tbstats.model.batch import Batch
from tbstats.run import commands, pipeline

SAMPLE = ROOT / "data" / "sample_archive.parquet"
EXAMPLES = ROOT / "data" / "examples"
CONFIGS = ["a=fide-2024:BH/C1,BH,SB,DE", "b=fide-2026:BH/C1,BH,SB,DE", "c=auto:from-file", "d=fide-2026:ARO,PS,WIN"]
SIZES = ((1, 2000), (7, 2000), (7, 1), (100_000, 100_000))   # (--batch-size, --batch-files)
REAL_PARTS = ("chessresults", "icu_krause", "heltour", "held_exercises", "chessfy")


@pytest.fixture(autouse=True)
def small_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Parts of a model of at least 3 tournaments (not 512): the small inputs here are then read in several
    parts, each cut into several batches when the batch size is 1."""
    monkeypatch.setattr(batches, "UNIT_TOURNAMENTS", 3)


def test_the_small_parts_fixture_takes_effect(inputs: list[str]) -> None:
    """The fixture above reaches the planner (its value is read when a plan is made, not bound at import)."""
    flat = next(i for i in inputs if i.endswith("flat.parquet"))
    assert len(sources.plan([flat], batch_size=1).parts) == 25 // 3 + 1


def _run(args: list[str]) -> str:
    result = CliRunner().invoke(main, [*args, "-q"])
    assert result.exit_code in (0, 1), result.output
    return result.stdout


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """TRF files (multi-event files and warnings among them), a flat Parquet file, a part-file dataset."""
    root = tmp_path_factory.mktemp("inputs")
    shutil.copytree(EXAMPLES, root / "trf")
    batch = sources.load([str(EXAMPLES)], on_error="raise").batch
    with tabular.ArchiveWriter(root / "dataset") as writer:
        writer.write(batch.select([0, 1, 2]))
        writer.write(batch.select([3, 4]))
    tabular.write_model(tabular.read_model(SAMPLE).select(list(range(0, 50, 2))), root / "flat.parquet")
    with tabular.ArchiveWriter(root / "dataset_csv", "csv") as writer:   # CSV models are read run by run too
        writer.write(batch.select([4, 3]))
        writer.write(batch.select([2, 0, 1]))
    tabular.write_model(batch, root / "flat.csv")   # with the warnings' rows (no tournament) at its end
    found = [str(root / "trf"), str(root / "flat.parquet"), str(root / "dataset"), str(root / "dataset_csv"),
             str(root / "flat.csv")]
    found += [str(REAL / d) for d in REAL_PARTS if (REAL / d).is_dir()]
    return found


def _runs(inputs: list[str], size: int, files: int, workers: int = 1) -> pipeline.Run:
    return pipeline.Run(inputs=inputs, batch_size=size, batch_files=files, workers=workers)


def test_compare_is_the_same_for_every_batch_size(inputs: list[str]) -> None:
    configs = [parse_config(c) for c in CONFIGS]
    results = [commands.compare(_runs(inputs, size, files), configs, drilldown_limit=3) for size, files in SIZES]
    whole = results[-1]
    assert whole.tournaments["tournament"].n_unique() > 40 and whole.drilldown.height > 0
    for other in results[:-1]:
        for name in ("pairs", "configs", "tournaments", "drilldown", "depth"):
            assert getattr(other, name).equals(getattr(whole, name)), name
        for feature in ("rounds", "rating_band"):
            assert breakdown(other, feature).equals(breakdown(whole, feature))


def test_compare_of_a_batch_in_runs_of_players_is_the_comparison_of_one_run(inputs: list[str],
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch of more than CHUNK_PLAYERS players is compared run by run; the runs' partials merge into the
    partial of the whole batch (its per-tournament rows pair-major, counts summed, the drill-down bounded)."""
    from tbstats.analysis import compare as cmp
    from tbstats.engine import compute as engine

    configs = tuple(parse_config(c) for c in CONFIGS)
    batch = sources.load(inputs[:3], on_error="collect").batch
    whole = commands._compare_one(batch, configs, 10, 3)
    monkeypatch.setattr(engine, "CHUNK_PLAYERS", 200)
    calls: list[int] = []
    split = engine.split_batch
    monkeypatch.setattr(engine, "split_batch", lambda b, n: calls.append(n) or split(b, n))
    merged = commands._compare_one(batch, configs, 10, 3)
    assert len(calls) == 1 and calls[0] > 2
    for name in ("tournaments", "drilldown"):
        assert getattr(merged, name).equals(getattr(whole, name)), name
    per_pair = merged.drilldown.group_by("_pair").agg(pl.col("tournament").n_unique())["tournament"]
    assert per_pair.max() == 3   # the first 3 tournaments of each pair, where a pair has more
    for a, b in zip((merged.shared_first, merged.counts, *merged.settled),
                    (whole.shared_first, whole.counts, *whole.settled), strict=True):
        assert np.array_equal(a, b)
    one, runs_of = cmp.combine([whole]), cmp.combine([merged])
    for name in ("pairs", "configs", "tournaments", "drilldown", "depth"):
        assert getattr(one, name).equals(getattr(runs_of, name)), name


def test_audit_of_a_batch_in_runs_of_players_is_the_audit_of_one_run(inputs: list[str],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from tbstats.engine import compute as engine

    batch = sources.load([inputs[0], *(i for i in inputs if i.endswith("icu_krause"))], on_error="collect").batch
    whole = commands._audit_one(batch, "auto", "from-file", {})
    monkeypatch.setattr(engine, "CHUNK_PLAYERS", 200)
    assert len(engine.chunks(batch)) > 2
    for a, b in zip(commands._audit_one(batch, "auto", "from-file", {}), whole, strict=True):
        assert a.equals(b)
    assert whole[0].height == batch.n_tournaments and whole[1].height > 0


def test_audit_and_info_are_the_same_for_every_batch_size(inputs: list[str]) -> None:
    inputs = [*inputs[:5], *(i for i in inputs if i.endswith("icu_krause"))]   # audit tries many orders: fewer
    audits = [commands.audit(_runs(inputs, size, files)) for size, files in SIZES]
    infos = [(commands.info(_runs(inputs, size, files)), commands.info(_runs(inputs, size, files), by_tournament=True))
             for size, files in SIZES]
    assert infos[-1][0]["warnings"].item() > 0 and audits[-1][1].height > 0
    for got in (audits, infos):
        for other in got[:-1]:
            for a, b in zip(other, got[-1], strict=True):
                assert a.equals(b)


@pytest.mark.parametrize("command", [["compute", "-t", "BH/C1,BH,SB,DE,WIN,ARO"],
                                     ["compute", "-t", "LOTS", "--lots", "7"],   # a draw keyed by each event's games
                                     ["compare", "-c", CONFIGS[0], "-c", CONFIGS[2], "--table", "tournaments"],
                                     ["evaluate", "-c", CONFIGS[0], "-c", CONFIGS[3], "--strength", "rating",
                                      "--table", "favour"]])
def test_cli_output_is_the_same_for_every_batch_size(inputs: list[str], command: list[str]) -> None:
    chosen = inputs[:2] if command[0] == "evaluate" else inputs   # evaluate ranks each event many times: fewer
    args = [command[0], *chosen, *command[1:], "--format", "csv"]
    outputs = [_run([*args, "--batch-size", str(size), "--batch-files", str(files)]) for size, files in SIZES]
    assert outputs[-1].count("\n") > 40
    assert outputs[-1] == outputs[0] == outputs[1] == outputs[2]
    assert _run([*args, "--batch-size", "7", "--workers", "2"]) == outputs[-1]


def test_ingest_is_the_same_for_every_batch_size(inputs: list[str], tmp_path: Path) -> None:
    tables = []
    for size, files in SIZES:
        target = tmp_path / f"out{size}-{files}"
        result = CliRunner().invoke(main, ["ingest", *inputs, "-o", str(target), "--batch-size", str(size),
                                           "--batch-files", str(files), "-q"])
        assert result.exit_code in (0, 1), result.output
        back = tabular.read_model(target)
        tables.append([getattr(back, t) for t in tabular.TABLES])
        if size == 7:
            assert len(list((target / "games").iterdir())) > 7   # one part file per batch
    for other in tables[1:]:
        for a, b in zip(tables[0], other, strict=True):
            assert a.equals(b)


def test_a_flat_file_gives_the_outputs_of_the_trf_files_and_the_directory(tmp_path: Path) -> None:
    """Issue 22 item 5: an ingested flat Parquet file and Arrow file (both sparse) give, byte for byte, what the
    TRF files and the directory give, whole or batch by batch."""
    trf = str(ROOT / "data" / "examples")
    given = [trf]
    for name in ("flat.parquet", "flat.arrow", "dir"):
        result = CliRunner().invoke(main, ["ingest", trf, "-o", str(tmp_path / name), "-q"])
        assert result.exit_code == 0, result.output
        given.append(str(tmp_path / name))
    assert tabular.is_sparse(str(tmp_path / "flat.parquet"), "parquet")
    assert tabular.is_sparse(str(tmp_path / "flat.arrow"), "arrow")
    for command in (["compute", "-t", "BH/C1,BH,SB,PS,WIN,ARO,TPR,KS,AOB,FB,DE"], ["info", "--by-tournament"]):
        for size in ("1", "7", "1000"):
            got = {_run([command[0], source, *command[1:], "--format", "csv", "--batch-size", size])
                   for source in given}
            assert len(got) == 1 and len(next(iter(got))) > 200, (command, size)


@pytest.mark.parametrize("name", ["flat.parquet", "flat.arrow"])
def test_a_flat_file_written_over_reads_as_its_new_self(tmp_path: Path, name: str) -> None:
    """A flat file's runs share one scan of it while it is unchanged (its footer read once): written over with
    other events in the same process, it reads as what it now holds, batch by batch."""
    examples, teams = str(ROOT / "data" / "examples"), str(ROOT / "data" / "teams")
    target = str(tmp_path / name)
    compute = ["compute", target, "-t", "BH/C1,BH,SB,WIN", "--format", "csv", "--batch-size", "2"]
    outputs = []
    for source in (examples, teams, examples):
        result = CliRunner().invoke(main, ["ingest", source, "-o", target, "-q"])
        assert result.exit_code == 0, result.output
        outputs.append(_run(compute))
        assert outputs[-1] == _run(["compute", source, *compute[2:]])   # (the sources are the TRF files')
    assert outputs[0] != outputs[1] and outputs[0] == outputs[2]


@pytest.mark.parametrize("layout", ["sparse", "dense", "dense, out of order"])
def test_an_arrow_flat_file_is_read_by_slices_when_its_tournaments_are_in_order(
        layout: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An Arrow flat file has no statistics: its runs were read by filters, each decoding the whole file (the 10k
    mix's flat Arrow file, dense as ``ingest`` wrote it then, took 14.6 s to compute, its directory 0.48 s). Its
    rows in tournament order (:func:`tbstats.io.flat.id_rows`), a run's rows are read by slices: of a sparse
    file (``ingest``'s now) at once, of a dense one in ranges of whole tournaments; the rows of no tournament (the
    warnings, after each batch written) once, with the first run; out of order, by filters as before. The same
    tables either way, for any cut."""
    from tbstats.io import flat

    whole = sources.load([str(EXAMPLES)], on_error="raise").batch
    ids = whole.tournaments["tournament"].to_list()
    path = tmp_path / "flat.arrow"
    pairs = [whole.select(ids[k:k + 2]) for k in range(0, len(ids), 2)]   # (the warnings' rows after each pair)
    if layout == "sparse":
        with tabular.ArchiveWriter(path) as writer:
            for pair in pairs:
                writer.write(pair)
    else:   # (written by hand: every row repeats its tournament's and its player's columns)
        rows = pl.concat([tabular.flatten(pair) for pair in pairs], how="diagonal_relaxed")
        if layout != "dense":
            rows = rows.sort(pl.col("tournament").fill_null(-1) * -1, maintain_order=True)
        rows.write_ipc(path)
    assert tabular.is_sparse(str(path), "arrow") is (layout == "sparse")
    index = flat.id_rows(str(path), "arrow")
    assert (index is not None) is (layout != "dense, out of order")
    if index is not None:
        assert sum(b - a for a, b in index[3]) == whole.warnings.height > 0 and len(index[3]) > 1
    monkeypatch.setattr(flat, "FLAT_ROWS", 5)   # (ranges of a tournament or two)
    from tbstats.io.tabular import sparse

    sliced: list[int] = []
    real = sparse._run_rows
    monkeypatch.setattr(sparse, "_run_rows", lambda *a: sliced.append(a[2]) or real(*a))

    def read(size: int) -> Batch:
        return Batch.stacked([b for b, _ in sources.iter_batches([str(path)], batch_size=size)])

    got = {size: read(size) for size in (1, 2, 1000)}
    assert bool(sliced) is (layout == "sparse")   # (a sparse file's runs by one slice each)
    whole_file = tabular.read_model(path)
    monkeypatch.setattr(flat, "id_rows", lambda *_: None)   # (by filters: the way without the index)
    for size, batch in got.items():
        for table in tabular.TABLES:
            assert getattr(batch, table).equals(getattr(read(size), table)), (size, table)
    if index is not None:   # (in order, a run's ids are the file's)
        assert all(getattr(got[1000], t).equals(getattr(whole_file, t)) for t in tabular.TABLES)


def test_ingest_with_two_workers_writes_the_same_files(inputs: list[str], tmp_path: Path) -> None:
    written = []
    for workers in ("1", "2"):
        target = tmp_path / f"w{workers}"
        result = CliRunner().invoke(main, ["ingest", *inputs, "-o", str(target), "--batch-size", "7",
                                           "--batch-files", "9", "--workers", workers, "-q"])
        assert result.exit_code in (0, 1), result.output
        written.append({p.relative_to(target): p.read_bytes() for p in sorted(target.rglob("*")) if p.is_file()})
    assert len(written[0]) > 8 and written[1] == written[0]


def test_ingested_dataset_is_sorted_with_row_groups_of_whole_tournaments(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import pyarrow.parquet as pq

    monkeypatch.setattr("tbstats.io.tabular.write.ROW_GROUP_ROWS", 1000)
    result = CliRunner().invoke(main, ["ingest", str(SAMPLE), "-o", str(tmp_path / "ds"), "--batch-size", "50", "-q"])
    assert result.exit_code == 0, result.output
    for part in sorted((tmp_path / "ds" / "games").iterdir()):
        meta = pq.ParquetFile(part).metadata
        assert meta.num_row_groups > 1
        bounds = [(meta.row_group(k).column(0).statistics.min, meta.row_group(k).column(0).statistics.max)
                  for k in range(meta.num_row_groups)]
        assert all(hi < lo for (_, hi), (lo, _) in itertools.pairwise(bounds))   # no shared tournament
    # a run of tournaments reads only the row groups it needs, and the model round-trips
    plan = parts.plan_model(str(tmp_path / "ds"), "ds", 10)
    assert plan is not None and len(plan) == 20 and sum(p.tournaments for p in plan) == 200
    assert parts.read_part(plan[3]).tournaments["tournament"].to_list() == list(range(30, 40))
    assert sources.load([str(tmp_path / "ds")], on_error="raise").batch.games.equals(
        sources.load([str(SAMPLE)], on_error="raise").batch.games)


def test_a_part_is_a_slice_of_each_file_in_tournament_order_else_a_filter(tmp_path: Path) -> None:
    """The plan gives each part its rows of every file in tournament order; a file out of order is read with
    the part's filter instead; both read the same tournaments, and cut into the same batches."""
    batch = tabular.read_model(SAMPLE)
    with tabular.ArchiveWriter(tmp_path / "ds") as writer:
        for k in range(0, 200, 80):
            writer.write(batch.select(list(range(k, min(k + 80, 200)))))
    games = sorted((tmp_path / "ds" / "games").iterdir())
    shuffled = pl.read_parquet(games[1]).sample(fraction=1.0, shuffle=True, seed=1)
    shuffled.write_parquet(games[1])
    plan = parts.plan_model(str(tmp_path / "ds"), "ds", 30)
    assert plan is not None and [p.tournaments for p in plan] == [30] * 6 + [20]
    sliced = {f for p in plan for f, _ in p.rows}
    assert str(games[0]) in sliced and str(games[1]) not in sliced
    assert plan[1].rows[0][1] == ((30, 60),)   # the tournaments file: rows 30..59
    got = [parts.read_part(p) for p in plan]
    assert [b.tournaments["tournament"].to_list() for b in got][3] == list(range(90, 120))
    key = ["tournament", "player", "round"]
    assert pl.concat([b.games for b in got]).sort(key).equals(batch.games.sort(key))
    for part in (got[1], got[3]):   # cut by slices (tables in order) and by filters (games out of order)
        cut = list(batches.runs(part, 7, by_source=False))
        assert [b.n_tournaments for b in cut] == [7, 7, 7, 7, 2]
        assert [b.tournaments["tournament"][0] for b in cut] == part.tournaments["tournament"].gather_every(7).to_list()
        assert pl.concat([b.games for b in cut]).sort(key).equals(part.games.sort(key))
    assert batches._cuts(got[1], 7) is not None and batches._cuts(got[3], 7) is None


def test_a_file_within_one_part_is_sliced_whole_without_reading_its_ids(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A file whose row-group statistics put every tournament id in one part (a part file per batch, as ingest
    writes a model) is that part's whole slice: its ids are not read to find its rows. A file whose statistics
    count a null id, or that spans two parts, still has its ids read."""
    batch = tabular.read_model(SAMPLE)
    with tabular.ArchiveWriter(tmp_path / "ds") as writer:
        for k in range(0, 200, 40):
            writer.write(batch.select(list(range(k, k + 40))))
    games = sorted((tmp_path / "ds" / "games").iterdir())
    shuffled = pl.read_parquet(games[2]).sample(fraction=1.0, shuffle=True, seed=1)
    shuffled.write_parquet(games[2])   # out of order, but within one part: its rows are all that part's
    read: list[str] = []
    real = parts._sorted_ids
    monkeypatch.setattr(parts, "_sorted_ids", lambda f, fmt: read.append(f) or real(f, fmt))
    plan = parts.plan_model(str(tmp_path / "ds"), "ds", 40)
    assert plan is not None and [p.tournaments for p in plan] == [40] * 5 and read == []
    assert all(parts.sliced(p) for p in plan)
    assert dict(plan[2].rows)[str(games[2])] == ((0, shuffled.height),)
    key = ["tournament", "player", "round"]
    got = [parts.read_part(p) for p in plan]
    assert [b.tournaments["tournament"].to_list() for b in got][2] == list(range(80, 120))
    assert pl.concat([b.games for b in got]).sort(key).equals(batch.games.sort(key))
    # parts of 30: most files span two of them, and their ids are read
    assert parts.plan_model(str(tmp_path / "ds"), "ds", 30) is not None and len(read) > 5
    # a null id in the statistics: the ids are read (and the file, out of the model's order, is filtered)
    read.clear()
    pl.read_parquet(games[1]).with_columns(tournament=pl.when(pl.int_range(pl.len()) == 3).then(None)
                                           .otherwise(pl.col("tournament"))).write_parquet(games[1])
    plan = parts.plan_model(str(tmp_path / "ds"), "ds", 40)
    assert plan is not None and read == [str(games[1])] and not parts.sliced(plan[1])


def test_flat_file_is_read_in_runs_of_tournaments(tmp_path: Path) -> None:
    batch = tabular.read_model(SAMPLE)
    with tabular.ArchiveWriter(tmp_path / "flat.parquet") as writer:
        for k in range(0, 200, 40):
            writer.write(batch.select(list(range(k, k + 40))))
    plan = parts.plan_model(str(tmp_path / "flat.parquet"), "flat", 30)
    assert plan is not None and [p.tournaments for p in plan] == [30] * 6 + [20]
    got = [parts.read_part(p) for p in plan]
    assert [b.tournaments["tournament"].to_list() for b in got][1] == list(range(30, 60))
    assert sum(b.games.height for b in got) == batch.games.height


def test_hive_partitioned_dataset_and_recursive_globs(tmp_path: Path) -> None:
    batch = sources.load([str(EXAMPLES)], on_error="raise").batch
    year = pl.col("start_date").dt.year().fill_null(0)
    root = tmp_path / "hive"
    years = batch.tournaments.select("tournament", year.alias("year"))
    for table in ("tournaments", "players", "games"):
        df = getattr(batch, table).join(years, on="tournament", how="left", maintain_order="left")
        df.write_parquet(root / table, partition_by="year")
        for f in (root / table).rglob("*.parquet"):   # the key lives in the path only, as usual
            pl.read_parquet(f).drop("year").write_parquet(f)
    assert any("year=" in str(p) for p in root.rglob("*.parquet"))
    whole = sources.load([str(EXAMPLES)], on_error="raise").batch
    for given in ([str(root)], [f"{tmp_path}/**/*.parquet"], [f"{root}/games/*/*.parquet"]):
        got = sources.load(given, on_error="raise")
        assert got.summary() == "1 files: 1 loaded, 0 rejected", given
        assert got.batch.n_tournaments == whole.n_tournaments
        assert sorted(got.batch.games["points"].to_list()) == sorted(whole.games["points"].to_list())


def test_bad_model_part_is_a_ledger_row(tmp_path: Path) -> None:
    batch = sources.load([str(EXAMPLES)], on_error="raise").batch
    write_model(batch, tmp_path / "ds")
    pl.read_parquet(tmp_path / "ds" / "games.parquet").with_columns(pl.col("points").cast(pl.String)).write_parquet(
        tmp_path / "ds" / "games.parquet")
    result = CliRunner().invoke(main, ["info", str(tmp_path / "ds"), str(EXAMPLES), "--batch-size", "2"])
    assert result.exit_code == 1
    assert "games column 'points' has type String" in result.stderr
    n = len(list(EXAMPLES.glob("*.trf")))
    assert f"{n + 1} files: {n} loaded, 1 rejected" in result.stderr


def test_every_command_takes_the_batch_options() -> None:
    for command in ("compute", "compare", "audit", "info", "ingest"):
        text = CliRunner().invoke(main, [command, "--help"]).stdout
        for flag in ("--batch-size", "--batch-files", "--workers", "--scheduler", "--quiet"):
            assert flag in text, (command, flag)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_one_progress_bar_over_tournaments_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    screen = _Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    run = pipeline.Run(inputs=[str(SAMPLE)], batch_size=50, progress=True)
    assert sum(m.tournaments for m in run.map(lambda b: b.n_tournaments)) == 200
    text = screen.getvalue()
    assert "200/200" in text and "tournaments" in text and "game rows/s" in text
    quiet = _Terminal()
    monkeypatch.setattr(sys, "stderr", quiet)
    list(pipeline.Run(inputs=[str(SAMPLE)], batch_size=50).map(lambda b: b.n_tournaments))
    assert quiet.getvalue() == ""


@pytest.mark.parametrize("way", ["row groups", "a few tournaments"])
def test_a_flat_run_read_in_pieces_is_the_same_batch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, way: str) -> None:
    """A run of a flat file is split by its row groups (issue 22: each read once), or without statistics a
    few tournaments at a time; either way the batch is the run read at once."""
    batch = sources.load([str(EXAMPLES)], on_error="raise").batch   # with warnings (rows without a tournament)
    monkeypatch.setattr("tbstats.io.tabular.write.FLAT_GROUP_ROWS", 300)
    flat = tmp_path / "flat.parquet"
    tabular.write_model(Batch.concat([batch, tabular.read_model(SAMPLE).select(list(range(40)))]), flat)
    plan = parts.plan_model(str(flat), "flat", 30)
    assert plan is not None and len(plan) == 2
    monkeypatch.setattr(flat_io, "FLAT_ROWS", 1 << 40)   # every row group of a run joined: the run at once
    assert flat_io.group_bounds(str(flat), "parquet", plan[0].lo, plan[0].hi) == [(0, 29)]
    whole = [parts.read_part(p) for p in plan]
    monkeypatch.setattr(flat_io, "FLAT_ROWS", 1)
    if way == "row groups":
        assert len(flat_io.group_bounds(str(flat), "parquet", plan[0].lo, plan[0].hi) or []) > 2
    else:
        monkeypatch.setattr(flat_io, "group_bounds", lambda *args: None)
        monkeypatch.setattr(parts, "FLAT_TOURNAMENTS", 4)
    cut = [parts.read_part(p) for p in plan]
    assert whole[0].warnings.height > 0
    for a, b in zip(whole, cut, strict=True):
        for table in tabular.TABLES:
            assert getattr(a, table).equals(getattr(b, table)), table


def test_a_flat_file_is_written_in_pieces_of_whole_tournaments(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 22: the flat table of a large batch is never built whole (simulate --archive took 3.6x the memory
    of simulate); its pieces, one row group each, stack to the same table."""
    batch = Batch.concat([sources.load([str(EXAMPLES)], on_error="raise").batch,
                          tabular.read_model(SAMPLE).select(list(range(40)))])
    monkeypatch.setattr("tbstats.io.tabular.write.FLAT_GROUP_ROWS", 300)
    pieces = list(tabular.write.flat_pieces(batch))
    assert len(pieces) > 2
    assert pl.concat(pieces).equals(tabular.flatten(batch))
    ids = [set(p["tournament"].drop_nulls().to_list()) for p in pieces]
    assert sum(map(len, ids)) == len(set().union(*ids)) == batch.n_tournaments   # each tournament in one piece
    assert all(p["tournament"].null_count() == 0 for p in pieces[:-1]) and pieces[-1]["tournament"].null_count()
    tabular.write_model(batch, tmp_path / "flat.parquet")
    import pyarrow.parquet as pq

    assert pq.ParquetFile(tmp_path / "flat.parquet").metadata.num_row_groups == len(pieces)
    assert pl.read_parquet(tmp_path / "flat.parquet").equals(tabular.sparsify(tabular.flatten(batch)))
    tabular.write_model(batch, tmp_path / "dir")
    flat, whole = tabular.read_model(tmp_path / "flat.parquet"), tabular.read_model(tmp_path / "dir")
    assert all(getattr(flat, t).equals(getattr(whole, t)) for t in tabular.TABLES)


@pytest.mark.parametrize("fmt", ["csv", "tsv", "parquet", "json", "md"])
def test_compute_to_a_file_writes_batch_by_batch_the_table_of_one_batch(inputs: list[str], tmp_path: Path,
                                                                        fmt: str) -> None:
    chosen = inputs[:3]
    stdout = _run(["compute", *chosen, "-t", "BH,SB,DE", "--format", "csv" if fmt == "parquet" else fmt])
    got = []
    for size in (1, 7, 100_000):
        out = tmp_path / f"out{size}.{fmt}"
        result = CliRunner().invoke(main, ["compute", *chosen, "-t", "BH,SB,DE", "-o", str(out),
                                           "--batch-size", str(size), "-q"])
        assert result.exit_code == 0, result.output
        got.append(out.read_bytes())
        assert not list(tmp_path.glob(".*partial"))
        if fmt != "parquet":   # standard output is streamed the same way
            assert _run(["compute", *chosen, "-t", "BH,SB,DE", "--format", fmt, "--batch-size", str(size)]) == stdout
    assert got[0] == got[1] == got[2]   # byte for byte
    if fmt == "parquet":
        table = pl.read_parquet(out)
        assert table.height > 100
        assert table.write_csv() == pl.read_csv(io.StringIO(stdout), schema=table.schema).write_csv()
    else:
        assert got[0].decode("utf-8") == stdout


def test_a_table_written_piece_by_piece_is_the_table_written_whole(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import pyarrow.parquet as pq

    from tbstats import output

    monkeypatch.setattr(output.files, "ROW_GROUP_ROWS", 10)   # (where TableFile reads it)
    df = pl.DataFrame({"name": [f"=p{k}" if k % 5 == 0 else f"p|{k}" for k in range(47)],
                       "BH": [k / 4 for k in range(47)], "rank": list(range(47)),
                       "tb": [[k, k + 1] for k in range(47)]})
    for fmt in output.FORMATS:
        output.write_table(df, fmt, tmp_path / f"whole.{fmt}")
        whole = (tmp_path / f"whole.{fmt}").read_bytes()
        for cuts in ([47], [0, 1, 46], [3, 9, 10, 11, 0, 14], [1] * 47):
            table = output.TableFile(fmt, tmp_path / f"pieces.{fmt}")
            lo = 0
            for n in cuts:
                table.write(df.slice(lo, n))
                lo += n
            table.commit(df.clear())
            assert (tmp_path / f"pieces.{fmt}").read_bytes() == whole, (fmt, cuts)
        if fmt == "parquet":   # row groups of ROW_GROUP_ROWS rows, whatever the pieces
            meta = pq.read_metadata(tmp_path / "pieces.parquet")
            assert [meta.row_group(k).num_rows for k in range(meta.num_row_groups)] == [10, 10, 10, 10, 7]
        else:
            assert whole.decode("utf-8") == output.format_table(df, fmt)
    empty = output.TableFile("json", tmp_path / "empty.json")
    empty.commit(df.clear())
    assert (tmp_path / "empty.json").read_text() == "[]\n"


def test_compute_to_a_file_that_fails_leaves_no_file(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    for k in range(3):
        shutil.copy(EXAMPLES / "e2_cut_exception.trf", tmp_path / "in" / f"a{k}.trf")
    (tmp_path / "in" / "b.trf").write_text("012 not a tournament\n001 x\n", encoding="utf-8")
    out = tmp_path / "out.csv"
    result = CliRunner().invoke(main, ["compute", str(tmp_path / "in"), "-t", "BH", "-o", str(out),
                                       "--batch-files", "1", "--on-error", "raise", "-q"])
    assert result.exit_code == 3
    assert not out.exists() and not list(tmp_path.glob(".*"))
    result = CliRunner().invoke(main, ["compute", str(tmp_path / "in" / "a0.trf"), "-t", "BH", "-o", str(out),
                                       "--after-round", "99", "-q"])
    assert result.exit_code == 2 and not out.exists() and not list(tmp_path.glob(".*"))


def test_a_table_file_whose_commit_fails_leaves_no_hidden_file(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from tbstats import output

    def full_disk(self: Path, target: Path) -> Path:
        raise OSError("no space left on device")

    for fmt in ("csv", "parquet"):
        table = output.TableFile(fmt, tmp_path / f"out.{fmt}")
        table.write(pl.DataFrame({"a": [1, 2]}))
        with monkeypatch.context() as m:
            m.setattr(Path, "replace", full_disk)
            with pytest.raises(OSError, match="no space"):
                table.commit(pl.DataFrame({"a": []}, schema={"a": pl.Int64}))
        assert list(tmp_path.iterdir()) == [], fmt


def test_a_row_group_that_fails_on_the_writer_thread_fails_the_table(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Parquet row groups are written on a thread while the command goes on: a write that fails there (a full
    disk) is raised by the table's next write or its commit, and leaves no file; one written by then is whole."""
    import pyarrow.parquet as pq

    from tbstats import output

    monkeypatch.setattr(output.files, "ROW_GROUP_ROWS", 4)
    df = pl.DataFrame({"a": list(range(10))})
    for failing in (1, 2):   # the first row group, or the second
        table = output.TableFile("parquet", tmp_path / "out.parquet")
        table.write(df.head(1))   # (the writer opens on the first piece)
        def write_table(*args: object, _real: object = table._handle.write_table, _writes: list[int] = [],  # noqa: B006
                        _failing: int = failing, **kwargs: object) -> None:
            _writes.append(1)
            if len(_writes) == _failing:
                raise OSError("no space left on device")
            _real(*args, **kwargs)  # type: ignore[operator]

        monkeypatch.setattr(table._handle, "write_table", write_table)
        with pytest.raises(OSError, match="no space"):
            for k in range(1, 10):
                table.write(df.slice(k, 1))
            table.commit(df.clear())
        table.discard()   # (what the command does on an error)
        assert list(tmp_path.iterdir()) == [], failing
    table = output.TableFile("parquet", tmp_path / "out.parquet")
    for k in range(10):
        table.write(df.slice(k, 1))
    table.commit(df.clear())
    assert pq.read_table(tmp_path / "out.parquet")["a"].to_pylist() == list(range(10))


@pytest.mark.parametrize(("damage", "layout"), [("bad value", "flat.parquet"), ("bad value", "flat.csv"),
                                               ("bad value", "dataset"), ("orphan rows", "model"),
                                               ("orphan rows", "csv model")])
def test_a_model_damaged_in_a_later_run_loses_the_same_tournaments_for_every_batch_size(
        tmp_path: Path, layout: str, damage: str) -> None:
    """The bad tournaments are rejected with their reason (once each), the others are read, for every N."""
    batch = tabular.read_model(SAMPLE).select(list(range(40)))
    assert batch.tournaments["tournament"].to_list() == list(range(40))
    players = batch.players.with_row_index("_k")
    late = players.filter(pl.col("tournament") == 33)["_k"][1]
    tournaments = batch.tournaments
    if damage == "bad value":   # a negative rating in tournament 33
        players = players.with_columns(pl.when(pl.col("_k") == late).then(-100).otherwise(pl.col("rating"))
                                       .cast(players["rating"].dtype).alias("rating"))
        reason, lost = "rating -100 is negative", ["sim/1/33"]
    else:   # tournament 20 left out of the tournaments table: its rows go with the run of tournament 19
        tournaments = tournaments.filter(pl.col("tournament") != 20)
        reason, lost = "tournament 20 does not exist", ["sim/1/19", "sim/1/20"]
    damaged = Batch(tournaments, players.drop("_k"), batch.games, batch.warnings)
    target = tmp_path / layout
    if layout == "dataset":
        with tabular.ArchiveWriter(target) as writer:
            for lo in range(0, 40, 9):
                writer.write(damaged.select(list(range(lo, min(lo + 9, 40)))))
    else:
        write_model(damaged, target, format="csv" if layout == "csv model" else None)
    got = set()
    for command in (["info", "--by-tournament"], ["compute", "-t", "BH,SB"]):
        for size in ("1", "7", "1000"):
            result = CliRunner().invoke(main, [command[0], str(target), *command[1:], "--batch-size", size,
                                               "--on-error", "collect"])
            assert result.exit_code == 1, result.output
            got.add((command[0], result.stdout, result.stderr))
        assert len({g[1:] for g in got if g[0] == command[0]}) == 1, (command, got)
    for command_name, stdout, stderr in got:
        assert stderr.count(reason) >= 1 and "1 files: 0 loaded, 1 rejected" in stderr
        assert len(set(stderr.splitlines())) == len(stderr.splitlines())   # each problem once
        if command_name == "info" and layout == "csv model" and damage == "orphan rows":
            assert stdout.count("\n") == 1   # a CSV model out of order is read whole: it is rejected whole
        elif command_name == "info":   # the header and the good tournaments
            assert stdout.count("\n") == 41 - len(lost)
            assert all(f"{name}," not in stdout for name in lost) and "sim/1/34," in stdout


@pytest.mark.parametrize("order", ["sorted", "shuffled"])
def test_flat_pieces_of_sorted_and_unsorted_tables_stack_to_the_flat_table(monkeypatch: pytest.MonkeyPatch,
                                                                           order: str) -> None:
    """Pieces take their players and games as slices of tables sorted by tournament, else by a filter of the
    whole tables: either way they stack to the flat table, each tournament in one piece."""
    batch = tabular.read_model(SAMPLE).select(list(range(40)))
    if order == "shuffled":   # rows out of tournament order (tournaments in order: pieces are runs of them)
        batch = Batch(batch.tournaments, batch.players.sample(fraction=1.0, shuffle=True, seed=1),
                      batch.games.sample(fraction=1.0, shuffle=True, seed=2), batch.warnings)
        assert not batch.games["tournament"].is_sorted()
    monkeypatch.setattr("tbstats.io.tabular.write.FLAT_GROUP_ROWS", 250)
    pieces = list(tabular.write.flat_pieces(batch))
    assert len(pieces) > 3
    assert pl.concat(pieces).equals(tabular.flatten(batch))
    ids = [set(p["tournament"].to_list()) for p in pieces]
    assert sum(map(len, ids)) == len(set().union(*ids)) == batch.n_tournaments


def test_a_damaged_page_of_one_part_file_loses_its_row_group_for_every_batch_size(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A part file of a dataset with an unreadable row group: the tournaments of that row group are lost,
    the file is named, the rest is read, whatever the batch size."""
    import pyarrow.parquet as pq

    monkeypatch.setattr("tbstats.io.tabular.write.ROW_GROUP_ROWS", 400)
    batch = tabular.read_model(SAMPLE).select(list(range(40)))
    target = tmp_path / "dataset"
    with tabular.ArchiveWriter(target) as writer:
        for lo in range(0, 40, 20):
            writer.write(batch.select(list(range(lo, lo + 20))))
    damaged = sorted((target / "games").iterdir())[1]   # tournaments 20-39
    meta = pq.read_metadata(damaged)
    assert meta.num_row_groups >= 3
    group = meta.row_group(1)
    ids = pq.read_table(damaged, columns=["tournament"]).column(0).to_pylist()
    first = meta.row_group(0).num_rows
    lost = sorted(set(ids[first:first + group.num_rows]))   # the tournaments with rows in row group 1
    assert lost and 20 not in lost
    column = group.column(group.num_columns - 1)   # game_type of row group 1: its pages zeroed
    data = bytearray(damaged.read_bytes())
    start = column.dictionary_page_offset or column.data_page_offset
    data[start:start + column.total_compressed_size] = bytes(column.total_compressed_size)
    damaged.write_bytes(bytes(data))
    outputs = set()
    for size in ("1", "3", "7", "1000"):
        result = CliRunner().invoke(main, ["info", str(target), "--by-tournament", "--batch-size", size,
                                           "--format", "csv"])
        assert result.exit_code == 1, result.output
        assert f"{damaged}: not a readable parquet file" in result.stderr
        outputs.add(result.stdout)
    assert len(outputs) == 1
    kept = pl.read_csv(io.StringIO(outputs.pop()))["source"].to_list()
    assert kept == [f"sim/1/{t}" for t in range(40) if t not in lost]


def test_the_archive_fit_without_fide_ids_covers_no_player_and_does_not_fail() -> None:
    assert tabular.read_model(SAMPLE).players["fide_id"].fill_null(0).max() in (0, None)   # simulated: no ids
    result = CliRunner().invoke(main, ["evaluate", str(SAMPLE), "-c", CONFIGS[0], "--strength", "archive",
                                       "--batch-size", "7"])
    assert result.exit_code == 0, result.output
    assert "on 0 games among 0 FIDE ids; covers 0 of" in result.stderr
    assert result.stdout.startswith("config,")


def _first_and_ids(value: tuple[int, list[int]], first_id: int) -> tuple[int, list[int]]:
    """A ``then`` that keeps what it was given (module level: it travels to worker processes)."""
    return first_id, [first_id + t for t in value[1]]


def _local_ids(batch: Batch) -> tuple[int, list[int]]:
    return batch.n_tournaments, batch.tournaments["tournament"].to_list()


@pytest.mark.parametrize("workers", [1, 2])
def test_then_gets_each_batch_first_global_id_past_rejected_files(inputs: list[str], tmp_path: Path,
                                                                  workers: int) -> None:
    """``Run.map(f, then=g)``: ``g`` sees the global id of each batch's first tournament, counted after the files
    rejected before it, the same as ``Mapped.first_id``; ids run 0, 1, 2, ..."""
    bad = tmp_path / "bad"
    shutil.copytree(EXAMPLES, bad)
    (bad / "c_broken.trf").write_text("012 Broken\n001    1 m    Bad Player                        2000 ENG"
                                       "          0 2000/01/01  x.0    1     2 w 1\n")
    run = _runs([str(bad), *inputs], 2, 2, workers)
    got = list(run.map(_local_ids, then=_first_and_ids))
    assert run.rejected, "the inputs should reject some files, so that ids shift"
    assert all(m.value[0] == m.first_id for m in got)
    assert [i for m in got for i in m.value[1]] == list(range(run.tournaments))
