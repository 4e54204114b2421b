"""What went into a result: the inputs, the files read, rejected and skipped, the reader warnings, and what the run
did that the user may not expect (team events ranked as individuals or left out, the warnings of
:mod:`tbstats.run.checks`). The command line fills one :class:`Account` per run from its
:class:`~tbstats.io.sources.Tally`; every report page shows it (:mod:`tbstats.report.frame`).

>>> from tbstats.io.sources import Tally
>>> a = Account.of(Tally(), ["games/"], tournaments=0, checks=["BH computed for round robins"])
>>> a.paths, a.files, a.problems.height, a.checks
(('games/',), 0, 0, ('BH computed for round robins',))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import polars as pl

from tbstats.io.sources import Tally, is_skipped
from tbstats.io.trf import ERROR_SCHEMA
from tbstats.model.games import empty


def warning_kinds(warnings: pl.DataFrame) -> pl.DataFrame:
    """Warnings counted by kind (the field: a TRF record code such as ``202`` or ``299``, a column, or
    ``encoding``; round numbers left out), most frequent first, with the first warning of each kind.

    >>> w = pl.DataFrame({"source": ["a", "b", "c"], "line": [4, 9, 2],
    ...                   "field": ["round 1 result", "encoding", "round 4 result"], "message": ["x", "y", "z"]})
    >>> warning_kinds(w).select("kind", "n", "source", "line").rows()
    [('round N result', 2, 'a', 4), ('encoding', 1, 'b', 9)]
    """
    kind = pl.col("field").fill_null("other").str.replace_all(r"\bround \d+", "round N").alias("kind")
    return (warnings.with_columns(kind).group_by("kind", maintain_order=True)
            .agg(pl.len().alias("n"), pl.col("source", "line", "field", "message").first())
            .sort("n", "kind", descending=[True, False]))


@dataclass(frozen=True)
class Account:
    """An account of a run's inputs, for the ``Inputs`` section of a page.

    ``ledger`` holds every problem and skipped file (the rows of ``--errors FILE``), ``warnings`` every reader
    warning (``--warnings FILE``); ``rejected`` counts the files rejected. ``team_events`` were ``team_events_as``
    ("ranked as individuals", "left out"); ``checks`` are the warnings of :mod:`tbstats.run.checks` (Buchholz
    tie-breaks in round robins, ...) and ``notes`` the other notes the command printed. ``simulated``: the
    tournaments were simulated, no file was read. ``errors_file``/``warnings_file``: where the full lists went.
    """

    paths: tuple[str, ...] = ()
    files: int = 0
    tournaments: int = 0
    rejected: int = 0
    ledger: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=ERROR_SCHEMA))
    warnings: pl.DataFrame = field(default_factory=lambda: empty("warnings"))
    team_events: int = 0
    team_events_as: str = ""
    checks: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    simulated: bool = False
    errors_file: str | None = None
    warnings_file: str | None = None

    @classmethod
    def of(cls, tally: Tally, paths: Sequence[str], *, tournaments: int, warnings: pl.DataFrame | None = None,
           team_events: int = 0, team_events_as: str = "", checks: Sequence[str] = (), notes: Sequence[str] = (),
           errors_file: str | None = None, warnings_file: str | None = None) -> Account:
        """The account of a load or run (its files, rejected files and ledger) over ``paths``."""
        return cls(tuple(paths), tally.files, tournaments, tally.rejected, tally.ledger,
                   empty("warnings") if warnings is None else warnings, team_events, team_events_as,
                   tuple(checks), tuple(notes), False, errors_file, warnings_file)

    @property
    def problems(self) -> pl.DataFrame:
        """The ledger rows of rejected files (the problems), in input order."""
        return self.ledger.filter(~is_skipped())

    @property
    def skipped(self) -> pl.DataFrame:
        """The files skipped as not tournament files: one row each (path, reason)."""
        return (self.ledger.filter(is_skipped())
                .unique("path", keep="first", maintain_order=True).select("path", "reason"))

    def rejected_files(self) -> pl.DataFrame:
        """One row per file with problems: its first problem (line, column, reason) and how many it has."""
        return (self.problems.group_by("path", maintain_order=True)
                .agg(pl.col("line", "column", "reason").first(), pl.len().alias("problems")))

    def warning_kinds(self) -> pl.DataFrame:
        """:func:`warning_kinds` of the reader warnings."""
        return warning_kinds(self.warnings)
