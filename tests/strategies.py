"""Hypothesis strategies for consistent tournaments full of unplayed rounds, and a TRF-16 writer (tests only).

:func:`tournaments` draws :class:`reference.RefTournament` s that are *consistent*: pairings are symmetric
(never a player against themself), colours opposite, results complementary (1/0, =/=, 0/1, W/L, D/D, +/-,
-/+ and -/- double forfeits), at most one pairing-allocated bye per round.  Swiss-like events carry PABs (U),
full-point byes (F), requested half/zero-point byes (H, Z; also in the last round), forfeits, double
forfeits, withdrawals (all later rounds Z), late entries (early rounds Z) and rematches; round robins follow a
round-robin schedule (circle method, as the Berger tables), with the free round of an odd field written as
``Z`` without opponent and ``round_robin=True``.

:func:`to_trf` writes a tournament as TRF-16 text at the columns of rules.md §2.1.
"""

from __future__ import annotations

from fractions import Fraction

from hypothesis import strategies as st
from reference import (
    STANDARD_POINTS,
    THREE_ONE_ZERO_POINTS,
    RefPlayer,
    RefRound,
    RefTournament,
    points_of,
)

__all__ = ["round_robins", "swiss_events", "to_trf", "tournaments"]

# complementary result pairs (first player's code, second player's code); repeats act as weights and the
# first entry is what hypothesis shrinks towards
_RESULTS = (
    ("1", "0"), ("=", "="), ("0", "1"), ("1", "0"), ("0", "1"), ("=", "="), ("1", "0"), ("0", "1"),
    ("=", "="), ("W", "L"), ("L", "W"), ("D", "D"),
    ("+", "-"), ("-", "+"), ("-", "-"),
)
_RR_RESULTS = (
    ("1", "0"), ("=", "="), ("0", "1"), ("1", "0"), ("0", "1"), ("=", "="), ("1", "0"), ("0", "1"),
    ("+", "-"), ("-", "+"),
)
_BYE_KINDS = ("H", "Z", "H", "F", "Z")


def _points(draw: st.DrawFn) -> dict[str, Fraction]:
    """Mostly 1-½-0; sometimes 3-1-0 (win, forfeit win, PAB, FPB 3; draw, HPB 1)."""
    return dict(THREE_ONE_ZERO_POINTS if draw(st.integers(0, 4)) == 4 else STANDARD_POINTS)


def _ratings(draw: st.DrawFn, count: int) -> list[int | None]:
    """Ratings in 1000..2700; in about a quarter of the events some players are unrated (None)."""
    with_unrated = draw(st.integers(0, 3)) == 3
    out: list[int | None] = []
    for _ in range(count):
        if with_unrated and draw(st.booleans()):
            out.append(None)
        else:
            out.append(draw(st.integers(1000, 2700)))
    return out


@st.composite
def swiss_events(draw: st.DrawFn, max_players: int = 12, max_rounds: int = 9) -> RefTournament:
    """Swiss-like events: random pairings per round among the players present."""
    n_players = draw(st.integers(2, max(2, max_players)))
    n = draw(st.integers(1, max(1, max_rounds)))
    points = _points(draw)
    players = list(range(1, n_players + 1))
    entry = {p: 1 for p in players}
    leave = {p: n + 1 for p in players}  # first round no longer present (withdrawal)
    for p in players:
        kind = draw(st.integers(0, 9))
        if kind == 8 and n >= 2:
            entry[p] = draw(st.integers(2, n))  # late entry: rounds before arrival are Z
        elif kind == 9 and n >= 2:
            leave[p] = draw(st.integers(2, n))  # withdrawal: every later round is Z
    bye_rate = draw(st.sampled_from((0, 10, 25, 40)))
    avoid_rematches = draw(st.booleans())
    rounds: dict[int, list[RefRound]] = {p: [] for p in players}
    met: set[frozenset[int]] = set()
    for r in range(1, n + 1):
        playing = []
        for p in players:
            if not entry[p] <= r < leave[p]:
                rounds[p].append(RefRound(None, None, "Z"))
            elif draw(st.integers(0, 99)) < bye_rate:
                rounds[p].append(RefRound(None, None, draw(st.sampled_from(_BYE_KINDS))))
            else:
                playing.append(p)
        if len(playing) % 2 == 1:
            pab = draw(st.sampled_from(playing))  # at most one pairing-allocated bye per round
            playing.remove(pab)
            rounds[pab].append(RefRound(None, None, "U"))
        order = list(draw(st.permutations(playing)))
        pairs = []
        while order:
            a = order.pop(0)
            j = 0
            if avoid_rematches:
                fresh = [i for i, b in enumerate(order) if frozenset((a, b)) not in met]
                j = fresh[0] if fresh else 0
            b = order.pop(j)
            pairs.append((a, b))
        for a, b in pairs:
            met.add(frozenset((a, b)))
            ca, cb = ("w", "b") if draw(st.booleans()) else ("b", "w")
            ra, rb = draw(st.sampled_from(_RESULTS))
            rounds[a].append(RefRound(b, ca, ra))
            rounds[b].append(RefRound(a, cb, rb))
    ratings = _ratings(draw, n_players)
    planned = n + draw(st.integers(1, 3)) if draw(st.integers(0, 4)) == 4 else n  # mostly planned == n
    return RefTournament(
        players=tuple(RefPlayer(p, ratings[p - 1], tuple(rounds[p])) for p in players),
        n=n,
        planned_rounds=planned,
        round_robin=False,
        points=points,
    )


def _round_robin_schedule(n_players: int) -> list[list[tuple[int, int | None]]]:
    """One cycle of a round robin (circle method).  Each round is a list of (white, black) pairs; with an
    odd field the player paired with the phantom ``None`` has the free round."""
    size = n_players + (n_players % 2)
    fixed = size
    ring = list(range(1, size))
    schedule = []
    for r in range(size - 1):
        rot = ring[r:] + ring[:r]
        pairs: list[tuple[int, int]] = []
        a, b = fixed, rot[0]
        pairs.append((a, b) if r % 2 == 0 else (b, a))
        for i in range(1, size // 2):
            x, y = rot[i], rot[size - 1 - i]
            pairs.append((x, y) if i % 2 == 1 else (y, x))
        real: list[tuple[int, int | None]] = []
        for w, bl in pairs:
            if w > n_players:
                real.append((bl, None))
            elif bl > n_players:
                real.append((w, None))
            else:
                real.append((w, bl))
        schedule.append(real)
    return schedule


@st.composite
def round_robins(draw: st.DrawFn, max_players: int = 12, max_rounds: int = 9) -> RefTournament:
    """Single (sometimes double) round robins with occasional forfeits; ``round_robin=True``."""
    sizes = [k for k in range(3, max(3, max_players) + 1) if k - 1 + k % 2 <= max_rounds]
    n_players = draw(st.sampled_from(sizes or [3]))
    cycle = _round_robin_schedule(n_players)
    schedule = list(cycle)
    if 2 * len(cycle) <= max_rounds and draw(st.integers(0, 3)) == 3:
        schedule += [[(b, w) if b is not None else (w, None) for w, b in rnd] for rnd in cycle]
    points = _points(draw)
    forfeit_rate = draw(st.sampled_from((0, 0, 5, 15)))
    rounds: dict[int, list[RefRound]] = {p: [] for p in range(1, n_players + 1)}
    for rnd in schedule:
        for w, b in rnd:
            if b is None:
                rounds[w].append(RefRound(None, None, "Z"))  # free round of an odd field
                continue
            if draw(st.integers(0, 99)) < forfeit_rate:
                rw, rb = draw(st.sampled_from((("+", "-"), ("-", "+"))))
            else:
                rw, rb = draw(st.sampled_from(_RR_RESULTS))
            rounds[w].append(RefRound(b, "w", rw))
            rounds[b].append(RefRound(w, "b", rb))
    total = len(schedule)
    n = draw(st.integers(1, total)) if draw(st.integers(0, 4)) == 4 else total  # sometimes part-way
    ratings = _ratings(draw, n_players)
    return RefTournament(
        players=tuple(RefPlayer(p, ratings[p - 1], tuple(rounds[p][:n])) for p in range(1, n_players + 1)),
        n=n,
        planned_rounds=total,
        round_robin=True,
        points=points,
    )


@st.composite
def tournaments(draw: st.DrawFn, max_players: int = 12, max_rounds: int = 9) -> RefTournament:
    """Mostly Swiss-like events, sometimes round robins."""
    if max_players >= 3 and draw(st.integers(0, 4)) == 4:
        return draw(round_robins(max_players, max_rounds))
    return draw(swiss_events(max_players, max_rounds))


# ----------------------------------------------------------------------------------------------------------
# TRF writer
# ----------------------------------------------------------------------------------------------------------


def _num(x: Fraction) -> str:
    """3 -> '3', 1/2 -> '0.5'."""
    if x.denominator == 1:
        return str(x.numerator)
    return f"{float(x):g}"


def _xxs_line(points: dict[str, Fraction]) -> str | None:
    """``XXS`` record (rules.md §2.3) when the scoring is not the default 1-½-0, else None."""
    if points == STANDARD_POINTS:
        return None
    parts = [
        f"W={_num(points['win'])}", f"D={_num(points['draw'])}",
        f"PAB={_num(points['pab'])}", f"FPB={_num(points['full_bye'])}",
        f"HPB={_num(points['half_bye'])}", f"FW={_num(points['forfeit_win'])}",
    ]
    if points["loss"]:
        parts += [f"WL={_num(points['loss'])}", f"BL={_num(points['loss'])}"]
    if points["zero_bye"]:
        parts.append(f"ZPB={_num(points['zero_bye'])}")
    if points["forfeit_loss"]:
        parts.append(f"FL={_num(points['forfeit_loss'])}")
    return "XXS " + " ".join(parts)


def _put(line: list[str], col: int, text: str) -> None:
    """Write ``text`` starting at 1-based column ``col``."""
    end = col - 1 + len(text)
    if len(line) < end:
        line.extend(" " * (end - len(line)))
    line[col - 1:end] = list(text)


def to_trf(t: RefTournament, name: str = "generated") -> str:
    """TRF-16 text for ``t``: ``012`` name, ``062`` players, ``XXR`` planned rounds, ``192 FIDE_ROUNDROBIN``
    for round robins, ``XXS`` for non-default scoring, then one ``001`` line per player (rules.md §2.1:
    start number cols 5-8, name 15-47, rating 49-52 (blank when unrated), points 81-84, rank 86-89 left
    blank, round r at col 92 + 10(r-1): opponent (``0000`` when none), colour, result code).
    """
    lines = [f"012 {name}", f"062 {len(t.players)}", f"XXR {t.planned_rounds}"]
    if t.round_robin:
        lines.append("192 FIDE_ROUNDROBIN")
    xxs = _xxs_line(t.points)
    if xxs:
        lines.append(xxs)
    for pl in sorted(t.players, key=lambda q: q.start_no):
        line: list[str] = []
        _put(line, 1, "001")
        _put(line, 5, f"{pl.start_no:4d}")
        _put(line, 15, f"{'Player ' + str(pl.start_no):<33.33}")
        _put(line, 49, f"{pl.rating:4d}" if pl.rating is not None else "    ")
        total = sum((points_of(t, rd) for rd in pl.rounds[: t.n]), Fraction(0))
        _put(line, 81, f"{float(total):4.1f}")
        for r, rd in enumerate(pl.rounds[: t.n], start=1):
            col = 92 + 10 * (r - 1)
            opp = f"{rd.opp:4d}" if rd.opp is not None else "0000"
            _put(line, col, f"{opp} {rd.colour or '-'} {rd.code}")
        lines.append("".join(line).rstrip())
    return "\n".join(lines) + "\n"
