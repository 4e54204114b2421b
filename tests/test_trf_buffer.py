"""The fixed-width gathers of the TRF buffer agree with plain slicing (tbstats.io.trf.buffer)."""

from __future__ import annotations

import numpy as np
import polars as pl

from tbstats.io.trf.buffer import PAD, SPACE, text_column, windows


def _naive(buf: np.ndarray, at: np.ndarray, width: int, room: np.ndarray) -> np.ndarray:
    out = np.full((width, len(at)), SPACE, dtype=buf.dtype)
    for i, (a, r) in enumerate(zip(at.tolist(), room.tolist(), strict=True)):
        got = buf[a:a + width][:max(r, 0)]
        out[:len(got), i] = got
    return out


def test_windows_are_the_slices_blank_past_each_end() -> None:
    rng = np.random.default_rng(7)
    for dtype, top in ((np.uint8, 256), (np.uint16, 65536), (np.uint32, 0x110000)):
        buf = np.concatenate([rng.integers(0, top, size=3000), np.full(PAD, SPACE)]).astype(dtype)
        at = rng.integers(0, 3000, size=400)
        for width in (1, 4, 10, 91):
            room = rng.integers(-3, width + 4, size=400)
            assert np.array_equal(windows(buf, at, width, room), _naive(buf, at, width, room)), (dtype, width)


def test_text_column_blank_null() -> None:
    codes = np.frombuffer(b"ab  " b"    " b" c  ", dtype=np.uint8).reshape(3, 4).T.copy()
    assert text_column(codes, "t").to_list() == ["ab", "", "c"]
    assert text_column(codes, "t", blank_null=True).to_list() == ["ab", None, "c"]


def test_text_column_strips_and_encodes_any_character_as_polars_does() -> None:
    """Fields of code points of every width (Latin-1, the Basic Multilingual Plane and beyond), with the
    whitespace polars strips beyond ASCII (NEL, no-break space, em space, ideographic space) at the ends and
    inside: the text column is the UTF-8 text of each field, stripped as polars strips it."""
    rng = np.random.default_rng(3)
    pool = np.array([32, 9, 0x85, 0xA0, 0x2003, 0x3000, 65, 0x7A, 0xE9, 0x141, 0x4E2D, 0x1D538, 0x1F600])
    for dtype in (np.uint16, np.uint32):
        chars = pool if dtype == np.uint32 else pool[pool < 65536]
        win = rng.choice(chars, size=(12, 500)).astype(dtype)   # 12 columns x 500 fields
        win[:, :50] = 32   # blank fields
        texts = ["".join(map(chr, win[:, i].tolist())) for i in range(win.shape[1])]
        want = pl.Series(texts).str.strip_chars().to_list()
        assert text_column(win, "t").to_list() == want, dtype
