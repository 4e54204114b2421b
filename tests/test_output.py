"""CSV text of float columns: printed by polars' writer as numbers where that is the same text as
:func:`tbstats.output.text.plain` gives, made text first where it is not (scientific notation)."""

from __future__ import annotations

import io

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tbstats.output.text import _float_text, plain, render


def _as_text(values: np.ndarray) -> bytes:
    """The CSV bytes of a column of the values each made :func:`plain` text one by one: what must come out."""
    cells = [None if v != v else plain(float(v)) for v in values.tolist()]
    text = pl.DataFrame({"x": pl.Series(cells, dtype=pl.String)}).with_columns(
        pl.when(pl.Series(np.isnan(values))).then(pl.lit("NaN")).otherwise(pl.col("x")).alias("x"))
    sink = io.BytesIO()
    text.write_csv(sink, include_header=False)
    return sink.getvalue()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_csv_floats_print_as_plain_decimals_without_a_text_cast(seed: int) -> None:
    rng = np.random.default_rng(seed)
    exponent = rng.uniform(-3, 15, 20_000)   # polars' non-scientific range
    values = np.concatenate([10 ** exponent * rng.choice([-1, 1], len(exponent)),
                             rng.integers(-400, 400, 5_000) / rng.choice([1, 2, 4, 100], 5_000),
                             [0.0, -0.0, 1e-3, 999999999999999.9, np.inf, -np.inf, np.nan]])
    column = pl.Series("x", values)
    assert _float_text(column, csv=True).dtype == pl.Float64   # kept as numbers
    assert render(column.to_frame(), "csv").body == _as_text(values)


@pytest.mark.parametrize("odd", [1e-7, 2.5e-4, 1e15, 3e20, -1e16])
def test_csv_floats_in_the_scientific_range_are_made_plain_text(odd: float) -> None:
    values = np.array([0.5, odd, 17.25, np.nan])
    column = pl.Series("x", values)
    assert _float_text(column, csv=True).dtype == pl.String
    body = render(column.to_frame(), "csv").body
    assert body == _as_text(values) and b"e" not in body.lower().replace(b"nan", b"")


# ------------------------------------------------------------------- JSON and Markdown made column by column

_TEXT = st.text(alphabet=st.sampled_from(list('ab |"\\\n\r\t\x01\x1f\x7fé€\u2028😀/=-')), max_size=6)
_FLOATS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.5, -0.0, 1e-7, 1e20, 2.25]))


@st.composite
def _tables(draw: st.DrawFn) -> pl.DataFrame:
    """Tables of the column types commands write: integers, floats (any), text, booleans, dates, datetimes,
    lists and enums, nulls among them."""
    import datetime

    n = draw(st.integers(0, 6))
    cells = {
        "i": st.one_of(st.none(), st.integers(-(2**62), 2**62)), "f": st.one_of(st.none(), _FLOATS),
        "s": st.one_of(st.none(), _TEXT), "b": st.one_of(st.none(), st.booleans()),
        "d": st.one_of(st.none(), st.dates(datetime.date(1900, 1, 1), datetime.date(2100, 1, 1))),
        "t": st.one_of(st.none(), st.datetimes(datetime.datetime(1990, 1, 1), datetime.datetime(2030, 1, 1))),
        "l": st.one_of(st.none(), st.lists(st.integers(-5, 5), max_size=3)),
    }
    types: dict[str, pl.DataType] = {"i": pl.Int64(), "f": pl.Float64(), "s": pl.String(), "b": pl.Boolean(),
                                     "d": pl.Date(), "t": pl.Datetime("us"), "l": pl.List(pl.Int64)}
    chosen = draw(st.lists(st.sampled_from(sorted(cells)), min_size=0, max_size=5))
    data = {f"{c}{k}": pl.Series(draw(st.lists(cells[c], min_size=n, max_size=n)), dtype=types[c])
            for k, c in enumerate(chosen)}
    df = pl.DataFrame(data, height=n) if data else pl.DataFrame(height=n)
    if draw(st.booleans()) and n:
        df = df.with_columns(pl.Series("e", ["x", "y|z"] * n, dtype=pl.Enum(["x", "y|z"]))[:n])
    return df


@settings(max_examples=150, deadline=None)
@given(_tables())
def test_json_and_markdown_rows_are_the_cell_by_cell_texts(df: pl.DataFrame) -> None:
    """The rows of a JSON or Markdown piece, made a column at a time, are the texts that :func:`_json` and
    :func:`_md_line` (the plain reference, one cell at a time) make of each row."""
    from tbstats.output.text import _json, _json_lines, _md_line, _md_lines, _text_columns

    assert _json_lines(df) == [_json(row) for row in df.iter_rows(named=True)]
    assert _md_lines(df) == [_md_line(row) for row in _text_columns(df).iter_rows()]
