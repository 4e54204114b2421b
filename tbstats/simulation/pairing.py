"""Pairing: Berger tables for round robins, a vectorised Dutch-like Swiss pairing with local repair."""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

from tbstats.simulation.config import Bools, Idx, Ints, SimulationConfig, SimulationStats
from tbstats.simulation.outcomes import _play
from tbstats.simulation.state import _HALF, _PAB, _ZERO, _Block

# local-search weights (lexicographic in practice) and bounds
_W_REMATCH: Final = 1_000_000
_W_ABSOLUTE: Final = 10_000
_W_SCORE: Final = 100      # per scoring unit of score difference inside a pair
_W_PREFERENCE: Final = 10  # both want the same colour


def _colour_cost_table() -> Ints:
    """Cost of pairing colour states ``x`` and ``y`` at index ``8x + y``.

    States: 0 prefers Black, 1 no preference, 2 prefers White, 3 / 4 absolute Black / White preference.
    """
    direction = np.array([-1, 0, 1, -1, 1, 0, 0, 0])
    absolute = np.array([0, 0, 0, 1, 1, 0, 0, 0])
    same = np.outer(direction, direction) == 1
    return (_W_PREFERENCE * same + _W_ABSOLUTE * (same & (np.outer(absolute, absolute) == 1))).ravel()


_COLOUR_COST: Final = _colour_cost_table()
_P_EXCHANGE: Final = 4     # an exchange (a,c),(b,d) rather than a transposition
_P_CROSS: Final = 5        # a move between two brackets
_WINDOW: Final = 4
_WIDE_WINDOW: Final = 16
_PASSES: Final = 8
_SEARCH_BUDGET: Final = 20_000


def _berger(n_players: int, rounds: int) -> tuple[npt.NDArray[np.int32], Bools]:
    """Opponent index (-1 = free round) and 'plays White' per round and player, from the Berger tables.

    With ``n`` even (a dummy added to odd fields) and ``m = n - 1``, in round ``r`` players ``i, j < n``
    meet when ``i + j = r + 1 (mod m)``, and the player with ``2i = r + 1 (mod m)`` meets player ``n``;
    ``i`` has White when ``(j - i) mod m`` is odd, and player ``n`` has Black in odd rounds.

    >>> opp, white = _berger(6, 5)
    >>> [(int(i) + 1, int(opp[1, i]) + 1) for i in range(6) if white[1, i]]  # round 2: 6-4 5-3 1-2
    [(1, 2), (5, 3), (6, 4)]
    """
    n = n_players + n_players % 2
    m = n - 1
    i = np.arange(1, m + 1)
    opp = np.empty((rounds, n), np.int32)
    white = np.empty((rounds, n), np.bool_)
    for k in range(rounds):
        r = k % m + 1
        j = (r + 1 - i) % m
        j = np.where(j == 0, m, j)
        vs_last = j == i
        opp[k, :m] = np.where(vs_last, n, j) - 1
        white[k, :m] = np.where(vs_last, r % 2 == 1, (j - i) % m % 2 == 1)
        opp[k, m] = int(np.flatnonzero(vs_last)[0])
        white[k, m] = r % 2 == 0
        if k >= m:  # second cycle: colours reversed
            white[k] = ~white[k]
    if n != n_players:  # the dummy: its opponent has a free round
        opp[opp == n - 1] = -1
        opp, white = opp[:, :n_players], white[:, :n_players]
    return opp, white


def _round_robin_round(cfg: SimulationConfig, rng: np.random.Generator, block: _Block, r: int,
                       stats: SimulationStats) -> None:
    n_t, n = block.score.shape
    opp, white = _berger(n, r + 1)
    boards = np.flatnonzero(white[r] & (opp[r] >= 0))
    t = np.repeat(np.arange(n_t), len(boards))
    w = np.tile(boards, n_t)
    b = opp[r][w].astype(np.intp)
    present = block.present_rounds > r
    code_w, code_b, double = _play(cfg, rng, block, t, w, b, ~present[t, w], ~present[t, b])
    block.record_games(t, w, b, r, code_w, code_b, double)
    block.close_round(r)
    stats.paired_rounds += n_t
    stats.pairs += len(t)


def _swiss_round(cfg: SimulationConfig, rng: np.random.Generator, block: _Block, r: int,
                 stats: SimulationStats) -> None:
    """Byes, pairing, colours and results of round ``r`` (0-based) of every tournament of the block."""
    n_t, n = block.score.shape
    present = block.present_rounds > r
    u = rng.random((n_t, n))
    half = present & (u < cfg.half_bye_rate)
    zero = present & ~half & (u < cfg.half_bye_rate + cfg.zero_bye_rate)
    pairable = present & ~half & ~zero
    for mask, code in ((half, _HALF), (zero, _ZERO)):
        tt, pp = np.nonzero(mask)
        block.record_single(tt, pp, r, code)

    # the pairing-allocated bye: lowest-ranked player of the lowest score group without PAB / forfeit win
    odd = pairable.sum(axis=1) % 2 == 1
    eligible = pairable & ~block.no_pab
    any_eligible: Bools = np.asarray(eligible.any(axis=1))
    candidates = np.where(any_eligible[:, None], eligible, pairable)
    key = np.where(candidates, -block.score * n + np.arange(n), np.iinfo(np.int64).min)
    pab_t = np.flatnonzero(odd)
    pab_p = np.argmax(key[pab_t], axis=1)
    stats.repeated_pabs += int((odd & ~any_eligible).sum())
    block.record_single(pab_t, pab_p, r, _PAB)
    pairable[pab_t, pab_p] = False

    pref, strength = _preferences(block)
    t, hi, lo = _pair(block, pairable, pref, strength, stats)
    stats.paired_rounds += int(pairable.any(axis=1).sum())
    stats.pairs += len(t)
    stats.rematches += int(block.met[t, hi, lo].sum())
    white_hi = _allocate_colours(block, pref, strength, t, hi, lo, r, stats)
    white = np.where(white_hi, hi, lo)
    black = np.where(white_hi, lo, hi)
    no = np.zeros(len(t), np.bool_)
    code_w, code_b, double = _play(cfg, rng, block, t, white, black, no, no)
    block.record_games(t, white, black, r, code_w, code_b, double)
    block.close_round(r)


def _preferences(block: _Block) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int8]]:
    """Colour preference (+1 White, -1 Black, 0 none) and its strength (3 absolute, 2 strong, 1 mild, 0).

    C.04.3 A.6: absolute when the colour difference exceeds 1 or the last two games had the same colour;
    strong when the difference is 1; mild (alternate) when it is 0 after at least one game.
    """
    cd, last1, last2 = block.colour_diff, block.last1, block.last2
    twice = (last1 == last2) & (last1 != 0)
    big = np.abs(cd) > 1
    pref = np.where(big, -np.sign(cd), np.where(twice, -last1, np.where(cd != 0, -np.sign(cd), -last1)))
    strength = np.where(big | twice, 3, np.where(cd != 0, 2, np.where(last1 != 0, 1, 0)))
    return pref.astype(np.int8), strength.astype(np.int8)


class _Ranked:
    """The players to pair in one round, flattened in (tournament, -score, start number) order."""

    def __init__(self, block: _Block, pairable: Bools, pref: npt.NDArray[np.int8],
                 strength: npt.NDArray[np.int8]) -> None:
        n = pairable.shape[1]
        score = block.score
        top = int(score.max()) + 1 if score.size else 1
        key = np.where(pairable, (top - score) * n + np.arange(n), np.iinfo(np.int64).max)
        order = np.argsort(key, axis=1)
        counts = pairable.sum(axis=1)
        tt, pos = np.nonzero(np.arange(n)[None, :] < counts[:, None])
        self.t: Idx = tt
        self.pos: Idx = pos
        self.player: Idx = order[tt, pos]
        self.score: Ints = score[tt, self.player]
        # colour state 0..4: preference -1/0/+1, +2 when absolute; packed under the score (3 bits)
        p, absolute = pref[tt, self.player].astype(np.int64), strength[tt, self.player] == 3
        self._packed: Ints = self.score * 8 + np.where(absolute, 3 + (p > 0), p + 1)  # see _COLOUR_COST
        self.met = block.met
        self._met_flat = block.met.reshape(-1)
        self._met_row: Ints = (tt * n + self.player) * n

    def entries(self, x: Idx) -> tuple[Ints, Ints, Idx]:
        """What :meth:`pair_cost` needs of flat entries ``x``, gathered once."""
        return self._packed[x], self._met_row[x], self.player[x]

    def pair_cost(self, x: tuple[Ints, Ints, Idx], y: tuple[Ints, Ints, Idx]) -> Ints:
        """Defect weight of pairing the (gathered) entries ``x`` and ``y`` of the same tournaments."""
        px, py = x[0], y[0]
        c: Ints = _COLOUR_COST[(px & 7) * 8 + (py & 7)]
        c += _W_SCORE * np.abs((px >> 3) - (py >> 3))
        c += _W_REMATCH * self._met_flat[x[1] + y[2]]
        return c

    def cost(self, x: Idx, y: Idx) -> Ints:
        """Defect weight of pairing flat entries ``x`` and ``y`` (same tournament)."""
        return self.pair_cost(self.entries(x), self.entries(y))


def _brackets(ranked: _Ranked) -> tuple[Idx, Idx]:
    """Segment id of every flat entry and the first boards (top half vs bottom half of each segment).

    Score groups are runs of equal score; when the players of the groups up to one are odd in number, its
    last player floats down and opens the next bracket, where it is paired with the highest resident (a
    segment of two); every other segment pairs its top half against its bottom half.
    """
    tt, pos, score = ranked.t, ranked.pos, ranked.score
    size = len(tt)
    same_next = np.zeros(size, np.bool_)
    same_next[:-1] = tt[1:] == tt[:-1]
    group_end = ~same_next
    group_end[:-1] |= score[1:] != score[:-1]
    odd_so_far = pos % 2 == 0
    floater = group_end & odd_so_far
    start = pos == 0
    start[1:] |= group_end[:-1] & ~odd_so_far[:-1]
    start |= floater
    start[2:] |= floater[:-2] & (tt[2:] == tt[:-2])
    first = np.flatnonzero(start)
    seg = np.cumsum(start) - 1
    length = np.diff(np.append(first, size))
    if (length % 2).any():  # pragma: no cover - guaranteed by construction
        raise AssertionError("odd pairing segment")
    offset = np.arange(size) - first[seg]
    half = length[seg] // 2
    s1 = np.flatnonzero(offset < half)
    return seg, s1


def _pair(block: _Block, pairable: Bools, pref: npt.NDArray[np.int8], strength: npt.NDArray[np.int8],
          stats: SimulationStats) -> tuple[Idx, Idx, Idx]:
    """Pair every tournament of the block: tournament, higher-ranked and lower-ranked player per board."""
    ranked = _Ranked(block, pairable, pref, strength)
    if len(ranked.t) == 0:
        empty_idx = np.zeros(0, np.intp)
        return empty_idx, empty_idx, empty_idx
    seg, s1 = _brackets(ranked)
    hi = s1.copy()
    lo = s1 + (np.bincount(seg)[seg[s1]] // 2)
    board_t = ranked.t[hi]
    cost = ranked.cost(hi, lo)
    for window, threshold in ((_WINDOW, 1), (_WIDE_WINDOW, _W_REMATCH)):
        todo = cost >= threshold
        for _ in range(_PASSES):
            changed = _improve(ranked, seg, board_t, hi, lo, cost, window, np.flatnonzero(todo))
            stats.repair_moves += len(changed) // 2
            if not changed.size:
                break
            # only boards near a change can improve in the next pass
            near = np.zeros(len(hi) + 2 * window + 1, np.int64)
            near[changed] += 1
            near[changed + 2 * window + 1] -= 1
            todo = (np.cumsum(near)[window:window + len(hi)] > 0) & (cost >= threshold)
    bad = np.unique(board_t[cost >= _W_REMATCH])
    for t in bad.tolist():  # rare: see stats.fallback_rounds
        stats.fallback_rounds += 1
        if not _search(ranked, board_t, hi, lo, t):
            stats.fallback_failures += 1
    return board_t, ranked.player[hi], ranked.player[lo]


def _improve(ranked: _Ranked, seg: Idx, board_t: Idx, hi: Idx, lo: Idx, cost: Ints, window: int,
             start: Idx) -> Idx:
    """One pass of 2-opt re-pairings from boards ``start`` to boards at most ``window`` away.

    Updates ``hi``, ``lo`` and ``cost`` in place and returns the boards changed.
    """
    boards = len(hi)
    none = np.zeros(0, np.intp)
    if not start.size:
        return none
    steps = np.concatenate([np.arange(1, window + 1), -np.arange(1, window + 1)])
    other = start[:, None] + steps[None, :]
    valid = (other >= 0) & (other < boards)
    other = np.clip(other, 0, boards - 1)
    valid &= board_t[other] == board_t[start][:, None]
    a, b = hi[start][:, None], lo[start][:, None]
    c, d = hi[other], lo[other]
    before = cost[start][:, None] + cost[other]
    cross = _P_CROSS * (seg[a] != seg[c])
    ea, eb, ec, ed = ranked.entries(a), ranked.entries(b), ranked.entries(c), ranked.entries(d)
    transpose = ranked.pair_cost(ea, ed) + ranked.pair_cost(ec, eb) - before + cross
    exchange = ranked.pair_cost(ea, ec) + ranked.pair_cost(eb, ed) - before + cross + _P_EXCHANGE
    delta = np.stack([transpose, exchange], axis=2).reshape(len(start), -1)
    delta[~np.repeat(valid, 2, axis=1)] = np.iinfo(np.int64).max
    best = np.argmin(delta, axis=1)
    gain = delta[np.arange(len(start)), best] < 0
    if not gain.any():
        return none
    j = start[gain]
    k = other[gain, best[gain] // 2]
    variant = best[gain] % 2
    # boards claimed by several moves: the move started by the highest board wins
    ident = np.arange(len(j))
    claim = np.full(boards, len(j))
    np.minimum.at(claim, j, ident)
    np.minimum.at(claim, k, ident)
    keep = (claim[j] == ident) & (claim[k] == ident)
    j, k, variant = j[keep], k[keep], variant[keep]
    a1, b1, c1, d1 = hi[j], lo[j], hi[k], lo[k]
    x1, y1 = a1, np.where(variant == 0, d1, c1)
    x2, y2 = np.where(variant == 0, c1, b1), np.where(variant == 0, b1, d1)
    hi[j], lo[j] = np.minimum(x1, y1), np.maximum(x1, y1)
    hi[k], lo[k] = np.minimum(x2, y2), np.maximum(x2, y2)
    cost[j] = ranked.cost(hi[j], lo[j])
    cost[k] = ranked.cost(hi[k], lo[k])
    return np.concatenate([j, k])


def _search(ranked: _Ranked, board_t: Idx, hi: Idx, lo: Idx, t: int) -> bool:
    """Re-pair tournament ``t`` without rematches by a bounded depth-first search; False when none found.

    The highest unpaired player takes, in turn, the unpaired players nearest in rank to its current partner.
    """
    b0, b1 = np.searchsorted(board_t, [t, t + 1])
    f0, f1 = np.searchsorted(ranked.t, [t, t + 1])
    size = int(f1 - f0)
    players = ranked.player[f0:f1]
    allowed = ~ranked.met[t][np.ix_(players, players)]
    np.fill_diagonal(allowed, False)
    ok: list[list[bool]] = allowed.tolist()
    partner = [0] * size
    for x, y in zip((hi[b0:b1] - f0).tolist(), (lo[b0:b1] - f0).tolist(), strict=True):
        partner[x], partner[y] = y, x
    mate = [-1] * size
    nodes = 0

    def extend(first: int) -> bool:
        nonlocal nodes
        while first < size and mate[first] >= 0:
            first += 1
        if first == size:
            return True
        nodes += 1
        if nodes > _SEARCH_BUDGET:
            return False
        near = partner[first]
        options = sorted((v for v in range(first + 1, size) if mate[v] < 0 and ok[first][v]),
                         key=lambda v: (abs(v - near), v))
        for v in options:
            mate[first], mate[v] = v, first
            if extend(first + 1):
                return True
            mate[first] = mate[v] = -1
            if nodes > _SEARCH_BUDGET:
                return False
        return False

    if not extend(0):
        return False
    pairs = sorted((x, mate[x]) for x in range(size) if x < mate[x])
    hi[b0:b1] = [f0 + x for x, _ in pairs]
    lo[b0:b1] = [f0 + y for _, y in pairs]
    return True


def _allocate_colours(block: _Block, pref: npt.NDArray[np.int8], strength: npt.NDArray[np.int8], t: Idx,
                      hi: Idx, lo: Idx, r: int, stats: SimulationStats) -> Bools:
    """Whether the higher-ranked player of each board gets White (C.04.3 E.1-E.5)."""
    ph, pl_ = pref[t, hi], pref[t, lo]
    sh, sl = strength[t, hi], strength[t, lo]
    initial = np.where(hi % 2 == 0, block.initial_white[t], ~block.initial_white[t])  # E.5
    white = np.where(ph != 0, ph > 0, np.where(pl_ != 0, pl_ < 0, initial))  # E.1 (and no preference)
    clash = (ph == pl_) & (ph != 0)
    stats.absolute_colour_clashes += int((clash & (sh == 3) & (sl == 3)).sum())
    cdh, cdl = np.abs(block.colour_diff[t, hi]), np.abs(block.colour_diff[t, lo])
    stronger = (sh != sl) | ((sh == 3) & (cdh != cdl))  # E.2
    hi_wins = np.where(sh != sl, sh > sl, cdh > cdl)
    white = np.where(clash & stronger, np.where(hi_wins, ph > 0, pl_ < 0), white)
    rest = np.flatnonzero(clash & ~stronger)
    if rest.size and r > 0:  # E.3: alternate to the last round with different colours, else E.4
        hh = block.played_colour[t[rest], hi[rest], :r]
        hl = block.played_colour[t[rest], lo[rest], :r]
        differ = (hh * hl) == -1
        has = differ.any(axis=1)
        last = r - 1 - np.argmax(differ[:, ::-1], axis=1)
        white[rest] = np.where(has, hh[np.arange(len(rest)), last] < 0, ph[rest] > 0)
    return white
