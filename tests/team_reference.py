"""A slow, per-team reference for team scores and tie-breaks, written from rules.md Sections 4, 5.1 and 9 only.

It works on the generated event description (:class:`TeamEvent`), never on the tbstats team tables, with
exact fractions and plain loops, so that the vectorised kernels can be checked against it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

#: per team and round: (type, opponent team or None, board points by board (None for unplayed rounds))
Round = tuple[str, int | None, list[Fraction] | None]
VUR = ("half_bye", "zero_bye", "absent", "forfeit_loss", "double_forfeit")
REQUESTED = ("half_bye", "zero_bye", "absent")
SCHEDULED = ("forfeit_win", "forfeit_loss", "double_forfeit")


@dataclass
class TeamEvent:
    """A generated team event: the ground truth the TRF text is written from."""

    teams: int
    boards: int
    rounds: int
    tw: int
    td: int
    round_robin: bool
    pab: tuple[Fraction, Fraction]                  # 320 MP, GP
    schedule: dict[int, list[Round]] = field(default_factory=dict)   # team -> rounds
    strength: dict[int, int] = field(default_factory=dict)
    cache: dict[tuple[int, str], list[Fraction]] = field(default_factory=dict, repr=False)

    W = Fraction(1)
    D = Fraction(1, 2)

    def match(self, team: int, r: int) -> tuple[str, int | None, Fraction, Fraction]:
        """Type, opponent, MP and GP of a team's round (rules.md 9.1)."""
        kind, opp, boards = self.schedule[team][r]
        B = self.boards
        if kind == "played":
            assert boards is not None and opp is not None
            gp = sum(boards, Fraction(0))
            theirs = self.schedule[opp][r][2]
            assert theirs is not None
            ogp = sum(theirs, Fraction(0))
            mp = Fraction(self.tw if gp > ogp else self.td if gp == ogp else 0)
            return kind, opp, mp, gp
        value = {"forfeit_win": (Fraction(self.tw), B * self.W), "pab": self.pab,
                 "half_bye": (Fraction(self.td), B * self.D)}.get(kind, (Fraction(0), Fraction(0)))
        return kind, opp, value[0], value[1]


def unit(event: TeamEvent, ref: str) -> tuple[Fraction, Fraction]:
    """W and D of a match in the reference score: TW/TD for MP, a win/draw on every board for GP."""
    if ref == "MP":
        return Fraction(event.tw), Fraction(event.td)
    return event.boards * event.W, event.boards * event.D


def points(event: TeamEvent, team: int, ref: str) -> list[Fraction]:
    key = (team, ref)
    if key not in event.cache:
        event.cache[key] = [event.match(team, r)[2 if ref == "MP" else 3] for r in range(event.rounds)]
    return event.cache[key]


def score(event: TeamEvent, team: int, ref: str) -> Fraction:
    return sum(points(event, team, ref), Fraction(0))


def category(event: TeamEvent, team: int, r: int) -> str:
    kind = event.schedule[team][r][0]
    if kind in REQUESTED:
        later = [event.schedule[team][q][0] for q in range(r + 1, event.rounds)]
        return "16.2.3" if any(k not in VUR for k in later) else "16.2.5"
    return kind


def adjusted(event: TeamEvent, team: int, ref: str) -> Fraction:
    """16.3: awarded points, rounds of category 16.2.5 counted as a draw."""
    _, D = unit(event, ref)
    pts = points(event, team, ref)
    return sum((D if category(event, team, r) == "16.2.5" else pts[r] for r in range(event.rounds)), Fraction(0))


@dataclass
class Element:
    oppscore: Fraction
    contribution: Fraction
    vur: bool
    round: int


def elements(event: TeamEvent, team: int, opp_ref: str, own_ref: str | None, edition: str,
             forfeits: bool = False) -> list[Element]:
    """4.7 for teams: one element per round (none for free rounds and round-robin byes). ``forfeits`` is
    ``/P`` (rules.md 5): a forfeited match is a match against its scheduled opponent, no dummy, no VUR."""
    own_pts = points(event, team, own_ref) if own_ref else [Fraction(1)] * event.rounds
    _, D = unit(event, opp_ref)
    out = []
    for r in range(event.rounds):
        kind, opp, _ = event.schedule[team][r]
        if event.round_robin:
            if opp is None:
                continue
            s = score(event, opp, opp_ref)   # pre-determined: forfeits are games, real final score
            out.append(Element(s, s * own_pts[r], False, r))
            continue
        if kind == "played" or (forfeits and kind in SCHEDULED and opp is not None):
            assert opp is not None
            s = adjusted(event, opp, opp_ref)
            out.append(Element(s, s * own_pts[r], False, r))
            continue
        dummy = score(event, team, opp_ref)
        if edition == "fide-2026":
            cap = adjusted(event, opp, opp_ref) if kind in SCHEDULED and opp is not None else D * event.rounds
            dummy = min(dummy, cap)
        out.append(Element(dummy, dummy * own_pts[r], kind in VUR, r))
    return out


def cut(elems: list[Element], low: int, high: int, by_oppscore: bool) -> list[Element]:
    """14 and 16.5 as rules.md 4.5 states them, one cut at a time."""
    rest = list(elems)
    for _ in range(low):
        if not rest:
            break
        if by_oppscore:
            lsv = min(rest, key=lambda e: (e.oppscore, e.contribution, not e.vur, e.round))
        else:
            lsv = min(rest, key=lambda e: (e.contribution, not e.vur, e.round))
        vurs = [e for e in rest if e.vur]
        if not vurs or lsv.vur:
            rest.remove(lsv)
            continue
        v = min(vurs, key=lambda e: (e.contribution, e.oppscore, e.round))
        rest.remove(v if v.contribution >= lsv.contribution else lsv)
    for _ in range(high):
        if not rest:
            break
        key = (lambda e: (e.oppscore, e.contribution)) if by_oppscore else (lambda e: (e.contribution,))
        rest.remove(max(rest, key=key))
    return rest


def buchholz(event: TeamEvent, team: int, ref: str, edition: str, low: int = 0, high: int = 0,
             forfeits: bool = False) -> Fraction:
    kept = cut(elements(event, team, ref, None, edition, forfeits), low, high, by_oppscore=False)
    return sum((e.oppscore for e in kept), Fraction(0))


def extended_sb(event: TeamEvent, team: int, opp_ref: str, own_ref: str, edition: str, low: int = 0,
                high: int = 0, forfeits: bool = False) -> Fraction:
    """13.2: opponent's final score (opp_ref) times own score in the match (own_ref)."""
    kept = cut(elements(event, team, opp_ref, own_ref, edition, forfeits), low, high, by_oppscore=True)
    return sum((e.contribution for e in kept), Fraction(0))


def board_count(event: TeamEvent, team: int) -> Fraction:
    """12.1 with the 9.5 conventions for unplayed matches."""
    total = Fraction(0)
    for r in range(event.rounds):
        kind, _, boards = event.schedule[team][r]
        if kind == "played":
            assert boards is not None
            per = boards
        elif kind in ("pab", "forfeit_win"):
            per = [event.W] * event.boards
        elif kind == "half_bye":
            per = [event.D] * event.boards
        else:
            per = [Fraction(0)] * event.boards
        total += sum(((b + 1) * p for b, p in enumerate(per)), Fraction(0))
    return total


def sssc(event: TeamEvent, team: int, edition: str) -> Fraction:
    """13.4 with MP primary: GP + BH(MP) / K, K = floor(TW x n / (boards x W)), hundredths half up."""
    k = max(int(Fraction(event.tw * event.rounds) / (event.boards * event.W)), 1)
    value = score(event, team, "GP") + buchholz(event, team, "MP", edition) / k
    return Fraction(int(value * 100 + Fraction(1, 2)), 100)


# ------------------------------------------------------------------------------------------ EDE (5.1, 9.5)

def _de_parts(event: TeamEvent, group: list[int], ref: str) -> list[list[int]]:
    W, _ = unit(event, ref)
    pts: dict[int, Fraction] = {}
    met: dict[int, set[int]] = {}
    for a in group:
        pts[a], met[a] = Fraction(0), set()
        for b in group:
            if b == a:
                continue
            games = [points(event, a, ref)[r] for r in range(event.rounds)
                     if event.schedule[a][r][1] == b
                     and (event.schedule[a][r][0] == "played" or event.round_robin)]
            if games:
                pts[a] += sum(games, Fraction(0)) / len(games)
                met[a].add(b)
    if event.round_robin or all(len(met[a]) == len(group) - 1 for a in group):
        levels = sorted({pts[a] for a in group}, reverse=True)
        return [[a for a in group if pts[a] == v] for v in levels]
    order = sorted(group, key=lambda a: -pts[a])
    ranked: list[list[int]] = []
    while len(order) >= 2:
        c = order[0]
        best = max(pts[r] + W * (len(group) - 1 - len(met[r])) for r in order[1:])
        if pts[c] > best:
            ranked.append([c])
            order = order[1:]
        else:
            break
    if not ranked:
        return [group]
    return [*ranked, order] if order else ranked


def ede(event: TeamEvent, group: list[int], refs: tuple[str, ...] = ("MP", "GP"),
        restart: bool = True) -> list[list[int]]:
    """EDE with MP primary: DE on MP; if it separates nobody, on GP; every new subset restarts from MP.

    With ``restart`` False a subset split off by GP goes on with GP only (the reading of Held's ex. 45).
    """
    if len(group) == 1:
        return [group]
    for k, ref in enumerate(refs):
        parts = _de_parts(event, group, ref)
        if len(parts) > 1:
            after = refs if restart or k == 0 else refs[k:]
            return [q for p in parts for q in ede(event, p, after, restart)]
    return [group]


def _encounter_boards(event: TeamEvent, a: int, b: int) -> list[Fraction] | None:
    """Team a's points per board over its counted matches against b (9.5 conventions), None if they never met."""
    total: list[Fraction] | None = None
    for r in range(event.rounds):
        kind, opp, boards = event.schedule[a][r]
        if opp != b or not (kind == "played" or event.round_robin):
            continue
        per = boards if kind == "played" else [event.W if kind == "forfeit_win" else Fraction(0)] * event.boards
        assert per is not None
        total = [x + y for x, y in zip(total or [Fraction(0)] * event.boards, per, strict=True)]
    return total


def _board_key(step: str, boards: list[Fraction]) -> list[Fraction]:
    """Ascending = better. BC (12.1): board number x points, lower first; TBR (12.2): board 1, board 2, ...;
    BBE (12.3): all boards but the last, then without the last two, ... (higher first for both)."""
    if step == "BC":
        return [sum(((k + 1) * p for k, p in enumerate(boards)), Fraction(0))]
    if step == "TBR":
        return [-p for p in boards]
    return [-sum(boards[:k], Fraction(0)) for k in range(len(boards) - 1, 0, -1)]


CHAIN_STEPS = {"EDE": (), "EDET": ("TBR",), "EDEB": ("BBE",), "EDEBT": ("BC", "TBR"), "EDEBB": ("BC", "BBE")}


def ede_ranks(event: TeamEvent, chain: str = "EDE", restart: bool = True) -> dict[int, int]:
    """Ranks by MP, then EDE, then for two teams still tied on MP and GP the chain's board steps of their
    direct encounter (13.3.2); shared ranks for teams still tied."""
    teams = sorted(event.schedule)
    levels = sorted({score(event, t, "MP") for t in teams}, reverse=True)
    ranks: dict[int, int] = {}
    place = 1
    for v in levels:
        for part in ede(event, [t for t in teams if score(event, t, "MP") == v], restart=restart):
            parts = [part]
            if len(part) == 2 and CHAIN_STEPS[chain] and score(event, part[0], "GP") == score(event, part[1], "GP"):
                a, b = part
                ba, bb = _encounter_boards(event, a, b), _encounter_boards(event, b, a)
                if ba is not None and bb is not None:
                    ka = [x for step in CHAIN_STEPS[chain] for x in _board_key(step, ba)]
                    kb = [x for step in CHAIN_STEPS[chain] for x in _board_key(step, bb)]
                    if ka != kb:
                        parts = [[a], [b]] if ka < kb else [[b], [a]]
            for p in parts:
                for t in p:
                    ranks[t] = place
                place += len(p)
    return ranks
