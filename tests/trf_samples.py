"""Small TRF texts for I/O tests: a good four-player event and one-line variants of it."""

from __future__ import annotations


def player(no: int, name: str, rating: str, rounds: list[str], points: str = "") -> str:
    """A '001' line at the TRF-16 columns; each round block is 8 characters ('   2 w 1')."""
    line = f"001 {no:>4} m    {name:<33} {rating:>4} GER {'':>11} {'':10} {points:>4} {no:>4}"
    return line + "".join(f"  {r}" for r in rounds)


#: Lines 1-6 of the good file: 012, XXR, then players 1-4 on lines 3-6.
LINES = [
    "012 Test Open",
    "XXR 2",
    player(1, "Alpha, Anna", "2100", ["   2 w 1", "   3 b ="]),
    player(2, "Beta, Bob", "2000", ["   1 b 0", "   4 w 1"]),
    player(3, "Gamma, Carl", "1900", ["   4 w =", "   1 w ="]),
    player(4, "Delta, Dora", "1800", ["   3 b =", "   2 b 0"]),
]
GOOD = "\n".join(LINES) + "\n"


def variant(index: int, line: str) -> str:
    """The good file with line ``index`` (0-based) replaced."""
    lines = list(LINES)
    lines[index] = line
    return "\n".join(lines) + "\n"


def with_names(first: str, second: str) -> str:
    """The good file with players 1 and 2 renamed (names are padded to their field)."""
    return variant(2, player(1, first, "2100", ["   2 w 1", "   3 b ="])).replace(
        LINES[3], player(2, second, "2000", ["   1 b 0", "   4 w 1"]))
