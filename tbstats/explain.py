"""Explain one player's tie-break round by round: the parts behind a BH or SB value (rules.md 4.4-4.5).

Most "wrong tie-break" reports are about byes: this shows, per round, the opponent and the score they
count with, or the dummy that replaces an unplayed round with the cap that applied, and which elements the
Cut/Median modifiers removed and why.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import polars as pl

from tbstats.api import make_context, tiebreak_values
from tbstats.dense import NO_OPP
from tbstats.errors import TbstatsError
from tbstats.games import GAME_TYPES, Batch
from tbstats.rules import get_ruleset
from tbstats.tiebreaks import FIXED_EDITION, get_tiebreak, parse_spec
from tbstats.tiebreaks.base import CUT_HIGHEST, CUT_LOWEST, CUT_VUR, cut_order
from tbstats.unplayed import CAP_DRAWS, CAP_OPPONENT

CATEGORY = {0: "game", 1: "16.2.1 PAB/FPB", 2: "16.2.2 forfeit win", 3: "16.2.3 requested bye, then played",
            4: "16.2.4 forfeit loss", 5: "16.2.5 requested bye, trailing", -1: "not counted"}
CUT_TEXT = {CUT_LOWEST: "cut: least significant value (14.1)",
            CUT_VUR: "cut: voluntary unplayed round first (16.5)",
            CUT_HIGHEST: "cut: most significant value (14.3)"}
ELEMENT_FAMILY = {"BH": "BH", "FB": "BH", "SB": "SB", "USCF-SOLKOFF": "BH", "USCF-SB": "SB"}


@dataclass(frozen=True)
class Explanation:
    """The rounds table and a one-line summary of the value."""

    rounds: pl.DataFrame
    summary: str


def _dec(units: int, scale: int) -> str:
    value = Fraction(int(units), int(scale))
    return str(value.numerator) if value.denominator == 1 else f"{float(value):g}"


def explain(batch: Batch, *, player: int, tiebreak: str, rules: str = "fide-2026", tournament: int | None = None,
            force_type: str | None = None) -> Explanation:
    """Round-by-round parts of ``tiebreak`` for start number ``player`` of one tournament of ``batch``."""
    spec = parse_spec(tiebreak)
    ids = batch.tournaments["tournament"].to_list()
    if tournament is None:
        if len(ids) != 1:
            raise TbstatsError(f"the input holds {len(ids)} tournaments; choose one with --tournament")
        tournament = ids[0]
    one = batch.select([tournament])
    ctx = make_context(one, force_type=force_type)
    d = ctx.dense
    rows = np.nonzero(d.start_no == player)[0]
    if len(rows) == 0:
        raise TbstatsError(f"no player with start number {player} in tournament {tournament}")
    i = int(rows[0])
    edition = spec.edition or FIXED_EDITION.get(spec.name, rules)
    if edition == "auto":
        edition = str(ctx.edition_of[0])
    tb = get_tiebreak(spec.name)
    scale = int(d.scale[0])
    value = None if tb.kind == "partition" else tiebreak_values(ctx, spec, edition)
    family = ELEMENT_FAMILY.get(spec.name)
    el = ctx.elements(edition, fore=spec.name == "FB") if family or tb.kind == "value" else None
    n = int(d.n[0])
    table: dict[str, list[object]] = {k: [] for k in (
        "round", "opponent", "type", "result", "points", "category", "element", "opponent_score",
        "dummy_uncapped", "cap", "contribution", "vur", "cut")}
    cuts: dict[int, str] = {}
    if family and el is not None and spec.cut_low + spec.cut_high:
        contribution = el.oppscore if family == "BH" else el.sb_contribution
        cols, reasons = cut_order(el.present[i:i + 1], contribution[i:i + 1], el.oppscore[i:i + 1],
                                  el.vur[i:i + 1], spec.cut_low, spec.cut_high, by_oppscore=family == "SB")
        cuts = {int(c): CUT_TEXT[int(r)] for c, r in zip(cols[0], reasons[0], strict=True) if r}
    g = one.games.filter(pl.col("player") == player).sort("round")
    results = dict(zip(g["round"].to_list(), g["result"].to_list(), strict=True))
    for r in range(n):
        opp = int(d.opp[i, r])
        table["round"].append(r + 1)
        table["opponent"].append(int(d.start_no[opp]) if opp != NO_OPP else None)
        table["type"].append(GAME_TYPES[int(d.gtype[i, r])])
        table["result"].append(results.get(r + 1))
        table["points"].append(_dec(d.pts[i, r], scale))
        if el is None:
            for k in ("category", "element", "opponent_score", "dummy_uncapped", "cap", "contribution", "vur", "cut"):
                table[k].append(None)
            continue
        present = bool(el.present[i, r])
        table["category"].append(CATEGORY[int(el.category[i, r])])
        table["element"].append(present)
        table["opponent_score"].append(_dec(el.oppscore[i, r], scale) if present else None)
        own = present and int(el.category[i, r]) != 0 and not (opp != NO_OPP and el.predetermined[i])
        table["dummy_uncapped"].append(_dec(el.uncapped[i, r], scale) if own else None)
        cap = int(el.cap[i, r]) if own else 0
        table["cap"].append("16.4.1 opponent's adjusted score" if cap == CAP_OPPONENT else
                            "16.4.2 draws x rounds" if cap == CAP_DRAWS else None)
        if family == "SB":
            table["contribution"].append(_dec(el.oppscore[i, r] * d.pts[i, r], scale * scale) if present else None)
        else:
            table["contribution"].append(table["opponent_score"][-1])
        table["vur"].append(bool(el.vur[i, r]))
        table["cut"].append(cuts.get(r))
    rounds = pl.DataFrame(table, schema_overrides={"opponent": pl.Int32, "result": pl.String})
    ruleset = get_ruleset(edition)
    shown = "undefined" if value is None or not value.defined[i] else _dec(value.num[i], value.den[i]) \
        if value.den[i] in (scale, scale * scale, 1) else f"{value.num[i] / value.den[i]:g}"
    if value is not None and value.defined[i]:
        shown = str(Fraction(int(value.num[i]), int(value.den[i])))
        shown = f"{float(Fraction(shown)):g}" if "/" in shown else shown
    score = _dec(int(np.where(d.counted[i], d.pts[i], 0).sum()), scale)
    summary = (f"player {player}: {spec} = {shown} under {ruleset.name} ({ruleset.title}); score {score}, "
               f"{n} rounds counted, {'round robin (C.07 15.2)' if d.round_robin[0] else 'Swiss'}")
    return Explanation(rounds, summary)
