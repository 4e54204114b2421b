"""Each tournament's own tie-break list, as the file declares it (TRF 202, else 212 without PTS).

``from-file`` in a list option or a configuration means these lists (rules.md 8, conventions).
"""

from __future__ import annotations

from typing import Final

from tbstats.engine.tiebreaks import parse_specs
from tbstats.errors import TbstatsError
from tbstats.model.batch import Batch
from tbstats.model.dense import tournaments_by_id
from tbstats.model.spec import TieBreakSpec

#: The list name that means "each tournament's own declared list".
FROM_FILE: Final = "from-file"


def declared_lists(batch: Batch) -> list[list[TieBreakSpec] | None]:
    """Each tournament's own tie-break list (202, else 212 without PTS); None when absent or unknown."""
    out: list[list[TieBreakSpec] | None] = []
    t = tournaments_by_id(batch)
    for tb202, tb212 in zip(t["tiebreaks"].to_list(), t["standings_tiebreaks"].to_list(), strict=True):
        listed = tb202 or [x for x in (tb212 or []) if x.strip().upper() != "PTS"]
        try:
            out.append(parse_specs(listed) if listed else None)
        except TbstatsError:
            out.append(None)
    return out
