"""Named configurations: a rule edition and an ordered tie-break list (``NAME=EDITION:SPECS``), parsed from
the command line or a TOML file, and the standings of a batch under each (one ranking pass, cached).

Every command that ranks by several configurations (compare, audit, evaluate, simulate) reads them here.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tbstats.engine.declared import FROM_FILE, declared_lists
from tbstats.engine.standings import SharedSteps, StepKey, rank_dtype, rank_steps, step_keys
from tbstats.engine.tiebreaks import parse_specs
from tbstats.engine.tiebreaks.base import Context
from tbstats.errors import TbstatsError
from tbstats.model.batch import Batch
from tbstats.model.rules import check_edition
from tbstats.model.spec import TieBreakSpec

_CONFIG = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*=\s*([A-Za-z0-9\-]+)\s*:\s*(.*)$")


@dataclass(frozen=True)
class Config:
    """A named rule edition and ordered tie-break list (or the tournament's own 202/212 list)."""

    name: str
    rules: str
    specs: tuple[TieBreakSpec, ...] | None  # None: from-file

    def __str__(self) -> str:
        listed = FROM_FILE if self.specs is None else ",".join(str(s) for s in self.specs)
        return f"{self.name}={self.rules}:{listed}"


def parse_config(text: str) -> Config:
    """``NAME=EDITION:SPEC,SPEC,...`` or ``NAME=EDITION:from-file``.

    >>> str(parse_config("old=fide-2024:bh/c1,BH,SB,DE,WIN"))
    'old=fide-2024:BH/C1,BH,SB,DE,WIN'
    """
    m = _CONFIG.match(text)
    if not m:
        raise TbstatsError(f"configuration {text!r} is not NAME=EDITION:SPEC,SPEC,... "
                           "(e.g. old=fide-2024:BH/C1,BH,SB,DE,WIN)")
    name, rules, listed = m.groups()
    specs = None if listed.strip().lower() == FROM_FILE else tuple(parse_specs(listed))
    return Config(name, check_edition(rules), specs)


def read_configs(path: str | Path) -> list[Config]:
    """Configurations from a TOML file: ``[configs]`` with ``name = "EDITION:SPECS"`` entries, or
    ``[[config]]`` tables with ``name``, ``rules`` and ``tiebreaks`` (a list or a comma-separated string)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise TbstatsError(f"{path}: not UTF-8 text (a TOML file is UTF-8; save it again as UTF-8)") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        where = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        at = f"line {where[1]}, column {where[2]}" if where else f"line {text.count(chr(10)) + 1} (the end)"
        reason = re.sub(r"\s*\(at [^)]*\)$", "", str(exc))
        raise TbstatsError(f"{path}: {at}: not valid TOML: {reason}") from None
    out = [parse_config(f"{k}={v}") for k, v in data.get("configs", {}).items()]
    for table in data.get("config", []):
        tbs = table.get("tiebreaks", "")
        listed = ",".join(tbs) if isinstance(tbs, list) else str(tbs)
        out.append(parse_config(f"{table['name']}={table.get('rules', 'fide-2026')}:{listed}"))
    if not out:
        raise TbstatsError(f"{path}: no configurations (expected a [configs] table or [[config]] entries)")
    return out


@dataclass(frozen=True)
class Standings:
    """Ranks of every player under one configuration, after points and after each tie-break of its list."""

    config: Config
    steps: list[np.ndarray]       # competition ranks after PTS, then after each spec (int16 or int32, rank_dtype)
    computable: np.ndarray        # [T] False where a from-file list could not be used


def standings(ctx: Context, batch: Batch, config: Config, *, shared: SharedSteps | None = None) -> Standings:
    """Rank every tournament of the batch under ``config`` (one pass; from-file groups events by list), cached
    in the context; ``shared``: steps shared with the configurations ranked before it (see :func:`rank_all`)."""
    d = ctx.roster
    T = len(d.n)
    cached = ctx.standings_cache.get(str(config))
    if isinstance(cached, Standings):
        return cached
    dtype = rank_dtype(d)   # ranks of many configurations are kept: int16 for events below 32,767 players
    if config.specs is not None:
        result = Standings(config, rank_steps(ctx, list(config.specs), config.rules, dtype=dtype, shared=shared),
                           np.ones(T, dtype=bool))
        ctx.standings_cache[str(config)] = result
        return result
    lists = declared_lists(batch)
    n_steps = max((len(s) for s in lists if s is not None), default=0) + 1
    steps: list[np.ndarray] = [np.zeros(d.players, dtype=dtype) for _ in range(n_steps)]
    computable = np.array([s is not None for s in lists])
    for key in {tuple(s) for s in lists if s is not None}:
        rows = np.isin(d.tix, [i for i, s in enumerate(lists) if s is not None and tuple(s) == key])
        these = rank_steps(ctx, list(key), config.rules, dtype=dtype)
        for k in range(n_steps):
            steps[k][rows] = these[min(k, len(these) - 1)][rows]
    result = Standings(config, steps, computable)
    ctx.standings_cache[str(config)] = result
    return result


def rank_all(ctx: Context, batch: Batch, configs: Sequence[Config]) -> list[Standings]:
    """The standings of every configuration (cached in the context), in their order, ranked edition by edition:
    an edition's unplayed-round stage is built once and let go before the next edition's (the values stay
    cached), and its lists that begin alike share those steps (:class:`tbstats.engine.standings.SharedSteps`)."""
    def key(k: int) -> tuple[str, tuple[StepKey, ...]]:
        c = configs[k]
        return c.rules, step_keys(list(c.specs or ()), c.rules)

    order = sorted(range(len(configs)), key=key)
    shared, found = SharedSteps(), {}
    for k, after in zip(order, [*order[1:], None], strict=True):
        found[k] = standings(ctx, batch, configs[k], shared=shared)
        if after is None or configs[after].rules != configs[k].rules:
            ctx.release_stages()
    return [found[k] for k in range(len(configs))]
