# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Fore Buchholz's sum (C.07 8.3) from an edition's unplayed-round stage, in one compiled pass without the GIL.

:func:`tbstats.engine.unplayed.fore_total` is FB before cuts: the edition's Buchholz with every paired game of
each event's final round drawn. Drawing them changes the players' scores, hence the scores their opponents see
(16.3, as the edition adjusts them), every element that is a game by its opponent's change, the dummies' values,
and makes a game of each final-round cell that was none. In numpy that took some twenty calls on the players or
their final-round cells per bucket, each handing the GIL over twice: here it is three passes over the players and
one over the few cells of forfeits counted as games and of the player's own unplayed rounds.

The edition comes as data (:class:`tbstats.model.rules.RuleSet`'s fields, as numbers): how an opponent's score
is adjusted (:data:`OPPONENT_MODES`), what an own unplayed round is worth (:data:`OWN_MODES`), whether the dummy
is capped. Checked against the stage built for FB (:func:`tbstats.engine.unplayed.fore_elements`), and FB
against the reference implementation, for every edition, by tests/test_properties.py.
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

#: ``RuleSet.opponent_score`` and ``RuleSet.own_unplayed`` as the numbers :func:`fore_sums` takes.
OPPONENT_MODES = {"raw": OPP_RAW, "fide": OPP_FIDE, "all_unplayed_draw": OPP_ALL_DRAWN}
OWN_MODES = {"zero": OWN_ZERO, "none": OWN_ZERO, "dummy": OWN_DUMMY, "virtual_opponent": OWN_VIRTUAL}


cdef inline bint _is(const uint8_t[::1] table, int8_t code) noexcept nogil:
    return 0 <= code < table.shape[0] and table[code] != 0


def fore_sums(const int32_t[:, :] opp, const int8_t[:, :] gtype, const int32_t[:, :] pts,
              const int8_t[:, :] category, const uint8_t[:, :] played, const uint8_t[:, :] game_like,
              const uint8_t[:, :] counted, const value_t[:, :] oppscore,
              const int64_t[::1] score, const int64_t[::1] as_opponent, const int64_t[::1] total,
              const uint8_t[::1] predetermined, const int64_t[::1] tix,
              const int64_t[::1] n, const int64_t[::1] planned, const int64_t[::1] win, const int64_t[::1] draw,
              const int64_t[::1] game_rows, const int64_t[::1] game_cols,
              const int64_t[::1] own_rows, const int64_t[::1] own_cols,
              const uint8_t[::1] vur, const uint8_t[::1] forfeit, int opponent_mode, int own_mode, bint caps,
              int8_t played_category, int8_t trailing_category,
              int64_t[::1] final_col, int64_t[::1] new_score, int64_t[::1] new_as_opponent,
              int64_t[::1] delta, int64_t[::1] out) -> None:
    """``out[i]``: player ``i``'s FB before cuts, from the edition's stage: ``total`` (its Buchholz before cuts),
    ``score`` and ``as_opponent`` (the scores, as players and as opponents), ``oppscore`` (the element values),
    ``game_like`` (the elements that are games), the cells of the forfeits counted as games (``game_*``) and of
    the player's own unplayed elements (``own_*``), and the dense view's ``opp``, ``gtype``, ``pts``,
    ``category`` (C.07 16.2), ``played``, ``counted`` (any strides), per player ``predetermined`` (15.2) and
    ``tix``, per tournament ``n`` (rounds counted), ``planned``, ``win`` and ``draw``; ``vur`` and ``forfeit``
    by game type. ``final_col``, ``new_score``, ``new_as_opponent`` and ``delta`` (per player) are working arrays:
    each player's final-round cell (-1: none), and the scores as players and as opponents with it drawn, less
    the old ones."""
    cdef Py_ssize_t P = opp.shape[0], R = opp.shape[1], T = n.shape[0], i, j, k, r, c
    cdef int64_t t, s, v, cap, fc
    cdef int32_t o
    cdef bint followed
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
    if planned.shape[0] != T or win.shape[0] != T or draw.shape[0] != T:
        raise ValueError("fore_sums: the per-tournament arrays' lengths differ")
    if game_cols.shape[0] != game_rows.shape[0] or own_cols.shape[0] != own_rows.shape[0]:
        raise ValueError("fore_sums: the cells' rows and columns differ in length")
    with nogil:
        # each player's final-round cell: the planned last round, counted, with a scheduled opponent (events
        # whose counted rounds stop before it have none, rules.md 4.8); drawn, it gives the player a draw
        for i in range(P):
            t = tix[i]
            fc = n[t] - 1 if n[t] == planned[t] and 0 < n[t] <= R else -1
            if fc >= 0 and opp[i, fc] == NO_OPP:
                fc = -1
            final_col[i] = fc
            new_score[i] = score[i] + (draw[t] - pts[i, fc] if fc >= 0 else 0)
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
            t = tix[r]
            if own_mode == OWN_DUMMY:
                v = new_score[r]
                if caps:
                    o = opp[r, c]
                    if _is(forfeit, gtype[r, c]) and 0 <= o < P:
                        cap = new_as_opponent[o]
                    else:
                        cap = draw[t] * n[t]
                    if v > cap:
                        v = cap
            elif own_mode == OWN_VIRTUAL:   # the points before its round (never a final-round game's)
                v = win[t] - pts[r, c] + draw[t] * (n[t] - (c + 1))
                for j in range(c):
                    v += pts[r, j]
            else:
                v = 0
            out[r] += v
