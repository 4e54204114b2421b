"""Comparisons of configurations and audits of declared standings."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner
from helpers import FIXTURES, ROOT, load_trf, requires_shared

from tbstats.analysis.audit import audit, inversions
from tbstats.analysis.compare import breakdown, compare, wilson
from tbstats.analysis.kendall import kendall_distance
from tbstats.cli import main
from tbstats.engine.compute import compute, make_context
from tbstats.engine.configs import parse_config, read_configs
from tbstats.errors import TbstatsError
from tbstats.io.sources import load
from tbstats.model.teams.batch import team_event_ids

EXAMPLES = ROOT / "data" / "examples"


def _batch():  # type: ignore[no-untyped-def]
    return load([str(EXAMPLES)], on_error="raise").batch


def test_identical_twins_change_nothing() -> None:
    c = compare(_batch(), [parse_config("a=fide-2026:BH/C1,BH,SB,DE"), parse_config("b=fide-2026:BH/C1,BH,SB,DE")])
    row = c.pairs.row(0, named=True)
    assert (row["winner_changed"], row["podium_changed"], row["topk_changed"], row["any_rank_changed"]) == (0, 0, 0, 0)
    assert row["mean_kendall_distance"] == 0.0
    assert c.drilldown.height == 0


def test_edition_change_shows_up() -> None:
    """rules.md E2: A and C swap 2nd and 3rd between fide-2024 and fide-2026 (same order)."""
    batch = load([str(EXAMPLES / "e2_cut_exception.trf")], on_error="raise").batch
    c = compare(batch, [parse_config("old=fide-2024:BH,BH/C1,SB"), parse_config("new=fide-2026:BH,BH/C1,SB")])
    row = c.pairs.row(0, named=True)
    assert (row["winner_changed"], row["podium_changed"], row["any_rank_changed"]) == (0, 0, 1)
    assert row["mean_kendall_distance"] == pytest.approx(1 / 10)  # one discordant pair of 10


def test_three_champions() -> None:
    """rules.md S1: Buchholz, Cut-1 and Median-1 crown three different players (same crosstable)."""
    batch = load([str(EXAMPLES / "s1_three_champions.trf")], on_error="raise").batch
    c = compare(batch, [parse_config("bh=fide-2026:BH"), parse_config("c1=fide-2026:BH/C1"),
                        parse_config("m1=fide-2026:BH/M1")])
    assert c.pairs["winner_changed"].to_list() == [1, 1, 1]
    winners = c.drilldown.filter(pl.col("rank_a") == 1).group_by("a").agg(pl.col("name").unique())
    assert {r[0]: r[1] for r in winners.iter_rows()} == {"bh": ["Bo"], "c1": ["Ana"]}
    assert set(c.drilldown.filter((pl.col("a") == "c1") & (pl.col("rank_b") == 1))["name"]) == {"Cai"}


def test_depth_and_ties_at_top() -> None:
    c = compare(_batch(), [parse_config("a=fide-2026:BH,SB"), parse_config("b=fide-2026:SB")])
    cfg = {r["config"]: r for r in c.configs.iter_rows(named=True)}
    depth = c.depth.filter(pl.col("config") == "a")
    assert depth["settled_here"].sum() == cfg["a"]["tiebreaks_needed_at_top"]
    assert cfg["a"]["settled"] + cfg["a"]["not_settled"] == cfg["a"]["tiebreaks_needed_at_top"]


def test_breakdown_and_features() -> None:
    batch = load([str(EXAMPLES), str(ROOT / "data" / "teams")], on_error="raise").batch
    c = compare(batch, [parse_config("a=fide-2024:BH"), parse_config("b=fide-2026:BH")])
    by_type = breakdown(c, "type")
    assert set(by_type["type"]) == {"swiss", "round_robin", "team"}   # team events are their own type
    teams = by_type.filter(pl.col("type") == "team")["tournaments"].sum()
    assert teams == len(team_event_ids(batch)) == 1
    assert by_type["tournaments"].sum() == c.pairs["tournaments"][0]
    with pytest.raises(TbstatsError, match="unknown feature"):
        breakdown(c, "colour")


def test_kendall_distance_and_wilson() -> None:
    tix = np.array([0, 0, 0, 1, 1])
    a = np.array([1, 2, 3, 1, 2])
    assert kendall_distance(a, np.array([3, 2, 1, 1, 2]), tix, 2).tolist() == [1.0, 0.0]
    assert kendall_distance(a, np.array([1, 1, 3, 1, 1]), tix, 2).tolist() == pytest.approx([0.5 / 3, 0.5])
    lo, hi = wilson(0, 10)
    assert float(lo) == 0.0 and 0.25 < float(hi) < 0.35


def test_config_parsing(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(TbstatsError, match="NAME=EDITION:SPEC"):
        parse_config("BH/C1,BH")
    with pytest.raises(TbstatsError, match="unknown rule edition"):
        parse_config("x=fide-2025:BH")
    f = tmp_path / "c.toml"
    f.write_text('[configs]\nold = "fide-2024:BH/C1,BH"\n[[config]]\nname = "new"\nrules = "auto"\n'
                 'tiebreaks = ["BH/C1", "BH"]\n')
    assert [str(c) for c in read_configs(f)] == ["old=fide-2024:BH/C1,BH", "new=auto:BH/C1,BH"]


def test_from_file_uses_declared_lists() -> None:
    text = ("012 t\nXXR 1\n202 BH,SB\n" + "001    1      A{:>32}{:44}   2 w 1\n".format("", "")
            + "001    2      B{:>32}{:44}   1 b 0\n".format("", ""))
    from tbstats.io.trf import read_trf
    batch = read_trf([("t.trf", text.encode())]).batch
    c = compare(batch, [parse_config("own=auto:from-file"), parse_config("x=fide-2026:BH")])
    assert c.configs["not_computable"].to_list() == [0, 0]


def test_inversions() -> None:
    tix = np.zeros(4, dtype=np.int64)
    ours = np.array([1, 2, 2, 4])
    assert inversions(ours, np.array([1, 3, 2, 4]), tix, 1).tolist() == [0]  # a tie broken either way
    assert inversions(ours, np.array([2, 1, 3, 4]), tix, 1).tolist() == [1]
    assert inversions(ours, np.array([-1, -1, -1, -1]), tix, 1).tolist() == [0]


@requires_shared()
def test_audit_finds_the_declared_order() -> None:
    """The 15-player fixture's own rank column is the 2024 ranking by PTS, SB, SB/C1, SB/C2."""
    batch = load_trf(FIXTURES / "swiss_with_many_unplayed_rounds.trf")
    ctx = make_context(batch)
    per_t, _ = audit(batch, ctx, rules="fide-2024", tiebreaks="SB,SB/C1,SB/C2")
    assert per_t["status"].to_list() == ["agrees"]
    per_t, per_p = audit(batch, ctx, rules="fide-2026", tiebreaks="SB,SB/C1,SB/C2")
    assert per_t["status"].to_list() == ["agrees under fide-2024"]
    moved = compute(batch, "SB,SB/C1,SB/C2", rules="fide-2026").filter(
        pl.col("rank") != pl.col("start_no").replace_strict(dict(zip(per_p["start_no"], per_p["declared_rank"],
                                                                     strict=True)), default=None))
    assert set(per_p["start_no"]) >= {3, 10, 12, 14} and moved.height >= 4


def test_compare_cli_formats(tmp_path) -> None:  # type: ignore[no-untyped-def]
    runner = CliRunner()
    args = ["compare", str(EXAMPLES), "-c", "a=fide-2024:BH,SB", "-c", "b=fide-2026:BH,SB", "-q"]
    r = runner.invoke(main, [*args, "--format", "csv"])
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[0].startswith("a,b,tournaments,winner_changed,winner_changed_rate")
    r = runner.invoke(main, [*args, "--by", "type", "--format", "json"])
    assert r.exit_code == 0 and '"feature"' in r.stdout
    r = runner.invoke(main, [*args, "--table", "depth", "--format", "md"])
    assert r.exit_code == 0 and "| config | depth | tiebreak | settled_here |" in r.stdout
    r = runner.invoke(main, ["compare", str(EXAMPLES), "-c", "a=fide-2024:BH", "-q"])
    assert r.exit_code == 3 and "at least two configurations" in r.output


def test_audit_cli() -> None:
    r = CliRunner().invoke(main, ["audit", str(EXAMPLES), "-t", "BH/C1,BH,SB", "--format", "csv", "-q"])
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[0] == (
        "source,tournament,players,points_differ,rank_conflicts,status,"
        "order,order_rules,order_tiebreaks,order_differ,order_kendall,matching")


def test_drilldown_explain_commands_quote_the_file_and_name_the_event_of_a_file_of_several() -> None:
    """The drill-down's commands are built once per tournament: a file name a shell would split is quoted, the
    event of a file of several (source FILE#K+1) is named by --tournament K."""
    from tbstats.analysis.compare import _explain_parts

    heads, tails = _explain_parts(np.array(["plain.trf", "my event's file.trf#3", "dir/x.trf#1"], dtype=object))
    assert heads == ["tbstats explain plain.trf", "tbstats explain 'my event'\"'\"'s file.trf'",
                               "tbstats explain dir/x.trf"]
    assert tails == ["", " --tournament 2", " --tournament 0"]


@pytest.mark.parametrize("order", ["sorted", "shuffled"])
def test_per_event_flags_by_reduceat_equal_the_count_of_players_flagged(order: str) -> None:
    """Whether any player of an event holds a mask, events with no player among them (False there)."""
    from tbstats.analysis.compare import _Events

    rng = np.random.default_rng(3)
    tix = np.sort(rng.choice([0, 1, 2, 4, 5, 7], size=60))   # events 3 and 6 have no player
    if order == "shuffled":
        tix = rng.permutation(tix)
    events = _Events(tix, 8)
    for mask in (rng.random(60) < 0.1, np.zeros(60, dtype=bool), np.ones(60, dtype=bool)):
        assert events.any(mask).tolist() == (np.bincount(tix[mask], minlength=8) > 0).tolist()
