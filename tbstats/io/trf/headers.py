"""Per-event TRF records: names, dates, rounds, scoring, tie-break lists, kept records (rules.md 2.3, 2.4).

An event has a handful of header records, and an archive repeats the same record texts over and over
(``XXR 9``, ``162 W 1.0 ...``, ``092 Swiss system``): every interpretation is done once per distinct text
and looked up for the other events. The lines are told apart by their codes in the character buffer, with
numpy; only the values read and the few records read (scoring, round dates, 299) become Python strings (the
records kept go from the buffer to their column).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from fractions import Fraction
from functools import lru_cache
from typing import Any, Final

import numpy as np
import polars as pl
import pyarrow as pa

from tbstats.io.dates import resolve_dates
from tbstats.io.trf.buffer import Lines, text_at
from tbstats.io.trf.text import strip_spans
from tbstats.model.adjust import describe
from tbstats.model.batch import arrow_series
from tbstats.model.games import SCORING_KINDS, TOURNAMENT_SCHEMA
from tbstats.model.rules import MAX_POINTS, STANDARD_SCORING, TRF26_SCORING_CODES, XXS_CODES, scoring_scale

#: Records interpreted into tournament columns (the writer regenerates them); others are kept verbatim.
HEADER_RECORDS: Final = ("012", "022", "032", "042", "052", "062", "092", "142", "162", "192", "202", "212",
                         "XXR", "XXS")
ROUND0: Final = 91  # 0-based column of round 1's block (and of the 132 round dates)
MAX_ROUNDS: Final = 999
_RECORD: Final = re.compile(r"^[0-9A-Z]{3}( |$)")
_SKIP, _SCORING, _DATES, _HEADER, _KEPT = range(5)


def parse_scoring(records: Iterable[tuple[str, str]]) -> dict[str, Fraction]:
    """Points per kind from 162 (TRF26) and XXS (TRF(x)) records; defaults 1-½-0 (rules.md 2.3, 2.4).

    >>> s = parse_scoring([("162", "162  W 3.0    D 1.0    L 0.0")])
    >>> s["win"], s["draw"], s["pab"], s["half_bye"]
    (Fraction(3, 1), Fraction(1, 1), Fraction(3, 1), Fraction(1, 1))
    >>> s = parse_scoring([("XXS", "XXS W=3 D=1"), ("XXS", "XXS PAB=3")])
    >>> s["win"], s["forfeit_win"], s["pab"], s["half_bye"]
    (Fraction(3, 1), Fraction(3, 1), Fraction(3, 1), Fraction(1, 1))
    """
    pts = dict(STANDARD_SCORING)
    pab_set = False
    for code, text in records:
        if code == "162":
            body = text[4:]  # the code is at column 6, but '162 W 3.0' (one space) occurs
            for m in re.finditer(r"([WDLAPX])\s*(\d+(?:[.,]\d+)?)", body):
                letter, value = m.group(1), Fraction(m.group(2).replace(",", "."))
                for kind in TRF26_SCORING_CODES.get(letter, ()):
                    pts[kind] = value
                pab_set |= letter == "P"
        elif code == "XXS":
            for m in re.finditer(r"([A-Z]+)\s*=\s*(\d+(?:[.,]\d+)?)", text[3:].upper()):
                key, value = m.group(1), Fraction(m.group(2).replace(",", "."))
                if key not in XXS_CODES:
                    raise ValueError(f"unknown XXS scoring code {key!r} (expected one of "
                                     f"{', '.join(XXS_CODES)})")
                for kind in XXS_CODES[key]:
                    pts[kind] = value
                pab_set |= key == "PAB"
    if not pab_set:
        pts["pab"] = pts["win"]
    return pts


def scoring_columns(points: dict[str, Fraction]) -> dict[str, int]:
    """Scale and ``pts_<kind>`` integer columns for a scoring system."""
    scale = scoring_scale(points)
    return {"scale": scale, **{f"pts_{k}": int(points[k] * scale) for k in SCORING_KINDS}}


@lru_cache(maxsize=4096)
def _scoring(records: tuple[tuple[str, str], ...]) -> tuple[dict[str, int], str | None]:
    """Scoring columns of one distinct list of scoring records, and the warning if it is not understood."""
    try:
        return scoring_columns(parse_scoring(records)), None
    except ValueError as exc:
        return scoring_columns(dict(STANDARD_SCORING)), str(exc)


@lru_cache(maxsize=65536)
def _kind(text: str) -> tuple[int, str]:
    """What a header line is (skip, scoring, round dates, header record, kept record) and its code."""
    code = text[:3].upper()
    if code in ("162", "XXS"):
        return _SCORING, code
    if code == "132":
        return _DATES, code
    if code in HEADER_RECORDS:
        return _HEADER, code
    is_record = bool(_RECORD.match(text[:4] if len(text) > 3 else text + " "))
    # a column ruler ('1234567890...') is skipped, not a record whose first fields are blank ('299      1.5')
    if code == "###" or text.startswith(("DDD SSSS", "         1 ")) or (text[:10].strip().isdigit()
                                                                         and not is_record):
        return _SKIP, code
    if is_record:
        return _KEPT, code
    return _SKIP, code


def round_date_texts(text: str) -> Iterator[str]:
    """The round dates of a 132 record as written (eight characters each, one a round block's width apart),
    made as they are read (:func:`tbstats.io.dates.resolve_dates` reads them up to the first date)."""
    return (text[k:k + 8] for k in range(ROUND0, len(text), 10))


@lru_cache(maxsize=65536)
def to_int(text: str | None) -> int | None:
    if not text:
        return None
    m = re.match(r"\s*(\d+)", text)
    return int(m.group(1)) if m else None


@lru_cache(maxsize=65536)
def _tb_list(text: str | None) -> list[str]:  # (shared between events: never modified)
    return [t.strip() for t in (text or "").split(",") if t.strip()]


@lru_cache(maxsize=65536)
def _declared_type(code: str | None, text: str | None) -> str | None:
    """Event type from 192 or 092 (rules.md 2.3); None when the pairing structure must decide."""
    for value in (code, text):
        v = (value or "").upper().replace(" ", "").replace("-", "").replace("_", "")
        if "TEAM" in v:
            return "team"
        if "ROUNDROBIN" in v or "BERGER" in v or "RUNDENTURNIER" in v or "SCHEVENINGEN" in v:
            return "round_robin"
        if "SWISS" in v or "DUTCH" in v or "SCHWEIZER" in v:
            return "swiss"
    return None


#: What a line is, by its first four characters, for the records whose code alone decides (see :func:`_kind`).
_BY_CODE: Final = {f"{code}{end}": ((_SCORING if code in ("162", "XXS") else _DATES if code == "132" else _HEADER),
                                    code) for code in (*HEADER_RECORDS, "132") for end in (" ", "")}

_RANGED: Final = ("XXR", "142", "062")


@lru_cache(maxsize=65536)
def _range_reasons(values: tuple[str | None, ...], scoring: tuple[str, ...]) -> list[tuple[int, str]]:
    """Reasons by record index (``_RANGED`` then the scoring records), once per distinct record text."""
    out = []
    for i, (code, limit, what) in enumerate((("XXR", MAX_ROUNDS, "rounds"), ("142", MAX_ROUNDS, "rounds"),
                                             ("062", 9999, "players (starting ranks have 4 digits)"))):
        m = re.match(r"\s*(\d+)", values[i] or "")
        if m and (len(m.group(1).lstrip("0")) > len(str(limit)) or int(m.group(1)) > limit):
            shown = m.group(1) if len(m.group(1)) <= 20 else f"{m.group(1)[:20]}... ({len(m.group(1))} digits)"
            out.append((i, f"{code} {shown}: at most {limit} {what}"))
    for j, text in enumerate(scoring):
        for m in re.finditer(r"(\d+)(?:[.,](\d+))?", text[4:]):
            whole, decimals = m.group(1).lstrip("0"), m.group(2) or ""
            if len(whole) > 3 or (whole and int(whole) > MAX_POINTS) or len(decimals.rstrip("0")) > 3:
                shown = m.group(0) if len(m.group(0)) <= 20 else f"{m.group(0)[:20]}..."
                out.append((len(_RANGED) + j, f"scoring value {shown} out of range (at most {MAX_POINTS} points "
                                              "per game, with at most 3 decimals)"))
                break
    return out


@lru_cache(maxsize=4096)
def _list_problem(code: str, text: str, team: bool) -> str | None:
    """Why a 202/212 tie-break list cannot be read, or None: a team event's list with the team registry
    (``MPvGP``, ``EDET/P``, ``BH:MP/C1``), an individual event's with the individual one."""
    from tbstats.engine.teams.tiebreaks import parse_team_specs
    from tbstats.engine.tiebreaks import parse_specs
    from tbstats.errors import TbstatsError

    items = [t for t in _tb_list(text) if not (code == "212" and t.upper() == "PTS")]
    try:
        (parse_team_specs if team else parse_specs)(items)
    except TbstatsError as exc:
        return f"{code} list not understood: {exc}"
    return None


#: Records whose values are interpreted (once per distinct combination, with the event's round and player counts);
#: the dates (042, 052 and the round dates) apart, each event's own in a real archive.
_INTERPRETED: Final = ("XXR", "142", "062", "202", "212", "192", "092")
_COLUMNS: Final = ("rounds", "declared_players", "scale", *(f"pts_{k}" for k in SCORING_KINDS), "tiebreaks",
                   "standings_tiebreaks", "_declared_type")
_Note = tuple[str | None, str, str]


@lru_cache(maxsize=65536)
def _interpret(key: tuple[Any, ...]) -> tuple[tuple[Any, ...], list[_Note], list[_Note],
                                               list[tuple[str | int, str, str]]]:
    """Column values, warnings (record, field, message) to come before the dates' and after them, and errors
    (record or scoring index, column, reason) of one distinct combination of interpreted records."""
    v_xxr, v142, v062, v202, v212, v192, v092, scoring, longest, players, team = key
    before: list[_Note] = []
    notes: list[_Note] = []
    found = _range_reasons((v_xxr, v142, v062), tuple(t for _, t in scoring))
    problems: list[tuple[str | int, str, str]] = [
        (_RANGED[i], _RANGED[i], reason) if i < len(_RANGED) else (i - len(_RANGED), scoring[i - len(_RANGED)][0],
                                                                   reason) for i, reason in found]
    points, bad_scoring = _scoring(scoring) if not problems else (scoring_columns(dict(STANDARD_SCORING)), None)
    if bad_scoring:
        before.append((None, "scoring", bad_scoring))
    xxr, r142 = (to_int(v_xxr), to_int(v142)) if not problems else (None, None)
    planned = xxr or r142 or longest
    if (xxr or r142) and planned < longest:   # (an event's rounds hold every round present: the model's checks)
        code = "XXR" if xxr else "142"
        notes.append((code, code, f"{code} {planned} but {longest} rounds present: read as {longest} rounds"))
        planned = longest
    n_declared = to_int((v062 or "").split(" ")[0]) if not problems else None
    if n_declared is not None and n_declared != players:
        notes.append(("062", "062", f"062 says {n_declared} players, {players} found"))
    for code, text in (("202", v202), ("212", v212)):
        problem = _list_problem(code, text, team) if text else None
        if problem:
            notes.append((code, code, problem))
    # (an event without a type that has team records is a team event: it is not left to the pairings)
    values = (max(planned, 0), n_declared, *points.values(), _tb_list(v202), _tb_list(v212),
              _declared_type(v192 or None, v092 or None) or ("team" if team else None))
    return values, before, notes, problems


def _event_dates(v042: str | None, v052: str | None, round_text: str | None) -> tuple[
        dt.date | None, dt.date | None, _Note | None]:
    """An event's start and end dates from its 042, 052 and 132 records, and the warning they call for (not
    cached: in a real archive each event's dates are its own; each date text's readings are)."""
    start, end, warning = resolve_dates(v042, v052, round_date_texts(round_text) if round_text else ())
    # (what --rules auto then does with an event without a start date: tbstats.run.checks)
    return start, end, ("042", "042 start date", warning) if warning else None


def tournament_headers(sources: Sequence[str], source_files: Sequence[str], heads: Lines, event_of_line: np.ndarray,
                       longest: np.ndarray, players: np.ndarray) -> tuple[pl.DataFrame, list[dict[str, object]],
                                                                          list[dict[str, object]]]:
    """One row per event from its header lines (``heads``, in file order; ``event_of_line`` the event of each),
    its warnings and its errors.

    ``longest`` is the number of round blocks of each event, ``players`` its number of player lines.
    """
    n = len(sources)
    ids, others, texts = _line_ids(heads)
    values, written, first_line = _first_values(n, heads, event_of_line, ids)
    scoring: list[list[tuple[str, str, int]]] = [[] for _ in range(n)]
    round_texts: list[str | None] = [None] * n   # (each event's last 132 record)
    adjustments: list[tuple[int, int, str]] = []
    for text, ev, line, kind in zip(texts, event_of_line[others].tolist(), heads.line[others].tolist(),
                                    ids[others].tolist(), strict=True):
        if kind == _KEPT_ID:   # (299 records, the only ones kept that are also read)
            adjustments.append((ev, line, text))
        elif kind == _SCORING_ID:
            scoring[ev].append((_kind(text)[1], text, line))
        else:
            round_texts[ev] = text
    team_record = np.zeros(n, dtype=bool)   # a team event has team records (310, or 013 in older files) ...
    team_record[event_of_line[(ids == _KEPT_ID) & (heads.code_is("310") | heads.code_is("013"))]] = True
    # ... or its 192/092 type says so
    team = [t or _declared_type(v192 or None, v092 or None) == "team"
            for t, v192, v092 in zip(team_record.tolist(), values["192"], values["092"], strict=True)]
    keys = zip(*(values[code] for code in _INTERPRETED),
               [tuple((c, t) for c, t, _ in found) if found else () for found in scoring], longest.tolist(),
               players.tolist(), team, strict=True)
    interpreted = list(map(_interpret, keys))   # (values, warnings, errors) of each event
    dates = list(map(_event_dates, values["042"], values["052"], round_texts))
    warns: list[dict[str, object]] = []
    errors: list[dict[str, object]] = []
    for ev in [ev for ev, ((_, before, after, problems), (_, _, note)) in enumerate(zip(interpreted, dates,
                                                                                        strict=True))
               if before or after or problems or note]:
        _, before, after, problems = interpreted[ev]
        note = dates[ev][2]
        for record, name, message in [*before, *([note] if note else []), *after]:
            warns.append({"source": sources[ev], "line": first_line(ev, record) if record is not None else None,
                          "field": name, "message": message})
        for where, column, reason in problems:
            line = first_line(ev, where) if isinstance(where, str) else scoring[ev][where][2]
            errors.append({"path": source_files[ev], "line": line, "column": column, "reason": reason})

    cols = dict(zip(_COLUMNS, map(list, zip(*(v for v, _, _, _ in interpreted), strict=True)), strict=True)) \
        if interpreted else {k: [] for k in _COLUMNS}
    cols["start_date"], cols["end_date"] = ([d[0] for d in dates], [d[1] for d in dates])
    cols["date_text"] = [v or None for v in values["042"]]
    for ev, line, text in adjustments:       # 299: say what is applied, at its line (rules.md 9.1)
        warns.append({"source": sources[ev], "line": line, "field": "299", "message": describe(text, team[ev])})

    def field(code: str) -> list[str | None]:
        return [v or None for v in values[code]]

    schema: dict[str, pl.DataType] = {"event": pl.Int64(), "source_file": pl.String(), **{
        k: v for k, v in TOURNAMENT_SCHEMA.items() if k not in ("tournament", "rounds_played", "event_type")},
        "_declared_type": pl.String()}
    data: dict[str, Any] = {
        "event": np.arange(n, dtype=np.int64), "source_file": list(source_files), "source": list(sources),
        "type_text": field("092"), "type_code": field("192"), **cols}
    lists = {"tiebreaks", "standings_tiebreaks"}
    frame = pl.DataFrame({k: _records(heads, event_of_line, ids, n) if k == "records" else written[k] if k in written
                          else string_lists(k, data[k]) if k in lists else pl.Series(k, data[k], dtype=schema[k])
                          for k in schema})
    return frame, warns, errors


#: Line ids (:func:`_line_ids`): a header record's index in ``HEADER_RECORDS``, then these.
_SCORING_ID, _DATES_ID, _KEPT_ID, _SKIP_ID = range(len(HEADER_RECORDS), len(HEADER_RECORDS) + 4)
_ID_OF_KIND: Final = {_SCORING: _SCORING_ID, _DATES: _DATES_ID, _KEPT: _KEPT_ID, _SKIP: _SKIP_ID}


def _id_of(kind: int, code: str) -> int:
    return HEADER_RECORDS.index(code) if kind == _HEADER else _ID_OF_KIND[kind]


#: The record codes whose lines :func:`_line_ids` tells by their first three characters (upper-cased ASCII).
_BY_KEY: Final = {(ord(c[0]) << 16) | (ord(c[1]) << 8) | ord(c[2]): _id_of(*kind) for c, kind in _BY_CODE.items()
                  if len(c) == 3}
_KEYS: Final = np.array(sorted(_BY_KEY), dtype=np.int64)
_KEY_IDS: Final = np.array([_BY_KEY[k] for k in sorted(_BY_KEY)], dtype=np.int16)
_RULER: Final = (ord("D") << 16) | (ord("D") << 8) | ord("D")
#: What Python's ``str.strip()`` strips (``str.isspace``): header values read as they always were, as the
#: stripped Python text of a line from its fifth character (tests/test_trf_reader.py checks the set).
PY_WHITESPACE: Final = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
                        "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
#: Whether each code below 65,536 is one of :data:`PY_WHITESPACE`, as the compiled loops take it.
IS_PY_WHITESPACE: Final = np.zeros(65536, dtype=np.uint8)
IS_PY_WHITESPACE[[ord(c) for c in PY_WHITESPACE]] = 1


def _line_ids(heads: Lines) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """What each header line is, as :func:`_kind` says (a header record's index in ``HEADER_RECORDS``, or
    :data:`_SCORING_ID`...): by its first three characters upper-cased where they are ASCII and a known code,
    else, for a record kept (three capitals or digits, then a blank or the line's end), by them as they are,
    else (few lines) by its text. Also the lines read as text (scoring, round dates, 299 records), and their
    texts."""
    n = len(heads.start)
    key, ascii_code, record = np.zeros(n, dtype=np.int64), heads.length >= 3, heads.length >= 3
    last = len(heads.buf) - 1
    for j in range(3):
        c = heads.buf[np.minimum(heads.start + j, last)].astype(np.int64)
        ascii_code &= c < 128
        record &= ((c >= 48) & (c <= 57)) | ((c >= 65) & (c <= 90))   # (as _RECORD matches: no case change)
        c -= 32 * ((c >= 97) & (c <= 122))   # (ASCII upper case, as str.upper() makes it)
        key = (key << 8) | c
    at = np.minimum(np.searchsorted(_KEYS, key), len(_KEYS) - 1)
    ids = np.where(ascii_code & (_KEYS[at] == key), _KEY_IDS[at], -1).astype(np.int16)
    record &= (heads.length == 3) | (heads.buf[np.minimum(heads.start + 3, last)] == ord(" "))
    ids[record & (ids < 0) & (key != _RULER)] = _KEPT_ID   # ('DDD SSSS...' rulers: by their text)
    unknown = np.flatnonzero(ids < 0)
    if unknown.size:   # (few: codes in lower case or beyond ASCII, rulers, lines that are no record)
        for k, text in zip(unknown.tolist(), heads.subset(unknown).texts(), strict=True):
            ids[k] = _id_of(*_kind(text))
    rows = np.flatnonzero((ids == _SCORING_ID) | (ids == _DATES_ID) | ((ids == _KEPT_ID) & heads.code_is("299")))
    return ids, rows, heads.subset(rows).texts()


def _records(heads: Lines, event_of_line: np.ndarray, ids: np.ndarray, n: int) -> pl.Series:
    """Each event's records kept (round dates among them) as they are written, in file order: a List(String)
    column made from the character buffer (the lines come event by event)."""
    rows = np.flatnonzero((ids == _KEPT_ID) | (ids == _DATES_ID))
    texts = text_at(heads.buf, heads.start[rows], heads.length[rows], "records")
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(event_of_line[rows], minlength=n), out=offsets[1:])
    return arrow_series("records", pa.LargeListArray.from_arrays(pa.array(offsets), texts.to_arrow()))


#: Header records whose values go to their columns as written, never read: made from the buffer.
_AS_WRITTEN: Final = {"012": "name", "022": "city", "032": "federation"}


def _first_values(n: int, heads: Lines, event_of_line: np.ndarray, ids: np.ndarray) -> tuple[
        dict[str, list[str | None]], dict[str, pl.Series], Callable[[int, str], int | None]]:
    """Each header record's first value in each event (its text from column 5, stripped; None where the event
    has none), by code, as Python strings for the records read and as columns (blank: null) for those of
    :data:`_AS_WRITTEN`; and the line of an event's first record of a code (for messages)."""
    k = len(HEADER_RECORDS)
    rows = np.flatnonzero(ids < k)
    slots, first = np.unique(event_of_line[rows].astype(np.int64) * k + ids[rows], return_index=True)
    firsts = rows[first]   # (the first line of each event and code: the lines come in file order)
    at, counts = heads.start[firsts] + 4, np.maximum(heads.length[firsts] - 4, 0)
    strip_spans(heads.buf, at, counts, IS_PY_WHITESPACE)   # (compiled: as str.strip of PY_WHITESPACE)
    text = text_at(heads.buf, at, counts, "value")
    code, event = slots % k, slots // k
    filled = (text != "").to_numpy()
    columns = {}
    for record, name in _AS_WRITTEN.items():
        mine = (code == HEADER_RECORDS.index(record)) & filled
        columns[name] = pl.Series(name, [None] * n, dtype=pl.String).scatter(event[mine], text.filter(mine))
    read = ~np.isin(code, [HEADER_RECORDS.index(r) for r in _AS_WRITTEN])
    table = np.full((k, n), None, dtype=object)
    table.reshape(-1)[(code * n + event)[read]] = text.filter(read).to_list()
    values = {c: table[j].tolist() for j, c in enumerate(HEADER_RECORDS) if c not in _AS_WRITTEN}
    line_of = heads.line[firsts]

    def first_line(event_no: int, record: str) -> int | None:
        if record not in HEADER_RECORDS:
            return None
        slot = event_no * k + HEADER_RECORDS.index(record)
        at = int(np.searchsorted(slots, slot))
        return int(line_of[at]) if at < len(slots) and slots[at] == slot else None

    return values, columns, first_line


def string_lists(name: str, values: list[list[str]]) -> pl.Series:
    """A ``List(String)`` column from Python lists, built through one flat Arrow array."""
    offsets = np.zeros(len(values) + 1, dtype=np.int32)
    np.cumsum([len(v) for v in values], out=offsets[1:])
    flat = pa.array([x for v in values for x in v], type=pa.large_string())
    arr = pa.LargeListArray.from_arrays(pa.array(offsets.astype(np.int64)), flat)
    return arrow_series(name, arr)
