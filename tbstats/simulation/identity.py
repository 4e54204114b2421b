"""What a real archive's files hold besides the games, drawn for simulated events (:func:`dress`).

A TRF file exported by a pairing program names its players ("Surname, Given"), gives their sex, title,
federation, FIDE id and birth date, and its header carries the event's city, federation, dates, arbiter (102),
time control (122) and often the round dates (132). An archive without them is lighter to read than the
archives users have, so the benchmark archives (:mod:`tbstats.simulation.mix`) carry them too.

Every value is drawn from a stream of its own (the caller's ``rng``), never from the games' stream: a seed's
games, results and tie-breaks are the same with or without them. Start dates fall between 1 March and
30 November 2026, so ``--rules auto`` reads every event under the 2026 edition (rules.md 1).
"""

from __future__ import annotations

import datetime as dt
from typing import Final

import numpy as np
import polars as pl

from tbstats.io.trf.headers import ROUND0  # (a 132 record's first round date: the column of round 1's block)
from tbstats.model.batch import Batch
from tbstats.simulation.population import NEW_IDS, Population

SURNAMES: Final = (
    "Andersen", "Bauer", "Novak", "Kowalski", "Garcia", "Martin", "Rossi", "Horvath", "Jansen", "Petrov",
    "Nielsen", "Dubois", "Fischer", "Lopez", "Moreau", "Schmidt", "Popescu", "Kovacs", "Larsen", "Fernandez",
    "Bianchi", "Lindqvist", "Papadopoulos", "Yilmaz", "Cohen", "O'Brien", "Murphy", "Silva", "Santos",
    "Nowak", "Dvorak", "Varga", "Ivanov", "Shevchenko", "Jovanovic", "Horvat", "Berg", "Virtanen",
    "Kumar", "Sharma", "Wang", "Li", "Tanaka", "Kim", "Nguyen", "Smith", "Johnson", "Brown", "Wilson",
    "van der Berg", "De Smet", "Muller", "Keller", "Meier", "Hoffmann", "Wagner", "Becker", "Richter",
    "Zielinski", "Kaminski",
)
#: Names as events of their federations write them (others write the ASCII forms, as FIDE's lists do): Latin-1
#: characters and characters beyond it, so that files need decoding, as real archives' do.
LOCAL_SPELLING: Final = {
    "Novak": "Novák", "Garcia": "García", "Horvath": "Horváth", "Lopez": "López", "Muller": "Müller",
    "Kovacs": "Kovács", "Fernandez": "Fernández", "Yilmaz": "Yılmaz", "Dvorak": "Dvořák", "Jovanovic": "Jovanović",
    "Zielinski": "Zieliński", "Kaminski": "Kamiński",
}
GIVEN_MEN: Final = (
    "Peter", "Jan", "Luca", "Marco", "Pablo", "Lukas", "Tomas", "David", "Andrei", "Igor", "Mikkel", "Pierre",
    "Johan", "Erik", "Mehmet", "Daniel", "Sean", "Joao", "Piotr", "Milan", "Arjun", "Wei", "Kenji", "Minho",
    "Thomas", "Michael", "Stefan", "Nikola", "Oliver", "Felix",
)
GIVEN_WOMEN: Final = (
    "Anna", "Maria", "Elena", "Sofia", "Laura", "Julia", "Eva", "Ingrid", "Chloe", "Ayse", "Sarah", "Aoife",
    "Ana", "Marta", "Petra", "Priya", "Mei", "Yuki", "Jiwoo", "Katarina",
)
FEDERATIONS: Final = (
    "GER", "FRA", "ESP", "ITA", "ENG", "NED", "POL", "CZE", "HUN", "AUT", "SUI", "BEL", "SWE", "NOR", "DEN",
    "FIN", "IRL", "SCO", "POR", "GRE", "TUR", "ISR", "ROU", "SRB", "CRO", "UKR", "USA", "CAN", "IND", "ARG",
)
CITIES: Final = (
    "Hamburg", "Lyon", "Valencia", "Bologna", "Leeds", "Utrecht", "Krakow", "Brno", "Debrecen", "Graz",
    "Basel", "Ghent", "Uppsala", "Bergen", "Aarhus", "Tampere", "Cork", "Dundee", "Porto", "Thessaloniki",
    "Izmir", "Haifa", "Cluj-Napoca", "Novi Sad", "Split", "Lviv", "Reno", "Montreal", "Chennai", "Rosario",
)
TIME_CONTROLS: Final = ("90 min + 30 s/move", "60 min + 30 s/move", "90 min/40 moves + 30 min + 30 s/move",
                        "45 min + 15 s/move", "15 min + 10 s/move")
#: Titles by the least rating that carries them, men's and women's (a rated player of that rating or more holds
#: it with the probability given: many strong players hold none).
TITLES: Final = ((2500, "GM", "GM", 0.7), (2400, "IM", "WGM", 0.5), (2300, "FM", "WIM", 0.35),
                 (2200, "CM", "WFM", 0.2))
#: Shares: women among players, players of the event's own federation, events with round dates (132), unrated
#: players with a FIDE id (rated ones all have one), events that spell names locally (:data:`LOCAL_SPELLING`).
WOMEN: Final = 0.15
HOME: Final = 0.75
ROUND_DATES: Final = 0.5
UNRATED_WITH_ID: Final = 0.3
LOCAL_EVENTS: Final = 0.3
FIRST_DAY: Final = dt.date(2026, 3, 1)
DAYS: Final = 275   # start dates FIRST_DAY .. 30 November 2026


def _pick(options: tuple[str, ...], at: np.ndarray) -> pl.Series:
    """``options[at[i]]`` for each ``i``."""
    return pl.Series(options, dtype=pl.String).gather(at)


def _event_records(rng: np.random.Generator, start: np.ndarray, rounds: np.ndarray) -> list[list[str]]:
    """Each event's arbiter (102), time control (122) and, for some, round dates (132: one a day)."""
    n = len(start)
    arbiter = rng.integers(len(SURNAMES), size=n), rng.integers(len(GIVEN_MEN), size=n)
    control = rng.integers(len(TIME_CONTROLS), size=n)
    dated = rng.random(n) < ROUND_DATES
    out = []
    for k in range(n):
        rec = [f"102 IA {SURNAMES[arbiter[0][k]]}, {GIVEN_MEN[arbiter[1][k]]}", f"122 {TIME_CONTROLS[control[k]]}"]
        if dated[k]:
            day0 = FIRST_DAY + dt.timedelta(days=int(start[k]))
            days = [day0 + dt.timedelta(days=r) for r in range(int(rounds[k]))]
            rec.append("132".ljust(ROUND0) + "  ".join(f"{d:%y/%m/%d}" for d in days))
        out.append(rec)
    return out


def people(persons: int, rng: np.random.Generator) -> Population:
    """A population of ``persons`` people with this module's names, federations and share of women, for
    :func:`dress` to draw players from."""
    return Population.draw(persons, len(FEDERATIONS), len(SURNAMES), (len(GIVEN_MEN), len(GIVEN_WOMEN)), rng,
                           WOMEN)


def dress(batch: Batch, rng: np.random.Generator, population: Population | None = None) -> Batch:
    """``batch`` with the names, sexes, titles, federations, FIDE ids and birth dates of its players and the
    city, federation, dates and arbiter, time control and round dates records of its events drawn from ``rng``
    (kept records before these stay first). Games, ratings and results are not touched. With a ``population``
    (:mod:`tbstats.simulation.population`), players are its people where one fits: they come back from event to
    event; without, every player is someone new."""
    t, p = batch.tournaments, batch.players
    n_t, n_p = t.height, p.height
    if not n_t:
        return batch
    rounds = t["rounds"].to_numpy().astype(np.int64)
    start = rng.integers(DAYS, size=n_t)
    home = rng.integers(len(FEDERATIONS), size=n_t)
    first = np.datetime64(FIRST_DAY, "D")
    starts = first + start.astype("timedelta64[D]")
    ends = starts + np.maximum(rounds - 1, 0).astype("timedelta64[D]")
    added = _event_records(rng, start, rounds)
    t = t.with_columns(
        _pick(CITIES, rng.integers(len(CITIES), size=n_t)).alias("city"),
        _pick(FEDERATIONS, home).alias("federation"),
        pl.Series("start_date", starts), pl.Series("end_date", ends),
        pl.Series("date_text", starts).dt.strftime("%Y/%m/%d"),
        pl.Series("records", [(old or []) + new for old, new in zip(t["records"].to_list(), added, strict=True)],
                  dtype=pl.List(pl.String)),
    )
    event = np.searchsorted(t["tournament"].to_numpy(), p["tournament"].to_numpy())
    woman = rng.random(n_p) < WOMEN
    given = np.where(woman, rng.integers(len(GIVEN_WOMEN), size=n_p), rng.integers(len(GIVEN_MEN), size=n_p))
    surname = rng.integers(len(SURNAMES), size=n_p)
    fed = np.where(rng.random(n_p) < HOME, home[event], rng.integers(len(FEDERATIONS), size=n_p))
    rating = p["rating"].fill_null(0).to_numpy().astype(np.int64)   # (unrated: 0, below every title)
    luck = rng.random(n_p)
    fide_id = rng.integers(NEW_IDS, 2 * NEW_IDS, size=n_p)
    has_id = (rating > 0) | (rng.random(n_p) < UNRATED_WITH_ID)
    born = np.stack([2026 - rng.integers(8, 80, size=n_p), rng.integers(1, 13, size=n_p),
                     rng.integers(1, 29, size=n_p)], axis=1)
    local = (rng.random(n_t) < LOCAL_EVENTS)[event]
    title_rating = rating
    if population is not None:   # the people who fit, in place of someone new
        person = population.choose(rng, event, fed, rating, has_id)
        known = person >= 0
        who = person[known]
        woman[known], given[known], surname[known] = population.woman[who], population.given[who], \
            population.surname[who]
        fed[known], fide_id[known], born[known] = population.federation[who], population.fide_id[who], \
            population.birth[who]
        luck[known] = population.title_luck[who]
        title_rating = np.where(known, population.rating[np.maximum(person, 0)], rating)
    title = np.full(n_p, None, dtype=object)
    for least, man, wom, share in reversed(TITLES):   # (the highest title a player's rating reaches wins)
        holds = (title_rating >= least) & (luck < share)
        title[holds] = np.where(woman[holds], wom, man)
    first_name = np.empty(n_p, dtype=object)
    first_name[~woman] = np.array(GIVEN_MEN, dtype=object)[given[~woman]]
    first_name[woman] = np.array(GIVEN_WOMEN, dtype=object)[given[woman]]
    birth = pl.DataFrame({"y": born[:, 0], "m": born[:, 1], "d": born[:, 2]}).select(
        pl.date("y", "m", "d").dt.strftime("%Y/%m/%d"))
    last = _pick(SURNAMES, surname)
    last = pl.select(pl.when(pl.Series(local)).then(last.replace(LOCAL_SPELLING)).otherwise(last)).to_series()
    name = last + ", " + pl.Series(first_name.tolist(), dtype=pl.String)
    p = p.with_columns(
        name.alias("name"),
        pl.Series("sex", np.where(woman, "w", "m"), dtype=pl.String),
        pl.Series("title", title.tolist(), dtype=pl.String),
        _pick(FEDERATIONS, fed).alias("federation"),
        pl.Series("fide_id", fide_id, dtype=pl.Int64).scatter(np.flatnonzero(~has_id), None),
        birth.to_series().alias("birth"),
    )
    return Batch(t, p, batch.games, batch.warnings)
