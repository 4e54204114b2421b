"""Slow, obviously-correct reference implementation of the tbstats tie-breaks (for tests only).

Every function here is written *per player* with plain loops, straight from the text of
``shared/docs/rules.md`` (quoted below as "rules.md §x") and FIDE C.07 / US Chess 34E as quoted there.
All arithmetic is exact (:class:`fractions.Fraction`).  Nothing here imports :mod:`tbstats`: this module is
the independent oracle the fast engine is compared with.

Data model: a :class:`RefTournament` holds :class:`RefPlayer` s, each with exactly ``n`` :class:`RefRound` s
(the rounds counted).  Result codes are the upper-case TRF codes of rules.md §2.2.

Public entry points: :func:`score`, :func:`adjusted_score`, :func:`compute`, :func:`rank`; helpers used by the
tests for the abstract worked examples of rules.md §10: :class:`Element`, :func:`elements`,
:func:`dummy_score`, :func:`cut_total`, :func:`uscf_modified_median`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

__all__ = [
    "EDITIONS",
    "STANDARD_POINTS",
    "THREE_ONE_ZERO_POINTS",
    "Element",
    "RefPlayer",
    "RefRound",
    "RefTournament",
    "adjusted_score",
    "category",
    "compute",
    "cut_total",
    "de_partition",
    "dummy_score",
    "elements",
    "expected_score",
    "fore_tournament",
    "parse_spec",
    "points_of",
    "rank",
    "rating_dp",
    "round_half_up",
    "score",
    "uscf_modified_median",
]

# ----------------------------------------------------------------------------------------------------------
# Data model
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RefRound:
    """One round of one player.

    ``opp`` is the opponent's start number (None when there is no opponent), ``colour`` 'w', 'b' or None,
    ``code`` the upper-case TRF result code (rules.md §2.2): with an opponent '1' '=' '0' 'W' 'D' 'L' '+' '-';
    without one 'U' (PAB), 'F' (FPB), 'H' (HPB), 'Z' (ZPB / absence / round-robin free round).
    """

    opp: int | None
    colour: str | None
    code: str


@dataclass(frozen=True)
class RefPlayer:
    """A participant: start number (TPN), rating (None = unrated) and exactly ``n`` rounds."""

    start_no: int
    rating: int | None
    rounds: tuple[RefRound, ...]


@dataclass(frozen=True)
class RefTournament:
    """An individual event.

    ``n`` = rounds counted; ``planned_rounds`` = the event's planned number of rounds (FB's final round,
    rules.md §4.8); ``round_robin`` = pre-determined pairings (C.07 15.2); ``points`` = points per kind
    (keys win, draw, loss, forfeit_win, forfeit_loss, pab, full_bye, half_bye, zero_bye; rules.md §2.4).
    """

    players: tuple[RefPlayer, ...]
    n: int
    planned_rounds: int
    round_robin: bool
    points: dict[str, Fraction]


STANDARD_POINTS: dict[str, Fraction] = {
    "win": Fraction(1), "draw": Fraction(1, 2), "loss": Fraction(0),
    "forfeit_win": Fraction(1), "forfeit_loss": Fraction(0),
    "pab": Fraction(1), "full_bye": Fraction(1), "half_bye": Fraction(1, 2), "zero_bye": Fraction(0),
}
THREE_ONE_ZERO_POINTS: dict[str, Fraction] = {
    "win": Fraction(3), "draw": Fraction(1), "loss": Fraction(0),
    "forfeit_win": Fraction(3), "forfeit_loss": Fraction(0),
    "pab": Fraction(3), "full_bye": Fraction(3), "half_bye": Fraction(1), "zero_bye": Fraction(0),
}

EDITIONS = ("fide-2026", "fide-2024", "fide-legacy", "uscf", "naive")
_FIDE = ("fide-2026", "fide-2024")                      # Art. 16 editions (VUR rule, 16.3 adjusted score)
_PREDETERMINED = ("fide-2026", "fide-2024", "fide-legacy")  # editions applying 15.2 to round robins (§4.7)

# rules.md §2.2: kind of each result code
_CODE_WITH_OPP = {"1": "win", "W": "win", "=": "draw", "D": "draw", "0": "loss", "L": "loss",
                  "+": "forfeit_win", "-": "forfeit_loss"}
_CODE_WITHOUT_OPP = {"U": "pab", "F": "full_bye", "H": "half_bye", "Z": "zero_bye"}
_OTB_CODES = "1=0WDL"


# ----------------------------------------------------------------------------------------------------------
# Small helpers
# ----------------------------------------------------------------------------------------------------------


def round_half_up(x: Fraction, places: int = 0) -> Fraction:
    """Round half up ("0.5 rounded up", C.07 10.1) to ``places`` decimals, exactly.

    >>> round_half_up(Fraction(25, 2)), round_half_up(Fraction(12605, 1000), 2)
    (Fraction(13, 1), Fraction(1261, 100))
    """
    scale = Fraction(10) ** places
    return Fraction(math.floor(x * scale + Fraction(1, 2))) / scale


def _player(t: RefTournament, p: int) -> RefPlayer:
    for q in t.players:
        if q.start_no == p:
            return q
    raise KeyError(p)


def _rounds(t: RefTournament, p: int) -> tuple[RefRound, ...]:
    return _player(t, p).rounds[: t.n]


def points_of(t: RefTournament, rd: RefRound) -> Fraction:
    """Points awarded for one round (rules.md §2.2 kinds, §2.4 scoring)."""
    kind = _CODE_WITH_OPP[rd.code] if rd.opp is not None else _CODE_WITHOUT_OPP[rd.code]
    return t.points[kind]


def _W(t: RefTournament) -> Fraction:
    return t.points["win"]


def _D(t: RefTournament) -> Fraction:
    return t.points["draw"]


def _is_otb(rd: RefRound) -> bool:
    """A game played over the board: codes 1 = 0 W D L with an opponent (rules.md §2.2)."""
    return rd.opp is not None and rd.code in _OTB_CODES


def _is_forfeit(rd: RefRound) -> bool:
    """A forfeit win or loss against a scheduled opponent (double forfeit = '-' on both sides)."""
    return rd.opp is not None and rd.code in "+-"


def _is_requested_bye(rd: RefRound) -> bool:
    """HPB or ZPB (C.07 16.1.1; absences, withdrawals and late entries are ZPBs)."""
    return rd.opp is None and rd.code in "HZ"


def _is_vur(rd: RefRound) -> bool:
    """VUR = "a requested bye or a forfeit loss" (C.07 16.1.2, rules.md §4.2)."""
    return _is_requested_bye(rd) or (rd.opp is not None and rd.code == "-")


def score(t: RefTournament, p: int) -> Fraction:
    """A player's actual score over rounds 1..n (rules.md Notation: score(p))."""
    return sum((points_of(t, rd) for rd in _rounds(t, p)), Fraction(0))


def _score_before(t: RefTournament, p: int, r: int) -> Fraction:
    """S_P(r-1): actual score before round r (1-based)."""
    return sum((points_of(t, rd) for rd in _rounds(t, p)[: r - 1]), Fraction(0))


def category(t: RefTournament, p: int, r: int) -> str | None:
    """C.07 16.2 category of player p's round r (1-based), None for a game played over the board.

    16.2.1 PAB/FPB; 16.2.2 forfeit win; 16.2.3 requested bye followed by at least one non-VUR round;
    16.2.4 forfeit loss; 16.2.5 requested bye "followed only by VURs or in the last round" (rules.md §2.2,
    §4.2; "last round" = round n, §4.8).
    """
    rounds = _rounds(t, p)
    rd = rounds[r - 1]
    if _is_otb(rd):
        return None
    if rd.opp is None:
        if rd.code in "UF":
            return "16.2.1"
        later = rounds[r:]
        if r == t.n or all(_is_vur(x) for x in later):
            return "16.2.5"
        return "16.2.3"
    return "16.2.2" if rd.code == "+" else "16.2.4"


def adjusted_score(t: RefTournament, p: int, edition: str) -> Fraction:
    """The score player p contributes to other players' tie-breaks (``as_opponent`` of rules.md §4.7).

    - round robin (pre-determined, C.07 15.2) under fide-2026/2024/legacy: the actual score;
    - fide-2026/2024 (C.07 16.3): awarded points, category 16.2.5 rounds counted as a draw (D);
    - fide-legacy (C.02 2009) and uscf (34E1): every unplayed round (any bye, forfeit, absence) counts D;
    - naive: the raw score.
    This is the ``ADJ`` column of the fixtures.
    """
    _check_edition(edition)
    if edition == "naive" or (t.round_robin and edition in _PREDETERMINED):
        return score(t, p)
    total = Fraction(0)
    for r, rd in enumerate(_rounds(t, p), start=1):
        if edition in _FIDE:
            total += _D(t) if category(t, p, r) == "16.2.5" else points_of(t, rd)
        else:  # fide-legacy, uscf
            total += points_of(t, rd) if _is_otb(rd) else _D(t)
    return total


def _check_edition(edition: str) -> None:
    if edition not in EDITIONS:
        raise ValueError(f"unknown edition {edition!r}")


# ----------------------------------------------------------------------------------------------------------
# Elements of BH / SB (rules.md §4.4, §4.5, §4.7)
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Element:
    """One round's entry in a player's Buchholz/Sonneborn-Berger (rules.md §4.5 ``e_r``).

    ``oppscore`` = the (adjusted) opponent score or the dummy score; ``bh`` = BH contribution (= oppscore);
    ``sb`` = SB contribution (oppscore x points scored); ``vur`` = the round is a VUR (fide-2026/2024 only).
    """

    rnd: int
    oppscore: Fraction
    bh: Fraction
    sb: Fraction
    vur: bool


def dummy_score(
    edition: str,
    *,
    own_score: Fraction,
    points: Fraction,
    score_before: Fraction,
    rnd: int,
    n: int,
    win: Fraction,
    draw: Fraction,
    forfeit_opponent_adjusted: Fraction | None = None,
) -> Fraction | None:
    """Score of the opponent-substitute for one of the player's own unplayed rounds (rules.md §4.7).

    - fide-2026 (C.07 16.4): own score, capped by the scheduled opponent's adjusted score for forfeits
      (16.4.1; pass ``forfeit_opponent_adjusted``) or by ``draw * n`` otherwise (16.4.2);
    - fide-2024: own final score, uncapped;
    - fide-legacy (C.02 2009 virtual opponent): ``S(before r) + (W - p_r) + D * (n - r)``;
    - uscf (34E1): 0;  naive: None (no element at all).

    >>> dummy_score("fide-legacy", own_score=Fraction(7), points=Fraction(0), score_before=Fraction(2),
    ...             rnd=4, n=10, win=Fraction(1), draw=Fraction(1, 2))
    Fraction(6, 1)
    """
    _check_edition(edition)
    if edition == "fide-2026":
        cap = forfeit_opponent_adjusted if forfeit_opponent_adjusted is not None else draw * n
        return min(own_score, cap)
    if edition == "fide-2024":
        return own_score
    if edition == "fide-legacy":
        return score_before + (win - points) + draw * (n - rnd)
    if edition == "uscf":
        return Fraction(0)
    return None  # naive


def _element(t: RefTournament, p: int, r: int, edition: str, forfeits: bool = False) -> Element | None:
    """``element(P, r)`` of rules.md §4.7, literally; ``forfeits`` is ``/P`` (rules.md §5): a forfeit with a
    scheduled opponent is a game against that opponent, with the points awarded."""
    rd = _rounds(t, p)[r - 1]
    pts = points_of(t, rd)
    predetermined = t.round_robin and edition in _PREDETERMINED
    if _is_otb(rd) or ((predetermined or forfeits) and _is_forfeit(rd) and rd.opp is not None):
        assert rd.opp is not None
        s = adjusted_score(t, rd.opp, edition)
        return Element(r, s, s, s * pts, False)
    if predetermined:
        return None  # the free round of an odd round robin is no element (15.2)
    forfeit_adj = adjusted_score(t, rd.opp, edition) if _is_forfeit(rd) and rd.opp is not None else None
    d = dummy_score(
        edition,
        own_score=score(t, p),
        points=pts,
        score_before=_score_before(t, p, r),
        rnd=r,
        n=t.n,
        win=_W(t),
        draw=_D(t),
        forfeit_opponent_adjusted=forfeit_adj,
    )
    if d is None:
        return None
    return Element(r, d, d, d * pts, _is_vur(rd) and edition in _FIDE)


def elements(t: RefTournament, p: int, edition: str, forfeits: bool = False) -> list[Element]:
    """All elements of player p for rounds 1..n (rounds that give no element are left out)."""
    _check_edition(edition)
    out = []
    for r in range(1, t.n + 1):
        e = _element(t, p, r, edition, forfeits)
        if e is not None:
            out.append(e)
    return out


def _contribution(e: Element, kind: str) -> Fraction:
    return e.bh if kind == "BH" else e.sb


def _low_cut(elems: list[Element], kind: str) -> list[Element]:
    """Remove one least significant value, with the VUR exception (C.07 14.1, 16.5; rules.md §4.5).

    1. LSV element l: BH -> lowest contribution; SB -> contribution of the lowest-scored opponent, lowest
       contribution among them (14.1.2 d).  Ties: lower oppscore, lower contribution, VUR first, earliest.
    2. No VUR element left, or l is a VUR: cut l.
    3. Else v = VUR element with the lowest contribution (ties: lowest oppscore, earliest round); cut v
       "as long as such contribution is not lower than the least significant value" (16.5.1), else cut l.
    """
    def lsv_key(e: Element) -> tuple[Fraction, Fraction, bool, int]:
        if kind == "BH":
            return (e.bh, e.oppscore, not e.vur, e.rnd)
        return (e.oppscore, e.sb, not e.vur, e.rnd)

    lsv = min(elems, key=lsv_key)
    vurs = [e for e in elems if e.vur]
    victim = lsv
    if vurs and not lsv.vur:
        v = min(vurs, key=lambda e: (_contribution(e, kind), e.oppscore, e.rnd))
        if _contribution(v, kind) >= _contribution(lsv, kind):
            victim = v
    out = list(elems)
    out.remove(victim)
    return out


def _high_cut(elems: list[Element], kind: str) -> list[Element]:
    """Remove the most significant value, no VUR preference (14.3; rules.md §4.5).

    BH -> highest contribution; SB -> contribution of the highest-scored opponent (highest among them).
    """
    def msv_key(e: Element) -> tuple[Fraction, Fraction]:
        if kind == "BH":
            return (e.bh, e.oppscore)
        return (e.oppscore, e.sb)

    victim = max(elems, key=msv_key)
    out = list(elems)
    out.remove(victim)
    return out


def cut_total(elems: list[Element], kind: str, low: int = 0, high: int = 0) -> Fraction:
    """Sum of BH (``kind='BH'``) or SB (``kind='SB'``) contributions after ``low`` low cuts then ``high``
    high cuts (Cut-k: low=k; Median-k: low=high=k, "in that order", 14.3/14.4).  Never cuts more elements
    than exist (rules.md §5.6)."""
    if kind not in ("BH", "SB"):
        raise ValueError(kind)
    rest = list(elems)
    for _ in range(low):
        if rest:
            rest = _low_cut(rest, kind)
    for _ in range(high):
        if rest:
            rest = _high_cut(rest, kind)
    return sum((_contribution(e, kind) for e in rest), Fraction(0))


def _buchholz(t: RefTournament, p: int, edition: str, low: int, high: int, forfeits: bool = False) -> Fraction:
    """BH (C.07 8.1) = sum of BH contributions (rules.md §5.3) with cuts."""
    return cut_total(elements(t, p, edition, forfeits), "BH", low, high)


def _sonneborn_berger(t: RefTournament, p: int, edition: str, low: int, high: int,
                      forfeits: bool = False) -> Fraction:
    """SB (C.07 9.1) = sum of SB contributions (rules.md §5.4) with cuts."""
    return cut_total(elements(t, p, edition, forfeits), "SB", low, high)


def fore_tournament(t: RefTournament) -> RefTournament:
    """The event "as if all paired games for the final round had ended in draws" (C.07 8.3, rules.md §5.3).

    Every final-round round with a scheduled opponent (played or forfeited, also a double forfeit) becomes a
    draw '=' for both players; byes keep their points.  The final round is the *planned* last round: when
    fewer rounds are counted (``n < planned_rounds``) nothing changes, so FB == BH (rules.md §4.8).
    """
    if t.n < t.planned_rounds:
        return t
    players = []
    for pl in t.players:
        rounds = list(pl.rounds)
        last = rounds[t.n - 1]
        if last.opp is not None:
            rounds[t.n - 1] = RefRound(last.opp, last.colour, "=")
        players.append(RefPlayer(pl.start_no, pl.rating, tuple(rounds)))
    return RefTournament(tuple(players), t.n, t.planned_rounds, t.round_robin, t.points)


def _aob(t: RefTournament, p: int, edition: str, fore: bool) -> Fraction | None:
    """AOB (C.07 8.2): average over the opponents played over the board of their BH (FB with ``/F``),
    each game counted (4.4); rounded half up to 2 decimals (rules.md §5.3)."""
    source = fore_tournament(t) if fore else t
    values = [_buchholz(source, rd.opp, edition, 0, 0)
              for rd in _rounds(t, p) if _is_otb(rd) and rd.opp is not None]
    if not values:
        return None
    return round_half_up(Fraction(sum(values, Fraction(0)), len(values)), 2)


# ----------------------------------------------------------------------------------------------------------
# Type B (Art. 7) and Koya (9.2)
# ----------------------------------------------------------------------------------------------------------


def _win(t: RefTournament, p: int) -> Fraction:
    """WIN (7.1): rounds in which the player obtains, with or without playing, the points of a win."""
    return Fraction(sum(1 for rd in _rounds(t, p) if points_of(t, rd) == _W(t)))


def _won(t: RefTournament, p: int) -> Fraction:
    """WON (7.2): games won over the board (codes 1 and W); never forfeits."""
    return Fraction(sum(1 for rd in _rounds(t, p) if _is_otb(rd) and rd.code in "1W"))


def _bpg(t: RefTournament, p: int) -> Fraction:
    """BPG (7.3): games played over the board with black."""
    return Fraction(sum(1 for rd in _rounds(t, p) if _is_otb(rd) and rd.colour == "b"))


def _bwg(t: RefTournament, p: int) -> Fraction:
    """BWG (7.4): games won over the board with black."""
    return Fraction(sum(1 for rd in _rounds(t, p) if _is_otb(rd) and rd.colour == "b" and rd.code in "1W"))


def _running_scores(t: RefTournament, p: int) -> list[Fraction]:
    out, s = [], Fraction(0)
    for rd in _rounds(t, p):
        s += points_of(t, rd)
        out.append(s)
    return out


def _ps(t: RefTournament, p: int, cut: int) -> Fraction:
    """PS (7.5): sum of the running scores after rounds 1..n; ``/Ck`` leaves out the first k (14.1.2 c)."""
    return sum(_running_scores(t, p)[cut:], Fraction(0))


def _rep(t: RefTournament, p: int, edition: str) -> Fraction:
    """REP (7.6): "the number of rounds reduced by the number of half-point-byes, zero-point-byes or
    forfeit losses".  PAB, FPB, forfeit wins count as elected; a double forfeit does not.

    Round robins (rules.md §4.6): under fide-2024 (and legacy, which counts unplayed RR games as played)
    a forfeit loss is a regular game, so it counts as elected; under fide-2026 it stays unplayed.  The free
    round of an odd round robin, written blank (or ``Z``), is a zero-point bye (rules.md §2.2) and reduces REP,
    as in a Swiss event.
    """
    count = 0
    for rd in _rounds(t, p):
        if rd.opp is None:
            if rd.code in "UF":
                count += 1
        elif rd.code == "-":
            if t.round_robin and edition in ("fide-2024", "fide-legacy"):
                count += 1
        else:
            count += 1
    return Fraction(count)


def _std(t: RefTournament, p: int) -> Fraction:
    """STD (7.7): 1 per round with more points than the scheduled opponent (or, without playing, more than a
    draw), ½ per round with equal points (or exactly a draw without playing).  A double forfeit gives ½."""
    total = Fraction(0)
    for r, rd in enumerate(_rounds(t, p), start=1):
        mine = points_of(t, rd)
        # with a scheduled opponent (games and forfeits): the opponent's points; without: a draw's points
        other = points_of(t, _rounds(t, rd.opp)[r - 1]) if rd.opp is not None else _D(t)
        if mine > other:
            total += 1
        elif mine == other:
            total += Fraction(1, 2)
    return total


def _koya(t: RefTournament, p: int, k: int) -> Fraction:
    """KS (9.2): points achieved against all participants who scored at least 50% of the maximum possible
    score; maximum = W x rounds in which a participant could be scheduled (Swiss: n; round robin: the rounds
    with an opponent, i.e. n minus the free round of an odd field).  ``/Lk`` moves the limit by k half
    points (14.5).  Actual final scores; forfeits count (rules.md §5.4)."""
    if t.round_robin:
        games = max(sum(1 for rd in pl.rounds[: t.n] if rd.opp is not None) for pl in t.players)
    else:
        games = t.n
    limit = _W(t) * games / 2 + Fraction(k, 2)
    total = Fraction(0)
    for rd in _rounds(t, p):
        if rd.opp is not None and score(t, rd.opp) >= limit:
            total += points_of(t, rd)
    return total


# ----------------------------------------------------------------------------------------------------------
# Rating based (Art. 10)
# ----------------------------------------------------------------------------------------------------------

_DP = {
    0: -800, 1: -677, 2: -589, 3: -538, 4: -501, 5: -470, 6: -444, 7: -422, 8: -401, 9: -383, 10: -366,
    11: -351, 12: -336, 13: -322, 14: -309, 15: -296, 16: -284, 17: -273, 18: -262, 19: -251, 20: -240,
    21: -230, 22: -220, 23: -211, 24: -202, 25: -193, 26: -184, 27: -175, 28: -166, 29: -158, 30: -149,
    31: -141, 32: -133, 33: -125, 34: -117, 35: -110, 36: -102, 37: -95, 38: -87, 39: -80, 40: -72,
    41: -65, 42: -57, 43: -50, 44: -43, 45: -36, 46: -29, 47: -21, 48: -14, 49: -7, 50: 0,
}

# (highest |d| of the band, expected score of the higher-rated side), rules.md §5.5
_PD = [
    (3, 50), (10, 51), (17, 52), (25, 53), (32, 54), (39, 55), (46, 56), (53, 57), (61, 58), (68, 59),
    (76, 60), (83, 61), (91, 62), (98, 63), (106, 64), (113, 65), (121, 66), (129, 67), (137, 68),
    (145, 69), (153, 70), (162, 71), (170, 72), (179, 73), (188, 74), (197, 75), (206, 76), (215, 77),
    (225, 78), (235, 79), (245, 80), (256, 81), (267, 82), (278, 83), (290, 84), (302, 85), (315, 86),
    (328, 87), (344, 88), (357, 89), (374, 90), (391, 91), (411, 92), (432, 93), (456, 94), (484, 95),
    (517, 96), (559, 97), (619, 98), (735, 99),
]


def rating_dp(p: int) -> int:
    """dp(p) of the FIDE table for a percentage p in 0..100 (``dp(100 - p) = -dp(p)``).

    >>> rating_dp(70), rating_dp(50), rating_dp(0)
    (149, 0, -800)
    """
    if not 0 <= p <= 100:
        raise ValueError(p)
    return _DP[p] if p <= 50 else -_DP[100 - p]


def expected_score(d: int) -> Fraction:
    """P(d): expected score of a player rated d points above the opponent, full scale (no 400 cut).

    >>> expected_score(0), expected_score(-800), expected_score(736)
    (Fraction(1, 2), Fraction(0, 1), Fraction(1, 1))
    """
    a = abs(d)
    hi = Fraction(100, 100)
    for bound, pct in _PD:
        if a <= bound:
            hi = Fraction(pct, 100)
            break
    return hi if d >= 0 else 1 - hi


def _ratings(t: RefTournament, unrated_rating: int | None) -> dict[int, int] | None:
    """Rating per player, or None when every Art. 10 value is undefined: an unrated participant is present
    and no rating for unrated players is configured (rules.md §5.5)."""
    out = {}
    for pl in t.players:
        if pl.rating is None:
            if unrated_rating is None:
                return None
            out[pl.start_no] = unrated_rating
        else:
            out[pl.start_no] = pl.rating
    return out


def _game_result(rd: RefRound) -> Fraction:
    """Game result 1 / ½ / 0 of an OTB game (rating calculations use game results, not event points)."""
    results = {"1": Fraction(1), "W": Fraction(1), "=": Fraction(1, 2), "D": Fraction(1, 2)}
    return results.get(rd.code, Fraction(0))


def _otb_opponent_ratings(t: RefTournament, p: int, ratings: dict[int, int]) -> list[int]:
    return [ratings[rd.opp] for rd in _rounds(t, p) if _is_otb(rd) and rd.opp is not None]


def _aro(t: RefTournament, p: int, ratings: dict[int, int], low: int, high: int) -> Fraction | None:
    """ARO (10.1): average rating of OTB opponents (forfeits never count), lowest ``low`` and highest
    ``high`` ratings cut first, "rounded to the nearest whole number (0.5 rounded up)"; none left: undef."""
    values = sorted(_otb_opponent_ratings(t, p, ratings))
    values = values[low:]
    values = values[: len(values) - high] if high else values
    if not values:
        return None
    return round_half_up(Fraction(sum(values), len(values)))


def _tpr(t: RefTournament, p: int, ratings: dict[int, int]) -> Fraction | None:
    """TPR (10.2): ARO + dp(p), p = round_half_up(100 x OTB game points / OTB games); no game: undef."""
    games = [rd for rd in _rounds(t, p) if _is_otb(rd)]
    aro = _aro(t, p, ratings, 0, 0)
    if not games or aro is None:
        return None
    pts = sum((_game_result(rd) for rd in games), Fraction(0))
    pct = int(round_half_up(100 * pts / len(games)))
    return aro + rating_dp(pct)


def _ptp(t: RefTournament, p: int, ratings: dict[int, int]) -> Fraction | None:
    """PTP (10.3): the lowest integer rating R whose expected score sum P(R - R_opp) over the OTB games is
    >= the OTB score; zero score: lowest opponent rating - 800; no game: undef."""
    games = [rd for rd in _rounds(t, p) if _is_otb(rd) and rd.opp is not None]
    if not games:
        return None
    opp = [ratings[rd.opp] for rd in games if rd.opp is not None]
    pts = sum((_game_result(rd) for rd in games), Fraction(0))
    if pts == 0:
        return Fraction(min(opp) - 800)

    def exp(r: int) -> Fraction:
        return sum((expected_score(r - o) for o in opp), Fraction(0))

    lo, hi = min(opp) - 736, max(opp) + 736  # exp(lo) = 0 < pts, exp(hi) = games >= pts
    while hi - lo > 1:  # invariant: exp(lo) < pts <= exp(hi); exp is non-decreasing
        mid = (lo + hi) // 2
        if exp(mid) >= pts:
            hi = mid
        else:
            lo = mid
    return Fraction(hi)


def _average_of_opponents(
    t: RefTournament,
    p: int,
    ratings: dict[int, int],
    fn: Callable[[RefTournament, int, dict[int, int]], Fraction | None],
) -> Fraction | None:
    """APRO (10.4) / APPO (10.5): average of the OTB opponents' TPR / PTP, undefined values skipped,
    rounded half up; each game counts (4.4)."""
    values = []
    for rd in _rounds(t, p):
        if _is_otb(rd) and rd.opp is not None:
            v = fn(t, rd.opp, ratings)
            if v is not None:
                values.append(v)
    if not values:
        return None
    return round_half_up(Fraction(sum(values, Fraction(0)), len(values)))


# ----------------------------------------------------------------------------------------------------------
# US Chess 34E (rules.md §6)
# ----------------------------------------------------------------------------------------------------------


def uscf_modified_median(
    values: list[Fraction], own_score: Fraction, max_score: Fraction, n: int
) -> Fraction:
    """34E1 Modified Median over opponents' adjusted scores (own unplayed rounds as 0 values).

    Plus score (> half the maximum): drop the lowest; even: drop the highest and the lowest; minus: drop the
    highest.  From 9 rounds on: two of each.

    >>> uscf_modified_median([Fraction(v) for v in (0, 3, 3, 4, 5)], Fraction(4), Fraction(5), 5)
    Fraction(15, 1)
    """
    k = 2 if n >= 9 else 1
    rest = sorted(values)
    half = max_score / 2
    low = k if own_score >= half else 0
    high = k if own_score <= half else 0
    rest = rest[low:] if low <= len(rest) else []
    rest = rest[: max(len(rest) - high, 0)]
    return sum(rest, Fraction(0))


def _uscf_cum(t: RefTournament, p: int) -> Fraction:
    """34E3 Cumulative: sum of the running scores, minus the points of each unplayed win or full-point bye
    (PAB, FPB, forfeit win: 1) and of each half-point bye (½) (rules.md §6)."""
    total = sum(_running_scores(t, p), Fraction(0))
    for rd in _rounds(t, p):
        if (rd.opp is None and rd.code in "UFH") or (rd.opp is not None and rd.code == "+"):
            total -= points_of(t, rd)
    return total


def _uscf_oppcum(t: RefTournament, p: int) -> Fraction:
    """34E9: sum of the Cumulative values of the opponents actually played (each game counts)."""
    return sum((_uscf_cum(t, rd.opp) for rd in _rounds(t, p) if _is_otb(rd) and rd.opp is not None),
               Fraction(0))


def _uscf_kashdan(t: RefTournament, p: int) -> Fraction:
    """34E7: 4 per win, 2 per draw, 1 per loss, 0 per unplayed game (over-the-board games only)."""
    total = 0
    for rd in _rounds(t, p):
        if _is_otb(rd):
            total += {"1": 4, "W": 4, "=": 2, "D": 2}.get(rd.code, 1)
    return Fraction(total)


# ----------------------------------------------------------------------------------------------------------
# Direct encounter (Art. 6, rules.md §5.1)
# ----------------------------------------------------------------------------------------------------------


def _de_counted(t: RefTournament, rd: RefRound, with_forfeits: bool) -> bool:
    """OTB games; forfeits too in pre-determined events (15.2) or with DE/P (6.1.1)."""
    return _is_otb(rd) or (_is_forfeit(rd) and (t.round_robin or with_forfeits))


def de_partition(t: RefTournament, group: list[int], with_forfeits: bool = False) -> list[list[int]]:
    """DE(G) of rules.md §5.1: an ordered partition of ``group`` (best first)."""
    group = sorted(group)
    if len(group) <= 1:
        return [group]
    pts: dict[int, Fraction] = {}
    met: dict[int, set[int]] = {}
    for a in group:
        pts[a] = Fraction(0)
        met[a] = set()
        for b in group:
            if b == a:
                continue
            games = [points_of(t, rd) for rd in _rounds(t, a)
                     if rd.opp == b and _de_counted(t, rd, with_forfeits)]
            if games:
                met[a].add(b)
                pts[a] += Fraction(sum(games, Fraction(0)), len(games))  # 6.1.2: average of the games
    all_met = all(len(met[a]) == len(group) - 1 for a in group)
    if all_met or t.round_robin:  # 6.2
        levels = sorted({pts[a] for a in group}, reverse=True)
        if len(levels) == 1:
            return [group]
        out: list[list[int]] = []
        for level in levels:
            part = [a for a in group if pts[a] == level]
            out.extend(de_partition(t, part, with_forfeits))
        return out
    # 6.3 (Swiss): rank a participant first when alone on top whatever the missing games' outcome
    remaining = sorted(group, key=lambda a: (-pts[a], a))
    ranked: list[list[int]] = []
    while len(remaining) >= 2:
        c = remaining[0]
        best = max(pts[r] + _W(t) * (len(group) - 1 - len(met[r])) for r in remaining[1:])
        if pts[c] > best:
            ranked.append([c])
            remaining = remaining[1:]
        else:
            break
    if not ranked:
        return [group]
    return ranked + de_partition(t, remaining, with_forfeits)


# ----------------------------------------------------------------------------------------------------------
# Spec parsing, compute, rank
# ----------------------------------------------------------------------------------------------------------

_NAMES = {
    "PTS", "DE", "WIN", "WON", "BPG", "BWG", "PS", "REP", "STD", "TPN", "BH", "AOB", "FB", "SB", "KS",
    "ARO", "TPR", "PTP", "APRO", "APPO", "RTNG",
    "USCF-MM", "USCF-SOLKOFF", "USCF-MEDIAN", "USCF-CUM", "USCF-OPPCUM", "USCF-BLACKS", "USCF-KASHDAN",
    "USCF-SB", "USCF-AVGOPP",
}
_RATING_NAMES = {"ARO", "TPR", "PTP", "APRO", "APPO", "RTNG", "USCF-AVGOPP"}


@dataclass(frozen=True)
class _Spec:
    name: str
    low: int = 0
    high: int = 0
    koya: int = 0
    forfeits: bool = False     # /P
    fore: bool = False         # /F
    reverse: bool = False      # /R
    unrated: int | None = None  # /U<rating>
    edition: str | None = None  # @EDITION


def parse_spec(spec: str) -> _Spec:
    """Parse ``NAME{/MOD}[@EDITION]`` (rules.md §7; only the ``/`` modifier separator)."""
    text = spec.strip().upper()
    edition = None
    if "@" in text:
        text, ed = text.split("@", 1)
        edition = ed.lower()
        _check_edition(edition)
    name, *mods = text.split("/")
    if name not in _NAMES:
        raise ValueError(f"unknown tie-break {spec!r}")
    low = high = koya = 0
    forfeits = fore = reverse = False
    unrated = None
    for m in mods:
        if m[:1] == "C" and m[1:].isdigit():
            low = int(m[1:])
        elif m[:1] == "M" and m[1:].isdigit():
            low = high = int(m[1:])
        elif m[:1] == "L":
            koya = int(m[1:])
        elif m == "P":
            forfeits = True
        elif m == "F":
            fore = True
        elif m == "R":
            reverse = True
        elif m[:1] == "U" and m[1:].isdigit():
            unrated = int(m[1:])
        else:
            raise ValueError(f"unknown modifier {m!r} in {spec!r}")
    if (low or high) and name not in ("BH", "FB", "SB", "ARO", "PS"):
        raise ValueError(f"cut modifier not supported for {spec!r}")
    if high and name == "PS":
        raise ValueError(f"median modifier not supported for {spec!r}")
    return _Spec(name, low, high, koya, forfeits, fore, reverse, unrated, edition)


def compute(
    t: RefTournament, spec: str, edition: str, unrated_rating: int | None = None
) -> dict[int, Fraction | None]:
    """Value of tie-break ``spec`` for every player (start number -> value; None = undefined).

    AOB is rounded half up to 2 decimals, ARO/TPR/APRO/APPO/USCF-AVGOPP half up to whole numbers.
    US specs always use the US rules (edition ``uscf``) whatever ``edition`` is (rules.md §7).
    ``DE`` yields a partition, not a number: use :func:`rank`.
    """
    s = parse_spec(spec)
    ed = s.edition or edition
    _check_edition(ed)
    if s.name == "DE":
        raise ValueError("DE is not a number; use rank()")
    unrated = s.unrated if s.unrated is not None else unrated_rating
    ratings = _ratings(t, unrated) if s.name in _RATING_NAMES else None
    out: dict[int, Fraction | None] = {}
    for pl in t.players:
        p = pl.start_no
        out[p] = _compute_one(t, p, s, ed, ratings)
    return out


def _compute_one(
    t: RefTournament, p: int, s: _Spec, ed: str, ratings: dict[int, int] | None
) -> Fraction | None:
    name = s.name
    if name in _RATING_NAMES and ratings is None:
        return None
    if name == "PTS":
        return score(t, p)
    if name == "WIN":
        return _win(t, p)
    if name == "WON":
        return _won(t, p)
    if name == "BPG":
        return _bpg(t, p)
    if name == "BWG":
        return _bwg(t, p)
    if name == "PS":
        return _ps(t, p, s.low)
    if name == "REP":
        return _rep(t, p, ed)
    if name == "STD":
        return _std(t, p)
    if name == "TPN":
        return Fraction(p)
    if name == "BH":
        return _buchholz(t, p, ed, s.low, s.high, s.forfeits)
    if name == "FB":
        return _buchholz(fore_tournament(t), p, ed, s.low, s.high, s.forfeits)
    if name == "SB":
        return _sonneborn_berger(t, p, ed, s.low, s.high, s.forfeits)
    if name == "AOB":
        return _aob(t, p, ed, s.fore)
    if name == "KS":
        return _koya(t, p, s.koya)
    assert ratings is not None or name.startswith("USCF-")
    if name == "ARO":
        assert ratings is not None
        return _aro(t, p, ratings, s.low, s.high)
    if name == "TPR":
        assert ratings is not None
        return _tpr(t, p, ratings)
    if name == "PTP":
        assert ratings is not None
        return _ptp(t, p, ratings)
    if name == "APRO":
        assert ratings is not None
        return _average_of_opponents(t, p, ratings, _tpr)
    if name == "APPO":
        assert ratings is not None
        return _average_of_opponents(t, p, ratings, _ptp)
    if name == "RTNG":
        assert ratings is not None
        return Fraction(ratings[p])
    # US Chess 34E: always the uscf rules
    if name == "USCF-SOLKOFF":
        return _buchholz(t, p, "uscf", 0, 0)
    if name == "USCF-MEDIAN":
        k = 2 if t.n >= 9 else 1
        return _buchholz(t, p, "uscf", k, k)
    if name == "USCF-MM":
        values = [e.bh for e in elements(t, p, "uscf")]
        return uscf_modified_median(values, score(t, p), _W(t) * t.n, t.n)
    if name == "USCF-CUM":
        return _uscf_cum(t, p)
    if name == "USCF-OPPCUM":
        return _uscf_oppcum(t, p)
    if name == "USCF-BLACKS":
        return _bpg(t, p)
    if name == "USCF-KASHDAN":
        return _uscf_kashdan(t, p)
    if name == "USCF-SB":
        return _sonneborn_berger(t, p, "uscf", 0, 0)
    if name == "USCF-AVGOPP":
        assert ratings is not None
        return _aro(t, p, ratings, 0, 0)
    raise ValueError(name)


def _lower_is_better(s: _Spec) -> bool:
    """Higher is better except TPN (lower) and RTNG/R (rules.md §5 table); TPN/R is higher first."""
    if s.name == "TPN":
        return not s.reverse
    if s.name == "RTNG":
        return s.reverse
    return False


def rank(
    t: RefTournament, specs: list[str], edition: str, unrated_rating: int | None = None
) -> dict[int, int]:
    """Standings (rules.md §8, C.07 4.2): PTS, then every spec in order, each applied only inside the groups
    still tied ("for each subgroup of participants still tied"); DE is evaluated on the current subgroup
    only.  Undefined values rank below defined ones (an all-undefined tie-break splits nothing, i.e. it is
    skipped).  Remaining ties share the best rank (1, 2, 2, 4).  A leading ``PTS`` in ``specs`` is optional.
    """
    _check_edition(edition)
    specs = list(specs)
    if not specs or parse_spec(specs[0]).name != "PTS":
        specs = ["PTS", *specs]
    groups: list[list[int]] = [sorted(pl.start_no for pl in t.players)]
    for spec in specs:
        s = parse_spec(spec)
        new_groups: list[list[int]] = []
        if s.name == "DE":
            for g in groups:
                new_groups.extend(de_partition(t, g, s.forfeits) if len(g) > 1 else [g])
        else:
            values = compute(t, spec, edition, unrated_rating)
            lower = _lower_is_better(s)

            def key(
                p: int, values: dict[int, Fraction | None] = values, lower: bool = lower
            ) -> tuple[int, Fraction]:
                v = values[p]
                if v is None:
                    return (1, Fraction(0))
                return (0, v if lower else -v)

            for g in groups:
                levels = sorted({key(p) for p in g})
                for level in levels:
                    new_groups.append([p for p in g if key(p) == level])
        groups = new_groups
    out: dict[int, int] = {}
    position = 1
    for g in groups:
        for p in g:
            out[p] = position
        position += len(g)
    return out
