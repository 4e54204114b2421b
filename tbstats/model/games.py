"""The columnar tournament model: the schema and checks of the three polars tables a batch of whole tournaments
is made of (the batch itself: :mod:`tbstats.model.batch`).

``tournaments``: one row per event; ``players``: one row per participant; ``games``: long form, one row per
player and round, with unplayed rounds explicit (``game_type``) and ``played`` marking over-the-board games.
Points are exact integers in the event's smallest scoring unit: a value ``v`` means ``v / scale`` points,
``scale`` being a column of ``tournaments`` (2 for the usual 1-½-0 scoring).

The proofs of checked files vouch for this module's source (:mod:`tbstats.io.tabular.proof`): a change here
makes every proof written before it void, so what is not the schema or its checks lives elsewhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import polars as pl

from tbstats.errors import SchemaError

#: Game types, in the order of their integer codes in dense views. See rules.md 2.2.
GAME_TYPES: Final = (
    "played",          # over-the-board game (TRF 1 = 0 W D L)
    "forfeit_win",     # + against a scheduled opponent            C.07 16.2.2
    "forfeit_loss",    # - against a scheduled opponent who won     C.07 16.2.4 (VUR)
    "double_forfeit",  # - on both sides                            C.07 16.2.4 (VUR)
    "pab",             # pairing-allocated bye (U)                  C.07 16.2.1
    "full_bye",        # full-point bye (F, or + without opponent)  C.07 16.2.1
    "half_bye",        # requested half-point bye (H)               16.2.3 / 16.2.5 (VUR)
    "zero_bye",        # requested zero-point bye (Z, - without opponent)  (VUR)
    "absent",          # not paired: blank block, withdrawn, late entry    (VUR, as a zero-point bye)
    "pending",         # paired, result not yet known (in-tournament files); such rounds are not counted
)
GAME_TYPE = {name: code for code, name in enumerate(GAME_TYPES)}
#: Outcome of a round for the player in dense views: by the points awarded (C.07 16.3.1), or by the result
#: of a game.
LOSS, DRAW, WIN = 0, 1, 2
GameTypeEnum = pl.Enum(list(GAME_TYPES))
ColourEnum = pl.Enum(["w", "b"])
EventTypeEnum = pl.Enum(["swiss", "round_robin", "team", "unknown"])

#: Points per kind of round, in units of 1/scale (rules.md 2.4). Column ``pts_<kind>`` in ``tournaments``.
SCORING_KINDS: Final = (
    "win", "draw", "loss", "forfeit_win", "forfeit_loss", "pab", "full_bye", "half_bye", "zero_bye",
)

TOURNAMENT_SCHEMA: Final[dict[str, pl.DataType]] = {
    "tournament": pl.Int64(),
    "source": pl.String(),
    "name": pl.String(),
    "city": pl.String(),
    "federation": pl.String(),
    "start_date": pl.Date(),
    "end_date": pl.Date(),
    "date_text": pl.String(),          # 042 as written
    "rounds": pl.Int16(),              # planned rounds: XXR, else 142, else the longest line (never fewer)
    "rounds_played": pl.Int16(),       # rounds counted: leading rounds whose games all have results
    "event_type": EventTypeEnum,
    "type_text": pl.String(),          # 092 free text
    "type_code": pl.String(),          # 192 encoded type
    "declared_players": pl.Int32(),    # 062
    "scale": pl.Int32(),
    **{f"pts_{k}": pl.Int32() for k in SCORING_KINDS},
    "tiebreaks": pl.List(pl.String()),  # 202
    "standings_tiebreaks": pl.List(pl.String()),  # 212
    "records": pl.List(pl.String()),   # every other record line, kept verbatim (013, 310, 299, XXC, ...)
}

PLAYER_SCHEMA: Final[dict[str, pl.DataType]] = {
    "tournament": pl.Int64(),
    "start_no": pl.Int32(),
    "name": pl.String(),
    "sex": pl.String(),
    "title": pl.String(),
    "rating": pl.Int32(),              # null = unrated
    "federation": pl.String(),
    "fide_id": pl.Int64(),
    "birth": pl.String(),
    "declared_points": pl.Int32(),     # units of 1/scale; null when blank
    "declared_rank": pl.Int32(),
    "line": pl.Int32(),                # line in the source file (0 when not from a file)
}

GAME_SCHEMA: Final[dict[str, pl.DataType]] = {
    "tournament": pl.Int64(),
    "player": pl.Int32(),
    "round": pl.Int16(),
    "opponent": pl.Int32(),            # null when no opponent
    "colour": ColourEnum,              # null for '-' / blank
    "result": pl.String(),             # the code as found (upper case), null when the block is absent
    "points": pl.Int32(),              # units of 1/scale
    "played": pl.Boolean(),            # over the board
    "game_type": GameTypeEnum,
}

WARNING_SCHEMA: Final[dict[str, pl.DataType]] = {
    "source": pl.String(),
    "line": pl.Int32(),
    "field": pl.String(),
    "message": pl.String(),
}

#: Optional columns a table may carry (kept when present, never required): ``strength``, a player's true
#: strength in simulated archives (``tbstats simulate --archive``), read by ``tbstats evaluate --strength``.
OPTIONAL: Final[dict[str, dict[str, pl.DataType]]] = {
    "tournaments": {}, "players": {"strength": pl.Float64()}, "games": {}, "warnings": {},
}

SCHEMAS: Final = {
    "tournaments": TOURNAMENT_SCHEMA,
    "players": PLAYER_SCHEMA,
    "games": GAME_SCHEMA,
    "warnings": WARNING_SCHEMA,
}


_NAMES: Final = {name: list(schema) for name, schema in SCHEMAS.items()}
_TYPES: Final = {name: list(schema.values()) for name, schema in SCHEMAS.items()}


def check_schema(table: str, df: pl.DataFrame, where: str = "") -> pl.DataFrame:
    """Check ``df`` against the schema of ``table``; cast compatible integer widths, else raise.

    A missing column or a column of the wrong kind raises a :class:`SchemaError` naming it. The table's
    :data:`OPTIONAL` columns are kept (cast to their type) when present; other columns are dropped.
    """
    expected = SCHEMAS[table]
    if df.columns == _NAMES[table] and df.dtypes == _TYPES[table]:
        return df.clone()  # already the model's columns in order (a shallow copy, as the rebuilt frame was)
    prefix = f"{where}: " if where else ""
    schema = df.schema   # built once: polars builds a new Schema object at every access
    missing = [c for c in expected if c not in schema]
    if missing:
        raise SchemaError(f"{prefix}{table} table lacks column(s) {', '.join(missing)} "
                          f"(expected {', '.join(expected)})")
    columns = []
    for name, dtype in expected.items():
        got = schema[name]
        if got == dtype:
            columns.append(df[name])
            continue
        if not _compatible(got, dtype):
            raise SchemaError(f"{prefix}{table} column '{name}' has type {got} (expected {dtype})")
        columns.append(cast_checked(df[name], dtype, f"{prefix}{table} column '{name}'"))
    for name, dtype in OPTIONAL[table].items():
        if name in schema:
            got = schema[name]
            if not (got == dtype or got == pl.Null() or got.is_numeric()):
                raise SchemaError(f"{prefix}{table} column '{name}' has type {got} (expected {dtype})")
            columns.append(cast_checked(df[name], dtype, f"{prefix}{table} column '{name}'"))
    return pl.DataFrame(columns) if columns else df.select()


def cast_checked(values: pl.Series, dtype: pl.DataType, what: str) -> pl.Series:
    """``values`` cast to ``dtype``; a value that does not fit (out of range, not in the enum) raises.

    The :class:`SchemaError` names ``what`` and the first bad value's row (1-based).

    >>> cast_checked(pl.Series([1, 70000]), pl.Int16(), "games column 'round'")
    Traceback (most recent call last):
    ...
    tbstats.errors.SchemaError: games column 'round' row 2: 70000 does not fit Int16
    """
    if values.dtype == dtype:
        return values
    cast = values.cast(dtype, strict=False)
    lost = values.is_not_null() & cast.is_null()
    if lost.any():
        row = int(lost.arg_true()[0])
        raise SchemaError(f"{what} row {row + 1}: {values[row]!r} does not fit {_type_name(dtype)}")
    return cast


def _type_name(dtype: pl.DataType) -> str:
    if isinstance(dtype, pl.Enum):
        return "the values " + ", ".join(dtype.categories.to_list())
    return str(dtype)


def fits(got: pl.DataType, want: pl.DataType) -> bool:
    """Whether a column of type ``got`` is read as the model's ``want`` (:func:`check_schema` casts it).

    >>> fits(pl.Int32(), pl.Int16()), fits(pl.String(), pl.Int16())
    (True, False)
    """
    return got == want or _compatible(got, want)


def _compatible(got: pl.DataType, want: pl.DataType) -> bool:
    if got == pl.Null():
        return True
    if want.is_integer():
        return got.is_integer()
    if isinstance(want, pl.Enum):
        return got in (pl.String(), pl.Categorical()) or isinstance(got, pl.Enum | pl.Categorical)
    if isinstance(want, pl.List):
        return isinstance(got, pl.List) and got.inner in (pl.String(), pl.Null())
    return False


def stack(frames: Sequence[pl.DataFrame]) -> pl.DataFrame:
    """Tables one under another: their chunks appended, not copied, when their schemas agree; else aligned by
    column name, a column that some lack being null there (part files may differ in optional columns).

    >>> stack([pl.DataFrame({"a": [1]}), pl.DataFrame({"a": [2], "b": ["x"]})]).rows()
    [(1, None), (2, 'x')]
    """
    if len(frames) == 1:
        return frames[0]
    schema = frames[0].schema
    return pl.concat(frames, how="vertical" if all(f.schema == schema for f in frames[1:]) else "diagonal_relaxed")


def empty(table: str) -> pl.DataFrame:
    """An empty table with the model's schema."""
    return pl.DataFrame(schema=SCHEMAS[table])
