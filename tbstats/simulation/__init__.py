"""Seeded simulation of many Swiss or round-robin tournaments at once, as a :class:`~tbstats.model.batch.Batch`.

:func:`simulate` draws players with a hidden true strength, pairs them round by round and plays the games
with an Elo model, vectorised with numpy over whole blocks of tournaments: Python loops run over blocks,
rounds and a bounded number of repair passes, never over tournaments or players (except the rare pairing
fallback below). It returns the batch and a ``truth`` table (tournament, start_no, strength), so that later
code can measure how well a tie-break order recovers true strength.

Players (per tournament)
    event level ``m ~ N(strength_mean, event_sd)``; strength ``s ~ N(m, strength_sd)``; published rating
    ``round(s + N(0, rating_noise))`` clipped to 1000..2900, or null for a share ``unrated_rate`` of players.
    Start numbers follow descending rating, unrated players last (ties in random order).

Results (Elo model, 400 scale)
    ``d = s_white + white_advantage - s_black``; expected score of White ``E = 1 / (1 + 10^(-d / 400))``.
    Draw probability ``p_draw = clip(draw_base + draw_slope * (mean - draw_pivot) / 100, draw_min, draw_max)
    * exp(-|d| / draw_gap)``, ``mean`` being the mean true strength of the two players, then capped at
    ``2 * min(E, 1 - E)``. White wins with probability ``E - p_draw / 2``, draws with ``p_draw``, so White's
    expected score is exactly ``E``.

Unplayed rounds (rates are probabilities; rules.md 2.2 and 4.2)
    Per player and round: a requested half-point bye ``H`` (``half_bye_rate``, any round including the last)
    or zero-point bye ``Z`` (``zero_bye_rate``). Per player and event: withdrawal (``withdrawal_rate``) after a
    round drawn uniformly from 1..rounds-1; every later round is ``absent`` (no opponent, null result). Per
    game: a double forfeit ``-``/``-`` (``double_forfeit_rate``), else a forfeit ``+``/``-`` with the absent
    side drawn at random (``forfeit_rate``). Forfeited games keep their scheduled colours in the file.

Swiss pairing, close to the FIDE Dutch system (C.04.3), with these simplifications
    * Players are ranked by score (in the event's scoring units, so 3-1-0 events pair on 3-1-0 points), then
      start number; score groups are the runs of equal score. Downfloaters are
      decided by parity alone: when the players of the groups so far are odd in number, the lowest-ranked
      player of the group floats to the next one (Dutch chooses floaters by its quality criteria and avoids
      floating the same player twice in a row; we do not look at float history).
    * A bracket with a downfloater pairs it with the highest resident, then the rest top half against
      bottom half (S1[i] - S2[i]), like the first candidate of the Dutch system.
    * Dutch's exhaustive, ordered search over transpositions and exchanges is replaced by a bounded local
      search: for each board with a defect, 2-opt re-pairings with up to 4 boards before and after it
      ((a,b),(c,d) -> (a,d),(c,b) "transposition" or (a,c),(b,d) "exchange") are scored and the best strictly
      improving one is taken, in a few vectorised passes. Defects are weighted lexicographically: rematch >
      same absolute colour preference > score difference (floats) > same colour preference; exchanges and
      moves across brackets carry a small penalty, so colour alone never justifies crossing a score group.
      Boards still holding a rematch get passes with a 16-board window, then a per-tournament depth-first
      search for a rematch-free matching of the whole round (bounded; counted in ``stats.fallback_rounds``).
      If even that fails the rematch is played and counted (``stats.rematches``).
    * Every pairing (forfeits included) counts as a meeting for the rematch rule; colour history counts
      games played over the board only.
    * Colours follow C.04.3 E.1-E.5 (both preferences, the stronger one, alternate to the last round with
      different colours, the higher-ranked player's preference, the initial colour drawn by lot per event).
      Topscorer exceptions are ignored; the absolute colour criterion is a weighted cost, not absolute.
    * The pairing-allocated bye (``U``, one per round at most) goes to the lowest-ranked player of the
      lowest score group who has had neither a PAB nor a forfeit win (anyone, counted, when nobody
      qualifies); it is decided before pairing, not as part of it. No acceleration, no late entries.

Round robins use the FIDE Berger tables (C.05 Annex 1). In an odd field the player drawn against the dummy
has a free round, written as ``absent`` without opponent. Requested byes are not granted (the pairings are
fixed); an absent player forfeits: rounds after a withdrawal are forfeit losses (double forfeits when both
players have withdrawn). With ``rounds`` above one cycle a second cycle with reversed colours follows.

A mixed archive (event sizes, kinds and rates drawn per event like a real archive, team events included) is
:func:`~tbstats.simulation.mix.simulate_mix` / :func:`~tbstats.simulation.mix.iter_mix` of a :class:`MixConfig`;
:func:`~tbstats.simulation.mix.profile_config` gives a named one (``mix``, ``club``: :data:`PROFILES`).

Reproducibility: block ``k`` of ``chunk`` tournaments draws from ``PCG64(SeedSequence(seed, spawn_key=(k,)))``
in a fixed order, so the same configuration gives an identical batch on any machine. ``chunk`` is part of
the random stream: the events of a configuration with another ``chunk`` differ.
"""

from tbstats.simulation.config import SCORING_SYSTEMS, SimulationConfig, SimulationStats
from tbstats.simulation.driver import Simulation, simulate
from tbstats.simulation.mix import PROFILES, MixBlock, MixConfig, iter_mix, profile_config, simulate_mix
from tbstats.simulation.outcomes import expected_score

__all__ = ["PROFILES", "SCORING_SYSTEMS", "MixBlock", "MixConfig", "Simulation", "SimulationConfig",
           "SimulationStats", "expected_score", "iter_mix", "profile_config", "simulate", "simulate_mix"]

