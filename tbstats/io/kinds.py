"""What a path holds, told from its name and the directory entries beside it, how many TRF files are read at a
time and how large an archive member may be: no file is opened and nothing heavy is imported, so the command line
can ask before anything else (whether worker processes for TRF files are worth starting at once)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final, Literal

Format = Literal["parquet", "arrow", "csv"]

#: Columnar model file formats by file extension (lower case).
EXTENSIONS: Final[dict[str, Format]] = {
    ".parquet": "parquet", ".arrow": "arrow", ".ipc": "arrow", ".feather": "arrow", ".csv": "csv",
}

#: TRF file extensions (lower case), and archives whose members are read (tbstats.io.expand).
TRF_EXTENSIONS: Final = (".trf", ".txt", ".tab")
ARCHIVES: Final = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")
#: Default cap on the decompressed size of one archive member (``--max-member-bytes``).
MAX_MEMBER_BYTES: Final = 64 * 2**20

#: The end of the name of the proof ``ingest`` keeps beside a flat model file it wrote (tbstats.io.tabular.proof):
#: part of that file, not an input of its own.
PROOF_SUFFIX: Final = ".checked.json"

#: Files whose sizes tell the bytes of many (:func:`estimated_bytes`): a stat each, about 2 microseconds.
SIZE_SAMPLE: Final = 64

#: TRF files parsed at a time (a piece of a part, :func:`tbstats.io.sources.pieces`): the reader's working arrays
#: (several times the game rows' size) then stay bounded whatever ``--batch-files`` is, and a worker process reads
#: one piece of a part while another reads the next; the batches are the same. Each read has fixed costs: pieces
#: of 1,000 files computed the 10k mix 3% faster than pieces of 500 with one process, 6% with two
#: (benchmarks/RESULTS.md).
READ_FILES: Final = 1000
#: ... and at most about this many bytes of them: files of several events each, or of very large events, come in
#: fewer to a piece (1,000 files of the usual few KB hold less), so that a part of them is still read in pieces,
#: on both threads (300 files of 10 events each were one piece: read by one thread, then mapped).
READ_BYTES: Final = 8 << 20


def is_proof_of(name: str, names: frozenset[str] | set[str]) -> bool:
    """Whether ``name`` is the proof of a model file among ``names`` (the entries of the same directory).

    >>> is_proof_of("a.parquet.checked.json", {"a.parquet"}), is_proof_of("a.parquet.checked.json", set())
    (True, False)
    """
    return name.endswith(PROOF_SUFFIX) and name[:-len(PROOF_SUFFIX)] in names


def suffix(name: str) -> str:
    """The extension that decides the reader: '.tar.gz' style double ones included, lower case.

    >>> suffix("a/B.TAR.GZ"), suffix("x.trf"), suffix("README")
    ('.tar.gz', '.trf', '')
    """
    lower = name.lower()
    if lower.endswith(ARCHIVES):
        for ext in ARCHIVES:
            if lower.endswith(ext):
                return ext
    return os.path.splitext(lower)[1]


def is_archive(path: str) -> bool:
    """Whether a path names a zip or tar archive by its extension.

    >>> is_archive("x/a.TGZ"), is_archive("a.trf")
    (True, False)
    """
    return suffix(path) in ARCHIVES


def is_pattern(text: str) -> bool:
    """Whether an input is a glob pattern (it has ``*``, ``?`` or ``[``)."""
    return bool(frozenset("*?[") & set(text))


def is_model_dir(path: str | Path) -> bool:
    """Whether ``path`` is a directory dataset: it holds a ``tournaments`` table file or part directory."""
    if not os.path.isdir(path):   # (most paths asked about: a file)
        return False
    p = Path(path)
    if any((p / f"tournaments{ext}").is_file() for ext in EXTENSIONS):
        return True
    parts = p / "tournaments"
    return parts.is_dir() and any(q.is_file() and q.suffix.lower() in EXTENSIONS for q in parts.rglob("*"))


def lists_model(path: str, entries: Sequence[os.DirEntry[str]]) -> bool:
    """:func:`is_model_dir` of a directory whose entries were listed already: from their names, without a stat
    (a ``tournaments`` part directory alone is looked into)."""
    by_name = {e.name: e for e in entries if e.name.startswith("tournaments")}
    if not by_name:
        return False
    if any((e := by_name.get(f"tournaments{ext}")) is not None and e.is_file() for ext in EXTENSIONS):
        return True
    return "tournaments" in by_name and is_model_dir(path)


def columnar_name(path: str) -> bool:
    """Whether a path or a glob pattern names columnar model files by its extension.

    >>> columnar_name("x/games.parquet"), columnar_name("arc/**/*.csv"), columnar_name("a.trf")
    (True, True, False)
    """
    return os.path.splitext(os.path.normpath(path))[1].lower() in EXTENSIONS


def trf_files(inputs: Iterable[str], most: int) -> tuple[int, list[str]]:
    """The TRF files of the inputs counted by name from directory entries (hidden ones and directory datasets
    left out, as the expansion does; paths that do not exist passed over) until ``most`` are found, and the
    paths of those counted; a glob pattern or an archive may hold any number, and counts as ``most``.

    >>> files, paths = trf_files(["data/examples"], 10**6)
    >>> files == len(paths) > 0, trf_files(["data/examples"], 1)[0] >= 1, trf_files(["no/such.zip"], 5)[0]
    (True, True, 0)
    """
    found: list[str] = []
    for given in inputs:   # (one at a time: of a command line of 10,000 files, only the first ``most`` are looked at)
        todo = [str(given)]
        while todo:
            path = todo.pop()
            if is_pattern(path):
                return max(most, len(found)), found
            try:
                mode = os.stat(path).st_mode   # (one stat a path)
            except OSError:
                continue
            if stat.S_ISREG(mode):
                if path.lower().endswith(ARCHIVES):
                    return max(most, len(found)), found
                if path.lower().endswith(TRF_EXTENSIONS):
                    found.append(path)
            elif stat.S_ISDIR(mode):
                try:
                    with os.scandir(path) as listed:
                        entries = [e for e in listed if not e.name.startswith(".")]
                except OSError:
                    continue
                if lists_model(path, entries):
                    continue
                for e in entries:
                    if e.is_dir(follow_symlinks=False):   # (a linked directory is not walked)
                        todo.append(e.path)
                    elif e.name.lower().endswith(ARCHIVES):
                        return max(most, len(found)), found
                    elif e.name.lower().endswith(TRF_EXTENSIONS):
                        found.append(e.path)
            if len(found) >= most:
                return len(found), found
    return len(found), found


def estimated_bytes(paths: Sequence[str], files: int, sample: int = SIZE_SAMPLE) -> float:
    """The bytes of ``files`` files told from the sizes of ``sample`` of ``paths`` spread over them in name order
    (the same ones however the paths were listed; a file that cannot be read counts as empty: it is rejected
    without being parsed); 0 without paths."""
    if not paths:
        return 0.0
    ordered = sorted(paths)
    step = max(1, len(ordered) // sample)
    sizes = []
    for path in ordered[::step][:sample]:
        try:
            sizes.append(os.stat(path).st_size)
        except OSError:
            sizes.append(0)
    return files * sum(sizes) / len(sizes)


def files_a_piece(mean: float) -> int:
    """TRF files read at a time when a file holds ``mean`` bytes (0: not known): :data:`READ_FILES`, fewer when
    they are large, about :data:`READ_BYTES` of them (at least one).

    >>> files_a_piece(0), files_a_piece(4_000), files_a_piece(2 << 20), files_a_piece(20 << 20)
    (1000, 1000, 4, 1)
    """
    return max(1, min(READ_FILES, int(READ_BYTES // mean) if mean else READ_FILES))
