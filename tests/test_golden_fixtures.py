"""Every value of every ``*.expected.csv`` fixture, recomputed by the fast engine (one generic test).

Values are compared exactly as decimals; AOB and SB-family columns at 2 decimals rounded half up, as the
fixtures' README says. ``RANK(a;b;...)`` columns are ranks with PTS then that list.
"""

from __future__ import annotations

import csv
from decimal import ROUND_HALF_UP, Decimal
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from helpers import FIXTURES, load_trf, requires_shared

from tbstats.engine.compute import make_context, tiebreak_values
from tbstats.engine.standings import ranks
from tbstats.engine.tiebreaks import parse_spec, parse_specs

pytestmark = requires_shared()


def _cases() -> list[tuple[str, str, str]]:
    out = []
    for csv_path in sorted(FIXTURES.glob("*.expected.csv")) if FIXTURES.is_dir() else []:
        with csv_path.open() as fh:
            rows = list(csv.DictReader(fh))
        editions = sorted({r["edition"] for r in rows})
        columns = [c for c in rows[0] if c not in ("edition", "start_no")]
        name = csv_path.name.removesuffix(".expected.csv")
        out += [(name, e, c) for e in editions for c in columns]
    return out


@cache
def _expected(name: str) -> list[dict[str, str]]:
    with (FIXTURES / f"{name}.expected.csv").open() as fh:
        return list(csv.DictReader(fh))


@cache
def _context(name: str, edition: str):  # type: ignore[no-untyped-def]
    batch = load_trf(FIXTURES / f"{name}.trf")
    return make_context(batch)


def _two_decimals(column: str) -> bool:
    return column.startswith(("AOB", "SB"))


@pytest.mark.parametrize(("fixture", "edition", "column"), _cases())
def test_fixture_column(fixture: str, edition: str, column: str) -> None:
    ctx = _context(fixture, edition)
    d = ctx.dense
    by_start = {int(s): i for i, s in enumerate(d.start_no)}
    if column.startswith("RANK("):
        got_rank = ranks(ctx, parse_specs(column[5:-1].replace(";", ",").replace("PTS,", "", 1)), edition)
    elif column == "ADJ":
        el = ctx.elements(edition)
        adj = el.as_opponent / ctx.unit()
    else:
        values = tiebreak_values(ctx, parse_spec(column), edition)
    checked = 0
    for row in _expected(fixture):
        if row["edition"] != edition or row[column] == "":
            continue
        i = by_start[int(row["start_no"])]
        want = row[column]
        if column.startswith("RANK("):
            got = str(got_rank[i])
        elif column == "ADJ":
            got = str(Decimal(str(adj[i])))
        elif not values.defined[i]:
            got = "undef"
        else:
            exact = Decimal(int(values.num[i])) / Decimal(int(values.den[i]))
            if _two_decimals(column):
                exact = exact.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
            got = str(exact)
        if want == "undef" or got == "undef":
            assert got == want, f"{fixture} {edition} player {row['start_no']} {column}: got {got}, want {want}"
        else:
            assert Decimal(got) == Decimal(want), (
                f"{fixture} {edition} player {row['start_no']} {column}: got {got}, want {want}")
        checked += 1
    assert checked > 0 or all(r[column] == "" for r in _expected(fixture) if r["edition"] == edition)


def test_every_fixture_has_expected_values() -> None:
    trfs = {p.name.removesuffix(".trf") for p in FIXTURES.glob("*.trf")}
    expected = {p.name.removesuffix(".expected.csv") for p in FIXTURES.glob("*.expected.csv")}
    assert trfs == expected
    assert len(_cases()) > 300
    assert np.all([Path(FIXTURES / f"{n}.trf").is_file() for n in expected])


@pytest.mark.parametrize("edition", ["fide-2026", "fide-2024", "fide-legacy"])
def test_the_free_round_of_an_odd_round_robin_reduces_rep(edition: str) -> None:
    """rules.md 2.2: a round without opponent written blank is a zero-point bye; 5.2: REP (C.07 7.6) is the rounds
    less the half-point byes, zero-point byes and forfeit losses. ``seed_rr5`` is a round robin of 5 players, each
    with one free round written ``0000 -`` and a blank result, and no other unplayed round: REP is 5 - 1 for every
    player, in every FIDE edition (FIDE's checker counts it so too)."""
    from tbstats.engine.compute import compute

    table = compute(load_trf(FIXTURES / "seed_rr5.trf"), "REP", rules=edition)
    assert table["REP"].to_list() == [4, 4, 4, 4, 4]
