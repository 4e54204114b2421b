"""Explain one player's tie-break round by round: what each round adds, or what it feeds into the value.

Most "wrong tie-break" reports are about byes: for the opponent-score family (BH, FB, SB and the US
Solkoff, median and Sonneborn-Berger forms) this shows, per round, the opponent and the score they count
with, or the dummy that replaces an unplayed round with the cap that applied, and which elements the
Cut/Median modifiers removed and why (rules.md 4.4-4.5). Every other tie-break gets the rows of its own
family: a count (WIN, WON, BPG, BWG, Kashdan, STD) lists what each round adds, PS its running scores, KS
the qualifying opponents; an average (ARO, TPR, PTP, APRO, APPO, AOB) lists the per-round elements it
averages, and the summary says that the value is not a sum of the rounds; a property of the player (RTNG,
TPN, LOTS) and the partitions (DE, USCF-H2H) say so.

>>> from tbstats.io.sources import load
>>> ex = explain(load("data/examples/e2_cut_exception.trf").batch, player=1, tiebreak="WIN")
>>> ex.value, ex.rounds["contribution"].to_list(), ex.is_sum
(1.0, [1.0, 0.0, 0.0], True)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Final

import numpy as np
import polars as pl

from tbstats.engine.compute import make_context, tiebreak_values
from tbstats.engine.tiebreaks import FIXED_EDITION, get_tiebreak, kernel_of, parse_spec
from tbstats.engine.tiebreaks.base import CUT_HIGHEST, CUT_LOWEST, CUT_VUR, Context, cut_order
from tbstats.engine.unplayed import CAP_DRAWS, CAP_OPPONENT
from tbstats.errors import TbstatsError
from tbstats.model.batch import Batch
from tbstats.model.dense import DRAW, LOSS, NO_OPP, WIN
from tbstats.model.games import GAME_TYPES
from tbstats.model.rules import get_ruleset
from tbstats.model.spec import TieBreakSpec

CATEGORY: Final = {0: "game", 1: "16.2.1 PAB/FPB", 2: "16.2.2 forfeit win", 3: "16.2.3 requested bye, then played",
                   4: "16.2.4 forfeit loss", 5: "16.2.5 requested bye, trailing", -1: "not counted"}
CUT_TEXT: Final = {CUT_LOWEST: "cut: least significant value (14.1)",
                   CUT_VUR: "cut: voluntary unplayed round first (16.5)",
                   CUT_HIGHEST: "cut: most significant value (14.3)"}
#: Tie-breaks summed over opponent-score elements: family (BH: the score, SB: score x result).
ELEMENT_FAMILY: Final = {"BH": "BH", "FB": "BH", "SB": "SB", "USCF-SOLKOFF": "BH", "USCF-SB": "SB",
                         "USCF-MEDIAN": "BH", "USCF-MM": "BH"}
#: How many of the tournaments to name when the input holds several and none was chosen.
LISTED_TOURNAMENTS: Final = 20


@dataclass(frozen=True)
class Explanation:
    """The rounds table, the value (None when undefined or a partition), and a one-line summary.

    ``is_sum`` says whether the value is the sum of the ``contribution`` column (else the rows show the
    elements the value is computed from, and ``summary`` says how).
    """

    rounds: pl.DataFrame
    value: float | None
    summary: str
    is_sum: bool
    tiebreak: str
    edition: str
    tournament: int
    player: int


@dataclass
class _Player:
    """One player of a one-tournament context, and what every family needs about them."""

    ctx: Context
    i: int
    spec: TieBreakSpec
    edition: str
    scale: int

    def dec(self, units: object, scale: int | None = None) -> float:
        return float(Fraction(int(units), int(scale or self.scale)))  # type: ignore[call-overload]


#: A family's rows: extra columns (per round) and how the value relates to them (None: it is their sum).
Rows = tuple[dict[str, list[object]], str | None]


def _opponent_scores(p: _Player) -> Rows:
    """BH/FB/SB and the US forms: opponent-score elements, dummies and caps, and the cuts."""
    d, i, spec = p.ctx.dense, p.i, p.spec
    family = ELEMENT_FAMILY[spec.name]
    el = p.ctx.elements(p.edition, fore=spec.name == "FB", forfeits=spec.forfeits)
    low, high, vur = spec.cut_low, spec.cut_high, el.vur
    if spec.name.startswith("USCF-"):
        vur = np.zeros_like(el.vur)
        k = 2 if int(d.n[0]) >= 9 else 1
        if spec.name == "USCF-MEDIAN":
            low = high = k
        elif spec.name == "USCF-MM":
            doubled, half_max = 2 * int(el.score[i]), int(d.n[0] * d.W[0])
            low, high = (k, 0) if doubled > half_max else (k, k) if doubled == half_max else (0, k)
    contribution = el.oppscore if family == "BH" else el.sb_contribution
    cuts: dict[int, str] = {}
    if low + high:
        cols, reasons = cut_order(el.present[i:i + 1], contribution[i:i + 1], el.oppscore[i:i + 1],
                                  vur[i:i + 1], low, high, by_oppscore=family == "SB")
        cuts = {int(c): CUT_TEXT[int(r)] for c, r in zip(cols[0], reasons[0], strict=True) if r}
    out: dict[str, list[object]] = {k: [] for k in ("category", "element", "opponent_score", "dummy_uncapped",
                                                    "cap", "contribution", "vur", "cut")}
    for r in range(d.rounds):
        present = bool(el.present[i, r])
        own = bool(el.own[i, r])   # a dummy (or virtual opponent) of the player's own unplayed round
        cap = int(el.cap[i, r]) if own else 0
        cut = cuts.get(r)
        out["category"].append(CATEGORY[int(el.category[i, r])])
        out["element"].append(present)
        out["opponent_score"].append(p.dec(el.oppscore[i, r]) if present else None)
        out["dummy_uncapped"].append(p.dec(el.uncapped[i, r]) if own else None)
        out["cap"].append("16.4.1 opponent's adjusted score" if cap == CAP_OPPONENT else
                          "16.4.2 draws x rounds" if cap == CAP_DRAWS else None)
        value = p.dec(contribution[i, r], p.scale * (p.scale if family == "SB" else 1)) if present else None
        out["contribution"].append(0.0 if cut is not None and value is not None else value)
        out["vur"].append(bool(vur[i, r]))
        out["cut"].append(cut)
    return out, None


def _per_round(p: _Player, units: np.ndarray, scale: int, element: tuple[str, np.ndarray] | None = None) -> Rows:
    """A count or a sum whose rounds add ``units / scale`` each (``element``: a column shown beside)."""
    rows: dict[str, list[object]] = {}
    if element is not None:
        rows[element[0]] = [None if np.isnan(v) else float(v) for v in element[1]]
    rows["contribution"] = [p.dec(u, scale) for u in units]
    return rows, None


def _counts(mask: Callable[[_Player], np.ndarray], weight: int = 1) -> Callable[[_Player], Rows]:
    return lambda p: _per_round(p, np.where(mask(p), weight, 0), 1)


def _results(p: _Player) -> Rows:
    d, i = p.ctx.dense, p.i
    return _per_round(p, np.where(d.counted[i], d.pts[i], 0), p.scale)


def _standard(p: _Player) -> Rows:
    d, i = p.ctx.dense, p.i
    has_opp = d.opp[i] != NO_OPP
    other = np.where(has_opp, d.pts[d.opp_row[i], np.arange(d.rounds)], d.D[0])
    halves = np.where(d.pts[i] > other, 2, np.where(d.pts[i] == other, 1, 0))
    return _per_round(p, np.where(d.counted[i], halves, 0), 2)


def _progressive(p: _Player) -> Rows:
    d, i = p.ctx.dense, p.i
    running = np.cumsum(np.where(d.counted[i], d.pts[i], 0))
    keep = d.counted[i] & (np.arange(d.rounds) >= p.spec.cut_low)
    return _per_round(p, np.where(keep, running, 0), p.scale)


def _koya(p: _Player) -> Rows:
    d, i = p.ctx.dense, p.i
    score = np.where(d.counted, d.pts, 0).sum(axis=1)
    rounds = int(d.has_opp.sum(axis=1).max()) if d.round_robin[0] else int(d.n[0])
    qualifies = 2 * score >= rounds * int(d.W[0]) + (p.spec.limit or 0) * p.scale
    opp = np.where(d.opp[i] != NO_OPP, d.opp[i], 0)
    takes = d.has_opp[i] & qualifies[opp]
    opp_score = np.where(d.opp[i] != NO_OPP, score[opp] / p.scale, np.nan)
    return _per_round(p, np.where(takes, np.where(d.counted[i], d.pts[i], 0), 0), p.scale,
                      ("opponent_score", opp_score))


def _kashdan(p: _Player) -> Rows:
    d, i = p.ctx.dense, p.i
    table = np.zeros(3, dtype=np.int64)
    table[[LOSS, DRAW, WIN]] = [1, 2, 4]
    return _per_round(p, np.where(d.played[i], table[np.clip(d.outcome[i], 0, 2)], 0), 1)


def _opponents_cumulative(p: _Player) -> Rows:
    d, i = p.ctx.dense, p.i
    cum = p.ctx.values(TieBreakSpec("USCF-CUM"), "uscf", kernel_of("USCF-CUM"))
    opp = np.where(d.played[i], d.opp[i], 0)
    return _per_round(p, np.where(d.played[i], cum.num[opp], 0), p.scale)


def _opponent_values(name: str, what: str, column: str) -> Callable[[_Player], Rows]:
    """Averages over the opponents played over the board: their rating, TPR, PTP, BH or FB."""

    def rows(p: _Player) -> Rows:
        d, i, spec = p.ctx.dense, p.i, p.spec
        played = d.played[i]
        opp = np.where(played, d.opp[i], 0)
        if name == "RATING":
            rating = d.rating.astype(float)
            fallback = spec.unrated if spec.unrated is not None else p.ctx.unrated_rating
            if fallback is not None:
                rating[rating <= 0] = fallback
            element = np.where(played & (rating[opp] > 0), rating[opp], np.nan)
        else:
            inner_name = "FB" if name == "BH" and spec.fore else name
            inner = p.ctx.values(TieBreakSpec(inner_name, unrated=spec.unrated), p.edition, kernel_of(inner_name))
            element = np.where(played & inner.defined[opp], inner.as_float()[opp], np.nan)
        cut: list[object] = [None] * d.rounds
        if spec.cut_low + spec.cut_high and name == "RATING":
            r = np.nan_to_num(element).astype(np.int64)[None, :]
            cols, reasons = cut_order(played[None, :], r, r, np.zeros_like(played)[None, :], spec.cut_low,
                                      spec.cut_high, by_oppscore=False)
            for c, reason in zip(cols[0], reasons[0], strict=True):
                if reason:
                    cut[int(c)] = CUT_TEXT[int(reason)]
        used = int(np.isfinite(element).sum()) - sum(c is not None for c in cut)
        whole = bool(np.all(np.isnan(element) | (element == np.round(element))))
        shown: list[object] = [None if np.isnan(v) else int(v) if whole else float(v) for v in element]
        return ({column: shown, "cut": cut}, f"the average of {used} opponents' {what}, not a sum of rounds")

    return rows


def _performance(how: str) -> Callable[[_Player], Rows]:
    def rows(p: _Player) -> Rows:
        cols, _ = _opponent_values("RATING", "ratings", "opponent_rating")(p)
        return cols, how

    return rows


def _not_per_round(how: str) -> Callable[[_Player], Rows]:
    return lambda p: ({}, how)


EXPLAINERS: Final[dict[str, Callable[[_Player], Rows]]] = {
    **{name: _opponent_scores for name in ELEMENT_FAMILY},
    "PTS": _results,
    "WIN": _counts(lambda p: p.ctx.dense.counted[p.i] & (p.ctx.dense.pts[p.i] == p.ctx.dense.W[0])),
    "WON": _counts(lambda p: p.ctx.dense.played[p.i] & (p.ctx.dense.outcome[p.i] == WIN)),
    "BPG": _counts(lambda p: p.ctx.dense.played[p.i] & p.ctx.dense.black[p.i]),
    "USCF-BLACKS": _counts(lambda p: p.ctx.dense.played[p.i] & p.ctx.dense.black[p.i]),
    "BWG": _counts(lambda p: p.ctx.dense.played[p.i] & p.ctx.dense.black[p.i] & (p.ctx.dense.outcome[p.i] == WIN)),
    "USCF-KASHDAN": _kashdan,
    "STD": _standard,
    "PS": _progressive,
    "KS": _koya,
    "ARO": _opponent_values("RATING", "ratings", "opponent_rating"),
    "USCF-AVGOPP": _opponent_values("RATING", "ratings", "opponent_rating"),
    "APRO": _opponent_values("TPR", "performance ratings (TPR)", "opponent_tpr"),
    "APPO": _opponent_values("PTP", "perfect performances (PTP)", "opponent_ptp"),
    "AOB": _opponent_values("BH", "Buchholz scores", "opponent_bh"),
    "TPR": _performance("ARO plus dp(p), p the percentage scored over the board (10.2); not a sum of rounds"),
    "PTP": _performance("the lowest rating whose expected score reaches the score over the board (10.3); "
                        "not a sum of rounds"),
    "REP": _not_per_round("a count of the rounds the player elected to play (7.6), not itemised by round; "
                          "see the type column"),
    "USCF-CUM": _not_per_round("the progressive score less W per unplayed win or full-point bye and D per "
                               "half-point bye (34E3); not a sum of rounds"),
    "USCF-OPPCUM": _opponents_cumulative,
    "RTNG": _not_per_round("the player's own rating (10.6), not a sum of rounds"),
    "TPN": _not_per_round("the player's pairing number (7.8), not a sum of rounds"),
    "LOTS": _not_per_round("a seeded drawing of lots, not a sum of rounds"),
    "DE": _not_per_round("a partition of the tied group by direct encounter (6), not a value"),
    "USCF-H2H": _not_per_round("a partition of the tied group by their games (34E5), not a value"),
}


def _choose(batch: Batch, tournament: int | None) -> int:
    t = batch.tournaments.sort("tournament")
    ids = t["tournament"].to_list()
    if tournament is not None:
        if tournament not in ids:
            raise TbstatsError(f"no tournament {tournament} in the input (it holds {', '.join(map(str, ids[:20]))}"
                               f"{', ...' if len(ids) > 20 else ''})")
        return tournament
    if len(ids) == 1:
        return int(ids[0])
    if not ids:
        raise TbstatsError("the input holds no tournament")
    listed = ", ".join(f"{i} ({s})" for i, s in zip(ids[:LISTED_TOURNAMENTS],
                                                    t["source"].to_list()[:LISTED_TOURNAMENTS], strict=True))
    more = f" and {len(ids) - LISTED_TOURNAMENTS} more" if len(ids) > LISTED_TOURNAMENTS else ""
    raise TbstatsError(f"the input holds {len(ids)} tournaments; choose one with --tournament ID: {listed}{more}")


def explain(batch: Batch, *, player: int, tiebreak: str, rules: str = "fide-2026", tournament: int | None = None,
            force_type: str | None = None, unrated_rating: int | None = None,
            after_round: int | None = None) -> Explanation:
    """Round-by-round parts of ``tiebreak`` for start number ``player`` of one tournament of ``batch``."""
    spec = parse_spec(tiebreak)
    chosen = _choose(batch, tournament)
    one = batch.select([chosen])
    ctx = make_context(one, force_type=force_type, unrated_rating=unrated_rating, after_round=after_round)
    d = ctx.dense
    rows = np.nonzero(d.start_no == player)[0]
    if len(rows) == 0:
        raise TbstatsError(f"no player with start number {player} in tournament {chosen} "
                           f"(start numbers 1-{int(d.start_no.max()) if len(d.start_no) else 0})")
    i = int(rows[0])
    edition = spec.edition or FIXED_EDITION.get(spec.name, rules)
    if edition == "auto":
        edition = str(ctx.edition_of[0])
    tb = get_tiebreak(spec.name)
    scale = int(d.scale[0])
    values = None if tb.kind == "partition" else tiebreak_values(ctx, spec, edition)
    value = None if values is None or not values.defined[i] else float(Fraction(int(values.num[i]),
                                                                                 int(values.den[i])))
    p = _Player(ctx, i, spec, edition, scale)
    extra, how = EXPLAINERS[spec.name](p)
    g = one.games.filter(pl.col("player") == player).sort("round")
    results = dict(zip(g["round"].to_list(), g["result"].to_list(), strict=True))
    table: dict[str, list[object]] = {
        "round": list(range(1, d.rounds + 1)),
        "opponent": [int(d.start_no[o]) if o != NO_OPP else None for o in d.opp[i]],
        "type": [GAME_TYPES[int(t)] for t in d.gtype[i]],
        "result": [results.get(r + 1) for r in range(d.rounds)],
        "points": [p.dec(x) for x in d.pts[i]],
        **extra,
    }
    n = int(d.n[0])
    frame = pl.DataFrame({k: v[:n] for k, v in table.items()}, strict=False,
                         schema_overrides={"opponent": pl.Int32, "result": pl.String})
    ruleset = get_ruleset(edition)
    shown = "undefined" if tb.kind == "value" and value is None else "a partition" if value is None \
        else f"{value:g}"
    score = p.dec(int(d.adjusted_score[i]))   # the counted rounds, with 299 changes
    is_sum = how is None
    reading = "the sum of the contribution column" if how is None else how
    if tb.rating_based and value is None and tb.kind == "value":
        reading += "; undefined: the event has unrated players (give --unrated-rating R or /U<R>)"
    summary = (f"player {player}: {spec} = {shown} under {ruleset.name} ({ruleset.title}); score {score:g}, "
               f"{n} rounds counted, {'round robin (C.07 15.2)' if d.round_robin[0] else 'Swiss'}; {reading}")
    return Explanation(frame, value, summary, is_sum, str(spec), ruleset.name, chosen, player)


