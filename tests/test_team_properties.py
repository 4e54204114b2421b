"""The team kernels against the slow reference (tests/team_reference.py) on generated team events.

Generated events: team Swiss events with team PABs (320), requested team byes (240 H/Z), forfeited and
double-forfeited matches (330), board forfeits, reserves, withdrawals and 2/1/0 or 3/1/0 match scoring; and
team round robins (free rounds, forfeited matches). They are written as TRF text and read back, so the team
model is part of what is checked. ``HYPOTHESIS_PROFILE=thorough`` runs long hunts.
"""

from __future__ import annotations

import os
from fractions import Fraction

import polars as pl
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from team_reference import CHAIN_STEPS, TeamEvent, board_count, buchholz, ede_ranks, extended_sb, score, sssc

from tbstats.engine.standings import competition_rank, initial_labels
from tbstats.engine.teams.standings import compute_teams, extended_direct_encounter, make_team_context
from tbstats.io.trf import read_trf
from tbstats.model.spec import TieBreakSpec


def _examples(default_run: int) -> int:
    """Fewer examples than the profile in the default run (each builds and ranks a whole team event);
    ``HYPOTHESIS_PROFILE=thorough`` runs the profile's number."""
    if os.environ.get("HYPOTHESIS_PROFILE", "ci") == "ci":
        return default_run
    return int(settings.default.max_examples)


RESULT_POINTS = {"1": Fraction(1), "=": Fraction(1, 2), "0": Fraction(0), "+": Fraction(1), "-": Fraction(0)}
OTHER = {"1": "0", "=": "=", "0": "1", "+": "-", "-": "+"}


@st.composite
def team_events(draw: st.DrawFn, round_robin: bool | None = None) -> tuple[TeamEvent, str]:
    rr = draw(st.booleans()) if round_robin is None else round_robin
    n = draw(st.integers(3, 7))
    boards = draw(st.integers(1, 4))
    reserves = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    tw = draw(st.sampled_from([2, 3]))
    pab = draw(st.sampled_from([(Fraction(tw), Fraction(boards)), (Fraction(1), Fraction(boards, 2))]))
    members: dict[int, list[int]] = {}
    no = 0
    for t in range(1, n + 1):
        members[t] = list(range(no + 1, no + 1 + boards + reserves[t - 1]))
        no += boards + reserves[t - 1]
    if rr:
        rounds_pairs = _berger(n)
    else:
        rounds_pairs = []
    R = len(rounds_pairs) if rr else draw(st.integers(1, 5))
    ev = TeamEvent(n, boards, R, tw, 1, rr, pab)
    ev.schedule = {t: [] for t in members}
    blocks: dict[int, list[str]] = {p: [] for ps in members.values() for p in ps}
    records: list[str] = []
    pab_round: list[int] = []
    withdrawn = {t: draw(st.one_of(st.none(), st.integers(2, 5))) if not rr else None for t in members}
    for r in range(R):
        if rr:
            pairs, byes = rounds_pairs[r], [t for t in members if all(t not in p for p in rounds_pairs[r])]
            requested: dict[int, str] = {}
        else:
            active = [t for t in members if withdrawn[t] is None or r + 1 < withdrawn[t]]  # type: ignore[operator]
            order = draw(st.permutations(active))
            requested = {t: draw(st.sampled_from("HZ")) for t in order if draw(st.integers(0, 9)) == 0}
            playing = [t for t in order if t not in requested]
            pairs = [(playing[i], playing[i + 1]) for i in range(0, len(playing) - 1, 2)]
            byes = playing[len(pairs) * 2:]
        for t in members:
            if any(t in p for p in pairs):
                continue
            if t in requested:
                kind = "half_bye" if requested[t] == "H" else "zero_bye"
                records.append(f"240 {requested[t]} {r + 1:3d} {t:4d}")
            elif t in byes and not rr:
                kind = "pab"
                pab_round.append(t)
            elif rr:
                kind = "free_round"
            else:
                kind = "absent"
            ev.schedule[t].append((kind, None, None))
            for p in members[t]:
                blocks[p].append("0000 - -")
        if not rr and not any(t in byes for t in members):
            pab_round.append(0)
        for white, black in pairs:
            kind = draw(st.sampled_from(["played"] * 6 + ["+-", "-+", "--"]))
            if kind != "played":
                records.append(f"330 {kind} {r + 1:3d} {white:3d} {black:3d}")
                res = {"+-": ("forfeit_win", "forfeit_loss"), "-+": ("forfeit_loss", "forfeit_win"),
                       "--": ("double_forfeit", "double_forfeit")}[kind]
                for t, o, k in ((white, black, res[0]), (black, white, res[1])):
                    ev.schedule[t].append((k, o, None))
                    for i, p in enumerate(members[t]):
                        blocks[p].append("0000 - +" if k == "forfeit_win" and i < boards else "0000 - -")
                continue
            lw = sorted(draw(st.permutations(members[white]))[:boards], key=members[white].index)
            lb = sorted(draw(st.permutations(members[black]))[:boards], key=members[black].index)
            pw, pb = [], []
            for b in range(boards):
                res = draw(st.sampled_from(["1", "=", "0", "1", "=", "0", "+", "-"]))
                wcol = "w" if b % 2 == 0 else "b"
                bcol = "b" if wcol == "w" else "w"
                blocks[lw[b]].append(f"{lb[b]:4d} {wcol} {res}")
                blocks[lb[b]].append(f"{lw[b]:4d} {bcol} {OTHER[res]}")
                pw.append(RESULT_POINTS[res])
                pb.append(RESULT_POINTS[OTHER[res]])
            for t, lineup in ((white, lw), (black, lb)):
                for p in members[t]:
                    if p not in lineup:
                        blocks[p].append("0000 - -")
            ev.schedule[white].append(("played", black, pw))
            ev.schedule[black].append(("played", white, pb))
    # a file in which no match is played on the boards does not say how many boards a match has (the model
    # infers it from line-ups and fielded boards, rules.md 9.1): such events cannot state what the reference knows
    assume(any(kind == "played" for matches in ev.schedule.values() for kind, _, _ in matches))
    # strength and ratings
    lines = ["012 generated team event", "042 2026/05/01", f"142 {R}",
             f"192 {'FIDE_TEAM_ROUNDROBIN' if rr else 'FIDE_TEAM_MP_GP'}",
             f"362 TW {tw}.0   TD 1.0   TL 0.0"]
    for t, ps in members.items():
        for p in ps:
            rating = 2000 + 10 * p
            lines.append(f"001 {p:4d}      {f'P{p}':<33} {rating:4d} {'':3} {'':11} {'':10} {'':4} {'':4}  "
                         + "  ".join(blocks[p]))
        ev.strength[t] = 2000 + 10 * ps[0]
        lines.append(f"310 {t:3d} {f'T{t}':<32} {'':5} {ev.strength[t]:6d} {'':6} {'':6} {'':3}  "
                     + " ".join(f"{p:4d}" for p in ps))
    if not rr and any(pab_round):
        mp, gp = pab
        lines.append(f"320 {float(mp):4.1f} {float(gp):4.1f}" + "".join(f"{t:4d}" for t in pab_round))
    lines += records
    return ev, "\n".join(lines) + "\n"


def _berger(n: int) -> list[list[tuple[int, int]]]:
    """Round-robin rounds by the circle method (a free round for each team when n is odd)."""
    teams: list[int | None] = list(range(1, n + 1)) + ([None] if n % 2 else [])
    m = len(teams)
    out = []
    for r in range(m - 1):
        pairs = []
        for i in range(m // 2):
            a, b = teams[i], teams[m - 1 - i]
            if a is not None and b is not None:
                pairs.append((a, b) if r % 2 == 0 else (b, a))
        out.append(pairs)
        teams = [teams[0], teams[-1], *teams[1:-1]]
    return out


SPECS = ["BH:MP", "BH:GP", "BH:MP/C1", "BH:GP/C2", "BH:MP/M1", "EMMSB/C1", "EMGSB", "EGMSB/C1", "EGGSB/M1",
         "MPvGP", "BC", "SSSC", "BH:MP/C1/P", "EMGSB/C1/P", "EGGSB/P"]


def _check(event: TeamEvent, text: str, edition: str) -> None:
    batch = read_trf([("gen.trf", text.encode())]).batch
    table = compute_teams(batch, ",".join(SPECS), rules=edition).sort("team")
    rows = {r["team"]: r for r in table.iter_rows(named=True)}
    ede = dict(compute_teams(batch, "EDE", rules=edition).select("team", "EDE").iter_rows())
    ranks = ede_ranks(event)
    for t in sorted(event.schedule):
        row = rows[t]
        expected = {
            "mp": score(event, t, "MP"), "gp": score(event, t, "GP"),
            "BH:MP": buchholz(event, t, "MP", edition), "BH:GP": buchholz(event, t, "GP", edition),
            "BH:MP/C1": buchholz(event, t, "MP", edition, 1), "BH:GP/C2": buchholz(event, t, "GP", edition, 2),
            "BH:MP/M1": buchholz(event, t, "MP", edition, 1, 1),
            "EMMSB/C1": extended_sb(event, t, "MP", "MP", edition, 1),
            "EMGSB": extended_sb(event, t, "MP", "GP", edition),
            "EGMSB/C1": extended_sb(event, t, "GP", "MP", edition, 1),
            "EGGSB/M1": extended_sb(event, t, "GP", "GP", edition, 1, 1),
            "MPvGP": score(event, t, "GP"), "BC": board_count(event, t), "SSSC": sssc(event, t, edition),
            "BH:MP/C1/P": buchholz(event, t, "MP", edition, 1, forfeits=True),
            "EMGSB/C1/P": extended_sb(event, t, "MP", "GP", edition, 1, forfeits=True),
            "EGGSB/P": extended_sb(event, t, "GP", "GP", edition, forfeits=True),
        }
        got = {k: Fraction(str(row[k])) for k in expected}
        assert got == expected, (t, edition, {k: (got[k], v) for k, v in expected.items() if got[k] != v})
        assert ede[t] == ranks[t], (t, ede, ranks)


@settings(max_examples=_examples(25))
@given(team_events())
def test_team_kernels_match_the_reference(generated: tuple[TeamEvent, str]) -> None:
    event, text = generated
    for edition in ("fide-2026", "fide-2024"):
        _check(event, text, edition)


@settings(max_examples=_examples(15))
@given(team_events(round_robin=True))
def test_team_round_robins_match_the_reference(generated: tuple[TeamEvent, str]) -> None:
    event, text = generated
    _check(event, text, "fide-2026")


@settings(max_examples=_examples(10))
@given(team_events(round_robin=False))
def test_events_in_one_batch_are_independent(generated: tuple[TeamEvent, str]) -> None:
    """Two copies of an event in one batch get the same team rows (kernels never mix events)."""
    _, text = generated
    batch = read_trf([("a.trf", text.encode()), ("b.trf", text.encode())]).batch
    table = compute_teams(batch, "BH:MP/C1,EGGSB,EDE")
    a = table.filter(pl.col("tournament") == 0).drop("source", "tournament")
    b = table.filter(pl.col("tournament") == 1).drop("source", "tournament")
    assert a.equals(b)


@settings(max_examples=_examples(12))
@given(st.lists(team_events(), min_size=1, max_size=4))
def test_ede_chains_over_a_batch_match_the_reference(generated: list[tuple[TeamEvent, str]]) -> None:
    """EDE, its 2026 chains (EDET, EDEB, EDEBT, EDEBB) and the no-restart reading of Held's ex. 45, with
    several events ranked in one batch (the EDE kernel works on all tied groups of all events at once)."""
    batch = read_trf([(f"g{k}.trf", text.encode()) for k, (_, text) in enumerate(generated)]).batch
    events = {f"g{k}.trf": event for k, (event, _) in enumerate(generated)}
    for chain in CHAIN_STEPS:
        table = compute_teams(batch, chain)
        for source, team, rank in table.select("source", "team", chain).iter_rows():
            assert rank == ede_ranks(events[source], chain)[team], (source, chain, team)
    tc = make_team_context(batch)
    d = tc.td.mp
    labels = extended_direct_encounter(tc, initial_labels(d.tix, -d.score), TieBreakSpec("EDE"), restart=False)
    ranks = competition_rank(labels, d.tix)
    sources = batch.tournaments.sort("tournament")["source"].to_numpy()[d.tix]
    for source, team, rank in zip(sources, d.start_no, ranks, strict=True):
        assert rank == ede_ranks(events[source], restart=False)[int(team)], (source, team)
