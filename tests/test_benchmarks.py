"""Smoke test of the benchmark suite: a tiny run completes and writes nothing (its figures are never checked)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT


@pytest.mark.parametrize("archive", ["mix", "club", "uniform"])
def test_tiny_benchmark_run_completes(tmp_path: Path, archive: str) -> None:
    results = tmp_path / "RESULTS.md"
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick", "--sizes", "12", "--no-shapes",
         "--no-peers", "--stages", "dense,standings", "--repeat", "1", "--workdir", str(tmp_path / "work"),
         "--no-write", "--results", str(results), *([] if archive == "mix" else [f"--{archive}"])],
        capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    table = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    stages = [line.split(" | ")[0].lstrip("| ") for line in table]
    assert stages[1:] == ["ingest (CLI)", "dense view", "standings"]
    meta = json.loads((tmp_path / "work" / ("size-12" if archive == "uniform" else f"{archive}-12") / "meta.json"
                        ).read_text())
    if archive == "uniform":
        assert meta["game_rows"] == 12 * 25 * 9
    else:
        assert meta["profile"] == archive
    assert all(f"| 12 | {meta['game_rows']:,} |" in line for line in table[1:])
    heading = next(line for line in done.stdout.splitlines() if line.startswith("### Stages by archive size"))
    assert (f"{archive} archive" in heading) == (archive != "uniform")
    assert not results.exists()


def test_another_seed_draws_an_archive_of_its_own(tmp_path: Path) -> None:
    """``--seed N`` draws other events of the same kind, under a name of their own beside the default seed's, and
    says so; an archive is reused only when its meta.json says it is the one asked for (an archive of another
    seed under the same name is made again, never measured as if it were this one)."""
    work = tmp_path / "work"
    common = [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick", "--sizes", "12", "--no-shapes",
              "--no-peers", "--stages", "dense", "--repeat", "1", "--workdir", str(work), "--no-write"]
    seeded = subprocess.run([*common, "--seed", "5"], capture_output=True, text=True, check=False)
    assert seeded.returncode == 0, seeded.stderr
    meta = json.loads((work / "mix-12-seed5" / "meta.json").read_text())
    assert (meta["seed"], meta["events"], meta["profile"]) == (5, 12, "mix")
    assert "--seed 5" in seeded.stdout and "seed 5; " in seeded.stdout
    assert not (work / "mix-12").exists()

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from archives import make_mix_archive
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    stale = work / "mix-12"
    (work / "mix-12-seed5").rename(stale)   # a seed-5 archive where the default seed's belongs
    again = make_mix_archive(stale, events=12, seed=8)
    assert again.meta()["seed"] == 8 and again.meta()["game_rows"] != meta["game_rows"]
    assert make_mix_archive(stale, events=12, seed=8).meta() == again.meta()   # (reused as it is)
    bad = subprocess.run([*common, "--seed", "-1"], capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and "--seed must be at least 0" in bad.stderr


def test_a_run_on_an_archive_of_ones_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``run.py --trf DIR`` times the stages on the TRF files under DIR, read where they are (never written to),
    counted as tbstats reads them (bad files rejected, other files skipped), and samples them for the side-by-side
    runs under names of their own (files of two directories may share a name)."""
    import shutil

    own = tmp_path / "archive"
    examples = sorted((ROOT / "data" / "examples").glob("*.trf"))
    for folder in ("2024", "2025"):
        (own / folder).mkdir(parents=True)
        for path in examples:
            shutil.copyfile(path, own / folder / path.name)
    (own / "2025" / "broken.trf").write_text("012 no players here\n", encoding="utf-8")
    (own / "README.md").write_text("not a tournament\n", encoding="utf-8")
    before = sorted((p.relative_to(own), p.stat().st_mtime_ns) for p in own.rglob("*"))
    monkeypatch.delenv("TBSTATS_TIEBREAKSERVER", raising=False)
    work = tmp_path / "work"
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick", "--trf", str(own), "--no-shapes",
         "--stages", "dense,standings", "--repeat", "1", "--workdir", str(work), "--no-write"],
        capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert sorted((p.relative_to(own), p.stat().st_mtime_ns) for p in own.rglob("*")) == before
    meta = json.loads((work / "own-archive" / "meta.json").read_text())
    assert (meta["profile"], meta["events"], meta["rejected"], meta["skipped"]) == ("own", 2 * len(examples), 1, 1)
    table = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    assert f"| {2 * len(examples)} | {meta['game_rows']:,} |" in table[2]
    assert any(line.startswith("## ") and f"archive under {own.resolve()}" in line
               for line in done.stdout.splitlines())
    sample = sorted(p.name for p in (work / "own-archive-sample-4" / "trf").iterdir())
    assert sample == [f"{k:06d}-{p.name}" for k, p in enumerate(examples[:4])]
    assert "ranks equal to tbstats" in done.stdout   # (the reference on the sample; the checker is not named)
    bad = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run.py"), "--trf", str(own), "--sizes", "10"],
                         capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and "--sizes does not go with --trf" in bad.stderr


def test_two_versions_side_by_side(tmp_path: Path) -> None:
    """benchmarks/ab.py runs the last commit and the working tree in alternating rounds, with their outputs
    compared (the same code here: byte-identical), and refuses revisions it cannot run."""
    ab = [sys.executable, str(ROOT / "benchmarks" / "ab.py")]
    done = subprocess.run([*ab, "HEAD", "--rounds", "2", "--", "compute", str(ROOT / "data" / "examples"), "-t", "BH",
                           "--rules", "fide-2026", "-o", "{out}.csv"], cwd=tmp_path,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    rows = [line.split(" | ")[0].lstrip("| ") for line in done.stdout.splitlines() if line.startswith("| ")]
    assert rows == ["version", "HEAD", "working tree", "new / old"]
    assert "2 alternating rounds" in done.stdout and "byte-identical in every round" in done.stdout
    assert not list(tmp_path.iterdir())   # written in the tool's own directory, and removed
    bad = subprocess.run([*ab, "no-such-revision", "--rounds", "1", "--", "compute", str(ROOT / "data" / "examples")],
                         capture_output=True, text=True, check=False)
    assert bad.returncode != 0 and "no-such-revision" in bad.stderr


def test_team_ranks_are_also_counted_as_the_checker_rates_the_teams(tmp_path: Path) -> None:
    """FIDE's checker does not read a 310 record's strength (columns 48-53) and rates every team alike:
    ``peers.alike_strengths`` sets that field alone to one value, in the file's own encoding, and
    ``conformance.add`` counts the team ranks both ways (and compares no team rating, which the field makes)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import conformance
        import peers
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    from tbstats.engine.teams.standings import compute_teams
    from tbstats.io.trf import read_trf

    raw = (ROOT / "data" / "teams" / "team_swiss.trf").read_bytes().replace(b"Oaks   ", "Öaks   ".encode("cp1252"))
    out = peers.alike_strengths(raw)
    before, after = raw.decode("cp1252").splitlines(), out.decode("cp1252").splitlines()
    assert len(before) == len(after)
    strengths = set()
    for old, new in zip(before, after, strict=True):
        if old.startswith("310"):
            strengths.add(old[47:53])
            assert new[47:53] == "  2000" and (new[:47], new[53:]) == (old[:47], old[53:])
        else:
            assert new == old
    assert len(strengths) == 5   # (each team had its own)
    path = tmp_path / "team_swiss.trf"
    path.write_bytes(raw)
    # an output in the checker's form: its ranks those of the teams rated alike, its values tbstats' own
    alike = compute_teams(read_trf([(str(path), out)]).batch, peers.STANDARD_LIST, rules="fide-2026")
    assert alike["ARO"].n_unique() == 1   # (every opponent rated alike)
    names = ["mp", *alike.columns[-len(peers.STANDARD_LIST.split(",")):]]
    result = {"rules": "2026-03-01", "competitors": [
        {"cid": row["team"], "rank": row["rank"], "tiebreakScore": [row[n] for n in names]}
        for row in alike.iter_rows(named=True)]}
    tally = conformance.Tally()
    conformance.add(tally, path, raw, result, peers.STANDARD_LIST)
    assert (tally.events, tally.competitors, tally.teams, tally.teams_alike) == (1, 5, 5, 5)
    assert "ARO" not in tally.values and "TPR" not in tally.values and "DE" not in tally.values
    assert tally.values["BH"] == [5, 5] and all(n == 5 for _, n in tally.values.values())


def test_conformance_needs_the_checker_and_counts_what_it_compares(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """benchmarks/conformance.py: without FIDE's checker it says so and stops; its table counts ranks and values
    as compared (the comparison itself needs the checker, which is not part of the test run)."""
    monkeypatch.delenv("TBSTATS_TIEBREAKSERVER", raising=False)
    (tmp_path / "a.trf").write_bytes((ROOT / "data" / "examples" / "e2_cut_exception.trf").read_bytes())
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "conformance.py"), str(tmp_path)],
                          capture_output=True, text=True, check=False)
    assert done.returncode != 0 and "TBSTATS_TIEBREAKSERVER does not name a TieBreakServer checkout" in done.stderr
    bad = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "conformance.py"), str(tmp_path / "none")],
                         capture_output=True, text=True, check=False)
    assert bad.returncode == 2 and "is not a directory" in bad.stderr
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import conformance
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    assert conformance._same(2.5, "2.5") and conformance._same(7, 7) and conformance._same(None, 0)
    assert not conformance._same(2.5, "2.0") and not conformance._same(None, "1.5")
    # values of the list where tbstats holds a value: DE holds a rank; a team's ARO is a rating (its 310 strength)
    assert conformance._compared("BH/C1,DE,ARO,WIN", team=False) == [True, False, True, True]
    assert conformance._compared("EDE,BH:MP,ARO,TBR,MPvGP", team=True) == [False, True, False, False, True]
    tally = conformance.Tally(events=3, no_ranks=1, competitors=10, equal=9, teams=4, teams_equal=3, teams_alike=4,
                              values={"BH": [10, 10]}, shown=["x.trf player 2: rank 3, the checker's 2"])
    text = conformance.table({"BH,DE": tally})
    assert "| `BH,DE` | 2 | 1 | 0 | 9/10 | 3/4 (4) | BH 10/10 |" in text and "- x.trf player 2" in text
    # files left out say why, once per reason: no output of the checker, a list tbstats refuses
    path = tmp_path / "a.trf"
    raw = path.read_bytes()
    some = {"competitors": [{"cid": 1, "rank": 1, "tiebreakScore": [0, 0]}]}
    left = conformance.Tally()
    for result, tiebreaks in (({}, "BH"), ({}, "BH"), (some, "BH,NOPE"), (some, "BH,NOPE")):
        conformance.add(left, path, raw, result, tiebreaks)
    assert (left.events, left.no_ranks, left.not_read, left.competitors) == (4, 1 + 1, 1 + 1, 0)
    assert left.shown == [f"{path}: the checker gave no ranks (it rejects the list, or the file)",
                          f"{path}: tbstats refuses the list (unknown tie-break 'NOPE' (expected a name such as BH, "
                          "SB, DE; `tbstats tiebreaks` lists them).)"]


def test_a_checker_failure_on_one_file_is_a_status_not_the_end_of_the_run(tmp_path: Path) -> None:
    """``peers.run_checker``: the checker's command line is given the file, and an exception it raises on one
    file (it fails on some real files) comes back as status -1 with no output, so the run goes on."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import peers
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    seen: list[list[str]] = []

    class Checker:
        def __init__(self, fail: bool) -> None:
            self.fail = fail

        def tiebreakchecker(self) -> Checker:
            return self

        def common_main(self) -> int:
            seen.append(list(sys.argv))
            if self.fail:
                raise KeyError("round")
            Path(sys.argv[sys.argv.index("-o") + 1]).write_text("{}")
            return 0

    out = tmp_path / "out.json"
    assert peers.run_checker(Checker(False), tmp_path / "a.trf", "cp1252", "BH,SB", 5, out) == 0 and out.is_file()
    assert seen[0][1:] == ["-i", str(tmp_path / "a.trf"), "-o", str(out), "-b", "cp1252", "-n", "5",
                           "-t", "PTS", "BH", "SB"]
    assert peers.run_checker(Checker(True), tmp_path / "a.trf", "cp1252", "BH", None, out) == -1
    assert not out.exists() and "-n" not in seen[1]


def test_the_layouts_benchmark_runs_every_layout_and_finds_the_same_rows(tmp_path: Path) -> None:
    """benchmarks/bench_layouts.py on the examples (one run of each layout): every layout's row, each output
    holding the directory's rows (its timings are never checked)."""
    script, examples = ROOT / "benchmarks" / "bench_layouts.py", ROOT / "data" / "examples"
    done = subprocess.run([sys.executable, str(script), str(examples), "-n", "1"], capture_output=True, text=True,
                          check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = [line.split(" | ") for line in done.stdout.splitlines() if line.startswith("| ") and "---" not in line]
    assert [r[0].lstrip("| ") for r in rows[1:]] == ["directory", "large-files", "zip", "tar", "tar.gz", "glob",
                                                    "arguments", "tree", "event-folders", "flat-parquet",
                                                    "flat-arrow"]
    assert all(r[-1].rstrip(" |") == "yes" for r in rows[1:])
