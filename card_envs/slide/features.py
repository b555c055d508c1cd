"""Action-aligned features of a Slide observation (numba and numpy only: no torch).

A pick ``16 + (value-1)*4 + side`` pushes ``value`` into the own grid from ``side`` toward the
empty slot; what it is worth depends on the grid it leaves, which a plain MLP on the flat
observation has to simulate. :func:`features` builds every resulting grid and scores it with
the expected-points formula of the Slide heuristic (``agents/slide.py``, shared through
:mod:`card_envs.slide.estimate`): a face-up card counts 0 when a face-up neighbour has its
value, else its value times the chance that no face-down neighbour turns out equal; a face-down
card counts the expected value of an unseen card over the values no face-up neighbour pairs
(chances from the observation's unseen counts). A reveal of slot ``s`` is scored on the grid
with ``s`` opened. Everything is a pure function of the observation (layout:
``card_envs.slide.env``), computed by one compiled loop over the batch (:func:`fill_features`,
with the rules' ``shift_in``). The torch module of the RL layer,
:class:`card_envs.rl.features.slide.PushFeatures`, wraps it (and has a batched-torch twin,
tested equal). :func:`potential` is the reward-shaping potential (the manifest's
``train.potential``).

Per action (``ACTION_FEATURES``, in action order):

| name          | pick ``(v, side)``: the grid after the push      | reveal ``s``                 |
|---------------|--------------------------------------------------|------------------------------|
| ``legal``     | the observer acts, pick phase, ``v`` in the      | the observer acts, reveal    |
|               | middle, side allowed (= the action mask)         | phase, ``s`` face down       |
| ``score``     | face-up cards without an equal face-up neighbour, | the grid now, / 50          |
|               | summed, / 50                                     |                              |
| ``delta``     | ``score`` after - now, / 10                      | 0                            |
| ``pairs``     | face-up cards with an equal neighbour / 16       | now / 16                     |
| ``value``     | ``v`` / 10                                       | 0                            |
| ``reveal``    | 0                                                | 1                            |
| ``pick``      | 1                                                | 0                            |
| ``expected``  | expected points (heuristic formula) / 30         | of the grid with ``s`` open  |
| ``exp_delta`` | ``expected`` - expected points now, / 10         | same                         |
| ``pair_change`` | change of ``pairs`` x 16, / 4                  | same, ``s`` open             |
| ``joins``     | ``v`` lands next to a face-up ``v`` (1/0)        | 0                            |
| ``left``      | copies of ``v`` in the middle / 6                | 0                            |
| ``unseen``    | unseen copies of ``v`` / 10                      | 0                            |
| ``down_nb``   | face-down neighbours of the landing cell / 4     | of ``s`` / 4                 |
| ``up_nb``     | face-up neighbours of the landing cell / 4       | of ``s`` / 4                 |

Global features (``GLOBAL_FEATURES``): the own grid's ``score`` now / 50, its expected points
/ 30 and the unseen-value chances (10). Any player count (the own grid comes first).
"""

from __future__ import annotations

import numpy as np

from card_envs.core.jit import njit
from card_envs.slide.estimate import fill_tables, grid_score, value_shares
from card_envs.slide.rules import FACE_DOWN_CODE, NUM_ACTIONS, NUM_VALUES, SLOTS, shift_in, side_ok

FACE_DOWN = FACE_DOWN_CODE
PICK0 = SLOTS  # the pick actions follow the 16 reveals
ACTION_FEATURES = ("legal", "score", "delta", "pairs", "value", "reveal", "pick", "expected",
                   "exp_delta", "pair_change", "joins", "left", "unseen", "down_nb", "up_nb")
GLOBAL_FEATURES = ("score", "expected") + tuple(f"p{v}" for v in range(1, NUM_VALUES + 1))


def features(obs: np.ndarray, num_players: int) -> tuple[np.ndarray, np.ndarray]:
    """``(global (B, 12), per_action (B, 15, 56))`` float32 (feature-major) of observations
    ``(B, L)`` (module docstring)."""
    x = np.ascontiguousarray(np.asarray(obs, np.float32).reshape(len(obs), -1))
    glob = np.empty((x.shape[0], len(GLOBAL_FEATURES)), np.float32)
    act = np.empty((x.shape[0], len(ACTION_FEATURES), NUM_ACTIONS), np.float32)
    fill_features(x, int(num_players), glob, act)
    return glob, act


@njit(cache=True)
def _nb_neighbours(g: np.ndarray, i: int) -> tuple[int, int]:
    """(face-down, face-up) orthogonal neighbours of slot ``i``."""
    r = i // 4
    c = i % 4
    fd = 0
    fu = 0
    for rr, cc in ((r, c - 1), (r, c + 1), (r - 1, c), (r + 1, c)):
        if 0 <= rr < 4 and 0 <= cc < 4:
            x = g[rr * 4 + cc]
            if x == FACE_DOWN:
                fd += 1
            elif x > 0:
                fu += 1
    return fd, fu


@njit(cache=True)
def _nb_joins(g: np.ndarray, i: int, v: int) -> float:
    r = i // 4
    c = i % 4
    for rr, cc in ((r, c - 1), (r, c + 1), (r - 1, c), (r + 1, c)):
        if 0 <= rr < 4 and 0 <= cc < 4 and g[rr * 4 + cc] == v:
            return 1.0
    return 0.0


@njit(cache=True)
def fill_features(x: np.ndarray, n: int, glob: np.ndarray, act: np.ndarray) -> None:
    """Write ``glob (B, 12)`` and ``act (B, 15, 56)`` (feature-major) of observations
    ``x (B, L)`` (the compiled loop of :func:`features`)."""
    base = SLOTS * n
    g = np.empty(SLOTS, np.int64)
    h = np.empty(SLOTS, np.int64)
    p = np.empty(NUM_VALUES)
    up = np.zeros((NUM_VALUES + 1, 5))
    down = np.zeros((NUM_VALUES + 1, 5))
    down_all = np.zeros(5)
    for b in range(x.shape[0]):
        for i in range(SLOTS):
            g[i] = int(round(x[b, i]))
        value_shares(x[b, base + NUM_VALUES:base + 2 * NUM_VALUES], p)
        fill_tables(p, up, down, down_all)
        phase = x[b, base + 2 * NUM_VALUES]
        to_act = x[b, base + 23] == 0
        now, pairs_now, face_now = grid_score(g, up, down, down_all)
        glob[b, 0] = face_now / 50.0
        glob[b, 1] = now / 30.0
        for v in range(NUM_VALUES):
            glob[b, 2 + v] = p[v]
        for a in range(NUM_ACTIONS):
            for f in range(act.shape[1]):
                act[b, f, a] = 0.0
        e = -1
        for i in range(SLOTS):
            if g[i] == 0 and e < 0:
                e = i
        # reveals
        for s in range(SLOTS):
            for i in range(SLOTS):
                h[i] = g[i]
            h[s] = 0
            ex, pr, _ = grid_score(h, up, down, down_all)
            act[b, 0, s] = 1.0 if (phase == 0 and to_act and g[s] == FACE_DOWN) else 0.0
            act[b, 1, s] = face_now / 50.0
            act[b, 3, s] = pairs_now / 16.0
            act[b, 5, s] = 1.0
            act[b, 7, s] = ex / 30.0
            act[b, 8, s] = (ex - now) / 10.0
            act[b, 9, s] = (pr - pairs_now) / 4.0
            fd, fu = _nb_neighbours(g, s)
            act[b, 13, s] = fd / 4.0
            act[b, 14, s] = fu / 4.0
        # picks
        ee = e if e >= 0 else 0
        for v in range(1, NUM_VALUES + 1):
            mid = x[b, base + v - 1]
            for side in range(4):
                a = PICK0 + (v - 1) * 4 + side
                for i in range(SLOTS):
                    h[i] = g[i]
                ok = side_ok(ee, side)
                land = ee
                if ok:
                    shift_in(h, 0, ee, side, v)
                    r = ee // 4
                    c = ee % 4
                    land = (r * 4 if side == 0 else r * 4 + 3 if side == 1
                            else c if side == 2 else 12 + c)
                ex, pr, fc = grid_score(h, up, down, down_all)
                legal = ok and mid > 0 and phase == 1 and e >= 0 and to_act
                act[b, 0, a] = 1.0 if legal else 0.0
                act[b, 1, a] = fc / 50.0
                act[b, 2, a] = (fc - face_now) / 10.0
                act[b, 3, a] = pr / 16.0
                act[b, 4, a] = v / 10.0
                act[b, 6, a] = 1.0
                act[b, 7, a] = ex / 30.0
                act[b, 8, a] = (ex - now) / 10.0
                act[b, 9, a] = (pr - pairs_now) / 4.0
                act[b, 10, a] = _nb_joins(h, land, v)
                act[b, 11, a] = mid / 6.0
                act[b, 12, a] = x[b, base + NUM_VALUES + v - 1] / 10.0
                fd, fu = _nb_neighbours(h, land)
                act[b, 13, a] = fd / 4.0
                act[b, 14, a] = fu / 4.0


def potential(obs: np.ndarray, num_players: int) -> np.ndarray:
    """Reward-shaping potential of observations ``(B, L)`` (the manifest's ``train.potential``,
    for :class:`card_envs.rl.shaping.PotentialShaping`): the lowest estimated total of the other
    seats minus the observer's, / 20 (lower is better in Slide). A grid's estimate: its face-up
    cards without an equal face-up neighbour plus, per face-down card, the mean unseen value.
    0 at the deal (all grids face down)."""
    obs = np.asarray(obs, np.float64).reshape(len(obs), -1)
    n = int(num_players)
    base = SLOTS * n
    unseen = obs[:, base + NUM_VALUES:base + 2 * NUM_VALUES]
    cnt = unseen.sum(1)
    mean = np.where(cnt > 0, (unseen * np.arange(1, NUM_VALUES + 1)).sum(1)
                    / np.maximum(cnt, 1), 5.5)
    g = obs[:, :base].reshape(len(obs), n, 4, 4)
    up = (g >= 1) & (g <= NUM_VALUES)
    pad = np.pad(g, ((0, 0), (0, 0), (1, 1), (1, 1)))
    same = np.zeros_like(up)
    for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        same |= pad[:, :, 1 + dr:5 + dr, 1 + dc:5 + dc] == g
    est = (g * (up & ~same)).sum((2, 3)) + (g == FACE_DOWN).sum((2, 3)) * mean[:, None]
    return (est[:, 1:].min(1) - est[:, 0]) / 20.0
