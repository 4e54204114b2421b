"""Dask: a LocalCluster of two worker processes gives the local tables, row for row."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from helpers import ROOT

from tbstats.cli import main
from tbstats.engine.configs import parse_config
from tbstats.engine.tiebreaks import parse_specs
from tbstats.run import commands, pipeline

SAMPLE = str(ROOT / "data" / "sample_archive.parquet")
EXAMPLES = str(ROOT / "data" / "examples")


@pytest.fixture(scope="module")
def client():  # type: ignore[no-untyped-def]
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  silence_logs=50) as cluster, distributed.Client(cluster) as c:
        yield c


def test_compute_and_compare_on_two_worker_processes(client) -> None:  # type: ignore[no-untyped-def]
    specs = parse_specs("BH/C1,BH,SB,DE,WIN")
    configs = [parse_config("a=fide-2024:BH/C1,BH,SB"), parse_config("b=fide-2026:BH/C1,BH,SB"),
               parse_config("c=auto:from-file")]
    local = pipeline.Run(inputs=[EXAMPLES, SAMPLE], batch_size=30)
    remote = pipeline.Run(inputs=[EXAMPLES, SAMPLE], batch_size=30, client=client)
    table, _, _ = commands.compute(local, specs)
    assert table.height > 4000
    assert commands.compute(remote, specs)[0].equals(table)
    assert len({w for w in client.nthreads()}) == 2
    here = commands.compare(pipeline.Run(inputs=[EXAMPLES, SAMPLE], batch_size=30), configs)
    there = commands.compare(pipeline.Run(inputs=[EXAMPLES, SAMPLE], batch_size=30, client=client), configs)
    for name in ("pairs", "configs", "tournaments", "drilldown", "depth"):
        assert getattr(there, name).equals(getattr(here, name)), name


def test_cli_scheduler_address_matches_the_local_run(client) -> None:  # type: ignore[no-untyped-def]
    args = ["compute", EXAMPLES, SAMPLE, "-t", "BH,SB", "--batch-size", "50", "-q"]
    local = CliRunner().invoke(main, args)
    remote = CliRunner().invoke(main, [*args, "--scheduler", client.scheduler.address])
    assert remote.exit_code == 0, remote.output
    assert remote.stdout == local.stdout


def test_bad_scheduler_is_a_clear_error() -> None:
    result = CliRunner().invoke(main, ["compute", EXAMPLES, "-t", "BH", "--scheduler", "local:x", "-q"])
    assert result.exit_code == 3 and "expected local or local:N" in result.output


def _files(root) -> dict[str, object]:  # type: ignore[no-untyped-def]
    import polars as pl

    return {str(p.relative_to(root)): pl.read_parquet(p) for p in sorted(root.rglob("*.parquet"))}


def test_ingest_on_two_worker_processes_writes_the_local_parts(client, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tbstats.io.tabular import ArchiveWriter

    for where, c in (("here", None), ("there", client)):
        with ArchiveWriter(tmp_path / where) as writer:
            commands.ingest(pipeline.Run(inputs=[EXAMPLES, SAMPLE], batch_size=30, client=c), writer)
    here, there = _files(tmp_path / "here"), _files(tmp_path / "there")
    assert len(here) > 8 and list(here) == list(there)
    assert all(there[name].equals(frame) for name, frame in here.items())  # type: ignore[attr-defined]


class _Recording:
    """A stand-in for a Dask client that runs each task at once and records what comes back to the driver."""

    def __init__(self) -> None:
        self.back: list[object] = []

    def nthreads(self) -> dict[str, int]:
        return {"w": 1}

    def submit(self, fn, *args, pure: bool = True):  # type: ignore[no-untyped-def]
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
    from tbstats.model.games import Batch

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


def test_evaluate_on_two_worker_processes_matches_the_local_run(client) -> None:  # type: ignore[no-untyped-def]
    for table in ("measures", "favour"):
        args = ["evaluate", EXAMPLES, SAMPLE, "--strength", "rating", "--batch-size", "20", "--table", table, "-q"]
        local = CliRunner().invoke(main, args)
        remote = CliRunner().invoke(main, [*args, "--scheduler", client.scheduler.address])
        assert remote.exit_code == 0, remote.output
        assert remote.stdout == local.stdout and len(local.stdout.splitlines()) > 3
