"""The tie-break registry: one row per tie-break, keyed by its FIDE acronym (or US Chess name).

A row holds the kernel, the direction, the modifiers the tie-break accepts, its article and a one-line
description. Adding a tie-break is one kernel plus one row. ``kind`` is 'value' for tie-breaks that give a
number per player and 'partition' for those that order a tied group (DE, US head-to-head).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Final, Literal

from tbstats.engine.tiebreaks import opponents, rating, results, uscf
from tbstats.engine.tiebreaks.base import Context, Values
from tbstats.errors import UnknownTieBreakError, did_you_mean
from tbstats.model.spec import TieBreakSpec, read_spec, split_specs

Kernel = Callable[[Context, TieBreakSpec, str], Values]
CUTS = frozenset({"C", "M"})
#: The Buchholz family: cuts, and /P (forfeits counted as games, as in pre-determined pairings; rules.md 5)
FAMILY = CUTS | {"P"}


@dataclass(frozen=True)
class TieBreak:
    """One registry row."""

    name: str
    kernel: Kernel | None
    higher_is_better: bool
    modifiers: frozenset[str]
    article: str
    description: str
    kind: Literal["value", "partition"] = "value"
    rating_based: bool = False
    #: values are whole numbers (counts, ratings), output as integers; others are points, output as decimals
    integer: bool = False


def _row(name: str, kernel: Kernel | None, article: str, description: str, *, mods: frozenset[str] = frozenset(),
         higher: bool = True, kind: Literal["value", "partition"] = "value", rating_based: bool = False,
         integer: bool = False) -> TieBreak:
    return TieBreak(name, kernel, higher, mods | {"U"} if rating_based else mods, article, description, kind,
                    rating_based, integer or rating_based or kind == "partition")


TIEBREAKS: Final[dict[str, TieBreak]] = {t.name: t for t in (
    _row("PTS", results.points, "C.07 4", "points (primary score)"),
    _row("DE", None, "C.07 6", "direct encounter among the tied players", mods=frozenset({"P"}), kind="partition"),
    _row("WIN", results.wins, "C.07 7.1", "rounds scored as a win, with or without playing", integer=True),
    _row("WON", results.games_won, "C.07 7.2", "games won over the board", integer=True),
    _row("BPG", results.games_with_black, "C.07 7.3", "games played with black", integer=True),
    _row("BWG", results.wins_with_black, "C.07 7.4", "games won with black", integer=True),
    _row("PS", results.progressive, "C.07 7.5", "sum of progressive scores", mods=frozenset({"C"})),
    _row("REP", results.rounds_elected, "C.07 7.6", "rounds one elected to play", integer=True),
    _row("STD", results.standard_points, "C.07 7.7", "standard points (2026)"),
    _row("TPN", results.pairing_number, "C.07 7.8", "tournament pairing number (lower first)",
         mods=frozenset({"R"}), higher=False, integer=True),
    _row("BH", opponents.buchholz, "C.07 8.1", "Buchholz: sum of opponents' scores", mods=FAMILY),
    _row("AOB", opponents.average_opponents_buchholz, "C.07 8.2", "average of opponents' Buchholz",
         mods=frozenset({"F"})),
    _row("FB", opponents.fore_buchholz, "C.07 8.3", "Fore Buchholz: final round's games as draws", mods=FAMILY),
    _row("SB", opponents.sonneborn_berger, "C.07 9.1", "Sonneborn-Berger", mods=FAMILY),
    _row("KS", opponents.koya, "C.07 9.2", "Koya: points against opponents on 50% or more", mods=frozenset({"L"})),
    _row("ARO", rating.average_rating_opponents, "C.07 10.1", "average rating of opponents", mods=CUTS,
         rating_based=True),
    _row("TPR", rating.performance, "C.07 10.2", "tournament performance rating", rating_based=True),
    _row("PTP", rating.perfect_performance, "C.07 10.3", "perfect tournament performance", rating_based=True),
    _row("APRO", rating.average_performance_opponents, "C.07 10.4", "average performance of opponents",
         rating_based=True),
    _row("APPO", rating.average_perfect_performance_opponents, "C.07 10.5",
         "average perfect performance of opponents", rating_based=True),
    _row("RTNG", rating.own_rating, "C.07 10.6", "own rating (higher first)", mods=frozenset({"R"}),
         rating_based=True),
    _row("LOTS", results.drawing_of_lots, "C.07 4.2", "drawing of lots (seeded; --lots SEED)", integer=True),
    _row("USCF-MM", uscf.modified_median, "US 34E1", "modified median"),
    _row("USCF-SOLKOFF", uscf.solkoff, "US 34E2", "Solkoff (US adjusted scores)"),
    _row("USCF-CUM", uscf.cumulative, "US 34E3", "cumulative score, less unplayed wins and byes"),
    _row("USCF-MEDIAN", uscf.median, "US 34E4", "median (Harkness)"),
    _row("USCF-H2H", None, "US 34E5", "result between tied players (all must have met)", kind="partition"),
    _row("USCF-BLACKS", results.games_with_black, "US 34E6", "most games with black", integer=True),
    _row("USCF-KASHDAN", uscf.kashdan, "US 34E7", "Kashdan: 4 win, 2 draw, 1 loss, 0 unplayed", integer=True),
    _row("USCF-SB", uscf.sonneborn_berger, "US 34E8", "Sonneborn-Berger with US adjusted scores"),
    _row("USCF-OPPCUM", uscf.opponents_cumulative, "US 34E9", "opponents' cumulative scores"),
    _row("USCF-AVGOPP", rating.average_rating_opponents, "US 34E11", "average rating of opposition",
         rating_based=True),
)}
ALIASES: Final = {"GE": "REP", "BUCHHOLZ": "BH", "SONNEBORN-BERGER": "SB", "KOYA": "KS", "WINS": "WIN",
                  "PROGRESSIVE": "PS", "SOLKOFF": "USCF-SOLKOFF", "KASHDAN": "USCF-KASHDAN"}
#: Editions that US tie-breaks always use, whatever the run's edition (rules.md Section 7).
FIXED_EDITION: Final = {name: "uscf" for name in TIEBREAKS if name.startswith("USCF-")}


def check_spec(spec: TieBreakSpec, text: str | None = None, *, known: Mapping[str, frozenset[str]] | None = None,
               aliases: Mapping[str, str] | None = None) -> TieBreakSpec:
    """The spec with its alias resolved, once its name and modifiers are known to the registry.

    ``text`` (what the user wrote, default ``str(spec)``) is quoted in the error; ``known`` (name -> allowed
    modifier kinds) and ``aliases`` default to this registry (the team registry passes its own).
    """
    written = str(spec) if text is None else text
    known = known if known is not None else {n: t.modifiers for n, t in TIEBREAKS.items()}
    aliases = aliases if aliases is not None else ALIASES
    name = aliases.get(spec.name, spec.name)
    if name not in known:
        raise UnknownTieBreakError(f"unknown tie-break {written!r} (expected a name such as BH, SB, DE; "
                                   f"`tbstats tiebreaks` lists them)." + did_you_mean(name, known))
    allowed = known[name]
    bad = spec.modifiers - allowed
    if bad:
        listed = ", ".join(sorted(allowed)) or "none"
        raise UnknownTieBreakError(f"{written!r}: modifier {'/'.join(sorted(bad))} is not defined for {name} "
                                   f"(allowed: {listed})")
    return spec if name == spec.name else replace(spec, name=name)


def parse_spec(text: str) -> TieBreakSpec:
    """Parse one spec (rules.md Section 7) and check it against the registry.

    >>> str(parse_spec("buchholz-c1")), str(parse_spec("Sonneborn-Berger"))
    ('BH/C1', 'SB')
    >>> parse_spec("BH/L1")
    Traceback (most recent call last):
    tbstats.errors.UnknownTieBreakError: 'BH/L1': modifier L is not defined for BH (allowed: C, M, P)
    """
    return check_spec(read_spec(text), text)


def parse_specs(text: str | list[str]) -> list[TieBreakSpec]:
    """Parse a comma-separated list (or a list of strings) of specs."""
    return [parse_spec(s) for s in split_specs(text)]


def get_tiebreak(name: str) -> TieBreak:
    """The registry row for ``name`` (aliases allowed)."""
    key = ALIASES.get(name.upper(), name.upper())
    if key not in TIEBREAKS:
        raise UnknownTieBreakError(f"unknown tie-break {name!r}." + did_you_mean(key, TIEBREAKS))
    return TIEBREAKS[key]


def kernel_of(name: str) -> Kernel:
    """The kernel of a value tie-break."""
    kernel = get_tiebreak(name).kernel
    if kernel is None:
        raise UnknownTieBreakError(f"{name} orders tied groups; it has no per-player value")
    return kernel


__all__ = ["ALIASES", "TIEBREAKS", "Context", "TieBreak", "Values", "check_spec", "get_tiebreak", "kernel_of",
           "parse_spec", "parse_specs"]
