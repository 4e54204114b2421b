"""Tie-break spec strings (rules.md Section 7): ``"BH/C1"`` <-> :class:`TieBreakSpec`.

Grammar: ``NAME [":" ("MP"|"GP")] { "/" MOD } [ "@" EDITION ]``, case-insensitive on input, upper case on
output; ``BH-C1`` is accepted for ``BH/C1`` (a hyphen starts the modifiers at the first part that reads as
one, so ``USCF-MM`` stays a name). This module knows the grammar only: :func:`read_spec` does not know which
names exist or which modifiers each accepts. The registry (:func:`tbstats.engine.tiebreaks.parse_spec`) reads with
this grammar, resolves aliases and checks names and modifiers; every caller that wants a spec goes there.

>>> str(read_spec("bh-c1"))
'BH/C1'
>>> str(read_spec("KS/L-1")), str(read_spec("ARO/U1400/C1@fide-2024")), read_spec("uscf-mm").name
('KS/L-1', 'ARO/C1/U1400@fide-2024', 'USCF-MM')
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Final

from tbstats.errors import UnknownTieBreakError
from tbstats.model.cached import cached_property
from tbstats.model.rules import EDITIONS, check_edition

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
    forfeits: bool = False    # P: forfeits counted as games (15.2; DE with forfeits, 6.1.1)
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

    @cached_property
    def plain(self) -> str:
        """The spec as written, without its edition override: what its values are cached under (a context asks
        for it thousands of times a batch, so it is made once per spec, and written out here rather than as the
        text of a copy made by ``dataclasses.replace``, which the engine paid for every spec it made)."""
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
        return text

    def __str__(self) -> str:
        return f"{self.plain}@{self.edition}" if self.edition else self.plain


def read_spec(text: str) -> TieBreakSpec:
    """Read one spec by the grammar alone: the name upper-cased as written (aliases not resolved), modifiers
    checked for their form only. :func:`tbstats.engine.tiebreaks.parse_spec` adds the registry's checks."""
    raw = text.strip()
    if not raw:
        raise UnknownTieBreakError("empty tie-break spec (expected e.g. 'BH/C1')")
    body, _, edition = raw.partition("@")
    edition_name = check_edition(edition) if edition else None
    head, *mods = re.split(r"/", body)
    written, _, reference = head.partition(":")
    parts = written.strip().upper().split("-")
    first_mod = next((i for i, part in enumerate(parts) if i and _MOD.match(part)), len(parts))
    name = "-".join(parts[:first_mod])
    mods = parts[first_mod:] + mods
    ref = reference.strip().upper() or None
    if ref not in (None, "MP", "GP"):
        raise UnknownTieBreakError(f"{text!r}: reference score {reference!r} must be MP or GP")
    fields: dict[str, object] = {}
    given: dict[str, str] = {}   # a modifier's kind (a cut or median, L, P, F, R, U, K) -> the modifier
    for mod in (m.strip().upper() for m in mods):
        m = _MOD.match(mod)
        if not m:
            raise UnknownTieBreakError(f"{text!r}: unknown modifier {mod!r} (expected C1, C2, M1, M2, L±k, "
                                       "P, F, R, U<rating> or K<n>)")
        kind = "C" if m.group(1) else mod[0]
        if kind in given:   # the later one would silently replace the earlier
            raise UnknownTieBreakError(f"{text!r}: {mod} given twice" if given[kind] == mod else
                                       f"{text!r}: {given[kind]} and {mod} are two modifiers of one kind"
                                       f"{' (a cut or a median)' if kind == 'C' else ''}: give one")
        given[kind] = mod
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
    return TieBreakSpec(name=name, reference=ref, edition=edition_name, **fields)  # type: ignore[arg-type]


def split_specs(text: str | list[str]) -> list[str]:
    """The items of a comma-separated list (or of a list of such strings), blanks dropped.

    >>> split_specs(["BH/C1, SB", "DE"])
    ['BH/C1', 'SB', 'DE']
    """
    items = text.split(",") if isinstance(text, str) else [s for t in text for s in t.split(",")]
    return [s.strip() for s in items if s.strip()]


__all__ = ["EDITIONS", "TieBreakSpec", "read_spec", "split_specs"]
