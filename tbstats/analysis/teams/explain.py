"""Explain one team's tie-break round by round: matches, opponents' scores, dummies, caps and cuts.

The team counterpart of :mod:`tbstats.analysis.explain`: each round shows the match (opponent team, type, MP, GP),
the C.07 16.2 category, the opponent's score as counted (16.3) in the reference unit, the dummy of an
unplayed round before and after its cap (16.4), the contribution and what the Cut/Median modifiers removed.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import polars as pl

from tbstats.analysis.explain import CATEGORY, CUT_TEXT, Explanation
from tbstats.engine.standings import initial_labels
from tbstats.engine.teams.dense import Reference
from tbstats.engine.teams.encounter import CHAINS, ede_labels, tied_pairs
from tbstats.engine.teams.standings import make_team_context
from tbstats.engine.teams.tiebreaks import TeamContext, get_team_tiebreak, parse_team_spec, spec_label
from tbstats.engine.tiebreaks.base import cut_order
from tbstats.engine.unplayed import CAP_DRAWS, CAP_OPPONENT
from tbstats.errors import TbstatsError
from tbstats.model.batch import Batch
from tbstats.model.dense import NO_OPP
from tbstats.model.rules import get_ruleset
from tbstats.model.spec import TieBreakSpec
from tbstats.model.teams.batch import TeamBatch
from tbstats.model.teams.matches import MATCH_TYPES

#: spec name -> (opponent-score reference or None for the spec's own, own-points reference or None, family)
_ESB: dict[str, tuple[Reference, Reference]] = {
    "EMMSB": ("MP", "MP"), "EMGSB": ("MP", "GP"), "EGMSB": ("GP", "MP"), "EGGSB": ("GP", "GP")}
_FAMILY = {"BH": "BH", "FB": "BH", "SB": "SB", **{k: "SB" for k in _ESB}}


def _dec(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{float(value):g}"


def explain_team(batch: Batch, *, team: int, tiebreak: str, rules: str = "fide-2026", tournament: int | None = None,
                 force_type: str | None = None, teams: TeamBatch | None = None) -> Explanation:
    """Round-by-round parts of the team ``tiebreak`` for team ``team`` (pairing number) of one team event."""
    spec = parse_team_spec(tiebreak)
    tc = make_team_context(batch, teams, force_type=force_type)
    td = tc.td
    ids = td.mp.t_ids.tolist()
    if tournament is None:
        if len(ids) != 1:
            raise TbstatsError(f"the input holds {len(ids)} team events; choose one with --tournament")
        tournament = ids[0]
    if tournament not in ids:
        raise TbstatsError(f"tournament {tournament} is not a team event")
    e = ids.index(tournament)
    rows = np.nonzero((td.mp.tix == e) & (td.mp.start_no == team))[0]
    if len(rows) == 0:
        raise TbstatsError(f"no team with pairing number {team} in tournament {tournament}")
    i = int(rows[0])
    edition = spec.edition or rules
    if edition == "auto":
        edition = str(tc.edition_of[e])
    primary: Reference = "MP" if td.primary[e] == "MP" else "GP"
    ref: Reference = "MP" if (spec.reference or primary) == "MP" else "GP"
    opp_ref, own_ref = _ESB.get(spec.name, (ref, ref))
    family = _FAMILY.get(spec.name)
    opp_view, own_view = td.view(opp_ref), td.view(own_ref)
    el = tc.ctx(opp_ref).elements(edition, fore=spec.name == "FB", forfeits=spec.forfeits) if family else None
    own_scale, opp_scale = int(own_view.scale[e]), int(opp_view.scale[e])
    cuts: dict[int, str] = {}
    contribution = None
    if el is not None:
        own_pts = np.where(own_view.counted, own_view.pts, 0)
        contribution = el.oppscore if family == "BH" else el.oppscore * own_pts
        if spec.cut_low + spec.cut_high:
            cols, reasons = cut_order(el.present[i:i + 1], contribution[i:i + 1], el.oppscore[i:i + 1],
                                      el.vur[i:i + 1], spec.cut_low, spec.cut_high, by_oppscore=family == "SB")
            cuts = {int(c): CUT_TEXT[int(r)] for c, r in zip(cols[0], reasons[0], strict=True) if r}
    table: dict[str, list[object]] = {k: [] for k in (
        "round", "opponent", "match_type", "mp", "gp", "category", "element", "opponent_score", "dummy_uncapped",
        "cap", "contribution", "vur", "cut")}
    n = int(td.mp.n[e])
    for r in range(n):
        opp = int(td.mp.opp[i, r])
        table["round"].append(r + 1)
        table["opponent"].append(int(td.mp.start_no[opp]) if opp != NO_OPP else None)
        table["match_type"].append(MATCH_TYPES[int(td.mtype[i, r])])
        table["mp"].append(_dec(Fraction(int(td.mp.pts[i, r]), int(td.mp.scale[e]))))
        table["gp"].append(_dec(Fraction(int(td.gp.pts[i, r]), int(td.gp.scale[e]))))
        if el is None or contribution is None:
            for k in ("category", "element", "opponent_score", "dummy_uncapped", "cap", "contribution", "vur", "cut"):
                table[k].append(None)
            continue
        present = bool(el.present[i, r])
        table["category"].append(CATEGORY[int(el.category[i, r])])
        table["element"].append(present)
        table["opponent_score"].append(_dec(Fraction(int(el.oppscore[i, r]), opp_scale)) if present else None)
        own = bool(el.own[i, r])
        table["dummy_uncapped"].append(_dec(Fraction(int(el.uncapped[i, r]), opp_scale)) if own else None)
        cap = int(el.cap[i, r]) if own else 0
        table["cap"].append("16.4.1 opponent's adjusted score" if cap == CAP_OPPONENT else
                            "16.4.2 draws x rounds" if cap == CAP_DRAWS else None)
        den = opp_scale if family == "BH" else opp_scale * own_scale
        table["contribution"].append(_dec(Fraction(int(contribution[i, r]), den)) if present else None)
        table["vur"].append(bool(el.vur[i, r]))
        table["cut"].append(cuts.get(r))
    out = pl.DataFrame(table, schema_overrides={"opponent": pl.Int32})
    tb = get_team_tiebreak(spec.name)
    value: float | None = None
    if tb.kind == "partition":
        shown = "a partition of tied teams (see compute --teams)"
    else:
        v = tc.values(spec, edition)
        shown = _dec(Fraction(int(v.num[i]), int(v.den[i]))) if v.defined[i] else "undefined"
        value = float(Fraction(int(v.num[i]), int(v.den[i]))) if v.defined[i] else None
    ruleset = get_ruleset(edition)
    mp = _dec(Fraction(int(td.mp.adjusted_score[i]), int(td.mp.scale[e])))   # with 299 changes
    gp = _dec(Fraction(int(td.gp.adjusted_score[i]), int(td.gp.scale[e])))
    summary = (f"team {team} ({td.names[i]}): {spec_label(spec)} = {shown} under {ruleset.name} ({ruleset.title}); "
               f"MP {mp}, GP {gp}, primary {primary}, {n} rounds counted, "
               f"{'round robin (C.07 15.2)' if td.mp.round_robin[e] else 'Swiss'}{_chain_note(tc, spec, edition, i)}")
    return Explanation(out, value, summary, is_sum=False, tiebreak=spec_label(spec), edition=ruleset.name,
                       tournament=int(tournament), player=team)


def _chain_note(tc: TeamContext, spec: TieBreakSpec, edition: str, i: int) -> str:
    """For a 2026 EDE chain (13.3.2), whether its board steps order team ``i`` when the chain follows the
    primary score: the pair EDE leaves tied, and why tbstats does not apply the chain to it when the GP totals
    differ (its reading of "tied in both MP and GP"; FIDE's checker reads the two EDE steps, rules.md 9.5)."""
    steps = CHAINS.get(spec.name)
    if not steps:
        return ""
    td = tc.td
    chain = " then ".join(steps)
    labels = initial_labels(td.mp.tix, -tc.values(TieBreakSpec("PTS"), edition).num)
    a, b, met, same_mp, same_gp = tied_pairs(td, ede_labels(td, labels, forfeits=spec.forfeits),
                                             forfeits=spec.forfeits)
    hit = np.nonzero((a == i) | (b == i))[0]
    head = f". {spec.name} after the primary score: "
    if not len(hit):
        return head + f"EDE does not leave this team tied with exactly one other team, so {chain} is not used"
    k = int(hit[0])
    j = int(b[k] if a[k] == i else a[k])
    other = f"team {int(td.mp.start_no[j])} ({td.names[j]})"
    if not met[k]:
        return head + f"tied after EDE with {other}, which it did not meet: no encounter for {chain}"
    if not (same_mp[k] and same_gp[k]):
        e = int(td.mp.tix[i])
        gp = [_dec(Fraction(int(td.gp.score[x]), int(td.gp.scale[e]))) for x in (i, j)]
        return head + (f"tied after EDE with {other}, GP totals {gp[0]} and {gp[1]}: the {chain} of their "
                       f"encounter is not applied (tbstats reads 13.3.2 \"tied in both MP and GP\" as the "
                       f"totals; FIDE's checker applies it to any two teams EDE leaves tied, rules.md 9.5)")
    return head + f"tied after EDE with {other} on MP and GP: the {chain} of their encounter orders them"

