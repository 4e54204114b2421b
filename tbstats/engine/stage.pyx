# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The unplayed-round stage's compiled passes (:mod:`tbstats.engine.unplayed`), each without the GIL.

In numpy each took some twenty calls on a bucket's players, cells or rounds, each handing the GIL over twice
(the engine's two threads then wait on each other: benchmarks/RESULTS.md, session of 2026-12-04 14:45):

- :func:`stage_cells`: an edition's stage (rules.md 4.7): the score each player shows as an opponent (16.3),
  which rounds are elements of BH/SB and which of them are games, the player's own unplayed rounds with their
  dummy or virtual opponent (16.4) and the voluntary unplayed rounds (16.5), and each element's value;
- :func:`fore_sums`: Fore Buchholz's sum (C.07 8.3) from such a stage, as :func:`tbstats.engine.unplayed.fore_total`
  describes: drawing the final round's games changes the players' scores, hence the scores their opponents see,
  every element that is a game by its opponent's change and the dummies' values, and makes a game of each
  final-round cell that was none.

The edition comes as data (:class:`tbstats.model.rules.RuleSet`'s fields, as numbers): how an opponent's score
is adjusted (:data:`OPPONENT_MODES`), what an own unplayed round is worth (:data:`OWN_MODES`), whether the dummy
is capped, whether VURs are marked. Checked against the reference implementation for every edition (every
tie-break on the stage), and FB's sum against the stage built for FB (:func:`tbstats.engine.unplayed.fore_elements`),
by tests/test_properties.py.
"""

from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t

ctypedef fused value_t:   # the stage's element values (``oppscore``): int32 where they fit, else int64
    int32_t
    int64_t

cdef enum:
    NO_OPP = -1           # tbstats.model.dense.NO_OPP
    OPP_RAW = 0
    OPP_FIDE = 1          # awarded points, trailing requested byes as draws (16.3)
    OPP_ALL_DRAWN = 2     # every unplayed counted round as a draw
    OWN_ZERO = 0          # an own unplayed round is worth nothing (or is no element)
    OWN_DUMMY = 1         # the player's own score (16.4), capped where the edition says
    OWN_VIRTUAL = 2       # S(r-1) + (W - p) + D(n - r)
    OWN_NONE = 3          # an own unplayed round is no element
    CAP_NONE = 0          # which cap bounded a dummy (tbstats.engine.unplayed.CAP_*)
    CAP_OPPONENT = 1
    CAP_DRAWS = 2

#: ``RuleSet.opponent_score`` and ``RuleSet.own_unplayed`` as the numbers the passes take.
OPPONENT_MODES = {"raw": OPP_RAW, "fide": OPP_FIDE, "all_unplayed_draw": OPP_ALL_DRAWN}
OWN_MODES = {"zero": OWN_ZERO, "none": OWN_NONE, "dummy": OWN_DUMMY, "virtual_opponent": OWN_VIRTUAL}


cdef inline bint _is(const uint8_t[::1] table, int8_t code) noexcept nogil:
    return 0 <= code < table.shape[0] and table[code] != 0


cdef inline int64_t _own_value(Py_ssize_t r, Py_ssize_t c, int64_t t, int64_t score, const int64_t[::1] as_opponent,
                               const int32_t[:, :] opp, const int8_t[:, :] gtype, const int32_t[:, :] pts,
                               const int64_t[::1] n, const int64_t[::1] win, const int64_t[::1] draw,
                               const uint8_t[::1] forfeit, int own_mode, bint caps, int64_t *uncapped,
                               int8_t *cap) noexcept nogil:
    """The element of the own unplayed round ``r``, ``c`` (16.4): the dummy (the player's ``score``, capped at
    the scheduled opponent's score for a forfeit, else at D x n, where ``caps``) or the virtual opponent, with
    its value before caps and the cap that bounded it; 0 for an edition whose own rounds are worth nothing."""
    cdef int64_t value = 0, bound
    cdef int32_t o
    cdef Py_ssize_t j
    cdef int8_t code = CAP_NONE
    if own_mode == OWN_DUMMY:
        value = score
        uncapped[0] = value
        if caps:
            o = opp[r, c]
            if _is(forfeit, gtype[r, c]) and 0 <= o < as_opponent.shape[0]:
                bound, code = as_opponent[o], CAP_OPPONENT
            else:
                bound, code = draw[t] * n[t], CAP_DRAWS
            if value > bound:
                value = bound
            else:
                code = CAP_NONE
    elif own_mode == OWN_VIRTUAL:   # the points before its round
        value = win[t] - pts[r, c] + draw[t] * (n[t] - (c + 1))
        for j in range(c):
            value += pts[r, j]
        uncapped[0] = value
    else:
        uncapped[0] = 0
    cap[0] = code
    return value


def fore_sums(const int32_t[:, :] opp, const int8_t[:, :] gtype, const int32_t[:, :] pts,
              const int8_t[:, :] category, const uint8_t[:, :] played, const uint8_t[:, :] game_like,
              const uint8_t[:, :] counted, const value_t[:, :] oppscore,
              const int64_t[::1] score, const int64_t[::1] as_opponent, const int64_t[::1] total,
              const uint8_t[::1] predetermined, const int64_t[::1] tix,
              const int64_t[::1] n, const int64_t[::1] win, const int64_t[::1] draw,
              const int64_t[::1] final_col, const int64_t[::1] game_rows, const int64_t[::1] game_cols,
              const int64_t[::1] own_rows, const int64_t[::1] own_cols,
              const uint8_t[::1] vur, const uint8_t[::1] forfeit, int opponent_mode, int own_mode, bint caps,
              int8_t played_category, int8_t trailing_category,
              int64_t[::1] new_score, int64_t[::1] new_as_opponent, int64_t[::1] delta, int64_t[::1] out) -> None:
    """``out[i]``: player ``i``'s FB before cuts, from the edition's stage: ``total`` (its Buchholz before cuts),
    ``score`` and ``as_opponent`` (the scores, as players and as opponents), ``oppscore`` (the element values),
    ``game_like`` (the elements that are games), the cells of the forfeits counted as games (``game_*``) and of
    the player's own unplayed elements (``own_*``), and the dense view's ``opp``, ``gtype``, ``pts``,
    ``category`` (C.07 16.2), ``played``, ``counted`` (any strides), per player ``predetermined`` (15.2),
    ``tix`` and ``final_col`` (the final round's cell that FB draws, -1: none;
    :func:`tbstats.engine.unplayed.final_columns`), per tournament ``n`` (rounds counted), ``win`` and ``draw``;
    ``vur`` and ``forfeit`` by game type. ``new_score``, ``new_as_opponent`` and ``delta`` (per player) are working
    arrays: the scores as players and as opponents with the final round drawn, less the old ones."""
    cdef Py_ssize_t P = opp.shape[0], R = opp.shape[1], T = n.shape[0], i, j, k, r, c
    cdef int64_t t, s, v, fc, v_uncapped
    cdef int32_t o
    cdef int8_t v_cap
    cdef bint followed, bad = False
    if any((a, b) != (P, R) for a, b in ((gtype.shape[0], gtype.shape[1]), (pts.shape[0], pts.shape[1]),
                                         (category.shape[0], category.shape[1]), (played.shape[0], played.shape[1]),
                                         (game_like.shape[0], game_like.shape[1]),
                                         (counted.shape[0], counted.shape[1]),
                                         (oppscore.shape[0], oppscore.shape[1]))):
        raise ValueError("fore_sums: the players x rounds arrays' shapes differ")
    if any(m != P for m in (score.shape[0], as_opponent.shape[0], total.shape[0], predetermined.shape[0],
                            tix.shape[0], final_col.shape[0], new_score.shape[0], new_as_opponent.shape[0],
                            delta.shape[0], out.shape[0])):
        raise ValueError("fore_sums: the per-player arrays' lengths differ")
    if win.shape[0] != T or draw.shape[0] != T:
        raise ValueError("fore_sums: the per-tournament arrays' lengths differ")
    if game_cols.shape[0] != game_rows.shape[0] or own_cols.shape[0] != own_rows.shape[0]:
        raise ValueError("fore_sums: the cells' rows and columns differ in length")
    with nogil:
        for i in range(P):
            if not -1 <= final_col[i] < R:
                bad = True
    if bad:
        raise ValueError("fore_sums: a final-round column outside the rounds")
    with nogil:
        # each player's final-round cell, drawn, gives the player a draw
        for i in range(P):
            fc = final_col[i]
            new_score[i] = score[i] + (draw[tix[i]] - pts[i, fc] if fc >= 0 else 0)
        # the score each one shows as an opponent (16.3): the rounds the edition counts as draws, but a final
        # round that is a game now (and the requested byes before it, followed now)
        for i in range(P):
            t = tix[i]
            s = new_score[i]
            fc = final_col[i]
            if opponent_mode != OPP_RAW and not predetermined[i]:
                if opponent_mode == OPP_FIDE:
                    followed = fc >= 0 and _is(vur, gtype[i, fc])
                    if not followed:
                        for j in range(R):
                            if category[i, j] == trailing_category:
                                s += draw[t] - pts[i, j]
                else:
                    for j in range(R):
                        if j != fc and counted[i, j] and category[i, j] != played_category:
                            s += draw[t] - pts[i, j]
            new_as_opponent[i] = s
            delta[i] = s - as_opponent[i]
        # every game played over the board changes by its opponent's change; a final-round cell that was no
        # game becomes one, worth its opponent's new score
        for i in range(P):
            s = total[i]
            for j in range(R):
                if played[i, j]:
                    o = opp[i, j]
                    if 0 <= o < P:
                        s += delta[o]
            fc = final_col[i]
            if fc >= 0 and not game_like[i, fc]:
                o = opp[i, fc]
                if 0 <= o < P:
                    s += new_as_opponent[o]
            out[i] = s
        # the forfeits counted as games (15.2, /P) change as the games do
        for k in range(game_rows.shape[0]):
            r, c = game_rows[k], game_cols[k]
            o = opp[r, c]
            if 0 <= o < P:
                out[r] += delta[o]
        # the own unplayed elements: their old values out; valued again with the new scores, unless the final
        # round's cell is a game now (16.4)
        for k in range(own_rows.shape[0]):
            r, c = own_rows[k], own_cols[k]
            out[r] -= oppscore[r, c]
            if final_col[r] == c:
                continue
            v = _own_value(r, c, tix[r], new_score[r], new_as_opponent, opp, gtype, pts, n, win, draw, forfeit,
                           own_mode, caps, &v_uncapped, &v_cap)
            out[r] += v


def stage_cells(const int32_t[:, ::1] opp, const int8_t[:, ::1] gtype, const int32_t[:, ::1] pts,
                const int8_t[:, ::1] category, const uint8_t[:, ::1] played, const uint8_t[:, :] counted,
                const int64_t[::1] score, const uint8_t[::1] predetermined, const int64_t[::1] tix,
                const int64_t[::1] n, const int64_t[::1] win, const int64_t[::1] draw,
                const uint8_t[::1] vur_type, const uint8_t[::1] forfeit_type, int opponent_mode, int own_mode,
                bint caps, bint vur_cuts, bint forfeits, int8_t played_category, int8_t trailing_category,
                int64_t[::1] as_opponent, uint8_t[:, ::1] game_like, uint8_t[:, ::1] own, uint8_t[:, ::1] present,
                uint8_t[:, ::1] vur, value_t[:, ::1] oppscore, int64_t[::1] game_at, int64_t[::1] own_at,
                value_t[::1] uncapped, int8_t[::1] cap, const int64_t[::1] final_col, int64_t[::1] total,
                int64_t[::1] elements) -> tuple[int, int]:
    """An edition's stage over a players x rounds view (rules.md 4.7), as :func:`tbstats.engine.unplayed.apply_rules`
    describes; the numbers of the forfeits counted as games and of the own unplayed elements, whose flat
    positions (row by row, as numpy lists them) go to the first places of ``game_at`` and ``own_at`` (each as
    long as the view has cells), with each own element's value before caps and the cap that bounded it.

    ``as_opponent``: each player's score as an opponent (16.3: the rounds the edition counts as draws, none in a
    pre-determined event). ``game_like``: the games played over the board and the forfeits with a scheduled
    opponent counted as games (in pre-determined events, 15.2, and with ``forfeits``, the /P modifier).
    ``own``: the counted rounds that are none of these, in editions with own elements, outside pre-determined
    events; ``present`` = ``game_like`` | ``own``; ``vur``: the own rounds of a VUR type, where ``vur_cuts``.
    ``oppscore``: the opponent's score as an opponent for a game, the dummy or virtual opponent (16.4) for an
    own element, 0 elsewhere. ``final_col`` (per player, or empty): the column of a round that is a game
    whatever its type (FB's stage: the final round's paired cells, drawn in ``pts`` and ``category``); the ones
    not played over the board are listed with the forfeits counted as games. ``total`` and ``elements``: each
    player's sum of ``oppscore`` over its elements (BH before cuts) and their number, from the same pass."""
    cdef Py_ssize_t P = opp.shape[0], R = opp.shape[1], T = n.shape[0], i, j, games = 0, owns = 0
    cdef int64_t t, s, before, row_total, row_count
    cdef int32_t o
    cdef int8_t cat, bound
    cdef bint pre, game, mine, drawn, maybe_forfeit, with_own = own_mode != OWN_NONE
    if any((a, b) != (P, R) for a, b in ((gtype.shape[0], gtype.shape[1]), (pts.shape[0], pts.shape[1]),
                                         (category.shape[0], category.shape[1]), (played.shape[0], played.shape[1]),
                                         (counted.shape[0], counted.shape[1]), (game_like.shape[0], game_like.shape[1]),
                                         (own.shape[0], own.shape[1]), (present.shape[0], present.shape[1]),
                                         (vur.shape[0], vur.shape[1]), (oppscore.shape[0], oppscore.shape[1]))):
        raise ValueError("stage_cells: the players x rounds arrays' shapes differ")
    if any(m != P for m in (score.shape[0], predetermined.shape[0], tix.shape[0], as_opponent.shape[0],
                            total.shape[0], elements.shape[0])):
        raise ValueError("stage_cells: the per-player arrays' lengths differ")
    if win.shape[0] != T or draw.shape[0] != T:
        raise ValueError("stage_cells: the per-tournament arrays' lengths differ")
    if any(m < P * R for m in (game_at.shape[0], own_at.shape[0], uncapped.shape[0], cap.shape[0])):
        raise ValueError("stage_cells: the cells' lists are shorter than the view")
    if final_col.shape[0] not in (0, P):
        raise ValueError("stage_cells: final_col is neither empty nor one per player")
    cdef bint with_final = final_col.shape[0] > 0
    with nogil:
        for i in range(P):
            t = tix[i]
            s = score[i]
            if opponent_mode != OPP_RAW and not predetermined[i]:
                for j in range(R):
                    cat = category[i, j]
                    if opponent_mode == OPP_FIDE:
                        drawn = cat == trailing_category
                    else:
                        drawn = counted[i, j] != 0 and cat != played_category
                    if drawn:
                        s += draw[t] - pts[i, j]
            as_opponent[i] = s
        for i in range(P):
            pre = predetermined[i] != 0
            maybe_forfeit = forfeits or pre
            row_total = row_count = 0
            for j in range(R):
                o = opp[i, j]
                game = played[i, j] != 0
                mine = False
                if not game and counted[i, j] != 0:
                    if (with_final and final_col[i] == j) or (maybe_forfeit and o != NO_OPP
                                                              and _is(forfeit_type, gtype[i, j])):
                        game = True
                        game_at[games] = i * R + j
                        games += 1
                    elif with_own and not pre and category[i, j] != played_category:
                        mine = True
                game_like[i, j] = game
                own[i, j] = mine
                present[i, j] = game or mine
                if mine:
                    vur[i, j] = vur_cuts and _is(vur_type, gtype[i, j])
                    own_at[owns] = i * R + j
                    oppscore[i, j] = <value_t>_own_value(i, j, tix[i], score[i], as_opponent, opp, gtype, pts, n,
                                                         win, draw, forfeit_type, own_mode, caps, &before, &bound)
                    uncapped[owns] = <value_t>before
                    cap[owns] = bound
                    owns += 1
                else:
                    vur[i, j] = False
                    oppscore[i, j] = <value_t>as_opponent[o] if game and 0 <= o < P else 0
                if game or mine:
                    row_total += oppscore[i, j]
                    row_count += 1
            total[i] = row_total
            elements[i] = row_count
    return games, owns


def final_cells(const int64_t[::1] tix, const int64_t[::1] last, const int32_t[:, ::1] opp, int64_t[::1] out) -> None:
    """``out[i]``: the column of player ``i``'s final round that Fore Buchholz draws, -1 when none: its
    tournament's ``last`` column (-1: its counted rounds stop before the planned final round), where the player
    has a scheduled opponent (:func:`tbstats.engine.unplayed.final_columns`)."""
    cdef Py_ssize_t P = opp.shape[0], R = opp.shape[1], T = last.shape[0], i
    cdef int64_t t, col
    cdef bint bad = False
    if tix.shape[0] != P or out.shape[0] != P:
        raise ValueError("final_cells: tix, opp and out differ in players")
    with nogil:
        for i in range(P):
            t = tix[i]
            if t < 0 or t >= T:
                bad = True
                break
            col = last[t]
            if col >= R:
                bad = True
                break
            out[i] = col if col >= 0 and opp[i, col] != NO_OPP else -1
    if bad:
        raise ValueError("final_cells: a tournament row or final column out of range")
