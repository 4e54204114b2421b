"""Assembling the simulated blocks into a :class:`~tbstats.model.batch.Batch` and the truth table."""

from __future__ import annotations

import datetime as dt

import numpy as np
import numpy.typing as npt
import polars as pl

from tbstats.model.batch import Batch
from tbstats.model.games import GAME_TYPE, GAME_TYPES, SCORING_KINDS, ColourEnum, EventTypeEnum, GameTypeEnum, empty
from tbstats.simulation.config import SimulationConfig, _units
from tbstats.simulation.state import _BLACK, _CODES, _WHITE, _Block


def _assemble(cfg: SimulationConfig, blocks: list[_Block]) -> Batch:
    n, rounds = cfg.players, cfg.n_rounds
    count = cfg.tournaments
    units = _units(cfg)
    if count == 0:
        return Batch(empty("tournaments"), empty("players"), empty("games"))

    def cat(name: str) -> npt.NDArray[np.generic]:
        return np.concatenate([getattr(b, name) for b in blocks], axis=0)

    ids = np.arange(count, dtype=np.int64)
    round_robin = cfg.kind == "round_robin"
    end = cfg.start_date + dt.timedelta(days=rounds - 1)
    tournaments = pl.DataFrame({
        "tournament": ids,
        "source": [f"sim/{cfg.seed}/{i}" for i in range(count)],
        "name": [f"Simulated {cfg.kind.replace('_', ' ')} {i}" for i in range(count)],
    }).with_columns(
        pl.lit(None, pl.String).alias("city"), pl.lit(None, pl.String).alias("federation"),
        pl.lit(cfg.start_date).alias("start_date"), pl.lit(end).alias("end_date"),
        pl.lit(f"{cfg.start_date:%Y/%m/%d}").alias("date_text"), pl.lit(rounds, pl.Int16).alias("rounds"),
        pl.lit(rounds, pl.Int16).alias("rounds_played"),
        pl.lit(cfg.kind, EventTypeEnum).alias("event_type"),
        pl.lit("Round robin (Berger tables), simulated" if round_robin else "Swiss system, simulated")
        .alias("type_text"),
        pl.lit(_type_code(cfg)).alias("type_code"),
        pl.lit(n, pl.Int32).alias("declared_players"),
        pl.lit(units["scale"], pl.Int32).alias("scale"),
        *[pl.lit(units[k], pl.Int32).alias(f"pts_{k}") for k in SCORING_KINDS],
        *[pl.lit([], pl.List(pl.String)).alias(c) for c in ("tiebreaks", "standings_tiebreaks", "records")],
    )
    rating = cat("rating")
    rated = cat("rated")
    total = cat("points").sum(axis=2, dtype=np.int64)
    players = pl.DataFrame({
        "tournament": np.repeat(ids, n),
        "start_no": np.tile(np.arange(1, n + 1, dtype=np.int32), count),
        "rating": rating.ravel(),
        "_rated": rated.ravel(),
        "declared_points": total.ravel().astype(np.int32),
    }).select(
        "tournament", "start_no", pl.format("Player {}", pl.col("start_no")).alias("name"),
        pl.lit(None, pl.String).alias("sex"), pl.lit(None, pl.String).alias("title"),
        pl.when(pl.col("_rated")).then(pl.col("rating")).alias("rating"),
        pl.lit(None, pl.String).alias("federation"), pl.lit(None, pl.Int64).alias("fide_id"),
        pl.lit(None, pl.String).alias("birth"), "declared_points",
        pl.lit(None, pl.Int32).alias("declared_rank"), pl.lit(0, pl.Int32).alias("line"),
    )
    per_player = n * rounds
    raw = pl.DataFrame({
        "tournament": np.repeat(ids, per_player),
        "player": np.tile(np.repeat(np.arange(1, n + 1, dtype=np.int32), rounds), count),
        "round": np.tile(np.arange(1, rounds + 1, dtype=np.int16), count * n),
        "_opp": cat("opponent").ravel() + 1,
        "_colour": cat("colour").ravel(),
        "_code": cat("code").ravel(),
        "points": cat("points").ravel(),
        "_type": cat("game_type").ravel(),
    })
    games = raw.select(
        "tournament", "player", "round",
        pl.when(pl.col("_opp") > 0).then(pl.col("_opp")).alias("opponent"),
        pl.col("_colour").replace_strict({_WHITE: "w", _BLACK: "b"}, default=None, return_dtype=ColourEnum)
        .alias("colour"),
        pl.col("_code").replace_strict({i: c for i, c in enumerate(_CODES) if c is not None}, default=None,
                                       return_dtype=pl.String).alias("result"),
        "points",
        (pl.col("_type") == GAME_TYPE["played"]).alias("played"),
        pl.col("_type").replace_strict(dict(enumerate(GAME_TYPES)), return_dtype=GameTypeEnum)
        .alias("game_type"),
    )
    return Batch(tournaments, players, games)


def _type_code(cfg: SimulationConfig) -> str:
    if cfg.kind == "swiss":
        return "CUSTOM_SWISS"
    return "FIDE_ROUNDROBIN" if cfg.n_rounds <= cfg.cycle else "FIDE_DOUBLEROUNDROBIN"


def _truth(cfg: SimulationConfig, blocks: list[_Block]) -> pl.DataFrame:
    n = cfg.players
    strength = (np.concatenate([b.strength for b in blocks]) if blocks else np.zeros((0, n))).ravel()
    count = len(strength) // n
    return pl.DataFrame({
        "tournament": np.repeat(np.arange(count, dtype=np.int64), n),
        "start_no": np.tile(np.arange(1, n + 1, dtype=np.int32), count),
        "strength": strength,
    })
