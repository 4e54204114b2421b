"""One checker for columnar models: keys, references, rounds, pairings, results and points, as the TRF reader.

The tabular reader hands over the tables it read, each with two hidden columns: ``_file`` (the file a row
came from) and ``_row`` (its 0-based data row there). Every problem becomes a ledger row naming the file,
the line (CSV: data row + 2, the header being line 1) or the row (other formats: ``row N:`` in the reason,
1-based) and the column, in the file's own column names. The checks are polars expressions over whole
tables (games chunk by chunk of whole tournaments). The players and each games chunk are first given to
:mod:`tbstats.io.clean`, whose numpy proof that they are clean is much cheaper on the usual layout; the checks
run only where it fails, so the ledger is theirs in every case.

What is checked (rules.md 2.2-2.4 read for a columnar model):

- keys: ``tournament`` unique and not null; ``(tournament, start_no)`` and ``(tournament, player, round)``
  unique and not null; every player's and game's tournament exists, every game's player and opponent exist;
- ranges: ``scale`` > 0, points per kind not null and >= 0, ``rounds`` from 0 to 999, ``rounds_played`` from 0
  to ``rounds``, ``round`` from 1 to the event's ``rounds``, start numbers >= 1, ratings >= 0;
- games: an opponent exactly for the game types that have one, never the player himself; the opponent's row
  of that round points back, with the complementary game type and result; ``played`` true exactly for
  over-the-board games; result codes allowed for the game type; ``points`` equal to the event's points for
  that kind of round (``pts_*``);
- flat files: rows of one tournament (or one player) that disagree, player or game data on a row without a
  tournament, game data on a row without a start number.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Mapping
from typing import Final, TypeVar

import numpy as np
import polars as pl
from polars.expr.whenthen import ChainedThen, Then

from tbstats.errors import FormatError
from tbstats.io import clean
from tbstats.model.games import GAME_TYPE, GAME_TYPES, SCORING_KINDS
from tbstats.model.rules import MAX_POINTS, MAX_SCALE

Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)

#: The types of the hidden ``_row`` column (the row index polars scans make: 4 bytes a row) and ``_file``
#: (categorical: tables stacked from several files then cost 4 bytes a row for it, not a string each).
ROW: Final = pl.UInt32
FILE: Final = pl.Categorical
LEDGER_SCHEMA: Final = {"path": pl.String, "line": pl.Int32, "column": pl.String, "reason": pl.String}
#: At most this many rows per check are listed; the first is what raise mode reports.
ROWS_PER_CHECK: Final = 20
MAX_ROUNDS: Final = 999

#: Result codes allowed for each game type (upper case; None = no code).
RESULTS: Final[dict[str, tuple[str | None, ...]]] = {
    "played": ("1", "0", "=", "W", "D", "L"),
    "forfeit_win": ("+",),
    "forfeit_loss": ("-",),
    "double_forfeit": ("-",),
    "pab": ("U",),
    "full_bye": ("F", "+"),
    "half_bye": ("H",),
    "zero_bye": ("Z", "-"),
    "absent": (None, "Z"),
    "pending": (None, "X", "?"),
}
#: The game type the opponent's row has for each paired game type.
PARTNER_TYPE: Final = {"played": "played", "forfeit_win": "forfeit_loss", "forfeit_loss": "forfeit_win",
                       "double_forfeit": "double_forfeit", "pending": "pending"}
#: Result pairs of a game seen from both sides.
COMPLEMENT: Final = {"1": "0", "0": "1", "=": "=", "W": "L", "L": "W", "D": "D", "+": "-", "-": "+"}
_WIN, _DRAW = ("1", "W"), ("=", "D")


class ModelCheckError(FormatError):
    """A columnar model breaks the model's rules; ``ledger`` lists every problem found (the first is raised)."""

    def __init__(self, ledger: pl.DataFrame) -> None:
        self.ledger = ledger
        row = ledger.row(0, named=True)
        super().__init__(row["path"], row["line"], row["column"], row["reason"])


def locate(df: Frame, file: str, first_row: int = 0) -> Frame:
    """The table (eager or lazy) with the hidden location columns of rows read from ``file``, the first being
    its row ``first_row`` (0-based)."""
    return df.with_columns(pl.lit(file, FILE).alias("_file"),
                           pl.int_range(first_row, first_row + pl.len(), dtype=ROW).alias("_row"))


def raise_problems(ledger: pl.DataFrame) -> None:
    """Raise :class:`ModelCheckError` when the ledger has a row."""
    if ledger.height:
        raise ModelCheckError(ledger)


# ------------------------------------------------------------------------------------------- machinery

Check = tuple[pl.Expr, str, pl.Expr]  # failing when true, column, reason


def _problems(df: pl.DataFrame, checks: list[Check], names: Mapping[str, str]) -> list[pl.DataFrame]:
    """Ledger rows for the rows failing each check (one pass over the table when every check passes)."""
    return [rows for _, rows in _failing(df, checks, names)]


def _failing(df: pl.DataFrame, checks: list[Check], names: Mapping[str, str]) -> list[tuple[int, pl.DataFrame]]:
    """The ledger rows of each failing check, with the check's index in ``checks``."""
    if df.is_empty() or not checks:
        return []
    flags = df.select(pl.any_horizontal(cond.fill_null(False) for cond, _, _ in checks).any()).item()
    if not flags:
        return []
    out = []
    for k, (cond, column, reason) in enumerate(checks):
        bad = df.filter(cond.fill_null(False)).head(ROWS_PER_CHECK).rechunk()   # polars 2.1 may panic on a chunked one
        if bad.height:
            out.append((k, _ledger_rows(bad, names.get(column, column), reason)))
    return out


def _ledger_rows(bad: pl.DataFrame, column: str, reason: pl.Expr) -> pl.DataFrame:
    path = pl.col("_file").cast(pl.String)
    csv = path.str.to_lowercase().str.ends_with(".csv")
    return bad.select(
        path.alias("path"),
        pl.when(csv).then(pl.col("_row") + 2).cast(pl.Int32).alias("line"),
        pl.lit(column, pl.String).alias("column"),
        pl.when(csv).then(reason).otherwise(pl.format("row {}: {}", pl.col("_row") + 1, reason))
        .cast(pl.String).alias("reason"))


def _in_values(expr: pl.Expr, values: tuple[str | None, ...]) -> pl.Expr:
    codes = [v for v in values if v is not None]
    inside = expr.is_in(codes) if codes else pl.lit(False)
    return (inside | expr.is_null()) if None in values else inside.fill_null(False)


# ----------------------------------------------------------------------------------------------- checks

def check_model(tables: Mapping[str, pl.DataFrame], names: Mapping[str, Mapping[str, str]] | None = None
                ) -> pl.DataFrame:
    """Every problem of a model's tournaments, players and games tables (with ``_file``/``_row``), as a ledger.

    ``names`` maps a table's model column names to the names in the file (flat files rename some).
    """
    names = names or {}
    t, p, g = tables["tournaments"], tables["players"], tables["games"]
    found = (_check_tournaments(t, names.get("tournaments", {}))
             + _check_players(p, t, names.get("players", {}))
             + _check_games_chunked(g, p, t, names.get("games", {})))
    return pl.concat(found) if found else pl.DataFrame(schema=LEDGER_SCHEMA)


def proven_clean(tables: Mapping[str, pl.DataFrame]) -> bool:
    """Whether :func:`check_model` would find nothing, decided without the hidden location columns: the
    tournament checks' one pass, then the proof of :mod:`tbstats.io.clean` on the players and every games
    chunk (False when it cannot prove it: the caller then locates the rows and runs :func:`check_model`)."""
    t, p, g = tables["tournaments"], tables["players"], tables["games"]
    checks = _tournament_checks(t)
    if t.height and t.select(pl.any_horizontal(cond.fill_null(False) for cond, _, _ in checks).any()).item():
        return False
    if not clean.players_clean(p, t):
        return False
    ctx = clean.context(p, t)
    return all(clean.games_clean(chunk, ctx, _rules()) for chunk in _chunks(g, GAME_CHUNK))


def _check_tournaments(t: pl.DataFrame, names: Mapping[str, str]) -> list[pl.DataFrame]:
    return _problems(t, _tournament_checks(t), names)


def _tournament_checks(t: pl.DataFrame) -> list[Check]:
    tid = pl.col("tournament")
    checks: list[Check] = [
        (tid.is_null(), "tournament", pl.lit("tournament id is empty")),
        (tid.is_duplicated() & tid.is_not_null(), "tournament",
         pl.format("tournament id {} is used by more than one event", tid)),
        (pl.col("source").is_null(), "source", pl.lit("source is empty")),
        (pl.col("scale").is_null() | (pl.col("scale") <= 0) | (pl.col("scale") > MAX_SCALE), "scale",
         pl.format("scale {} is not a positive whole number of points units of at most {} (points have at most "
                   "3 decimals)", pl.col("scale").cast(pl.String).fill_null("(empty)"), pl.lit(MAX_SCALE))),
        (pl.col("rounds").is_null() | (pl.col("rounds") < 0) | (pl.col("rounds") > MAX_ROUNDS), "rounds",
         pl.format("rounds {} is not from 0 to {}", pl.col("rounds").cast(pl.String).fill_null("(empty)"),
                   pl.lit(MAX_ROUNDS))),
        (pl.col("rounds_played").is_null() | (pl.col("rounds_played") < 0)
         | (pl.col("rounds_played") > pl.col("rounds")), "rounds_played",
         pl.format("rounds_played {} is not from 0 to the event's rounds ({})",
                   pl.col("rounds_played").cast(pl.String).fill_null("(empty)"),
                   pl.col("rounds").cast(pl.String).fill_null("empty"))),
        (pl.col("event_type").is_null(), "event_type", pl.lit("event_type is empty")),
    ]
    for col in (c for c in t.columns if c.startswith("pts_")):
        checks.append((pl.col(col).is_null() | (pl.col(col) < 0)
                       | (pl.col(col) > MAX_POINTS * pl.col("scale").clip(1, MAX_SCALE)), col,
                       pl.format("{} {} is not a whole number of units from 0 to {} x scale {} (at most {} points "
                                 "per game, as the TRF reader allows)", pl.lit(col),
                                 pl.col(col).cast(pl.String).fill_null("(empty)"), pl.lit(MAX_POINTS),
                                 pl.col("scale").cast(pl.String).fill_null("(empty)"), pl.lit(MAX_POINTS))))
    return checks


def _check_players(p: pl.DataFrame, t: pl.DataFrame, names: Mapping[str, str]) -> list[pl.DataFrame]:
    if clean.players_clean(p, t):
        return []
    key = pl.struct("tournament", "start_no")
    known = pl.col("tournament").is_in(t["tournament"].drop_nulls().implode())
    checks: list[Check] = [
        (pl.col("tournament").is_null(), "tournament", pl.lit("tournament id is empty")),
        (pl.col("start_no").is_null(), "start_no", pl.lit("start number is empty")),
        (pl.col("start_no") < 1, "start_no", pl.format("start number {} is not >= 1", pl.col("start_no"))),
        (key.is_duplicated() & pl.col("start_no").is_not_null(), "start_no",
         pl.format("start number {} appears more than once in tournament {}", pl.col("start_no"),
                   pl.col("tournament"))),
        (pl.col("tournament").is_not_null() & ~known, "tournament",
         pl.format("tournament {} does not exist (no tournaments row with that id)", pl.col("tournament"))),
        (pl.col("rating") < 0, "rating",
         pl.format("rating {} is negative (leave it empty for unrated)", pl.col("rating"))),
        (pl.col("declared_rank") < 1, "declared_rank",
         pl.format("declared rank {} is not >= 1", pl.col("declared_rank"))),
    ]
    return _problems(p, checks, names)


_CODES: Final = {code: n for n, code in enumerate("10=WDL+-UFHZX?")}
_NO_CODE: Final = len(_CODES)  # a null result
_BAD_CODE: Final = _NO_CODE + 1  # a code that is none of the above
_ALLOWED: Final = [GAME_TYPE[kind] * 64 + (_NO_CODE if code is None else _CODES[code])
                   for kind, codes in RESULTS.items() for code in codes]
_COMPLEMENT_CODE: Final = {_CODES[a]: _CODES[b] for a, b in COMPLEMENT.items()}
_PARTNER_CODE: Final = {GAME_TYPE[a]: GAME_TYPE[b] for a, b in PARTNER_TYPE.items()}
#: The scoring kind (``pts_*`` column) each unplayed game type is worth (rules.md 2.4; pending: nothing,
#: played games: by result).
_WORTH: Final = {"forfeit_win": "forfeit_win", "forfeit_loss": "forfeit_loss", "double_forfeit": "forfeit_loss",
                 "pab": "pab", "full_bye": "full_bye", "half_bye": "half_bye", "zero_bye": "zero_bye",
                 "absent": "zero_bye"}
#: :data:`_WORTH` as the index of the ``pts_*`` column in :data:`tbstats.io.clean._PTS` (its last, zero, for pending).
_KIND: Final = {kind: SCORING_KINDS.index(worth) for kind, worth in _WORTH.items()} | {"pending": len(SCORING_KINDS)}


def _code(result: pl.Expr) -> pl.Expr:
    """A result code as a small integer (:data:`_CODES`; null and unknown codes get their own)."""
    text = result.str.strip_chars().str.to_uppercase()
    return (pl.when(text.is_null() | (text == "")).then(pl.lit(_NO_CODE, pl.Int16))
            .otherwise(text.replace_strict(_CODES, default=_BAD_CODE, return_dtype=pl.Int16)))


def _codes(results: pl.Series) -> pl.Series:
    """:func:`_code` of a column, worked out once per distinct value (a games table has a dozen)."""
    distinct = results.unique()
    table = pl.DataFrame({"v": distinct}).with_columns(_code(pl.col("v")).alias("c"))
    known = dict(zip(table["v"].drop_nulls().to_list(), table.filter(pl.col("v").is_not_null())["c"].to_list(),
                     strict=True))
    return results.replace_strict(known, default=_NO_CODE, return_dtype=pl.Int16).fill_null(_NO_CODE)


@functools.cache
def _rules() -> clean.Rules:
    """The result codes and the rules on them as lookups for :func:`tbstats.io.clean.games_clean` (each
    one-byte result coded by :func:`_code` itself, so both agree by construction)."""
    ascii_codes = pl.select(_code(pl.lit(pl.Series([chr(b) for b in range(128)])))).to_series().to_numpy()
    byte_code = np.full(256, _BAD_CODE, dtype=np.uint8)
    byte_code[:128] = ascii_codes
    assert pl.select(_code(pl.lit(""))).item() == _NO_CODE
    allowed = np.zeros(len(GAME_TYPES) * 64, dtype=bool)
    allowed[_ALLOWED] = True
    complement = np.full(64, -1, dtype=np.int16)
    complement[list(_COMPLEMENT_CODE)] = list(_COMPLEMENT_CODE.values())
    partner = np.arange(len(GAME_TYPES), dtype=np.int8)
    partner[list(_PARTNER_CODE)] = list(_PARTNER_CODE.values())
    paired = np.zeros(len(GAME_TYPES), dtype=bool)
    paired[list(_PARTNER_CODE)] = True
    kind = np.zeros(len(GAME_TYPES) * 64, dtype=np.int32)
    for name, column in _KIND.items():
        kind[GAME_TYPE[name] * 64:(GAME_TYPE[name] + 1) * 64] = column
    played = GAME_TYPE["played"] * 64
    kind[played:played + 64] = SCORING_KINDS.index("loss")
    kind[[played + _CODES[c] for c in _WIN]] = SCORING_KINDS.index("win")
    kind[[played + _CODES[c] for c in _DRAW]] = SCORING_KINDS.index("draw")
    return clean.Rules(byte_code, _NO_CODE, allowed, complement, partner, paired, kind, _codes)


def _expected_points() -> pl.Expr:
    """Points of a round in units, from its game type, result and the event's ``pts_*`` (rules.md 2.4)."""
    gt, res = pl.col("_gt"), pl.col("_res")
    win, draw = [_CODES[c] for c in _WIN], [_CODES[c] for c in _DRAW]
    out: Then | ChainedThen = pl.when(gt == GAME_TYPE["played"]).then(
        pl.when(res.is_in(win)).then(pl.col("pts_win")).when(res.is_in(draw)).then(pl.col("pts_draw"))
        .otherwise(pl.col("pts_loss")))
    for kind, worth in _WORTH.items():
        out = out.when(gt == GAME_TYPE[kind]).then(pl.col(f"pts_{worth}"))
    return out.otherwise(0)


_WIDTHS: Final = {"player": 20, "round": 12}  # bits of a packed key: tournament | start number | round


def _packable(g: pl.DataFrame, p: pl.DataFrame) -> bool:
    """Whether tournament ids, start numbers and rounds fit one Int64 key (31 + 20 + 12 bits, none negative)."""
    stats = [pl.min_horizontal(pl.col("player").min(), pl.col("opponent").min()).alias("a"),
             pl.max_horizontal(pl.col("player").max(), pl.col("opponent").max()).alias("b"),
             pl.col("round").min().alias("c"), pl.col("round").max().alias("d")]
    people = [pl.col("start_no").min().alias("a"), pl.col("start_no").max().alias("b"),
              pl.lit(0).alias("c"), pl.lit(0).alias("d")]
    ids = [pl.col("tournament").min().alias("e"), pl.col("tournament").max().alias("f")]
    lo_hi = [g.select(*stats, *ids).row(0), p.select(*people, *ids).row(0)]
    limits = (2 ** _WIDTHS["player"], 2 ** _WIDTHS["round"], 2**31)
    for row in lo_hi:
        for k, limit in enumerate(limits):
            lo, hi = row[2 * k], row[2 * k + 1]
            if lo is not None and (lo < 0 or hi >= limit):
                return False
    return True


def _key(tournament: str, player: str, rnd: str | None = None) -> pl.Expr:
    key = pl.col(tournament).cast(pl.Int64) * 2 ** _WIDTHS["player"] + pl.col(player).cast(pl.Int64)
    return key if rnd is None else key * 2 ** _WIDTHS["round"] + pl.col(rnd).cast(pl.Int64)


def _lookups(g: pl.DataFrame, p: pl.DataFrame) -> pl.DataFrame:
    """The games with ``_dup`` (key repeated), ``_player``/``_opp_exists`` (true, or null when not a player)
    and the opponent's row of that round: ``_back``, ``_otype``, ``_ores``, ``_orow``.

    One packed Int64 key per lookup when the values allow it (fast), else joins on the key columns.
    """
    back_cols = [pl.col("opponent").alias("_back"), pl.col("_gt").alias("_otype"), pl.col("_res").alias("_ores"),
                 pl.lit(True).alias("_orow")]
    if _packable(g, p):
        known = p.select(_key("tournament", "start_no").drop_nulls().unique().alias("k"))["k"].implode()
        own = g.select(_key("tournament", "player", "round").fill_null(-1))[:, 0].to_numpy()
        query = g.select(_key("tournament", "opponent", "round").fill_null(-2))[:, 0].to_numpy()
        order = np.argsort(own, kind="stable")
        ranked = own[order]
        same = ranked[1:] == ranked[:-1]
        dup_ranked = np.zeros(len(ranked), dtype=bool)
        dup_ranked[1:] |= same
        dup_ranked[:-1] |= same
        dup = np.empty_like(dup_ranked)
        dup[order] = dup_ranked
        at = np.minimum(np.searchsorted(ranked, query), len(ranked) - 1)
        row = order[at]
        found = pl.Series((ranked[at] == query) & (query >= 0) & ~dup[row])
        rows = pl.Series(row)
        return g.with_columns(
            pl.Series("_dup", dup),
            pl.when(_key("tournament", "player").is_in(known)).then(True).alias("_player"),
            pl.when(_key("tournament", "opponent").is_in(known)).then(True).alias("_opp_exists"),
            *(pl.when(found).then(g[src].gather(rows)).alias(dst)
              for src, dst in (("opponent", "_back"), ("_gt", "_otype"), ("_res", "_ores"))),
            pl.when(found).then(True).alias("_orow"))
    key_cols = ["tournament", "player", "round"]
    people = p.filter(pl.col("start_no").is_not_null()).unique(["tournament", "start_no"]).select(
        "tournament", pl.col("start_no").alias("player"), pl.lit(True).alias("_player"))
    opponents = people.rename({"player": "opponent", "_player": "_opp_exists"})
    g = g.with_columns(pl.struct(*key_cols).is_duplicated().alias("_dup"))
    back = g.filter(pl.col("opponent").is_not_null() & ~pl.col("_dup")).select(
        "tournament", "round", pl.col("player").alias("opponent"), *back_cols)
    return (g.join(people, on=["tournament", "player"], how="left")
            .join(opponents, on=["tournament", "opponent"], how="left")
            .join(back, on=["tournament", "round", "opponent"], how="left"))


#: Games are checked this many rows at a time (cut between tournaments): the check's working columns then
#: cost a bounded amount of memory, whatever the batch size.
GAME_CHUNK: Final = 1 << 16


def _chunks(g: pl.DataFrame, rows: int) -> list[pl.DataFrame]:
    """Slices (no copies) of about ``rows`` games each, cut between tournaments; the whole table when its
    tournaments are not in runs (or an id is empty), since a check looks across a tournament's rows."""
    if g.height <= rows or g["tournament"].null_count():
        return [g]
    starts, ordered = clean.run_starts(g["tournament"])
    if not len(starts) or (not ordered and len(starts) + 1 != g["tournament"].n_unique()):
        return [g]
    cuts = np.unique(starts[np.minimum(np.searchsorted(starts, np.arange(rows, g.height, rows)), len(starts) - 1)])
    bounds = [0, *cuts.tolist(), g.height]
    return [g.slice(lo, hi - lo) for lo, hi in itertools.pairwise(bounds) if hi > lo]


def _check_games_chunked(g: pl.DataFrame, p: pl.DataFrame, t: pl.DataFrame, names: Mapping[str, str]
                         ) -> list[pl.DataFrame]:
    """:func:`_check_games` chunk by chunk of whole tournaments; each check keeps its first rows in table order."""
    found: dict[int, list[pl.DataFrame]] = {}
    ctx = clean.context(p, t) if g.height else None
    for chunk in _chunks(g, GAME_CHUNK):
        if ctx is not None and clean.games_clean(chunk, ctx, _rules()):
            continue   # proven clean: the checks would list nothing
        for k, rows in _check_games(chunk, p, t, names):
            found.setdefault(k, []).append(rows)
    return [pl.concat(found[k]).head(ROWS_PER_CHECK) for k in sorted(found)]


def _check_games(g: pl.DataFrame, p: pl.DataFrame, t: pl.DataFrame, names: Mapping[str, str]
                 ) -> list[tuple[int, pl.DataFrame]]:
    if g.is_empty():
        return []
    pts = [c for c in t.columns if c.startswith("pts_")]
    events = t.filter(pl.col("tournament").is_not_null()).unique("tournament", keep="first").select(
        "tournament", pl.col("rounds").alias("_rounds"), "scale", *pts, pl.lit(True).alias("_event"))
    key_cols = ("tournament", "player", "round")
    g = g.with_columns(pl.col("game_type").to_physical().cast(pl.Int16).alias("_gt"),
                       _codes(g["result"]).alias("_res"))
    x = _lookups(g, p).join(events, on="tournament", how="left")
    gt = pl.col("_gt")
    x = x.with_columns(
        gt.is_in(list(_PARTNER_CODE)).alias("_paired"),
        (gt * 64 + pl.col("_res")).is_in(_ALLOWED).alias("_allowed"),
        (pl.col("_back") == pl.col("player")).fill_null(False).alias("_points_back"),
        _expected_points().alias("_expected"))
    gtype = pl.col("game_type").cast(pl.String)
    paired, allowed, points_back = pl.col("_paired"), pl.col("_allowed"), pl.col("_points_back")
    has_opp = pl.col("opponent").is_not_null()
    where = pl.format("round {} of player {}", pl.col("round"), pl.col("player"))
    partner = gt.replace_strict(_PARTNER_CODE, default=None, return_dtype=pl.Int16)
    partner_name = gtype.replace_strict(PARTNER_TYPE, default=None, return_dtype=pl.String)
    other_type = pl.col("_otype").replace_strict(dict(enumerate(GAME_TYPES)), default=None,
                                                 return_dtype=pl.String).fill_null("empty game type")
    checks: list[Check] = [
        *((pl.col(c).is_null(), c, pl.lit(f"{c} is empty (it is part of the game key)")) for c in key_cols),
        (pl.col("_dup") & pl.all_horizontal(pl.col(c).is_not_null() for c in key_cols),
         "round", pl.format("{} appears more than once", where)),
        (pl.col("tournament").is_not_null() & pl.col("_event").is_null(), "tournament",
         pl.format("tournament {} does not exist (no tournaments row with that id)", pl.col("tournament"))),
        (pl.col("_event") & pl.col("player").is_not_null() & pl.col("_player").is_null(), "player",
         pl.format("player {} does not exist in tournament {}", pl.col("player"), pl.col("tournament"))),
        ((pl.col("round") < 1) | (pl.col("round") > pl.col("_rounds")), "round",
         pl.format("round {} is not from 1 to the event's rounds ({})", pl.col("round"), pl.col("_rounds"))),
        (gt.is_null(), "game_type", pl.lit("game_type is empty")),
        (pl.col("played").is_null() | (pl.col("played") != (gt == GAME_TYPE["played"])), "played",
         pl.format("played is {} but the game type is {}", pl.col("played").cast(pl.String).fill_null("empty"),
                   gtype)),
        (paired & ~has_opp, "opponent", pl.format("{}: a {} needs an opponent", where, gtype)),
        (~paired & has_opp & gt.is_not_null(), "opponent",
         pl.format("{}: a {} has no opponent, but opponent is {}", where, gtype, pl.col("opponent"))),
        (has_opp & (pl.col("opponent") == pl.col("player")), "opponent",
         pl.format("{}: player {} is paired with themself", where, pl.col("player"))),
        (has_opp & (pl.col("opponent") != pl.col("player")) & pl.col("_event") & pl.col("_opp_exists").is_null(),
         "opponent", pl.format("{}: opponent {} does not exist in tournament {}", where, pl.col("opponent"),
                               pl.col("tournament"))),
        (has_opp & pl.col("_opp_exists") & (pl.col("opponent") != pl.col("player")) & ~points_back, "opponent",
         pl.format("{}: player {} meets {} but {}'s row of that round says {}", where, pl.col("player"),
                   pl.col("opponent"), pl.col("opponent"), pl.col("_back").cast(pl.String).fill_null("no opponent"))),
        (points_back & paired & (pl.col("_otype") != partner), "game_type",
         pl.format("{}: a {} against {} who has a {} (expected {})", where, gtype, pl.col("opponent"),
                   other_type, partner_name)),
        (gt.is_not_null() & ~allowed, "result",
         pl.format("{}: result '{}' is not allowed for a {}", where, pl.col("result").fill_null(""), gtype)),
        (points_back & (gt == GAME_TYPE["played"]) & (pl.col("_otype") == GAME_TYPE["played"]) & allowed
         & (pl.col("_ores") != pl.col("_res").replace_strict(_COMPLEMENT_CODE, default=-1, return_dtype=pl.Int16)),
         "result", pl.format("{}: results do not complement: {} has '{}' against {} who has a different result",
                             where, pl.col("player"), pl.col("result"), pl.col("opponent"))),
        (pl.col("_event") & gt.is_not_null() & allowed
         & (pl.col("points").is_null() | (pl.col("points") != pl.col("_expected"))), "points",
         pl.format("{}: points {} do not match a {} '{}' (worth {} units at scale {})", where,
                   pl.col("points").cast(pl.String).fill_null("(empty)"), gtype, pl.col("result").fill_null(""),
                   pl.col("_expected"), pl.col("scale"))),
    ]
    return _failing(x, checks, names)
