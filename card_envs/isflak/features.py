"""Action-aligned (egocentric) features of an Isflak observation (numba and numpy only).

The interface of :mod:`card_envs.core.features`: :func:`dims` and the per-row kernel
:func:`fill`. A movement action ``35 + (k*8 + d)*6 + (s-1)`` is worth what the cell ``s`` steps
from penguin slot ``k``'s *current* cell in direction ``d`` is worth: a plain MLP on the flat
observation has to learn that position-dependent gather. :func:`fill` computes it from one
observation row alone (layout: ``card_envs.isflak.env``): the observed board
(:func:`~card_envs.isflak.queries.observed_cells`) and every ray on it at once
(:func:`~card_envs.isflak.queries.rays`, over the ray table ``RAY``). Every feature is a count
of cells or points on the board as observed (no judgement).

Per cell ``c`` (``CELL_FEATURES``, on the board as observed):

| name        | meaning                                                                  |
|-------------|--------------------------------------------------------------------------|
| ``pts``     | points of the card / 3 (a gap: -1/3)                                     |
| ``free``    | a card without a penguin (1/0)                                           |
| ``gap``     | no card (1/0)                                                            |
| ``reach``   | sum of the points of the cells a penguin on ``c`` reaches in one move / 10 |
| ``best``    | best card reachable from ``c`` in one move / 3                           |
| ``moves``   | number of cells reachable from ``c`` in one move / 10                    |
| ``own``     | the observer's penguins that could move to ``c`` now / 2                 |
| ``opp``     | the other seats' penguins that could move to ``c`` now / 2               |
| ``border``  | a border cell (1/0)                                                      |
| ``own_cut`` | points the observer's penguins would no longer reach with a penguin put on |
|             | ``c``: for each direction in which ``c`` sees an own penguin, the reach of |
|             | ``c`` in the opposite direction / 10                                     |
| ``opp_cut`` | the same for the other seats' penguins (what a move to ``c`` denies) / 10  |

A penguin on ``c`` blocks its own rays, so ``reach``/``best``/``moves`` of the target of a move
are exactly the values on the board after the move (the vacated source becomes a gap, and was
already a blocker).

Per action (``ACTION_FEATURES``, ``F = 17``, ``act[f, a]``); every row of an action that is not
legal is 0:

* placement ``a`` (cell ``a``): ``legal`` = the observer is to act in the placement phase and
  ``a`` is a free border card of the kind the rule allows (number cards if any is free, else
  face cards), told apart by their points (the ``card_points`` in ``cfg``): exactly the action
  mask when ace, face and number points differ (the default), a superset of it otherwise (the
  observation has no card kinds); then the cell features of ``a``, ``place = 1``;
* movement ``(k, d, s)``: ``legal`` = the observer is to act in the movement phase, penguin
  ``k`` is on the board and every cell up to the target is free (= the action mask); the cell
  features of the target, the points of the source card (``src_pts``: what the move takes) and
  its ``reach`` (``src_reach``), ``dist = s/6``, ``move = 1``.

Global features (``GLOBAL_FEATURES``): the 11 cell features of the 35 cells, cell-major
(``c*11 + f``). Works for every player count and ``penguins_per_player``: ``dims`` is
``(385, 17)``. :func:`potential` is the reward-shaping potential (the manifest's
``train.potential``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from card_envs.core.jit import njit
from card_envs.core.kernels import C_PLAYERS
from card_envs.isflak.layout import (
    C_PENG,
    C_PTS_FACE,
    C_PTS_NUMBER,
    CELLS,
    F_FREE,
    MAX_DIST,
    MOVE0,
    MOVES_PER_PENGUIN,
    NDIR,
    OBS_OWNER,
    OBS_POINTS,
    OBS_SEATS,
    OWN_CODE,
    P_MOVE,
    P_PLACE,
    SEAT_FIELDS,
    SEAT_SCORE,
    T_PHASE,
    T_TO_ACT,
    obs_seat,
    peng_of_obs,
)
from card_envs.isflak.parts.board import BORDER, RAY
from card_envs.isflak.queries import (
    R_BEST,
    R_MOVES,
    R_OWNER,
    R_TOTAL,
    cell_points,
    observed_cells,
    rays,
)

__all__ = ["ACTION_FEATURES", "CELL_FEATURES", "GLOBAL_FEATURES", "dims", "fill", "potential"]

CELL_FEATURES = ("pts", "free", "gap", "reach", "best", "moves", "own", "opp", "border",
                 "own_cut", "opp_cut")
ACTION_FEATURES = ("legal",) + CELL_FEATURES + ("src_pts", "src_reach", "dist", "move",
                                                "place")
GLOBAL_FEATURES = tuple(f"{f}_{c}" for c in range(CELLS) for f in CELL_FEATURES)

NC = len(CELL_FEATURES)
_SRC_PTS, _SRC_REACH, _DIST, _MOVE, _PLACE = NC + 1, NC + 2, NC + 3, NC + 4, NC + 5
def dims(game: Any) -> tuple[int, int]:
    """``(G, F)`` of ``game`` (the same for every Isflak option; ``A = 35 + 48P``)."""
    return len(GLOBAL_FEATURES), len(ACTION_FEATURES)


@njit(cache=True)
def fill(obs: np.ndarray, cfg: np.ndarray, glob: np.ndarray, act: np.ndarray) -> None:
    """Write ``glob`` (``(385,)``) and ``act`` (``(17, 35 + 48P)``) of one observation row
    (module docstring)."""
    n = cfg[C_PLAYERS]
    peng = cfg[C_PENG]
    tail = OBS_SEATS + n * (peng + SEAT_FIELDS)  # layout.obs_tail(n, peng)
    cells = np.empty(CELLS + 1, np.int64)
    observed_cells(obs, cells)
    R = rays(cells)  # every ray at once, column c*8 + d
    RD = R[R_TOTAL]
    CN = R[R_MOVES]
    BE = R[R_BEST]
    SE = R[R_OWNER]
    for c in range(CELLS):
        reach = 0.0
        best = 0.0
        moves = 0.0
        own = 0.0
        opp = 0.0
        own_cut = 0.0
        opp_cut = 0.0
        for d in range(NDIR):
            i = c * NDIR + d
            reach += RD[i]
            moves += CN[i]
            best = max(best, BE[i])
            o = SE[i]
            back = RD[c * NDIR + (d + NDIR // 2) % NDIR]
            mine = 1.0 if o == OWN_CODE else 0.0
            theirs = 1.0 if o > OWN_CODE else 0.0
            own += mine
            opp += theirs
            own_cut += mine * back
            opp_cut += theirs * back
        g = c * NC
        p = cell_points(cells, c)
        glob[g] = p / 3.0
        glob[g + 1] = cells[c] & F_FREE
        glob[g + 2] = 1.0 if p < 0 else 0.0
        glob[g + 3] = reach / 10.0
        glob[g + 4] = best / 3.0
        glob[g + 5] = moves / 10.0
        glob[g + 6] = own / 2.0
        glob[g + 7] = opp / 2.0
        glob[g + 8] = BORDER[c]
        glob[g + 9] = own_cut / 10.0
        glob[g + 10] = opp_cut / 10.0
    for f in range(act.shape[0]):
        for a in range(act.shape[1]):
            act[f, a] = 0.0
    if obs[tail + T_TO_ACT] != 0:
        return
    phase = obs[tail + T_PHASE]
    if phase == P_PLACE:
        want = cfg[C_PTS_NUMBER]
        found = False
        for c in range(CELLS):
            if BORDER[c] and cells[c] & F_FREE and cell_points(cells, c) == want:
                found = True
        if not found:
            want = cfg[C_PTS_FACE]
        for c in range(CELLS):
            if BORDER[c] and cells[c] & F_FREE and cell_points(cells, c) == want:
                act[0, c] = 1.0
                for f in range(NC):
                    act[1 + f, c] = glob[c * NC + f]
                act[_PLACE, c] = 1.0
        return
    if phase != P_MOVE:
        return
    base = OBS_SEATS
    for k in range(peng):
        src = obs[base + k]
        if src < 0:
            continue
        a0 = MOVE0 + k * MOVES_PER_PENGUIN
        for d in range(NDIR):
            r0 = (src * NDIR + d) * MAX_DIST
            for s in range(int(CN[src * NDIR + d])):  # the free cells of the ray
                t = RAY[r0 + s]
                a = a0 + d * MAX_DIST + s
                act[0, a] = 1.0
                for f in range(NC):
                    act[1 + f, a] = glob[t * NC + f]
                act[_SRC_PTS, a] = glob[src * NC]
                act[_SRC_REACH, a] = glob[src * NC + 3]
                act[_DIST, a] = (s + 1) / MAX_DIST
                act[_MOVE, a] = 1.0


def potential(obs: np.ndarray, num_players: int) -> np.ndarray:
    """Reward-shaping potential of observations ``(B, L)`` (the manifest's ``train.potential``,
    for :class:`card_envs.rl.sb3.shaping.PotentialShaping`): the observer's secured points (pile +
    the cards under its penguins, which always end in its pile) minus the best other seat's,
    / 10; 0 at the deal (no penguin placed, empty piles). Placed penguins count from the
    placement on."""
    obs = np.asarray(obs, np.float64).reshape(len(obs), -1)
    n = int(num_players)
    peng = peng_of_obs(obs.shape[1], n)
    pts = np.clip(obs[:, OBS_POINTS:OBS_POINTS + CELLS], 0, None)
    occ = obs[:, OBS_OWNER:OBS_OWNER + CELLS]
    secured = np.empty((len(obs), n))
    for i in range(n):
        pile = obs[:, obs_seat(i, peng) + peng + SEAT_SCORE]
        secured[:, i] = pile + (pts * (occ == OWN_CODE + i)).sum(1)
    return (secured[:, 0] - secured[:, 1:].max(1)) / 10.0
