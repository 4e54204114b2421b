"""Where a kept record sits in its source file, for error messages.

The TRF reader keeps the records it does not interpret (``310``, ``299``, ...) verbatim in
``tournaments.records``, without their line numbers: these are found again, only when an error names a
record, by reading the source file once more. A source that is not a regular file on disk (an archive
member, a columnar model) or a record found on no line or on several gives no line: the message then
quotes the record.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import polars as pl

from tbstats.model.batch import source_file

#: Sources larger than this are not read again for a line number (the message quotes the record).
MAX_BYTES = 64 * 1024 * 1024


def record_lines(source: str, records: Sequence[str]) -> list[int | None]:
    """The 1-based line of each record text in ``source`` (a TRF path, ``path#k`` for the k-th event of a
    file), None where it cannot be told.

    >>> record_lines("no/such/file.trf", ["310   1 A"])
    [None]
    """
    path = source_file(source)
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > MAX_BYTES:   # a regular file only
            return [None] * len(records)
        with open(path, "rb") as fh:
            data = fh.read(MAX_BYTES)
    except OSError:
        return [None] * len(records)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("cp1252", errors="replace")
    wanted = {r.rstrip(): None for r in records}
    found: dict[str, list[int]] = {}
    for no, line in enumerate(text.splitlines(), start=1):
        key = line.rstrip()
        if key in wanted:
            found.setdefault(key, []).append(no)
    return [lines[0] if len(lines := found.get(r.rstrip(), [])) == 1 else None for r in records]


def source_of(tournaments: pl.DataFrame, tournament: int) -> str:
    """The ``source`` of one tournament of a tournaments table (the file an error about it names)."""
    return str(tournaments.filter(pl.col("tournament") == tournament)["source"][0])


def place(line: int | None, record: str) -> str:
    """How a message names a record: ``line N`` when its line is known, else the record quoted.

    >>> place(7, "310   1 A  "), place(None, "310   1 A  ")
    ('line 7', "record '310   1 A'")
    """
    return f"line {line}" if line is not None else f"record {record.rstrip()!r}"
