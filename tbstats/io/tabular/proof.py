"""The record a model keeps of the checks its files passed when tbstats wrote them.

``ArchiveWriter`` (``tbstats ingest -o ...``) proves each batch clean with the reader's own checks
(:func:`tbstats.io.check.proven_clean`) as it writes it, and records the proof: for a directory dataset one per
part, ``DIR/checked/part-NNNNN.json``; for a flat Parquet file one beside it, ``FILE.parquet.checked.json``, once
the whole file is written. A proof holds the tournament ids, the size and BLAKE2b digest of each file, and a
digest of the checks' own source. A reader skips the checks for the rows it takes from such files only when the
proofs still hold, recomputed from the bytes on disk:

- every file of each part it reads from has the recorded size and digest, and none is missing;
- each proof was made by the same checks (the same source of the checking modules);
- the tournament ids of the parts it reads from do not overlap (parts copied in from another dataset).

Anything else (a file edited, renamed, replaced or removed, a proof missing or stale) and the checks run as
they always do, and a problem is reported with its file and row. Nothing is taken on trust.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import os
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Final

from tbstats.io.kinds import PROOF_SUFFIX

#: The directory of a dataset that holds the proofs, one per part.
PROOFS: Final = "checked"
#: The modules whose source defines what a proof vouches for.
CHECKING: Final = ("tbstats.io.check", "tbstats.io.clean", "tbstats.model.games", "tbstats.model.rules")


@functools.cache
def checks_digest() -> str | None:
    """A digest of the checking modules' source: a proof made by other checks does not hold. None when the
    source cannot be read (then no proof is made, and none holds)."""
    import importlib

    h = hashlib.blake2b(digest_size=16)
    for name in CHECKING:
        file = importlib.import_module(name).__file__
        if not file:
            return None
        try:
            h.update(Path(file).read_bytes())
        except OSError:
            return None
    return h.hexdigest()


def _digest(path: Path) -> tuple[int, str]:
    """Size and BLAKE2b digest of a file's bytes (cached while its size, time and inode stay the same)."""
    st = path.stat()
    return _digest_of(str(path), st.st_size, st.st_mtime_ns, st.st_ino)


@functools.lru_cache(maxsize=1024)
def _digest_of(path: str, size: int, mtime_ns: int, inode: int) -> tuple[int, str]:
    h = hashlib.blake2b(digest_size=32)
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            h.update(chunk)
    return size, h.hexdigest()


def proof_path(part_file: str | Path) -> Path:
    """Where the proof of the part that ``part_file`` (``DIR/<table>/part-NNNNN.ext``) belongs to is kept."""
    p = Path(part_file)
    return p.parent.parent / PROOFS / f"{p.stem}.json"


def flat_proof_path(file: str | Path) -> Path:
    """Where the proof of a flat file is kept: beside it."""
    return Path(f"{file}{PROOF_SUFFIX}")


def record(files: Sequence[str | Path], first_id: int, last_id: int, *, flat: bool = False) -> None:
    """Write the proof of one part just written and proven clean (``flat``: of a flat file, whole), its files
    and tournament ids."""
    checks = checks_digest()
    if checks is None:
        return
    where = flat_proof_path(files[0]) if flat else proof_path(files[0])
    root = where.parent if flat else where.parent.parent
    entries = {}
    for f in files:
        size, digest = _digest(Path(f))
        entries[Path(f).relative_to(root).as_posix()] = {"size": size, "blake2b": digest}
    body = {"checks": checks, "ids": [first_id, last_id], "files": entries}
    where.parent.mkdir(parents=True, exist_ok=True)
    tmp = where.with_name(f".{where.name}.{os.getpid()}")
    tmp.write_text(json.dumps(body, indent=1), encoding="utf-8")
    os.replace(tmp, where)     # a reader never sees half a proof


def _load(where: Path) -> dict[str, Any] | None:
    try:
        body = json.loads(where.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return body if isinstance(body, dict) else None


def _holding(where: Path, root: Path) -> dict[str, Any] | None:
    """The proof at ``where`` if it still holds (same checks, every file it names, relative to ``root``,
    unchanged), else None."""
    body, checks = _load(where), checks_digest()
    if body is None or checks is None or body.get("checks") != checks:
        return None
    files, ids = body.get("files"), body.get("ids")
    if not isinstance(files, dict) or not files or not (isinstance(ids, list) and len(ids) == 2
                                                        and all(isinstance(i, int) for i in ids)):
        return None
    for name, entry in files.items():
        if not isinstance(entry, dict) or Path(name).is_absolute() or ".." in Path(name).parts:
            return None
        try:   # a regular file of the recorded size before its bytes are read
            st = (root / name).stat()
            if not stat.S_ISREG(st.st_mode) or st.st_size != entry.get("size"):
                return None
            if _digest(root / name) != (entry.get("size"), entry.get("blake2b")):
                return None
        except OSError:
            return None
    return body


def vouched(files: Iterable[str]) -> bool:
    """Whether proofs that still hold cover every one of ``files`` (the part files a read takes rows from),
    and the parts they belong to hold distinct tournament ids."""
    proofs: dict[Path, set[str]] = {}
    for f in files:
        where = proof_path(f)
        proofs.setdefault(where, set()).add(Path(f).relative_to(where.parent.parent).as_posix())
    ranges = []
    for where, names in proofs.items():
        body = _holding(where, where.parent.parent)
        if body is None or not names <= set(body["files"]):
            return False
        ranges.append(tuple(body["ids"]))
    ranges.sort()
    return bool(ranges) and all(prev[1] < nxt[0] for prev, nxt in itertools.pairwise(ranges))


def vouched_flat(file: str) -> bool:
    """Whether the proof beside a flat file still holds for it."""
    body = _holding(flat_proof_path(file), Path(file).parent)
    return body is not None and Path(file).name in body["files"]


def holds(path: str | Path) -> bool:
    """Whether proofs that still hold cover a whole model tbstats wrote: every part file of a dataset
    directory, or a flat file. Its reader then runs no check; a model written by tbstats with other checks (an
    older version) is read with them, as any other (benchmarks ingest it again: they time today's reader)."""
    p = Path(path)
    if p.is_file():
        return vouched_flat(str(p))
    files = [str(f) for f in sorted(p.glob("*/part-*")) if f.parent.name != PROOFS and f.is_file()]
    return bool(files) and vouched(files)
