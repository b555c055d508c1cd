"""Action-aligned features of a Slide observation: game facts only (numba and numpy only).

The interface of :mod:`card_envs.core.features`: :func:`dims` and the per-row kernel
:func:`fill`, which reads one observation (layout: ``card_envs.slide.env``; the observer's own
grid is ``obs[0:16]``, codes 0 empty, 1-10 face up, ``FACE_DOWN_CODE`` face down) and writes
what the observer knows and what each of its actions does to its own grid. Nothing here is a
judgement (no expected values, no hand-tuned scores): the consequences come from the game's own
rule queries (``card_envs.slide.queries``): the gap (``gap``), the push (``shift_in``,
``side_ok``), the pairs (``paired``) and the points from the final scoring rule
(``grid_points``) applied to the face-up cards. "Face-up points" = what the face-up cards
would score if the game ended now with the face-down cards absent (face-up cards with an equal
face-up orthogonal neighbour count 0). "Paired" = face-up cards with an equal face-up
neighbour.

A pick ``16 + (v-1)*4 + side`` pushes ``v`` into the gap's row or column from ``side``; a
reveal ``s`` sends the face-down card at ``s`` to the middle (after the reveal phase), leaving
the gap at ``s`` for the next pick. Every row of an action that is not legal is 0.

Per action (``ACTION_FEATURES``, ``act[f, a]``); "after" = the own grid after the push:

| name          | pick ``(v, side)``                                  | reveal ``s``            |
|---------------|-----------------------------------------------------|-------------------------|
| ``legal``     | = the action mask: observer to act, pick phase,     | = the mask: observer to |
|               | ``v`` in the middle, side allowed for the gap       | act, reveal, ``s`` down |
| ``reveal``    | 0                                                   | 1                       |
| ``pick``      | 1                                                   | 0                       |
| ``points``    | face-up points after / 50                           | now / 50 (unchanged)    |
| ``delta``     | ``points`` after - now, / 10                        | 0                       |
| ``paired``    | paired cards after / 16                             | now / 16                |
| ``formed``    | cards paired after, not before (the pushed one too) | 0                       |
|               | / 4                                                 |                         |
| ``broken``    | cards paired before, not after / 4                  | 0                       |
| ``value``     | ``v`` / 10                                          | 0                       |
| ``joins``     | the pushed card lands next to a face-up ``v`` (1/0) | 0                       |
| ``left``      | copies of ``v`` in the middle after this pick / 5   | 0                       |
| ``unseen``    | copies of ``v`` visible nowhere (observation) / 10  | 0                       |
| ``down_nb``   | face-down neighbours of the landing cell / 4        | of ``s`` / 4            |
| ``up_nb``     | face-up neighbours of the landing cell / 4          | of ``s`` / 4            |
| ``shifted``   | cards the push moves toward the gap (0-3) / 3       | 0                       |
| ``sides``     | 0                                                   | sides a pick may use    |
|               |                                                     | with the gap at ``s``/4 |
| ``line_up``   | 0                                                   | face-up cards in the    |
|               |                                                     | row and column of ``s`` |
|               |                                                     | / 6                     |
| ``line_down`` | 0                                                   | face-down cards there/6 |

Global features (``GLOBAL_FEATURES``): the own grid's face-up points / 50, paired cards / 16,
face-up and face-down cards / 16; the round / 15; phase flags (reveal, pick); the observer is to
act (1/0); the lowest and the mean face-up points of the other grids / 50; cards in the middle
/ 6. Any player count: ``dims`` is ``(11, 18)`` for every option.

:func:`potential` is a reward-shaping potential built on the same facts (the manifest's
``train.potential`` if the lead wires it): the lowest face-up points among the other seats
minus the observer's, / 20.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from card_envs.core.jit import njit
from card_envs.core.kernels import C_PLAYERS
from card_envs.slide.layout import (
    FACE_DOWN_CODE,
    NUM_VALUES,
    OBS_CUR,
    OBS_MID,
    OBS_PHASE,
    OBS_ROUND,
    OBS_UNSEEN,
    P_PICK,
    P_REVEAL,
    PICK0,
    ROUNDS,
    SLOTS,
    obs_size,
)
from card_envs.slide.queries import gap, grid_points, paired, shift_in, side_ok

__all__ = ["ACTION_FEATURES", "GLOBAL_FEATURES", "dims", "fill", "potential"]

ACTION_FEATURES = ("legal", "reveal", "pick", "points", "delta", "paired", "formed", "broken",
                   "value", "joins", "left", "unseen", "down_nb", "up_nb", "shifted", "sides",
                   "line_up", "line_down")
GLOBAL_FEATURES = ("points", "paired", "face_up", "face_down", "round", "reveal_phase",
                   "pick_phase", "to_act", "opp_points_min", "opp_points_mean", "middle")

(F_LEGAL, F_REVEAL, F_PICK, F_POINTS, F_DELTA, F_PAIRED, F_FORMED, F_BROKEN, F_VALUE, F_JOINS,
 F_LEFT, F_UNSEEN, F_DOWN_NB, F_UP_NB, F_SHIFTED, F_SIDES, F_LINE_UP,
 F_LINE_DOWN) = range(len(ACTION_FEATURES))

NEW = SLOTS  # source index of the pushed card in a push map
# scratch layout (one int32 allocation per row): code grid, grid after, paired before / after,
# the 4 push maps
_G, _H, _PB, _PA, _MAP = 0, SLOTS, 2 * SLOTS, 3 * SLOTS, 4 * SLOTS
_SCRATCH = 8 * SLOTS


def dims(game: Any) -> tuple[int, int]:
    """``(G, F)`` of ``game`` (the same for every Slide option)."""
    return len(GLOBAL_FEATURES), len(ACTION_FEATURES)


@njit(cache=True)
def _neighbours(g: np.ndarray, i: int, v: int) -> tuple[int, int, int]:
    """(face-down, face-up, equal to ``v``) orthogonal neighbours of slot ``i``."""
    r = i // 4
    c = i % 4
    down = 0
    up = 0
    eq = 0
    for rr, cc in ((r, c - 1), (r, c + 1), (r - 1, c), (r + 1, c)):
        if 0 <= rr < 4 and 0 <= cc < 4:
            x = g[rr * 4 + cc]
            if x == FACE_DOWN_CODE:
                down += 1
            elif x > 0:
                up += 1
                if x == v:
                    eq += 1
    return down, up, eq


@njit(cache=True)
def fill(obs: np.ndarray, cfg: np.ndarray, glob: np.ndarray, act: np.ndarray) -> None:
    """Write ``glob`` (``(G,)``) and ``act`` (``(F, 56)``) of one observation row (module
    docstring)."""
    n = cfg[C_PLAYERS]
    t = SLOTS * n  # layout.obs_tail(n)
    buf = np.empty(_SCRATCH, np.int32)
    g = buf[_G:_G + SLOTS]
    h = buf[_H:_H + SLOTS]
    pb = buf[_PB:_PB + SLOTS]
    pa = buf[_PA:_PA + SLOTS]
    phase = obs[t + OBS_PHASE]
    to_act = obs[t + OBS_CUR] == 0
    up = 0
    down = 0
    for i in range(SLOTS):
        x = obs[i]
        g[i] = x
        if x == FACE_DOWN_CODE:
            down += 1
        elif x != 0:
            up += 1
    e = gap(g)
    pts_now, _ = grid_points(g)
    pairs_now = paired(g, pb)
    opp_min = 0.0
    opp_sum = 0.0
    for q in range(1, n):
        for i in range(SLOTS):
            h[i] = obs[q * SLOTS + i]
        p, _ = grid_points(h)
        if q == 1 or p < opp_min:
            opp_min = p
        opp_sum += p
    mid_total = 0
    for v in range(NUM_VALUES):
        mid_total += obs[t + OBS_MID + v]
    glob[0] = pts_now / 50.0
    glob[1] = pairs_now / 16.0
    glob[2] = up / 16.0
    glob[3] = down / 16.0
    glob[4] = obs[t + OBS_ROUND] / (ROUNDS - 1.0)
    glob[5] = 1.0 if phase == P_REVEAL else 0.0
    glob[6] = 1.0 if phase == P_PICK else 0.0
    glob[7] = 1.0 if to_act else 0.0
    glob[8] = opp_min / 50.0
    glob[9] = opp_sum / max(n - 1, 1) / 50.0
    glob[10] = mid_total / 6.0
    for f in range(act.shape[0]):
        for a in range(act.shape[1]):
            act[f, a] = 0.0
    if not to_act:
        return
    if phase == P_REVEAL:
        for s in range(SLOTS):
            if g[s] != FACE_DOWN_CODE:
                continue
            nd, nu, _ = _neighbours(g, s, 0)
            r = s // 4
            c = s % 4
            sides = 0
            for side in range(4):
                sides += side_ok(s, side)
            lu = 0
            ld = 0
            for k in range(4):
                for j in (r * 4 + k, k * 4 + c):
                    if j != s:
                        x = g[j]
                        if x == FACE_DOWN_CODE:
                            ld += 1
                        elif x > 0:
                            lu += 1
            act[F_LEGAL, s] = 1.0
            act[F_REVEAL, s] = 1.0
            act[F_POINTS, s] = pts_now / 50.0
            act[F_PAIRED, s] = pairs_now / 16.0
            act[F_DOWN_NB, s] = nd / 4.0
            act[F_UP_NB, s] = nu / 4.0
            act[F_SIDES, s] = sides / 4.0
            act[F_LINE_UP, s] = lu / 6.0
            act[F_LINE_DOWN, s] = ld / 6.0
        return
    if phase != P_PICK or e < 0:
        return
    for side in range(4):
        if not side_ok(e, side):
            continue
        m = buf[_MAP + side * SLOTS:_MAP + (side + 1) * SLOTS]
        for i in range(SLOTS):
            m[i] = i
        shift_in(m, 0, e, side, NEW)  # m[pos] = the slot whose card ends on pos (NEW: pushed)
        land = 0
        shifted = 0
        for i in range(SLOTS):
            if m[i] == NEW:
                land = i
            elif m[i] != i:
                shifted += 1
        for v in range(1, NUM_VALUES + 1):
            mid = obs[t + OBS_MID + v - 1]
            if mid <= 0:
                continue
            for i in range(SLOTS):
                src = m[i]
                h[i] = v if src == NEW else g[src]
            pts, _ = grid_points(h)
            pairs = paired(h, pa)
            formed = 0
            broken = 0
            for i in range(SLOTS):
                src = m[i]
                before = 0 if src == NEW else pb[src]
                if pa[i] and not before:
                    formed += 1
                elif before and not pa[i]:
                    broken += 1
            nd, nu, eq = _neighbours(h, land, v)
            a = PICK0 + (v - 1) * 4 + side
            act[F_LEGAL, a] = 1.0
            act[F_PICK, a] = 1.0
            act[F_POINTS, a] = pts / 50.0
            act[F_DELTA, a] = (pts - pts_now) / 10.0
            act[F_PAIRED, a] = pairs / 16.0
            act[F_FORMED, a] = formed / 4.0
            act[F_BROKEN, a] = broken / 4.0
            act[F_VALUE, a] = v / 10.0
            act[F_JOINS, a] = 1.0 if eq > 0 else 0.0
            act[F_LEFT, a] = (mid - 1) / 5.0
            act[F_UNSEEN, a] = obs[t + OBS_UNSEEN + v - 1] / 10.0
            act[F_DOWN_NB, a] = nd / 4.0
            act[F_UP_NB, a] = nu / 4.0
            act[F_SHIFTED, a] = shifted / 3.0


@njit(cache=True)
def _potential_rows(obs: np.ndarray, n: int, out: np.ndarray) -> None:
    """``out[b]`` = (lowest other face-up points - own face-up points) / 20 of row ``b``."""
    g = np.empty(SLOTS, np.int32)
    for b in range(obs.shape[0]):
        own = 0.0
        best = 0.0
        for q in range(n):
            for i in range(SLOTS):
                g[i] = obs[b, q * SLOTS + i]
            p, _ = grid_points(g)
            if q == 0:
                own = p
            elif q == 1 or p < best:
                best = p
        out[b] = (best - own) / 20.0


def potential(obs: np.ndarray, num_players: int) -> np.ndarray:
    """Reward-shaping potential of observations ``(B, L)`` (for
    :class:`card_envs.rl.sb3.shaping.PotentialShaping`): the lowest face-up points among the other
    seats minus the observer's, / 20 (lower is better in Slide; face-up points as in the module
    docstring: the final scoring of the face-up cards). 0 at the deal (all grids face down).
    Raises ``ValueError`` if the rows are not ``num_players``-seat observations."""
    n = int(num_players)
    x = np.asarray(obs)
    x = x.reshape(1, -1) if x.ndim == 1 else x
    if x.ndim != 2 or n < 2 or x.shape[1] != obs_size(n):
        raise ValueError(f"{n}-seat Slide observations of length {obs_size(max(n, 2))} "
                         f"expected, got shape {np.shape(obs)}")
    x = np.ascontiguousarray(x, np.int32)
    out = np.empty(x.shape[0], np.float64)
    _potential_rows(x, n, out)
    return out
