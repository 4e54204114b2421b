"""Tournament dates as found in real TRF files (rules.md 2.5)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from functools import lru_cache

_MONTHS = {m: i for i, m in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], start=1)}
_NUMERIC = re.compile(r"^\s*(\d{1,4})\s*[./\-]\s*(\d{1,2})\s*[./\-]\s*(\d{1,4})")
_WORDY = re.compile(r"^\s*([A-Za-z]{3})[a-z]*\.?\s+(\d{1,2}),?\s+(\d{4})")
_WORDY_DMY = re.compile(r"^\s*(\d{1,2})\.?\s+([A-Za-z]{3})[a-z]*\.?\s+(\d{4})")


def _make(y: int, m: int, d: int) -> dt.date | None:
    try:
        return dt.date(y, m, d)
    except ValueError:
        return None


def date_candidates(text: str | None) -> list[dt.date]:
    """Every reading of ``text`` as a date, most likely first (rules.md 2.5).

    A 4-digit first field is Y-M-D, a 4-digit last field D-M-Y; with a 2-digit year the TRF convention
    ``YY/MM/DD`` comes first, then ``DD/MM/YY``.

    >>> date_candidates("2026/03/01"), date_candidates("28. 07. 2005")
    ([datetime.date(2026, 3, 1)], [datetime.date(2005, 7, 28)])
    >>> date_candidates("11.09.26")
    [datetime.date(2011, 9, 26), datetime.date(2026, 9, 11)]
    >>> date_candidates("May 10, 2020"), date_candidates("")
    ([datetime.date(2020, 5, 10)], [])
    """
    if not text or not text.strip():
        return []
    m = _NUMERIC.match(text)
    if m:
        a, b, c = m.groups()
        if len(a) == 4:
            out = [_make(int(a), int(b), int(c))]
        elif len(c) == 4:
            out = [_make(int(c), int(b), int(a))]
        else:
            out = [_make(2000 + int(a), int(b), int(c)), _make(2000 + int(c), int(b), int(a))]
        return list(dict.fromkeys(d for d in out if d is not None))
    m = _WORDY.match(text)
    if m and m.group(1).lower() in _MONTHS:
        d = _make(int(m.group(3)), _MONTHS[m.group(1).lower()], int(m.group(2)))
        return [d] if d else []
    m = _WORDY_DMY.match(text)
    if m and m.group(2).lower() in _MONTHS:
        d = _make(int(m.group(3)), _MONTHS[m.group(2).lower()], int(m.group(1)))
        return [d] if d else []
    return []


@lru_cache(maxsize=65536)
def readings(text: str | None) -> tuple[dt.date, ...]:
    """:func:`date_candidates` of ``text``, once per distinct text (an archive's events share their dates'
    texts, not their combinations)."""
    return tuple(date_candidates(text))


def resolve_dates(start: str | None, end: str | None, round_dates: Iterable[str]) -> tuple[
        dt.date | None, dt.date | None, str | None]:
    """Start and end dates from 042/052/132, and a warning when a reading stays ambiguous or missing.

    An ambiguous start date is settled by the end date and the first round date: the reading closest to them
    (within a year) wins; without a start date, the end date or the first round date stands for it. The round
    dates are read up to the first one that is a date, and only when the start or the end date needs them.
    """
    starts, ends = readings(start), readings(end)
    if len(starts) == 1 and len(ends) <= 1:   # nothing to choose or stand in: the round dates are not read
        return starts[0], ends[0] if ends else None, None
    first_round = next((c[0] for c in map(readings, round_dates) if c), None)
    anchors = [*ends[:1], *([first_round] if first_round else [])]

    def pick(cands: tuple[dt.date, ...]) -> tuple[dt.date | None, bool]:
        if not cands:
            return None, False
        if len(cands) == 1:
            return cands[0], False
        for anchor in anchors:
            near = [c for c in cands if abs((c - anchor).days) <= 366]
            if len(near) == 1:
                return near[0], False
        return cands[0], True

    s, s_amb = pick(starts)
    e, _ = pick(ends)
    warning = None
    if s is None:
        fallback = e or first_round
        if start and start.strip():
            warning = f"start date {start.strip()!r} is not a date we can read"
        elif fallback is None:
            warning = "no start date (042), end date (052) or round dates (132)"
        s = fallback
    elif s_amb:
        warning = f"start date {start!r} is ambiguous; read as {s.isoformat()}"
    return s, e, warning
