"""The Python API: tie-breaks and standings for a batch, as polars DataFrames.

>>> from tbstats.engine.compute import compute
>>> from tbstats.io.trf import read_trf
>>> line = "001 {:4d}      {:<33}{:44}{:4d} {} {}\\n"
>>> trf = "012 demo\\n" + line.format(1, "A", "", 2, "w", "1") + line.format(2, "B", "", 1, "b", "0")
>>> table = compute(read_trf([("demo.trf", trf.encode())]).batch, "BH,SB")
>>> table.select("start_no", "points", "rank", "BH", "SB").rows()
[(1, 1.0, 1, 0.0, 0.0), (2, 0.0, 2, 1.0, 0.0)]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl
import pyarrow as pa

from tbstats.engine.declared import FROM_FILE, declared_lists
from tbstats.engine.standings import rank_dtype, rank_steps
from tbstats.engine.threads import map_threads
from tbstats.engine.tiebreaks import FIXED_EDITION, get_tiebreak, kernel_of, parse_specs
from tbstats.engine.tiebreaks.base import Context, LotsKeys, Values
from tbstats.errors import TbstatsError
from tbstats.model.batch import Batch, arrow_series
from tbstats.model.columns import SortedChunks
from tbstats.model.dense import build_buckets, players_in_order, tournaments_by_id
from tbstats.model.fingerprint import event_keys
from tbstats.model.rules import auto_editions, check_edition
from tbstats.model.spec import TieBreakSpec

#: players per run of tournaments that the engine computes at once (:func:`runs`: larger batches are split,
#: so that its players x rounds arrays, about 80 bytes a game row, are bounded by the run, not by the batch).
#: Runs of 150,000 players on two threads computed the 10k mix 1.25x faster than runs of 90,000 (measured, see
#: benchmarks/RESULTS.md, 2026-12-02 05:03); one thread is as fast either way.
CHUNK_PLAYERS = 150_000
#: game rows each thread's run needs before ``workers`` > 1 splits a batch between threads: below that, the threads'
#: hand-overs of the GIL cost more than the second core gives. Two threads against one, fastest of 15 calls, on the
#: first events of the 10k mix and of the club-wide archive (benchmarks/RESULTS.md, the session entry of 2026-12-04
#: 23:17): 39k game rows 5.05 against 3.30 ms, 101k 6.81 against 6.38 (club-wide 116k: 8.40 against 6.64), 122k
#: even, 144k 8.41 against 9.06, 204k 11.54 against 12.46, club-wide 283k 11.96 against 16.03.
THREAD_ROWS = 70_000


def make_context(batch: Batch, *, force_type: str | None = None, after_round: int | None = None,
                 unrated_rating: int | None = None, default_edition: str = "fide-2026") -> Context:
    """Build the bucketed dense view and each tournament's own edition once; one context serves every edition
    and spec."""
    buckets = build_buckets(batch, force_type=force_type, after_round=after_round)
    # each tournament's own edition by date, used wherever a spec or configuration says 'auto'
    editions = auto_editions(tournaments_by_id(batch)["start_date"], default_edition)
    # the drawing of lots keyed on each event's fingerprint, made only if some spec draws (LOTS)
    return Context(buckets, editions, unrated_rating=unrated_rating, lots_keys=LotsKeys(lambda: event_keys(batch)))


def split_batch(batch: Batch, parts: int) -> list[Batch]:
    """Split a batch into ``parts`` runs of whole tournaments with about as many players each.

    Tables sorted by tournament (as the readers write them; :class:`Batch` flags them so when it is made, and
    the checks below read the flags) are cut into slices, without copies, their tournament columns flagged as
    sorted (so that the engine's runs need not check them again); others are filtered.
    """
    t_ids = batch.tournaments["tournament"].to_numpy()
    t_sorted = bool((t_ids[1:] > t_ids[:-1]).all())
    ids = t_ids if t_sorted else np.sort(t_ids)
    p_t, g_t = batch.players["tournament"], batch.games["tournament"]
    p_rows = SortedChunks.of(p_t) if t_sorted else None
    g_rows = SortedChunks.of(g_t) if p_rows is not None else None
    if p_rows is None or g_rows is None:
        counts = np.bincount(np.searchsorted(ids, p_t.to_numpy()), minlength=len(ids))
        bounds = np.searchsorted(np.cumsum(counts), np.linspace(0, counts.sum(), parts + 1)[1:-1])
        return [batch.select(chunk.tolist()) for chunk in np.split(ids, bounds) if len(chunk)]
    if p_t.is_empty():
        return [batch]
    # a cut every 1/parts of the players, moved back to the first player of the tournament it falls in
    cuts = np.searchsorted(ids, [p_rows.value(len(p_t) * k // parts) for k in range(1, parts)])
    tables = [_flagged_sorted(df) for df in (batch.tournaments, batch.players, batch.games)]
    out = []
    for chunk in np.split(ids, cuts):
        if not len(chunk):
            continue
        lo, hi = int(chunk[0]), int(chunk[-1])
        rows = [(int(np.searchsorted(t_ids, lo, "left")), int(np.searchsorted(t_ids, hi, "right"))),
                (p_rows.search(lo, "left"), p_rows.search(hi, "right")),
                (g_rows.search(lo, "left"), g_rows.search(hi, "right"))]
        t, p, g = (df.slice(a, b - a) for df, (a, b) in zip(tables, rows, strict=True))
        warnings = batch.warnings if batch.warnings.is_empty() else batch.warnings.filter(
            pl.col("source").is_in(t["source"].implode()))
        out.append(Batch.of_checked(t, p, g, warnings))   # slices of checked tables
    return out


def _flagged_sorted(df: pl.DataFrame) -> pl.DataFrame:
    """``df`` (a shallow copy) with its tournament column, found in order, flagged as sorted (a no-op when
    :class:`Batch` flagged it already)."""
    out = df.clone()
    out.replace_column(out.get_column_index("tournament"), out["tournament"].set_sorted())
    return out


def runs(batch: Batch, parts: int = 1) -> list[Batch]:
    """The batch as runs of whole tournaments: as many as a multiple of ``parts``, none of more than about
    :data:`CHUNK_PLAYERS` players; ``[batch]`` when one run does. Every command's result is the same for any cut
    of its input into whole tournaments, so a caller maps the runs one after another and combines them."""
    n_parts = max(parts, -(-batch.players.height // CHUNK_PLAYERS))
    n_parts = -(-n_parts // parts) * parts   # a multiple of the parts (threads: none waits on a last run alone)
    if n_parts > 1 and batch.n_tournaments >= 2 * n_parts:
        return split_batch(batch, n_parts)
    return [batch]


def chunks(batch: Batch, workers: int = 1) -> list[Batch]:
    """:func:`runs` of the batch for ``workers`` threads, or as many as pay: fewer where the batch has under
    :data:`THREAD_ROWS` game rows for each."""
    return runs(batch, max(1, min(workers, batch.games.height // THREAD_ROWS)))


def as_specs(specs: str | Sequence[str | TieBreakSpec]) -> list[TieBreakSpec]:
    """Specs from a comma-separated list, or a list of strings and specs."""
    if isinstance(specs, str):
        return parse_specs(specs)
    out: list[TieBreakSpec] = []
    for s in specs:
        out.extend([s] if isinstance(s, TieBreakSpec) else parse_specs(s))
    for s in out:
        if s.reference is not None:
            raise TbstatsError(f"{s}: team reference scores (:MP/:GP) need team tie-breaks, not supported yet")
    return out


def tiebreak_values(ctx: Context, spec: TieBreakSpec, rules: str) -> Values:
    """Values of one value tie-break under ``rules`` (US tie-breaks always use their own edition)."""
    return ctx.values(spec, FIXED_EDITION.get(spec.name, rules), kernel_of(spec.name))


def compute(batch: Batch, specs: str | Sequence[str | TieBreakSpec], *, rules: str = "fide-2026",
            force_type: str | None = None, after_round: int | None = None, unrated_rating: int | None = None,
            lots: int | None = None, context: Context | None = None, workers: int = 1) -> pl.DataFrame:
    """One row per player: source, tournament, start_no, name, rating, points, rank, then one column per spec.

    ``rank`` orders by points then the specs in the order given (C.07 4.2). Partition tie-breaks (DE) have
    no value: their column holds the rank that points and the list up to and including DE give. With
    ``lots`` (a seed), ties left at the end are broken by a seeded drawing of lots instead of shared.
    ``workers`` > 1 splits the batch into (at least) that many runs of whole tournaments computed on threads
    (numpy and polars release the GIL), or fewer where the batch is too small for them to pay (:func:`chunks`);
    batches of more than :data:`CHUNK_PLAYERS` players are computed in runs of at most about that many. The
    table is the same.
    """
    if isinstance(specs, str) and specs.strip().lower() == FROM_FILE:
        return _compute_from_file(batch, rules=rules, force_type=force_type, after_round=after_round,
                                  unrated_rating=unrated_rating, lots=lots, workers=workers)
    parsed = as_specs(specs)
    rules = check_edition(rules)
    # runs of whole tournaments: one per worker, and none larger than CHUNK_PLAYERS, so that the arrays of
    # a run stay bounded and the cost grows linearly with the batch
    parts = chunks(batch, workers) if context is None else [batch]
    if len(parts) > 1:
        def run(part: Batch) -> pl.DataFrame:
            return compute(part, parsed, rules=rules, force_type=force_type, after_round=after_round,
                           unrated_rating=unrated_rating, lots=lots)

        return pl.concat(map_threads(run, parts, workers=workers) if workers > 1 else [run(p) for p in parts])
    if batch.players.is_empty():
        schema: dict[str, pl.DataType] = {
            "source": pl.String(), "tournament": pl.Int64(), "start_no": pl.Int32(), "name": pl.String(),
            "rating": pl.Int32(), "points": pl.Float64(), "rank": pl.Int64()}
        schema.update({str(s): pl.Int64() if get_tiebreak(s.name).integer else pl.Float64()
                       for s in parsed})
        return pl.DataFrame(schema=schema)
    ctx = context or make_context(batch, force_type=force_type, after_round=after_round,
                                  unrated_rating=unrated_rating)
    d = ctx.roster
    # (columns taken by name, and rows by a numpy index, below: polars' select and gather run its query engine,
    # about 0.1 ms each on any size)
    players = players_in_order(batch.players[["tournament", "start_no", "name", "rating"]], ctx.player_order)
    t = tournaments_by_id(batch)
    pts = ctx.values(TieBreakSpec("PTS"), rules, kernel_of("PTS"))
    columns: dict[str, pl.Series] = {
        "source": t["source"].rechunk()[d.tix],   # (a gather from a column of several chunks: 7x slower)
        "tournament": players["tournament"],
        "start_no": players["start_no"],
        "name": players["name"],
        "rating": players["rating"],
        "points": pl.Series(pts.as_float()),
    }
    if lots is not None:
        ctx.set_lots(lots)
    steps = rank_steps(ctx, [*parsed, TieBreakSpec("LOTS")] if lots is not None else parsed, rules,
                       dtype=rank_dtype(d))
    columns["rank"] = pl.Series(steps[-1], dtype=pl.Int64)
    values = {i: tiebreak_values(ctx, spec, rules) for i, spec in enumerate(parsed)
              if get_tiebreak(spec.name).kind != "partition"}
    if context is None:
        ctx.release_stages(gathers=True)   # every value is known: players x rounds arrays can go before the table
    for i, spec in enumerate(parsed):
        name = str(spec)
        if i not in values:
            columns[name] = pl.Series(steps[i + 1], dtype=pl.Int64)
        else:
            columns[name] = _column(name, values[i], get_tiebreak(spec.name).integer)
    if "edition" not in columns and rules == "auto":
        names, code = np.unique(ctx.edition_of, return_inverse=True)   # (a few names: gathered, not converted)
        columns["edition"] = pl.Series(names.tolist(), dtype=pl.String).gather(code.reshape(-1)[d.tix])
    return pl.DataFrame(columns)


def _compute_from_file(batch: Batch, **options: object) -> pl.DataFrame:
    """Each tournament under its own 202/212 list: a ``tiebreaks`` column names it, ``TB1``... hold the values.

    Tournaments without a (readable) list are ranked by points alone, with a null ``tiebreaks``.
    """
    ids = tournaments_by_id(batch)["tournament"].to_list()
    groups: dict[tuple[TieBreakSpec, ...], list[int]] = {}
    for tid, listed in zip(ids, declared_lists(batch), strict=True):
        groups.setdefault(tuple(listed or ()), []).append(tid)
    parts = []
    for key, members in groups.items():
        table = compute(batch.select(members), list(key), **options)  # type: ignore[arg-type]
        names = [str(s) for s in key]
        parts.append(table.rename({n: f"TB{i}" for i, n in enumerate(names, start=1)}).with_columns(
            pl.lit(",".join(names) or None, pl.String).alias("tiebreaks"),
            *[pl.col(f"TB{i}").cast(pl.Float64) for i in range(1, len(names) + 1)]))
    if not parts:
        return compute(batch, [], **options)  # type: ignore[arg-type]
    out = pl.concat(parts, how="diagonal_relaxed").sort("tournament", "start_no")
    lead = [c for c in out.columns if not c.startswith("TB") and c not in ("tiebreaks", "edition")]
    positional = sorted((c for c in out.columns if c.startswith("TB")), key=lambda c: int(c[2:]))
    return out.select(*lead, "tiebreaks", *positional, *[c for c in ("edition",) if c in out.columns])


def _column(name: str, values: Values, integer: bool) -> pl.Series:
    """Counts and ratings as integers, points as exact decimals; undefined as null."""
    if integer:   # the values' own buffer (no copy into polars), with a validity mask
        return arrow_series(name, pa.array(values.num, type=pa.int64(), mask=~values.defined))
    return pl.Series(name, values.as_float(), nan_to_null=not values.defined.all())   # (a polars pass when asked)
