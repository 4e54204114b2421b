"""The TRF reader's compiled pairing pass (tbstats.io.trf.pairs) against a plain reading of each block.

The reference below takes one block at a time, with result codes as characters and game types by name
(rules.md 2.1, 2.2): a game result needs an opponent whose block names the player back with the complementary
result; a round without opponent is a bye by its code (a game result there reads as the matching bye, with a
note); blank, X and ? against an opponent mean no result yet. Random blocks (every result and colour code,
opponents that exist or not, that name the player back or not, lines cut inside blocks, events of several
scorings) must give the same bits, results, game types and points as the compiled loop; arrays that do not fit
raise instead of reading out of bounds.
"""

from __future__ import annotations

import numpy as np
import pytest
from tbstats.io.trf.pairs import pair_blocks

from tbstats.io.trf.games import (
    _PAIR_TABLES,
    BYE_ALIASES,
    COLOURS,
    RESULT_CODES_WITH_OPPONENT,
    RESULT_CODES_WITHOUT_OPPONENT,
    RESULTS,
)
from tbstats.model.games import GAME_TYPE, SCORING_KINDS

_COMPLEMENT = {"1": "0", "0": "1", "=": "=", "W": "L", "L": "W", "D": "D", "+": "-", "-": "+", "": ""}
_NO_RESULT_YET = ("", "X", "?")
_BYE = {"U": "pab", "F": "full_bye", "+": "full_bye", "H": "half_bye", "Z": "zero_bye", "-": "zero_bye"}
_PLAYED_KIND = {"1": "win", "W": "win", "=": "draw", "D": "draw", "0": "loss", "L": "loss"}
_TYPE_KIND = {"forfeit_win": "forfeit_win", "forfeit_loss": "forfeit_loss", "double_forfeit": "forfeit_loss",
              "pab": "pab", "full_bye": "full_bye", "half_bye": "half_bye", "zero_bye": "zero_bye",
              "absent": "zero_bye"}


def _code(result_id: int) -> str:
    return RESULTS[result_id] if result_id < len(RESULTS) else "other"   # (the last id: any other character)


def _complements(mine: str, theirs: str) -> bool:
    if mine in ("X", "?") or theirs in ("X", "?"):   # no result yet against a blank, or on both sides
        return (mine in _NO_RESULT_YET) and (theirs in _NO_RESULT_YET) and (mine == theirs or "" in (mine, theirs))
    return _COMPLEMENT.get(mine) == theirs or (mine, theirs) == ("-", "-")


def _reference(b: dict, points: np.ndarray) -> tuple[int, int, bool, int, int, int]:
    """Problem bits, note bits, pending, result id, game type and points of one block ``b``."""
    res, h, own, me, opp = _code(b["result"]), b["has_opp"], b["me_ok"], b["me"], b["opp"]
    theirs = b["their"]   # the opponent's block: (result id, colour id, has an opponent, opponent), or None
    ores = _code(theirs[0]) if theirs else ""
    names_me = theirs is not None and theirs[2] and own and theirs[3] == me
    checks = [
        not b["opp_ok"] and not b["opp_blank"],                      # the opponent field is not a number
        b["colour"] == len(COLOURS),                                 # not a colour code
        b["first_stray"],                                            # the first block of its line out of line
        h and (b["length"] < b["at"] + 6 or (b["length"] < b["at"] + 8 and theirs is not None and ores != "")),
        h and res not in (*RESULT_CODES_WITH_OPPONENT, *_NO_RESULT_YET),
        not h and res not in (*RESULT_CODES_WITHOUT_OPPONENT, *BYE_ALIASES, ""),
        h and own and opp == me,                                     # paired with themself
        h and not b["exists"],                                       # no such opponent
        b["exists"] and own and opp != me and not names_me,          # the opponent's block names another
        names_me and not _complements(res, ores),
    ]
    colour = COLOURS[b["colour"]] if b["colour"] < len(COLOURS) else "other"
    notes = [names_me and b["colour"] == theirs[1] and colour in ("w", "b") and me < opp,
             not h and res in BYE_ALIASES]
    pending = h and res in _NO_RESULT_YET and own and me < opp
    if not h:
        res = BYE_ALIASES.get(res, res)
        game_type = _BYE.get(res, "absent")
    elif res in _PLAYED_KIND:
        game_type = "played"
    elif res == "+":
        game_type = "forfeit_win"
    elif res == "-":
        game_type = "double_forfeit" if ores == "-" else "forfeit_loss"
    else:
        game_type = "pending"
    kind = _PLAYED_KIND[res] if game_type == "played" else _TYPE_KIND.get(game_type)
    pts = 0 if kind is None else int(points[b["event"], SCORING_KINDS.index(kind)])
    return (sum(1 << k for k, c in enumerate(checks) if c), sum(1 << k for k, c in enumerate(notes) if c),
            bool(pending), len(RESULTS) if res == "other" else RESULTS.index(res), GAME_TYPE[game_type], pts)


def _random_blocks(rng: np.random.Generator, n: int, events: int) -> dict[str, np.ndarray]:
    r = len(RESULTS) + 1   # (the last id: any other character)
    found = rng.random(n) < 0.8
    row = np.where(found, rng.integers(0, n, n), rng.integers(0, n, n))
    at = rng.integers(91, 200, n).astype(np.int16)
    return {
        "row": row.astype(np.int64), "found": found, "exists": found | (rng.random(n) < 0.1),
        "opp": rng.integers(0, 12, n).astype(np.int16), "opp_ok": rng.random(n) < 0.9,
        "opp_blank": rng.random(n) < 0.3, "colour": rng.integers(0, len(COLOURS) + 1, n).astype(np.int8),
        "result": rng.integers(0, r, n).astype(np.int8), "first_stray": rng.random(n) < 0.05,
        "me": rng.integers(0, 12, n).astype(np.int16), "me_ok": rng.random(n) < 0.95,
        "length": (at + rng.integers(0, 12, n)).astype(np.int16), "at": at,
        "event": rng.integers(0, events, n).astype(np.int32),
    }


def _compiled(b: dict[str, np.ndarray], points: np.ndarray, has_opp: np.ndarray) -> list[tuple]:
    n = len(b["row"])
    problems, notes, pending = np.empty(n, np.uint16), np.empty(n, np.uint8), np.empty(n, np.uint8)
    result, game_type, pts = np.empty(n, np.int8), np.empty(n, np.int8), np.empty(n, np.int32)
    u8 = {k: v.view(np.uint8) for k, v in b.items() if v.dtype == np.bool_}
    with_zero = np.concatenate([points, np.zeros((len(points), 1), dtype=points.dtype)], axis=1).astype(np.int32)
    pair_blocks(b["row"], u8["found"], u8["exists"], b["opp"], has_opp.view(np.uint8), u8["opp_ok"],
                u8["opp_blank"], b["colour"], b["result"], u8["first_stray"], b["me"], u8["me_ok"], b["length"],
                b["at"], b["event"], *_PAIR_TABLES, with_zero.reshape(-1), len(SCORING_KINDS), problems, notes,
                pending, result, game_type, pts)
    return list(zip(problems.tolist(), notes.tolist(), map(bool, pending.tolist()), result.tolist(),
                    game_type.tolist(), pts.tolist(), strict=True))


@pytest.mark.parametrize("seed", range(6))
def test_pair_blocks_matches_a_plain_reading_of_each_block(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, events = 3000, 4
    b = _random_blocks(rng, n, events)
    has_opp = b["opp_ok"] & (b["opp"] > 0)
    b["opp"] = np.where(has_opp, b["opp"], 0).astype(np.int16)
    points = rng.integers(0, 7, (events, len(SCORING_KINDS))).astype(np.int64)
    expected = []
    for i in range(n):
        j = int(b["row"][i])
        block = {k: (v[i].item() if hasattr(v[i], "item") else v[i]) for k, v in b.items()}
        block["has_opp"] = bool(has_opp[i])
        block["their"] = (int(b["result"][j]), int(b["colour"][j]), bool(has_opp[j]), int(b["opp"][j])) \
            if b["found"][i] else None
        expected.append(_reference(block, points))
    got = _compiled(b, points, has_opp)
    assert got == expected
    # every check, note and game type was met by these blocks
    assert np.bitwise_or.reduce([g[0] for g in got]) == (1 << 10) - 1
    assert np.bitwise_or.reduce([g[1] for g in got]) == 3
    assert {g[4] for g in got} == set(GAME_TYPE.values())


def test_a_hand_checked_pair() -> None:
    """Player 1 beats 2 in round 1 (1 w 1 / 2 b 0); 3 has a requested half bye written as '='."""
    b = {"row": np.array([1, 0, 0], np.int64), "found": np.array([True, True, False]),
         "exists": np.array([True, True, False]), "opp": np.array([2, 1, 0], np.int16),
         "opp_ok": np.array([True, True, True]), "opp_blank": np.array([False, False, False]),
         "colour": np.array([1, 2, 3], np.int8),
         "result": np.array([RESULTS.index("1"), RESULTS.index("0"), RESULTS.index("=")], np.int8),
         "first_stray": np.array([False] * 3), "me": np.array([1, 2, 3], np.int16), "me_ok": np.array([True] * 3),
         "length": np.array([99, 99, 99], np.int16), "at": np.array([91, 91, 91], np.int16),
         "event": np.array([0, 0, 0], np.int32)}
    points = np.array([[2, 1, 0, 2, 0, 2, 2, 1, 0]], np.int64)   # 2-1-0 in half points
    got = _compiled(b, points, np.array([True, True, False]))
    assert got == [(0, 0, False, RESULTS.index("1"), GAME_TYPE["played"], 2),
                   (0, 0, False, RESULTS.index("0"), GAME_TYPE["played"], 0),
                   (0, 2, False, RESULTS.index("H"), GAME_TYPE["half_bye"], 1)]


def test_arrays_that_do_not_fit_raise() -> None:
    rng = np.random.default_rng(9)
    b = _random_blocks(rng, 50, 2)
    has_opp = b["opp_ok"] & (b["opp"] > 0)
    points = np.ones((2, len(SCORING_KINDS)), np.int64)
    short = dict(b, me=b["me"][:-1])
    with pytest.raises(ValueError, match="differ in length"):
        _compiled(short, points, has_opp)
    with pytest.raises(ValueError, match="out of range"):
        _compiled(dict(b, row=np.full(50, 50, np.int64), found=np.ones(50, bool)), points, has_opp)
    with pytest.raises(ValueError, match="out of range"):
        _compiled(dict(b, event=np.full(50, 2, np.int32)), points, has_opp)
    with pytest.raises(ValueError, match="not in the tables"):
        _compiled(dict(b, result=np.full(50, len(RESULTS) + 1, np.int8)), points, has_opp)
