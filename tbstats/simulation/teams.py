"""Seeded team Swiss events as TRF26 text: the team pairings from :func:`simulate`, then the boards.

The teams of an event are paired by the individual simulator run with one "player" per team (Swiss pairing,
colours, the PAB of an odd field, requested byes, forfeited matches). Each team has ``boards`` players and one
reserve; in a played match each team sits one member out at random and the others play in board order, the
team with White in the pairing having White on boards 1, 3, ... Board results follow the Elo model on the
players' ratings (draws ``0.3 * exp(-|d| / 400)``), with a board forfeit now and then. The records follow
rules.md 9.1: ``310`` teams with their members, ``362`` match points 2-1-0, ``320`` team PABs (a draw's match
points and half the boards), ``330`` forfeited matches (the winners' boards ``+``, everyone else ``-``),
``240 H`` team half-point byes (members without opponent, ``-``).
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl

from tbstats.simulation.config import SimulationConfig
from tbstats.simulation.driver import simulate
from tbstats.simulation.outcomes import expected_score

#: Chance that a board of a played match is forfeited (the absent side at random).
BOARD_FORFEIT = 0.01


def team_event_texts(count: int, *, teams: int, boards: int, rounds: int, seed: int, names: list[str],
                     bye_rate: float = 0.01, forfeit_rate: float = 0.01, strength_mean: float = 1800.0,
                     start_date: dt.date = dt.date(2026, 3, 1)) -> list[str]:
    """TRF26 text of ``count`` team Swiss events of ``teams`` teams of ``boards`` boards (and a reserve) over
    ``rounds`` rounds, named ``names``; the same arguments give the same texts.

    >>> text = team_event_texts(1, teams=5, boards=2, rounds=3, seed=1, names=["T"])[0]
    >>> sum(line.startswith("310") for line in text.splitlines()), sum(line.startswith("001") for line in
    ...     text.splitlines())
    (5, 15)
    """
    cfg = SimulationConfig(tournaments=count, players=teams, rounds=rounds, seed=seed, unrated_rate=0.0,
                           half_bye_rate=bye_rate, zero_bye_rate=0.0, forfeit_rate=forfeit_rate,
                           double_forfeit_rate=0.0, withdrawal_rate=0.0, strength_mean=strength_mean)
    sim = simulate(cfg)
    games = sim.batch.games.sort("tournament", "player", "round")
    shape = (count, teams, rounds)
    opp = games["opponent"].fill_null(0).to_numpy().reshape(shape) - 1
    white = (games["colour"].cast(pl.String) == "w").fill_null(False).to_numpy().reshape(shape)
    kind = games["game_type"].cast(pl.String).to_numpy().reshape(shape)
    rating = sim.batch.players.sort("tournament", "start_no")["rating"].to_numpy().reshape(count, teams)
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(1,))))
    return [_event(rng, names[k], opp[k], white[k], kind[k], rating[k], boards, start_date) for k in range(count)]


def _event(rng: np.random.Generator, name: str, opp: np.ndarray, white: np.ndarray, kind: np.ndarray,
           team_rating: np.ndarray, boards: int, start: dt.date) -> str:
    teams, rounds = opp.shape
    m = boards + 1
    members = np.arange(teams * m).reshape(teams, m) + 1
    offsets = np.sort(rng.normal(0.0, 80.0, size=(teams, m)), axis=1)[:, ::-1]
    rating = np.clip(np.rint(team_rating[:, None] + offsets), 1000, 2900).astype(int)
    cells = np.full((teams * m, rounds), "0000 - -", dtype=object)
    records: list[str] = []
    pab = [0] * rounds
    for r in range(rounds):
        for t in range(teams):
            k = kind[t, r]
            if k == "pab":
                pab[r] = t + 1
            elif k == "half_bye":
                records.append(f"240 H {r + 1:3d} {t + 1:4d}")
            elif k == "forfeit_win":
                cells[members[t, :boards] - 1, r] = "0000 - +"
                if white[t, r]:
                    records.append(f"330 +- {r + 1:3d} {t + 1:3d} {opp[t, r] + 1:3d}")
                else:
                    records.append(f"330 -+ {r + 1:3d} {opp[t, r] + 1:3d} {t + 1:3d}")
            elif k == "played" and white[t, r]:
                _match(rng, cells, members, rating, r, t, int(opp[t, r]), boards)
    end = start + dt.timedelta(days=rounds - 1)
    lines = [f"012 {name}", f"042 {start:%Y/%m/%d}", f"052 {end:%Y/%m/%d}", f"062 {teams * m}",
             "092 Team Swiss system, simulated", f"142 {rounds}", "192 FIDE_TEAM_MP_GP",
             "362 TW 2.0   TD 1.0   TL 0.0"]
    for t in range(teams):
        for j in range(m):
            p = int(members[t, j])
            lines.append(f"001 {p:4d}      {f'Player {p}':<33} {rating[t, j]:4d} {'':3} {'':11} {'':10} {'':4} "
                         f"{'':4}  " + "  ".join(cells[p - 1]))
        lines.append(f"310 {t + 1:3d} {f'Team {t + 1}':<32} {'':5} {int(team_rating[t]):6d} {'':6} {'':6} {'':3}  "
                     + " ".join(f"{p:4d}" for p in members[t]))
    if any(pab):
        half = boards / 2
        lines.append(f"320  1.0 {half:4.1f}" + "".join(f"{t:4d}" for t in pab))
    return "\n".join(lines + records) + "\n"


def _match(rng: np.random.Generator, cells: np.ndarray, members: np.ndarray, rating: np.ndarray, r: int, a: int,
           b: int, boards: int) -> None:
    """Team ``a`` (White in the pairing) against team ``b``: line-ups, colours and board results of round ``r``."""
    m = members.shape[1]
    line_a = np.delete(np.arange(m), rng.integers(m))
    line_b = np.delete(np.arange(m), rng.integers(m))
    pa, pb = members[a, line_a], members[b, line_b]
    d = rating[a, line_a] - rating[b, line_b]
    e = expected_score(d.astype(np.float64))
    p_draw = np.minimum(0.3 * np.exp(-np.abs(d) / 400.0), 2 * np.minimum(e, 1 - e))
    u = rng.random(boards)
    win_a = u < e - p_draw / 2
    draw = ~win_a & (u < e + p_draw / 2)
    res_a = np.where(win_a, "1", np.where(draw, "=", "0"))
    res_b = np.where(win_a, "0", np.where(draw, "=", "1"))
    forfeit = rng.random(boards) < BOARD_FORFEIT
    a_absent = rng.random(boards) < 0.5
    res_a = np.where(forfeit, np.where(a_absent, "-", "+"), res_a)
    res_b = np.where(forfeit, np.where(a_absent, "+", "-"), res_b)
    for k in range(boards):
        col_a, col_b = ("w", "b") if k % 2 == 0 else ("b", "w")
        cells[pa[k] - 1, r] = f"{pb[k]:4d} {col_a} {res_a[k]}"
        cells[pb[k] - 1, r] = f"{pa[k]:4d} {col_b} {res_b[k]}"
    for team, line in ((a, line_a), (b, line_b)):
        sitting = np.setdiff1d(np.arange(m), line)
        cells[members[team, sitting] - 1, r] = "0000 - -"
