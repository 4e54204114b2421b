"""What the run checks see of each tournament (:func:`tbstats.run.checks.events`), against a plain per-tournament
reading of the tables: on the real corpus, and on a simulated mix with its ids shuffled and spread out."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from tbstats.io.sources import load
from tbstats.model.batch import Batch
from tbstats.model.teams import team_event_ids
from tbstats.run import checks
from tbstats.simulation import MixConfig, simulate_mix
from tests.helpers import REAL, requires_shared


def _reference(batch: Batch) -> list[tuple[object, ...]]:
    """One row per tournament, in the tournaments' order, read row by row."""
    teams = set(team_event_ids(batch))
    unrated: set[int] = set()
    for tournament, rating in batch.players.select("tournament", "rating").iter_rows():
        if rating is None or rating <= 0:
            unrated.add(tournament)
    return [(t, None if kind is None else kind == "round_robin", played or 0, t in teams, date is not None,
             t in unrated)
            for t, kind, played, date in batch.tournaments.select(
                "tournament", pl.col("event_type").cast(pl.String), "rounds_played", "start_date").iter_rows()]


def _check(batch: Batch) -> None:
    seen = checks.events(batch)
    assert seen.columns == ["tournament", "round_robin", "rounds_played", "team_event", "dated", "unrated"]
    assert seen.dtypes == [pl.Int64, pl.Boolean, pl.Int64, pl.Boolean, pl.Boolean, pl.Boolean]
    assert seen.rows() == _reference(batch)


@requires_shared()
def test_events_of_the_real_corpus() -> None:
    batch = load([str(REAL)], on_error="collect").batch
    assert batch.n_tournaments > 20 and batch.players["rating"].is_null().any()
    _check(batch)


@pytest.mark.parametrize("seed", [1, 2])
def test_events_of_a_mix_whatever_its_ids_and_their_order(seed: int) -> None:
    batch = simulate_mix(MixConfig(events=40, seed=seed, team_share=0.1, round_robin_share=0.3)).batch
    rng = np.random.default_rng(seed)
    ids = batch.tournaments["tournament"].to_numpy()
    new = dict(zip(ids.tolist(), rng.choice(10**6, size=len(ids), replace=False).tolist(), strict=True))
    order = rng.permutation(len(ids))

    def renumbered(df: pl.DataFrame) -> pl.DataFrame:
        return df.with_columns(pl.col("tournament").replace_strict(new, return_dtype=pl.Int64))

    # players of a tournament not in the table (left out below) are not counted anywhere
    shuffled = Batch(renumbered(batch.tournaments)[order[1:]], renumbered(batch.players),
                     renumbered(batch.games), batch.warnings)
    _check(batch)
    _check(shuffled)
    assert checks.events(shuffled)["unrated"].any() and not checks.events(shuffled)["unrated"].all()
