"""The people a simulated archive's events draw their players from (:class:`Population`): as in a real archive,
a player comes back from event to event under one FIDE id, name, sex, federation and birth date.

A federation's archive is not a stream of strangers: most players play a few events, regulars play dozens, and
they meet again. What rests on that (the archive fit of ``evaluate --strength archive``, which knows a player
only through his other events, and its cost, which grows with a player's events) cannot be measured on an
archive whose every player is new; the benchmark archives (:mod:`tbstats.simulation.mix`) draw from this.

A population of ``persons`` people has a rating each (normal about :data:`RATING_MEAN`, sd :data:`RATING_SD`,
clipped to the simulator's 1000..2900; a share :data:`UNRATED` unrated), a federation, and an activity drawn
log-normal (log-sd :data:`ACTIVITY_SIGMA`: a long tail of regulars). A player of a simulated event (rating R,
federation F as :func:`tbstats.simulation.identity.dress` drew it) is one of the people of F rated within
:data:`BAND` of R (an unrated player with an id: one of F's unrated people), chosen in proportion to activity;
never one already in that event. Where no one fits (a rating at the edge of a small population), or the draws
keep finding people already in the event, the player is someone new (:func:`choose` gives -1).

The people's ratings are fixed; a player's rating in an event is the simulator's, within :data:`BAND` of
his. His true strength is the simulator's too, drawn for each event: form varies from event to event, and a fit
over his events finds his mean, as it would in a real archive.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np

#: The people's ratings (the simulated events' rated players: median 1801, 5% below 1089, 5% above 2507).
RATING_MEAN: Final = 1800.0
RATING_SD: Final = 420.0
#: Share of the people who are unrated.
UNRATED: Final = 0.12
#: How far a player's rating in an event may stand from his own (rating points).
BAND: Final = 50
#: Log-sd of the people's activity: the most active of 100 play about 6 times as many events as the mean.
ACTIVITY_SIGMA: Final = 1.0
#: FIDE ids of the people: distinct, below :data:`NEW_IDS`; a new player's id is drawn from :data:`NEW_IDS` up.
FIRST_ID: Final = 100_000
NEW_IDS: Final = 40_000_000
#: Draws again for a player who is already in the event, at most.
REDRAWS: Final = 6

_SPAN: Final = 4096   # a key: federation * _SPAN + rating (0 unrated); ratings stay below it


@dataclass(frozen=True)
class Population:
    """``persons`` people ordered by key (federation, then rating), each with the attributes
    :func:`tbstats.simulation.identity.dress` gives a player (indices into its tables)."""

    key: np.ndarray          # federation * _SPAN + rating, ascending
    weight: np.ndarray       # cumulative activity in key order, from 0 (one more than the people)
    rating: np.ndarray
    federation: np.ndarray
    fide_id: np.ndarray
    woman: np.ndarray
    surname: np.ndarray
    given: np.ndarray        # into the given names of the person's sex
    birth: np.ndarray        # (year, month, day) per person
    title_luck: np.ndarray   # uniform: a title where it falls below the title's share

    @staticmethod
    def draw(persons: int, federations: int, surnames: int, given: tuple[int, int], rng: np.random.Generator,
             women: float) -> Population:
        """``persons`` people of ``federations`` federations, names drawn from ``surnames`` surnames and
        ``given`` (men's, women's) given names, a share ``women`` of them women."""
        rated = rng.random(persons) >= UNRATED
        rating = np.where(rated, np.clip(np.rint(rng.normal(RATING_MEAN, RATING_SD, persons)), 1000, 2900), 0)
        federation = rng.integers(federations, size=persons)
        key = federation * _SPAN + rating.astype(np.int64)
        order = np.argsort(key, kind="stable")
        activity = rng.lognormal(0.0, ACTIVITY_SIGMA, persons)[order]
        weight = np.zeros(persons + 1)
        np.cumsum(activity, out=weight[1:])
        ids = _distinct(rng, persons)
        woman = rng.random(persons) < women   # (these follow the key's order too: as drawn for generation 4)
        birth = np.stack([2026 - rng.integers(8, 80, size=persons), rng.integers(1, 13, size=persons),
                          rng.integers(1, 29, size=persons)], axis=1)
        first_name = np.where(woman, rng.integers(given[1], size=persons), rng.integers(given[0], size=persons))
        return Population(key[order], weight, rating[order].astype(np.int64), federation[order], ids,
                          woman[order], rng.integers(surnames, size=persons), first_name[order], birth[order],
                          rng.random(persons))

    def choose(self, rng: np.random.Generator, event: np.ndarray, federation: np.ndarray, rating: np.ndarray,
               wanted: np.ndarray) -> np.ndarray:
        """Per player row (its event, federation and rating, 0 unrated): the person it is, -1 for someone new;
        only rows where ``wanted`` (rated players, and unrated ones with an id) are matched. No person twice in
        one event."""
        rows = len(event)
        out = np.full(rows, -1, dtype=np.int64)
        base = federation.astype(np.int64) * _SPAN
        reach = np.where(rating > 0, BAND, 0)
        lo = np.searchsorted(self.key, base + rating - reach, side="left")   # (rated: 950 and up; unrated: 0)
        hi = np.searchsorted(self.key, base + rating + reach, side="right")
        todo = np.flatnonzero(wanted & (hi > lo))
        for _ in range(REDRAWS):
            if not len(todo):
                break
            a, b = self.weight[lo[todo]], self.weight[hi[todo]]
            pick = np.searchsorted(self.weight, a + rng.random(len(todo)) * (b - a), side="right") - 1
            out[todo] = np.clip(pick, lo[todo], hi[todo] - 1)
            todo = _repeated(event, out, todo)
            out[todo] = -1
        return out


def _distinct(rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` distinct ids in ``FIRST_ID .. NEW_IDS - 1``, in random order (``count`` far below their range)."""
    ids = np.zeros(0, dtype=np.int64)
    while len(ids) < count:
        ids = np.unique(np.r_[ids, rng.integers(FIRST_ID, NEW_IDS, size=2 * (count - len(ids)) + 16)])
    return rng.permutation(ids)[:count]


def _repeated(event: np.ndarray, person: np.ndarray, todo: np.ndarray) -> np.ndarray:
    """Of the rows ``todo`` just drawn, those whose person is already in their event (each person keeps his
    first row of an event: the earlier rows, and among the new ones the first in row order)."""
    drawn = np.zeros(len(person), dtype=bool)
    drawn[todo] = True
    rows = np.flatnonzero(person >= 0)
    order = rows[np.lexsort((rows, drawn[rows], person[rows], event[rows]))]   # (earlier rows first)
    same = np.zeros(len(order), dtype=bool)
    same[1:] = (event[order][1:] == event[order][:-1]) & (person[order][1:] == person[order][:-1])
    return np.sort(order[same])
