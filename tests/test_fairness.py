"""tbstats evaluate on archives: the simulate figures again, batch independence, favour counts, the archive fit."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner
from helpers import REAL, requires_shared
from trf_samples import player

from tbstats.analysis import bradley_terry, fairness, quality, strength
from tbstats.analysis.evaluate import evaluate_archive, with_baseline
from tbstats.analysis.quality import with_strength
from tbstats.cli import main
from tbstats.engine.compute import compute, make_context
from tbstats.engine.configs import parse_config
from tbstats.errors import TbstatsError
from tbstats.io import sources, tabular
from tbstats.io.trf import read_trf
from tbstats.model.batch import Batch
from tbstats.model.dense import Dense
from tbstats.model.games import GAME_TYPE
from tbstats.model.teams.batch import team_event_ids
from tbstats.simulation import SimulationConfig, simulate

NEW = "new=fide-2026:BH/C1,BH,SB"
OLD = "old=fide-2024:BH/C1,BH,SB"
CONFIGS = with_baseline([parse_config(NEW), parse_config(OLD)], True)


@pytest.fixture(scope="module")
def batch() -> Batch:
    cfg = SimulationConfig(tournaments=40, players=14, rounds=6, seed=9, half_bye_rate=0.08, zero_bye_rate=0.03,
                           forfeit_rate=0.05, withdrawal_rate=0.1, unrated_rate=0.2)
    return with_strength(simulate(cfg))


def _parts(batch: Batch, sizes: list[int]) -> list[Batch]:
    ids = batch.tournaments["tournament"].to_list()
    out, start = [], 0
    for size in sizes:
        out.append(batch.select(ids[start:start + size]))
        start += size
    return out


@pytest.mark.parametrize("args", [["-n", "1", "-p", "4", "-r", "3"], ["-n", "3", "-p", "3", "-r", "10"]])
def test_simulate_without_tied_groups(args: list[str]) -> None:
    """Issue 11 defect 1: no score group tied used to raise IndexError."""
    result = CliRunner().invoke(main, ["simulate", *args, "-c", NEW])
    assert result.exit_code == 0, result.output
    rows = pl.read_csv(result.stdout.encode())
    assert rows["tied_groups"].to_list() == [0, 0]
    assert rows["strongest_first"].is_nan().all()


@pytest.mark.parametrize("suffix", [".parquet", ".csv", ""])
def test_evaluate_gives_the_simulate_table(tmp_path: Path, suffix: str) -> None:
    archive = str(tmp_path / f"sim{suffix}") if suffix else str(tmp_path / "simdir")
    common = ["-c", NEW, "-c", OLD, "--seed", "7"]
    sim = CliRunner().invoke(main, ["simulate", "-n", "30", "-p", "12", "-r", "6", *common, "--archive", archive])
    assert sim.exit_code == 0, sim.output
    ev = CliRunner().invoke(main, ["evaluate", archive, "--strength", "strength", "-q", *common])
    assert ev.exit_code == 0, ev.output
    assert ev.stdout == sim.stdout
    split = CliRunner().invoke(main, ["evaluate", archive, "--strength", "strength", "-q", *common,
                                      "--batch-size", "7", "--workers", "2"])
    assert split.stdout == sim.stdout   # the lots are drawn on the archive's tournament ids, not a batch's
    assert [line.split(",")[0] for line in ev.stdout.splitlines()[1:]] == ["new", "old", "random"]
    other_lots = CliRunner().invoke(main, ["evaluate", archive, "--strength", "strength", "-q", "-c", NEW, "-c", OLD,
                                           "--seed", "8"])
    assert other_lots.stdout.splitlines()[:3] == ev.stdout.splitlines()[:3]   # only the lots row changes
    assert other_lots.stdout != ev.stdout


def test_tables_do_not_depend_on_batches_or_workers(batch: Batch) -> None:
    def run(parts: list[Batch], workers: int = 1) -> tuple[pl.DataFrame, ...]:
        result = evaluate_archive(parts, CONFIGS, proxy="strength", lots_seed=3, workers=workers)
        return result.measures, result.favour, result.differences

    whole = run([batch])
    for parts, workers in (([batch], 2), (_parts(batch, [1, 13, 26]), 1), (_parts(batch, [7] * 5 + [5]), 2)):
        for a, b in zip(whole, run(parts, workers), strict=True):
            assert a.equals(b)
    assert whole[0]["players_left_out"].to_list() == [0, 0, 0]


def test_a_batch_evaluated_in_runs_of_players_gives_the_tables_of_one_run(batch: Batch,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches of more than CHUNK_PLAYERS players are evaluated run by run (engine memory bounded by a run)."""
    from tbstats.engine import compute as engine

    whole = evaluate_archive([batch], CONFIGS, proxy="strength", lots_seed=3)
    monkeypatch.setattr(engine, "CHUNK_PLAYERS", 100)
    calls: list[int] = []
    split = engine.split_batch
    monkeypatch.setattr(engine, "split_batch", lambda b, n: calls.append(n) or split(b, n))
    runs = evaluate_archive([batch], CONFIGS, proxy="strength", lots_seed=3)
    assert calls == [6]   # 560 players
    for name in ("measures", "favour", "differences"):
        assert getattr(runs, name).equals(getattr(whole, name)), name


def test_a_table_asked_alone_is_the_table_of_the_whole_evaluation(batch: Batch,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """An evaluation asked for one table computes the partials of that table only (``evaluate --table``: the
    measures are about half the work, the favour counts a fifth), and that table is the one of the whole."""
    whole = evaluate_archive([batch], CONFIGS, proxy="strength", lots_seed=3, pairs=[("new", "old")])
    counted: list[str] = []
    count, measure = fairness.count, quality.measure
    monkeypatch.setattr(fairness, "count", lambda *a, **k: counted.append("counts") or count(*a, **k))
    monkeypatch.setattr(quality, "measure", lambda *a, **k: counted.append("measures") or measure(*a, **k))
    # (the counts feed both the favour and the difference tables; the measures their own)
    for table, made, same, empty in (("measures", "measures", ["measures"], ["favour", "differences"]),
                                     ("favour", "counts", ["favour", "differences"], ["measures"]),
                                     ("difference", "counts", ["favour", "differences"], ["measures"])):
        counted.clear()
        alone = evaluate_archive([batch], CONFIGS, proxy="strength", lots_seed=3, pairs=[("new", "old")],
                                 tables=[table])
        assert set(counted) == {made}, table
        assert all(getattr(alone, f).equals(getattr(whole, f)) for f in same), table
        assert all(getattr(alone, f).is_empty() for f in empty), table
    with pytest.raises(TbstatsError, match="tables must be some of"):
        evaluate_archive([batch], CONFIGS, tables=["ranks"])


def test_rating_proxy_leaves_out_unrated(batch: Batch) -> None:
    result = evaluate_archive([batch], CONFIGS, proxy="rating")
    row = result.measures.row(0, named=True)
    players = batch.players
    assert row["players_left_out"] == players["rating"].null_count() > 0
    # groups tied on points with fewer than two rated members, counted independently
    scores = batch.games.group_by("tournament", "player").agg(pl.col("points").sum()).rename({"player": "start_no"})
    groups = players.join(scores, on=["tournament", "start_no"]).group_by("tournament", "points").agg(
        pl.len().alias("k"), pl.col("rating").is_not_null().sum().alias("rated")).filter(pl.col("k") > 1)
    assert row["tied_groups"] == groups.height
    assert row["groups_left_out"] == groups.filter(pl.col("rated") < 2).height > 0


def test_favour_counts_by_hand(batch: Batch) -> None:
    """Ties won and chance rates per unplayed kind, counted player by player from compute's ranks."""
    result = evaluate_archive([batch], CONFIGS, proxy="strength", pairs=[("new", "old")])
    ranks = compute(batch, "BH/C1,BH,SB", rules="fide-2026").select("tournament", "start_no", "points", "rank")
    kinds = batch.games.group_by("tournament", "player").agg(pl.col("game_type").cast(pl.String)).rename(
        {"player": "start_no"})
    rows = ranks.join(kinds, on=["tournament", "start_no"], how="left").to_dicts()
    by_group: dict[tuple[int, float], list[dict[str, object]]] = {}
    for r in rows:
        by_group.setdefault((r["tournament"], r["points"]), []).append(r)
    won: dict[str, float] = {}
    chance: dict[str, float] = {}
    players: dict[str, int] = {}
    for members in by_group.values():
        k = len(members)
        if k < 2:
            continue
        best = min(int(m["rank"]) for m in members)  # type: ignore[call-overload]
        firsts = sum(m["rank"] == best for m in members)
        for m in members:
            types = set(m["game_type"] or [])  # type: ignore[arg-type]
            labels = [t for t in ("half_bye", "zero_bye", "forfeit_win", "forfeit_loss", "pab") if t in types]
            labels += ["all"] + (["none"] if types <= {"played"} else [])
            for label in labels:
                players[label] = players.get(label, 0) + 1
                won[label] = won.get(label, 0.0) + (1 / firsts if m["rank"] == best else 0.0)
                chance[label] = chance.get(label, 0.0) + 1 / k
    table = result.favour.filter(pl.col("config") == "new")
    for label, n in players.items():
        got = table.filter(pl.col("value") == label).row(0, named=True)
        assert got["players"] == n, label
        assert got["won"] == pytest.approx(won[label], abs=1e-6), label
        assert got["chance"] == pytest.approx(chance[label] / n, abs=1e-6), label
    assert table.filter(pl.col("value") == "all")["rate_vs_chance"].to_list() == [1.0]  # one winner per group
    diff = result.differences.filter(pl.col("value") == "all").row(0, named=True)
    assert diff["difference"] == 0.0 and diff["players"] == players["all"]


def test_withdrawal_and_late_entry_are_told_apart() -> None:
    lines = ["012 demo", "XXR 3",
             player(1, "A", "2000", ["   2 w 1", "   3 w 1", "   4 w 1"]),
             player(2, "B", "1900", ["   1 b 0", "   4 b 1"]),                  # withdrawn after round 2
             player(3, "C", "1800", ["        ", "   1 b 0", "0000 - H"]),      # late entry, then a bye
             player(4, "D", "1700", ["        ", "   2 w 0", "   1 b 0"])]      # late entry
    b = read_trf([("demo.trf", ("\n".join(lines) + "\n").encode())]).batch
    feats = fairness.player_features(make_context(b).dense)
    unplayed = {name: mask.nonzero()[0].tolist() for name, mask in feats["unplayed"]}
    assert unplayed["withdrawal"] == [1]
    assert unplayed["late_entry"] == [2, 3]
    assert unplayed["half_bye"] == [2]
    assert unplayed["none"] == [0]
    assert unplayed["absent"] == []


def _slow_unplayed(d: Dense) -> dict[str, list[int]]:
    """The unplayed kinds and colour balances of every player, read round by round from the dense view."""
    names = {code: name for name, code in GAME_TYPE.items()}
    labels = {-2: "<=-2", -1: "-1", 0: "0", 1: "+1", 2: ">=+2"}
    out: dict[str, list[int]] = {}
    for i in range(d.players):
        kinds = [names[int(d.gtype[i, r])] for r in range(d.rounds) if d.counted[i, r]]   # the first rounds
        present = [k != "absent" for k in kinds]
        found = {k for k in kinds if k in fairness.UNPLAYED[:7]}
        for r, k in enumerate(kinds):
            if k == "absent":
                before, after = not any(present[:r]), any(present) and not any(present[r + 1:])
                found.add("late_entry" if before else "withdrawal" if after else "absent")
        if all(k == "played" for k in kinds):
            found.add("none")
        balance = sum(-1 if d.black[i, r] else 1 for r, k in enumerate(kinds) if k == "played")
        found.add(f"colour {labels[max(-2, min(2, balance))]}")
        for name in found:
            out.setdefault(name, []).append(i)
    return out


def test_player_features_follow_the_rounds(batch: Batch) -> None:
    """Unplayed kinds and colour balances counted over the cells at once equal them read round by round
    (a simulated archive with byes, forfeits, withdrawals and late rounds)."""
    d = make_context(batch).dense
    feats = fairness.player_features(d)
    fast = {name: mask.nonzero()[0].tolist() for name, mask in feats["unplayed"] if mask.any()}
    fast.update({f"colour {label}": mask.nonzero()[0].tolist() for label, mask in feats["colour"] if mask.any()})
    slow = _slow_unplayed(d)
    assert fast == slow
    assert {"withdrawal", "half_bye", "forfeit_win"} <= set(fast)   # the archive has them


@requires_shared()
def test_player_features_from_each_view_are_those_of_the_padded_view(monkeypatch: pytest.MonkeyPatch) -> None:
    """From a context of several buckets (the real shared files, every round count a bucket of its own), the
    features are read from each bucket's view and put together in the batch's player order
    (``Context.gathered``): the same values and masks as from the padded view of the whole batch; and so are the
    scores."""
    from tbstats.model import dense

    monkeypatch.setattr(dense, "SMALL_BLOCK", 0)
    monkeypatch.setattr(dense, "PAD_SHARE", 0.0)
    batch = sources.load([str(REAL)], on_error="collect").batch
    ctx = make_context(batch)
    assert len(ctx.parts()) > 1
    from_views = fairness.player_features(ctx)
    assert ctx._dense is None   # (the padded view was never made)
    whole = fairness.player_features(make_context(batch).dense)
    assert from_views.keys() == whole.keys()
    for name, pairs in whole.items():
        assert [v for v, _ in from_views[name]] == [v for v, _ in pairs], name
        for (value, mask), (_, want) in zip(from_views[name], pairs, strict=True):
            assert np.array_equal(mask, want), (name, value)
    assert np.array_equal(ctx.gathered(lambda view: view.score), make_context(batch).dense.score)


def _pool_games(seed: int = 4) -> tuple[pl.DataFrame, pl.DataFrame, np.ndarray]:
    """Round robins of 8 players drawn from a pool of 60 with known strengths; player 59 plays once."""
    rng = np.random.default_rng(seed)
    true = rng.normal(0, 300, 60)
    games, participants = [], []
    for event in range(30):
        who = rng.choice(59, 8, replace=False) if event else np.r_[rng.choice(59, 7, replace=False), 59]
        for no, fide in enumerate(who, start=1):
            participants.append((event, no, int(fide) + 1000))
        for a in range(8):
            for b in range(a + 1, 8):
                p = 1 / (1 + 10 ** (-(true[who[a]] - true[who[b]]) / 400))
                u = rng.random()
                s = 1.0 if u < p - 0.1 else 0.5 if u < p + 0.1 else 0.0
                games += [(event, int(who[a]) + 1000, int(who[b]) + 1000, s),
                          (event, int(who[b]) + 1000, int(who[a]) + 1000, 1 - s)]
    g = pl.DataFrame(games, schema={"tournament": pl.Int64, "fide": pl.Int64, "opp": pl.Int64, "score": pl.Float64},
                     orient="row")
    p = pl.DataFrame(participants, schema={"tournament": pl.Int64, "start_no": pl.Int32, "fide": pl.Int64},
                     orient="row")
    return g, p, true


def test_archive_fit_is_stationary_and_leaves_the_event_out() -> None:
    games, participants, true = _pool_games()
    fit = strength.fit(games, participants)
    r = dict(fit.ratings.iter_rows())
    c = math.log(10) / 400

    def gradient(x: float, rows: pl.DataFrame, opponents: dict[int, float]) -> float:
        p = 1 / (1 + 10 ** (-(x - rows["opp"].replace_strict(opponents, default=None).fill_null(
            rows["opp"].replace_strict(r)).to_numpy()) / 400))
        return float(c * (rows["score"].to_numpy() - p).sum() - x / bradley_terry.PRIOR_SD**2)

    def solve(rows: pl.DataFrame, opponents: dict[int, float]) -> float:
        lo, hi = -3000.0, 3000.0
        for _ in range(100):   # bisection on the decreasing gradient
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if gradient(mid, rows, opponents) > 0 else (lo, mid)
        return lo

    for fide in (1000, 1007, 1030):   # the whole fit: every player's gradient vanishes
        assert abs(gradient(r[fide], games.filter(pl.col("fide") == fide), {})) < 1e-6
    first = strength.fit(games, participants, passes=1).table.join(participants, on=["tournament", "start_no"])
    table = fit.table.join(participants, on=["tournament", "start_no"])
    for event, no in ((0, 3), (5, 1), (17, 8)):
        fide = int(participants.filter((pl.col("tournament") == event) & (pl.col("start_no") == no))["fide"][0])
        rows = games.filter((pl.col("fide") == fide) & (pl.col("tournament") != event))
        # pass 1: the games outside the event against the whole-fit opponents
        got = first.filter((pl.col("tournament") == event) & (pl.col("fide") == fide))["strength"][0]
        assert got == pytest.approx(solve(rows, {}), abs=1e-3)
        # pass 2: opponents who also played in the event at their pass-1 strength without it
        same_event = dict(first.filter(pl.col("tournament") == event).drop_nulls("strength").select(
            "fide", "strength").iter_rows())
        got = table.filter((pl.col("tournament") == event) & (pl.col("fide") == fide))["strength"][0]
        assert got == pytest.approx(solve(rows, same_event), abs=1e-3)
        assert same_event.keys() & set(rows["opp"].to_list())   # the second pass did change opponents
    alone = table.filter(pl.col("fide") == 1059)
    assert alone.height == 1 and alone["strength"][0] is None
    elsewhere = participants.join(games.select(pl.col("tournament").alias("other"), "fide").unique(), on="fide").filter(
        pl.col("other") != pl.col("tournament")).unique(["tournament", "start_no"]).height
    assert fit.covered == elsewhere == table["strength"].is_not_null().sum() < participants.height
    assert fit.games == games.height // 2
    covered = table.filter(pl.col("strength").is_not_null())
    truth = pl.Series(true[covered["fide"].to_numpy() - 1000])
    rho = pl.DataFrame({"a": covered["strength"], "b": truth}).select(pl.corr("a", "b", method="spearman")).item()
    assert rho > 0.8
    assert f"covers {elsewhere} of 240 players" in fit.describe()


def test_the_whole_fit_is_the_posterior_mode_whatever_the_order_of_the_sides() -> None:
    """The whole archive's fit (Newton steps solved by conjugate gradients) is the mode of the posterior: every
    player's gradient vanishes, and it is where the plain diagonal iteration (each player's own Newton step
    against his opponents' strengths of the step before) ends when run to a standstill. Its answer does not
    depend on the order the sides come in (shuffled here, as a large archive's FIDE ids scatter them)."""
    games, _, _ = _pool_games()
    ids, i = np.unique(games["fide"].to_numpy(), return_inverse=True)
    j = np.searchsorted(ids, games["opp"].to_numpy())
    score = games["score"].to_numpy()
    event = games["tournament"].to_numpy()
    fitted = bradley_terry.whole_fit(i, j, score, event, len(ids), 100, 1e-4)

    def gradient(r: np.ndarray) -> np.ndarray:
        p = 1 / (1 + np.power(10.0, -(r[i] - r[j]) / 400))
        return bradley_terry.C * np.bincount(i, score - p, minlength=len(ids)) - r / bradley_terry.PRIOR_SD**2

    assert np.abs(gradient(fitted)).max() < 1e-9
    plain = np.zeros(len(ids))
    for _ in range(20_000):
        p = 1 / (1 + np.power(10.0, -(plain[i] - plain[j]) / 400))
        hess = bradley_terry.C**2 * np.bincount(i, p * (1 - p), minlength=len(ids)) + 1 / bradley_terry.PRIOR_SD**2
        step = np.clip(gradient(plain) / hess, -200, 200)
        plain += step
        if np.abs(step).max() < 1e-12:
            break
    np.testing.assert_allclose(fitted, plain, rtol=0, atol=1e-7)
    order = np.random.default_rng(7).permutation(games.height)
    shuffled = bradley_terry.whole_fit(i[order], j[order], score[order], event[order], len(ids), 100, 1e-4)
    np.testing.assert_allclose(shuffled, fitted, rtol=0, atol=1e-9)


def test_the_whole_fit_reaches_the_mode_where_players_meet_again_and_again() -> None:
    """Two players who meet 40 times (and a third who plays them once): the diagonal iteration, each player
    moved against the other's strength of the step before, overshoots both ways and swung between two points
    200 Elo apart (a real archive copied 40 times: 199 Elo from the mode after 500 steps). The Newton steps
    land on the mode: the gradient vanishes, and the pair's strengths mirror each other about their prior."""
    rows = []
    for k in range(40):
        s = 1.0 if k % 4 else 0.0   # 30 wins of 40
        rows += [(k, 1, 2, s), (k, 2, 1, 1 - s)]
    rows += [(40, 3, 1, 0.5), (40, 1, 3, 0.5), (41, 3, 2, 0.5), (41, 2, 3, 0.5)]
    games = pl.DataFrame(rows, schema={"tournament": pl.Int64, "fide": pl.Int64, "opp": pl.Int64,
                                       "score": pl.Float64}, orient="row")
    i, j = (games["fide"] - 1).to_numpy(), (games["opp"] - 1).to_numpy()
    score, event = games["score"].to_numpy(), games["tournament"].to_numpy()
    r = bradley_terry.whole_fit(i, j, score, event, 3, 100, 1e-4)
    p = 1 / (1 + np.power(10.0, -(r[i] - r[j]) / 400))
    gradient = bradley_terry.C * np.bincount(i, score - p, minlength=3) - r / bradley_terry.PRIOR_SD**2
    assert np.abs(gradient).max() < 1e-9
    assert r[0] > 80 and r[0] + r[1] == pytest.approx(0, abs=1e-6) and r[2] == pytest.approx(0, abs=1e-6)
    for wins in (40, 1):   # every game won (the prior alone holds them): far from 0, reached in clipped steps
        i, j = np.tile([0, 1], wins), np.tile([1, 0], wins)
        score, event = np.tile([1.0, 0.0], wins), np.repeat(np.arange(wins), 2)
        r = bradley_terry.whole_fit(i, j, score, event, 2, 100, 1e-4)
        p = 1 / (1 + np.power(10.0, -(r[i] - r[j]) / 400))
        gradient = bradley_terry.C * np.bincount(i, score - p, minlength=2) - r / bradley_terry.PRIOR_SD**2
        assert np.abs(gradient).max() < 1e-9 and r[0] == pytest.approx(-r[1]) and r[0] > (300 if wins > 1 else 100)


def test_the_compiled_passes_of_the_fit_are_the_numpy_expressions() -> None:
    """elo.pyx's passes over the sides give what the numpy expressions of their docstrings give (to rounding: its
    exp is the C library's), for sides in any order; a side naming a player out of range raises."""
    from tbstats.analysis import elo

    rng = np.random.default_rng(11)
    n, m = 50, 400
    i, j = rng.integers(0, n, m), rng.integers(0, n, m)
    s, r, q = rng.choice([0.0, 0.5, 1.0], m), rng.normal(0, 300, n), rng.normal(0, 1, n)
    w, surplus, weight = np.empty(m), np.zeros(n), np.zeros(n)
    p = 1 / (1 + np.power(10.0, -(r[i] - r[j]) / 400))
    for games in (np.ones(m), rng.integers(1, 5, m).astype(np.float64)):   # (sides; groups of several games)
        surplus[:], weight[:] = 0, 0
        elo.side_terms(r, i, j, s * games, games, bradley_terry.C, w, surplus, weight)
        np.testing.assert_allclose(w, bradley_terry.C**2 * games * p * (1 - p), rtol=1e-12, atol=0)
        np.testing.assert_allclose(surplus, np.bincount(i, games * (s - p), minlength=n), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(weight, np.bincount(i, w, minlength=n), rtol=1e-12, atol=0)
    diag, out = weight + 1.0, np.empty(n)
    elo.hessian_product(i, j, w, diag, q, out)
    np.testing.assert_allclose(out, diag * q - np.bincount(i, w * q[j], minlength=n), rtol=1e-12, atol=1e-12)
    for bad in (-1, n):
        wrong = j.copy()
        wrong[m // 2] = bad
        with pytest.raises(ValueError, match=f"side {m // 2} names a player out of range"):
            elo.side_terms(r, i, wrong, s, np.ones(m), bradley_terry.C, w, surplus, weight)
        with pytest.raises(ValueError, match=f"side {m // 2} names a player out of range"):
            elo.hessian_product(wrong, j, w, diag, q, out)
    with pytest.raises(ValueError, match="lengths differ"):
        elo.hessian_product(i[:-1], j, w, diag, q, out)
    rj = r[j] + rng.normal(0, 50, m)   # (the refit's rows: games against one opponent, his strength given)
    games = rng.integers(1, 4, m).astype(np.float64)
    scored = games * s
    surplus, weight = np.zeros(n), np.zeros(n)
    elo.owner_terms(r, i, rj, scored, games, bradley_terry.C, surplus, weight)
    p = 1 / (1 + np.power(10.0, -(r[i] - rj) / 400))
    np.testing.assert_allclose(surplus, np.bincount(i, scored - games * p, minlength=n), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(weight, np.bincount(i, games * p * (1 - p), minlength=n), rtol=1e-12, atol=0)
    with pytest.raises(ValueError, match=f"row {m // 2} names an owner out of range"):
        elo.owner_terms(r, np.where(np.arange(m) == m // 2, n, i), rj, scored, games, bradley_terry.C, surplus, weight)


def test_refits_from_the_series_are_the_refits_game_by_game(monkeypatch: pytest.MonkeyPatch) -> None:
    """A player's refit without one event, from the series of his whole sum (less that event's games, plus the
    opponents who also played in it at their own strength without it), is the game-by-game refit's, in both
    passes (that one with a series' interval of 0.001 Elo, which every refit that moves leaves: game by game)."""
    games, participants, _ = _pool_games(seed=9)
    events = games.group_by("fide").agg(pl.col("tournament").n_unique())["tournament"]
    assert events.max() >= 8   # type: ignore[operator]
    for passes in (1, 2):
        series = strength.fit(games, participants, passes=passes).table["strength"].to_numpy()
        with monkeypatch.context() as m:
            m.setattr(bradley_terry, "SERIES_WIDTH", 1e-3)
            exact = strength.fit(games, participants, passes=passes).table["strength"].to_numpy()
        assert np.array_equal(np.isnan(series), np.isnan(exact)) and not np.isnan(exact).all()
        np.testing.assert_allclose(series, exact, rtol=0, atol=1e-8)
        assert np.abs(series - exact)[~np.isnan(exact)].max() > 0   # (two ways: not the same path twice)


def test_the_fit_on_threads_is_the_fit_on_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """With workers, the whole fit's passes, the series and the refits run on threads, each over players (or
    pairs) of its own: the strengths are those of one thread, to the bit."""
    games, participants, _ = _pool_games(seed=9)
    one = strength.fit(games, participants)
    monkeypatch.setattr(bradley_terry, "THREAD_ROWS", 10)   # (the pool's few rows cut too)
    calls = []
    real = bradley_terry.elo.hessian_product
    monkeypatch.setattr(bradley_terry.elo, "hessian_product", lambda *a: calls.append(a[6:]) or real(*a))
    for workers in (2, 3):
        threads = strength.fit(games, participants, workers=workers)
        assert threads.table.equals(one.table) and threads.ratings.equals(one.ratings)
    assert any(lo > 0 for lo, *_ in calls)   # (the products did run in parts: a part after the first)


def test_the_compiled_co_rows_are_the_merge_of_a_player_s_opponents_and_an_event_s_players() -> None:
    """elo.co_rows finds, for each (player, event) pair, the player's groups whose opponent is among the event's
    players, whichever list is the longer; an index out of range raises."""
    from tbstats.analysis import elo

    rng = np.random.default_rng(5)
    players, events = 40, 12
    many = rng.integers(0, 15, players)
    first = np.r_[0, np.cumsum(many)[:-1]]
    opponent = np.concatenate([np.sort(rng.choice(players, k, replace=False)) for k in many])
    at = [np.sort(rng.choice(players, int(rng.integers(0, 30)), replace=False)) for _ in range(events)]
    at_count = np.array([len(a) for a in at])
    at_start, at_player = np.r_[0, np.cumsum(at_count)[:-1]], np.concatenate(at)
    player, event = rng.integers(0, players, 300), rng.integers(0, events, 300)
    counts = np.zeros(300, dtype=np.int64)
    elo.co_rows(player, event, first, many, opponent, at_start, at_count, at_player, counts, np.zeros(0, np.int64),
                np.zeros(0, np.int64))
    group, where = np.empty(counts.sum(), np.int64), np.empty(counts.sum(), np.int64)
    elo.co_rows(player, event, first, many, opponent, at_start, at_count, at_player, counts, group, where)
    expected = [(g, at_start[e] + int(np.searchsorted(at[e], opponent[g])))
                for p, e in zip(player, event, strict=True) for g in range(first[p], first[p] + many[p])
                if opponent[g] in set(at[e].tolist())]
    assert list(zip(group.tolist(), where.tolist(), strict=True)) == expected and len(expected) > 100
    with pytest.raises(ValueError, match="pair 0 names"):
        elo.co_rows(np.r_[players, player[1:]], event, first, many, opponent, at_start, at_count, at_player,
                    counts, group, where)


def test_the_compiled_side_groups_gather_a_player_s_games_by_opponent() -> None:
    """elo.side_groups gives each wanted player's groups (all his games against one opponent), opponents
    ascending, with their games and score, and each side's group: what a sort of all the sides by (player,
    opponent) gives; players not wanted have none, their sides no group."""
    from tbstats.analysis import elo

    rng = np.random.default_rng(8)
    n, m = 30, 600
    i, j = rng.integers(0, n, m), rng.integers(0, n, m)
    s = rng.choice([0.0, 0.5, 1.0], m)
    order, start, n_games = bradley_terry.sides_by_player(i, rng.integers(0, 5, m), n)
    wanted = (rng.random(n) < 0.7).astype(np.uint8)
    first, many = np.empty(n, np.int64), np.empty(n, np.int64)
    opponent, count, score = np.empty(m, np.int64), np.empty(m), np.empty(m)
    of_side = np.full(m, -1, np.int64)
    made = elo.side_groups(order, start, n_games, wanted, j, s, first, many, opponent, count, score, of_side)
    keys = sorted({(int(a), int(b)) for a, b in zip(i, j, strict=True) if wanted[a]})
    assert made == len(keys) and list(zip(np.repeat(np.arange(n), many).tolist(), opponent[:made].tolist(),
                                           strict=True)) == keys
    assert (first == np.r_[0, np.cumsum(many)[:-1]]).all() and (many[wanted == 0] == 0).all()
    for g, (a, b) in enumerate(keys):
        mine = (i == a) & (j == b)
        assert count[g] == mine.sum() and score[g] == s[mine].sum() and (of_side[mine] == g).all()
    assert (of_side[wanted[i] == 0] == -1).all()
    with pytest.raises(ValueError, match="out of range"):
        bad = np.where(np.arange(m) == np.flatnonzero(wanted[i])[0], n, j)   # (a wanted player's side)
        elo.side_groups(order, start, n_games, wanted, bad, s, first, many, opponent, count, score, of_side)


def test_a_batch_takes_its_archive_strengths_from_the_slice_of_its_tournaments() -> None:
    """The fit's table is in tournament order and a batch joins only the rows of its tournaments' range: the
    strengths are those the whole table gives, for batches anywhere in the archive; a table out of order is
    joined whole."""
    games, participants, _ = _pool_games()
    shuffled = participants[np.random.default_rng(3).permutation(participants.height)]
    fitted = strength.fit(games, shuffled).table
    assert fitted["tournament"].is_sorted()
    assert strength._rows_for(fitted, pl.Series([], dtype=pl.Int64)).is_empty()
    for lo, hi in ((0, 0), (3, 9), (29, 29)):
        players = participants.filter(pl.col("tournament").is_between(lo, hi)).select("tournament", "start_no")
        whole = players.join(fitted, on=["tournament", "start_no"], how="left", maintain_order="left")
        for table in (fitted, fitted.reverse()):
            rows = strength._rows_for(table, players["tournament"])
            assert rows.height <= table.height and (rows.height < table.height) == table["tournament"].is_sorted()
            assert players.join(rows, on=["tournament", "start_no"], how="left", maintain_order="left").equals(whole)


@requires_shared()
def test_archive_proxy_on_real_files() -> None:
    trf = REAL
    result = CliRunner().invoke(main, ["evaluate", str(trf), "--strength", "archive", "-c", NEW, "--no-baseline",
                                       "--format", "csv"])
    assert result.exit_code in (0, 1), result.output
    assert "Bradley-Terry (Elo) fit, leave-one-event-out" in result.stderr
    row = pl.read_csv(result.stdout.encode()).row(0, named=True)
    split = CliRunner().invoke(main, ["evaluate", str(trf), "--strength", "archive", "-c", NEW, "--no-baseline",
                                      "--format", "csv", "--batch-files", "5", "--batch-size", "3", "--workers", "2"])
    assert split.stdout == result.stdout
    batch = sources.load([str(trf)], on_error="collect").batch
    games, participants = strength.games_of(batch)
    fit = strength.fit(games, participants)
    individual = fit.table.filter(~pl.col("tournament").is_in(team_event_ids(batch)))
    assert row["players_left_out"] == individual["strength"].is_null().sum() > 0


def test_evaluate_errors(tmp_path: Path) -> None:
    archive = "data/sample_archive.parquet"
    root = Path(__file__).resolve().parents[1]
    runner = CliRunner()
    bad = runner.invoke(main, ["evaluate", str(root / archive), "--strength", "peak", "-c", NEW])
    assert bad.exit_code == 3 and "--strength peak: the players table has no such column" in bad.output
    bad = runner.invoke(main, ["evaluate", str(root / archive), "--diff", "new,nope", "-c", NEW])
    assert bad.exit_code == 3 and "no configuration named 'nope'" in bad.output
    bad = runner.invoke(main, ["evaluate", str(root / archive), "--diff", "new", "-c", NEW])
    assert bad.exit_code == 2 and "expected A,B" in bad.output
    bad = runner.invoke(main, ["evaluate", str(root / archive), "-c", "random=fide-2026:BH"])
    assert bad.exit_code == 3 and "'random' is the baseline's" in bad.output
    bad = runner.invoke(main, ["evaluate", str(root / archive), "-c", "x=fide-2026:from-file"])
    assert bad.exit_code == 3 and "x: evaluate needs an explicit tie-break list" in bad.output


def test_evaluate_page(batch: Batch) -> None:
    from tbstats.report import render_fairness_html

    result = evaluate_archive([batch], CONFIGS, proxy="rating", pairs=[("new", "old")])
    page = render_fairness_html(result, title="t")
    for anchor in ('id="measures"', 'id="favour"', 'id="difference"', "chart-difference_new_old",
                   "chart-measure_strongest_first", *(f"chart-favour_{b}" for b in fairness.BREAKDOWNS[1:])):
        assert anchor in page, anchor
    assert page.count('<figure class="chart"') == 6 + 5 + 1


@pytest.mark.parametrize(("values", "expected", "left_out"), [
    ([4.0, 3.0, 2.0, 1.0], 1.0, 0),        # the stronger of the tied pair (start no 2) is ranked first by TPN
    ([1.0, 2.0, 3.0, 4.0], 0.0, 0),
    ([0.0, 5.0, 5.0, 0.0], 1.0, 0),        # a shared top strength: the first of the group is one of the strongest
    ([1.0, 2.0, math.nan, 4.0], None, 1),  # fewer than two members with a strength: the group is left out
])
def test_strongest_first_on_a_known_group(values: list[float], expected: float | None, left_out: int) -> None:
    from trf_samples import GOOD

    from tbstats.analysis.quality import measure, table

    b = read_trf([("good.trf", GOOD.encode())]).batch   # points 1.5, 1, 1, 0.5: players 2 and 3 tied
    row = table(measure(b, np.array(values), [parse_config("a=fide-2026:TPN")])).row(0, named=True)
    assert row["tied_groups"] == 1 and row["groups_left_out"] == left_out
    assert row["players_left_out"] == sum(math.isnan(v) for v in values)
    if expected is None:
        assert math.isnan(row["strongest_first"])
    else:
        assert row["strongest_first"] == expected


def test_strength_survives_ingest_next_to_files_without_it(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[1]
    sample, examples = str(root / "data" / "sample_archive.parquet"), str(root / "data" / "examples")
    for target, first_has_it in ((tmp_path / "ds", None), (tmp_path / "a.parquet", True),
                                 (tmp_path / "b.parquet", False)):
        order = [examples, sample] if first_has_it is False else [sample, examples]
        done = CliRunner().invoke(main, ["ingest", *order, "-o", str(target), "--batch-size", "50", "-q"])
        assert done.exit_code == 0, done.output
        players = tabular.read_model(target).players
        if first_has_it is False:   # a flat file keeps the optional columns of its first batch
            assert "strength" not in players.columns
            continue
        assert players["strength"].is_not_null().sum() == 200 * 24
        assert players["strength"].is_null().sum() == players.height - 200 * 24 > 0
        ev = CliRunner().invoke(main, ["evaluate", str(target), "--strength", "strength", "-q", "-c", NEW,
                                       "--batch-size", "30"])
        assert ev.exit_code == 0, ev.output
        teams = team_event_ids(tabular.read_model(target))
        unknown = players.filter(~pl.col("tournament").is_in(teams))["strength"].is_null().sum()
        assert pl.read_csv(ev.stdout.encode())["players_left_out"][0] == unknown > 0


def test_team_events_are_left_out() -> None:
    data = Path(__file__).resolve().parents[1] / "data"
    team = data / "teams" / "team_swiss.trf"
    both = CliRunner().invoke(main, ["evaluate", str(data / "examples"), str(team), "-c", NEW])
    alone = CliRunner().invoke(main, ["evaluate", str(data / "examples"), "-c", NEW])
    assert both.exit_code == alone.exit_code == 0, both.output
    assert "Note: 1 team event(s) left out" in both.stderr and both.stdout == alone.stdout
    only = CliRunner().invoke(main, ["evaluate", str(team), "-c", NEW])
    assert only.exit_code == 3 and "no tournaments to evaluate (1 team events are left out)" in only.output


def test_proxy_reads_players_in_key_order() -> None:
    """The proxy is per player in (tournament, start_no) order whatever the players table's order, for a
    players column and for a key column named as the proxy; a missing column is a clear error."""
    batch = sources.load(["data/sample_archive.parquet"]).batch
    shuffled = Batch(batch.tournaments, batch.players.sample(fraction=1.0, shuffle=True, seed=3), batch.games)
    ordered = batch.players.sort("tournament", "start_no")
    expected = ordered["rating"].cast(pl.Float64).fill_null(math.nan).to_numpy()
    np.testing.assert_array_equal(strength.proxy(shuffled, "rating"), expected)
    np.testing.assert_array_equal(strength.proxy(shuffled, "start_no"), ordered["start_no"].to_numpy())
    with pytest.raises(TbstatsError, match="no such column"):
        strength.proxy(shuffled, "nonesuch")
