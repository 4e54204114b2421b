"""The tie-break orders arbiters use, as data: what ``audit`` tries when declared ranks follow no given list.

C.07 (2023 on) has no default order (rules.md 1 and 8): a file without a 202/212 list (every TRF-16 file)
declares ranks under an order it does not name. The audit tries the rows below, each under the editions it
names, and rows with rating-based tie-breaks also with each rating of :data:`UNRATED_RATINGS` for unrated
players (``/U<rating>``, rules.md 5.6), and reports which reproduce the declared ranks, or the nearest.
A row is one order; adding an order is adding a row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

#: The FIDE editions an order is tried under when its row names no other.
FIDE_EDITIONS: Final = ("fide-2026", "fide-2024", "fide-legacy")

#: Ratings tried for unrated players in rating-based tie-breaks (besides leaving those tie-breaks
#: undefined, C.07 Art. 10): FIDE's rating floor before and after March 2024 [?: not in rules.md].
UNRATED_RATINGS: Final = (1000, 1400)


@dataclass(frozen=True)
class UsualOrder:
    """One order seen in practice: its name, the events it is for, the list, the editions and the source."""

    name: str
    event: Literal["swiss", "round robin"]
    tiebreaks: str
    source: str
    editions: tuple[str, ...] = FIDE_EDITIONS


_SEEN = "seen in published standings [?: no named source]"

#: Individual orders, in the order of preference when several fit equally. The first seventeen are the
#: orders ``audit`` tried before this table existed (in that order), so that its statuses stay the same.
USUAL_ORDERS: Final[tuple[UsualOrder, ...]] = (
    UsualOrder("large-open", "swiss", "BH/C1,BH", "rules.md 8: large FIDE Swiss opens (convention)"),
    UsualOrder("club-5-7-rounds", "swiss", "BH/C1,BH,SB", "rules.md 8: club Swiss of 5-7 rounds (tie-break guide)"),
    UsualOrder("weekend-7-9-rounds", "swiss", "BH/C1,BH/C2,SB",
               "rules.md 8: weekend open of 7-9 rounds (tie-break guide)"),
    UsualOrder("club-program", "swiss", "BH/C1,BH,SB,DE,WIN", "rules.md 8: Swiss default of one club program"),
    UsualOrder("guide-recommended", "swiss", "BH/C1,BH,WIN,DE,RTNG",
               "rules.md 8, 10.1 S6: 'recommended' by one guide (not a FIDE recommendation)"),
    UsualOrder("bh-first", "swiss", "BH,BH/C1,SB", _SEEN),
    UsualOrder("bh-sb-ps", "swiss", "BH,SB,PS", _SEEN),
    UsualOrder("median", "swiss", "BH/M1,BH,SB", _SEEN),
    UsualOrder("sb-cuts", "swiss", "SB,SB/C1,SB/C2", "rules.md 7: the RANK(PTS;SB;SB/C1;SB/C2) example"),
    UsualOrder("bh-cuts", "swiss", "BH/C1,BH/C2,BH", _SEEN),
    UsualOrder("rr-sb-de-ks", "round robin", "SB,DE,KS", "rules.md 8: round robin (convention)"),
    UsualOrder("rr-de-sb-ks-win", "round robin", "DE,SB,KS,WIN", "rules.md 8: round robin (convention)"),
    UsualOrder("club-3-4-rounds", "swiss", "PS,BH", "rules.md 8: club Swiss of 3-4 rounds, progressive then BH"),
    UsualOrder("de-bh", "swiss", "DE,BH/C1,BH", _SEEN),
    UsualOrder("de-ps", "swiss", "DE,PS", _SEEN),
    UsualOrder("aro-bh", "swiss", "ARO/C1,BH/C1,BH", _SEEN),
    UsualOrder("uscf-34e", "swiss", "USCF-MM,USCF-SOLKOFF,USCF-CUM,USCF-OPPCUM",
               "rules.md 6 and 8: US Chess rule 34E default order", ("uscf",)),
    UsualOrder("c02-round-robin", "round robin", "DE,WIN,SB,KS",
               "FIDE C.02 13.16 (until 2023): recommended for individual round robins [?: secondary sources]"),
    UsualOrder("c02-swiss", "swiss", "DE,WIN,BPG,BH/C1,BH,SB",
               "FIDE C.02 13.16 (until 2023): recommended for Swiss events whose ratings are not all consistent "
               "[?: secondary sources]"),
    UsualOrder("c02-swiss-rated", "swiss", "DE,WIN,BPG,ARO/C1,BH/C1,BH,SB",
               "FIDE C.02 13.16 (until 2023): recommended for Swiss events whose ratings are all consistent "
               "[?: secondary sources]"),
)

#: Team orders tried when a team event's declared ranks follow no given list (rules.md 8, conventions:
#: "MP then GP (or GP then MP), then BH:MP, DE/EDE").
TEAM_ORDERS: Final = (
    "MPvGP", "MPvGP,BH:MP", "MPvGP,EDE", "MPvGP,BH:MP,EDE", "MPvGP,EDE,BH:MP", "EDE,MPvGP", "BH:MP,MPvGP",
    "MPvGP,EGGSB", "EGGSB,BH:MP", "MPvGP,EGGSB,BH:MP", "MPvGP,EMGSB,BH:MP", "EDE,EMGSB,BH:MP,MPvGP",
)
