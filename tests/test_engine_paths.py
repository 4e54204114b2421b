"""The engine's short cuts give what the general code gives.

- the games table in any order of its rows gives the same dense view (the games are placed in runs of one
  tournament's rows: one run per tournament when sorted, many when not);
- one cut of the lowest or highest contribution is a row minimum or maximum (the VUR first, 16.5), not a
  masked pass per cut: the sums and counts equal those left by :func:`cut_elements` on every row;
- opponents' values in games come from one gather through a padded index: equal to the masked gather;
- the allocator tuning is done once, and ``TBSTATS_MALLOC=system`` leaves the allocator alone;
- a batch's runs are slices of whole tournaments (searched chunk by chunk);
- each tournament's edition for 'auto' found for all start dates at once is the one of its date alone.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import reference
from helpers import cut_elements
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import swiss_events, to_trf

from tbstats.engine.tiebreaks.base import cut_sum
from tbstats.io.trf import read_trf
from tbstats.model.batch import Batch
from tbstats.model.dense import NO_OPP, Dense, build_buckets
from tbstats.model.grid import lookup, row_sum
from tbstats.run.memory import keep_freed_memory

SETTINGS = settings(suppress_health_check=[HealthCheck.too_slow], max_examples=30, deadline=None)
ARRAYS = ("opp", "pts", "gtype", "black", "outcome", "counted", "tix", "start_no", "rating")


def _views(batch: Batch) -> list[Dense]:
    return [b.dense for b in build_buckets(batch).parts]


@SETTINGS
@given(st.integers(1, 7).flatmap(lambda r: st.lists(swiss_events(max_players=8, max_rounds=r), min_size=1,
                                                     max_size=4)), st.integers(0, 2 ** 16))
def test_games_in_any_order_give_the_same_view(events: list[reference.RefTournament], seed: int) -> None:
    result = read_trf([(f"t{i}.trf", to_trf(t).encode()) for i, t in enumerate(events)])
    assert result.errors.is_empty(), result.errors
    batch = result.batch
    shuffled = Batch(batch.tournaments, batch.players, batch.games.sample(fraction=1.0, shuffle=True, seed=seed))
    for fast, general in zip(_views(batch), _views(shuffled), strict=True):
        for name in ARRAYS:
            assert np.array_equal(getattr(fast, name), getattr(general, name)), name


def test_tournaments_in_another_order_give_the_same_view() -> None:
    """The games of a complete single-bucket archive, its second and third tournaments' blocks swapped: the
    runs of one tournament's rows come in another order, the view is the same."""
    from tbstats.simulation import SimulationConfig, simulate

    batch = simulate(SimulationConfig(tournaments=3, players=6, rounds=4, seed=9)).batch
    g, p = batch.games, batch.players
    block = g.height // 3
    moved = pl.concat([g[:block], g[2 * block:], g[block:2 * block]])
    assert not moved["tournament"].is_sorted()
    for fast, general in zip(_views(batch), _views(Batch(batch.tournaments, p, moved)), strict=True):
        for name in ARRAYS:
            assert np.array_equal(getattr(fast, name), getattr(general, name)), name


@given(st.integers(0, 2 ** 32 - 1), st.sampled_from([(0, 0), (1, 0), (0, 1), (1, 1), (2, 0), (0, 2)]),
       st.booleans(), st.sampled_from([np.int32, np.int64]))
@SETTINGS
def test_cut_sums_equal_the_cut_mask(seed: int, cuts: tuple[int, int], by_oppscore: bool, dtype: type) -> None:
    rng = np.random.default_rng(seed)
    P, R = int(rng.integers(1, 40)), int(rng.integers(1, 10))
    present = rng.random((P, R)) < 0.8
    vur = present & (rng.random((P, R)) < 0.2)
    oppscore: np.ndarray = rng.integers(0, 6, (P, R)).astype(dtype)   # few values: many ties
    contribution: np.ndarray = oppscore * rng.integers(0, 3, (P, R)).astype(dtype) if by_oppscore else oppscore
    low, high = cuts
    keep = cut_elements(present, contribution, oppscore, vur, low, high, by_oppscore)
    total, count = cut_sum(present, contribution, oppscore, vur, low, high, by_oppscore)
    assert np.array_equal(total, row_sum(contribution, keep))
    assert np.array_equal(count, row_sum(keep))


def test_opponents_values_through_the_padded_index() -> None:
    from tbstats.simulation import SimulationConfig, simulate

    d = _views(simulate(SimulationConfig(tournaments=4, players=7, rounds=5, seed=2)).batch)[0]
    values = np.arange(d.players, dtype=np.int64) * 3 + 1
    assert np.array_equal(d.through(values), np.where(d.played, values[d.opp_row], 0))
    assert np.array_equal(d.through(values, -7, scheduled=True), np.where(d.opp != NO_OPP, values[d.opp_row], -7))
    flags = values % 2 == 0
    assert np.array_equal(d.through(flags, False), d.played & flags[d.opp_row])


def test_allocator_tuning_is_done_once_and_can_be_left_out() -> None:
    tuned = keep_freed_memory()
    assert keep_freed_memory() is tuned
    try:
        glibc = sys.platform.startswith("linux") and (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")
    except (ValueError, OSError):
        glibc = False
    assert tuned == (glibc and os.environ.get("TBSTATS_MALLOC", "") != "system")
    code = "import tbstats.run.memory as m; print(m.keep_freed_memory())"
    env = {**os.environ, "TBSTATS_MALLOC": "system"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    # a library leaves its host's allocator alone: importing tbstats (and computing) tunes nothing
    code = ("import tbstats, tbstats.run.memory as m; tbstats.compute(tbstats.simulate(tournaments=1).batch, 'BH'); "
            "print(m._tuned)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "None"


RELEASE = """
import numpy as np, tbstats.run.memory as m
def rss():
    return next(int(line.split()[1]) // 1024 for line in open("/proc/self/status") if line.startswith("VmRSS"))
untouched = m.release_freed_memory()                   # a library does not touch its host's allocator
m.keep_freed_memory()
blocks = [np.ones(1 << 20) for _ in range(60)]         # 60 blocks of 8 MB, from the heap (below 32 MB)
del blocks
kept = rss()
released = m.release_freed_memory()
print(untouched, released, kept - rss())
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the resident size from /proc")
def test_freed_memory_kept_by_the_tuning_can_be_released() -> None:
    """The freed heap the tuning keeps (up to 512 MB) goes back to the system on request (before a step whose
    memory comes from other allocators: ``simulate --archive`` writing its file)."""
    out = subprocess.run([sys.executable, "-c", RELEASE], capture_output=True, text=True, check=True)
    untouched, released, dropped = out.stdout.split()
    assert untouched == "False"
    if keep_freed_memory():   # glibc
        assert released == "True" and int(dropped) > 300, out.stdout   # of the 480 MB freed and kept
    else:
        assert released == "False"


HUGE_HEAP = r"""
import re, tbstats.run.memory as m
def rss():
    return next(int(line.split()[1]) // 1024 for line in open("/proc/self/status") if line.startswith("VmRSS"))
before = rss()
tuned = m.keep_freed_memory()
grown = rss() - before
advised, mapping = 0, None   # MB of heap that asks for huge pages ("hg" among its mapping's flags)
for line in open("/proc/self/smaps"):
    if re.match(r"[0-9a-f]+-[0-9a-f]+ ", line):
        mapping = line.split()
    elif line.startswith("VmFlags:") and mapping[-1] == "[heap]" and "hg" in line.split():
        lo, hi = (int(x, 16) for x in mapping[0].split("-"))
        advised += (hi - lo) >> 20
print(tuned, m._huge_pages_on_request(), advised, grown)
"""


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="reads the process's mappings from /proc")
def test_the_tuned_heap_asks_for_huge_pages_where_the_system_gives_them_on_request() -> None:
    """Where transparent huge pages come on request (mode "madvise"), the tuning reserves 256 MB of heap and
    advises them there, touching none of it; elsewhere, or untuned, no heap asks for them."""
    for env, tuning in (({}, True), ({"TBSTATS_MALLOC": "system"}, False)):
        out = subprocess.run([sys.executable, "-c", HUGE_HEAP], env={**os.environ, **env}, capture_output=True,
                             text=True, check=True)
        tuned, on_request, advised, grown = out.stdout.split()
        assert tuned == str(tuning and keep_freed_memory())
        if tuned == "True" and on_request == "True":
            assert int(advised) >= 128, out.stdout   # (254 MB: the reserve, cut to whole 2 MB pages)
        else:
            assert int(advised) == 0, out.stdout
        assert int(grown) < 32, out.stdout           # reserved, not touched (its blocks' headers only)


ARROW_POOL = """
import sys, tbstats.run.memory as m
if sys.argv[1] == "before":
    import pyarrow as pa
m.keep_freed_memory()
import pyarrow as pa
print(pa.default_memory_pool().backend_name)
"""


def test_the_tuning_puts_arrows_buffers_on_the_tuned_heap() -> None:
    """Tuned, Arrow allocates through the system allocator (the tuned heap), whether pyarrow was imported before
    or after; an explicit ``ARROW_DEFAULT_MEMORY_POOL`` is kept, and untuned nothing changes."""
    clean = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    for env, when, expected in (({}, "after", "system"), ({}, "before", "system"),
                                ({"ARROW_DEFAULT_MEMORY_POOL": "jemalloc"}, "after", "jemalloc"),
                                ({"TBSTATS_MALLOC": "system"}, "after", None)):
        out = subprocess.run([sys.executable, "-c", ARROW_POOL, when], env={**clean, **env}, capture_output=True,
                             text=True, check=True).stdout.strip()
        if not keep_freed_memory():   # not glibc: never tuned
            expected = None
        if expected is None:   # pyarrow's own default, whatever this build has
            base = subprocess.run([sys.executable, "-c", "import pyarrow as pa; print(pa.default_memory_pool()"
                                   ".backend_name)"], env=clean, capture_output=True, text=True, check=True)
            expected = base.stdout.strip()
        if expected == "jemalloc" and out != "jemalloc":   # (a build without jemalloc falls back to its default)
            continue
        assert out == expected, (env, when, out)


def test_row_sums_of_large_values_equal_int64_sums() -> None:
    """Sums accumulate in int64 whatever the cells' dtype: rows of int32 values near their limit do not wrap."""
    rng = np.random.default_rng(8)
    for dtype, bound in ((np.int8, 100), (np.int32, 2 ** 27), (np.int32, 2 ** 31 - 1), (np.int64, 5)):
        values = rng.integers(-bound, bound + 1, (40, 9)).astype(dtype)
        mask = rng.random((40, 9)) < 0.5
        want = np.where(mask, values.astype(np.int64), 0).sum(axis=1)
        assert np.array_equal(row_sum(values, mask), want)
        assert np.array_equal(row_sum(values), values.astype(np.int64).sum(axis=1))
        assert row_sum(values, mask).dtype == np.int64


def test_lookup_equals_the_gather() -> None:
    rng = np.random.default_rng(4)
    codes = rng.integers(0, 10, (25, 9)).astype(np.int8)
    for table in (np.array([3, -1, 0, 5, 2, 2, -7, 1, 0, 4], dtype=np.int8), rng.random(10) < 0.5):
        assert np.array_equal(lookup(table, codes), table[codes])
        assert np.array_equal(lookup(table, codes[:, ::2]), table[codes[:, ::2]])


def test_score_changes_are_placed_alike_on_both_paths() -> None:
    """299 records (a bonus, and a penalty from round 2) land in the same cells whether the games table is in
    order (one run of rows per tournament) or not."""
    from helpers import ROOT

    from tbstats.engine.compute import compute

    text = (ROOT / "data" / "examples" / "e2_cut_exception.trf").read_text().rstrip("\n")
    text += "\n299       1.5           4\n299      -0.5     2     2\n"
    batch = read_trf([("e2.trf", text.encode())]).batch
    shuffled = Batch(batch.tournaments, batch.players, batch.games.sample(fraction=1.0, shuffle=True, seed=3))
    fast, general = _views(batch), _views(shuffled)
    assert all(v.bonus is not None for v in fast + general)
    for a, b in zip(fast, general, strict=True):
        assert np.array_equal(a.bonus, b.bonus)  # type: ignore[arg-type]
    assert compute(batch, "BH,SB").equals(compute(shuffled, "BH,SB"))


def test_per_game_counts_runs_in_tournament_order_and_rows_otherwise() -> None:
    """Each games row's tournament row, whether the rows are in tournament order (counted per tournament) or
    not (searched); tournaments without games and ids with gaps included."""
    import polars as pl

    from tbstats.model.columns import PerGame

    t_ids = np.array([3, 4, 7, 8, 10])
    games = np.array([3, 3, 4, 8, 8, 8, 10])          # tournament 7 has no games
    in_order = PerGame(pl.Series(games), t_ids)
    assert in_order.counts is not None
    rng = np.random.default_rng(0)
    shuffled = rng.permutation(games)
    other = PerGame(pl.Series(shuffled), t_ids)
    assert other.counts is None
    for stray in ([3, 5, 5], [3, 3, 11], [1, 3]):   # sorted, with an id that is none of the tournaments'
        assert PerGame(pl.Series(np.array(stray)), t_ids).counts is None
    assert in_order.counts.tolist() == [2, 1, 0, 3, 1]
    # a column of several chunks, one tournament's rows cut between two of them
    chunked = pl.concat([pl.Series(games[:4]), pl.Series(games[4:])], rechunk=False)
    assert chunked.n_chunks() == 2
    assert PerGame(chunked, t_ids).counts.tolist() == [2, 1, 0, 3, 1]  # type: ignore[union-attr]
    for _ in range(200):   # sorted columns cut into chunks anywhere, some with a stray id (then no counts)
        ids = np.unique(rng.integers(0, 40, rng.integers(1, 12)))
        rows = np.sort(rng.choice(ids, rng.integers(0, 30)))
        if rng.random() < 0.4:
            rows = np.sort(np.append(rows, rng.integers(-2, 43)))
        cuts = np.sort(rng.integers(0, len(rows) + 1, rng.integers(0, 3)))
        column = pl.concat([pl.Series(part, dtype=pl.Int64) for part in np.split(rows, cuts)], rechunk=False)
        stray = not np.isin(rows, ids).all()
        got = PerGame(column, ids)
        if stray:
            assert got.counts is None
        else:
            assert got.counts is not None and got.counts.tolist() == [int((rows == i).sum()) for i in ids]
        if not stray:
            assert got.rows.tolist() == np.searchsorted(ids, rows).tolist()
    row_of = {3: 0, 4: 1, 7: 2, 8: 3, 10: 4}
    assert in_order.rows.tolist() == [row_of[t] for t in games]
    assert other.rows.tolist() == [row_of[t] for t in shuffled]


def test_a_batch_flags_its_tournament_columns_sorted_only_when_they_are() -> None:
    """:class:`Batch` checks each table's tournament column once: sorted columns are flagged (the runs then read
    the flag), others are not, and a table with a null tournament is never flagged."""
    from tbstats.model.batch import flag_sorted
    from tbstats.simulation import SimulationConfig, simulate

    batch = simulate(SimulationConfig(tournaments=6, players=7, rounds=3, seed=5)).batch
    plain = [df.with_columns(pl.Series("tournament", df["tournament"].to_list(), dtype=pl.Int64))   # (no flag)
             for df in (batch.tournaments, batch.players, batch.games)]
    assert not any(df["tournament"].flags["SORTED_ASC"] for df in plain)
    flagged = Batch(*plain)
    assert all(getattr(flagged, t)["tournament"].flags["SORTED_ASC"] for t in ("tournaments", "players", "games"))
    assert all(df["tournament"].flags["SORTED_ASC"] is False for df in plain)   # (the caller's frames untouched)
    games = plain[2].sample(fraction=1.0, shuffle=True, seed=3)
    assert not games["tournament"].is_sorted()
    assert not Batch(plain[0], plain[1], games).games["tournament"].flags["SORTED_ASC"]
    with_null = plain[2].with_columns(pl.when(pl.int_range(pl.len()) == 0).then(None)
                                      .otherwise(pl.col("tournament")).alias("tournament"))
    assert not flag_sorted(with_null.clone())["tournament"].flags["SORTED_ASC"]


def test_runs_of_events_of_every_size_hold_about_equal_shares_of_the_players() -> None:
    """``split_batch`` of sorted tables cuts at a share of the players, moved back to the start of the event it
    falls in: every run is whole events, and none holds more than its share plus one event's players. A batch of
    one huge event and small ones gives fewer runs, none empty."""
    from tbstats.engine.compute import split_batch
    from tbstats.simulation import SimulationConfig, simulate

    parts = [simulate(SimulationConfig(tournaments=1, players=n, rounds=3, seed=n)).batch
             for n in (4, 40, 9, 120, 6, 6, 33, 8, 70, 5)]
    whole = Batch.concat(parts)
    sizes = whole.players.group_by("tournament").len()["len"]
    for n in (2, 3, 4, 7):
        runs = split_batch(whole, n)
        assert pl.concat([r.players for r in runs]).equals(whole.players)
        assert all(r.players.height for r in runs)
        assert max(r.players.height for r in runs) <= whole.players.height / n + sizes.max()
        for r in runs:
            assert set(r.games["tournament"].to_list()) == set(r.tournaments["tournament"].to_list())


@pytest.mark.parametrize("parts", [2, 3, 5])
def test_runs_are_slices_of_whole_tournaments_with_their_warnings(parts: int) -> None:
    """``split_batch`` of sorted tables (a games column of many chunks, searched chunk by chunk): each run
    holds whole tournaments, the same ones in every table, with the warnings of its sources, every row once
    and in order; its tournament columns are flagged sorted. Unsorted tables give the same runs, filtered."""
    from tbstats.engine.compute import split_batch
    from tbstats.model.columns import SortedChunks
    from tbstats.model.games import WARNING_SCHEMA
    from tbstats.simulation import SimulationConfig, simulate

    batch = simulate(SimulationConfig(tournaments=23, players=9, rounds=5, seed=11)).batch
    g = batch.games
    many = pl.concat([g.slice(lo, 37) for lo in range(0, g.height, 37)], rechunk=False)
    assert many["tournament"].n_chunks() > 10
    sources = batch.tournaments["source"].to_list()
    warnings = pl.DataFrame({"source": sources[::4], "line": list(range(len(sources[::4]))),
                             "field": "x", "message": "m"}, schema=WARNING_SCHEMA)
    whole = Batch(batch.tournaments, batch.players, many, warnings)
    runs = split_batch(whole, parts)
    assert len(runs) == parts
    for name in ("tournaments", "players", "games", "warnings"):
        assert pl.concat([getattr(r, name) for r in runs]).equals(getattr(whole, name)), name
    for run in runs:
        ids = set(run.tournaments["tournament"].to_list())
        assert set(run.players["tournament"].to_list()) == ids == set(run.games["tournament"].to_list())
        assert set(run.warnings["source"].to_list()) <= set(run.tournaments["source"].to_list())
        assert all(run_table["tournament"].flags["SORTED_ASC"] for run_table in (run.tournaments, run.games))
    shuffled = Batch(whole.tournaments, whole.players, many.sample(fraction=1.0, shuffle=True, seed=1), warnings)
    for a, b in zip(split_batch(shuffled, parts), runs, strict=True):
        assert a.tournaments.equals(b.tournaments) and a.warnings.equals(b.warnings)
        assert a.games.sort("tournament", "player", "round").equals(b.games.sort("tournament", "player", "round"))
    column = many["tournament"]
    values = column.to_numpy()
    search = SortedChunks(column)
    for value in range(int(values.min()) - 2, int(values.max()) + 3):
        for side in ("left", "right"):
            assert search.search(value, side) == int(np.searchsorted(values, value, side)), (value, side)
    wanted = np.arange(int(values.min()) - 2, int(values.max()) + 3)
    for side in ("left", "right"):
        assert search.search_all(wanted, side).tolist() == np.searchsorted(values, wanted, side).tolist(), side
    assert [search.value(r) for r in range(len(values))] == values.tolist()
    assert SortedChunks.of(many.sample(fraction=1.0, shuffle=True, seed=1)["tournament"]) is None


def test_editions_by_date_at_once_are_each_dates_own() -> None:
    """Every day from 2019 to 2028 (each edition's first and last day among them), before and after the dated
    editions, and unknown dates, under two defaults."""
    import datetime as dt

    from tbstats.model.rules import auto_edition, auto_editions

    epoch = dt.date(1970, 1, 1)
    days = np.concatenate([np.arange((dt.date(2019, 1, 1) - epoch).days, (dt.date(2028, 12, 31) - epoch).days),
                           [-40_000, 0, 2_000_000], np.arange(5)])
    known = np.ones(len(days), dtype=bool)
    known[-5:] = False
    dates = [epoch + dt.timedelta(int(d)) if k else None for d, k in zip(days.tolist(), known.tolist(), strict=True)]
    for default in ("fide-2026", "uscf"):
        expected = [auto_edition(date, default) for date in dates]
        got = auto_editions(pl.Series(dates, dtype=pl.Date), default)
        assert got.tolist() == expected
        assert {"fide-2024", "fide-2026", default} <= set(expected) and len(set(expected)) >= 3


@pytest.mark.parametrize("years", [(2022, 2024, 2026, None), (2026,), (2024, 2024)])
def test_auto_gives_each_tournament_the_values_of_its_own_edition(years: tuple[int | None, ...]) -> None:
    """``rules="auto"``: every tournament's values and ranks are those of the edition of its start date (a batch of
    several editions, of one, and without dates), and the ``edition`` column names it."""
    import datetime as dt

    from tbstats.engine.compute import compute
    from tbstats.model.rules import auto_edition
    from tbstats.simulation import SimulationConfig, simulate

    batch = simulate(SimulationConfig(tournaments=16, players=9, rounds=6, seed=11, half_bye_rate=0.1,
                                      zero_bye_rate=0.05, forfeit_rate=0.1)).batch
    ids = batch.tournaments["tournament"].to_list()
    dates = [dt.date(years[i % len(years)], 5, 1) if years[i % len(years)] else None for i in range(len(ids))]
    t = batch.tournaments.with_columns(pl.Series("start_date", dates, dtype=pl.Date))
    batch = Batch(t, batch.players, batch.games)
    specs = "BH/C1,BH,SB,FB,AOB,ARO,TPR,KS,PS,REP,DE"
    whole = compute(batch, specs, rules="auto")
    editions = {tid: auto_edition(date) for tid, date in zip(ids, dates, strict=True)}
    assert whole["edition"].to_list() == [editions[tid] for tid in whole["tournament"].to_list()]
    for edition in set(editions.values()):
        mine = [tid for tid, e in editions.items() if e == edition]
        own = compute(batch.select(mine), specs, rules=edition)
        assert whole.filter(pl.col("tournament").is_in(mine)).drop("edition").equals(own), edition
