"""Round blocks of '001' lines into the long games table, with the pairing checks (rules.md 2.1, 2.2).

Every player line gets one block per round of its event (missing blocks read as blank); opponent, colour
and result are read from the buffer by a compiled loop (:func:`tbstats.io.trf.fields.round_blocks`, with the
lookup tables here), and checked against the opponent's own block (found through a table of each event's
starting ranks, or sorted int64 keys) by a second compiled loop (:func:`tbstats.io.trf.pairs.pair_blocks`), which
also gives each block's game type and points. Messages are formatted for the failing rows only, from their
blocks' characters.
"""

from __future__ import annotations

from functools import cache
from typing import Final

import numpy as np
import polars as pl

from tbstats.io.trf.buffer import IS_WHITESPACE, WHITESPACE, Lines, int_column, is_whitespace, texts_of, windows
from tbstats.io.trf.fields import round_blocks
from tbstats.io.trf.headers import ROUND0
from tbstats.io.trf.pairs import pair_blocks
from tbstats.io.trf.players import Players, no_problems, problem_rows
from tbstats.model.games import GAME_SCHEMA, GAME_TYPE, SCORING_KINDS

RESULT_CODES_WITH_OPPONENT: Final = "10=WDL+-"
RESULT_CODES_WITHOUT_OPPONENT: Final = "UFHZ+-"
#: Game results written against no opponent (Krause-style files): read as the matching bye, with a warning.
BYE_ALIASES: Final = {"1": "F", "=": "H", "0": "Z"}
#: Complementary result pairs (rules.md 2.2); a pending pair is blank on both sides.
COMPLEMENTS: Final = {("1", "0"), ("0", "1"), ("=", "="), ("W", "L"), ("L", "W"), ("D", "D"),
                      ("+", "-"), ("-", "+"), ("-", "-"), ("", "")}
#: Result codes by id; id 0 is blank, the last id any other character.
RESULTS: Final = ("", "1", "0", "=", "W", "D", "L", "+", "-", "U", "F", "H", "Z", "X", "?")
_OTHER: Final = len(RESULTS)
_RES = {c: i for i, c in enumerate(RESULTS)}
_RESULT_ID = np.full(65536, _OTHER, dtype=np.int8)
for _c, _i in _RES.items():
    if _c:
        _RESULT_ID[ord(_c)] = _RESULT_ID[ord(_c.lower())] = _i
COLOURS: Final = (" ", "w", "b", "-")  # colour ids; 4 = any other character
_COLOUR_ID = np.full(65536, 4, dtype=np.int8)
for _i, _c in enumerate(COLOURS):
    _COLOUR_ID[ord(_c)] = _COLOUR_ID[ord(_c.upper())] = _i


@cache
def _result_set(codes: tuple[str, ...]) -> np.ndarray:
    table = np.zeros(_OTHER + 1, dtype=bool)
    table[[_RES[c] for c in codes]] = True
    return table


def _in(ids: np.ndarray, codes: tuple[str, ...]) -> np.ndarray:
    """Whether each result id is one of ``codes``."""
    return _result_set(codes)[ids]


_PAIR_OK = np.zeros((_OTHER + 1, _OTHER + 1), dtype=bool)
for _a, _b in COMPLEMENTS:
    _PAIR_OK[_RES[_a], _RES[_b]] = True
for _a, _b in (("X", ""), ("", "X"), ("?", ""), ("", "?"), ("X", "X"), ("?", "?")):
    _PAIR_OK[_RES[_a], _RES[_b]] = True


_KIND: Final = {k: i for i, k in enumerate(SCORING_KINDS)}
#: Scoring kind of each game type (-1: no points, a pending game), and of each result of a played game.
_KIND_OF_TYPE = np.full(len(GAME_TYPE), -1, dtype=np.int64)
for _t, _k in (("forfeit_win", "forfeit_win"), ("forfeit_loss", "forfeit_loss"), ("double_forfeit", "forfeit_loss"),
               ("pab", "pab"), ("full_bye", "full_bye"), ("half_bye", "half_bye"), ("zero_bye", "zero_bye"),
               ("absent", "zero_bye")):
    _KIND_OF_TYPE[GAME_TYPE[_t]] = _KIND[_k]
_KIND_OF_RESULT = np.full(_OTHER + 1, _KIND["loss"], dtype=np.int64)
for _c, _k in (("1", "win"), ("W", "win"), ("=", "draw"), ("D", "draw")):
    _KIND_OF_RESULT[_RES[_c]] = _KIND[_k]


def _classify(has_opp: np.ndarray, res: np.ndarray, ores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Game type and scoring kind of blocks by opponent or none, result id and the opponent's result id."""
    gt = np.full(len(res), GAME_TYPE["absent"], dtype=np.int8)
    for cond, game_type in (
            (~has_opp & _in(res, ("Z", "-")), "zero_bye"), (~has_opp & (res == _RES["H"]), "half_bye"),
            (~has_opp & _in(res, ("F", "+")), "full_bye"), (~has_opp & (res == _RES["U"]), "pab"),
            (has_opp, "pending"), (has_opp & (res == _RES["-"]), "forfeit_loss"),
            (has_opp & (res == _RES["-"]) & (ores == _RES["-"]), "double_forfeit"),
            (has_opp & (res == _RES["+"]), "forfeit_win"),
            (has_opp & _in(res, ("1", "0", "=", "W", "D", "L")), "played")):
        gt[cond] = GAME_TYPE[game_type]
    kind = np.where(gt == GAME_TYPE["played"], _KIND_OF_RESULT[res], _KIND_OF_TYPE[gt])
    return gt, kind


#: Result id of a block without opponent: game results (Krause-style) read as the matching bye.
_BYE_OF = np.arange(_OTHER + 1, dtype=np.int8)
for _c, _bye in BYE_ALIASES.items():
    _BYE_OF[_RES[_c]] = _RES[_bye]
#: Game type and scoring kind (the number of kinds where no points: a pending game) by (has an opponent, result
#: id, opponent's result id), as one flat index.
_GAME_TYPE_OF, _KIND_OF = _classify(*(a.reshape(-1) for a in np.meshgrid(
    np.array([False, True]), np.arange(_OTHER + 1, dtype=np.int8), np.arange(_OTHER + 1, dtype=np.int8),
    indexing="ij")))
_KIND_OF[_KIND_OF < 0] = len(SCORING_KINDS)
_KIND_OF = _KIND_OF.astype(np.int8)
#: The tables of :func:`tbstats.io.trf.pairs.pair_blocks` by result id: results that complement each other (flat),
#: the codes allowed with and without an opponent, no result yet, game results read as a bye and that bye, and
#: the game type and scoring kind by (has an opponent, result, opponent's result).
_PAIR_TABLES: Final = tuple(np.ascontiguousarray(t).view(np.uint8) if t.dtype == np.bool_ else t for t in (
    _PAIR_OK.reshape(-1), _result_set((*RESULT_CODES_WITH_OPPONENT, "", "X", "?")),
    _result_set((*RESULT_CODES_WITHOUT_OPPONENT, *BYE_ALIASES, "")), _result_set(("", "X", "?")),
    _result_set(tuple(BYE_ALIASES)), _BYE_OF, _GAME_TYPE_OF, _KIND_OF))


def _bytes(mask: np.ndarray) -> np.ndarray:
    """A bool array as the compiled loops take it (its bytes, contiguous)."""
    return np.ascontiguousarray(mask).view(np.uint8)


def row_key(event: np.ndarray, start_no: np.ndarray, rnd: np.ndarray) -> np.ndarray:
    """One int64 per (event, start number, round): event < 2^29, start number < 2^20, round < 2^14."""
    return (event.astype(np.int64) << 34) | (start_no.astype(np.int64) << 14) | rnd.astype(np.int64)


def lookup(keys: np.ndarray, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row of each query key in ``keys`` (any order) and whether it was found (first match)."""
    order = np.argsort(keys, kind="stable")
    pos = np.searchsorted(keys[order], queries).clip(0, max(len(keys) - 1, 0))
    found = keys[order][pos] == queries if len(keys) else np.zeros(len(queries), dtype=bool)
    return order[pos] if len(keys) else pos, found


def event_rounds(p: Players, n_events: int) -> np.ndarray:
    """Round blocks of each event: as many as its longest player line holds (rules.md 2.2)."""
    per_line = np.clip((p.lines.length - ROUND0 + 9) // 10, 0, None)
    rounds_ev = np.zeros(n_events, dtype=np.int64)
    np.maximum.at(rounds_ev, p.event, per_line)
    return rounds_ev


def _opponent_blocks(p: Players, n_blocks: np.ndarray, r0: np.ndarray, event: np.ndarray, me: np.ndarray,
                     opp: np.ndarray, rnd: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each block: the opponent's block in the same round, whether found, and whether the opponent exists.

    Only a line whose starting rank is a number from 1 is an opponent (a line with a bad one is a problem the
    reader reports; its own blocks are still read). When the events' starting ranks are not too sparse, a table
    per event maps a starting rank to its first line; else sorted int64 keys do. Both take the first line of a
    duplicated rank.
    """
    n = len(p.event)
    valid = p.start_ok & (p.start_no > 0)   # (at most 9999: four columns)
    top = np.zeros(int(p.event.max()) + 1 if n else 0, dtype=np.int64)
    np.maximum.at(top, p.event[valid], p.start_no[valid])
    if n and int(top.sum()) <= 8 * n + 10_000:
        # each event's slots: 0 (no opponent), its ranks 1..top, then top + 1 for any higher rank
        offset = np.concatenate([[0], np.cumsum(top + 2)[:-1]])
        table = np.full(int((top + 2).sum()), -1, dtype=np.int64)  # the first block of each rank's line
        first = valid.copy()   # lines are sorted by event and starting rank (bad ones, all below 1, first)
        first[1:] &= (p.event[1:] != p.event[:-1]) | (p.start_no[1:] != p.start_no[:-1])
        block_start = np.concatenate([[0], np.cumsum(n_blocks)[:-1]])
        table[(offset[p.event] + p.start_no)[first]] = block_start[first]
        # per line, then repeated over its blocks (a repeat is much cheaper than a gather per block)
        slot = np.repeat(offset[p.event], n_blocks)
        slot += np.minimum(opp, np.repeat((top + 1).astype(np.int16)[p.event], n_blocks))  # (ranks < 10,000)
        start = np.take(table, slot)
        exists = start >= 0
        row = start + r0
        if not exists.all():
            row[~exists] = 0
        return row, exists.copy(), exists
    row, found = lookup(row_key(event, me, rnd), row_key(event, opp, rnd))
    found &= opp > 0
    known = (p.event.astype(np.int64) << 20) | np.where(p.start_ok, p.start_no, 0)
    _, exists = lookup(known, (event.astype(np.int64) << 20) | opp)
    return row, found, exists & (opp > 0)


def _read_blocks(lines: Lines, n_blocks: np.ndarray, total: int) -> tuple[np.ndarray, ...]:
    """Per round block (:func:`tbstats.io.trf.fields.round_blocks`): the opponent field as a number and whether
    it is one, whether it is blank, the colour id, the result id (0: blank), and whether a character stands
    where the block has a blank."""
    opp, opp_ok, opp_blank = np.empty(total, dtype=np.int32), np.empty(total, dtype=bool), np.empty(total, dtype=bool)
    colour, res, stray = np.empty(total, dtype=np.int8), np.empty(total, dtype=np.int8), np.empty(total, dtype=bool)
    round_blocks(lines.buf, lines.start, lines.length, n_blocks.astype(np.int64, copy=False), ROUND0,
                 IS_WHITESPACE.view(np.uint8), _COLOUR_ID, _RESULT_ID, opp, opp_ok.view(np.uint8),
                 opp_blank.view(np.uint8), colour, res, stray.view(np.uint8))
    return opp, opp_ok, opp_blank, colour, res, stray


def games(p: Players, rounds_ev: np.ndarray, points: np.ndarray) -> tuple[
        dict[str, np.ndarray], pl.DataFrame, pl.DataFrame]:
    """The games of every player line (sorted by event, player, round), problems and warnings.

    ``rounds_ev`` is :func:`event_rounds`; ``points`` an events x scoring kinds table of units.
    """
    lines = p.lines
    length = lines.length
    # compact dtypes per block: lines and events < 2^31, rounds <= 999, columns and lengths <= 10,081
    n_blocks = rounds_ev[p.event]
    li = np.repeat(np.arange(len(length), dtype=np.int32), n_blocks)
    r0 = (np.arange(len(li), dtype=np.int32) - np.repeat((np.cumsum(n_blocks) - n_blocks).astype(np.int32),
                                                          n_blocks)).astype(np.int16)
    rnd = r0 + np.int16(1)
    at = np.int16(ROUND0) + np.int16(10) * r0
    blen = np.repeat(length.astype(np.int16), n_blocks)  # (per line values repeated: no gather per block)
    buf = lines.buf

    opp_val, opp_ok, opp_blank, colour, res, stray = _read_blocks(lines, n_blocks, len(li))

    def block_windows(rows: np.ndarray) -> np.ndarray:
        """The characters of a few blocks (a column each), for messages."""
        return windows(buf, lines.start[li[rows]] + at[rows], 10, (blen[rows] - at[rows]).astype(np.int64))

    event = np.repeat(p.event.astype(np.int32), n_blocks)
    me_ok = np.repeat(p.start_ok, n_blocks)
    me = np.repeat(np.where(p.start_ok, p.start_no, 0).astype(np.int16), n_blocks)  # (4 columns: -999..9999)
    has_opp = opp_ok & (opp_val > 0)
    opp = np.where(has_opp, opp_val, 0).astype(np.int16)
    row, found, exists = _opponent_blocks(p, n_blocks, r0, event, me, opp, rnd)

    def frame(rows: np.ndarray) -> pl.DataFrame:
        """The columns messages need, for a few blocks (listed round by round, as the lines come)."""
        rows = rows[np.lexsort((p.order[li[rows]], rnd[rows]))]
        block, their = block_windows(rows), block_windows(row[rows])
        back_ok = found[rows] & has_opp[row[rows]]
        return pl.DataFrame({
            "file": lines.file[li[rows]], "line": lines.line[li[rows]],
            "start_no": pl.Series(me[rows], dtype=pl.Int32).scatter(np.flatnonzero(~me_ok[rows]), None),
            "round": rnd[rows], "opponent": pl.Series(opp[rows], dtype=pl.Int32).scatter(
                np.flatnonzero(~has_opp[rows]), None),
            "_opp": texts_of(block[:4], np.arange(len(rows))), "_col": [chr(c) for c in block[5].tolist()],
            "_res": [chr(c).upper().strip(WHITESPACE) for c in block[7].tolist()],
            "_ores": [chr(c).upper().strip(WHITESPACE) if f else None for c, f in zip(
                their[7].tolist(), found[rows].tolist(), strict=True)],
            "_back": pl.Series(opp[row[rows]], dtype=pl.Int32).scatter(np.flatnonzero(~back_ok), None),
            "_len": blen[rows], "_at": at[rows], "_colour": [chr(c).lower() for c in block[5].tolist()],
            "_block": ["".join(map(chr, b)).rstrip() for b in block[:8].T.tolist()],
            "_gap": gap_col[rows] if gap_col is not None else np.zeros(len(rows), dtype=np.int64),
        })

    # a block out of line (shifted by a column): a character where the block has a blank (cols 5, 7, 9, 10)
    first_stray = stray.copy()
    gap_col: np.ndarray | None = None   # (made only when some block is out of line: a column per block)
    if stray.any():
        gap_col = np.zeros(len(rnd), dtype=np.int64)
        rows = np.flatnonzero(stray)
        earlier = np.zeros(len(rnd), dtype=bool)
        earlier[rows[1:]] = li[rows[1:]] == li[rows[:-1]]
        first_stray &= ~earlier
        ws = is_whitespace(block_windows(rows))
        for off in (9, 8, 6, 4):
            here = rows[~ws[off]]
            gap_col[here] = at[here] + off + 1

    # every check, the game type and the points in one compiled pass (tbstats.io.trf.pairs)
    n, n_kinds = len(li), len(SCORING_KINDS)  # kind n_kinds (no points) reads a zero column past the kinds
    # (at most 100 points x scale 1000: int32)
    with_zero = np.concatenate([points, np.zeros((len(points), 1), dtype=points.dtype)], axis=1).astype(np.int32)
    problems, notes, pending = np.empty(n, dtype=np.uint16), np.empty(n, dtype=np.uint8), np.empty(n, dtype=bool)
    result, game_type, pts = np.empty(n, dtype=np.int8), np.empty(n, dtype=np.int8), np.empty(n, dtype=np.int32)
    pair_blocks(row, _bytes(found), _bytes(exists), opp, _bytes(has_opp), _bytes(opp_ok), _bytes(opp_blank),
                colour, res, _bytes(first_stray), me, _bytes(me_ok), blen, at, event, *_PAIR_TABLES,
                with_zero.reshape(-1), n_kinds, problems, notes, pending.view(np.uint8), result, game_type, pts)
    errors = _problems(problems, _CHECKS, frame)
    warnings = _problems(notes, _NOTES, frame)
    out = {"pending": pending, "line": li,
           "event": event, "player": me, "player_ok": me_ok, "round": rnd, "opponent": opp,
           "has_opp": has_opp, "colour": colour, "result": result, "game_type": game_type, "points": pts}
    return out, errors, warnings


def _problems(bits: np.ndarray, messages: tuple[tuple[pl.Expr, pl.Expr], ...], frame: object) -> pl.DataFrame:
    """One problem row (file, line, column, reason) per failed check: bit ``k`` of ``bits`` is set on the
    blocks failing check ``k`` (``messages[k]``)."""
    failing = np.flatnonzero(bits)
    out = []
    if failing.size:
        which = bits[failing]
        for k, (column, reason) in enumerate(messages):
            rows = failing[(which >> k) & 1 == 1]
            if rows.size:
                out.append(problem_rows(frame(rows), column, reason))  # type: ignore[operator]
    return pl.concat(out) if out else no_problems()


def _round(what: str) -> pl.Expr:
    return pl.format(f"round {{}}{what}", pl.col("round"))


#: Place and reason of each pairing check of :func:`games` (expressions over its frame of failing blocks),
#: built once: the data decides only which rows fail.
_CHECKS: Final = (
    (_round(" opponent"),
     pl.format("'{}' is not a starting rank (expected digits, or 0000 for no opponent)", pl.col("_opp"))),
    (_round(" colour"), pl.format("'{}' is not a TRF colour code (expected w, b or -)", pl.col("_col"))),
    (_round(""),
     pl.format("round {} block '{}' is out of line: column {} should be blank (a block is 'NNNN c r' at "
               "columns {}-{}; shifted by a column?)", pl.col("round"), pl.col("_block"), pl.col("_gap"),
               pl.col("_at") + 1, pl.col("_at") + 8)),
    (_round(""),
     pl.format("line ends at column {} inside the round block (expected opponent, colour and "
               "result up to column {})", pl.col("_len"), pl.col("_at") + 8)),
    (_round(" result"),
     pl.format("'{}' is not a TRF result code for a game (expected one of 1 0 = W D L + -)", pl.col("_res"))),
    (_round(" result"),
     pl.format("'{}' is not a TRF result code for a round without opponent "
               "(expected one of U F H Z + - or blank)", pl.col("_res"))),
    (_round(" opponent"), pl.format("player {} is paired with themself", pl.col("start_no"))),
    (_round(" opponent"),
     pl.format("opponent {} does not exist (no player line with that starting rank)", pl.col("opponent"))),
    (_round(" opponent"),
     pl.format("player {} meets {} but {}'s line says {} in that round (expected {})",
               pl.col("start_no"), pl.col("opponent"), pl.col("opponent"),
               pl.col("_back").cast(pl.String).fill_null("no opponent"), pl.col("start_no"))),
    (_round(" result"),
     pl.format("results do not complement: {} has '{}' against {} who has '{}' "
               "(expected 1/0, =/=, W/L, D/D, +/-, -/- )", pl.col("start_no"), pl.col("_res"),
               pl.col("opponent"), pl.col("_ores"))),
)
_NOTES: Final = (
    (_round(" colour"),
     pl.format("players {} and {} both have colour '{}'", pl.col("start_no"), pl.col("opponent"),
               pl.col("_colour"))),
    (_round(" result"),
     pl.format("result '{}' without an opponent read as bye '{}'", pl.col("_res"),
               pl.col("_res").replace_strict(BYE_ALIASES, default=""))),
)


_COLOUR_ROW: Final = np.array([2, 0, 1, 2, 2], dtype=np.uint32)  # colour id -> w, b or null


def games_frame(g: dict[str, np.ndarray]) -> pl.DataFrame:
    """The games columns of the model (with ``event``) from the arrays of :func:`games`."""
    n = len(g["event"])
    colour = pl.Series(["w", "b", None], dtype=GAME_SCHEMA["colour"])  # by colour id: w, b, else null
    result_strings = pl.Series([*RESULTS, "?"], dtype=pl.String)
    return pl.DataFrame({
        "event": g["event"],
        "player": int_column("player", g["player"], np.int32, ~g["player_ok"]),
        "round": g["round"],
        "opponent": int_column("opponent", g["opponent"], np.int32, ~g["has_opp"]),
        "colour": colour.gather(pl.Series(np.take(_COLOUR_ROW, g["colour"]))),
        "result": result_strings.gather(g["result"].astype(np.int64)).scatter(
            np.flatnonzero(g["result"] == 0), None) if n else pl.Series([], dtype=pl.String),
        "points": pl.Series(g["points"], dtype=pl.Int32),
        "played": g["game_type"] == GAME_TYPE["played"],
        "game_type": pl.Series(list(GAME_TYPE), dtype=GAME_SCHEMA["game_type"]).gather(
            g["game_type"].astype(np.int64)) if n else pl.Series([], dtype=GAME_SCHEMA["game_type"]),
    })
