"""What the inputs name: files, directories, glob patterns and archive members, each once, with its reader.

A directory is walked in name order (hidden entries ignored); a glob is expanded as a shell would; archives
are listed member by member; every input becomes an :class:`_Item` saying how to read it, or why it is
skipped or rejected without reading (see :mod:`tbstats.io.sources`).
"""

from __future__ import annotations

import glob
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

import polars as pl

from tbstats.io import archives, kinds, safe, tabular
from tbstats.io.kinds import is_pattern as is_pattern

Kind = Literal["trf", "tabular", "skip", "reject"]

#: Reader by file extension (lower case).
READERS: Final[dict[str, Literal["trf", "tabular"]]] = {
    **dict.fromkeys(kinds.TRF_EXTENSIONS, "trf"), **dict.fromkeys(kinds.EXTENSIONS, "tabular"),
}
READERS_TRF: Final = frozenset(kinds.TRF_EXTENSIONS)
ARCHIVES: Final = kinds.ARCHIVES
MISSING: Final = "no such file or directory"
#: How every skip reason starts; skipped files are listed in the ledger but are not problems.
SKIPPED: Final = "not a tournament file ("


@dataclass(frozen=True)
class _Item:
    """One input file: how to read it, or why it is skipped or rejected without reading."""

    name: str                       # the source name: a path, or 'archive.zip!member'
    kind: Kind
    path: str = ""                  # the file on disk (the archive for a member)
    member: str | None = None
    reason: str = ""
    #: (device, inode, member) when the expansion already took the file's stat; else found when needed
    identity: tuple[int, int, str] | None = field(default=None, compare=False, repr=False)


_new = object.__new__


def _made(name: str, kind: Kind, path: str = "", member: str | None = None, reason: str = "",
          identity: tuple[int, int, str] | None = None) -> _Item:
    """``_Item(name, kind, path, member, reason, identity)``, made without the frozen class's ``__init__`` (which
    sets each field through ``object.__setattr__``: 1.2 us, against 0.5): for the many items of a directory or an
    archive (100,000 members; a folder per event may hold as many other files as TRF files)."""
    item = _new(_Item)
    vars(item).update(name=name, kind=kind, path=path, member=member, reason=reason, identity=identity)
    return item


def _trf_file(path: str, identity: tuple[int, int, str]) -> _Item:
    return _made(path, "trf", path, identity=identity)


def _skip(name: str, ext: str, note: str = "", identity: tuple[int, int, str] | None = None) -> _Item:
    what = f"extension {name[-len(ext):]}" if ext else "no extension"
    return _made(name, "skip", reason=f"{SKIPPED}{what}{note})", identity=identity)


# --------------------------------------------------------------------------------------- expanding inputs

def _expand(inputs: Sequence[str]) -> list[_Item]:
    """Every file the inputs name, in order, each real file once (links and loops followed to one identity)."""
    items: list[_Item] = []
    for text in inputs:
        st, problem = safe.checked_stat(text)   # (one stat an input: a command line may name 10,000 files)
        if st is not None and stat.S_ISDIR(st.st_mode):
            items.extend(_walk(os.path.normpath(text)))
        elif st is not None and problem is None:
            items.extend(_explicit(os.path.normpath(text), st, None))
        elif os.path.lexists(text):
            items.append(_Item(os.path.normpath(text), "reject", text, reason=problem or MISSING))
        elif is_pattern(text):
            matches = sorted(os.path.normpath(m) for m in glob.glob(text, recursive=True))
            if not matches:
                items.append(_Item(text, "reject", reason="no file matches the pattern"))
            matched = set(matches)
            models: dict[str, str | None] = {}
            for m in matches:
                if kinds.is_proof_of(m, matched):   # a flat model file's proof, matched with the file
                    continue
                model = _model_of(m, models)
                if model:
                    items.extend(_walk(model))
                    continue
                st, problem = safe.checked_stat(m)   # (one stat a match: a directory, or the file's own)
                items.extend(_walk(m) if st is not None and stat.S_ISDIR(st.st_mode) else _explicit(m, st, problem))
        else:
            items.append(_Item(text, "reject", reason=MISSING))
    return once_each(items)


def once_each(items: list[_Item]) -> list[_Item]:
    """The items without repeats of one real file: the same (device, inode) and member count once."""
    seen: set[object] = set()
    unique = []
    for item in items:
        key = _identity(item)
        if key not in seen:
            seen.add(key)
            unique.append(item)
    return unique


def _identity(item: _Item) -> object:
    if item.identity is not None:
        return item.identity
    path = item.path or item.name.split("!", 1)[0]
    member = item.member if item.member is not None else item.name.partition("!")[2]
    try:
        st = os.stat(path)
    except OSError:
        try:
            st = os.stat(os.path.realpath(path))  # a path deep in a symlink loop fails plain stat
        except OSError:
            return item.name
    return st.st_dev, st.st_ino, member


def _model_of(path: str, known: dict[str, str | None]) -> str | None:
    """The directory dataset a matched file or directory belongs to (a table part, hive partitions included);
    ``known``: the answers for the directories already walked up from (a pattern's matches share them: each
    directory is looked at once, not once for every file in it)."""
    parent = os.path.dirname(path)
    walked = []
    found: str | None = None
    while parent and parent != os.path.dirname(parent):
        if parent in known:
            found = known[parent]
            break
        walked.append(parent)
        if tabular.is_model_dir(parent):
            found = os.path.normpath(parent)
            break
        parent = os.path.dirname(parent)
    known.update(dict.fromkeys(walked, found))
    return found


def _explicit(path: str, st: os.stat_result | None = None, problem: str | None = None) -> list[_Item]:
    """A file named as such, or matched by a pattern; ``st``, ``problem``: its :func:`tbstats.io.safe.checked_stat`
    when taken already."""
    if st is None and problem is None:
        st, problem = safe.checked_stat(path)
    if problem is not None:
        return [_Item(path, "reject", path, reason=problem)]
    ext = kinds.suffix(path)
    if ext in ARCHIVES:
        return _archive(path)
    if READERS.get(ext) == "tabular":
        return [_Item(path, "tabular", path)]
    return [_Item(path, "trf", path)] if st is None else [_trf_file(path, (st.st_dev, st.st_ino, ""))]


def _walk(top: str) -> list[_Item]:
    if tabular.is_model_dir(top):
        return [_Item(top, "tabular", top)]
    items: list[_Item] = []
    _walk_into(top, items)
    items.sort(key=_name_of)
    return items


def _name_of(item: _Item) -> str:
    return item.name


def _entry_name(entry: os.DirEntry[str]) -> str:
    return entry.name


def _walk_into(root: str, items: list[_Item]) -> None:
    """The items of one directory and, in name order, of its subdirectories (hidden entries ignored; a
    linked directory is read only when it is a model, as ``os.walk`` does not follow links).

    A regular file (``os.scandir`` knows it without a stat) takes its identity from its directory's device
    and its inode; anything else a reader would read is checked by a stat (links, FIFOs, devices)."""
    try:
        with os.scandir(root) as it:
            entries = [e for e in it if not e.name.startswith(".")]
        device = os.stat(root).st_dev
    except OSError:   # as os.walk: a directory that cannot be listed is passed over
        return
    base = os.path.normpath(root)
    if kinds.lists_model(root, entries):   # (a dataset found as its parent is walked: told by its entries' names)
        items.append(_Item(base, "tabular", base))
        return
    entries.sort(key=_entry_name)
    prefix = "" if base == "." else base if base.endswith("/") else f"{base}/"
    dirs = [e for e in entries if _is_dir(e)]
    for e in dirs:
        path = prefix + e.name
        if not e.is_symlink():
            _walk_into(path, items)
        elif tabular.is_model_dir(path):   # (a linked directory is read only when it is a model)
            items.append(_Item(path, "tabular", path))
    # (the names only when a flat model file's proof may be among them: it is read with its file)
    names = {e.name for e in entries} if any(e.name.endswith(kinds.PROOF_SUFFIX) for e in entries) else None
    subdirs = {e.name for e in dirs}
    trf = READERS_TRF
    for e in entries:
        name = e.name
        if name in subdirs or (names is not None and kinds.is_proof_of(name, names)):
            continue
        path = prefix + name  # == normpath(join(root, name)): a listed name holds no separator
        # (most entries of an archive: a TRF file; as _name_suffix tells it of a name not starting with a dot)
        if name[name.rfind("."):].lower() in trf and e.is_file(follow_symlinks=False):
            items.append(_trf_file(path, (device, e.inode(), "")))
            continue
        ext = _name_suffix(name)
        reader = READERS.get(ext)
        if reader is None and ext not in ARCHIVES:   # (a regular file's identity as a TRF file's: no stat)
            items.append(_skip(path, ext, identity=(device, e.inode(), "") if e.is_file(follow_symlinks=False)
                               else None))
            continue
        identity: tuple[int, int, str] | None = None
        if e.is_file(follow_symlinks=False):
            problem, identity = None, (device, e.inode(), "")
        else:
            st, problem = safe.checked_stat(path)
            identity = (st.st_dev, st.st_ino, "") if st else None
        if problem is not None:
            items.append(_Item(path, "reject", path, reason=problem))
        elif ext in ARCHIVES:
            items.extend(_archive(path))
        elif reader == "trf":
            items.append(_Item(path, "trf", path, identity=identity))
        else:
            items.append(_Item(path, "tabular", path) if _looks_flat(path)
                         else _skip(path, ext, ", not a tbstats model"))


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _name_suffix(name: str) -> str:
    """:func:`tbstats.io.kinds.suffix` of a file name (no directory in it), without ``os.path.splitext``.

    >>> [_name_suffix(n) for n in ("a.", "..trf", ".a.trf", "a.b.TRF", "x", "b.tar.gz")]
    ['.', '', '.trf', '.trf', '', '.tar.gz']
    """
    lower = name.lower()
    if lower.endswith(ARCHIVES):
        return kinds.suffix(lower)
    dot = lower.rfind(".")
    return lower[dot:] if dot > 0 and lower[:dot].lstrip(".") else ""


def _looks_flat(path: str) -> bool:
    """Whether a tabular file has the flat model's key columns (cheap: schema or header only)."""
    try:
        fmt = tabular.model_format(path)
        if fmt == "parquet":
            names = list(pl.read_parquet_schema(path))
        elif fmt == "arrow":
            names = list(pl.read_ipc_schema(path))
        else:
            with open(path, encoding="utf-8", errors="replace") as f:
                names = [c.strip().strip('"') for c in f.readline().split(",")]
    except (OSError, pl.exceptions.PolarsError):
        return False
    return all(c in names for c in tabular.FLAT_SIGNATURE)


def _archive(path: str) -> list[_Item]:
    """The members of a zip or tar archive; a member that is not TRF by extension is skipped.

    A member that cannot be read safely (unsafe name, link or device, encrypted, unknown compression)
    is rejected by name; an archive that ends early keeps the members listed before the damage.
    """
    st, problem = safe.checked_stat(path)
    if problem is not None or st is None:
        return [_Item(path, "reject", path, reason=problem or MISSING)]
    members, damage = archives.list_members(path)
    if damage is not None and not members:
        return [_Item(path, "reject", path, reason=f"not a readable archive ({damage})")]
    items = []
    for member, problem in sorted(members):
        # (hidden: a name starting with a dot, or macOS's resource forks; './' is no such name: tar -C dir .;
        # each part looked at only where one may be)
        hidden = ("/." in "/" + member or "__MACOSX" in member) and any(
            (part.startswith(".") and part != ".") or part == "__MACOSX" for part in member.split("/"))
        if hidden and safe.unsafe_name(member) is None:
            continue
        name = f"{path}!{member}"
        ext = _name_suffix(member[member.rfind("/") + 1:])
        identity = (st.st_dev, st.st_ino, member)   # (the archive's, taken once: not a stat for each member)
        if problem is not None:
            items.append(_Item(name, "reject", path, member, reason=problem, identity=identity))
        elif READERS.get(ext) == "trf":
            items.append(_made(name, "trf", path, member, identity=identity))
        elif READERS.get(ext) == "tabular" or ext in ARCHIVES:
            items.append(_skip(name, ext, ", inside an archive: extract it to read it", identity))
        else:
            items.append(_skip(name, ext, identity=identity))
    if damage is not None:
        items.append(_Item(path, "reject", path, reason=f"archive damaged after {len(members)} members "
                                                          f"({damage}); the members listed before are read"))
    return items
