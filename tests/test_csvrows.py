"""Where the lines of a CSV file start (tbstats/io/csvrows.pyx), against polars' own reading of the file."""

from __future__ import annotations

import io
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tbstats.io import csvrows

#: Cells as writers leave them: commas, quotes, line breaks (LF and CRLF) and empty cells among plain text.
CELLS = st.one_of(st.none(), st.text(alphabet=st.sampled_from(list('ab ,"\n\r\'x1')), max_size=8))


def _rows_from(data: bytes, header: int, starts: list[int]) -> list[tuple[object, ...]]:
    """The first row that polars reads from each offset of ``data``, after the header's ``header`` bytes."""
    return [pl.read_csv(data[:header] + data[at:], infer_schema=False, n_rows=1).row(0) for at in starts]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(CELLS, CELLS), min_size=1, max_size=12), st.booleans())
def test_every_line_starts_where_polars_reads_its_row(tmp_path_factory: pytest.TempPathFactory,
                                                       rows: list[tuple[str | None, str | None]],
                                                       trailing: bool) -> None:
    path = tmp_path_factory.mktemp("csv") / "t.csv"
    frame = pl.DataFrame(rows, schema={"a": pl.String, "b": pl.String}, orient="row")
    buffer = io.BytesIO()
    frame.write_csv(buffer)
    data = buffer.getvalue() if trailing else buffer.getvalue().rstrip(b"\n")
    path.write_bytes(data)
    n = len(rows)
    starts = csvrows.line_starts(str(path), list(range(n + 2))).tolist()
    assert starts[0] == 0 and starts[n + 1] == len(data)   # the header at 0; past the last line, the end
    whole = pl.read_csv(data, infer_schema=False)
    assert whole.height == n
    assert _rows_from(data, starts[1], starts[1:n + 1]) == whole.rows()
    assert starts[n] < len(data) and starts == sorted(starts)


def test_lines_of_a_file_larger_than_a_chunk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The scan carries its state over the chunks it reads: a quoted line break at a chunk's edge stays inside
    its field."""
    monkeypatch.setattr(csvrows, "CHUNK", 7)   # (a module constant read at each call)
    data = b'a,b\n1,"x\ny"\n2,"p,""q""\n"\n\n3,z\n'
    path = tmp_path / "t.csv"
    path.write_bytes(data)
    starts = csvrows.line_starts(str(path), [0, 1, 2, 3, 4, 5, 6]).tolist()
    assert starts == [0, 4, 12, 25, 26, 30, 30]
    assert _rows_from(data, starts[1], starts[1:5]) == pl.read_csv(data, infer_schema=False).rows()


def _runs_read(path: Path, by_bytes: bool, monkeypatch: pytest.MonkeyPatch) -> object:
    """Every run of a CSV file read in turn (the plan's runs of 2 tournaments), by the bytes the plan found or,
    without ``by_bytes``, by the reader skipping the rows before each run: the batches, or the error raised."""
    from tbstats.io import csvruns, parts

    with monkeypatch.context() as patch:
        if not by_bytes:
            patch.setattr(csvruns, "row_starts", lambda runs: {})
        try:
            runs = parts.plan_model(str(path), "m", 2)
            if runs is None:
                return "read whole"
            return [tuple(getattr(parts.read_part(r), t) for t in ("tournaments", "players", "games")) for r in runs]
        except Exception as exc:   # (compared as it is: type and text)
            return f"{type(exc).__name__}: {exc}"


@pytest.mark.parametrize("seed", range(2))
def test_damaged_csv_files_read_by_bytes_as_by_skipping(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       seed: int) -> None:
    """Byte damage (a quote, a line break, a comma put in, a byte taken out, a line doubled) anywhere in a flat
    CSV file: its runs read by the bytes the plan found give what they gave when each run skipped the rows before
    it, batch for batch, or the same error."""
    import random

    from trf_samples import GOOD

    from tbstats.io.tabular import write_model
    from tbstats.io.trf import read_trf

    batch = read_trf([(f"e{k}.trf", GOOD.encode()) for k in range(6)]).batch
    clean = tmp_path / "clean.csv"
    write_model(batch, clean)
    data = clean.read_bytes()
    rng = random.Random(seed)
    for k in range(20):
        at = rng.randrange(len(data))
        kind = rng.choice(["quote", "newline", "comma", "drop", "double"])
        if kind == "drop":
            damaged = data[:at] + data[at + 1:]
        elif kind == "double":
            start = data.rfind(b"\n", 0, at) + 1
            end = data.find(b"\n", at) + 1 or len(data)
            damaged = data[:end] + data[start:end] + data[end:]
        else:
            damaged = data[:at] + {"quote": b'"', "newline": b"\n", "comma": b","}[kind] + data[at:]
        path = tmp_path / f"m{k}.csv"
        path.write_bytes(damaged)
        skipped, by_bytes = _runs_read(path, False, monkeypatch), _runs_read(path, True, monkeypatch)
        if isinstance(skipped, list) and isinstance(by_bytes, list):
            assert len(skipped) == len(by_bytes), (kind, at)
            for a, b in zip(skipped, by_bytes, strict=True):
                for x, y in zip(a, b, strict=True):
                    assert x.equals(y), (kind, at)
        else:
            assert skipped == by_bytes, (kind, at)


def test_the_first_row_with_fields_too_many(tmp_path: Path) -> None:
    """Separators inside quoted fields (line breaks too) are text; the first longer row is named, 0 the header."""
    path = tmp_path / "t.csv"
    path.write_bytes(b'a,b,c\n1,"x,\ny",2\n3,4,5,6\n7,8,9,10,11\n')
    assert csvrows.first_long_row(str(path), 3) == (2, 4)
    assert csvrows.first_long_row(str(path), 5) is None
    path.write_bytes(b'a,b\n1,2\n3,"4,5",6')   # (the last row without its line break)
    assert csvrows.first_long_row(str(path), 2) == (2, 3)
