"""explain agrees with the engine in every family: a sum's rows add up to the value, an average's rows average it."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import pytest
from helpers import FIXTURES, ROOT, requires_shared

from tbstats.analysis.explain import EXPLAINERS, explain
from tbstats.engine.tiebreaks import TIEBREAKS
from tbstats.io.sources import load
from tbstats.model.batch import Batch

EXAMPLES = ROOT / "data" / "examples"
#: Every registry entry, with the modifiers that change which rounds count.
SPECS = [name for name in TIEBREAKS] + ["BH/C1", "BH/M1", "SB/C1", "FB/C1", "PS/C1", "KS/L-1", "KS/L2",
                                        "ARO/C1", "ARO/M1", "AOB/F", "TPN/R"]
#: Averages over per-round elements (rounded half up) and the element column each lists.
AVERAGES = {"ARO": "opponent_rating", "USCF-AVGOPP": "opponent_rating", "APRO": "opponent_tpr",
            "APPO": "opponent_ptp"}


def _files() -> list[Path]:
    chosen = sorted(EXAMPLES.glob("*.trf"))
    if FIXTURES.is_dir():
        chosen += [FIXTURES / f"{name}.trf" for name in ("held_swiss_9", "swiss_with_many_unplayed_rounds",
                                                       "held_round_robin", "sb_c1_two_vurs")]
    return chosen


@pytest.fixture(scope="module", params=_files(), ids=lambda p: p.stem)
def batch(request: pytest.FixtureRequest) -> Batch:
    return load(request.param).batch


def test_every_registry_entry_has_an_explainer() -> None:
    assert set(EXPLAINERS) == set(TIEBREAKS)


@pytest.mark.parametrize("spec", SPECS)
def test_rows_agree_with_the_value(batch: Batch, spec: str) -> None:
    players = sorted(batch.players["start_no"].to_list())
    for player in players[:2] + players[-2:]:
        ex = explain(batch, player=player, tiebreak=spec, unrated_rating=1400)
        assert ex.rounds.height == int(batch.tournaments["rounds"].max() or ex.rounds.height) or ex.rounds.height
        if ex.is_sum:
            total = sum(x for x in ex.rounds["contribution"].to_list() if x is not None)
            assert ex.value is not None and math.isclose(total, ex.value, abs_tol=1e-9), (spec, player, ex.rounds)
        elif spec.split("/")[0] in AVERAGES:
            rows = ex.rounds.filter(ex.rounds["cut"].is_null())
            elements = [x for x in rows[AVERAGES[spec.split("/")[0]]].to_list() if x is not None]
            if ex.value is None:
                assert not elements, (spec, player)
                continue
            mean = Fraction(sum(int(x) for x in elements), len(elements))
            assert ex.value == math.floor(mean + Fraction(1, 2)), (spec, player, ex.rounds)
            assert "not a sum of rounds" in ex.summary
        else:
            assert "contribution" not in ex.rounds.columns and "not" in ex.summary, (spec, ex.summary)


@requires_shared()
def test_the_aro_of_the_report() -> None:
    """The issue's case: ARO/C1/U1400 of player 3 in arad2026_a is 2229 and its rows are opponents' ratings."""
    path = ROOT.parent / "shared" / "data" / "trf" / "chessresults" / "arad2026_a.trf"
    ex = explain(load(path).batch, player=3, tiebreak="ARO/C1/U1400")
    assert ex.value == 2229 and not ex.is_sum
    assert "opponent_score" not in ex.rounds.columns and "contribution" not in ex.rounds.columns
    assert ex.rounds["opponent_rating"].null_count() < ex.rounds.height
    assert "the average of 6 opponents' ratings, not a sum of rounds" in ex.summary
