"""Rankings whose lists begin alike share those steps (SharedSteps), or rank some tournaments only (``among``):
each must equal its list ranked alone, over the whole batch.

``rank_all`` (compare, evaluate) and the usual-order search of ``audit`` rank many lists over one context and
reuse the steps of a common beginning (one edition's values; DE under any edition). Sharing must never change a
rank: every list is checked against a fresh context that ranks it alone.
"""

from __future__ import annotations

import numpy as np
import pytest
import reference
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import to_trf, tournaments

from tbstats.engine.compute import make_context
from tbstats.engine.configs import Config, rank_all
from tbstats.engine.standings import SharedSteps, rank_steps, step_keys
from tbstats.engine.tiebreaks import parse_specs
from tbstats.io.trf import read_trf
from tbstats.model.batch import Batch
from tbstats.simulation import MixConfig, simulate_mix

#: lists that begin alike in several ways: a value tie-break, DE (no edition), DE/P, the US order
LISTS = ["BH/C1,BH,SB", "BH/C1,BH,WIN", "BH/C1,SB,BH", "BH/C1", "DE,BH/C1,BH", "DE,WIN,SB", "DE/P,KS",
         "DE,BH/C1", "SB,DE,KS", "ARO/C1,BH", "ARO/C1/U1400,BH", "USCF-MM,USCF-SOLKOFF", "PS,BH,WIN"]
EDITIONS = ["fide-2026", "fide-2024", "fide-legacy", "uscf", "naive"]


def _batch(events: list[reference.RefTournament]) -> Batch:
    result = read_trf([(f"t{i}.trf", to_trf(t).encode()) for i, t in enumerate(events)])
    assert result.errors.is_empty(), result.errors
    return result.batch


@settings(suppress_health_check=[HealthCheck.too_slow], max_examples=30, deadline=None)
@given(st.lists(tournaments(max_players=10, max_rounds=7), min_size=1, max_size=5),
       st.lists(st.tuples(st.sampled_from(LISTS), st.sampled_from(EDITIONS[:2]) | st.sampled_from(EDITIONS)),
                min_size=4, max_size=12))
def test_shared_steps_equal_each_list_alone(events: list[reference.RefTournament],
                                            lists: list[tuple[str, str]]) -> None:
    batch = _batch(events)
    configs = [Config(f"c{k}", edition, tuple(parse_specs(order))) for k, (order, edition) in enumerate(lists)]
    ctx = make_context(batch)
    some = np.array([k % 2 == len(lists) % 2 for k in range(len(events))])   # every other tournament
    shared = SharedSteps()
    for config, got in zip(configs, rank_all(ctx, batch, configs), strict=True):
        alone = rank_steps(make_context(batch), list(config.specs or ()), config.rules)
        assert len(got.steps) == len(alone)
        for step, (a, b) in enumerate(zip(got.steps, alone, strict=True)):
            assert np.array_equal(a.astype(np.int64), b), (str(config), step)
        # ranked among some tournaments only (sharing steps with the lists before it): the same there
        among = some[ctx.roster.tix]
        part = rank_steps(ctx, list(config.specs or ()), config.rules, among=among, shared=shared)
        for step, (a, b) in enumerate(zip(part, alone, strict=True)):
            assert np.array_equal(a[among], b[among]), (str(config), "among", step)


def test_each_list_on_a_mixed_archive() -> None:
    """Larger events than the generated ones above, where a shared second step matters (a list that reused
    only the first step of ``BH/C1,BH`` would rank hundreds of players of ``BH/C1,BH,WIN`` differently)."""
    batch = simulate_mix(MixConfig(events=80, seed=11, round_robin_share=0.2, team_share=0.0)).batch
    configs = [Config(f"{order}@{edition}", edition, tuple(parse_specs(order)))
               for order in LISTS for edition in EDITIONS[:2]]
    for config, got in zip(configs, rank_all(make_context(batch), batch, configs), strict=True):
        alone = rank_steps(make_context(batch), list(config.specs or ()), config.rules)
        assert all(np.array_equal(a.astype(np.int64), b) for a, b in zip(got.steps, alone, strict=True)), str(config)


def test_shared_steps_hold_one_list_and_are_read_only() -> None:
    shared = SharedSteps()
    a = step_keys(parse_specs("BH/C1,BH,SB"), "fide-2026")
    b = step_keys(parse_specs("BH/C1,WIN"), "fide-2026")
    c = step_keys(parse_specs("BH/C1,BH"), "fide-2024")
    arrays = [np.arange(3) + k for k in range(9)]
    for n in range(1, 4):
        shared.hold(a[:n], *arrays[3 * n - 3:3 * n])
    assert [held[2][0] for held in shared.begin(a)] == [2, 5, 8]   # each step's ranks, in order
    assert len(shared.begin(b)) == 1    # only BH/C1 under fide-2026 begins b ...
    assert len(shared.begin(a)) == 1    # ... and what b does not begin with was let go
    assert shared.begin(c) == []        # BH/C1 under another edition is another step
    assert not arrays[0].flags.writeable
    with pytest.raises(ValueError):
        arrays[0][0] = 5


def test_step_keys_name_the_edition_of_value_steps_only() -> None:
    keys = step_keys(parse_specs("DE,BH/C1,USCF-MM"), "fide-2024")
    assert keys == (("DE", ""), ("BH/C1", "fide-2024"), ("USCF-MM", "uscf"))
