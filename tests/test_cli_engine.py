"""The compute / explain / tiebreaks command-line contract."""

from __future__ import annotations

import csv
import json

import pytest
from click.testing import CliRunner
from helpers import FIXTURES, ROOT, requires_shared

from tbstats.cli import main

EXAMPLES = ROOT / "data" / "examples"


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, list(args))


def test_compute_columns_named_by_canonical_specs() -> None:
    r = run("compute", str(EXAMPLES / "e1_unplayed_rounds.trf"), "-t", "bh-c1,sb/m1,Ks/L-1,de", "-q")
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[0] == "source,tournament,start_no,name,rating,points,rank,BH/C1,SB/M1,KS/L-1,DE"


@requires_shared()
def test_undefined_values_are_empty_in_csv_and_null_in_json() -> None:
    path = str(FIXTURES / "swiss_2026.trf")
    csv_out = list(csv.reader(run("compute", path, "-t", "ARO,BH", "-q", "--format", "csv").stdout.splitlines()))
    assert csv_out[1][7] == "" and csv_out[1][8] == "26.0"  # ARO undefined: unrated players present
    rows = json.loads(run("compute", path, "-t", "ARO,BH", "-q", "--format", "json").stdout)
    assert rows[0]["ARO"] is None and rows[0]["BH"] == 26.0
    rated = json.loads(run("compute", path, "-t", "ARO", "-q", "--format", "json", "--unrated-rating", "1400").stdout)
    assert all(isinstance(r["ARO"], int) for r in rated)


def test_unknown_tiebreak_is_a_usage_error_with_a_hint() -> None:
    r = run("compute", str(EXAMPLES), "-t", "BHH/C1")
    assert r.exit_code == 2
    assert "unknown tie-break 'BHH/C1'" in r.output and "did you mean 'BH'" in r.output
    r = run("compute", str(EXAMPLES), "-t", "SB/L1")
    assert r.exit_code == 2 and "modifier L is not defined for SB" in r.output


@pytest.mark.parametrize(("spec", "message"), [
    ("BH/M1/C1", "'BH/M1/C1': M1 and C1 are two modifiers of one kind (a cut or a median): give one"),
    ("BH-C1/C2", "'BH-C1/C2': C1 and C2 are two modifiers of one kind (a cut or a median): give one"),
    ("KS/L1/L-1", "'KS/L1/L-1': L1 and L-1 are two modifiers of one kind: give one"),
    ("ARO/U1000/U1400", "'ARO/U1000/U1400': U1000 and U1400 are two modifiers of one kind: give one"),
    ("DE/P/P", "'DE/P/P': P given twice"),
])
def test_two_modifiers_of_one_kind_are_a_usage_error(spec: str, message: str) -> None:
    # (the later one replaced the earlier without a word: BH/M1/C1 computed BH/C1)
    r = run("compute", str(EXAMPLES), "-t", spec)
    assert r.exit_code == 2 and message in r.output, r.output


def test_modifiers_of_different_kinds_go_together() -> None:
    assert run("compute", str(EXAMPLES), "-t", "BH/C1/P,ARO/C1/U1400,KS/L-1").exit_code == 0
    r = run("compute", str(EXAMPLES), "-t", "BH", "--rules", "fide-2025")
    assert r.exit_code == 2 and "unknown rule edition" in r.output


def test_invalid_input_exit_codes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "bad.trf"
    bad.write_text("012 x\n001    1      A" + " " * 76 + "   7 w 1\n")
    r = run("compute", str(bad), "-t", "BH")
    assert r.exit_code == 3 and f"{bad}:2: round 1 opponent: opponent 7 does not exist" in r.output
    (tmp_path / "good.trf").write_bytes((EXAMPLES / "e1_unplayed_rounds.trf").read_bytes())
    r = run("compute", str(tmp_path), "-t", "BH", "--errors", str(tmp_path / "ledger.csv"))
    assert r.exit_code == 1 and "2 files: 1 loaded, 1 rejected" in r.stderr
    assert "bad.trf,2,round 1 opponent" in (tmp_path / "ledger.csv").read_text()
    assert len(r.stdout.splitlines()) == 5


def test_round_robin_buchholz_warning_and_force_flags() -> None:
    rr = str(EXAMPLES / "s2_round_robin.trf")
    r = run("compute", rr, "-t", "BH,SB")
    assert "must not be used in round robins" in r.stderr
    swiss = run("compute", rr, "-t", "BH", "--swiss", "-q", "--format", "json").stdout
    robin = run("compute", rr, "-t", "BH", "-q", "--format", "json").stdout
    assert json.loads(swiss) != json.loads(robin)  # the free round becomes a dummy under Swiss rules


def test_lots_breaks_remaining_ties() -> None:
    ranks = [json.loads(run("compute", str(EXAMPLES / "s5_six_players.trf"), "-t", "BH/C1", "--lots", str(seed),
                            "-q", "--format", "json").stdout) for seed in (1, 1, 2)]
    assert ranks[0] == ranks[1]
    assert sorted(r["rank"] for r in ranks[0]) == [1, 2, 3, 4, 5, 6]


def test_explain_and_registry() -> None:
    r = run("explain", str(EXAMPLES / "e1_unplayed_rounds.trf"), "-p", "2", "-t", "BH", "--format", "csv")
    assert r.exit_code == 0, r.output
    assert "16.4.2 draws x rounds" in r.stdout and "player 2: BH = 5 under fide-2026" in r.stderr
    r = run("explain", str(EXAMPLES / "e1_unplayed_rounds.trf"), "-p", "9", "-t", "BH")
    assert r.exit_code == 3 and "no player with start number 9" in r.output
    names = [line.split(",")[0] for line in run("tiebreaks").stdout.splitlines()[1:]]
    assert {"BH", "SB", "DE", "USCF-MM", "LOTS"} <= set(names)


def test_every_command_has_help() -> None:
    for name in main.commands:
        r = run(name, "--help")
        assert r.exit_code == 0 and "Usage:" in r.stdout and "Exit codes" in r.stdout, name


def test_output_to_a_fifo_is_written_through_not_replaced(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``-o /dev/null`` or a named pipe: the target is written as it is (a rename over it replaced the
    device with a regular file)."""
    import os
    import stat
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    result = run("compute", str(EXAMPLES / "e2_cut_exception.trf"), "-t", "BH", "-q", "-o", str(fifo))
    reader.join(timeout=30)
    assert result.exit_code == 0, result.output
    assert stat.S_ISFIFO(fifo.stat().st_mode) and got[0].startswith(b"source,tournament,start_no")
    assert [p.name for p in tmp_path.iterdir()] == ["pipe"]
    devnull = run("compute", str(EXAMPLES), "-t", "BH", "-q", "-o", os.devnull)
    assert devnull.exit_code == 0 and stat.S_ISCHR(os.stat(os.devnull).st_mode)
