"""The benchmark archives: seeded events written as TRF files, 1,000 per directory, with a ``meta.json`` of
their shape (made once, reused; nothing here is timed).

- :func:`make_archive`: simulated Swiss events of one shape (the uniform profile).
- :func:`make_mix_archive`: a profile of :mod:`tbstats.simulation.mix` (``mix``, the headline; ``club``,
  small Swiss events and round robins).
- :func:`own_archive`: the TRF files of a directory of the user's (a real archive, or a hidden one), linked in.
- :func:`sample_archive`: the first files of an archive, for the side-by-side runs.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final


@dataclass(frozen=True)
class Archive:
    """A seeded archive on disk: TRF files, the model ``tbstats ingest`` wrote from them, and its shape."""

    root: Path

    @property
    def trf(self) -> Path:
        return self.root / "trf"

    @property
    def model(self) -> Path:
        return self.root / "model"

    def meta(self) -> dict[str, Any]:
        meta: dict[str, Any] = json.loads((self.root / "meta.json").read_text())
        return meta

    def trf_files(self) -> list[Path]:
        """Its TRF files in path order (:func:`trf_files`)."""
        return trf_files(self.trf)


def trf_files(root: Path) -> list[Path]:
    """The TRF files under ``root`` in path order: the extensions tbstats reads as TRF (any case), hidden ones left
    out as tbstats leaves them."""
    from tbstats.io.kinds import TRF_EXTENSIONS

    return sorted(p for p in root.rglob("*") if p.suffix.lower() in TRF_EXTENSIONS and p.is_file()
                  and not any(part.startswith(".") for part in p.relative_to(root).parts))


#: The mixed archives' generation: an archive written by an earlier one is made again (2: players and events
#: carry names, federations, ids, dates and records, tbstats.simulation.identity; 3: names spelt locally, with
#: letters beyond ASCII, in a third of the events; 4: players drawn from a population of people who come back
#: from event to event, tbstats.simulation.population; games, ratings and results as in 3).
MIX_GENERATION: Final = 4


def _fresh(archive: Archive, asked: dict[str, Any]) -> bool:
    """Whether the archive must be made: then its directory is emptied (an unfinished one, or one whose
    ``meta.json`` differs from ``asked`` in any key: another seed, size, shape, profile or generation, is made
    again); False when a finished one of that description is there to reuse."""
    if (archive.root / "meta.json").is_file():
        meta = archive.meta()
        if all(meta.get(key) == value for key, value in asked.items()):
            return False
    if archive.root.exists():
        shutil.rmtree(archive.root)
    archive.trf.mkdir(parents=True)
    return True


def _write_files(archive: Archive, numbers: Iterable[int], texts: Iterable[str]) -> int:
    """Write each event's TRF text as file ``NNN/NNNNNN.trf`` (1,000 per directory); the bytes written."""
    size = 0
    for n, text in zip(numbers, texts, strict=True):
        path = archive.trf / f"{n // 1000:03d}" / f"{n:06d}.trf"
        path.parent.mkdir(exist_ok=True)
        data = text.encode()
        path.write_bytes(data)
        size += len(data)
    return size


def make_archive(root: Path, *, events: int, players: int, rounds: int, seed: int, chunk: int = 10_000) -> Archive:
    """Simulate ``events`` Swiss events (in blocks of ``chunk``, seeds ``seed``, ``seed + 1``, ...) and write
    them as TRF files, 1,000 per directory. Nothing here is timed; a finished archive is reused."""
    archive = Archive(root)
    if not _fresh(archive, {"events": events, "players": players, "rounds": rounds, "seed": seed, "chunk": chunk}):
        return archive
    from tbstats.io.trf import write_trf
    from tbstats.simulation import SimulationConfig, simulate

    rows = size = 0
    for k, first in enumerate(range(0, events, chunk)):
        cfg = SimulationConfig(tournaments=min(chunk, events - first), players=players, rounds=rounds,
                               seed=seed + k, unrated_rate=0.0)
        batch = simulate(cfg, workers=2).batch
        rows += batch.games.height
        size += _write_files(archive, range(first, first + batch.n_tournaments), write_trf(batch).values())
    meta = {"events": events, "players": players, "rounds": rounds, "seed": seed, "chunk": chunk,
            "game_rows": rows, "trf_bytes": size}
    (root / "meta.json").write_text(json.dumps(meta))
    return archive


def make_mix_archive(root: Path, *, events: int, seed: int, profile: str = "mix") -> Archive:
    """The archive of ``events`` events of a profile of :mod:`tbstats.simulation.mix` (seed ``seed``: event sizes,
    kinds, byes, forfeits, withdrawals and unrated players drawn like a real archive), written block by block as
    TRF files. Nothing here is timed; a finished archive is reused."""
    archive = Archive(root)
    if not _fresh(archive, {"events": events, "profile": profile, "generation": MIX_GENERATION, "seed": seed}):
        return archive
    from tbstats.io.trf import write_trf
    from tbstats.simulation.mix import iter_mix, profile_config

    rows = size = 0
    kinds: dict[str, int] = {}
    for block in iter_mix(profile_config(profile, events=events, seed=seed)):
        rows += block.batch.games.height
        for kind, n in block.kinds["kind"].value_counts().iter_rows():
            kinds[kind] = kinds.get(kind, 0) + n
        size += _write_files(archive, block.batch.tournaments["tournament"].to_list(),
                             write_trf(block.batch).values())
    meta = {"events": events, "profile": profile, "generation": MIX_GENERATION, "players": None, "rounds": None,
            "seed": seed,
            "game_rows": rows, "trf_bytes": size, "kinds": dict(sorted(kinds.items()))}
    (root / "meta.json").write_text(json.dumps(meta))
    return archive


def own_archive(source: Path, root: Path) -> Archive:
    """The TRF files under ``source`` as an archive: ``root/trf`` a link to ``source`` (never written to), and
    its shape counted by reading them once (untimed; files tbstats rejects or skips are counted apart, and left
    out of the game rows). The model is written into ``root`` by the ingest stage, as for the other archives."""
    from tbstats.io.sources import iter_batches

    source = source.resolve()
    if not source.is_dir():
        raise SystemExit(f"--trf {source}: not a directory")
    archive = Archive(root)
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    archive.trf.symlink_to(source, target_is_directory=True)
    stream = iter_batches([str(archive.trf)])
    events = rows = 0
    for batch, _ in stream:
        events += batch.n_tournaments
        rows += batch.games.height
    if not events:
        raise SystemExit(f"--trf {source}: no tournament tbstats can read ({stream.rejected} files rejected, "
                         f"{stream.skipped} skipped)")
    stats = [p.stat() for p in archive.trf_files()]
    meta = {"events": events, "profile": "own", "source": str(source), "players": None, "rounds": None,
            "seed": None, "game_rows": rows, "trf_bytes": sum(st.st_size for st in stats),
            "files": stream.files, "rejected": stream.rejected, "skipped": stream.skipped,
            # (a sample of it is made again when the archive's files change)
            "generation": f"own:{source}:{len(stats)}:{sum(st.st_mtime_ns for st in stats)}"}
    (root / "meta.json").write_text(json.dumps(meta))
    return archive


def mix_profile(meta: dict[str, Any]) -> str | None:
    """The :mod:`tbstats.simulation.mix` profile an archive was drawn from, None for a uniform one."""
    from tbstats.simulation.mix import PROFILES

    profile = meta.get("profile")
    return profile if profile in PROFILES else None


def archive_label(meta: dict[str, Any]) -> str:
    """Which archive a figure was measured on, in words (a mix profile, the uniform Swiss shape, or the user's)."""
    if meta.get("profile") == "own":
        return f"own ({meta['source']})"
    profile = mix_profile(meta)
    if profile is not None:
        return f"{profile} (seed {meta['seed']})"
    return f"uniform {meta['players']}×{meta['rounds']} Swiss (seed {meta['seed']})"


#: What a sample's meta.json says of itself; every other key is its source's, and must match for it to be reused.
_SAMPLE_OWN: Final = ("events", "game_rows", "trf_bytes", "kinds", "sample_of")


def sample_archive(source: Archive, root: Path, files: int) -> Archive:
    """The first ``files`` TRF files of ``source`` (hard links or copies), for the side-by-side runs (made again
    when ``source`` was)."""
    archive = Archive(root)
    drawn = {k: v for k, v in source.meta().items() if k not in _SAMPLE_OWN}   # (seed, profile, generation...)
    if (root / "meta.json").is_file() and all(archive.meta().get(k) == v for k, v in drawn.items()):
        return archive
    from tbstats.io.trf import read_trf

    if root.exists():
        shutil.rmtree(root)
    archive.trf.mkdir(parents=True)
    chosen = source.trf_files()[:files]
    for k, path in enumerate(chosen):   # (numbered: files of different directories may share a name)
        target = archive.trf / f"{k:06d}-{path.name}"
        try:
            os.link(path, target)
        except OSError:
            shutil.copyfile(path, target)
    result = read_trf([(str(p), p.read_bytes()) for p in chosen])
    meta = {**source.meta(), "events": len(chosen), "game_rows": result.batch.games.height,
            "trf_bytes": sum(p.stat().st_size for p in chosen), "sample_of": str(source.root)}
    (root / "meta.json").write_text(json.dumps(meta))
    return archive
