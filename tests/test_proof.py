"""The proofs a model keeps of the checks its files passed (``tbstats.io.tabular.proof``): written by ``ingest``
(per part of a directory dataset, beside a flat Parquet file), they spare a reader the checks only while they
hold; after any change to a file, its proof or the dataset around it, every command gives exactly what it
gives without proofs."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from helpers import ROOT

from tbstats.cli import main
from tbstats.io.tabular import proof

EXAMPLES = ROOT / "data" / "examples"
COMPUTE = ["compute", "-t", "BH/C1,BH,SB,DE,WIN", "--rules", "fide-2026", "--format", "csv", "--batch-size", "3"]


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    """The sample events ingested two a part: three parts, each with its proof."""
    out = tmp_path / "model"
    done = CliRunner().invoke(main, ["ingest", str(EXAMPLES), "-o", str(out), "--batch-size", "2", "-q"])
    assert done.exit_code == 0, done.output
    return out


def _part_files(root: Path) -> list[str]:
    return sorted(str(p) for table in ("tournaments", "players", "games") for p in (root / table).glob("*.parquet"))


def _run(root: Path) -> tuple[int, str]:
    done = CliRunner().invoke(main, [*COMPUTE, str(root)])
    return done.exit_code, done.output


def test_each_part_has_a_proof_that_holds_and_reading_by_it_changes_nothing(dataset: Path) -> None:
    proofs = sorted((dataset / proof.PROOFS).glob("*.json"))
    assert [p.stem for p in proofs] == ["part-00000", "part-00001", "part-00002"]
    ids = [json.loads(p.read_text())["ids"] for p in proofs]
    assert ids == [[0, 1], [2, 3], [4, 4]]
    assert proof.vouched(_part_files(dataset)) and proof.holds(dataset)
    with_proofs = _run(dataset)
    shutil.rmtree(dataset / proof.PROOFS)
    assert not proof.vouched(_part_files(dataset)) and not proof.holds(dataset)
    assert with_proofs == _run(dataset) and with_proofs[0] == 0 and with_proofs[1].count("\n") > 20


def _edit(path: Path, column: str, value: object) -> None:
    """Set ``column`` of a part file's first row to ``value``, keeping the file's schema."""
    table = pq.read_table(path)
    col = table.column(column)
    first = pa.array([value], type=col.type)
    changed = pa.concat_arrays([first, col.slice(1).combine_chunks()])
    table = table.set_column(table.schema.get_field_index(column), column, changed)
    assert not pc.all(pc.equal(table.column(column), col)).as_py()
    pq.write_table(table, path)


def _copied_in(root: Path) -> None:
    """Part 0 copied in as part 9 with a proof that holds for the copy: its tournament ids are part 0's."""
    for table in ("tournaments", "players", "games", "warnings"):
        shutil.copy(root / table / "part-00000.parquet", root / table / "part-00009.parquet")
    body = json.loads((root / proof.PROOFS / "part-00000.json").read_text())
    body["files"] = {k.replace("part-00000", "part-00009"): v for k, v in body["files"].items()}
    (root / proof.PROOFS / "part-00009.json").write_text(json.dumps(body))


def _stale(where: Path) -> None:
    """The proof at ``where`` as if made by other checks."""
    body = json.loads(where.read_text())
    body["checks"] = "0" * 32
    where.write_text(json.dumps(body))


def _points_elsewhere(root: Path) -> None:
    """A proof that names a file outside its dataset: it does not hold (and is not read)."""
    where = root / proof.PROOFS / "part-00000.json"
    body = json.loads(where.read_text())
    shutil.copy(root / "games" / "part-00000.parquet", root.parent / "outside.parquet")   # the same bytes
    body["files"]["../outside.parquet"] = body["files"]["games/part-00000.parquet"]
    where.write_text(json.dumps(body))


DAMAGE: dict[str, Callable[[Path], None]] = {
    "a game's points out of range": lambda r: _edit(r / "games" / "part-00001.parquet", "points", 10 ** 6),
    "a rating changed (a valid value)": lambda r: _edit(r / "players" / "part-00000.parquet", "rating", 1234),
    "a game's round beyond the event's": lambda r: _edit(r / "games" / "part-00002.parquet", "round", 40),
    "a part's tournaments file removed": lambda r: (r / "tournaments" / "part-00001.parquet").unlink(),
    "a proof made by other checks": lambda r: _stale(r / proof.PROOFS / "part-00001.json"),
    "a part copied in with its proof (ids taken twice)": _copied_in,
    "a proof that is not JSON": lambda r: (r / proof.PROOFS / "part-00002.json").write_text("{"),
    "a proof that names a file outside the dataset": _points_elsewhere,
}

#: changes to the proofs alone: the data, and so the output, are the same as before
PROOF_ONLY = {"a proof made by other checks", "a proof that is not JSON",
              "a proof that names a file outside the dataset"}


def _reads_as_without_proofs(target: Path, damage: str, change: Callable[[Path], None],
                             holds: Callable[[Path], bool], drop: Callable[[Path], None]) -> None:
    """After ``change``, the proofs of ``target`` do not hold and every command reads it as without them."""
    before = _run(target)
    change(target)
    assert not holds(target)
    with_proofs = _run(target)
    drop(target)
    assert with_proofs == _run(target)
    if damage not in PROOF_ONLY:   # the change is seen: in the table, or as an error naming the file
        assert with_proofs != before


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_changed_dataset_reads_as_without_proofs(dataset: Path, damage: str) -> None:
    _reads_as_without_proofs(dataset, damage, DAMAGE[damage], proof.holds, lambda r: shutil.rmtree(r / proof.PROOFS))


def test_a_proof_is_made_only_for_a_part_proven_clean(dataset: Path, monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    from tbstats.io import check

    monkeypatch.setattr(check, "proven_clean", lambda tables: False)
    out = tmp_path / "unproven"
    done = CliRunner().invoke(main, ["ingest", str(EXAMPLES), "-o", str(out), "--batch-size", "2", "-q"])
    assert done.exit_code == 0, done.output
    assert not list((out / proof.PROOFS).glob("*.json"))
    monkeypatch.undo()
    assert _run(out) == _run(dataset)


def test_csv_parts_get_no_proof(tmp_path: Path) -> None:
    out = tmp_path / "csv"
    done = CliRunner().invoke(main, ["ingest", str(EXAMPLES), "-o", str(out), "--format", "csv", "-q"])
    assert done.exit_code == 0, done.output
    assert not (out / proof.PROOFS).exists()


def test_without_the_checks_source_no_proof_is_made_and_none_holds(dataset: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    """Where the checking modules' source cannot be read (a sourceless install), nothing is skipped."""
    assert proof.vouched(_part_files(dataset))
    monkeypatch.setattr(proof, "checks_digest", lambda: None)
    assert not proof.vouched(_part_files(dataset))
    out = tmp_path / "sourceless"
    done = CliRunner().invoke(main, ["ingest", str(EXAMPLES), "-o", str(out), "--batch-size", "2", "-q"])
    assert done.exit_code == 0, done.output
    assert not list((out / proof.PROOFS).glob("*.json"))


def test_parts_written_by_worker_processes_get_the_same_proofs(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "two"
    done = CliRunner().invoke(main, ["ingest", str(EXAMPLES), "-o", str(out), "--batch-size", "2", "-q",
                                     "--workers", "2"])
    assert done.exit_code == 0, done.output
    mine = {p.name: p.read_bytes() for p in (dataset / proof.PROOFS).iterdir()}
    assert {p.name: p.read_bytes() for p in (out / proof.PROOFS).iterdir()} == mine and len(mine) == 3


@pytest.fixture
def flat_file(tmp_path: Path) -> Path:
    out = tmp_path / "flat" / "archive.parquet"
    done = CliRunner().invoke(main, ["ingest", str(EXAMPLES), "-o", str(out), "--batch-size", "2", "-q"])
    assert done.exit_code == 0, done.output
    return out


FLAT_DAMAGE: dict[str, Callable[[Path], None]] = {
    "a game's points out of range": lambda f: _edit(f, "points", 10 ** 6),
    "a rating changed (a valid value)": lambda f: _edit(f, "rating", 1234),
    "a proof made by other checks": lambda f: _stale(proof.flat_proof_path(f)),
}


def test_a_flat_file_has_its_proof_beside_it_and_reading_by_it_changes_nothing(flat_file: Path) -> None:
    assert proof.flat_proof_path(flat_file).is_file() and proof.vouched_flat(str(flat_file))
    assert proof.holds(flat_file)
    with_proof = _run(flat_file)
    proof.flat_proof_path(flat_file).unlink()
    assert not proof.vouched_flat(str(flat_file)) and not proof.holds(flat_file)
    assert with_proof == _run(flat_file) and with_proof[0] == 0 and with_proof[1].count("\n") > 20


@pytest.mark.parametrize("damage", sorted(FLAT_DAMAGE))
def test_a_changed_flat_file_reads_as_without_its_proof(flat_file: Path, damage: str) -> None:
    _reads_as_without_proofs(flat_file, damage, FLAT_DAMAGE[damage], proof.holds,
                             lambda f: proof.flat_proof_path(f).unlink())


def test_a_flat_file_written_whole_or_over_an_old_one_has_no_stale_proof(flat_file: Path) -> None:
    from tbstats.io.tabular import write_model
    from tbstats.io.trf import read_trf

    old = proof.flat_proof_path(flat_file)
    assert old.is_file()
    path = EXAMPLES / "e2_cut_exception.trf"
    write_model(read_trf([(str(path), path.read_bytes())]).batch, flat_file)   # as it is: no proof made
    assert not old.exists() and not proof.vouched_flat(str(flat_file))


def test_a_flat_files_proof_is_no_input_of_its_own(flat_file: Path) -> None:
    """A directory walk reads the flat file and passes over its proof (it is not listed as skipped); a proof
    whose file is gone is an ordinary file that is not a tournament file."""
    for source in (str(flat_file.parent), f"{flat_file.parent}/*"):   # walked, or matched by a pattern
        done = CliRunner().invoke(main, ["info", source, "--format", "csv"])
        assert done.exit_code == 0 and "skipped" not in done.output, done.output
        assert "1 files: 1 loaded, 0 rejected" in done.output, done.output
    flat_file.unlink()
    done = CliRunner().invoke(main, ["info", str(flat_file.parent), "--format", "csv"])
    assert "skipped 1 files that are not tournament files" in done.output, done.output
