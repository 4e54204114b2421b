"""The features whom-ties-favour tables are broken down by (:mod:`tbstats.analysis.fairness`), named in a light
module: ``evaluate --by`` offers them without importing the analysis."""

from __future__ import annotations

from typing import Final

#: In table order; ``all`` is every tied player.
BREAKDOWNS: Final = ("all", "unplayed", "colour", "rating_band", "start_rank", "seed_in_group")
