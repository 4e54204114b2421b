"""Batches of whole tournaments: a batch read cut into runs of at most ``batch_size`` tournaments (:func:`runs`),
and how many tournaments a part of a columnar model holds (:func:`unit_size`, whole runs)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

import numpy as np
import polars as pl

from tbstats.model.batch import Batch, source_files

#: A part of a model holds at least this many tournaments (whole runs of ``batch_size``): its scans and its
#: check are paid once for many small batches, which are then cut from it in memory (a few MB of rows).
UNIT_TOURNAMENTS: Final = 512


def unit_size(batch_size: int, least: int | None = None) -> int:
    """The tournaments of one part of a model: the smallest multiple of ``batch_size`` of at least ``least``
    (by default :data:`UNIT_TOURNAMENTS`, read when called), so that a part's batches are cut where runs of
    ``batch_size`` would be.

    >>> unit_size(1), unit_size(100), unit_size(2000), unit_size(2000, 5000)
    (512, 600, 2000, 6000)
    """
    least = UNIT_TOURNAMENTS if least is None else least
    return batch_size * max(1, -(-least // batch_size))


def runs(batch: Batch, batch_size: int, *, by_source: bool = True) -> Iterator[Batch]:
    """A batch cut into runs of at most ``batch_size`` whole tournaments, in the order of its tournaments table.

    With ``by_source`` the warnings go with the run of their source's first tournament (the last run when
    none), ordered by that tournament, so that the order is the same however the batch is cut; otherwise
    they all go with the first run, in their order.
    """
    ids = batch.tournaments["tournament"]
    warnings = batch.warnings
    run_of = pl.Series([0] * warnings.height, dtype=pl.Int64)
    if by_source and warnings.height:   # (most batches have none: their order costs a few ms of polars calls)
        file_of = source_files()
        rows = batch.tournaments.with_row_index("_row")
        firsts = pl.concat([rows.select("source", "_row"), rows.select(file_of.alias("source"), "_row")]).group_by(
            "source").agg(pl.col("_row").min())
        row = warnings.join(firsts, on="source", how="left", maintain_order="left")["_row"].fill_null(
            max(len(ids) - 1, 0)).cast(pl.Int64)
        order = np.argsort(row.to_numpy(), kind="stable")
        warnings, run_of = warnings[order], row.gather(order) // batch_size
    if len(ids) <= batch_size:
        yield Batch.of_checked(batch.tournaments, batch.players, batch.games, warnings)
        return
    cuts = _cuts(batch, batch_size)
    # the warnings are in run order: each run's are one slice
    bounds = np.searchsorted(run_of.to_numpy(), np.arange(-(-len(ids) // batch_size) + 1))
    for k, lo in enumerate(range(0, len(ids), batch_size)):
        mine = warnings.slice(int(bounds[k]), int(bounds[k + 1] - bounds[k]))
        if cuts is not None:   # tables in tournament order: each run is one slice of each
            t, p, g = (df.slice(int(at[k]), int(at[k + 1] - at[k])) for df, at in zip(
                (batch.tournaments, batch.players, batch.games), cuts, strict=True))
            yield Batch.of_checked(t, p, g, mine)
            continue
        chosen = ids.slice(lo, batch_size)
        keep = pl.col("tournament").is_in(chosen.implode())
        yield Batch.of_checked(batch.tournaments.filter(keep), batch.players.filter(keep),
                               batch.games.filter(keep), mine)


def _cuts(batch: Batch, batch_size: int) -> list[np.ndarray] | None:
    """Where each run of ``batch_size`` tournaments starts in each table (and where the tables end), when the
    tournaments are in id order and every row of the players and games is in order of a known tournament;
    else None."""
    ids = batch.tournaments["tournament"]
    if ids.null_count():
        return None
    known = ids.to_numpy()
    if len(known) > 1 and not (known[1:] > known[:-1]).all():
        return None
    firsts = known[::batch_size]
    out = [np.r_[np.arange(0, len(known), batch_size), len(known)]]
    for df in (batch.players, batch.games):
        column = df["tournament"]
        if column.null_count():
            return None
        values = column.to_numpy()
        if len(values) > 1 and not (values[1:] >= values[:-1]).all():
            return None
        distinct = values[np.r_[0, np.flatnonzero(values[1:] != values[:-1]) + 1]] if len(values) else values
        at = np.minimum(np.searchsorted(known, distinct), len(known) - 1)
        if not (known[at] == distinct).all():
            return None
        out.append(np.r_[np.searchsorted(values, firsts), len(values)])
    return out
