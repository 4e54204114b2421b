"""Dask in process: --scheduler local:N, what travels back to the driver, and clear errors."""

from __future__ import annotations

import polars as pl
import pytest
from click.testing import CliRunner
from helpers import ROOT

from tbstats.cli import main
from tbstats.run import commands, pipeline

SAMPLE = str(ROOT / "data" / "sample_archive.parquet")
EXAMPLES = str(ROOT / "data" / "examples")


def test_scheduler_local_starts_a_cluster_of_worker_processes() -> None:
    """``--scheduler local:2`` (a LocalCluster this command starts); a real scheduler and workers started as
    a user starts them are tests/test_cluster.py's."""
    args = ["compute", EXAMPLES, SAMPLE, "-t", "BH,SB", "--batch-size", "50", "-q"]
    local = CliRunner().invoke(main, args)
    remote = CliRunner().invoke(main, [*args, "--scheduler", "local:2"])
    assert remote.exit_code == 0, remote.output
    assert remote.stdout == local.stdout


def test_bad_scheduler_is_a_clear_error() -> None:
    result = CliRunner().invoke(main, ["compute", EXAMPLES, "-t", "BH", "--scheduler", "local:x", "-q"])
    assert result.exit_code == 3 and "expected local or local:N" in result.output


def _files(root) -> dict[str, object]:  # type: ignore[no-untyped-def]
    import polars as pl

    return {str(p.relative_to(root)): pl.read_parquet(p) for p in sorted(root.rglob("*.parquet"))}


class _Recording:
    """A stand-in for a Dask client that runs each task at once and records what comes back to the driver."""

    def __init__(self) -> None:
        self.back: list[object] = []

    def nthreads(self) -> dict[str, int]:
        return {"w": 1}

    def submit(self, fn, *args, pure: bool = True, priority: int = 0):  # type: ignore[no-untyped-def]
        args = tuple(a.value if isinstance(a, _Done) else a for a in args)
        return _Done(fn(*args), self.back)


class _Done:
    def __init__(self, value: object, back: list[object]) -> None:
        self.value, self.back = value, back

    def result(self) -> object:
        self.back.append(self.value)
        return self.value


def test_ingest_to_a_directory_brings_no_batch_back_to_the_driver(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tbstats.io.tabular import ArchiveWriter

    fake = _Recording()
    with ArchiveWriter(tmp_path / "there") as writer:
        commands.ingest(pipeline.Run(inputs=[EXAMPLES, SAMPLE], batch_size=30, client=fake), writer)
    with ArchiveWriter(tmp_path / "here") as writer:
        commands.ingest(pipeline.Run(inputs=[EXAMPLES, SAMPLE], batch_size=30), writer)
    assert fake.back and not any(_has_batch(v) for v in fake.back)
    assert list(_files(tmp_path / "here")) == list(_files(tmp_path / "there"))


def _has_batch(value: object) -> bool:
    from tbstats.model.batch import Batch

    if isinstance(value, Batch):
        return True
    return isinstance(value, tuple | list) and any(_has_batch(v) for v in value)


class _Failing:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def result(self) -> object:
        raise self.exc


def test_a_cluster_on_another_version_is_a_clear_error() -> None:
    from tbstats.errors import TbstatsError

    stale = RuntimeError("Error during deserialization of the task graph. This frequently occurs if the "
                         "Scheduler and Client have different environments.")
    with pytest.raises(TbstatsError, match="could not load tbstats' task: start them from an environment"):
        pipeline.remote_result(_Failing(stale))
    with pytest.raises(ValueError, match="a bug"):   # anything else is what it is
        pipeline.remote_result(_Failing(ValueError("a bug")))


def test_a_worker_lost_for_good_is_a_clear_error() -> None:
    from distributed import KilledWorker

    from tbstats.errors import TbstatsError

    lost = KilledWorker("work-1", "tcp://127.0.0.1:1", 3)
    with pytest.raises(TbstatsError, match="a Dask worker died while running a part"):
        pipeline.remote_result(_Failing(lost))


def test_compute_to_csv_brings_back_bytes_with_global_ids(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """On Dask each CSV piece is made where its batch is computed, with the ids that come before it counted by
    the chain of small tasks: only bytes come back (no table), and the file is the local one, byte for byte."""
    import shutil

    from tbstats.output import Rendered, TableFile

    specs = "BH/C1,SB,DE"
    shutil.copytree(EXAMPLES, tmp_path / "trf")   # with a file it rejects among them: the ids after it shift
    (tmp_path / "trf" / "c_broken.trf").write_text("012 Broken\n001    1 m    Bad Player                        "
                                                    "2000 ENG          0 2000/01/01  x.0    1     2 w 1\n")
    outputs = {}
    fake = _Recording()
    for name, client in (("there", fake), ("here", None)):
        sink = TableFile("csv", tmp_path / f"{name}.csv")
        run = pipeline.Run(inputs=[str(tmp_path / "trf"), SAMPLE], batch_size=2, batch_files=2, client=client)
        commands.compute(run, specs, sink=sink, rules="fide-2026")
        assert run.rejected == 1
        sink.commit(pl.DataFrame())
        outputs[name] = (tmp_path / f"{name}.csv").read_bytes()
    assert outputs["there"] == outputs["here"] and outputs["here"].count(b"\n") > 100
    pieces = [r for v in fake.back for r in getattr(v, "runs", [])]
    assert pieces and all(isinstance(value.table, Rendered) for _, _, value in pieces)
