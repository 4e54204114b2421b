"""A seeded archive drawn like a real one: many event shapes, kinds and rates (:class:`MixConfig`, :func:`iter_mix`).

Per event, from the block's random stream:

Kind
    Swiss (the rest), round robin (``round_robin_share``), double round robin (``double_round_robin_share``)
    or team Swiss (``team_share``).
Players
    Swiss: log-normal, median ``players_median``, log-sd ``players_sigma``, rounded and clipped to
    ``min_players``..``max_players`` (most events small or medium, a long tail of large opens). Round robins:
    uniform in ``round_robin_players``, double round robins in ``double_round_robin_players``. Team events: 8 to
    14 teams of 4 or 6 boards and a reserve (see :mod:`tbstats.simulation.teams`).
Rounds
    Swiss: 3 to ``max_swiss_rounds`` (13) with weights :data:`SWISS_ROUNDS` (5 to 9 most common; the weights of
    the longer ones left out when fewer are allowed, the rest in proportion), at most two fewer than a full cycle
    (so small Swiss fields can be paired without rematches); round robins one cycle, double round robins two;
    team events 5 to 9, at most two fewer than a cycle of the teams.
Rates
    Events of one shape (kind, players, rounds) are simulated together in runs of at most ``group`` events
    (one :func:`~tbstats.simulation.simulate` call); each run draws its own rates: unrated share 0 (a quarter
    of runs) or uniform up to ``unrated_max``; requested half-point byes 0 (a third) or up to 5% per player and
    round, zero-point byes 0 (half) or up to 1% (Swiss only: round robins grant none); forfeits up to 2% per
    game, double forfeits up to 0.3%; withdrawals 0 (a third) or up to 6% of players; the event level
    uniform in 1300..2300. Odd fields get a pairing-allocated bye (Swiss) or a free round (round robins).

Profiles (:data:`PROFILES`, :func:`profile_config`): ``mix``, the defaults, a federation's whole archive; ``club``,
the events a club or a small federation runs: Swiss of 7 to 70 players (median 22) and 3 to 11 rounds, a fifth
round robins of 4 to 12 players, no double round robins or team events (the kinds and ranges of issue 22's hidden
archive); ``club-wide``, the same with the Swiss sizes spread over the range (median 36): about 236 game rows an
event, the size of that archive too (1.37M game rows in 6,000 events).

Identity
    Simulated events carry what a real file does besides its games (:mod:`tbstats.simulation.identity`):
    players' names (spelt with their letters beyond ASCII in a third of the events: files to decode), sexes,
    titles, federations, FIDE ids and birth dates, and the event's city, federation, dates (from 1 March to 30
    November 2026), arbiter, time control and, for half of them, round dates.

People
    Players are drawn from a population of ``persons_per_event`` people per event of the archive
    (:mod:`tbstats.simulation.population`: a rating, federation and activity each, a long tail of regulars), so
    that they come back from event to event under one FIDE id, as in a real archive: with the default 6, a
    rated person plays about 4 events of the archive on average, the most active of 100 about 25. Team events'
    players are their own.

Reproducibility: block ``k`` (events ``k * block`` ..) draws from ``PCG64(SeedSequence(seed, spawn_key=(k,)))``;
every simulated run gets its own seed from that stream, so the same configuration gives the same archive,
block by block, whatever reads it. ``block`` and ``group`` are part of the random stream.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt
import polars as pl

from tbstats.errors import TbstatsError
from tbstats.io.trf import read_trf
from tbstats.model.batch import Batch
from tbstats.simulation.config import SimulationConfig
from tbstats.simulation.driver import simulate
from tbstats.simulation.identity import dress, people
from tbstats.simulation.population import Population
from tbstats.simulation.teams import team_event_texts

#: Event kinds, in the order of their codes.
KINDS: Final = ("swiss", "round_robin", "double_round_robin", "team")
_SWISS, _RR, _DRR, _TEAM = range(4)
#: Weights of the number of rounds of a Swiss event.
SWISS_ROUNDS: Final = {3: 0.03, 4: 0.05, 5: 0.14, 6: 0.12, 7: 0.22, 8: 0.10, 9: 0.18, 10: 0.05, 11: 0.06,
                       12: 0.025, 13: 0.025}
_TEAM_BOARDS: Final = (4, 6)
#: The random stream of the archive's people (``spawn_key=(POPULATION_STREAM,)``; block ``k`` draws from ``(k,)``).
POPULATION_STREAM: Final = 1 << 32


@dataclass(frozen=True)
class MixConfig:
    """What to draw; shares are of events, players are per event (see the module text)."""

    events: int = 1000
    seed: int = 0
    round_robin_share: float = 0.15
    double_round_robin_share: float = 0.05
    team_share: float = 0.02
    players_median: float = 24.0
    players_sigma: float = 0.75
    min_players: int = 6
    max_players: int = 300
    round_robin_players: tuple[int, int] = (4, 14)
    double_round_robin_players: tuple[int, int] = (4, 8)
    unrated_max: float = 0.3
    #: the longest Swiss event, in rounds (3 to 13: :data:`SWISS_ROUNDS`)
    max_swiss_rounds: int = 13
    start_date: dt.date = dt.date(2026, 3, 1)
    #: events per random stream (and per batch of :func:`iter_mix`)
    block: int = 5000
    #: events of one shape simulated together with one draw of rates, at most
    group: int = 16
    #: the people players are drawn from, per event of the archive (0: every player someone new); see
    #: :mod:`tbstats.simulation.population`
    persons_per_event: float = 6.0

    def __post_init__(self) -> None:
        shares = (self.round_robin_share, self.double_round_robin_share, self.team_share)
        if min(shares) < 0 or sum(shares) > 1:
            raise TbstatsError(f"the shares of round robins, double round robins and team events must be >= 0 and "
                               f"sum to at most 1 (got {', '.join(map(str, shares))})")
        if self.events < 0 or self.seed < 0 or self.block < 1 or self.group < 1 or self.persons_per_event < 0:
            raise TbstatsError("events, seed and persons_per_event must be >= 0, block and group >= 1")
        if not 2 <= self.min_players <= self.max_players <= 9999:
            raise TbstatsError(f"players must satisfy 2 <= min_players <= max_players <= 9999 "
                               f"(got {self.min_players}..{self.max_players})")
        for name in ("round_robin_players", "double_round_robin_players"):
            lo, hi = getattr(self, name)
            if not 3 <= lo <= hi <= 64:
                raise TbstatsError(f"{name} must be a range within 3..64 (got {lo}..{hi})")
        if not 3 <= self.max_swiss_rounds <= max(SWISS_ROUNDS):
            raise TbstatsError(f"max_swiss_rounds must be within 3..{max(SWISS_ROUNDS)} (got {self.max_swiss_rounds})")
        if self.players_median <= 0 or self.players_sigma < 0 or not 0 <= self.unrated_max <= 1:
            raise TbstatsError("players_median must be > 0, players_sigma >= 0, unrated_max in [0, 1]")


_CLUB: Final[dict[str, object]] = {
    "round_robin_share": 0.2, "double_round_robin_share": 0.0, "team_share": 0.0, "players_median": 22.0,
    "players_sigma": 0.6, "min_players": 7, "max_players": 70, "round_robin_players": (4, 12), "max_swiss_rounds": 11}

#: Named archive shapes: the fields each one sets on :class:`MixConfig` (see the module text).
PROFILES: Final[dict[str, dict[str, object]]] = {
    "mix": {},
    "club": _CLUB,
    "club-wide": {**_CLUB, "players_median": 36.0, "players_sigma": 0.55},
}


def profile_config(profile: str, *, events: int, seed: int) -> MixConfig:
    """The configuration of a named profile (:data:`PROFILES`) for ``events`` events drawn with ``seed``.

    >>> profile_config("club", events=10, seed=1).max_players
    70
    """
    if profile not in PROFILES:
        raise TbstatsError(f"unknown archive profile {profile!r} (expected one of {', '.join(PROFILES)})")
    return MixConfig(events=events, seed=seed, **PROFILES[profile])  # type: ignore[arg-type]


@dataclass(frozen=True)
class MixBlock:
    """One block of a mixed archive: its events (ids ``first`` ..), their kinds, and the players' true strengths
    (team events have none)."""

    first: int
    batch: Batch
    kinds: pl.DataFrame   # tournament, kind, players, rounds
    truth: pl.DataFrame   # tournament, start_no, strength


def iter_mix(config: MixConfig) -> Iterator[MixBlock]:
    """The archive block by block (``config.block`` events each, ids numbered from 0 across blocks), so a large
    archive is written in bounded memory.

    >>> blocks = list(iter_mix(MixConfig(events=30, seed=3, block=20)))
    >>> [b.batch.n_tournaments for b in blocks], blocks[1].batch.tournaments["tournament"].min()
    ([20, 10], 20)
    """
    persons = round(config.persons_per_event * config.events)
    population = people(persons, np.random.Generator(np.random.PCG64(np.random.SeedSequence(
        config.seed, spawn_key=(POPULATION_STREAM,))))) if persons else None
    for k, first in enumerate(range(0, config.events, config.block)):
        yield _block(config, k, first, min(config.block, config.events - first), population)


def simulate_mix(config: MixConfig) -> MixBlock:
    """The whole archive as one block (for small archives; see :func:`iter_mix`)."""
    blocks = list(iter_mix(config))
    if not blocks:
        return _assemble(0, [], [], np.zeros(0, np.int8), np.zeros(0, np.int64), np.zeros(0, np.int64))
    return MixBlock(0, Batch.stacked([b.batch for b in blocks]), pl.concat([b.kinds for b in blocks]),
                    pl.concat([b.truth for b in blocks]))


def draw_events(config: MixConfig, rng: np.random.Generator, count: int
                ) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Kind code, players (teams for team events) and rounds of ``count`` events."""
    u = rng.random(count)
    edges = np.cumsum([config.round_robin_share, config.double_round_robin_share, config.team_share])
    kind = np.where(u < edges[0], _RR, np.where(u < edges[1], _DRR, np.where(u < edges[2], _TEAM, _SWISS)))
    kind = kind.astype(np.int8)
    swiss = np.rint(np.exp(np.log(config.players_median) + config.players_sigma * rng.standard_normal(count)))
    swiss = np.clip(swiss, config.min_players, config.max_players).astype(np.int64)
    rr = rng.integers(config.round_robin_players[0], config.round_robin_players[1] + 1, size=count)
    drr = rng.integers(config.double_round_robin_players[0], config.double_round_robin_players[1] + 1, size=count)
    teams = rng.integers(8, 15, size=count)
    players = np.select([kind == _SWISS, kind == _RR, kind == _DRR], [swiss, rr, drr], teams).astype(np.int64)
    cycle = players + players % 2 - 1
    allowed = {r: w for r, w in SWISS_ROUNDS.items() if r <= config.max_swiss_rounds}
    weights = np.array(list(allowed.values()))
    if len(allowed) < len(SWISS_ROUNDS):   # (the full table as it is: the default archives stay the same)
        weights = weights / weights.sum()
    wanted = rng.choice(np.array(list(allowed)), size=count, p=weights)
    team_rounds = rng.integers(5, 10, size=count)
    capped = np.maximum(3, np.minimum(np.where(kind == _TEAM, team_rounds, wanted), cycle - 2))
    rounds = np.select([kind == _RR, kind == _DRR], [cycle, 2 * cycle], capped).astype(np.int64)
    return kind, players, rounds


def _block(config: MixConfig, k: int, first: int, count: int, population: Population | None) -> MixBlock:
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(config.seed, spawn_key=(k,))))
    kind, players, rounds = draw_events(config, rng, count)
    boards = rng.choice(np.array(_TEAM_BOARDS), size=count)
    order = np.lexsort((rounds, players, kind))   # stable: events of one shape stay in id order
    key = np.stack([kind[order], players[order], rounds[order]], axis=1)
    starts = np.flatnonzero(np.r_[True, (key[1:] != key[:-1]).any(axis=1)])
    parts: list[Batch] = []
    truths: list[pl.DataFrame] = []
    team_ids: list[int] = []
    team_texts: list[str] = []
    for lo, hi in zip(starts, np.r_[starts[1:], count], strict=True):
        for g in range(lo, hi, config.group):
            idx = order[g:min(g + config.group, hi)]
            ids = first + idx.astype(np.int64)
            seed = int(rng.integers(1 << 62))
            c, p, r = int(kind[idx[0]]), int(players[idx[0]]), int(rounds[idx[0]])
            if c == _TEAM:
                team_ids += ids.tolist()
                team_texts += team_event_texts(
                    len(idx), teams=p, boards=int(boards[idx[0]]), rounds=r, seed=seed,
                    names=[f"Mixed archive {config.seed}, team event {i}" for i in ids.tolist()],
                    bye_rate=float(rng.uniform(0, 0.02)), forfeit_rate=float(rng.uniform(0, 0.02)),
                    strength_mean=float(rng.uniform(1300, 2300)), start_date=config.start_date)
                continue
            sim = simulate(_config(config, rng, c, p, r, len(idx), seed))
            parts.append(_renumbered(sim.batch, ids, config.seed))
            truths.append(sim.truth.with_columns(pl.Series("tournament", ids[sim.truth["tournament"].to_numpy()])))
    # names, federations, titles, ids, dates and records from a stream of their own: the games stay the seed's
    dressing = np.random.Generator(np.random.PCG64(np.random.SeedSequence(config.seed, spawn_key=(k, 1))))
    parts = [dress(part, dressing, population) for part in parts]
    if team_texts:
        read = read_trf([(f"mix/{config.seed}/{i}", t.encode()) for i, t in zip(team_ids, team_texts, strict=True)])
        if read.errors.height:
            raise TbstatsError(f"a generated team event cannot be read: {read.errors.row(0, named=True)}")
        parts.append(_renumbered(read.batch, np.asarray(team_ids, np.int64), None))
    return _assemble(first, parts, truths, kind, players, rounds)


def _config(config: MixConfig, rng: np.random.Generator, kind: int, players: int, rounds: int, count: int,
            seed: int) -> SimulationConfig:
    """One run's simulation settings, its rates drawn from ``rng``."""
    def maybe(p_zero: float, high: float) -> float:
        value = float(rng.uniform(0, high))
        return 0.0 if rng.random() < p_zero else value

    swiss = kind == _SWISS
    return SimulationConfig(
        tournaments=count, players=players, rounds=rounds, kind="swiss" if swiss else "round_robin", seed=seed,
        start_date=config.start_date, strength_mean=float(rng.uniform(1300, 2300)),
        unrated_rate=maybe(0.25, config.unrated_max), half_bye_rate=maybe(1 / 3, 0.05) if swiss else 0.0,
        zero_bye_rate=maybe(0.5, 0.01) if swiss else 0.0, forfeit_rate=float(rng.uniform(0, 0.02)),
        double_forfeit_rate=float(rng.uniform(0, 0.003)), withdrawal_rate=maybe(1 / 3, 0.06))


def _renumbered(batch: Batch, ids: npt.NDArray[np.int64], seed: int | None) -> Batch:
    """``batch`` with tournament ``i`` renumbered ``ids[i]`` (in its order of ids) and, for simulated events,
    named after it."""
    local = batch.tournaments["tournament"].to_numpy()
    lookup = np.zeros(int(local.max()) + 1, np.int64)
    lookup[local] = ids[np.argsort(np.argsort(local))]

    def renum(df: pl.DataFrame) -> pl.DataFrame:
        return df.with_columns(pl.Series("tournament", lookup[df["tournament"].to_numpy()], pl.Int64))

    t = renum(batch.tournaments)
    if seed is not None:
        t = t.with_columns(pl.format("mix/{}/{}", pl.lit(seed), "tournament").alias("source"),
                           pl.format("Mixed archive {}, event {} ({})", pl.lit(seed), "tournament",
                                     pl.col("event_type").cast(pl.String).str.replace("_", " ")).alias("name"))
    return Batch.of_checked(t, renum(batch.players), renum(batch.games), batch.warnings)


def _assemble(first: int, parts: list[Batch], truths: list[pl.DataFrame], kind: npt.NDArray[np.int8],
              players: npt.NDArray[np.int64], rounds: npt.NDArray[np.int64]) -> MixBlock:
    kinds = pl.DataFrame({"tournament": np.arange(first, first + len(kind), dtype=np.int64),
                          "kind": pl.Series([KINDS[c] for c in kind.tolist()], dtype=pl.Enum(list(KINDS))),
                          "players": players.astype(np.int32), "rounds": rounds.astype(np.int16)})
    if not parts:
        return MixBlock(first, Batch.concat([]), kinds,
                        pl.DataFrame(schema={"tournament": pl.Int64, "start_no": pl.Int32, "strength": pl.Float64}))
    whole = Batch.stacked(parts)
    batch = Batch.of_checked(whole.tournaments.sort("tournament"), whole.players.sort("tournament", "start_no"),
                             whole.games.sort("tournament", "player", "round"), whole.warnings)
    truth = pl.concat(truths).sort("tournament", "start_no") if truths else pl.DataFrame(
        schema={"tournament": pl.Int64, "start_no": pl.Int32, "strength": pl.Float64})
    return MixBlock(first, batch, kinds, truth)
