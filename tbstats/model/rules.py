"""Rule editions as data (rules.md Section 3) and scoring systems (rules.md 2.4).

Each edition is one :class:`RuleSet` row in :data:`RULESETS`. The unplayed-round stage
(:mod:`tbstats.engine.unplayed`) reads these fields; tie-break kernels never see edition names.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Final, Literal

from tbstats.errors import UnknownEditionError, did_you_mean

if TYPE_CHECKING:
    import numpy as np
    import polars as pl

#: How an opponent's score is adjusted before it enters a player's tie-breaks.
OpponentScore = Literal["fide", "all_unplayed_draw", "raw"]
#: What a player's own unplayed round becomes in BH/SB.
OwnUnplayed = Literal["dummy", "virtual_opponent", "zero", "none"]


@dataclass(frozen=True)
class RuleSet:
    """One rule edition: how unplayed rounds enter the opponent-based tie-breaks."""

    name: str
    title: str
    #: 'fide': awarded points except 16.2.5 rounds count as a draw (C.07 16.3);
    #: 'all_unplayed_draw': every unplayed round counts as a draw (C.02 2009, US 34E1); 'raw': actual score.
    opponent_score: OpponentScore
    #: 'dummy' (C.07 16.4: own score), 'virtual_opponent' (C.02: S(r-1) + W - p + D(n-r)),
    #: 'zero' (US 34E: opponent with adjusted score 0), 'none' (the round is no element).
    own_unplayed: OwnUnplayed
    #: C.07 (2026) 16.4.1/16.4.2: cap the dummy at the scheduled opponent's adjusted score (forfeits)
    #: or at D x n (other unplayed rounds).
    dummy_caps: bool
    #: C.07 16.5: Cut modifiers remove a voluntary unplayed round's contribution first.
    vur_cuts: bool
    #: C.07 15.2: round robins use pre-determined rules (forfeits are games, no dummies).
    predetermined: bool
    #: C.07 (2026) 15.2: in pre-determined events, forfeit losses stay unplayed in type B tie-breaks.
    rr_forfeit_loss_unplayed: bool
    #: The dates the edition applies to; ``auto`` picks the edition by a tournament's start date.
    valid_from: dt.date | None = None
    valid_to: dt.date | None = None


RULESETS: Final[dict[str, RuleSet]] = {
    r.name: r
    for r in (
        RuleSet("fide-2026", "FIDE C.07 from 1 March 2026 (capped dummy)", "fide", "dummy",
                dummy_caps=True, vur_cuts=True, predetermined=True, rr_forfeit_loss_unplayed=True,
                valid_from=dt.date(2026, 3, 1)),
        RuleSet("fide-2024", "FIDE C.07 Sep 2023 - Feb 2026 (uncapped dummy)", "fide", "dummy",
                dummy_caps=False, vur_cuts=True, predetermined=True, rr_forfeit_loss_unplayed=False,
                valid_from=dt.date(2023, 9, 1), valid_to=dt.date(2026, 2, 28)),
        RuleSet("fide-legacy", "FIDE C.02 2009 - 2023 (virtual opponent)", "all_unplayed_draw",
                "virtual_opponent", dummy_caps=False, vur_cuts=False, predetermined=True,
                rr_forfeit_loss_unplayed=False, valid_to=dt.date(2023, 8, 31)),
        RuleSet("uscf", "US Chess rule 34E (unplayed games count 1/2, own unplayed rounds 0)",
                "all_unplayed_draw", "zero", dummy_caps=False, vur_cuts=False, predetermined=False,
                rr_forfeit_loss_unplayed=False),
        RuleSet("naive", "No adjustment: raw opponent scores, own unplayed rounds ignored", "raw", "none",
                dummy_caps=False, vur_cuts=False, predetermined=False, rr_forfeit_loss_unplayed=False),
    )
}
EDITIONS: Final = (*RULESETS, "auto")
DEFAULT_EDITION: Final = "fide-2026"


def get_ruleset(name: str) -> RuleSet:
    """The :class:`RuleSet` called ``name`` (case-insensitive); ``auto`` is resolved per tournament."""
    key = name.strip().lower()
    try:
        return RULESETS[key]
    except KeyError:
        raise UnknownEditionError(
            f"unknown rule edition {name!r} (expected one of {', '.join(EDITIONS)})."
            + did_you_mean(key, EDITIONS)) from None


def check_edition(name: str) -> str:
    """Normalise an edition name, accepting ``auto``."""
    key = name.strip().lower()
    if key == "auto":
        return key
    return get_ruleset(key).name


def auto_edition(start: dt.date | None, default: str = DEFAULT_EDITION) -> str:
    """Edition for ``auto`` by start date (rules.md 3.1): < 2023-09-01 legacy, < 2026-03-01 2024, else 2026.

    >>> auto_edition(dt.date(2026, 2, 28)), auto_edition(dt.date(2026, 3, 1)), auto_edition(None)
    ('fide-2024', 'fide-2026', 'fide-2026')
    """
    if start is None:
        return default
    for rules in RULESETS.values():  # the dated FIDE editions; uscf and naive carry no dates
        dated = rules.valid_from is not None or rules.valid_to is not None
        if dated and (rules.valid_from is None or start >= rules.valid_from) and (
                rules.valid_to is None or start <= rules.valid_to):
            return rules.name
    return default


#: Day 0 of a Date column's days.
_EPOCH: Final = dt.date(1970, 1, 1)


def auto_editions(start: pl.Series, default: str = DEFAULT_EDITION) -> np.ndarray:
    """:func:`auto_edition` of a whole ``start_date`` column at once (null: no start date): a comparison per dated
    edition over its days, not a call per date (an archive of ten years has thousands of distinct dates).

    >>> import polars as pl
    >>> auto_editions(pl.Series([dt.date(2026, 2, 28), None, dt.date(2026, 3, 1)], dtype=pl.Date)).tolist()
    ['fide-2024', 'fide-2026', 'fide-2026']
    """
    import numpy as np  # (the editions themselves are read by the command line before numpy is needed)

    dates = start.to_numpy().astype("datetime64[D]")   # (NaT: no date; read as numpy, not by polars' engine)
    known = ~np.isnat(dates)
    days = np.where(known, dates.view(np.int64), 0)     # days since 1970-01-01
    dated = [r for r in RULESETS.values() if r.valid_from is not None or r.valid_to is not None]  # not uscf, naive
    which = np.full(len(days), len(dated))          # the default, unless a dated edition claims the day
    open_ = known.copy()                            # days no edition has claimed yet (the first match wins)
    for k, rules in enumerate(dated):
        hit = open_.copy()
        if rules.valid_from is not None:
            hit &= days >= (rules.valid_from - _EPOCH).days
        if rules.valid_to is not None:
            hit &= days <= (rules.valid_to - _EPOCH).days
        which[hit] = k
        open_ &= ~hit
    names: np.ndarray = np.array([r.name for r in dated] + [default], dtype=str)[which]
    return names


# ---------------------------------------------------------------------------------------------- scoring

STANDARD_SCORING: Final[dict[str, Fraction]] = {
    "win": Fraction(1), "draw": Fraction(1, 2), "loss": Fraction(0),
    "forfeit_win": Fraction(1), "forfeit_loss": Fraction(0), "pab": Fraction(1),
    "full_bye": Fraction(1), "half_bye": Fraction(1, 2), "zero_bye": Fraction(0),
}

#: TRF26 162 codes -> scoring kinds (rules.md 2.3).
TRF26_SCORING_CODES: Final[dict[str, tuple[str, ...]]] = {
    "W": ("win", "forfeit_win", "full_bye"),
    "D": ("draw", "half_bye"),
    "L": ("loss",),
    "A": ("zero_bye", "forfeit_loss"),
    "P": ("pab",),
}
#: TRF(x) XXS codes -> scoring kinds; the shortcuts W and D expand (rules.md 2.3).
XXS_CODES: Final[dict[str, tuple[str, ...]]] = {
    "WW": ("win",), "BW": ("win",), "WD": ("draw",), "BD": ("draw",), "WL": ("loss",), "BL": ("loss",),
    "ZPB": ("zero_bye",), "HPB": ("half_bye",), "FPB": ("full_bye",), "PAB": ("pab",),
    "FW": ("forfeit_win",), "FL": ("forfeit_loss",),
    "W": ("win", "full_bye", "forfeit_win"), "D": ("draw", "half_bye"),
}


#: Limits of a scoring system, the same for every reader: points per game (162/XXS values) and the scoring unit
#: (at most 3 decimals: a scale dividing 1000).
MAX_POINTS: Final = 100
MAX_SCALE: Final = 1000


def scoring_scale(points: dict[str, Fraction]) -> int:
    """The smallest integer ``s`` such that every value times ``s`` is an integer (the scoring unit).

    >>> scoring_scale(STANDARD_SCORING), scoring_scale({"win": Fraction(3), "draw": Fraction(1)})
    (2, 1)
    """
    return math.lcm(1, *(Fraction(v).denominator for v in points.values()))
