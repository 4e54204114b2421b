"""``compute --teams --lots SEED``: ties left after the team list broken by a seeded drawing of lots, each
team's number drawn from (seed, its event's source, its pairing number): the same in every batch."""

from __future__ import annotations

import polars as pl
from click.testing import CliRunner
from helpers import FIXTURES, REAL, ROOT, load_trf, requires_shared

from tbstats.cli import main
from tbstats.engine.teams.standings import compute_teams

pytestmark = requires_shared()

TEAM_SWISS = ROOT / "data" / "teams" / "team_swiss.trf"
FILES = [str(REAL / "sharly" / "example_trf26.trf"), str(FIXTURES / "teams" / "held_team_exercise.trf"),
         str(TEAM_SWISS), str(REAL / "heltour" / "friendship_cup_2024.trf")]


def test_lots_breaks_only_the_ties_left() -> None:
    batch = load_trf(TEAM_SWISS)
    shared = compute_teams(batch, "EDE,BH:MP")
    assert shared["rank"].to_list() == [2, 4, 3, 1, 5]      # Willows before Oaks on BH:MP already
    tied = compute_teams(batch, "EDE")
    assert sorted(tied["rank"].to_list()) == [1, 1, 3, 4, 5]
    orders = set()
    for seed in range(12):
        drawn = compute_teams(batch, "EDE", lots=seed)
        assert sorted(drawn["rank"].to_list()) == [1, 2, 3, 4, 5]
        assert drawn.drop("rank").equals(tied.drop("rank"))            # values and the EDE column stay
        ranks = dict(drawn.select("team", "rank").iter_rows())
        assert {ranks[1], ranks[4]} == {1, 2} and [ranks[3], ranks[2], ranks[5]] == [3, 4, 5]
        orders.add(ranks[1])
        assert compute_teams(batch, "EDE", lots=seed).equals(drawn)   # same seed, same draw
        assert compute_teams(batch, "EDE,BH:MP", lots=seed)["rank"].to_list() == [2, 4, 3, 1, 5]
    assert orders == {1, 2}                                 # both orders occur over the seeds


def _run(*args: str) -> str:
    r = CliRunner().invoke(main, ["compute", *args, "--teams", "-q"])
    # from-file: FIDE's TRF-2026 sample has a 202 list tbstats cannot use yet (EMGSB/C1/P): rejected, exit 1
    assert r.exit_code == (1 if "from-file" in args and any("example_trf26" in a for a in args) else 0), r.output
    return r.stdout


def test_lots_is_the_same_for_every_batch_size_and_neighbour() -> None:
    for spec in ("MPvGP", "from-file"):
        out = _run(*FILES, "-t", spec, "--lots", "7")
        table = pl.read_csv(out.encode())
        assert table.group_by("tournament").agg((pl.col("rank").n_unique() == pl.len()).alias("strict"))[
            "strict"].all()
        for size in ("1", "3"):
            assert _run(*FILES, "-t", spec, "--lots", "7", "--batch-size", size) == out
    # an event's draw does not depend on which events come before it (its tournament id)
    alone = pl.read_csv(_run(str(TEAM_SWISS), "-t", "MPvGP", "--lots", "7").encode())
    after = pl.read_csv(_run(*FILES, "-t", "MPvGP", "--lots", "7").encode()).filter(
        pl.col("source") == str(TEAM_SWISS))
    assert after.drop("tournament").equals(alone.drop("tournament"))
