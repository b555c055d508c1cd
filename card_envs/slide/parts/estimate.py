"""Expected final points of a Slide grid seen from its owner (numba; pure, no I/O): the
heuristic agent's estimate (``card_envs.agents.slide``). The training features
(``card_envs/slide/features.py``) deliberately do not use it: they are game facts, not a
baseline's judgement.

A grid is scored as if the game ended now: a face-up card counts 0 when a face-up neighbour has
its value (the rules' ``queries.vanishes``), else its value times the chance that none of its
face-down neighbours turns out equal; a face-down card counts the expected value of an unseen
card, over the values no face-up neighbour pairs. Chances come from the unseen counts (``p_v``
= share of value ``v``).
"""

from __future__ import annotations

import numpy as np

from card_envs.core.jit import njit
from card_envs.slide.layout import FACE_DOWN_CODE, NUM_VALUES, SLOTS
from card_envs.slide.queries import vanishes


@njit(cache=True)
def value_shares(unseen: np.ndarray, p: np.ndarray) -> None:
    """``p[v-1]`` = share of value ``v`` among the ``unseen`` counts (uniform if none)."""
    tot = 0.0
    for v in range(NUM_VALUES):
        tot += unseen[v]
    for v in range(NUM_VALUES):
        p[v] = unseen[v] / tot if tot > 0 else 0.1


@njit(cache=True)
def fill_tables(p: np.ndarray, up: np.ndarray, down: np.ndarray, down_all: np.ndarray) -> None:
    """Score tables for :func:`grid_score`: ``up[v, k]`` = v (1 - p_v)^k (a face-up v with k
    face-down neighbours), ``down[u, k]`` = p_u u (1 - p_u)^k and ``down_all[k]`` = their sum
    over u. ``up``/``down``: ``(11, 5)``, ``down_all``: ``(5,)``."""
    down_all[:] = 0.0
    for v in range(1, NUM_VALUES + 1):
        q = 1.0 - p[v - 1]
        for k in range(5):
            up[v, k] = v * q ** k
            down[v, k] = p[v - 1] * v * q ** k
            down_all[k] += down[v, k]


@njit(cache=True)
def tables(p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """New ``(up, down, down_all)`` tables for the value shares ``p`` (:func:`fill_tables`)."""
    up = np.zeros((NUM_VALUES + 1, 5))
    down = np.zeros((NUM_VALUES + 1, 5))
    down_all = np.zeros(5)
    fill_tables(p, up, down, down_all)
    return up, down, down_all


@njit(cache=True)
def grid_score(g: np.ndarray, up: np.ndarray, down: np.ndarray,
               down_all: np.ndarray) -> tuple[float, float, float]:
    """(expected points, face-up cards with an equal face-up neighbour, sum of the face-up
    cards without one) of a 16-code grid (0 empty, 1-10 face up, 11 face down)."""
    exp = 0.0
    pairs = 0.0
    face = 0.0
    for i in range(SLOTS):
        v = g[i]
        if v == 0:
            continue
        r = i // 4
        c = i % 4
        a = g[i - 1] if c > 0 else 0
        b = g[i + 1] if c < 3 else 0
        t = g[i - 4] if r > 0 else 0
        d = g[i + 4] if r < 3 else 0
        k = (a == FACE_DOWN_CODE) + (b == FACE_DOWN_CODE) + (t == FACE_DOWN_CODE) + \
            (d == FACE_DOWN_CODE)
        if v != FACE_DOWN_CODE:
            if vanishes(g, i):
                pairs += 1.0
            else:
                exp += up[v, k]
                face += v
            continue
        x = down_all[k]  # minus the values that a face-up neighbour would pair
        if 0 < a < FACE_DOWN_CODE:
            x -= down[a, k]
        if 0 < b < FACE_DOWN_CODE and b != a:
            x -= down[b, k]
        if 0 < t < FACE_DOWN_CODE and t != a and t != b:
            x -= down[t, k]
        if 0 < d < FACE_DOWN_CODE and d != a and d != b and d != t:
            x -= down[d, k]
        exp += x
    return exp, pairs, face
