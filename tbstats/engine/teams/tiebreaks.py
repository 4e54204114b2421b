"""The team tie-break registry and its value kernels (C.07 Art. 11-13, 16; rules.md Section 9).

One row per tie-break keyed by acronym, as in :mod:`tbstats.engine.tiebreaks`. Every individual tie-break applies
to teams on MP or GP (``BH:MP``, ``SB:GP/C1``, ...): it runs unchanged on the teams x rounds view of its
reference score. Team kernels (MPvGP, the four extended Sonneborn-Berger forms, BC, SSSC) read both views at
once. Partition tie-breaks (DE, EDE and its 2026 chains, TBR, BBE) order tied groups in
:mod:`tbstats.engine.teams.standings`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, Literal

import numpy as np

from tbstats.engine.teams.dense import Reference, TeamDense, board_points
from tbstats.engine.tiebreaks import ALIASES, TIEBREAKS, check_spec, kernel_of
from tbstats.engine.tiebreaks.base import Context, LotsKeys, Values, cut_sum, round_half_up
from tbstats.errors import UnknownTieBreakError, did_you_mean
from tbstats.model.spec import TieBreakSpec, read_spec, split_specs


@dataclass
class TeamContext:
    """The team views of a batch and one individual :class:`Context` per reference score (caches)."""

    td: TeamDense
    edition_of: np.ndarray
    lots_keys: LotsKeys | None = None    # each team event's key for the drawing of lots (its fingerprint)
    contexts: dict[str, Context] = field(default_factory=dict)
    _values: dict[tuple[str, str], Values] = field(default_factory=dict)

    def ctx(self, reference: Reference) -> Context:
        if reference not in self.contexts:
            self.contexts[reference] = Context(self.td.view(reference), self.edition_of, lots_keys=self.lots_keys)
        return self.contexts[reference]

    @property
    def teams(self) -> int:
        return self.td.mp.players

    def primary(self) -> np.ndarray:
        """[T] True where MP is the team's event's primary score."""
        return self.td.mp.per_player(self.td.primary == "MP")

    def values(self, spec: TieBreakSpec, edition: str) -> Values:
        """Values of a team value tie-break under ``edition`` ('auto': each event's own edition), cached."""
        edition = spec.edition or edition
        key = (spec.plain, edition)
        if key not in self._values:
            if edition == "auto":
                per_team = self.edition_of[self.td.mp.tix]
                num = np.zeros(self.teams, dtype=np.int64)
                den = np.ones(self.teams, dtype=np.int64)
                defined = np.zeros(self.teams, dtype=bool)
                for e in np.unique(self.edition_of):
                    v = self.values(spec.without_edition(), str(e))
                    rows = per_team == e
                    num[rows], den[rows], defined[rows] = v.num[rows], v.den[rows], v.defined[rows]
                self._values[key] = Values(num, den, defined)
            else:
                kernel = TEAM_TIEBREAKS[spec.name].kernel
                assert kernel is not None
                self._values[key] = kernel(self, spec, edition)
        return self._values[key]


TeamKernel = Callable[[TeamContext, TieBreakSpec, str], Values]


def _by_reference(tc: TeamContext, spec: TieBreakSpec, edition: str, primary: bool) -> Values:
    """An individual tie-break on the primary (or, with ``primary`` False, secondary) score unless :MP/:GP."""
    if spec.reference is not None:
        return tc.ctx(spec.reference).values(spec, edition, kernel_of(spec.name))  # type: ignore[arg-type]
    mp = tc.ctx("MP").values(spec, edition, kernel_of(spec.name))
    gp = tc.ctx("GP").values(spec, edition, kernel_of(spec.name))
    use_mp = tc.primary() == primary
    return Values(np.where(use_mp, mp.num, gp.num), np.where(use_mp, mp.den, gp.den),
                  np.where(use_mp, mp.defined, gp.defined))


def individual(tc: TeamContext, spec: TieBreakSpec, edition: str) -> Values:
    """An individual tie-break of Art. 6-10 applied to teams on MP or GP (default: the primary score)."""
    return _by_reference(tc, spec, edition, primary=True)


def match_points(tc: TeamContext, spec: TieBreakSpec, edition: str) -> Values:
    """MPTS: match points (C.07 11)."""
    return tc.ctx("MP").values(TieBreakSpec("PTS"), edition, kernel_of("PTS"))


def game_points(tc: TeamContext, spec: TieBreakSpec, edition: str) -> Values:
    """GPTS: game points, the sum of the board points (C.07 11)."""
    return tc.ctx("GP").values(TieBreakSpec("PTS"), edition, kernel_of("PTS"))


def secondary_score(tc: TeamContext, spec: TieBreakSpec, edition: str) -> Values:
    """MPvGP: the secondary score, GP when MP is primary and MP otherwise (C.07 13.1)."""
    return _by_reference(tc, TieBreakSpec("PTS"), edition, primary=False)


def _esb(opp: Reference, own: Reference) -> TeamKernel:
    def kernel(tc: TeamContext, spec: TieBreakSpec, edition: str) -> Values:
        el = tc.ctx(opp).elements(edition, forfeits=spec.forfeits)
        mine = tc.td.view(own)
        contribution = el.oppscore * np.where(mine.counted, mine.pts, 0)
        total, _ = cut_sum(el.present, contribution, el.oppscore, el.vur, spec.cut_low, spec.cut_high,
                           by_oppscore=True)
        den = tc.ctx(opp).unit() * tc.ctx(own).unit()
        return Values(total, den, np.ones(tc.teams, dtype=bool))
    kernel.__doc__ = (f"E{opp[0]}{own[0]}SB: opponents' final {opp} times own {own} in the match, unplayed "
                      "rounds by the dummy of 16.4, cuts by the opponent's score (C.07 13.2, 16.5).")
    return kernel


def board_count(tc: TeamContext, spec: TieBreakSpec, edition: str) -> Values:
    """BC: sum over the team's games of board number times board points; lower is better (C.07 12.1)."""
    pts = board_points(tc.td)
    weights = np.arange(1, pts.shape[2] + 1)[None, None, :]
    return Values((pts * weights).sum(axis=(1, 2)), tc.ctx("GP").unit(), np.ones(tc.teams, dtype=bool))


def strength_corrected(tc: TeamContext, spec: TieBreakSpec, edition: str) -> Values:
    """SSSC: secondary score + BH (FB with /F) of the primary score / K, 2 decimals half up (C.07 13.4).

    K = floor(highest primary score achievable in the event / highest secondary score in one match), unless
    ``/K<n>`` fixes it.
    """
    name = "FB" if spec.fore else "BH"
    bh = _by_reference(tc, TieBreakSpec(name), edition, primary=True)
    sec = secondary_score(tc, spec, edition)
    mp, gp = tc.td.mp, tc.td.gp
    is_mp = tc.primary()
    max_primary = np.where(is_mp, mp.per_player(mp.W * mp.n), gp.per_player(gp.W * gp.n))
    max_secondary = np.where(is_mp, gp.per_player(gp.W), mp.per_player(mp.W))
    # max_primary / max_secondary in points: units of primary / units of secondary
    p_unit = np.where(is_mp, mp.per_player(mp.scale), gp.per_player(gp.scale))
    s_unit = np.where(is_mp, gp.per_player(gp.scale), mp.per_player(mp.scale))
    k = np.maximum((max_primary * s_unit) // np.maximum(max_secondary * p_unit, 1), 1)
    if spec.k_factor is not None:
        k = np.full(tc.teams, max(spec.k_factor, 1), dtype=np.int64)
    # 100 * (sec.num / sec.den + bh.num / (bh.den * k)), exact, then half up
    num = 100 * (sec.num * bh.den * k + bh.num * sec.den)
    den = sec.den * bh.den * k
    return Values(round_half_up(num, den), np.full(tc.teams, 100, dtype=np.int64), np.ones(tc.teams, dtype=bool))


@dataclass(frozen=True)
class TeamTieBreak:
    """One team registry row."""

    name: str
    kernel: TeamKernel | None
    higher_is_better: bool
    modifiers: frozenset[str]
    article: str
    description: str
    kind: Literal["value", "partition"] = "value"
    integer: bool = False


CUTS_P = frozenset({"C", "M", "P"})   # cuts, and /P: forfeited matches as matches played (rules.md 5)
_PARTITION_OF_INDIVIDUAL = ("DE",)
_SKIP = ("LOTS", "PTS")


def _team_rows() -> dict[str, TeamTieBreak]:
    rows = [
        TeamTieBreak("MPTS", match_points, True, frozenset(), "C.07 11", "match points"),
        TeamTieBreak("GPTS", game_points, True, frozenset(), "C.07 11", "game points"),
        TeamTieBreak("PTS", individual, True, frozenset(), "C.07 11", "primary score (MP or GP)"),
        TeamTieBreak("MPVGP", secondary_score, True, frozenset(), "C.07 13.1",
                     "secondary score: GP when MP is primary, else MP"),
        TeamTieBreak("EMMSB", _esb("MP", "MP"), True, CUTS_P, "C.07 13.2", "opponents' MP x own MP"),
        TeamTieBreak("EMGSB", _esb("MP", "GP"), True, CUTS_P, "C.07 13.2", "opponents' MP x own GP"),
        TeamTieBreak("EGMSB", _esb("GP", "MP"), True, CUTS_P, "C.07 13.2", "opponents' GP x own MP"),
        TeamTieBreak("EGGSB", _esb("GP", "GP"), True, CUTS_P, "C.07 13.2", "opponents' GP x own GP"),
        TeamTieBreak("EDE", None, True, frozenset({"P"}), "C.07 13.3",
                     "extended direct encounter: DE on the primary, then the secondary score", "partition"),
        TeamTieBreak("EDET", None, True, frozenset({"P"}), "C.07 13.3.2", "EDE, then TBR of the encounter",
                     "partition"),
        TeamTieBreak("EDEB", None, True, frozenset({"P"}), "C.07 13.3.2", "EDE, then BBE of the encounter",
                     "partition"),
        TeamTieBreak("EDEBT", None, True, frozenset({"P"}), "C.07 13.3.2",
                     "EDE, then BC and TBR of the encounter", "partition"),
        TeamTieBreak("EDEBB", None, True, frozenset({"P"}), "C.07 13.3.2",
                     "EDE, then BC and BBE of the encounter", "partition"),
        TeamTieBreak("BC", board_count, False, frozenset(), "C.07 12.1", "board count (lower first)"),
        TeamTieBreak("TBR", None, True, frozenset(), "C.07 12.2", "top board result", "partition"),
        TeamTieBreak("BBE", None, True, frozenset(), "C.07 12.3", "bottom board elimination", "partition"),
        TeamTieBreak("SSSC", strength_corrected, True, frozenset({"K", "F"}), "C.07 13.4",
                     "secondary score + BH(primary) / K"),
    ]
    for t in TIEBREAKS.values():
        if t.name.startswith("USCF-") or t.name in _SKIP:
            continue
        kind: Literal["value", "partition"] = "partition" if t.name in _PARTITION_OF_INDIVIDUAL else "value"
        rows.append(TeamTieBreak(t.name, None if kind == "partition" else individual, t.higher_is_better,
                                 t.modifiers, t.article, f"{t.description} (on MP or GP)", kind, t.integer))
    return {r.name: r for r in rows}


TEAM_TIEBREAKS: Final = _team_rows()
TEAM_ALIASES: Final = {k: v for k, v in ALIASES.items() if v in TEAM_TIEBREAKS} | {
    "ESB": "EMMSB", "EMPSB": "EMMSB", "EGPSB": "EGGSB", "MPGP": "MPVGP", "MP": "MPTS", "GP": "GPTS"}
#: Individual tie-breaks whose reference score matters (they accept :MP / :GP); team tie-breaks fix theirs.
ACCEPTS_REFERENCE: Final = frozenset(n for n, t in TEAM_TIEBREAKS.items() if t.kernel is individual) | {"DE"}


def parse_team_spec(text: str) -> TieBreakSpec:
    """Parse one team tie-break spec (``BH:MP/C1``, ``EMGSB/C1``, ``SSSC/K3``, ``EDE/P``)."""
    known = {name: t.modifiers for name, t in TEAM_TIEBREAKS.items()}
    spec = check_spec(read_spec(text), text, known=known, aliases=TEAM_ALIASES)
    if spec.reference is not None and spec.name not in ACCEPTS_REFERENCE:
        raise UnknownTieBreakError(f"{text!r}: {spec.name} fixes its own scores; :MP/:GP applies to the "
                                   "individual tie-breaks (BH:MP, SB:GP, ...)")
    return spec


def parse_team_specs(text: str | list[str]) -> list[TieBreakSpec]:
    """A comma-separated list (or list of strings) of team specs."""
    return [parse_team_spec(s) for s in split_specs(text)]


def get_team_tiebreak(name: str) -> TeamTieBreak:
    key = TEAM_ALIASES.get(name.upper(), name.upper())
    if key not in TEAM_TIEBREAKS:
        raise UnknownTieBreakError(f"unknown team tie-break {name!r}." + did_you_mean(key, TEAM_TIEBREAKS))
    return TEAM_TIEBREAKS[key]


def spec_label(spec: TieBreakSpec) -> str:
    """The column name of a spec (``MPvGP`` keeps its mixed case)."""
    return str(spec).replace("MPVGP", "MPvGP")
