"""The fast kernels equal the slow reference on generated tournaments, and invariants hold.

Tournaments come from ``strategies.tournaments`` (byes, forfeits, double forfeits, withdrawals, late
entries, round robins, 3-1-0 scoring), go through TRF text and the real reader, then through the engine.
"""

from __future__ import annotations

from fractions import Fraction

import polars as pl
import pytest
import reference
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import to_trf, tournaments

from tbstats.engine import standings
from tbstats.engine.compute import compute, make_context, tiebreak_values
from tbstats.engine.standings import ranks
from tbstats.engine.tiebreaks import parse_spec, parse_specs
from tbstats.io.trf import read_trf, write_trf
from tbstats.model.batch import Batch

EDITIONS = ["fide-2026", "fide-2024", "fide-legacy", "uscf", "naive"]
VALUE_SPECS = [
    "PTS", "WIN", "WON", "BPG", "BWG", "REP", "STD", "TPN", "PS", "PS/C1", "PS/C2", "KS", "KS/L1", "KS/L-1",
    "BH", "BH/C1", "BH/C2", "BH/M1", "BH/M2", "FB", "FB/C1", "FB/M1", "SB", "SB/C1", "SB/C2", "SB/M1",
    "SB/M2", "BH/P", "BH/C1/P", "FB/P", "FB/M1/P", "SB/P", "SB/C1/P", "SB/M2/P",
    "AOB", "AOB/F", "ARO", "ARO/C1", "ARO/M1", "TPR", "PTP", "APRO", "APPO", "RTNG", "RTNG/R",
    "ARO/U1500", "TPR/U1500", "USCF-SOLKOFF", "USCF-MEDIAN", "USCF-MM", "USCF-CUM", "USCF-OPPCUM",
    "USCF-BLACKS", "USCF-KASHDAN", "USCF-SB", "USCF-AVGOPP",
]
RANK_LISTS = ["DE", "DE/P", "BH/C1,BH,SB,DE,WIN", "BH/C1/P,SB/P,DE/P", "SB,DE,KS", "DE,TPN"]
SETTINGS = settings(suppress_health_check=[HealthCheck.too_slow])


def _batch(t: reference.RefTournament) -> Batch:
    result = read_trf([("generated.trf", to_trf(t).encode())])
    assert result.errors.is_empty(), result.errors
    return result.batch


def _kind(t: reference.RefTournament) -> str:
    """The event type the generator meant: a tiny Swiss where everyone met everyone looks like a round robin
    from its pairings alone, so the comparison with the reference states the type (detection is tested
    separately)."""
    return "round_robin" if t.round_robin else "swiss"


def _engine_values(ctx, spec: str, edition: str) -> dict[int, Fraction | None]:  # type: ignore[no-untyped-def]
    v = tiebreak_values(ctx, parse_spec(spec), edition)
    return {int(s): (Fraction(int(v.num[i]), int(v.den[i])) if v.defined[i] else None)
            for i, s in enumerate(ctx.dense.start_no)}


@SETTINGS
@given(tournaments(), st.sampled_from(EDITIONS))
def test_kernels_equal_reference(t: reference.RefTournament, edition: str) -> None:
    batch = _batch(t)
    ctx = make_context(batch, after_round=t.n, force_type=_kind(t))
    for spec in VALUE_SPECS:
        want = reference.compute(t, spec, edition)
        got = _engine_values(ctx, spec, edition)
        assert got == want, f"{spec} under {edition}: engine {got} != reference {want}"


@SETTINGS
@given(tournaments(), st.sampled_from(EDITIONS), st.sampled_from(RANK_LISTS))
def test_ranks_equal_reference(t: reference.RefTournament, edition: str, order: str) -> None:
    ctx = make_context(_batch(t), after_round=t.n, force_type=_kind(t))
    got = ranks(ctx, parse_specs(order), edition)
    want = reference.rank(t, order.split(","), edition)
    assert {int(s): int(got[i]) for i, s in enumerate(ctx.dense.start_no)} == want


@SETTINGS
@given(tournaments(), st.sampled_from(EDITIONS), st.randoms(use_true_random=False))
def test_relabelling_start_numbers_changes_nothing(t: reference.RefTournament, edition: str, rnd) -> None:  # type: ignore[no-untyped-def]
    batch = _batch(t)
    old = batch.players["start_no"].to_list()
    new = old.copy()
    rnd.shuffle(new)
    mapping = dict(zip(old, new, strict=True))
    remap = pl.col("start_no").replace_strict(mapping)
    players = batch.players.with_columns(remap)
    games = batch.games.with_columns(pl.col("player").replace_strict(mapping),
                                     pl.col("opponent").replace_strict(mapping, default=None))
    relabelled = Batch(batch.tournaments, players, games)
    specs = "BH/C1,BH,SB,SB/M1,FB,AOB,PS,WIN,KS,ARO,TPR,DE"
    a = compute(batch, specs, rules=edition).with_columns(pl.col("start_no").replace_strict(mapping))
    b = compute(relabelled, specs, rules=edition)
    assert a.drop("rank", "DE").sort("start_no").equals(b.drop("rank", "DE").sort("start_no"))
    # ranks may differ only where TPN-like order is not involved: ties are shared, so they are identical
    assert a.select("start_no", "rank").sort("start_no").equals(b.select("start_no", "rank").sort("start_no"))


@SETTINGS
@given(tournaments(), st.sampled_from(EDITIONS), st.randoms(use_true_random=False))
def test_start_numbers_with_gaps_change_nothing(t: reference.RefTournament, edition: str, rnd) -> None:  # type: ignore[no-untyped-def]
    """Start numbers other than 1..N (a file that leaves some out): the games are placed by each number's position
    among the event's, and every value and rank is as with 1..N."""
    batch = _batch(t)
    old = batch.players["start_no"].to_list()
    new = sorted(rnd.sample(range(1, 4 * len(old) + 2), len(old)))
    mapping = dict(zip(old, new, strict=True))
    players = batch.players.with_columns(pl.col("start_no").replace_strict(mapping))
    games = batch.games.with_columns(pl.col("player").replace_strict(mapping),
                                     pl.col("opponent").replace_strict(mapping, default=None))
    specs = "BH/C1,BH,SB,FB,AOB,PS,WIN,KS,ARO,TPR,DE"
    a = compute(batch, specs, rules=edition).with_columns(pl.col("start_no").replace_strict(mapping))
    b = compute(Batch(batch.tournaments, players, games), specs, rules=edition)
    assert a.sort("start_no").equals(b.sort("start_no"))


@SETTINGS
@given(tournaments(), st.sampled_from(EDITIONS))
def test_cut_invariants(t: reference.RefTournament, edition: str) -> None:
    df = compute(_batch(t), "BH,BH/C1,BH/C2,BH/M1,SB,SB/C1", rules=edition)
    assert (df["BH/C1"] <= df["BH"]).all()
    assert (df["BH/C2"] <= df["BH/C1"]).all()
    assert (df["BH/M1"] <= df["BH/C1"]).all()
    assert (df["SB/C1"] <= df["SB"]).all()


@SETTINGS
@given(st.lists(tournaments(max_players=10, max_rounds=7), min_size=1, max_size=5), st.sampled_from(EDITIONS),
       st.booleans())
def test_fore_buchholz_sum_equals_its_stage(events: list[reference.RefTournament], edition: str,
                                            forfeits: bool) -> None:
    """FB without cuts, summed from the edition's stage (``fore_total``), equals the sum of the elements of the
    stage built for FB (``fore_elements``, which its cuts and explain read), for every player of a batch of
    events (of several round counts: several blocks)."""
    from tbstats.engine.unplayed import fore_elements, fore_total

    batch = read_trf([(f"t{i}.trf", to_trf(t).encode()) for i, t in enumerate(events)]).batch
    ctx = make_context(batch)
    for leaf in [part for _, part in ctx._parts] or [ctx]:
        base = leaf.elements(edition, forfeits=forfeits)
        assert (fore_total(base) == fore_elements(base).oppscore_total).all()


@SETTINGS
@given(tournaments())
def test_trf_round_trip_is_identity(t: reference.RefTournament) -> None:
    batch = _batch(t)
    again = read_trf([(s, text.encode()) for s, text in write_trf(batch).items()]).batch
    assert again.tournaments.equals(batch.tournaments)
    assert again.games.equals(batch.games)
    assert again.players.drop("line").equals(batch.players.drop("line"))


def test_round_robin_without_unplayed_games_has_equal_buchholz_plus_points() -> None:
    """In a single round robin every player meets everyone else: BH = total points - own points.

    (So BH itself is equal for everyone only when the scores are; BH + PTS is always equal.)
    """
    # 4 players, Berger-like: lower start number wins every game
    schedule = [((1, 4), (2, 3)), ((4, 3), (1, 2)), ((2, 4), (3, 1))]
    rounds: dict[int, list[reference.RefRound]] = {p: [] for p in range(1, 5)}
    for pairs in schedule:
        for white, black in pairs:
            winner = min(white, black)
            rounds[white].append(reference.RefRound(black, "w", "1" if white == winner else "0"))
            rounds[black].append(reference.RefRound(white, "b", "1" if black == winner else "0"))
    t = reference.RefTournament(
        players=tuple(reference.RefPlayer(p, 2000, tuple(r)) for p, r in rounds.items()),
        n=3, planned_rounds=3, round_robin=True, points=dict(reference.STANDARD_POINTS))
    for edition in EDITIONS:
        df = compute(_batch(t), "BH,BH/C1", rules=edition)
        assert (df["BH"] + df["points"]).n_unique() == 1, edition
        assert (df["BH/C1"] <= df["BH"]).all()
        assert df["points"].to_list() == [3.0, 2.0, 1.0, 0.0]


@SETTINGS
@given(st.lists(tournaments(max_players=10, max_rounds=7), min_size=2, max_size=6), st.sampled_from(EDITIONS))
def test_batch_equals_tournaments_one_by_one(events: list[reference.RefTournament], edition: str) -> None:
    """Vectorising over a batch gives exactly what each tournament gives alone."""
    texts = [(f"t{i}.trf", to_trf(t).encode()) for i, t in enumerate(events)]
    specs = "BH/C1,SB/M1,FB,AOB,KS,TPR,DE"
    together = compute(read_trf(texts).batch, specs, rules=edition)
    alone = pl.concat([compute(read_trf([x]).batch, specs, rules=edition) for x in texts])
    assert together.drop("tournament").equals(alone.drop("tournament"))


@SETTINGS
@given(st.lists(tournaments(max_players=10, max_rounds=7), min_size=2, max_size=6), st.sampled_from(EDITIONS),
       st.sampled_from(["DE", "BH/C1,DE", "BH/C1,SB,DE/P", "WIN,DE,KS"]))
def test_direct_encounter_among_the_tied_alone_or_among_all(events: list[reference.RefTournament], edition: str,
                                                            specs: str) -> None:
    """DE's passes on the tied players alone (renumbered: what it does when few are left) rank as on all."""
    batch = read_trf([(f"t{i}.trf", to_trf(t).encode()) for i, t in enumerate(events)]).batch
    tables = []
    for few in (10 ** 9, 1):   # the passes on all players, then on the tied alone (unless all are tied)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(standings, "FEW_TIED", few)
            tables.append(compute(batch, specs, rules=edition))
    assert tables[0].equals(tables[1])


@SETTINGS
@given(st.lists(tournaments(max_players=10, max_rounds=7), min_size=4, max_size=8), st.sampled_from(EDITIONS))
def test_threads_give_the_same_table(events: list[reference.RefTournament], edition: str) -> None:
    """compute(workers=2) splits the batch into runs of whole tournaments: the table is identical (a batch this
    small is split only when told that its rows pay for the threads, :data:`THREAD_ROWS`)."""
    from unittest import mock

    from tbstats.engine import compute as engine

    batch = read_trf([(f"t{i}.trf", to_trf(t).encode()) for i, t in enumerate(events)]).batch
    specs = "BH/C1,SB/M1,FB,AOB,KS,TPR,DE,LOTS"
    with mock.patch.object(engine, "THREAD_ROWS", 1):
        assert compute(batch, specs, rules=edition, workers=2).equals(compute(batch, specs, rules=edition))
