"""The bucketed engine (tournaments grouped by round count) equals the one padded view of the whole batch.

``make_context`` computes every value per bucket and puts it back in the batch's player order; a context
built from ``build_dense`` (one block padded to the longest event, the engine before buckets) must give
exactly the same values, ranks and elements on batches that mix round counts, whatever the blocks: one per
round count, close round counts sharing one (:func:`tbstats.model.dense.width_groups`), or all in one.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import polars as pl
import pytest
import reference
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from strategies import to_trf, tournaments

from tbstats.engine.compute import make_context, tiebreak_values
from tbstats.engine.standings import rank_steps
from tbstats.engine.tiebreaks import parse_spec, parse_specs
from tbstats.engine.tiebreaks.base import Context
from tbstats.io.trf import read_trf
from tbstats.model import dense as dense_module
from tbstats.model.batch import Batch
from tbstats.model.columns import integers, is_value
from tbstats.model.dense import NO_OPP, Dense, Roster, build_buckets, build_dense, width_groups
from tbstats.model.games import GAME_TYPE, ColourEnum
from tbstats.model.grid import cells, lookup, rounds_below, row_sum

EDITIONS = ["fide-2026", "fide-2024", "fide-legacy", "uscf", "naive"]
SPECS = ["PTS", "WIN", "WON", "BPG", "BWG", "REP", "STD", "TPN", "PS", "PS/C1", "KS", "BH", "BH/C1", "BH/C2",
         "BH/M1", "FB", "FB/C1", "SB", "SB/C1", "SB/M1", "AOB", "AOB/F", "ARO", "ARO/C1", "TPR", "PTP", "APRO",
         "RTNG", "USCF-SOLKOFF", "USCF-MEDIAN", "USCF-MM", "USCF-CUM", "USCF-OPPCUM", "USCF-KASHDAN", "USCF-SB"]
ORDERS = ["BH/C1,BH,SB,DE,WIN", "DE/P,KS,TPN", "USCF-H2H,USCF-MM"]
SETTINGS = settings(suppress_health_check=[HealthCheck.too_slow], max_examples=40, deadline=None)


def _batch(events: list[reference.RefTournament]) -> Batch:
    result = read_trf([(f"t{i}.trf", to_trf(t).encode()) for i, t in enumerate(events)])
    assert result.errors.is_empty(), result.errors
    return result.batch


def _padded(batch: Batch, bucketed: Context, *, blank: bool = True, **kwargs: object) -> Context:
    """A context over the single padded view of the batch, with the same editions; ``blank=False``: its cells
    outside the counted rounds not known to be blank (every mask and the points by ``counted``)."""
    dense = build_dense(batch, **kwargs)  # type: ignore[arg-type]
    assert dense.blank
    dense = dense if blank else replace(dense, blank=False)
    return Context(dense, bucketed.edition_of, unrated_rating=bucketed.unrated_rating)


def _assert_blank(d: Dense) -> None:
    """The view's cells outside its counted rounds are blank, as :attr:`Dense.blank` says."""
    assert d.blank
    outside = ~d.counted
    assert (d.opp[outside] == NO_OPP).all() and (d.pts[outside] == 0).all()
    assert (d.gtype[outside] == GAME_TYPE["absent"]).all()


#: (pad share, small block) of the layouts compared: one block per round count; close ones sharing a block;
#: the default (a test's few players: all in one block)
LAYOUTS = [(0.0, 0), (0.5, 0), (dense_module.PAD_SHARE, dense_module.SMALL_BLOCK)]


@SETTINGS
@given(st.lists(tournaments(max_players=9, max_rounds=7), min_size=2, max_size=6), st.sampled_from(EDITIONS),
       st.sampled_from([None, 2, 4]), st.sampled_from(LAYOUTS))
def test_buckets_equal_the_padded_view(events: list[reference.RefTournament], edition: str,
                                       after_round: int | None, layout: tuple[float, int]) -> None:
    batch = _batch(events)
    kwargs = {} if after_round is None else {"after_round": after_round}
    saved = dense_module.PAD_SHARE, dense_module.SMALL_BLOCK
    dense_module.PAD_SHARE, dense_module.SMALL_BLOCK = layout
    try:
        ctx = make_context(batch, **kwargs)  # type: ignore[arg-type]
        blocks = len(build_buckets(batch, **kwargs).parts)  # type: ignore[arg-type]
    finally:
        dense_module.PAD_SHARE, dense_module.SMALL_BLOCK = saved
    rounds = ctx.roster.n
    assume(len(np.unique(rounds)) > 1)
    widths, players = np.unique(rounds[ctx.roster.tix], return_counts=True)
    assert blocks == len(np.unique(width_groups(widths, players, pad_share=layout[0], small=layout[1])))
    if layout == (0.0, 0):
        assert blocks == len(np.unique(rounds))
    _same_as_padded(batch, ctx, edition, kwargs)


def _same_as_padded(batch: Batch, ctx: Context, edition: str, kwargs: dict[str, int]) -> None:
    flat = _padded(batch, ctx, **kwargs)
    masked = _padded(batch, ctx, blank=False, **kwargs)   # the masks by ``counted``, as if not blank
    for _, part in ctx.parts():
        _assert_blank(part.dense)
    _assert_blank(flat.dense)
    for spec in SPECS:
        a = tiebreak_values(ctx, parse_spec(spec), edition)
        for other in (flat, masked):
            b = tiebreak_values(other, parse_spec(spec), edition)
            assert np.array_equal(a.defined, b.defined), spec
            assert np.array_equal(np.where(a.defined, a.num * b.den, 0), np.where(b.defined, b.num * a.den, 0)), spec
    for order in ORDERS:
        got = rank_steps(ctx, parse_specs(order), edition)
        for other in (flat, masked):
            want = rank_steps(other, parse_specs(order), edition)
            assert all(np.array_equal(x, y) for x, y in zip(got, want, strict=True)), order
    # the merged view of the buckets is the padded view
    merged, padded = ctx.dense, flat.dense
    for name in ("opp", "pts", "gtype", "black", "outcome"):
        counted = padded.counted
        assert np.array_equal(getattr(merged, name)[counted], getattr(padded, name)[counted]), name
    for fore in (False, True):
        x, y = ctx.elements(edition, fore), flat.elements(edition, fore)
        assert np.array_equal(x.oppscore, y.oppscore) and np.array_equal(x.present, y.present)


def test_width_groups() -> None:
    """Close round counts share a block up to the padding allowed; small ones join whatever the padding."""
    widths = np.arange(3, 15)
    many = np.full(len(widths), 10_000)
    assert width_groups(widths, many, pad_share=0.0, small=0).tolist() == list(range(12))
    # 14 pads 10-13 by at most half their cells; 9 is 14 - 5 > 4.5: a block of its own, and so on down
    assert width_groups(widths, many, pad_share=0.5, small=0).tolist() == [0, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3]
    assert width_groups(widths, np.full(len(widths), 10), pad_share=0.0, small=100).tolist() == [0] * 12
    assert width_groups(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)).tolist() == []
    # a batch of events without counted rounds and one-round events: one block (width at least 1)
    assert width_groups(np.array([0, 1]), np.array([10_000, 10_000]), pad_share=0.0, small=0).tolist() == [0, 0]


def test_rounds_below_is_the_comparison_with_each_count() -> None:
    """Counts below 0 and beyond the width included, no players, no rounds: a new writable players x rounds array."""
    rng = np.random.default_rng(6)
    for players, width in ((0, 4), (9, 0), (1, 1), (300, 13)):
        n = rng.integers(-2, width + 3, players)
        got = rounds_below(n, width)
        assert got.shape == (players, width) and got.flags.writeable
        assert np.array_equal(got, np.arange(width)[None, :] < n[:, None])


def test_row_sum_and_cells_match_numpy() -> None:
    rng = np.random.default_rng(5)
    for shape in ((0, 3), (7, 1), (50, 9), (3, 300)):
        mask = rng.random(shape) < 0.3
        values = rng.integers(-40, 40, shape).astype(np.int32)
        assert np.array_equal(row_sum(mask), mask.sum(axis=1))
        assert np.array_equal(row_sum(values), values.sum(axis=1))
        assert np.array_equal(row_sum(values, mask), np.where(mask, values, 0).sum(axis=1))
        assert np.array_equal(row_sum(values.astype(np.int8), mask), np.where(mask, values, 0).sum(axis=1))
        rows, cols = cells(mask)
        want_rows, want_cols = np.nonzero(mask)
        assert np.array_equal(rows, want_rows) and np.array_equal(cols, want_cols)


def test_players_out_of_order_keep_their_rows() -> None:
    """A players table not sorted by (tournament, start number) gives the same table as a sorted one."""
    from unittest import mock

    from tbstats.engine import compute as engine
    from tbstats.engine.compute import compute
    from tbstats.simulation import SimulationConfig, simulate

    batch = simulate(SimulationConfig(tournaments=6, players=9, rounds=5, seed=3)).batch
    shuffled = Batch(batch.tournaments, batch.players.sample(fraction=1.0, shuffle=True, seed=1),
                     batch.games.sample(fraction=1.0, shuffle=True, seed=2))
    specs = "BH/C1,SB,FB,AOB,TPR,DE"
    assert compute(shuffled, specs).equals(compute(batch, specs))
    # runs of whole tournaments on two threads: sliced when the tables are sorted, filtered when not (a batch
    # this small is split only when told that its rows pay for the threads)
    with mock.patch.object(engine, "THREAD_ROWS", 1):
        assert len(engine.chunks(shuffled, 2)) == 2 and len(engine.chunks(batch, 3)) == 3
        assert compute(shuffled, specs, workers=2).equals(compute(batch, specs))
        assert compute(batch, specs, workers=3).equals(compute(batch, specs))
    assert engine.chunks(batch, 3) == [batch]   # (at its own size: one run)
    assert compute(shuffled, specs).select("tournament", "start_no").equals(
        pl.DataFrame(batch.players.sort("tournament", "start_no").select("tournament", "start_no")))


def test_large_batches_are_computed_in_runs(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Runs of at most CHUNK_PLAYERS players (cache-sized arrays) give the table of one run."""
    from tbstats.engine import compute as engine
    from tbstats.simulation import SimulationConfig, simulate

    batch = simulate(SimulationConfig(tournaments=12, players=7, rounds=5, seed=4)).batch
    specs = "BH/C1,SB,FB,AOB,TPR,DE,LOTS"
    whole = engine.compute(batch, specs, rules="auto")
    monkeypatch.setattr(engine, "CHUNK_PLAYERS", 20)
    calls = []
    split = engine.split_batch
    monkeypatch.setattr(engine, "split_batch", lambda b, n: calls.append(n) or split(b, n))
    assert engine.compute(batch, specs, rules="auto").equals(whole)
    assert calls == [5]


@pytest.mark.parametrize("size", [3, 10, 16, 21, 64, 200])
def test_lookup_matches_a_gather(size: int) -> None:
    """``lookup`` (a packed table shifted per cell) equals ``table[codes]`` for bool and int8 tables of any
    range, negative values included, and tables too large to pack."""
    rng = np.random.default_rng(size)
    codes = rng.integers(0, min(size, 128), (300, 7)).astype(np.int8)
    for table in (rng.random(size) > 0.5, rng.integers(0, 4, size).astype(np.int8),
                  rng.integers(-1, 6, size).astype(np.int8), rng.integers(-128, 128, size).astype(np.int8)):
        got = lookup(table, codes)
        assert got.dtype == table.dtype and got.shape == codes.shape
        assert np.array_equal(got, table[codes])


def test_is_value_matches_polars_comparison() -> None:
    """Whether each value of an Enum or String column is a given one (null: no), from the Enum's codes, equals
    polars' own comparison; a value outside the Enum's categories is nowhere."""
    rng = np.random.default_rng(11)
    kinds = pl.Enum(["swiss", "round_robin", "team", "unknown"])
    column = pl.Series(rng.choice(["swiss", "round_robin", "team", None], 700).tolist(), dtype=kinds)
    for series in (column, column.drop_nulls(), column.cast(pl.String), column.slice(5, 300)):
        for value in ("round_robin", "swiss", "unknown", "knockout"):
            want = (series.cast(pl.String) == value).fill_null(False).to_numpy()
            got = is_value(series, value)
            assert got.dtype == np.bool_ and np.array_equal(got, want), (series.dtype, value)


def _chunked(series: pl.Series, rng: np.random.Generator) -> pl.Series:
    """``series`` as a column of several chunks (some sliced, one empty), as a model read from many files is."""
    cuts = np.sort(rng.choice(np.arange(1, len(series)), 5, replace=False)).tolist()
    pieces = [series.slice(a, b - a) for a, b in zip([0, *cuts], [*cuts, len(series)], strict=True)]
    out = pl.concat([pieces[0], series.clear(), *pieces[1:]], rechunk=False)
    assert out.n_chunks() >= 5
    return out


def test_columns_of_many_chunks_read_as_one() -> None:
    """Integer and Enum columns of many chunks (with nulls, sliced chunks, an empty one), as a model read from many
    files has, give :func:`integers` the same arrays (nulls as the fill) as the column joined into one chunk."""
    rng = np.random.default_rng(5)
    ints = pl.Series("x", rng.integers(-300, 300, 2000).tolist(), dtype=pl.Int16)
    with_nulls = ints.clone().scatter(rng.choice(2000, 300, replace=False), None)   # (scatter works in place)
    codes = pl.Series("c", rng.choice(["w", "b", None], 2000).tolist(), dtype=ColourEnum)
    for column, dtype, fill in ((ints, np.int32, 0), (with_nulls, np.int64, 7), (with_nulls, np.int8, 0),
                                (codes, np.int8, 3), (codes.slice(11, 1500), np.uint8, 0)):
        chunked = _chunked(column, rng)
        physical = column.to_physical().cast(pl.Int64).fill_null(fill).to_numpy().astype(dtype)
        for series in (column, chunked, chunked.slice(3, len(chunked) - 3)):
            want = physical[:len(series)] if series.len() == column.len() else physical[3:]
            got = integers(series, dtype, fill=fill)
            assert got.dtype == dtype and np.array_equal(got, want), (column.dtype, dtype, fill)
    with pytest.raises(TypeError, match="not integers"):
        integers(_chunked(pl.Series("s", ["a"] * 50), rng), np.int32)
    with pytest.raises(TypeError, match="not integers"):
        integers(pl.Series("s", [], dtype=pl.String), np.int32)


@pytest.mark.parametrize("per_tournament", [[2, 2, 2], [2, 4, 2], [True, True, True], [False, True, False], [7]])
def test_per_player_is_the_gather_by_tournament(per_tournament: list[int]) -> None:
    """A per-tournament array broadcast to players: one value everywhere is filled in, others gathered; the
    same either way, in the array's type, and a new array each time."""
    T = len(per_tournament)
    tix = np.sort(np.random.default_rng(T).integers(0, T, 12))
    roster = Roster(t_ids=np.arange(T), n=np.zeros(T), planned=np.zeros(T), W=np.zeros(T), D=np.zeros(T),
                    scale=np.ones(T), round_robin=np.zeros(T, dtype=bool), tix=tix, start_no=np.arange(len(tix)),
                    rating=np.zeros(len(tix)))
    values = np.array(per_tournament)
    got = roster.per_player(values)
    assert got.dtype == values.dtype and got.tolist() == values[tix].tolist()
    assert got is not roster.per_player(values)


def test_the_roster_counts_the_players_of_every_tournament_empty_ones_too() -> None:
    """``Roster.sizes``: the players per tournament, 0 for a tournament without any, the same whether
    :func:`build_buckets` left it or the roster counts it; it gives the first rows of :func:`tournament_first`."""
    from tbstats.engine.standings import tournament_first
    from tbstats.simulation import SimulationConfig, simulate

    roster = Roster(t_ids=np.arange(5), n=np.zeros(5), planned=np.zeros(5), W=np.zeros(5), D=np.zeros(5),
                    scale=np.ones(5), round_robin=np.zeros(5, dtype=bool), tix=np.array([0, 0, 2, 2, 2, 3]),
                    start_no=np.arange(6), rating=np.zeros(6))
    assert roster.sizes.tolist() == [2, 0, 3, 1, 0]
    assert ((np.cumsum(roster.sizes) - roster.sizes)[roster.tix]).tolist() == tournament_first(roster.tix).tolist()
    batch = simulate(SimulationConfig(tournaments=7, players=6, rounds=3, seed=2)).batch
    built = build_buckets(batch).roster
    assert built.sizes.tolist() == np.bincount(built.tix, minlength=7).tolist() == [6] * 7
