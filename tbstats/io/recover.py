"""A run of a columnar model that fails to read loses only what is damaged, the same for every batch size.

- Rows that break the model (a bad value, an orphan row: the checker's ledger, a value that does not
  parse) lose only their tournaments: the run is read again in halves down to runs of one tournament, cut
  where a run of one tournament of the model's plan would be (its *tiles*).
- A file of a dataset that cannot be read (a damaged page, a column of the wrong type: a
  :class:`~tbstats.errors.SchemaError` naming the file) loses only the tournaments of the run in that file's
  damaged row groups: the run is read again in segments of consecutive tiles, those that read nothing of the
  file together and those in the file row group by row group (the whole file when the plan does not know
  where its tournaments are), each segment recovered in turn if it fails.

Since a tile's fate depends only on the tile (its rows, its row groups), the tournaments kept and the ledger
are the same however the model is cut into batches. Anything else (no plan, a problem with no place) rejects
the run whole.
"""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl

from tbstats.errors import FormatError, SchemaError
from tbstats.io import csvruns, parts, safe
from tbstats.io.expand import _Item
from tbstats.io.trf import ERROR_SCHEMA
from tbstats.model.batch import Batch


def run(model: _Item, part: parts.TablePart, failed: Exception) -> tuple[pl.DataFrame, list[Batch]]:
    """The ledger of what ``part`` loses and the batches of the rest, in order (``failed``: what reading
    it at once raised)."""
    tiles = _tiles(model, part) if _in_rows(failed) or _bad_file(failed) is not None else []
    if len(tiles) < 2:
        return safe.model_ledger(model.name, model.path, failed), []
    return _recover(model, part, tiles, failed)


def _in_rows(exc: Exception) -> bool:
    """A failure found in some rows (the model's checker, a value that does not parse), not in a whole file."""
    return isinstance(exc, FormatError) and (exc.line is not None or getattr(exc, "ledger", None) is not None)


def _bad_file(exc: Exception) -> str | None:
    """The one file of a dataset that a failure is in, when it names one."""
    return exc.file if isinstance(exc, SchemaError) else None


def _tiles(model: _Item, part: parts.TablePart) -> list[parts.TablePart]:
    """The one-tournament runs of the model's plan that make up ``part`` (none when it cannot be planned)."""
    try:
        planned = parts.plan_model(model.path, model.name, 1) or []
    except Exception:  # the run is then rejected whole, as it would be read
        return []
    return [t for t in planned if part.lo <= t.lo and t.hi <= part.hi]


def _recover(model: _Item, part: parts.TablePart, tiles: list[parts.TablePart], failed: Exception
             ) -> tuple[pl.DataFrame, list[Batch]]:
    """:func:`run` of the tiles of ``part``, once reading them at once raised ``failed``."""
    if len(tiles) > 1 and _in_rows(failed):
        return _read_each(model, part, [tiles[:len(tiles) // 2], tiles[len(tiles) // 2:]])
    bad = _bad_file(failed)
    if len(tiles) > 1 and bad is not None:
        keys = _row_groups(bad, tiles)
        segments = [list(g) for _, g in itertools.groupby(tiles, key=lambda t: keys[id(t)])]
        if len(segments) > 1:
            return _read_each(model, part, segments)
    return safe.model_ledger(model.name, model.path, failed), []


def _read_each(model: _Item, part: parts.TablePart, segments: list[list[parts.TablePart]]
               ) -> tuple[pl.DataFrame, list[Batch]]:
    """Each segment of tiles read at once, and recovered when that fails; the ledgers and batches in order."""
    ledgers, good = [], []
    for segment in segments:
        try:
            good.append(parts.read_part(_joined(segment, part)))
        except Exception as exc:
            ledger, batches = _recover(model, part, segment, exc)
            ledgers.append(ledger)
            good.extend(batches)
    return pl.concat([pl.DataFrame(schema=ERROR_SCHEMA), *ledgers]).unique(maintain_order=True), good


def _row_groups(file: str, tiles: list[parts.TablePart]) -> dict[int, tuple[int, int]]:
    """Per tile (by ``id``): the first and last row group of ``file`` it reads; (-1, -1) when it reads none of
    the file; (0, 0) when it may read some of the file's rows but the plan does not know which (a file not in
    tournament order, not Parquet)."""
    starts = _group_starts(file)
    keys = {}
    for tile in tiles:
        sliced = dict(tile.rows)
        if file not in sliced:
            listed = any(file in files for table, _, files in tile.files if table != "warnings")
            keys[id(tile)] = (0, 0) if listed else (-1, -1)
            continue
        ranges = [r for r in sliced[file] if r[1] > r[0]]
        if not ranges:
            keys[id(tile)] = (-1, -1)
            continue
        lo, hi = min(r[0] for r in ranges), max(r[1] for r in ranges) - 1
        keys[id(tile)] = (int(np.searchsorted(starts, lo, "right")) - 1, int(np.searchsorted(starts, hi, "right")) - 1)
    return keys


def _group_starts(file: str) -> np.ndarray:
    """The first row of each row group of a Parquet file (one group at row 0 when unknown)."""
    import pyarrow.parquet as pq

    try:
        meta = pq.read_metadata(file)
    except Exception:  # not Parquet, or no footer: one group
        return np.zeros(1, dtype=np.int64)
    sizes = [meta.row_group(k).num_rows for k in range(meta.num_row_groups)]
    return np.concatenate([[0], np.cumsum(sizes[:-1], dtype=np.int64)]) if sizes else np.zeros(1, dtype=np.int64)


def _joined(runs: list[parts.TablePart], within: parts.TablePart) -> parts.TablePart:
    """Consecutive runs of the plan of ``within``'s model that lie inside ``within``, as one run: the files of
    ``within`` that the runs read, their rows joined per file."""
    if len(runs) == 1:
        return runs[0]
    rows: dict[str, list[tuple[int, int]]] = {}
    for run in runs:
        for file, ranges in run.rows:
            rows.setdefault(file, []).extend(ranges)
    used = {f for run in runs for _, _, files in run.files for f in files}
    files = tuple((table, base, tuple(f for f in fs if table == "warnings" or f in used))
                  for table, base, fs in within.files)
    return parts.TablePart(within.name, within.format, files, runs[0].lo, runs[-1].hi,
                           sum(r.tournaments for r in runs), any(r.warnings for r in runs),
                           tuple((f, tuple(csvruns.merged(r))) for f, r in rows.items()))
