"""The byte-level TRF reader: invariants that tie a batch read to its files, encodings and layouts.

The reader slices every file of a batch out of one character buffer; these tests check that nothing leaks
between files, that character columns stay character columns whatever the encoding, and that layouts the
format allows (line ends, trailing blanks, unsorted players, several events per file) read the same.
"""

from __future__ import annotations

import datetime as dt
import itertools
import random
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from helpers import REAL, ROOT, requires_shared
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import RefTournament
from strategies import round_robins, to_trf, tournaments
from trf_samples import GOOD, LINES, player, variant

from tbstats.io.trf import read_trf, write_trf
from tbstats.io.trf.buffer import PAD, Lines, windows
from tbstats.io.trf.headers import PY_WHITESPACE
from tbstats.model.batch import Batch
from tbstats.simulation import SimulationConfig, simulate

TABLES = ("tournaments", "players", "games")


def real_files() -> list[Path]:
    return sorted(p for p in REAL.rglob("*") if p.suffix.lower() in (".trf", ".tab", ".txt") and p.is_file())


def one_by_one(inputs: list[tuple[str, bytes]]) -> tuple[Batch, pl.DataFrame]:
    results = [read_trf([item]) for item in inputs]
    return Batch.concat([r.batch for r in results]), pl.concat([r.errors for r in results])


def same_tables(a: Batch, b: Batch, drop: tuple[str, ...] = ()) -> None:
    for table in TABLES:
        x, y = getattr(a, table), getattr(b, table)
        assert x.drop([c for c in drop if c in x.columns]).equals(y.drop([c for c in drop if c in y.columns])), table


@requires_shared()
def test_a_batch_reads_like_its_files_one_by_one() -> None:
    inputs = [(str(p), p.read_bytes()) for p in real_files()]
    whole = read_trf(inputs)
    batch, errors = one_by_one(inputs)
    same_tables(whole.batch, batch)
    assert whole.batch.warnings.sort(pl.all()).equals(batch.warnings.sort(pl.all()))
    assert whole.errors.sort(pl.all()).equals(errors.sort(pl.all()))
    assert whole.batch.n_tournaments > 60 and whole.batch.games.height > 10_000


def _renumbered(base: int) -> str:
    """The good file with starting ranks ``base + 1`` to ``base + 4``."""
    blocks = {1: [(2, "w 1"), (3, "b =")], 2: [(1, "b 0"), (4, "w 1")], 3: [(4, "w ="), (1, "w =")],
              4: [(3, "b ="), (2, "b 0")]}
    lines = [LINES[0], LINES[1]] + [player(base + k, f"Player {k}", "2000",
                                           [f"{base + o:>4} {rest}" for o, rest in blocks[k]]) for k in blocks]
    return "\n".join(lines) + "\n"


def test_sparse_and_bad_starting_ranks_read_like_their_files_one_by_one() -> None:
    """Starting ranks far above an event's size (9996-9999 in three events) make the reader find opponents by
    sorted keys instead of a table per event; each file alone is read by the table. A line whose starting
    rank is not a number from 1 (a problem) is never anyone's opponent, whichever way."""
    bad = variant(2, LINES[2][:4] + "  -2" + LINES[2][8:])
    inputs = [("good.trf", GOOD.encode()), ("bad.trf", bad.encode()), ("low.trf", _renumbered(10).encode()),
              *((f"sparse{k}.trf", _renumbered(9995).encode()) for k in range(3))]
    for some in (inputs[:3], inputs):   # (without the sparse events, the batch too is read by the table)
        whole = read_trf(some)
        batch, errors = one_by_one(some)
        same_tables(whole.batch, batch)
        assert whole.errors.sort(pl.all()).equals(errors.sort(pl.all()))
        assert set(errors["path"]) == {"bad.trf"}
    games = whole.batch.games   # the good, low and sparse events (the bad file is rejected): every opponent found
    assert games.height == 5 * 4 * 2 and games["opponent"].is_not_null().all()


@requires_shared()
def test_every_player_line_is_read_at_its_line_number() -> None:
    for path in real_files():
        result = read_trf([(str(path), path.read_bytes())])
        if not result.errors.is_empty():
            continue
        lines = path.read_bytes().decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
        numbered = lines.split("\n")
        for line, start in result.batch.players.select("line", "start_no").iter_rows():
            text = numbered[line - 1]
            assert text.startswith("001") and int(text[4:8]) == start, (path, line)


@requires_shared()
@pytest.mark.parametrize("name", ["papi_web/avoine_2023.trf", "sharly_sce/liffre-2025__t01.trf"])
def test_line_ends_encodings_and_trailing_blanks_read_the_same(name: str) -> None:
    raw = (REAL / name).read_bytes()
    text = raw.decode("utf-8")
    assert not text.isascii()
    base = read_trf([(name, raw)])
    assert base.errors.is_empty()
    lines = text.splitlines()
    variants = {
        "crlf": "\r\n".join(lines).encode(),
        "cr": "\r".join(lines).encode(),
        "bom": b"\xef\xbb\xbf" + text.encode(),
        "cp1252": text.encode("cp1252"),
        "trailing blanks": "\n".join(f"{line} \t  " for line in lines).encode(),
        "blank lines": "\n\n".join(lines).encode(),
    }
    for label, data in variants.items():
        result = read_trf([(name, data)])
        assert result.errors.is_empty(), label
        same_tables(base.batch, result.batch, drop=("line",) if label == "blank lines" else ())


@pytest.mark.parametrize("names", [
    ("Łukasiewicz, Paweł", "Đorđević, Đorđe"),   # beyond Latin-1 (two bytes in UTF-8, one character)
    ("王, 小明", "Ελληνικά, Όνομα"),               # three bytes in UTF-8
    ("𝔸lpha, 𝔹eta", "Müller, Jörg"),              # beyond the Basic Multilingual Plane
])
def test_characters_of_any_width_keep_their_columns(names: tuple[str, str]) -> None:
    text = variant(2, player(1, names[0], "2100", ["   2 w 1", "   3 b ="])).replace(
        player(2, "Beta, Bob", "2000", ["   1 b 0", "   4 w 1"]), player(2, names[1], "2000", ["   1 b 0", "   4 w 1"]))
    result = read_trf([("wide.trf", text.encode())])
    assert result.errors.is_empty(), result.errors
    players = result.batch.players
    assert players["name"].to_list()[:2] == list(names)
    assert players["rating"].to_list() == [2100, 2000, 1900, 1800]
    assert players["federation"].to_list() == ["GER"] * 4
    assert result.batch.games.equals(read_trf([("good.trf", GOOD.encode())]).batch.games)



def test_files_of_every_width_read_together_as_one_by_one() -> None:
    """A batch of ASCII files and of files with characters of Latin-1, of the Basic Multilingual Plane and
    beyond it (read into one code array as wide as its widest character) reads as its files one by one."""
    def named(name: str) -> str:
        return variant(2, player(1, name, "2100", ["   2 w 1", "   3 b ="]))

    files = [GOOD, named("Müller, Jörg"), named("Łukasiewicz, Paweł"), GOOD, named("𝔸lpha, 𝔹eta"), named("Öz, Ali")]
    for chosen in (files, files[:3], files[:2] + files[3:4]):
        inputs = [(f"f{k}.trf", text.encode()) for k, text in enumerate(chosen)]
        whole = read_trf(inputs)
        batch, errors = one_by_one(inputs)
        same_tables(whole.batch, batch)
        assert whole.errors.is_empty() and errors.is_empty()


def test_buffer_of_files_of_every_width_is_their_text_joined() -> None:
    """:func:`build_buffer` (files as bytes, ASCII or Latin-1, decoded ones as text, in any order and any runs)
    gives the code points of the files joined by line feeds, a line feed and PAD blanks after the last, in the
    narrowest array that holds them, and where each file starts."""
    from tbstats.io.trf.buffer import PAD, build_buffer

    kinds = {"ascii": b"012 Open\n001 x", "ascii text": "012 Plain", "latin": "Müller, Jörg\r\n",
             "latin bytes": "Øre, Åse".encode("latin-1"), "bmp": "Łukasiewicz", "astral": "𝔸lpha", "empty": ""}
    rng = random.Random(7)
    for _ in range(300):
        chosen = [rng.choice(list(kinds)) for _ in range(rng.randint(1, 7))]
        parts = [kinds[k] for k in chosen]
        text = "\n".join(p.decode("latin-1") if isinstance(p, bytes) else p for p in parts) + "\n" + " " * PAD
        codes = [ord(c) for c in text]
        buf, offsets = build_buffer(parts)
        assert buf.tolist() == codes, chosen
        widest = max(codes)
        assert buf.dtype == (np.uint8 if widest < 256 else np.uint16 if widest < 65536 else np.uint32), chosen
        assert offsets.tolist() == [0, *np.cumsum([len(p) + 1 for p in parts]).tolist()]


def test_unsorted_player_lines_and_several_events_per_file() -> None:
    sim = simulate(SimulationConfig(tournaments=4, players=12, rounds=5, seed=3))
    texts = write_trf(sim.batch)
    rng = random.Random(5)
    shuffled = []
    for text in texts.values():
        lines = text.splitlines()
        head = [x for x in lines if not x.startswith("001")]
        body = [x for x in lines if x.startswith("001")]
        rng.shuffle(body)
        shuffled.append("\n".join(head + body))
    one = read_trf([(src, t.encode()) for src, t in texts.items()])
    assert one.errors.is_empty()
    mixed = read_trf([(src, t.encode()) for src, t in zip(texts, shuffled, strict=True)])
    same_tables(one.batch, mixed.batch, drop=("line",))
    joined = read_trf([("all.trf", "\n".join(shuffled).encode())])
    assert joined.batch.tournaments["source"].to_list() == [f"all.trf#{k}" for k in range(1, 5)]
    same_tables(one.batch, joined.batch, drop=("line", "source"))
    assert one.batch.games.drop("tournament").equals(sim.batch.games.drop("tournament"))


def test_ragged_lines_and_missing_blocks_read_as_blank_rounds() -> None:
    # player 4 withdrew after round 1: his line ends there; player 2's round 2 block is missing too
    text = "\n".join([
        "012 Ragged", "XXR 3",
        player(1, "A", "2100", ["   2 w 1", "   3 b =", "0000 - H"]),
        player(2, "B", "2000", ["   1 b 0"]),
        player(3, "C", "1900", ["   4 w =", "   1 w =", "0000 - U"]),
        player(4, "D", "1800", ["   3 b ="]) + "   ",
    ]) + "\n"
    result = read_trf([("ragged.trf", text.encode())])
    assert result.errors.is_empty(), result.errors
    games = result.batch.games
    assert games.height == 12
    assert games.filter(pl.col("player") == 4)["game_type"].to_list() == ["played", "absent", "absent"]
    assert games.filter(pl.col("player") == 2)["result"].to_list() == ["0", None, None]
    assert result.batch.tournaments["rounds_played"].to_list() == [3]


@requires_shared()
def test_the_real_corpus_reads_to_its_known_totals() -> None:
    # figures of the polars-based reader this one replaced (the same tables, row for row, when it was written)
    result = read_trf([(str(p), p.read_bytes()) for p in real_files()])
    batch = result.batch
    assert (batch.n_tournaments, batch.players.height, batch.games.height) == (76, 6181, 50244)
    assert dict(batch.games.group_by("game_type").len().iter_rows()) == {
        "played": 43422, "forfeit_win": 160, "forfeit_loss": 160, "double_forfeit": 44, "pab": 152,
        "full_bye": 132, "half_bye": 443, "zero_bye": 4123, "absent": 1608}
    assert (int(batch.games["points"].sum()), int(batch.players["declared_points"].sum())) == (44753, 44809)
    assert (result.errors.height, result.errors["path"].n_unique()) == (12, 3)
    assert batch.warnings.filter(pl.col("field") == "points (cols 81-84)").height == 48


def test_small_fields_parse_as_polars_casts_their_stripped_text() -> None:
    """Every pattern of blanks, signs, digits and other characters in a 4-column field reads as polars' cast of
    the stripped text (the compiled :meth:`Lines.field`), also with characters beyond Latin-1 whose low byte is a
    digit, a sign or a blank (U+0130, U+012B, U+0120)."""
    for extra in ("", "\u0130\u012b\u0120\u3000\u2003"):
        chars = [ord(c) for c in " 0159+-x\t.,\r\x85\xa0" + extra]
        fields = np.array(list(itertools.product(chars, repeat=4)), dtype=np.uint16 if extra else np.uint8)
        n = len(fields)
        buf = np.concatenate([fields, np.full((n, 1), 10, dtype=fields.dtype)], axis=1).reshape(-1)
        lines = Lines(np.concatenate([buf, np.full(PAD, 32, dtype=buf.dtype)]), np.zeros(n, np.int32),
                      np.arange(n, dtype=np.int32), np.arange(n, dtype=np.int64) * 5, np.full(n, 4, dtype=np.int64))
        texts = pl.Series(["".join(map(chr, f)) for f in fields.tolist()]).str.strip_chars()
        want = texts.cast(pl.Int64, strict=False)
        got = lines.field((0, 4), number=True)
        assert got.ok is not None and got.value is not None
        assert got.ok.any() and not got.ok.all()
        assert np.array_equal(got.ok, want.is_not_null().to_numpy()), extra
        assert np.array_equal(got.value[got.ok], want.drop_nulls().to_numpy()), extra
        assert np.array_equal(got.filled, (texts.str.len_chars() > 0).to_numpy()), extra


def test_windows_are_the_characters_from_each_position_blank_past_the_line() -> None:
    rng = random.Random(7)
    text = bytes(rng.choice(b"ab 1\n") for _ in range(500)) + b" " * PAD
    buf = np.frombuffer(text, dtype=np.uint8)
    at = np.array([rng.randrange(0, 500) for _ in range(300)], dtype=np.int64)
    room = np.array([rng.randrange(-3, 14) for _ in range(300)], dtype=np.int64)
    for dtype in (np.uint8, np.uint32):
        got = windows(buf.astype(dtype), at, 12, room)
        assert got.shape == (12, 300)
        for i, (a, r) in enumerate(zip(at.tolist(), room.tolist(), strict=True)):
            expected = [text[a + c] if c < r else 32 for c in range(12)]
            assert got[:, i].tolist() == expected


def test_header_values_are_their_text_from_column_five_stripped_as_python_strips() -> None:
    """A header record's value is the text after its code, stripped of what ``str.strip()`` strips (also the
    separators U+001C-U+001F, which the line's own end keeps); a code in lower case is the same record, the
    first of a code in an event counts; a 310 record makes a team event, a line that only starts like one not."""
    assert set(PY_WHITESPACE) == {c for c in map(chr, range(0x110000)) if c.isspace()}
    text = GOOD.replace("012 Test Open", "012 \x1c\u3000Test  Open\x1f\nxxr 2\n022  Bern \n022 Basel\n310x 1")
    t = read_trf([("a.trf", text.encode())]).batch.tournaments
    assert t.select("name", "city", "rounds", "event_type").row(0) == ("Test  Open", "Bern", 2, "swiss")
    def list_warnings(extra: str) -> list[str]:   # a team tie-break list: understood in a team event only
        text = GOOD.replace("XXR 2", f"XXR 2\n202 MPvGP\n{extra}")
        w = read_trf([("b.trf", text.encode())]).batch.warnings
        return w.filter(pl.col("field") == "202")["message"].to_list()
    assert list_warnings("310    1 Team") == []
    assert list_warnings("310x 1 Team") == list_warnings("") != []


def test_header_lines_are_told_apart_as_their_texts_say() -> None:
    """Each header line's kind (header record, scoring, round dates, kept or skipped), found from the buffer,
    is what :func:`_kind` makes of its text, for lines of every shape: codes in any case or beyond ASCII, lines of
    three characters, a code run into its value, rulers, and records kept (arbiter, time control...) that go
    verbatim, in order, to the event's records."""
    from tbstats.io.trf.buffer import build_buffer, split_lines
    from tbstats.io.trf.headers import _id_of, _kind, _line_ids

    rng = random.Random(7)
    starts = ["012", "xxr", "XXS", "132", "162", "102", "122", "1O2", "102x", "ABC", "abc", "Ab1", "299", "310",
              "DDD", "DDD SSSS", "###", "  1", "         1 ", "1234567890", "Ä12", "12Ä", "ÄBC", "013", "xxs"]
    lines = []
    for _ in range(400):
        code = rng.choice(starts)
        rest = rng.choice(["", " ", " IA Dvorak, Jan", "  9", "x value", " Ä ü", "\u3000x"])
        lines.append((code + rest).rstrip() or "x")
    for encode in ("latin-1", "utf-8"):
        data = "\n".join(lines).encode(encode, errors="replace")
        heads = split_lines(*build_buffer([data.decode(encode)]))
        ids, rows, texts = _line_ids(heads)
        want = [_id_of(*_kind(t)) for t in heads.texts()]
        assert ids.tolist() == want
        assert texts == [heads.texts()[k] for k in rows.tolist()]
    text = GOOD.replace("XXR 2", "XXR 2\n102 IA Dvorak, Jan\n1O2 odd\n122 90 min\nDDD SSSS ruler\nabc skipped")
    records = read_trf([("r.trf", text.encode())]).batch.tournaments["records"].to_list()
    assert records == [["102 IA Dvorak, Jan", "1O2 odd", "122 90 min"]]


def _dates_reference(start: str | None, end: str | None, rounds: list[str]) -> tuple[object, object, object]:
    """rules.md 2.5 read plainly: every reading of every date, the start's settled by the end's first reading,
    then the first round date's (within a year); the end or first round date stands in for a missing start."""
    from tbstats.io.dates import date_candidates

    round_days = [c[0] for c in map(date_candidates, rounds) if c]
    starts, ends = date_candidates(start), date_candidates(end)
    anchors = ends[:1] + round_days[:1]

    def pick(cands: list[dt.date]) -> tuple[dt.date | None, bool]:
        for anchor in anchors if len(cands) > 1 else []:
            near = [c for c in cands if abs((c - anchor).days) <= 366]
            if len(near) == 1:
                return near[0], False
        return (cands[0] if cands else None), len(cands) > 1

    s, ambiguous = pick(starts)
    e = pick(ends)[0]
    if s is None:
        s = e or (round_days[0] if round_days else None)
        if start and start.strip():
            return s, e, f"start date {start.strip()!r} is not a date we can read"
        return s, e, None if s else "no start date (042), end date (052) or round dates (132)"
    return s, e, f"start date {start!r} is ambiguous; read as {s.isoformat()}" if ambiguous else None


def test_dates_are_settled_as_the_rules_say() -> None:
    """Start and end dates from 042, 052 and the 132 round dates (read as written, lazily) are those of a plain
    reading of rules.md 2.5, for dates written in every way seen, ambiguous and unreadable ones among them."""
    from tbstats.io.dates import resolve_dates
    from tbstats.io.trf.headers import ROUND0, round_date_texts

    forms = [None, "", " ", "2026/03/01", "2026-3-1", "2026.03.01 to 2026.03.09", "01/03/2026", "26/03/01",
             "11.09.26", "03/11/26", "26/03/25", "May 10, 2020", "10 May 2020", "2026/02/30", "0000/01/01", "junk",
             "2026"]
    round_forms = [[], ["26/03/02", "26/03/03"], ["", "xx/yy/zz", "26/11/04", "26/11/05"], ["        ", "", ""],
                   ["02.03.26", "03.03.26"], ["11.09.26"], ["24/06/01"]]
    seen = set()
    for start in forms:
        for end in forms:
            for dates in round_forms:
                text = "132".ljust(ROUND0) + "  ".join(d.ljust(8) for d in dates)
                full = [text[k:k + 8] for k in range(ROUND0, len(text), 10)]
                got = resolve_dates(start, end, round_date_texts(text))
                assert got == _dates_reference(start, end, full), (start, end, dates)
                seen.add(got[2].split(" ")[-1] if got[2] else None)
    assert len(seen) > 3   # (unreadable, ambiguous, missing and clean starts all met)


def _structure_says_round_robin(t: RefTournament) -> bool:
    """The reference of the reader's structural check (rules.md 2.3): at least three players, every pair of them
    paired (a game or a forfeit) the same number of times, at least once."""
    from collections import Counter

    met = Counter((min(p.start_no, rd.opp), max(p.start_no, rd.opp))
                  for p in t.players for rd in p.rounds[:t.n] if rd.opp is not None)
    n = len(t.players)
    return n >= 3 and len(met) == n * (n - 1) // 2 and len(set(met.values())) == 1


@given(st.lists(st.one_of(tournaments(max_players=9, max_rounds=9), round_robins(max_players=8, max_rounds=9)),
                min_size=1, max_size=6))
@settings(suppress_health_check=[HealthCheck.too_slow], max_examples=60, deadline=None)
def test_an_event_without_a_type_is_a_round_robin_when_every_pair_meets_equally_often(
        events: list[RefTournament]) -> None:
    """Files without 192 or 092 (as TRF-16 files often are): the reader tells a round robin by its pairings, for
    every event of a batch at once, as a pair count over each event says (events of few players and many rounds,
    whose pairs must be counted, among events told apart by their counts alone)."""
    texts = ["\n".join(line for line in to_trf(t).splitlines() if not line.startswith("192")) for t in events]
    batch = read_trf([(f"t{i}.trf", text.encode()) for i, text in enumerate(texts)]).batch
    kinds = batch.tournaments.sort("tournament")["event_type"].to_list()
    assert kinds == ["round_robin" if _structure_says_round_robin(t) else "swiss" for t in events]


def test_an_undeclared_double_round_robin_and_near_misses() -> None:
    """A double round robin without a type is one; a field where one pair met twice and the others once is not,
    nor are two players who met in every round (a round robin has at least three)."""
    single = [[(1, 4), (2, 3)], [(4, 3), (1, 2)], [(2, 4), (3, 1)]]
    fields = {"double": (4, single + [[(b, a) for a, b in rnd] for rnd in single]),
              "uneven": (3, [[(1, 2)], [(1, 3)], [(2, 1)], [(2, 3)]]),
              "two": (2, [[(1, 2)], [(2, 1)], [(1, 2)]])}

    def trf(players: int, rounds: list[list[tuple[int, int]]]) -> bytes:
        blocks: dict[int, list[str]] = {no: [] for no in range(1, players + 1)}
        for pairs in rounds:   # (white first; every game drawn; a player without a game gets the PAB)
            for white, black in pairs:
                blocks[white].append(f"{black:4d} w =")
                blocks[black].append(f"{white:4d} b =")
            for own in blocks.values():
                if len(own) < len(blocks[pairs[0][0]]):
                    own.append("0000 - U")
        lines = [f"001 {no:4d}      Player {no}".ljust(91) + "  ".join(own) for no, own in blocks.items()]
        return ("\n".join(["012 Undeclared", *lines]) + "\n").encode()

    result = read_trf([(f"{name}.trf", trf(*field)) for name, field in fields.items()])
    assert result.errors.is_empty(), result.errors
    assert result.batch.tournaments.sort("tournament")["event_type"].to_list() == ["round_robin", "swiss", "swiss"]


def test_an_undeclared_event_with_team_records_is_a_team_event() -> None:
    """Without 192 and 092 an event with team records (310) is a team event in the tournaments table too, as
    every command that computes teams already takes it (:func:`tbstats.model.teams.team_events`); a declared
    type stays what it says."""
    from tbstats.model.teams import team_events

    raw = (ROOT / "data" / "teams" / "team_swiss.trf").read_bytes()
    bare = b"\n".join(line for line in raw.split(b"\n") if not line.startswith((b"092", b"192")))
    swiss = raw.replace(b"192 FIDE_TEAM_MP_GP", b"192 FIDE_SWISS").replace(b"092 Team Swiss System", b"092 Swiss")
    result = read_trf([("bare.trf", bare), ("declared.trf", raw), ("swiss.trf", swiss)])
    t = result.batch.tournaments.sort("tournament")
    assert t["event_type"].to_list() == ["team", "team", "swiss"]
    assert team_events(t).tolist() == [True, True, True]
