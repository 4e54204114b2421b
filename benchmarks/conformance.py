"""FIDE's checker and tbstats side by side on TRF files, for any tie-break lists: how many ranks, and values, agree.

    TBSTATS_TIEBREAKSERVER=/opt/tiebreakserver python benchmarks/conformance.py DIR [-t LIST ...] [--sample N]

Every TRF file under DIR that holds one event (the checker reads one event a file) is given to the checker
(:func:`peers.run_checker`: one process, its command line, the encoding tbstats finds, ``-n`` for an event part-way
through) once per list, and ranked by tbstats under the edition the checker took for it (by the event's start:
its 2024 rules before 1 March 2026). Individual events are compared by start number with ``compute``, team events
by team with ``compute_teams``, also with every team rated alike (:func:`peers.alike_strengths`: the checker does
not read a team's 310 strength and rates every team 0). Values are compared where tbstats gives a value (DE, EDE
and the board tie-breaks hold ranks) and, for teams, where it is not a rating (those differ by the strengths).
One Markdown table on standard output, then the first differences; nothing is written elsewhere. The checker
stays outside the project (see benchmarks/README.md); nothing is timed here.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import peers
from archives import trf_files
from stages import STANDARD_LIST

#: Differences listed after the table, per list.
SHOWN = 5


@dataclass
class Tally:
    """What one list gave over the files."""

    events: int = 0
    no_ranks: int = 0                  # files the checker gave no ranks for
    not_read: int = 0                  # files of several events, or a list tbstats does not take
    competitors: int = 0
    equal: int = 0
    teams: int = 0
    teams_equal: int = 0
    teams_alike: int = 0               # team ranks equal with every team rated alike
    values: dict[str, list[int]] = field(default_factory=dict)   # tie-break -> [equal, compared]
    shown: list[str] = field(default_factory=list)


def _same(mine: Any, theirs: Any) -> bool:
    """One value of tbstats and of the checker (a number or its text; undefined: None, or 0 or blank there)."""
    if mine is None:
        return theirs in (None, "", 0, "0")
    try:
        return abs(float(mine) - float(theirs)) < 1e-9
    except (TypeError, ValueError):
        return False


def _compared(tiebreaks: str, team: bool) -> list[bool]:
    """Per tie-break of a list, in order, whether its tbstats column holds a value comparable with the checker's
    (not a rank, as DE, EDE and the board tie-breaks hold; for teams, not a rating: it comes from the 310
    strengths, which the checker does not read)."""
    from tbstats.engine.teams.tiebreaks import get_team_tiebreak, parse_team_specs
    from tbstats.engine.tiebreaks import TIEBREAKS, get_tiebreak, parse_specs

    out = []
    for spec in (parse_team_specs if team else parse_specs)(tiebreaks):
        kind = (get_team_tiebreak if team else get_tiebreak)(spec.name).kind
        rating = team and spec.name in TIEBREAKS and TIEBREAKS[spec.name].rating_based
        out.append(kind == "value" and not rating)
    return out


def compare(files: list[Path], lists: list[str], rules: str = "fide-2026") -> dict[str, Tally]:
    """Each list's :class:`Tally` over ``files`` (see the module's text): the checker run on each file of one event
    once per list, then :func:`add`."""
    from tbstats.io.trf import read_trf

    checker = peers.load_checker()
    out = Path(tempfile.mkdtemp(prefix="tbs-conformance-"))
    tallies = {lst: Tally() for lst in lists}
    try:
        for path in files:
            raw = path.read_bytes()
            batch = read_trf([(str(path), raw)]).batch
            if batch.n_tournaments != 1:
                continue
            rounds = peers.part_way(batch.tournaments).get(str(path))
            for lst, tally in tallies.items():
                status = peers.run_checker(checker, path, peers.encoding(raw), lst, rounds, out / "out.json")
                result = json.loads((out / "out.json").read_text()).get("tiebreakResult", {}) \
                    if status == 0 and (out / "out.json").is_file() else {}
                add(tally, path, raw, result, lst, rules, batch)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return tallies


def add(tally: Tally, path: Path, raw: bytes, result: dict[str, Any], tiebreaks: str, rules: str = "fide-2026",
        batch: Any = None) -> None:
    """One file's checker output (its ``tiebreakResult``; empty where the checker gave none) for the list
    ``tiebreaks``, compared with tbstats' ranks and values of the file's event (``batch``, when read already),
    into ``tally``."""
    from tbstats.engine.compute import compute
    from tbstats.engine.teams.standings import compute_teams
    from tbstats.errors import TbstatsError
    from tbstats.io.trf import read_trf
    from tbstats.model.teams import team_events

    tally.events += 1
    theirs = {c["cid"]: c for c in result.get("competitors", [])}
    if not theirs:
        tally.no_ranks += 1
        _first(tally, path, "the checker gave no ranks (it rejects the list, or the file)")
        return
    batch = read_trf([(str(path), raw)]).batch if batch is None else batch
    if batch.n_tournaments != 1:   # (the checker reads one event a file)
        tally.not_read += 1
        _first(tally, path, f"{batch.n_tournaments} events read, not one")
        return
    team = bool(team_events(batch.tournaments)[0])   # (as tbstats tells them: a team type, or team records)
    edition = peers.CHECKER_EDITIONS.get(result.get("rules"), rules)
    key = "team" if team else "start_no"
    try:
        tables = [compute_teams(b, tiebreaks, rules=edition) for b in
                  (batch, read_trf([(str(path), peers.alike_strengths(raw))]).batch)] if team \
            else [compute(batch, tiebreaks, rules=edition)]
    except TbstatsError as exc:
        tally.not_read += 1
        _first(tally, path, f"tbstats refuses the list ({exc})")
        return
    rows = [{r[key]: r for r in table.iter_rows(named=True)} for table in tables]
    compared = _compared(tiebreaks, team)
    names = tables[0].columns[-len(compared):]   # (tbstats' names: ``KS/L+1`` is its ``KS/L1``)
    what = "team" if team else "player"
    for cid, c in theirs.items():
        mine = rows[0].get(cid, {})
        same = mine.get("rank") == c["rank"]
        tally.competitors += 1
        tally.equal += same
        if team:
            tally.teams += 1
            tally.teams_equal += same
            same = rows[1].get(cid, {}).get("rank") == c["rank"]
            tally.teams_alike += same
        if not same and len(tally.shown) < SHOWN:
            tally.shown.append(f"{path} {what} {cid}: rank {mine.get('rank')}, the checker's {c['rank']} ({edition})")
        for name, use, value in zip(names, compared, c.get("tiebreakScore", [])[1:], strict=False):
            if use:
                count = tally.values.setdefault(name, [0, 0])
                ok = _same(mine.get(name), value)
                count[0] += ok
                count[1] += 1
                if not ok and len(tally.shown) < SHOWN:
                    tally.shown.append(f"{path} {what} {cid}: {name} {mine.get(name)}, the checker's {value} "
                                       f"({edition})")


def _first(tally: Tally, path: Path, reason: str) -> None:
    """List why ``path`` was not compared, the first time a file is left out for ``reason``: the reasons of a run
    that compares nothing are then on screen, once each."""
    if len(tally.shown) < SHOWN and not any(s.endswith(f": {reason}") for s in tally.shown):
        tally.shown.append(f"{path}: {reason}")


def table(tallies: dict[str, Tally]) -> str:
    """The Markdown table of the tallies, then each list's first differences."""
    lines = ["| list | events compared | no checker ranks | not compared (several events, or a list tbstats refuses) "
             "| ranks equal | team ranks equal (rated alike) | values equal |", "|---|---:|---:|---:|---:|---:|---|"]
    for lst, t in tallies.items():
        compared = t.events - t.no_ranks - t.not_read
        teams = f"{t.teams_equal:,}/{t.teams:,} ({t.teams_alike:,})" if t.teams else "-"
        values = ", ".join(f"{name} {ok:,}/{n:,}" for name, (ok, n) in t.values.items()) or "-"
        lines.append(f"| `{lst}` | {compared:,} | {t.no_ranks:,} | {t.not_read:,} | {t.equal:,}/{t.competitors:,} "
                     f"| {teams} | {values} |")
    for lst, t in tallies.items():
        if t.shown:
            lines += ["", f"First differences (or files not compared), `{lst}`:", *(f"- {d}" for d in t.shown)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("directory", type=Path, help="the TRF files under it (any depth)")
    parser.add_argument("-t", "--tiebreaks", action="append", metavar="LIST",
                        help=f"a tie-break list, as the checker and tbstats name them (repeat for more; default: "
                             f"{STANDARD_LIST})")
    parser.add_argument("--sample", type=int, default=None, metavar="N", help="only the first N files (path order)")
    parser.add_argument("--rules", default="fide-2026",
                        help="the edition for an event whose checker output names none (default fide-2026)")
    args = parser.parse_args(argv)
    if not args.directory.is_dir():
        parser.error(f"{args.directory} is not a directory")
    if args.sample is not None and args.sample < 1:
        parser.error(f"--sample must be at least 1, not {args.sample}")
    files = trf_files(args.directory)
    files = files[:args.sample] if args.sample else files
    print(table(compare(files, args.tiebreaks or [STANDARD_LIST], args.rules)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
