"""Action-aligned (egocentric) features of an Isflak observation (numba and numpy only: no
torch).

A movement action ``35 + (k*8 + d)*6 + (s-1)`` is worth what the cell ``s`` steps from penguin
slot ``k``'s *current* cell in direction ``d`` is worth: a plain MLP on the flat observation
has to learn that position-dependent gather. :func:`features` computes it from the observation
alone (layout: ``card_envs.isflak.env``) over the ray table of :mod:`card_envs.isflak.rules`
(``RAY``), in one compiled loop over the batch (:func:`fill_features`). The torch module of
the RL layer, :class:`card_envs.rl.features.isflak.RayFeatures`, wraps it (and has a
batched-torch twin, cell-major, tested equal).

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
already a blocker). Cells beyond the board read 0.

Per action (``ACTION_FEATURES``, ``F = 17`` values each, in action order):

* placement ``a`` (cell ``a``): ``legal`` = placement phase and a free border cell (the
  mask may narrow it to number cards), the cell features of ``a``,
  ``src_pts = src_reach = dist = 0``, ``move = 0``, ``place = 1``;
* movement ``(k, d, s)``: ``legal`` = penguin ``k`` is on the board and every cell up to the
  target is free, in the movement phase (equals the action mask there), the cell features of the
  target (0 where the target is off the board or the penguin is unplaced / gone), the points
  and ``reach`` of the source cell (what the penguin leaves), ``dist = s/6``, ``move = 1``,
  ``place = 0``.

The global features are the 11 cell features of the 35 cells (``(B, 385)``). Works for every
player count and ``penguins_per_player``. :func:`potential` is the reward-shaping potential
(the manifest's ``train.potential``). The features have no parameters: the policy learns on
top of them (:class:`card_envs.rl.policy.ActionFeaturePolicy`).
"""

from __future__ import annotations

import numpy as np

from card_envs.core.jit import njit
from card_envs.isflak.rules import BORDER, CELLS, MAX_DIST, NDIR, RAY
from card_envs.isflak.rules import num_actions as isflak_num_actions

CELL_FEATURES = ("pts", "free", "gap", "reach", "best", "moves", "own", "opp", "border",
                 "own_cut", "opp_cut")
ACTION_FEATURES = ("legal",) + CELL_FEATURES + ("src_pts", "src_reach", "dist", "move",
                                                "place")


def features(obs: np.ndarray, num_players: int, penguins_per_player: int
             ) -> tuple[np.ndarray, np.ndarray]:
    """``(global (B, 35*11), per_action (B, 17, 35 + 48P))`` float32 (feature-major) of
    observations ``(B, L)`` (module docstring)."""
    x = np.ascontiguousarray(np.asarray(obs, np.float32).reshape(len(obs), -1))
    peng = int(penguins_per_player)
    glob = np.empty((x.shape[0], CELLS * len(CELL_FEATURES)), np.float32)
    act = np.empty((x.shape[0], len(ACTION_FEATURES), isflak_num_actions(peng)), np.float32)
    fill_features(x, int(num_players), peng, glob, act)
    return glob, act


@njit(cache=True)
def fill_features(x: np.ndarray, n: int, peng: int, glob: np.ndarray, act: np.ndarray) -> None:
    """Write ``glob (B, 35*11)`` and ``act (B, 17, 35 + 48P)`` (feature-major) of ``x (B, L)``
    (the compiled loop of :func:`features`)."""
    nc = len(CELL_FEATURES)
    C = np.zeros((CELLS + 1, nc))
    ok = np.zeros((CELLS, NDIR * MAX_DIST))
    reach_dir = np.zeros((CELLS, NDIR))
    own_dir = np.zeros((CELLS, NDIR))
    opp_dir = np.zeros((CELLS, NDIR))
    pts = np.empty(CELLS + 1)
    occ = np.empty(CELLS + 1)
    free = np.empty(CELLS + 1)
    for b in range(x.shape[0]):
        for c in range(CELLS):
            pts[c] = x[b, c]
            occ[c] = x[b, CELLS + c]
            free[c] = 1.0 if (pts[c] >= 0 and occ[c] == 0) else 0.0
        pts[CELLS] = -1.0
        occ[CELLS] = 0.0
        free[CELLS] = 0.0
        for c in range(CELLS):
            reach = 0.0
            best = 0.0
            moves = 0.0
            for d in range(NDIR):
                rd = 0.0
                own_dir[c, d] = 0.0
                opp_dir[c, d] = 0.0
                going = True
                for s in range(MAX_DIST):
                    t = RAY[(c * NDIR + d) * MAX_DIST + s]
                    if going and free[t] > 0:
                        ok[c, d * MAX_DIST + s] = 1.0
                        rd += pts[t]
                        if pts[t] > best:
                            best = pts[t]
                        moves += 1.0
                    else:
                        if going:
                            if occ[t] == 1:
                                own_dir[c, d] = 1.0
                            elif occ[t] > 1:
                                opp_dir[c, d] = 1.0
                        going = False
                        ok[c, d * MAX_DIST + s] = 0.0
                reach_dir[c, d] = rd
                reach += rd
            C[c, 0] = pts[c] / 3.0
            C[c, 1] = free[c]
            C[c, 2] = 1.0 if pts[c] < 0 else 0.0
            C[c, 3] = reach / 10.0
            C[c, 4] = best / 3.0
            C[c, 5] = moves / 10.0
            own = 0.0
            opp = 0.0
            own_cut = 0.0
            opp_cut = 0.0
            for d in range(NDIR):
                own += own_dir[c, d]
                opp += opp_dir[c, d]
                own_cut += own_dir[c, d] * reach_dir[c, (d + 4) % NDIR]
                opp_cut += opp_dir[c, d] * reach_dir[c, (d + 4) % NDIR]
            C[c, 6] = own / 2.0
            C[c, 7] = opp / 2.0
            C[c, 8] = BORDER[c]
            C[c, 9] = own_cut / 10.0
            C[c, 10] = opp_cut / 10.0
            for f in range(nc):
                glob[b, c * nc + f] = C[c, f]
        phase = x[b, 2 * CELLS + n * (peng + 3)]
        for a in range(act.shape[2]):
            for f in range(act.shape[1]):
                act[b, f, a] = 0.0
        for c in range(CELLS):
            act[b, 0, c] = C[c, 1] * BORDER[c] * (1.0 if phase == 0 else 0.0)
            for f in range(nc):
                act[b, 1 + f, c] = C[c, f]
            act[b, nc + 5, c] = 1.0
        for k in range(peng):
            pos = int(round(x[b, 2 * CELLS + k]))
            here = 1.0 if pos >= 0 else 0.0
            src = pos if pos >= 0 else 0
            for j in range(NDIR * MAX_DIST):
                a = CELLS + k * NDIR * MAX_DIST + j
                t = RAY[src * NDIR * MAX_DIST + j]
                act[b, 0, a] = ok[src, j] * here * (1.0 if phase == 1 else 0.0)
                for f in range(nc):
                    act[b, 1 + f, a] = C[t, f] * here
                act[b, nc + 1, a] = C[src, 0] * here
                act[b, nc + 2, a] = C[src, 3] * here
                act[b, nc + 3, a] = (j % MAX_DIST + 1) / MAX_DIST
                act[b, nc + 4, a] = 1.0


def potential(obs: np.ndarray, num_players: int) -> np.ndarray:
    """Reward-shaping potential of observations ``(B, L)`` (the manifest's ``train.potential``,
    for :class:`card_envs.rl.shaping.PotentialShaping`): the observer's secured points (pile +
    the cards under its penguins, which always end in its pile) minus the best other seat's,
    / 10; 0 at the deal (no penguin placed, empty piles). Placed penguins count from the
    placement on."""
    obs = np.asarray(obs, np.float64).reshape(len(obs), -1)
    n = int(num_players)
    peng = (obs.shape[1] - 2 * CELLS - 3) // n - 3
    pts = np.clip(obs[:, :CELLS], 0, None)
    occ = obs[:, CELLS:2 * CELLS]
    secured = np.empty((len(obs), n))
    for i in range(n):
        pile = obs[:, 2 * CELLS + i * (peng + 3) + peng + 1]
        secured[:, i] = pile + (pts * (occ == i + 1)).sum(1)
    return (secured[:, 0] - secured[:, 1:].max(1)) / 10.0
