"""Dask: a LocalCluster of two worker processes gives the local tables, row for row."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from helpers import ROOT

from tbstats import pipeline, runs
from tbstats.cli import main
from tbstats.compare import parse_config
from tbstats.tiebreaks import parse_specs

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
    table, _, _ = runs.compute(local, specs)
    assert table.height > 4000
    assert runs.compute(remote, specs)[0].equals(table)
    assert len({w for w in client.nthreads()}) == 2
    here = runs.compare(pipeline.Run(inputs=[EXAMPLES, SAMPLE], batch_size=30), configs)
    there = runs.compare(pipeline.Run(inputs=[EXAMPLES, SAMPLE], batch_size=30, client=client), configs)
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
