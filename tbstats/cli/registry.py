"""``tbstats tiebreaks``: the tie-break registries as a table, listed without loading the engine.

The rows are a copy of :data:`tbstats.engine.tiebreaks.TIEBREAKS` and
:data:`tbstats.engine.teams.tiebreaks.TEAM_TIEBREAKS` (name, article, modifiers, order, kind, description),
so that the listing starts in a fraction of the time numpy and polars take to import; ``tests/test_cli_lazy.py``
checks that they are the registries' rows (:func:`registry_rows` makes them from the registries).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import click

from tbstats.cli.base import EPILOG, main
from tbstats.cli.outputs import Output, output_options, quiet_option
from tbstats.output import write_strings

COLUMNS: Final = ("name", "article", "modifiers", "order", "kind", "description")


def registry_rows(registry: Mapping[str, Any]) -> tuple[tuple[str, ...], ...]:
    """The listing's rows of a registry (``TIEBREAKS`` or ``TEAM_TIEBREAKS``), as :data:`INDIVIDUAL` and
    :data:`TEAMS` hold them."""
    return tuple((t.name.replace("MPVGP", "MPvGP"), t.article, ",".join(sorted(t.modifiers)),
                  "higher first" if t.higher_is_better else "lower first", t.kind, t.description)
                 for t in registry.values())


#: ``registry_rows(TIEBREAKS)``.
INDIVIDUAL: Final = (
    ('PTS', 'C.07 4', '', 'higher first', 'value', 'points (primary score)'),
    ('DE', 'C.07 6', 'P', 'higher first', 'partition', 'direct encounter among the tied players'),
    ('WIN', 'C.07 7.1', '', 'higher first', 'value', 'rounds scored as a win, with or without playing'),
    ('WON', 'C.07 7.2', '', 'higher first', 'value', 'games won over the board'),
    ('BPG', 'C.07 7.3', '', 'higher first', 'value', 'games played with black'),
    ('BWG', 'C.07 7.4', '', 'higher first', 'value', 'games won with black'),
    ('PS', 'C.07 7.5', 'C', 'higher first', 'value', 'sum of progressive scores'),
    ('REP', 'C.07 7.6', '', 'higher first', 'value', 'rounds one elected to play'),
    ('STD', 'C.07 7.7', '', 'higher first', 'value', 'standard points (2026)'),
    ('TPN', 'C.07 7.8', 'R', 'lower first', 'value', 'tournament pairing number (lower first)'),
    ('BH', 'C.07 8.1', 'C,M,P', 'higher first', 'value', "Buchholz: sum of opponents' scores"),
    ('AOB', 'C.07 8.2', 'F', 'higher first', 'value', "average of opponents' Buchholz"),
    ('FB', 'C.07 8.3', 'C,M,P', 'higher first', 'value', "Fore Buchholz: final round's games as draws"),
    ('SB', 'C.07 9.1', 'C,M,P', 'higher first', 'value', 'Sonneborn-Berger'),
    ('KS', 'C.07 9.2', 'L', 'higher first', 'value', 'Koya: points against opponents on 50% or more'),
    ('ARO', 'C.07 10.1', 'C,M,U', 'higher first', 'value', 'average rating of opponents'),
    ('TPR', 'C.07 10.2', 'U', 'higher first', 'value', 'tournament performance rating'),
    ('PTP', 'C.07 10.3', 'U', 'higher first', 'value', 'perfect tournament performance'),
    ('APRO', 'C.07 10.4', 'U', 'higher first', 'value', 'average performance of opponents'),
    ('APPO', 'C.07 10.5', 'U', 'higher first', 'value', 'average perfect performance of opponents'),
    ('RTNG', 'C.07 10.6', 'R,U', 'higher first', 'value', 'own rating (higher first)'),
    ('LOTS', 'C.07 4.2', '', 'higher first', 'value', 'drawing of lots (seeded; --lots SEED)'),
    ('USCF-MM', 'US 34E1', '', 'higher first', 'value', 'modified median'),
    ('USCF-SOLKOFF', 'US 34E2', '', 'higher first', 'value', 'Solkoff (US adjusted scores)'),
    ('USCF-CUM', 'US 34E3', '', 'higher first', 'value', 'cumulative score, less unplayed wins and byes'),
    ('USCF-MEDIAN', 'US 34E4', '', 'higher first', 'value', 'median (Harkness)'),
    ('USCF-H2H', 'US 34E5', '', 'higher first', 'partition', 'result between tied players (all must have met)'),
    ('USCF-BLACKS', 'US 34E6', '', 'higher first', 'value', 'most games with black'),
    ('USCF-KASHDAN', 'US 34E7', '', 'higher first', 'value', 'Kashdan: 4 win, 2 draw, 1 loss, 0 unplayed'),
    ('USCF-SB', 'US 34E8', '', 'higher first', 'value', 'Sonneborn-Berger with US adjusted scores'),
    ('USCF-OPPCUM', 'US 34E9', '', 'higher first', 'value', "opponents' cumulative scores"),
    ('USCF-AVGOPP', 'US 34E11', 'U', 'higher first', 'value', 'average rating of opposition'),
)
#: ``registry_rows(TEAM_TIEBREAKS)``.
TEAMS: Final = (
    ('MPTS', 'C.07 11', '', 'higher first', 'value', 'match points'),
    ('GPTS', 'C.07 11', '', 'higher first', 'value', 'game points'),
    ('PTS', 'C.07 11', '', 'higher first', 'value', 'primary score (MP or GP)'),
    ('MPvGP', 'C.07 13.1', '', 'higher first', 'value', 'secondary score: GP when MP is primary, else MP'),
    ('EMMSB', 'C.07 13.2', 'C,M,P', 'higher first', 'value', "opponents' MP x own MP"),
    ('EMGSB', 'C.07 13.2', 'C,M,P', 'higher first', 'value', "opponents' MP x own GP"),
    ('EGMSB', 'C.07 13.2', 'C,M,P', 'higher first', 'value', "opponents' GP x own MP"),
    ('EGGSB', 'C.07 13.2', 'C,M,P', 'higher first', 'value', "opponents' GP x own GP"),
    ('EDE', 'C.07 13.3', 'P', 'higher first', 'partition',
     'extended direct encounter: DE on the primary, then the secondary score'),
    ('EDET', 'C.07 13.3.2', 'P', 'higher first', 'partition', 'EDE, then TBR of the encounter'),
    ('EDEB', 'C.07 13.3.2', 'P', 'higher first', 'partition', 'EDE, then BBE of the encounter'),
    ('EDEBT', 'C.07 13.3.2', 'P', 'higher first', 'partition', 'EDE, then BC and TBR of the encounter'),
    ('EDEBB', 'C.07 13.3.2', 'P', 'higher first', 'partition', 'EDE, then BC and BBE of the encounter'),
    ('BC', 'C.07 12.1', '', 'lower first', 'value', 'board count (lower first)'),
    ('TBR', 'C.07 12.2', '', 'higher first', 'partition', 'top board result'),
    ('BBE', 'C.07 12.3', '', 'higher first', 'partition', 'bottom board elimination'),
    ('SSSC', 'C.07 13.4', 'F,K', 'higher first', 'value', 'secondary score + BH(primary) / K'),
    ('DE', 'C.07 6', 'P', 'higher first', 'partition', 'direct encounter among the tied players (on MP or GP)'),
    ('WIN', 'C.07 7.1', '', 'higher first', 'value', 'rounds scored as a win, with or without playing (on MP or GP)'),
    ('WON', 'C.07 7.2', '', 'higher first', 'value', 'games won over the board (on MP or GP)'),
    ('BPG', 'C.07 7.3', '', 'higher first', 'value', 'games played with black (on MP or GP)'),
    ('BWG', 'C.07 7.4', '', 'higher first', 'value', 'games won with black (on MP or GP)'),
    ('PS', 'C.07 7.5', 'C', 'higher first', 'value', 'sum of progressive scores (on MP or GP)'),
    ('REP', 'C.07 7.6', '', 'higher first', 'value', 'rounds one elected to play (on MP or GP)'),
    ('STD', 'C.07 7.7', '', 'higher first', 'value', 'standard points (2026) (on MP or GP)'),
    ('TPN', 'C.07 7.8', 'R', 'lower first', 'value', 'tournament pairing number (lower first) (on MP or GP)'),
    ('BH', 'C.07 8.1', 'C,M,P', 'higher first', 'value', "Buchholz: sum of opponents' scores (on MP or GP)"),
    ('AOB', 'C.07 8.2', 'F', 'higher first', 'value', "average of opponents' Buchholz (on MP or GP)"),
    ('FB', 'C.07 8.3', 'C,M,P', 'higher first', 'value', "Fore Buchholz: final round's games as draws (on MP or GP)"),
    ('SB', 'C.07 9.1', 'C,M,P', 'higher first', 'value', 'Sonneborn-Berger (on MP or GP)'),
    ('KS', 'C.07 9.2', 'L', 'higher first', 'value', 'Koya: points against opponents on 50% or more (on MP or GP)'),
    ('ARO', 'C.07 10.1', 'C,M,U', 'higher first', 'value', 'average rating of opponents (on MP or GP)'),
    ('TPR', 'C.07 10.2', 'U', 'higher first', 'value', 'tournament performance rating (on MP or GP)'),
    ('PTP', 'C.07 10.3', 'U', 'higher first', 'value', 'perfect tournament performance (on MP or GP)'),
    ('APRO', 'C.07 10.4', 'U', 'higher first', 'value', 'average performance of opponents (on MP or GP)'),
    ('APPO', 'C.07 10.5', 'U', 'higher first', 'value', 'average perfect performance of opponents (on MP or GP)'),
    ('RTNG', 'C.07 10.6', 'R,U', 'higher first', 'value', 'own rating (higher first) (on MP or GP)'),
)


@main.command(name="tiebreaks", epilog=EPILOG, imports=())
@output_options
@click.option("--teams", is_flag=True, help="List the team registry (C.07 11-13 and the individual ones on MP/GP).")
@quiet_option
def tiebreaks_cmd(output: Output, teams: bool, quiet: bool) -> None:
    """List the tie-break registry: name, article, modifiers, direction and description."""
    write_strings(COLUMNS, TEAMS if teams else INDIVIDUAL, output.format, output.path, csv_escape=output.csv_escape)
