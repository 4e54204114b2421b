"""Fuzzing the inputs: seeded mutations of the shared TRF files and of columnar tables.

Only the project's own errors (:class:`TbstatsError`) may come out; every rejection names its file, and its
line when it names a field of a line-based file; collect mode accounts for every input (computed, or listed
with its reason); what is accepted computes. The default run is a short profile; ``-m slow`` runs the long
one (``FUZZ_SEED`` changes the seed of both).
"""

from __future__ import annotations

import contextlib
import os
import random
import zipfile
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from fuzz import TRF_MUTATORS, mutate_table, trf_mutants
from helpers import FIXTURES, REAL, requires_shared

from tbstats.engine import compute as engine
from tbstats.errors import FormatError, SchemaError, TbstatsError
from tbstats.io.sources import load
from tbstats.io.tabular import read_model, write_model
from tbstats.io.trf import read_trf
from tbstats.model.batch import Batch
from tbstats.model.rules import RULESETS

SEED = int(os.environ.get("FUZZ_SEED", "20261201"))
SHORT, LONG = 8, 250          # TRF mutants per class
SHORT_MODELS, LONG_MODELS = 15, 400
#: The standard list, and variants that take other paths through the compiled stage (cuts and medians of FB,
#: the /P modifier, the forfeit modifier of AOB, TPR's and KS's own passes)
SPECS = "BH/C1,BH,SB,PS,WIN,ARO,TPR,KS,AOB,FB,DE,FB/C1,FB/M1/P,SB/C1/P,BH/P,AOB/F"
#: Each mutant is computed under one edition, in turn (each edition's stage is data for the same compiled
#: passes: an index out of its range there would not raise, it would crash the process)
EDITIONS = sorted(RULESETS)

def _seeds() -> list[Path]:
    return sorted(p for root in (REAL, FIXTURES) for p in root.rglob("*")
                  if p.suffix.lower() in (".trf", ".txt") and p.stat().st_size < 200_000)


def _check_rejections(errors: pl.DataFrame, names: set[str]) -> None:
    for row in errors.iter_rows(named=True):
        assert row["path"] in names, row
        assert row["reason"], row
        assert row["line"] is not None or row["column"] is None, f"a field without its line: {row}"


def sizes(short: int, long: int) -> list[Any]:
    """The mutants per class of a check: a short run in every test run, a long one marked slow (``-m slow``)."""
    return [pytest.param(short, id="short"), pytest.param(long, id="long", marks=pytest.mark.slow)]


def _computes(batch: Batch, k: int) -> None:
    """Compute the mutant ``k`` (its edition in turn, see :data:`EDITIONS`)."""
    if batch.n_tournaments:
        with contextlib.suppress(TbstatsError):  # a clean refusal is fine; anything else fails the test
            engine.compute(batch, SPECS, rules=EDITIONS[k % len(EDITIONS)])


def _fuzz_trf(kind: str, n: int) -> None:
    for k, (name, data) in enumerate(trf_mutants(_seeds(), kind, n, SEED)):
        try:
            result = read_trf([(name, data)])
        except TbstatsError:
            continue
        _check_rejections(result.errors, {name})
        _computes(result.batch, k)


@requires_shared()
@pytest.mark.parametrize("n", sizes(SHORT, LONG))
@pytest.mark.parametrize("kind", sorted(TRF_MUTATORS))
def test_trf_mutants_fail_cleanly(kind: str, n: int) -> None:
    _fuzz_trf(kind, n)


def _fuzz_collect(tmp_path: Path, per_class: int) -> None:
    """Mutants of every class side by side in a directory and a zip: each one computed or ledgered."""
    seeds = _seeds()
    names: list[str] = []
    members: dict[str, bytes] = {}
    for kind in sorted(TRF_MUTATORS):
        for name, data in trf_mutants(seeds, kind, per_class, SEED + 1):
            (tmp_path / name).write_bytes(data)
            names.append(str(tmp_path / name))
            members[name] = data
    for good in seeds[:3]:
        (tmp_path / f"good_{good.name}").write_bytes(good.read_bytes())
    arc = tmp_path / "all.zip"
    with zipfile.ZipFile(arc, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    expected = {*names, *(f"{arc}!{m}" for m in members), *(str(tmp_path / f"good_{g.name}") for g in seeds[:3])}
    result = load([str(tmp_path)], on_error="collect", batch_files=7)
    computed = {s.split("#")[0] for s in result.batch.tournaments["source"].to_list()}
    ledgered = set(result.ledger["path"].to_list())
    assert expected <= computed | ledgered, sorted(expected - computed - ledgered)[:5]
    assert result.files == len(expected) == result.loaded + result.rejected
    assert {str(tmp_path / f"good_{g.name}") for g in seeds[:3]} <= computed
    _check_rejections(result.ledger, expected)


@requires_shared()
@pytest.mark.parametrize("n", sizes(2, 40))
def test_collect_mode_accounts_for_every_mutant(tmp_path: Path, n: int) -> None:
    _fuzz_collect(tmp_path, n)


# ----------------------------------------------------------------------------------------------- models

def _base_batch() -> Batch:
    paths = _seeds()[:4]
    return read_trf([(str(p), p.read_bytes()) for p in paths]).batch


def _fuzz_models(tmp_path: Path, n: int) -> None:
    base = _base_batch()
    rng = random.Random(SEED)
    for k in range(n):
        tables = {t: getattr(base, t) for t in ("tournaments", "players", "games")}
        table = rng.choice(list(tables))
        what, tables[table] = mutate_table(rng, tables[table])
        try:
            batch = Batch(tables["tournaments"], tables["players"], tables["games"], base.warnings)
        except SchemaError as exc:   # a value its column's type cannot hold: refused at once, saying where
            assert what.startswith("wide ") and what.removeprefix("wide ") in str(exc), (what, exc)
            continue
        target = tmp_path / (f"m{k}" if k % 3 == 0 else f"m{k}.parquet" if k % 3 == 1 else f"m{k}.csv")
        write_model(batch, target)
        try:
            back = read_model(target)
        except FormatError as exc:
            assert exc.path.startswith(str(target)), (what, exc)
            assert exc.reason, (what, exc)
            if exc.path.endswith(".csv") and exc.column is not None:
                assert exc.line is not None, (what, exc)
            continue
        except TbstatsError as exc:
            assert str(exc).startswith(str(target)), (what, exc)
            continue
        _computes(back, k)


@requires_shared()
@pytest.mark.parametrize("n", sizes(SHORT_MODELS, LONG_MODELS))
def test_model_mutants_fail_cleanly(tmp_path: Path, n: int) -> None:
    _fuzz_models(tmp_path, n)


def _fuzz_roundtrip(tmp_path: Path, per_class: int) -> None:
    """What the reader accepts of the mutants, written as a model (as ``ingest`` does), passes the model's own
    checks and reads back as it was: no event the TRF files computed is lost on the way through the model."""
    for kind in sorted(TRF_MUTATORS):
        for name, data in trf_mutants(_seeds(), kind, per_class, SEED + 2):
            (tmp_path / "trf").mkdir(exist_ok=True)
            (tmp_path / "trf" / name).write_bytes(data)
    batch = load([str(tmp_path / "trf")], on_error="collect").batch
    assert batch.n_tournaments
    write_model(batch, tmp_path / "model")
    back = read_model(tmp_path / "model")   # a model its checks reject raises here
    for table in ("tournaments", "players", "games"):
        assert getattr(back, table).equals(getattr(batch, table)), table


@requires_shared()
@pytest.mark.parametrize("n", sizes(20, 120))
def test_what_the_reader_accepts_reads_back_from_its_model(tmp_path: Path, n: int) -> None:
    _fuzz_roundtrip(tmp_path, n)


ARCHIVE_COMMANDS = {
    "compute": ["compute", "-t", "BH/C1,BH,SB,PS,WIN,ARO,TPR,KS,AOB,FB,DE", "--rules", "auto"],
    "compute-teams": ["compute", "--teams", "-t", "MPvGP"],
    "audit": ["audit", "--per-player"],
    "audit-teams": ["audit", "--teams", "--per-player"],
    "compare": ["compare", "-c", "a=fide-2026:BH/C1,BH,SB,DE", "-c", "b=fide-legacy:BH,SB,FB"],
    "evaluate": ["evaluate", "-c", "a=fide-2026:BH/C1,BH,SB", "--strength", "archive"],
    "info": ["info"],
}


@requires_shared()
@pytest.mark.parametrize("command", sorted(ARCHIVE_COMMANDS))
def test_every_archive_command_runs_over_a_directory_of_mutants(command: str, tmp_path: Path) -> None:
    """Mutants of every class and the real files in one directory: each command ends with 0 or 1 (some inputs
    rejected), never a traceback (a crash here once came only from the mix: audit's drill-down of many events)."""
    from click.testing import CliRunner

    from tbstats.cli import main

    for kind in sorted(TRF_MUTATORS):
        for name, data in trf_mutants(_seeds(), kind, 12, SEED + 3):
            (tmp_path / name).write_bytes(data)
    for good in _seeds():
        (tmp_path / f"good_{good.name}").write_bytes(good.read_bytes())
    result = CliRunner().invoke(main, [*ARCHIVE_COMMANDS[command], str(tmp_path), "-q",
                                       "-o", str(tmp_path / "out.csv")])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code in (0, 1), result.output
