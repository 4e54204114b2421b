"""Errors raised by tbstats: one root, precise messages that name the place and what was expected."""

from __future__ import annotations

from collections.abc import Iterable


class TbstatsError(ValueError):
    """Root of every error tbstats raises on purpose."""


class FormatError(TbstatsError):
    """An input file is malformed: the message names file, line, column/field and the expectation.

    >>> str(FormatError("x.trf", 17, "round 3 result", "'Q' is not a TRF result code (expected one of 1 = 0)"))
    "x.trf:17: round 3 result: 'Q' is not a TRF result code (expected one of 1 = 0)"
    """

    def __init__(self, path: str, line: int | None, column: str | None, reason: str) -> None:
        self.path = path
        self.line = line
        self.column = column
        self.reason = reason
        where = path if line is None else f"{path}:{line}"
        what = f"{column}: {reason}" if column else reason
        super().__init__(f"{where}: {what}")

    def __reduce__(self) -> tuple[type[FormatError], tuple[str, int | None, str | None, str]]:
        """Pickled with its fields, so it travels back from a worker process."""
        return FormatError, (self.path, self.line, self.column, self.reason)


class SchemaError(TbstatsError):
    """A columnar table does not have the expected columns or types (``file``: the file, when known)."""

    file: str | None = None


class UnknownTieBreakError(TbstatsError):
    """A tie-break name or modifier is not in the registry."""


class UnknownEditionError(TbstatsError):
    """A rule edition name is not in the table of editions."""


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """A ' Hint: did you mean ...?' suffix, or '' when nothing is close.

    >>> did_you_mean("BHH", ["BH", "SB"])
    " Hint: did you mean 'BH'?"
    """
    import difflib  # (only a message being made needs it)

    close = difflib.get_close_matches(word, list(choices), n=3, cutoff=0.5)
    if not close:
        return ""
    return " Hint: did you mean " + " or ".join(repr(c) for c in close) + "?"
