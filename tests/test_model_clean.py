"""The fast proof that a model is clean (tbstats.io.clean) never hides a problem the checker would list."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from helpers import FIXTURES, REAL, requires_shared
from test_model_check import CASES, Tables, good
from trf_samples import GOOD

from tbstats.io import check, clean
from tbstats.io.trf import read_trf


def located(tables: Tables) -> Tables:
    return {t: check.locate(tables[t], f"{t}.parquet") for t in ("tournaments", "players", "games")}


def ledgers(tables: Tables, monkeypatch: pytest.MonkeyPatch) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The checker's ledger with the proof, and without it (every table checked row by row)."""
    fast = check.check_model(tables)
    with monkeypatch.context() as m:
        m.setattr(clean, "games_clean", lambda *a: False)
        m.setattr(clean, "players_clean", lambda *a: False)
        slow = check.check_model(tables)
    return fast, slow


def many_events() -> Tables:
    b = read_trf([(f"e{k}.trf", GOOD.encode()) for k in range(40)]).batch
    return {"tournaments": b.tournaments, "players": b.players, "games": b.games}


def test_a_clean_model_is_proven_clean() -> None:
    tables = located(many_events())
    t, p, g = tables["tournaments"], tables["players"], tables["games"]
    assert clean.players_clean(p, t)
    assert clean.games_clean(g, clean.context(p, t), check._rules())


@requires_shared()
def test_the_real_files_are_proven_clean_or_checked() -> None:
    paths = [p for root in (REAL, FIXTURES) for p in sorted(root.rglob("*")) if p.suffix.lower() in (".trf", ".txt")]
    b = read_trf([(str(p), p.read_bytes()) for p in paths]).batch
    tables = located({"tournaments": b.tournaments, "players": b.players, "games": b.games})
    t, p = tables["tournaments"], tables["players"]
    ctx = clean.context(p, t)
    proven = [clean.games_clean(b.games.filter(pl.col("tournament") == k), ctx, check._rules())
              for k in range(b.n_tournaments)]
    assert sum(proven) > len(proven) // 2   # most real events are full grids


@pytest.mark.parametrize("case", list(CASES))
def test_every_damage_is_left_to_the_checker(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    mutate = CASES[case][0]
    fast, slow = ledgers(located(mutate(good())), monkeypatch)
    assert slow.height
    assert fast.equals(slow)


_VALUES: dict[str, list[object]] = {
    "tournament": [None, -1, 0, 1, 2, 39, 40, 1 << 50],
    "player": [None, 0, 1, 2, 3, 4, 5, 1 << 21],
    "round": [None, 0, 1, 2, 3],
    "opponent": [None, 0, 1, 2, 3, 4, 5, -3],
    "result": [None, "", "1", "0", "=", "w", "D", "+", "-", "U", "F", "H", "Z", "X", "?", "Q", " 1", "10"],
    "points": [None, 0, 1, 2, 3],
    "played": [None, True, False],
    "game_type": [None, "played", "forfeit_win", "forfeit_loss", "double_forfeit", "pab", "full_bye", "half_bye",
                  "zero_bye", "absent", "pending"],
    "start_no": [None, 0, 1, 2, 5, 1 << 21],
    "rating": [None, -1, 0, 2000],
    "declared_rank": [None, 0, 1, 3],
}


def test_random_damage_gives_the_checkers_ledger(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cells of a clean model set to nearby, null or odd values, one to three at a time: the ledger with the
    proof is the checker's own, whether the damage breaks a rule or not."""
    base = many_events()
    rng = np.random.default_rng(9)
    damaged = 0
    for _ in range(200):
        tables = dict(base)
        for _ in range(int(rng.integers(1, 4))):
            table = "games" if rng.random() < 0.8 else "players"
            shape = rng.random()
            if shape < 0.15:   # a row dropped, repeated, or moved elsewhere
                df, row = tables[table], int(rng.integers(tables[table].height))
                kept = df.filter(pl.int_range(pl.len()) != row)
                at = int(rng.integers(kept.height))
                tables[table] = (kept if shape < 0.05 else pl.concat([kept.head(at), df.slice(row, 1), kept.slice(at)])
                                 if shape < 0.1 else pl.concat([df.head(at), df.slice(row, 1), df.slice(at)]))
                continue
            columns = [c for c in _VALUES if c in tables[table].columns]
            column = columns[int(rng.integers(len(columns)))]
            row = int(rng.integers(tables[table].height))
            value = _VALUES[column][int(rng.integers(len(_VALUES[column])))]
            df = tables[table]
            mask = pl.int_range(pl.len()) == row
            tables[table] = df.with_columns(pl.when(mask).then(pl.lit(value, dtype=df.schema[column]))
                                            .otherwise(pl.col(column)).alias(column))
        fast, slow = ledgers(located(tables), monkeypatch)
        assert fast.equals(slow)
        damaged += slow.height > 0
    assert 50 < damaged < 200
