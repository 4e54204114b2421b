"""Tie-break spec strings (rules.md Section 7): ``"BH/C1"`` <-> :class:`TieBreakSpec`.

Grammar: ``NAME [":" ("MP"|"GP")] { "/" MOD } [ "@" EDITION ]``, case-insensitive on input, upper case on
output; ``BH-C1`` is accepted for ``BH/C1``. Names and modifiers are checked against the registry.

>>> str(parse_spec("bh-c1"))
'BH/C1'
>>> str(parse_spec("KS/L-1")), str(parse_spec("ARO/U1400/C1@fide-2024"))
('KS/L-1', 'ARO/C1/U1400@fide-2024')
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Final

from tbstats.errors import UnknownTieBreakError, did_you_mean
from tbstats.rules import EDITIONS, check_edition

_MOD = re.compile(r"^(C|M)(\d+)$|^L([+-]?\d+)$|^(P|F|R)$|^U(\d+)$|^K(\d+)$")
MODIFIER_KINDS: Final = ("C", "M", "L", "P", "F", "R", "U", "K")


@dataclass(frozen=True)
class TieBreakSpec:
    """A parsed tie-break: name, modifiers and an optional edition override."""

    name: str
    cut_low: int = 0          # C<n> / M<n>: least significant values cut
    cut_high: int = 0         # M<n>: most significant values cut
    median: bool = False      # written as M (low and high cuts) rather than C
    limit: int | None = None  # KS L<k>: limit moved by k half points
    forfeits: bool = False    # P: DE with forfeits
    fore: bool = False        # F: AOB over Fore Buchholz
    reverse: bool = False     # R: reverse order (TPN, RTNG)
    unrated: int | None = None  # U<rating>: rating for unrated players (Art. 10)
    reference: str | None = None  # :MP / :GP (team reference score)
    edition: str | None = None    # @EDITION override
    k_factor: int | None = None   # K<n>: SSSC strength-correction divisor (team tie-breaks, C.07 13.4)

    @property
    def modifiers(self) -> set[str]:
        """Modifier kinds used, for checking against the registry."""
        kinds = set()
        if self.cut_low or self.cut_high:
            kinds.add("M" if self.median else "C")
        for kind, on in (("L", self.limit is not None), ("P", self.forfeits), ("F", self.fore),
                         ("R", self.reverse), ("U", self.unrated is not None), ("K", self.k_factor is not None)):
            if on:
                kinds.add(kind)
        return kinds

    def without_edition(self) -> TieBreakSpec:
        return replace(self, edition=None)

    def __str__(self) -> str:
        text = self.name + (f":{self.reference}" if self.reference else "")
        if self.cut_low or self.cut_high:
            text += f"/M{self.cut_high}" if self.median else f"/C{self.cut_low}"
        if self.limit is not None:
            text += f"/L{self.limit:+d}" if self.limit < 0 else f"/L{self.limit}"
        for flag, letter in ((self.forfeits, "P"), (self.fore, "F"), (self.reverse, "R")):
            if flag:
                text += f"/{letter}"
        if self.unrated is not None:
            text += f"/U{self.unrated}"
        if self.k_factor is not None:
            text += f"/K{self.k_factor}"
        if self.edition:
            text += f"@{self.edition}"
        return text


def parse_spec(text: str, known: dict[str, frozenset[str]] | None = None,
               aliases: dict[str, str] | None = None) -> TieBreakSpec:
    """Parse one spec; ``known`` maps registry names to allowed modifier kinds (default: the registry)."""
    if known is None or aliases is None:
        from tbstats.tiebreaks import ALIASES, allowed_modifiers
        known, aliases = allowed_modifiers(), ALIASES
    raw = text.strip()
    if not raw:
        raise UnknownTieBreakError("empty tie-break spec (expected e.g. 'BH/C1')")
    body, _, edition = raw.partition("@")
    edition_name = check_edition(edition) if edition else None
    head, *mods = re.split(r"/", body)
    name, _, reference = head.partition(":")
    name = name.strip().upper()
    if "-" in name and not name.startswith("USCF-") and name not in known:
        name, *hyphen_mods = name.split("-")
        mods = hyphen_mods + mods
    name = aliases.get(name, name)
    if name not in known:
        raise UnknownTieBreakError(f"unknown tie-break {text!r} (expected a name such as BH, SB, DE; "
                                   f"`tbstats tiebreaks` lists them)." + did_you_mean(name, known))
    ref = reference.strip().upper() or None
    if ref not in (None, "MP", "GP"):
        raise UnknownTieBreakError(f"{text!r}: reference score {reference!r} must be MP or GP")
    fields: dict[str, object] = {}
    for mod in (m.strip().upper() for m in mods):
        m = _MOD.match(mod)
        if not m:
            raise UnknownTieBreakError(f"{text!r}: unknown modifier {mod!r} (expected C1, C2, M1, M2, L±k, "
                                       "P, F, R, U<rating> or K<n>)")
        if m.group(1):
            k = int(m.group(2))
            fields.update(cut_low=k, cut_high=k if m.group(1) == "M" else 0, median=m.group(1) == "M")
        elif m.group(3):
            fields["limit"] = int(m.group(3))
        elif m.group(4):
            fields[{"P": "forfeits", "F": "fore", "R": "reverse"}[m.group(4)]] = True
        elif m.group(5):
            fields["unrated"] = int(m.group(5))
        else:
            fields["k_factor"] = int(m.group(6))
    spec = TieBreakSpec(name=name, reference=ref, edition=edition_name, **fields)  # type: ignore[arg-type]
    bad = spec.modifiers - known[name]
    if bad:
        allowed = ", ".join(sorted(known[name])) or "none"
        raise UnknownTieBreakError(f"{text!r}: modifier {'/'.join(sorted(bad))} is not defined for {name} "
                                   f"(allowed: {allowed})")
    return spec


def parse_specs(text: str | list[str]) -> list[TieBreakSpec]:
    """Parse a comma-separated list (or a list of strings) of specs."""
    items = text.split(",") if isinstance(text, str) else [s for t in text for s in t.split(",")]
    return [parse_spec(s) for s in items if s.strip()]


__all__ = ["EDITIONS", "TieBreakSpec", "parse_spec", "parse_specs"]
