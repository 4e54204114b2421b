"""Seeded mutations of TRF files and columnar tables for the fuzz tests (tests/test_fuzz.py).

Every mutator takes a ``random.Random`` and the bytes (or tables) and returns damaged ones; the class of
damage is the mutator's name, so a failure can be reported by class.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import polars as pl

TrfMutator = Callable[[random.Random, bytes], bytes]


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def _player_lines(lines: list[bytes]) -> list[int]:
    return [i for i, line in enumerate(lines) if line.startswith(b"001")] or list(range(len(lines)))


def byte_flip(rng: random.Random, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        if out:
            out[rng.randrange(len(out))] = rng.randrange(256)
    return bytes(out)


def column_shift(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    i = rng.choice(_player_lines(lines))
    at = rng.randrange(max(1, len(lines[i])))
    lines[i] = lines[i][:at] + b" " + lines[i][at:] if rng.random() < 0.5 else lines[i][:at] + lines[i][at + 1:]
    return b"\n".join(lines)


def delete_line(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    del lines[rng.randrange(len(lines))]
    return b"\n".join(lines)


def duplicate_line(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    i = rng.choice(_player_lines(lines))
    lines.insert(rng.randrange(len(lines) + 1), lines[i])
    return b"\n".join(lines)


def cut_line(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    i = rng.choice(_player_lines(lines))
    lines[i] = lines[i][: rng.randrange(max(1, len(lines[i])))]
    return b"\n".join(lines)


def cut_file(rng: random.Random, data: bytes) -> bytes:
    return data[: rng.randrange(max(1, len(data)))]


def odd_result(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    i = rng.choice(_player_lines(lines))
    line = bytearray(lines[i])
    spots = [p for p in range(98, len(line), 10)]
    if spots:
        line[rng.choice(spots)] = rng.choice(b"QX?*9w#+-UFHZ ")
    lines[i] = bytes(line)
    return b"\n".join(lines)


_NUMBERS = [b"inf", b"nan", b"1e10", b"-100", b"9999999999", b"99999", b"-1", b"0", b"32768", b"1.25", b"x"]


def out_of_range(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    i = rng.choice(_player_lines(lines))
    line = lines[i].ljust(100)
    start, width = rng.choice([(4, 4), (48, 4), (57, 11), (80, 4), (85, 4), (91, 4)])
    value = rng.choice(_NUMBERS)[:width].rjust(width)
    lines[i] = line[:start] + value + line[start + width:]
    return b"\n".join(lines)


_HEADERS = [b"XXR 1", b"XXR 999", b"XXR 1000", b"XXR " + b"9" * 60, b"062 9999999999", b"062 1", b"142 2",
            b"142 40000", b"162  W 3.0 D 1.0", b"162 W 9e9", b"XXS W=99999999999", b"XXS W=0 D=0", b"042 2099/13/45",
            b"202 BH,??,SB", b"192 FIDE_ROUNDROBIN", b"XXS D=-1"]


def contradictory_header(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    lines.insert(rng.randrange(min(len(lines), 10) + 1), rng.choice(_HEADERS))
    return b"\n".join(lines)


def encoding(rng: random.Random, data: bytes) -> bytes:
    text = data.decode("utf-8", errors="replace")
    choice = rng.randrange(4)
    if choice == 0:
        return text.encode("utf-16")
    if choice == 1:
        return b"\xef\xbb\xbf" + data
    if choice == 2:
        return text.encode("cp1252", errors="replace").replace(b"a", b"\xe4", 3)
    return data.replace(b"\n", b"\r\n") if rng.random() < 0.5 else data.replace(b"\n", b"\r")


def nul_bytes(rng: random.Random, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        out.insert(rng.randrange(len(out) + 1), 0)
    return bytes(out)


def long_line(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    i = rng.choice(_player_lines(lines))
    lines[i] = lines[i] + rng.choice([b"    2 w 1", b" ", b"x"]) * rng.randint(500, 3000)
    return b"\n".join(lines)


TRF_MUTATORS: dict[str, TrfMutator] = {f.__name__: f for f in (
    byte_flip, column_shift, delete_line, duplicate_line, cut_line, cut_file, odd_result, out_of_range,
    contradictory_header, encoding, nul_bytes, long_line)}


def trf_mutants(seeds: list[Path], kind: str, n: int, seed: int) -> list[tuple[str, bytes]]:
    """``n`` mutants ``(name, bytes)`` of one class: a seed file with one to three mutations of that kind."""
    rng = random.Random(f"{seed}:{kind}")
    out = []
    for k in range(n):
        source = rng.choice(seeds)
        data = source.read_bytes()
        for _ in range(rng.randint(1, 3)):
            data = TRF_MUTATORS[kind](rng, data)
        out.append((f"{kind}_{k:04d}_{source.stem}.trf", data))
    return out


# ----------------------------------------------------------------------------------------- columnar

def _odd_value(rng: random.Random, dtype: pl.DataType) -> object:
    if dtype.is_integer():
        return rng.choice([None, 0, -1, 1, 2, 3, 999, 1000, 32767, 100000, 2**31 - 1])
    if dtype == pl.Boolean():
        return rng.choice([None, True, False])
    if isinstance(dtype, pl.Enum):
        return rng.choice([None, *dtype.categories.to_list()])
    if dtype == pl.String():
        return rng.choice([None, "", "=1+1", "1", "0", "+", "-", "U", "Q", "x" * 50])
    return None


def mutate_table(rng: random.Random, df: pl.DataFrame) -> tuple[str, pl.DataFrame]:
    """One damage to a table: a cell set to an odd value of its type, a row deleted or duplicated."""
    if df.is_empty():
        return "empty", df
    kind = rng.choice(["cell", "cell", "cell", "delete_row", "duplicate_row", "swap_cells"])
    row = rng.randrange(df.height)
    if kind == "delete_row":
        return kind, pl.concat([df.head(row), df.slice(row + 1)])
    if kind == "duplicate_row":
        return kind, pl.concat([df, df.slice(row, 1)])
    col = rng.choice(df.columns)
    dtype = df.schema[col]
    if isinstance(dtype, pl.List):
        return "list", df
    if kind == "swap_cells":
        other = rng.randrange(df.height)
        values = df[col].to_list()
        values[row], values[other] = values[other], values[row]
        return f"swap {col}", df.with_columns(pl.Series(col, values, dtype=dtype))
    value = _odd_value(rng, dtype)
    values = df[col].to_list()
    values[row] = value
    if isinstance(value, int) and dtype.is_integer() and not _fits(value, dtype):
        # a value its column's type cannot hold: the column widened, as another producer could write it
        return f"wide {col}", df.with_columns(pl.Series(col, values, dtype=pl.Int64()))
    return f"cell {col}", df.with_columns(pl.Series(col, values, dtype=dtype))


def _fits(value: int, dtype: pl.DataType) -> bool:
    """Whether an integer type holds ``value``."""
    bits = {pl.Int8(): 8, pl.Int16(): 16, pl.Int32(): 32, pl.Int64(): 64, pl.UInt8(): 8, pl.UInt16(): 16,
            pl.UInt32(): 32, pl.UInt64(): 64}[dtype]
    if dtype.is_unsigned_integer():
        return 0 <= value < 2 ** bits
    return -(2 ** (bits - 1)) <= value < 2 ** (bits - 1)
