"""TRF text out of the columnar model: header records, kept records, then '001' player lines (rules.md 2)."""

from __future__ import annotations

from fractions import Fraction

import polars as pl

from tbstats.model.batch import Batch
from tbstats.model.games import SCORING_KINDS
from tbstats.model.rules import STANDARD_SCORING


def _decimal(units: int, scale: int) -> str:
    """Exact decimal text of ``units / scale`` points: 7/2 -> '3.5', 4/2 -> '2.0' (TRF style)."""
    value = Fraction(units, scale)
    if value.denominator == 1:
        return f"{value.numerator}.0"
    text = f"{float(value):.4f}".rstrip("0")
    if Fraction(text) != value:
        raise ValueError(f"{units}/{scale} points has no short decimal form")
    return text


def write_trf(batch: Batch, *, version: str = "trf16") -> dict[str, str]:
    """TRF text per tournament source: header records, kept records, then '001' player lines.

    ``version`` 'trf16' writes rounds and scoring as TRF(x) ``XXR``/``XXS``; 'trf26' as ``142``/``162``.
    """
    if version not in ("trf16", "trf26"):
        raise ValueError(f"unknown TRF version {version!r} (expected trf16 or trf26)")
    lines = _player_lines_text(batch)
    by_t = dict(lines.group_by("tournament").agg(pl.col("_text")).iter_rows())
    out: dict[str, str] = {}
    for t in batch.tournaments.iter_rows(named=True):
        head = _header_lines(t, version)
        body = by_t.get(t["tournament"], [])
        out[t["source"]] = "\n".join([*head, *(t["records"] or []), *body]) + "\n"
    return out


def _header_lines(t: dict[str, object], version: str) -> list[str]:
    out = []
    for code, key in (("012", "name"), ("022", "city"), ("032", "federation")):
        if t[key] is not None:
            out.append(f"{code} {t[key]}")
    if t["date_text"] is not None:
        out.append(f"042 {t['date_text']}")
    elif t["start_date"] is not None:
        out.append(f"042 {t['start_date']:%Y/%m/%d}")
    if t["end_date"] is not None:
        out.append(f"052 {t['end_date']:%Y/%m/%d}")
    if t["declared_players"] is not None:
        out.append(f"062 {t['declared_players']}")
    if t["type_text"] is not None:
        out.append(f"092 {t['type_text']}")
    if t["type_code"] is not None:
        out.append(f"192 {t['type_code']}")
    if t["tiebreaks"]:
        out.append("202 " + ",".join(t["tiebreaks"]))  # type: ignore[arg-type]
    if t["standings_tiebreaks"]:
        out.append("212 " + ",".join(t["standings_tiebreaks"]))  # type: ignore[arg-type]
    scale = int(t["scale"])  # type: ignore[call-overload]
    pts = {k: int(t[f"pts_{k}"]) for k in SCORING_KINDS}  # type: ignore[call-overload]
    standard = {k: int(v * scale) for k, v in STANDARD_SCORING.items()}
    if version == "trf16":
        out.append(f"XXR {t['rounds']}")
        if pts != standard:
            names = {"win": "WW", "draw": "WD", "loss": "WL", "forfeit_win": "FW", "forfeit_loss": "FL",
                     "pab": "PAB", "full_bye": "FPB", "half_bye": "HPB", "zero_bye": "ZPB"}
            extra = {"win": "BW", "draw": "BD", "loss": "BL"}
            items = [f"{names[k]}={_decimal(v, scale)}" for k, v in pts.items()]
            items += [f"{extra[k]}={_decimal(pts[k], scale)}" for k in extra]
            out.append("XXS " + " ".join(items))
    else:
        out.append(f"142 {t['rounds']}")
        if pts != standard:
            if not (pts["forfeit_win"] == pts["full_bye"] == pts["win"] and pts["half_bye"] == pts["draw"]
                    and pts["forfeit_loss"] == pts["zero_bye"]):
                raise ValueError(f"{t['source']}: this scoring system cannot be written as a TRF26 162 record")
            parts = [("W", "win"), ("D", "draw"), ("L", "loss"), ("A", "zero_bye"), ("P", "pab")]
            out.append("162 " + "".join(f" {c}{_decimal(pts[k], scale):>4}    " for c, k in parts).rstrip())
    return out


def _player_lines_text(batch: Batch) -> pl.DataFrame:
    """Fixed-width '001' lines for every player, built column-wise."""
    p = batch.players.join(batch.tournaments.select("tournament", "scale"), on="tournament")

    def fmt_points(col: str) -> pl.Expr:
        whole = pl.col(col) // pl.col("scale")
        frac = (pl.col(col) % pl.col("scale")) * 10 // pl.col("scale")
        return pl.when(pl.col(col).is_null()).then(pl.lit("")).otherwise(
            pl.format("{}.{}", whole, frac))

    def field(expr: pl.Expr, width: int, right: bool = False) -> pl.Expr:
        e = expr.cast(pl.String).fill_null("").str.slice(0, width)
        return e.str.pad_start(width) if right else e.str.pad_end(width)

    blocks = batch.games.sort("round").group_by("tournament", "player", maintain_order=True).agg(
        pl.format("{} {} {}",
                  pl.when(pl.col("opponent").is_null()).then(pl.lit("0000"))
                  .otherwise(pl.col("opponent").cast(pl.String).str.pad_start(4)),
                  pl.col("colour").cast(pl.String).fill_null("-"),
                  pl.col("result").fill_null(" ")).str.join("  ").alias("_rounds"))
    p = p.join(blocks, left_on=["tournament", "start_no"], right_on=["tournament", "player"], how="left")
    text = pl.concat_str([
        pl.lit("001 "), field(pl.col("start_no"), 4, True), pl.lit(" "), field(pl.col("sex"), 1),
        field(pl.col("title"), 3, True), pl.lit(" "), field(pl.col("name"), 33), pl.lit(" "),
        field(pl.col("rating"), 4, True), pl.lit(" "), field(pl.col("federation"), 3), pl.lit(" "),
        field(pl.col("fide_id"), 11, True), pl.lit(" "), field(pl.col("birth"), 10), pl.lit(" "),
        field(fmt_points("declared_points"), 4, True), pl.lit(" "), field(pl.col("declared_rank"), 4, True),
        pl.lit("  "), pl.col("_rounds").fill_null(""),
    ]).str.strip_chars_end()
    return p.select("tournament", "start_no", text.alias("_text")).sort("tournament", "start_no")
