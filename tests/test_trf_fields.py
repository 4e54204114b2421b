"""The TRF reader's compiled field loops (tbstats.io.trf.fields) against a plain Python reading of the same text.

``round_blocks``: each line's round blocks at columns 92, 102, ... (blank past the line's end), the opponent
field read as polars casts stripped text to an integer (an optional sign, then ASCII digits; blanks are
Unicode White_Space as polars strips it), colour and result by their codes in either case (a blank result is
0, any other character the last id), and a character in columns 5, 7, 9 or 10 of a block: for buffers of one,
two and four bytes a character, with lines that end inside, before and after their blocks; arrays that do
not fit raise instead of reading or writing out of bounds.

``fixed_fields``: where each field's text lies once stripped (columns from its first, 0 and 0 when blank), and
that text read as an integer, several fields of a line at once (a field alone reads the same);
``gather_utf8``: the characters of many ranges of the buffer as UTF-8, as Python encodes them;
``decimal_field``: a plain decimal (a sign, digits, at most one ``.`` or ``,``) to the float polars reads,
blank and other text told apart; ``Lines.decimal`` reads the other text through polars.
"""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import polars as pl
import pytest

from tbstats.io.trf.buffer import IS_WHITESPACE, PAD, SPACE, WHITESPACE, Lines
from tbstats.io.trf.fields import decimal_field, fixed_fields, gather_utf8, round_blocks
from tbstats.io.trf.games import _COLOUR_ID, _RESULT_ID, COLOURS, RESULTS
from tbstats.io.trf.headers import ROUND0

#: Characters blocks are made of: digits, signs, codes, blanks of every kind, and letters of each width.
_ALPHABET = [*"0123456789+- wbWB=1DLUFHZX?x\t", "\xa0", "\x85", "\u2003", "\u3000", "é", "Ж", "\U0001f600"]
_COLOUR = {c: i for i, c in enumerate(COLOURS)} | {c.upper(): i for i, c in enumerate(COLOURS)}
_RESULT = {c: i for i, c in enumerate(RESULTS) if c} | {c.lower(): i for i, c in enumerate(RESULTS) if c}


def _reference(text: str, start: int, length: int, n_blocks: int) -> list[tuple[int, bool, bool, int, int, bool]]:
    """The blocks of one line, read from its text one character at a time."""
    out = []
    for k in range(n_blocks):
        at = start + ROUND0 + 10 * k
        room = length - ROUND0 - 10 * k
        block = "".join(text[at + j] if j < room else " " for j in range(10))
        field = block[:4].strip(WHITESPACE)
        number = re.fullmatch(r"[+-]?[0-9]+", field)
        colour = _COLOUR.get(block[5], len(COLOURS))
        result = 0 if block[7] in WHITESPACE else _RESULT.get(block[7], len(RESULTS))
        stray = any(block[j] not in WHITESPACE for j in (4, 6, 8, 9))
        out.append((int(field) if number else 0, bool(number), not field, colour, result, stray))
    return out


def _read(buf: np.ndarray, starts: list[int], lengths: list[int], counts: list[int]) -> list[tuple[int, ...]]:
    total = sum(counts)
    opp, opp_ok, blank = np.empty(total, np.int32), np.empty(total, np.uint8), np.empty(total, np.uint8)
    colour, result, stray = np.empty(total, np.int8), np.empty(total, np.int8), np.empty(total, np.uint8)
    round_blocks(buf, np.array(starts, dtype=np.int64), np.array(lengths, dtype=np.int64),
                 np.array(counts, dtype=np.int64), ROUND0, IS_WHITESPACE.view(np.uint8), _COLOUR_ID, _RESULT_ID,
                 opp, opp_ok, blank, colour, result, stray)
    return [(int(o), bool(k), bool(b), int(c), int(r), bool(s)) for o, k, b, c, r, s in zip(
        opp, opp_ok, blank, colour, result, stray, strict=True)]


@pytest.mark.parametrize("seed", range(6))
def test_round_blocks_read_as_the_text_says(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for dtype, top in ((np.uint8, 0x100), (np.uint16, 0x10000), (np.uint32, 0x110000)):
        alphabet = [c for c in _ALPHABET if ord(c) < top]
        weights = np.array([8.0 if c in "0123456789 " else 1.0 for c in alphabet])
        lines, starts, lengths, counts, at = [], [], [], [], 0
        for _ in range(60):
            blocks = int(rng.integers(0, 12))
            size = ROUND0 + 10 * blocks + int(rng.integers(-15, 8))   # ends inside, before or after a block
            line = "".join(rng.choice(alphabet, size=max(size, 0), p=weights / weights.sum()))
            lines.append(line)
            starts.append(at)
            lengths.append(len(line) - int(rng.integers(0, 3)) if line else 0)   # (a stripped length)
            counts.append(blocks)
            at += len(line) + 1
        text = "\n".join(lines) + "\n" + " " * PAD
        buf = np.array([ord(c) for c in text], dtype=dtype)
        want = [block for line in zip(starts, lengths, counts, strict=True) for block in _reference(text, *line)]
        assert _read(buf, starts, lengths, counts) == want, dtype


def test_round_blocks_of_a_line_with_all_kinds_of_blocks() -> None:
    blocks = ["  12 w 1  ", "  -3 b =  ", "   + b 1  ", "  x2 w 0  ", "   5 x 0  ", "  12 w  1 ", "       U  ",
              "  +7 B d  "]
    line = "001    1".ljust(ROUND0) + "".join(blocks)
    text = line + "\n" + " " * PAD
    got = _read(np.frombuffer(text.encode("latin-1"), dtype=np.uint8), [0], [len(line.rstrip())], [8])
    assert got == _reference(text, 0, len(line.rstrip()), 8)
    assert [(o, ok) for o, ok, *_ in got] == [(12, True), (-3, True), (0, False), (0, False), (5, True), (12, True),
                                             (0, False), (7, True)]
    assert [b for _, _, b, *_ in got] == [False] * 6 + [True, False]
    assert [(c, r) for _, _, _, c, r, _ in got] == [(1, 1), (2, 3), (2, 1), (1, 2), (4, 2), (1, 0), (0, 9), (2, 5)]
    assert [stray for *_, stray in got] == [False] * 5 + [True, False, False]


def test_round_blocks_refuse_arrays_that_do_not_fit() -> None:
    buf = np.full(ROUND0 + 20, SPACE, dtype=np.uint8)
    outs: list[np.ndarray] = [np.empty(2, np.int32), np.empty(2, np.uint8), np.empty(2, np.uint8), np.empty(2, np.int8),
            np.empty(2, np.int8), np.empty(2, np.uint8)]
    tables: tuple[np.ndarray, ...] = (IS_WHITESPACE.view(np.uint8), _COLOUR_ID, _RESULT_ID)
    one = np.array([0], dtype=np.int64)
    with pytest.raises(ValueError, match="outputs"):
        round_blocks(buf, one, np.array([ROUND0 + 20]), np.array([3]), ROUND0, *tables, *outs)
    with pytest.raises(ValueError, match="past the buffer"):
        round_blocks(buf, np.array([5]), np.array([ROUND0 + 20]), np.array([2]), ROUND0, *tables, *outs)
    with pytest.raises(ValueError, match="differ in length"):
        round_blocks(buf, one, np.array([ROUND0, 1]), np.array([2]), ROUND0, *tables, *outs)
    with pytest.raises(ValueError, match="65,536"):
        round_blocks(buf, one, np.array([ROUND0 + 20]), np.array([2]), ROUND0, IS_WHITESPACE[:10].view(np.uint8),
                     _COLOUR_ID, _RESULT_ID, *outs)
    with pytest.raises(ValueError, match="negative"):
        round_blocks(buf, one, np.array([ROUND0 + 20]), np.array([-1]), ROUND0, *tables, *outs)
    round_blocks(buf, one, np.array([ROUND0 + 20]), np.array([2]), ROUND0, *tables, *outs)   # (they fit)
    assert outs[1].tolist() == [0, 0] and outs[2].tolist() == [1, 1]


def _lines(rng: np.random.Generator, dtype: type, top: int, count: int, width: int
           ) -> tuple[str, np.ndarray, list[int], list[int]]:
    """Random lines of about ``width`` characters: text, buffer, starts and stripped lengths."""
    alphabet = [c for c in _ALPHABET + list(".,e") if ord(c) < top]
    weights = np.array([8.0 if c in "0123456789 " else 1.0 for c in alphabet])
    lines, starts, lengths, at = [], [], [], 0
    for _ in range(count):
        line = "".join(rng.choice(alphabet, size=int(rng.integers(0, width + 6)), p=weights / weights.sum()))
        lines.append(line)
        starts.append(at)
        lengths.append(max(len(line) - int(rng.integers(0, 3)), 0))
        at += len(line) + 1
    text = "\n".join(lines) + "\n" + " " * PAD
    return text, np.array([ord(c) for c in text], dtype=dtype), starts, lengths


def _field_text(text: str, start: int, length: int, lo: int, hi: int) -> str:
    return "".join(text[start + j] if j < length else " " for j in range(lo, hi))


def _fields(buf: np.ndarray, starts: list[int], lengths: list[int], spans: list[tuple[int, int]],
            numbers: list[bool]) -> tuple[np.ndarray, ...]:
    """``fixed_fields`` of some lines: first, last, value and ok, fields x lines."""
    n, k = len(starts), len(spans)
    first, last = np.empty((k, n), np.int16), np.empty((k, n), np.int16)
    value, ok = np.empty((k, n), np.int64), np.empty((k, n), np.uint8)
    fixed_fields(buf, np.array(starts, dtype=np.int64), np.array(lengths, dtype=np.int64),
                 np.array(spans, dtype=np.int64).reshape(k, 2), np.array(numbers, dtype=np.uint8),
                 IS_WHITESPACE.view(np.uint8), first, last, value, ok)
    return first, last, value, ok


@pytest.mark.parametrize("seed", range(4))
def test_fixed_fields_find_the_stripped_text_and_its_number(seed: int) -> None:
    """Fields of every width, overlapping, numbers or not, read at once: each as the text says."""
    rng = np.random.default_rng(seed)
    spans = [(0, 1), (4, 8), (3, 21), (10, 28), (2, 20), (25, 40)]
    numbers = [hi - lo <= 18 and k % 2 == 1 for k, (lo, hi) in enumerate(spans)] + [True]
    spans.append((0, 1))   # (a 1-column number too)
    for dtype, top in ((np.uint8, 0x100), (np.uint16, 0x10000), (np.uint32, 0x110000)):
        text, buf, starts, lengths = _lines(rng, dtype, top, 300, 34)
        first, last, value, ok = _fields(buf, starts, lengths, spans, numbers)
        for f, ((lo, hi), number) in enumerate(zip(spans, numbers, strict=True)):
            for i, (start, length) in enumerate(zip(starts, lengths, strict=True)):
                field = _field_text(text, start, length, lo, hi)
                solid = [j for j, c in enumerate(field) if c not in WHITESPACE]
                assert (first[f, i], last[f, i]) == ((solid[0], solid[-1] + 1) if solid else (0, 0)), (field, dtype)
                if number:
                    found = re.fullmatch(r"[+-]?[0-9]+", field.strip(WHITESPACE))
                    assert (value[f, i], bool(ok[f, i])) == ((int(found[0]), True) if found else (0, False)), field
        one = _fields(buf, starts, lengths, spans[1:2], numbers[1:2])   # a field alone reads the same
        assert all(np.array_equal(x[0], y[1]) for x, y in zip(one, (first, last, value, ok), strict=True))


def _codes(dtype: type, n: int, seed: int) -> np.ndarray:
    """Random code points a buffer of ``dtype`` holds: ASCII mostly, then Latin-1, BMP letters (no surrogates) and,
    in four bytes, astral ones; each width's largest code among them."""
    rng = np.random.default_rng(seed)
    top = {np.uint8: 0xFF, np.uint16: 0xFFFF, np.uint32: 0x10FFFF}[dtype]
    codes = np.where(rng.random(n) < 0.7, rng.integers(1, 0x80, n), rng.integers(0x80, top + 1, n))
    codes[(codes >= 0xD800) & (codes <= 0xDFFF)] = 0x416   # (decoded text has no surrogates)
    codes[:4] = [0x7F, 0x80, 0x7FF, 0x800] if top > 0xFF else [0x7F, 0x80, 0xFF, 0x41]
    if top > 0xFFFF:
        codes[4:6] = [0xFFFF, 0x10000]
    codes[6] = top
    return codes.astype(dtype)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32])
def test_gather_utf8_makes_the_utf8_python_makes(dtype: type) -> None:
    buf = _codes(dtype, 500, 5)
    rng = np.random.default_rng(6)
    at = np.concatenate([[0], rng.integers(0, 480, 80)]).astype(np.int64)
    counts = np.concatenate([[20], rng.integers(0, 20, 80)]).astype(np.int64)
    texts = ["".join(map(chr, buf[a:a + n].tolist())) for a, n in zip(at.tolist(), counts.tolist(), strict=True)]
    want = [t.encode("utf-8") for t in texts]
    data, offsets = gather_utf8(buf, at, counts)
    assert data.dtype == np.uint8 and offsets.dtype == np.int64 and offsets[0] == 0
    assert [data[a:b].tobytes() for a, b in itertools.pairwise(offsets.tolist())] == want
    empty, none = gather_utf8(buf, at[:0], counts[:0])
    assert empty.size == 0 and none.tolist() == [0]
    with pytest.raises(ValueError, match="past the buffer"):
        gather_utf8(buf, np.array([495]), np.array([6]))
    with pytest.raises(ValueError, match="differ in length"):
        gather_utf8(buf, at, counts[1:])
    if dtype != np.uint8:
        with pytest.raises(ValueError, match="surrogate"):
            gather_utf8(np.array([0x41, 0xD800], dtype=dtype), np.array([0]), np.array([2]))
        with pytest.raises(ValueError, match="surrogate"):
            gather_utf8(np.array([0xDFFF], dtype=dtype), np.array([0]), np.array([1]))


def _plain(field: str) -> tuple[int, float]:
    """The reference reading of declared points: state (0 blank, 1 plain, 2 other) and value."""
    text = field.strip(WHITESPACE)
    if not text:
        return 0, math.nan
    body = text[1:] if text[0] in "+-" else text
    if not re.fullmatch(r"[0-9]*[.,]?[0-9]*", body) or not any(c.isdigit() for c in body):
        return 2, math.nan
    whole, _, frac = body.replace(",", ".").partition(".")
    value = int(whole + frac) / 10.0 ** len(frac)
    return 1, -value if text[0] == "-" else value


@pytest.mark.parametrize("seed", range(4))
def test_decimal_field_reads_plain_decimals_and_tells_other_text(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for dtype, top in ((np.uint8, 0x100), (np.uint16, 0x10000), (np.uint32, 0x110000)):
        text, buf, starts, lengths = _lines(rng, dtype, top, 400, 8)
        n = len(starts)
        value, state = np.empty(n, np.float64), np.empty(n, np.uint8)
        field = Lines(buf, np.zeros(n, np.int32), np.zeros(n, np.int32), np.array(starts), np.array(lengths)).field(
            (2, 8))   # (where each stripped text lies)
        decimal_field(buf, np.array(starts) + 2, field.first, field.last, value, state)
        for i, (start, length) in enumerate(zip(starts, lengths, strict=True)):
            want_state, want = _plain(_field_text(text, start, length, 2, 8))
            assert state[i] == want_state, _field_text(text, start, length, 2, 8)
            assert (math.isnan(value[i]) and math.isnan(want)) or (value[i] == want and math.copysign(
                1, value[i]) == math.copysign(1, want)), _field_text(text, start, length, 2, 8)


def test_lines_decimal_reads_other_text_as_polars_does() -> None:
    fields = ["  1.5", " 1,5", "-0", "+.5", "1e1", " inf", "abc", "    ", "1.2.3", "-", "7"]
    text = "\n".join(fields) + "\n" + " " * PAD
    buf = np.frombuffer(text.encode(), dtype=np.uint8)
    starts = np.cumsum([0] + [len(f) + 1 for f in fields[:-1]]).astype(np.int64)
    lengths = np.array([len(f.rstrip()) for f in fields], dtype=np.int64)
    lines = Lines(buf, np.zeros(len(fields), np.int32), np.arange(1, len(fields) + 1, dtype=np.int32), starts, lengths)
    value, ok = lines.decimal(lines.field((0, 5)))
    polars = pl.Series([f.strip().replace(",", ".") for f in fields]).cast(pl.Float64, strict=False)
    assert ok.tolist() == polars.is_not_null().to_list() == [True, True, True, True, True, True, False, False, False,
                                                            False, True]
    assert [v if v == v else None for v in value.tolist()] == polars.to_list()
    assert math.copysign(1, value[2]) == -1   # -0 as polars reads it


def test_fixed_fields_refuse_arrays_that_do_not_fit() -> None:
    buf = np.full(40, SPACE, dtype=np.uint8)
    ws = IS_WHITESPACE.view(np.uint8)
    no, four = np.zeros(1, np.int16), np.full(1, 4, np.int16)
    with pytest.raises(ValueError, match="outputs"):
        decimal_field(buf, np.array([0]), no, four, np.empty(2), np.empty(1, np.uint8))
    with pytest.raises(ValueError, match="past the buffer"):
        decimal_field(buf, np.array([38]), no, four, np.empty(1), np.empty(1, np.uint8))
    with pytest.raises(ValueError, match="differ in length"):
        decimal_field(buf, np.array([0, 1]), no, four, np.empty(2), np.empty(2, np.uint8))
    grid = (np.empty((1, 1), np.int16), np.empty((1, 1), np.int16), np.empty((1, 1), np.int64),
            np.empty((1, 1), np.uint8))
    with pytest.raises(ValueError, match="past the buffer"):
        fixed_fields(buf, np.array([30]), np.array([20]), np.array([[0, 12]]), np.zeros(1, np.uint8), ws, *grid)
    with pytest.raises(ValueError, match="at most 18"):
        fixed_fields(buf, np.array([0]), np.array([20]), np.array([[0, 19]]), np.ones(1, np.uint8), ws, *grid)
    with pytest.raises(ValueError, match="outputs"):
        fixed_fields(buf, np.array([0, 1]), np.array([5, 5]), np.array([[0, 4]]), np.zeros(1, np.uint8), ws, *grid)
    with pytest.raises(ValueError, match="one flag each"):
        fixed_fields(buf, np.array([0]), np.array([5]), np.array([[0, 4]]), np.zeros(2, np.uint8), ws, *grid)
    fixed_fields(buf, np.array([30]), np.array([10]), np.array([[0, 12]]), np.zeros(1, np.uint8), ws, *grid)
    assert (grid[0][0, 0], grid[1][0, 0]) == (0, 0)   # (the line ends in the buffer: the field past it is blank)
