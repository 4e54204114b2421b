"""Side by side: the slow reference implementation of the tests, and FIDE's TieBreakServer when one is present.

Both run in a fresh process (``run.py --stage reference`` / ``--stage tiebreakserver``) over the TRF files of
a small sample archive and print one JSON line. TieBreakServer is never imported by tbstats: its directory is
taken from the environment variable ``TBSTATS_TIEBREAKSERVER`` and its checker is called once per file in one
process, as its own command line would (``tiebreakchecker.py -i FILE -o OUT.json -t PTS LIST``:
it ranks by the list given, so points come first); its outputs are
read back after the timer and compared with tbstats', ranks and values (``conformance.add``).
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

from archives import Archive
from stages import STANDARD_LIST

TESTS = Path(__file__).resolve().parent.parent / "tests"
ENV_TBS = "TBSTATS_TIEBREAKSERVER"
#: RefRound codes by game type for rounds that are not over-the-board games (tests/reference.py data model).
_UNPLAYED_CODES = {"forfeit_win": "+", "forfeit_loss": "-", "double_forfeit": "-", "pab": "U", "full_bye": "F",
                   "half_bye": "H", "zero_bye": "Z", "absent": "Z"}


def tiebreakserver_dir() -> Path | None:
    """The TieBreakServer checkout named by the environment, when it holds ``tiebreakchecker.py``."""
    path = os.environ.get(ENV_TBS, "").strip()
    if path and (Path(path) / "tiebreakchecker.py").is_file():
        return Path(path)
    return None


def _cpu() -> float:
    t = os.times()
    return t.user + t.system


def to_reference(batch: Any) -> list[tuple[int, Any]]:
    """Each tournament of a batch as a ``reference.RefTournament`` (tests/reference.py), with its id."""
    import polars as pl
    import reference

    from tbstats.model.games import SCORING_KINDS

    games = batch.games.sort("tournament", "player", "round").partition_by("tournament", as_dict=True)
    players = batch.players.sort("tournament", "start_no").partition_by("tournament", as_dict=True)
    out = []
    for t in batch.tournaments.sort("tournament").iter_rows(named=True):
        tid, n = t["tournament"], t["rounds_played"]
        points = {k: Fraction(t[f"pts_{k}"], t["scale"]) for k in SCORING_KINDS}
        g = games[(tid,)].filter(pl.col("round") <= n)
        rounds: dict[int, list[Any]] = {}
        for r in g.iter_rows(named=True):
            code = r["result"] if r["game_type"] == "played" else _UNPLAYED_CODES[r["game_type"]]
            rounds.setdefault(r["player"], []).append(reference.RefRound(r["opponent"], r["colour"], code))
        refs = tuple(reference.RefPlayer(p["start_no"], p["rating"], tuple(rounds.get(p["start_no"], ())))
                     for p in players[(tid,)].iter_rows(named=True))
        out.append((tid, reference.RefTournament(refs, n, t["rounds"], t["event_type"] == "round_robin", points)))
    return out


def reference_stage(root: Path, rules: str) -> dict[str, Any]:
    """Standings by ``reference.rank`` per tournament, then ``tbstats.engine.compute`` on the same batch; ranks
    compared."""
    sys.path.insert(0, str(TESTS))
    import reference

    from tbstats.engine.compute import compute
    from tbstats.io.trf import read_trf

    files = Archive(root).trf_files()
    batch = read_trf([(str(p), p.read_bytes()) for p in files]).batch
    events = to_reference(batch)
    specs = STANDARD_LIST.split(",")
    t0, c0 = time.perf_counter(), _cpu()
    want = {(tid, p): r for tid, t in events for p, r in reference.rank(t, specs, rules).items()}
    ref_s, ref_cpu = time.perf_counter() - t0, _cpu() - c0
    t0, c0 = time.perf_counter(), _cpu()
    table = compute(batch, STANDARD_LIST, rules=rules)
    tb_s, tb_cpu = time.perf_counter() - t0, _cpu() - c0
    got = {(t, s): r for t, s, r in table.select("tournament", "start_no", "rank").iter_rows()}
    same = sum(got.get(k) == v for k, v in want.items())
    return {"stage": "reference", "seconds": ref_s, "cpu": ref_cpu, "rows": batch.games.height,
            "events": len(events), "tbstats_seconds": tb_s, "tbstats_cpu": tb_cpu, "ranks": len(want),
            "ranks_equal": same}


def encoding(raw: bytes) -> str:
    """The encoding to tell the checker a file is in: UTF-16 by its byte-order mark, else UTF-8 (a mark skipped)
    when it decodes so, else Windows-1252, else Latin-1 (the order tbstats' reader tries them in).

    >>> encoding("Müller".encode()), encoding("Müller".encode("cp1252")), encoding("x".encode("utf-16"))
    ('utf-8-sig', 'cp1252', 'utf-16')
    """
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    for name in ("utf-8-sig", "cp1252"):
        try:
            raw.decode(name)
        except UnicodeDecodeError:
            continue
        return name
    return "latin-1"


def rounds_after(files: list[Path]) -> dict[str, int]:
    """:func:`part_way` of the events of ``files``, by file."""
    from tbstats.io.trf import read_trf

    return part_way(read_trf([(str(p), p.read_bytes()) for p in files]).batch.tournaments)


def part_way(tournaments: Any) -> dict[str, int]:
    """The events part-way through (fewer rounds played than their ``XXR``/``142`` plan) of a tournaments table, and
    their rounds played, by source: the checker, which by default ranks them as if the planned rounds were all
    played, is asked for the standings after the last round played (``-n``), as tbstats computes them (rules.md
    4.8)."""
    import polars as pl

    part = tournaments.filter(pl.col("rounds_played") < pl.col("rounds"))
    return dict(zip(part["source"].to_list(), part["rounds_played"].to_list(), strict=True))


def load_checker() -> Any:
    """TieBreakServer's ``tiebreakchecker`` module, from the checkout the environment names (else exit, saying so)."""
    where = tiebreakserver_dir()
    if where is None:
        raise SystemExit(f"{ENV_TBS} does not name a TieBreakServer checkout (with tiebreakchecker.py)")
    if str(where) not in sys.path:
        sys.path.insert(0, str(where))
    return importlib.import_module("tiebreakchecker")


def run_checker(checker: Any, path: Path, codec: str, tiebreaks: str, rounds: int | None, out: Path) -> int:
    """The checker's command line on one TRF file, its JSON written to ``out``; its status. It ranks by the list it
    is given, so points come first (``-t PTS LIST``); ``-b``: the encoding tbstats' reader finds (the checker reads
    Latin-1 unless told, and then finds the lines of names beyond ASCII misaligned in UTF-8 files, or fails on bytes
    it cannot decode); ``-n``: the rounds played of an event part-way through (:func:`rounds_after`). A file the
    checker fails on (an exception, where its command line would print a traceback) gives status -1 and no
    output, as a file it rejects gives its non-zero status: the run goes on."""
    saved = sys.argv
    sys.argv = ["tiebreakchecker.py", "-i", str(path), "-o", str(out), "-b", codec,
                *(["-n", str(rounds)] if rounds is not None else []), "-t", "PTS", *tiebreaks.split(",")]
    out.unlink(missing_ok=True)
    try:
        return int(checker.tiebreakchecker().common_main())
    except Exception:   # (its own failure on one file, not this harness's)
        out.unlink(missing_ok=True)
        return -1
    finally:
        sys.argv = saved


def tiebreakserver_stage(root: Path, rules: str) -> dict[str, Any]:
    """TieBreakServer's checker over every TRF file of ``root``, in this one process."""
    t0 = time.perf_counter()
    checker = load_checker()
    import_s = time.perf_counter() - t0
    files = Archive(root).trf_files()
    encodings = [encoding(p.read_bytes()) for p in files]   # (not timed)
    after = rounds_after(files)
    nonzero = 0
    out = Path(tempfile.mkdtemp(prefix="tbs-out-"))
    t0, c0 = time.perf_counter(), _cpu()
    for i, path in enumerate(files):
        nonzero += run_checker(checker, path, encodings[i], STANDARD_LIST, after.get(str(path)),
                               out / f"{i}.json") != 0
    seconds, cpu = time.perf_counter() - t0, _cpu() - c0
    results = []   # each file's output, compared with tbstats after the timer (conformance.add)
    for i, path in enumerate(files):
        written = out / f"{i}.json"   # (none where the checker failed on the file)
        results.append((str(path), json.loads(written.read_text()).get("tiebreakResult", {}) if written.is_file()
                        else {}))
    shutil.rmtree(out, ignore_errors=True)
    version = importlib.import_module("version").version().get("version", "?")
    return {"stage": "tiebreakserver", "seconds": seconds, "cpu": cpu, "rows": Archive(root).meta()["game_rows"],
            "events": len(files), "nonzero": nonzero, "import_seconds": import_s, "version": version,
            "results": results}


#: The checker's editions (the date in its output's ``rules``: it takes the one in force at the event's start, its
#: 2024 rules before 1 March 2026) as tbstats names them.
CHECKER_EDITIONS = {"2024-08-01": "fide-2024", "2026-03-01": "fide-2026"}


def alike_strengths(raw: bytes, strength: int = 2000) -> bytes:
    r"""A TRF file as FIDE's checker rates its teams: every ``310`` record's strength (columns 48-53) set to one
    value. The checker does not read that field (its TRF reader skips it) and rates every team 0, so its team ARO
    is 0 and its TPR, PTP, APRO and APPO the performance alone; tbstats takes each team's rating from the field
    (rules.md 9.2). One rating for every team shifts each of those values by the same amount, so it ranks the
    teams as the checker does.

    >>> line = b"310   1 Oaks".ljust(47) + b"  2200   5.0   7.5"
    >>> out = alike_strengths(line + b"\r\n001    1 x\r\n310   2 Yews\r\n")
    >>> out[47:53], out[53:].splitlines()
    (b'  2000', [b'   5.0   7.5', b'001    1 x', b'310   2 Yews                                     2000'])
    """
    codec = encoding(raw)
    out = []
    for line in raw.decode(codec).splitlines(keepends=True):
        if line.startswith("310"):
            body = line.rstrip("\r\n")
            line = f"{body[:47]:<47}{strength:>6}{body[53:]}{line[len(body):]}"
        out.append(line)
    return "".join(out).encode("utf-8" if codec == "utf-8-sig" else codec)
