"""CSV text of float columns: printed by polars' writer as numbers where that is the same text as
:func:`tbstats.output.text.plain` gives, made text first where it is not (scientific notation)."""

from __future__ import annotations

import io

import numpy as np
import polars as pl
import pytest

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
