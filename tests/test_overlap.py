"""With ``--workers 2`` reading overlaps computing: the next part is read while a batch is mapped."""

from __future__ import annotations

import threading
from pathlib import Path

import polars as pl
import pytest
from trf_samples import GOOD

from tbstats import pipeline
from tbstats.games import Batch
from tbstats.io import sources


def test_with_two_workers_the_next_part_is_read_while_a_batch_is_mapped(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    for name in "abc":
        (tmp_path / f"{name}.trf").write_text(GOOD)
    real = sources.read_part
    lock = threading.Lock()
    read: list[str] = []
    second_read = threading.Event()

    def spy(part: sources.Part, batch_size: int = 2000) -> tuple[pl.DataFrame, list[Batch]]:
        with lock:
            read.append(part.items[0].name)
            if len(read) >= 2:
                second_read.set()
        return real(part, batch_size)

    monkeypatch.setattr(sources, "read_part", spy)
    overlapped: list[bool] = []

    def f(batch: Batch) -> int:
        # one worker maps this batch; the other must be reading the next part meanwhile (the wait is a guard
        # against a hang, not a timing: it returns as soon as that read starts)
        overlapped.append(second_read.wait(timeout=60))
        return batch.n_tournaments

    run = pipeline.Run(inputs=[str(tmp_path)], batch_files=1, workers=2)
    assert [m.value for m in run.map(f)] == [1, 1, 1]
    assert overlapped == [True, True, True]
    assert sorted(read) == [str(tmp_path / f"{n}.trf") for n in "abc"]
    assert run.summary() == "3 files: 3 loaded, 0 rejected"
