"""Warnings about a run that computes but may not mean what the user thinks: plain sentences, never printed here.

Each check looks at :func:`events` (one small row per tournament, so that a stream of batches can be
checked once, at the end) and the tie-breaks asked for, and returns the warnings that apply (an empty list
when none does); the command line prints them on stderr, the Python API raises them as
:class:`TbstatsWarning`.

>>> from tbstats.io.sources import load
>>> from tbstats.engine.tiebreaks import parse_specs
>>> seen = events(load("data/examples/e2_cut_exception.trf").batch)
>>> print(*round_robin_buchholz(seen, parse_specs("BH,SB"), force_type="round_robin"))
BH computed for round robins (1 of 1 tournaments); Buchholz tie-breaks must not be used in round robins
(C.07 2026, Art. 8 note)
>>> after_round_beyond(seen, 9)
Traceback (most recent call last):
tbstats.errors.TbstatsError: --after-round 9: no tournament has more than 3 rounds with results
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Final

import numpy as np
import polars as pl

from tbstats.engine.tiebreaks import get_tiebreak
from tbstats.errors import TbstatsError
from tbstats.model.batch import Batch
from tbstats.model.rules import DEFAULT_EDITION
from tbstats.model.spec import TieBreakSpec
from tbstats.model.teams import team_event_ids

#: Tie-breaks that C.07 (2026) Art. 8 says not to use in round robins.
BUCHHOLZ_FAMILY: Final = frozenset({"BH", "FB", "AOB"})


class TbstatsWarning(UserWarning):
    """A run that computed, but whose result may not mean what was asked (see :mod:`tbstats.run.checks`)."""


def events(batch: Batch, teams: list[int] | None = None) -> pl.DataFrame:
    """Per tournament what the checks need: round robin or not, rounds with results, unrated players, and
    whether it is a team event (of ``teams``, the batch's :func:`team_event_ids` when already known).

    (Every batch of a run is asked: its players are found by numpy, not by a polars group-by and join, whose
    fixed costs were 1.3 ms of a batch of 1,000 events.)"""
    t, p = batch.tournaments, batch.players
    ids = t.get_column("tournament").to_numpy()
    rating = p.get_column("rating")
    unrated_of = p.get_column("tournament").to_numpy()[rating.is_null().to_numpy() | (rating.to_numpy() <= 0)]
    unrated = np.zeros(len(ids), dtype=bool)
    if len(ids) and len(unrated_of):   # the tournaments of unrated players, found among the (unique) ids
        order = np.argsort(ids, kind="stable")
        at = np.minimum(np.searchsorted(ids[order], unrated_of), len(ids) - 1)
        unrated[order[at[ids[order][at] == unrated_of]]] = True
    return pl.DataFrame([
        t.get_column("tournament"), (t.get_column("event_type").cast(pl.String) == "round_robin").alias("round_robin"),
        t.get_column("rounds_played").fill_null(0).cast(pl.Int64),
        pl.Series("team_event", np.isin(ids, team_event_ids(batch) if teams is None else teams)),
        t.get_column("start_date").is_not_null().alias("dated"), pl.Series("unrated", unrated)])


def team_events_as_players(team_events: int, what: str, *, hint: str | None = "--teams gives team standings"
                           ) -> list[str]:
    """A note for a run without ``--teams`` over team events (``what`` their rows are, e.g. 'rows are
    players ranked as individuals'; ``hint``: what gives team standings, None for a command without any).

    >>> team_events_as_players(2, "players ranked as individuals", hint=None)
    ['2 team event(s): players ranked as individuals']
    """
    if not team_events:
        return []
    return [f"{team_events} team event(s): {what}" + (f"; {hint}" if hint else "")]


def round_robin_buchholz(seen: pl.DataFrame, specs: Sequence[TieBreakSpec], *,
                         force_type: str | None = None) -> list[str]:
    """Buchholz tie-breaks asked for round robins (detected, or forced with ``force_type``)."""
    named = sorted({str(s) for s in specs if s.name in BUCHHOLZ_FAMILY})
    if not named or seen.is_empty() or force_type == "swiss":
        return []
    total = seen.height
    rr = total if force_type == "round_robin" else int(seen["round_robin"].sum())
    if not rr:
        return []
    return [f"{', '.join(named)} computed for round robins ({rr} of {total} tournaments); Buchholz tie-breaks "
            "must not be used in round robins (C.07 2026, Art. 8 note)"]


def undefined_ratings(seen: pl.DataFrame, specs: Sequence[TieBreakSpec], *,
                      unrated_rating: int | None = None) -> list[str]:
    """Rating tie-breaks that are undefined in every tournament (or in some), because of unrated players."""
    rated_specs = [s for s in specs if get_tiebreak(s.name).rating_based and s.unrated is None]
    if not rated_specs or unrated_rating is not None or seen.is_empty():
        return []
    hit, total = int(seen["unrated"].sum()), seen.height
    if not hit:
        return []
    names = ", ".join(sorted({str(s) for s in rated_specs}))
    where = "every tournament" if hit == total else f"{hit} of {total} tournaments"
    return [f"{names} undefined (null) in {where}: they have unrated players. Hint: give a rating for them "
            "with --unrated-rating R (or /U<R> on the spec, e.g. ARO/U1400)"]


def after_round_beyond(seen: pl.DataFrame, after_round: int | None) -> list[str]:
    """``after_round`` past the rounds with results: an error when it is past every tournament, else a warning."""
    if after_round is None or seen.is_empty():
        return []
    played = seen["rounds_played"]
    most = max(played.to_list(), default=0)
    if after_round > most:
        raise TbstatsError(f"--after-round {after_round}: no tournament has more than {most} rounds with results")
    short = int((played < after_round).sum())
    if not short:
        return []
    return [f"--after-round {after_round}: {short} of {seen.height} tournaments have fewer rounds with "
            "results; they are ranked after their last round"]


def undated_auto(seen: pl.DataFrame, rules: str | None) -> list[str]:
    """``--rules auto`` over events without a date (042, 052 or 132): the edition it then uses. With an edition
    chosen, a missing date changes nothing (the reader's warning names it; no advice about ``auto``)."""
    if rules != "auto" or seen.is_empty() or "dated" not in seen.columns:
        return []
    undated = int((~seen["dated"]).sum())
    if not undated:
        return []
    return [f"--rules auto: {undated} of {seen.height} tournaments have no date (042 start, 052 end or 132 round "
            f"dates); they use {DEFAULT_EDITION}. Hint: give their edition with --rules"]


def all_checks(seen: pl.DataFrame, specs: Sequence[TieBreakSpec], *, force_type: str | None = None,
               unrated_rating: int | None = None, after_round: int | None = None,
               rules: str | None = None) -> list[str]:
    """Every check above, in order (``seen``: :func:`events` of the batch, or of every batch concatenated)."""
    return (after_round_beyond(seen, after_round) + undated_auto(seen, rules)
            + round_robin_buchholz(seen, specs, force_type=force_type)
            + undefined_ratings(seen, specs, unrated_rating=unrated_rating))


def warn(messages: Sequence[str]) -> None:
    """Raise each message as a :class:`TbstatsWarning` (for the Python API)."""
    for message in messages:
        warnings.warn(message, TbstatsWarning, stacklevel=3)
