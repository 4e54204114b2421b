"""Each event's fingerprint (tbstats.model.fingerprint), which the drawing of lots is keyed on.

- ``--lots SEED`` gives one draw for an event from its TRF file, from a copy under another name read from
  another directory, and from the model ``tbstats ingest`` wrote of it (the draw used to be keyed on the path
  as typed: the same files named from another directory, or ingested, drew other lots for a fifth of the
  players of a mix);
- the fingerprint does not depend on the order of the rows, nor on the other events of the batch, and it
  changes when one game's points, one player's rating or one colour changes;
- the compiled sums over the games (``game_hash_sums``) against a plain Python loop, with runs in any order;
  bad arguments raise instead of reading out of bounds.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner
from helpers import REAL, load_trf, requires_shared

from tbstats.cli import main
from tbstats.model.batch import Batch
from tbstats.model.fingerprint import event_keys
from tbstats.model.loops import game_hash_sums

FILES = [REAL / "papi_web" / "avoine_2023.trf", REAL / "chessresults" / "british2026_champ.trf",
         REAL / "sharly_sce" / "domloup-rapide-2025__t01.trf"]
M64 = (1 << 64) - 1


def _compute(*args: str) -> pl.DataFrame:
    r = CliRunner().invoke(main, ["compute", *args, "-t", "WIN", "--lots", "7", "-q", "--format", "csv"])
    assert r.exit_code == 0, r.output
    return pl.read_csv(r.stdout.encode()).drop("source")


@requires_shared()
def test_one_draw_from_the_file_a_renamed_copy_and_the_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    given = _compute(*map(str, FILES))
    ties = CliRunner().invoke(main, ["compute", *map(str, FILES), "-t", "WIN", "-q", "--format", "csv"])
    shared = pl.read_csv(ties.stdout.encode())
    assert shared.group_by("tournament").agg(pl.col("rank").is_duplicated().any())["rank"].all()  # ties to draw
    assert given.group_by("tournament").agg((pl.col("rank").n_unique() == pl.len()).alias("s"))["s"].all()
    copies = tmp_path / "elsewhere"
    copies.mkdir()
    for i, f in enumerate(FILES):
        shutil.copy(f, copies / f"event{i}.trf")
    ingest = CliRunner().invoke(main, ["ingest", str(copies), "-o", str(tmp_path / "model"), "-q"])
    assert ingest.exit_code == 0, ingest.output
    monkeypatch.chdir(copies)
    assert _compute("event0.trf", "event1.trf", "event2.trf").equals(given)
    assert _compute(".").equals(given)
    assert _compute(str(tmp_path / "model")).equals(given)
    alone = _compute(str(FILES[1]))                      # the same draw alone as among the others
    assert alone.drop("tournament").equals(given.filter(pl.col("tournament") == 1).drop("tournament"))


@pytest.fixture(scope="module")
def batch() -> Batch:
    if not REAL.is_dir():
        pytest.skip("../shared (reference data) is not beside the checkout")
    return Batch.concat([load_trf(f) for f in FILES])


def test_rows_in_any_order_and_events_in_any_batch(batch: Batch) -> None:
    keys = event_keys(batch)
    assert len(set(keys.tolist())) == len(keys) == 3
    shuffled = Batch(*(df.sample(fraction=1.0, shuffle=True, seed=5)
                       for df in (batch.tournaments, batch.players, batch.games)))
    assert not shuffled.games["tournament"].is_sorted()
    assert event_keys(shuffled).tolist() == keys.tolist()
    for i in range(3):
        assert event_keys(batch.select([i])).tolist() == [keys[i]]


@pytest.mark.parametrize("table, change", [
    ("games", pl.col("points") + 1), ("players", pl.col("rating") + 1),
    ("games", pl.when(pl.col("colour") == "w").then(pl.lit("b")).otherwise(pl.lit("w")).cast(pl.Enum(["w", "b"]))),
])
def test_one_changed_field_changes_its_events_key_only(batch: Batch, table: str, change: pl.Expr) -> None:
    keys = event_keys(batch)
    df: pl.DataFrame = getattr(batch, table)
    row = int(np.flatnonzero(df["tournament"].to_numpy() == 1)[3])
    column = change.meta.root_names()[0]
    changed = df.with_columns(pl.when(pl.int_range(pl.len()) == row).then(change).otherwise(pl.col(column))
                              .alias(column))
    other = Batch(**{**{t: getattr(batch, t) for t in ("tournaments", "players", "games")}, table: changed})
    after = event_keys(other)
    assert after[1] != keys[1] and after[[0, 2]].tolist() == keys[[0, 2]].tolist()


def _mix(x: int) -> int:
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def test_compiled_sums_against_a_plain_loop() -> None:
    rng = np.random.default_rng(3)
    n, T = 500, 7
    cols = {"player": rng.integers(1, 40, n, dtype=np.int32), "opponent": rng.integers(0, 40, n, dtype=np.int32),
            "round": rng.integers(1, 12, n, dtype=np.int16), "points": rng.integers(-3, 5, n, dtype=np.int32),
            "gtype": rng.integers(0, 10, n, dtype=np.uint8), "colour": rng.integers(0, 3, n, dtype=np.uint8)}
    run_len = np.array([0, 120, 3, 77, 200, 100], dtype=np.int64)   # runs of one tournament, in any order
    run_t = np.array([2, 5, 0, 5, 1, 3], dtype=np.int64)
    out = np.zeros(T, dtype=np.uint64)
    game_hash_sums(run_t, run_len, *cols.values(), out)
    want = [0] * T
    i = 0
    for t, length in zip(run_t.tolist(), run_len.tolist(), strict=True):
        for _ in range(length):
            a = (int(cols["player"][i]) & 0xFFFFFFFF) | ((int(cols["opponent"][i]) & 0xFFFFFFFF) << 32)
            b = ((int(cols["round"][i]) & 0xFFFF) | ((int(cols["points"][i]) & 0xFFFFFFFF) << 16)
                 | (int(cols["gtype"][i]) << 48) | (int(cols["colour"][i]) << 56))
            want[t] = (want[t] + _mix((_mix(a) + b) & M64)) & M64
            i += 1
    assert out.tolist() == want
    for bad_t, bad_len in (([0, 7], [250, 250]), ([0, -1], [250, 250]), ([0, 1], [250, 249])):
        with pytest.raises(ValueError, match="game_hash_sums"):
            game_hash_sums(np.array(bad_t, dtype=np.int64), np.array(bad_len, dtype=np.int64), *cols.values(),
                           np.zeros(T, dtype=np.uint64))


@requires_shared()
@pytest.mark.parametrize("command", [["compute", "-t", "BH,LOTS"],
                                     ["compare", "-c", "a=fide-2026:BH,LOTS", "-c", "b=fide-2026:SB,LOTS",
                                      "--table", "tournaments"]])
def test_a_listed_lots_draws_alike_in_any_batch(command: list[str]) -> None:
    """LOTS in a list or a configuration, without ``--lots``, draws with seed 0 on the same keys: it drew on the
    batch's tournament ids, so ``--batch-size 1`` gave the second event on other lots."""
    files = [*map(str, FILES), str(REAL / "papi_web" / "domloup-rapide-2022-A.trf")]
    outputs = set()
    for size in ("1", "2", "1000"):
        r = CliRunner().invoke(main, [command[0], *files, *command[1:], "--batch-size", size, "-q", "--format", "csv"])
        assert r.exit_code == 0, r.output
        outputs.add(r.stdout)
    assert len(outputs) == 1 and next(iter(outputs)).count("\n") > 3
