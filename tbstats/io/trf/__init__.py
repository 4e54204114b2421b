"""TRF-16, TRF26 and TRF(x) in and out (rules.md Section 2).

Reading (:func:`read_trf`) works on the raw bytes of every file of a batch at once: one character buffer,
fixed columns sliced by numpy, header records interpreted once per distinct text. Writing is
:func:`write_trf`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tbstats.io.trf.buffer import decode
from tbstats.io.trf.games import BYE_ALIASES, COMPLEMENTS, RESULT_CODES_WITH_OPPONENT, RESULT_CODES_WITHOUT_OPPONENT
from tbstats.io.trf.headers import HEADER_RECORDS, parse_scoring, scoring_columns
from tbstats.io.trf.read import ERROR_SCHEMA, ReadResult, read_trf

if TYPE_CHECKING:
    from tbstats.io.trf.write import write_trf

__all__ = ["BYE_ALIASES", "COMPLEMENTS", "ERROR_SCHEMA", "HEADER_RECORDS", "RESULT_CODES_WITHOUT_OPPONENT",
           "RESULT_CODES_WITH_OPPONENT", "ReadResult", "decode", "parse_scoring", "read_trf", "scoring_columns",
           "write_trf"]


def __getattr__(name: str) -> object:
    """:func:`write_trf`, its module imported on first use: reading needs none of it (PEP 562)."""
    if name == "write_trf":
        from tbstats.io.trf.write import write_trf

        return write_trf
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
