"""The driver: blocks of tournaments from their own random streams, on threads if asked."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Final

import numpy as np
import polars as pl

from tbstats.engine.threads import map_threads
from tbstats.io.progress import Progress
from tbstats.model.batch import Batch
from tbstats.simulation.assemble import _assemble, _truth
from tbstats.simulation.config import SimulationConfig, SimulationStats
from tbstats.simulation.pairing import _round_robin_round, _swiss_round
from tbstats.simulation.state import _Block

_MATRIX_BUDGET: Final = 1 << 25  # bytes for the per-block "have met" matrix


@dataclass(frozen=True)
class Simulation:
    """A simulated batch, the players' true strengths, and pairing counters."""

    batch: Batch
    truth: pl.DataFrame  # tournament, start_no, strength
    stats: SimulationStats
    config: SimulationConfig = field(repr=False)


def simulate(config: SimulationConfig, *, workers: int = 1, progress: Progress | None = None) -> Simulation:
    """Simulate ``config.tournaments`` events; the same configuration always gives the same batch.

    ``workers`` > 1 simulates blocks of tournaments on that many threads (numpy releases the GIL for most of
    the work); the result does not depend on it. ``progress`` (a bar over the events) moves round by round.

    >>> sim = simulate(SimulationConfig(tournaments=3, players=8, rounds=5, seed=7))
    >>> sim.batch.games.height, sim.truth.columns
    (120, ['tournament', 'start_no', 'strength'])
    """
    chunk = max(1, min(config.chunk, _MATRIX_BUDGET // (config.players * config.players)))
    jobs = [(k, min(chunk, config.tournaments - first))
            for k, first in enumerate(range(0, config.tournaments, chunk))]
    if workers > 1 and len(jobs) > 1:
        done = map_threads(lambda job: _run_block(config, *job, progress), jobs, workers=workers)
    else:
        done = [_run_block(config, *job, progress) for job in jobs]
    blocks = [block for block, _ in done]
    stats = SimulationStats(**{f.name: sum(getattr(s, f.name) for _, s in done) for f in fields(SimulationStats)})
    return Simulation(_assemble(config, blocks), _truth(config, blocks), stats, config)


def _run_block(config: SimulationConfig, k: int, count: int, progress: Progress | None = None
               ) -> tuple[_Block, SimulationStats]:
    """Simulate block ``k`` (``count`` tournaments) from its own random stream; each round moves ``progress``
    on by its share of the block's events."""
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(config.seed, spawn_key=(k,))))
    stats = SimulationStats()
    block = _Block.start(config, rng, count)
    play_round = _swiss_round if config.kind == "swiss" else _round_robin_round
    for r in range(config.n_rounds):
        play_round(config, rng, block, r, stats)
        if progress is not None:
            progress.advance(count * (r + 1) // config.n_rounds - count * r // config.n_rounds)
    block.release()
    return block, stats
