"""Slide's final scoring (numba): pairs vanish, the remaining values count, lowest wins."""

from __future__ import annotations

import numpy as np

from card_envs.core.jit import njit
from card_envs.core.kernels import C_PLAYERS, winners_by_keys
from card_envs.slide.layout import GRID, SLOTS


@njit(cache=True)
def grid_points(state: np.ndarray, seat: int) -> tuple[int, int]:
    """Final scoring of one grid: (points, cards left) after every card with an equal
    orthogonal neighbour is removed."""
    g = GRID + seat * SLOTS
    pts = 0
    cards = 0
    for r in range(4):
        for c in range(4):
            v = state[g + r * 4 + c]
            if v == 0:
                continue
            paired = (
                (c > 0 and state[g + r * 4 + c - 1] == v)
                or (c < 3 and state[g + r * 4 + c + 1] == v)
                or (r > 0 and state[g + (r - 1) * 4 + c] == v)
                or (r < 3 and state[g + (r + 1) * 4 + c] == v)
            )
            if not paired:
                pts += v
                cards += 1
    return pts, cards


@njit(cache=True)
def outcome(state: np.ndarray, cfg: np.ndarray, points: np.ndarray,
            winners: np.ndarray) -> None:
    """Final points per seat (lower is better) and the winners (lowest points, then fewest
    cards, then a shared win)."""
    n = cfg[C_PLAYERS]
    key1 = np.empty(n, np.float64)
    key2 = np.empty(n, np.float64)
    for p in range(n):
        pts, cards = grid_points(state, p)
        points[p] = pts
        key1[p] = -pts
        key2[p] = -cards
    winners_by_keys(key1, key2, n, winners)
