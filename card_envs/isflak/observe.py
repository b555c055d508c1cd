"""Isflak's observation: the kernel :func:`observe` and its bounds :func:`obs_bounds`.

Everything is public; the layout (seats relative, the observer first) is the table of
:mod:`card_envs.isflak.env`, the offsets are in :mod:`card_envs.isflak.layout`.
"""

from __future__ import annotations

import numpy as np

from card_envs.core.game import Game
from card_envs.core.jit import njit
from card_envs.core.kernels import C_PLAYERS, CUR, PHASE, rel_seat
from card_envs.isflak.layout import (
    C_PENG,
    CELL,
    CELLS,
    OBS_OWNER,
    OBS_POINTS,
    OBS_SEATS,
    OUT,
    PCOUNT,
    PEN,
    PLACED,
    SCORE,
    SEAT_CARDS,
    SEAT_FIELDS,
    SEAT_OUT,
    SEAT_SCORE,
    T_PHASE,
    T_PLACED,
    T_TO_ACT,
)
from card_envs.isflak.queries import cell_owner, cell_points, max_pile_points

__all__ = ["observe", "obs_bounds"]


@njit(cache=True)
def observe(state: np.ndarray, cfg: np.ndarray, seat: int, obs: np.ndarray) -> None:
    """Write ``seat``'s observation (layout in ``card_envs.isflak.env``); seats are relative,
    the observer first. Everything is public."""
    n = cfg[C_PLAYERS]
    peng = cfg[C_PENG]
    for c in range(CELLS):
        obs[OBS_POINTS + c] = cell_points(state, CELL + c)
        o = cell_owner(state, CELL + c)  # owner seat + 1 -> 1 + relative seat; 0 stays 0
        obs[OBS_OWNER + c] = rel_seat(o - 1, seat, n) + 1 if o else 0
    j = OBS_SEATS
    q = seat
    for _ in range(n):
        for k in range(peng):
            obs[j] = state[PEN + q * peng + k]
            j += 1
        obs[j + SEAT_OUT] = state[OUT + q]
        obs[j + SEAT_SCORE] = state[SCORE + q]
        obs[j + SEAT_CARDS] = state[PCOUNT + q]
        j += SEAT_FIELDS
        q = q + 1 if q + 1 < n else 0
    obs[j + T_PHASE] = state[PHASE]
    obs[j + T_TO_ACT] = rel_seat(state[CUR], seat, n)
    obs[j + T_PLACED] = state[PLACED]


def obs_bounds(game: Game) -> tuple[np.ndarray, np.ndarray]:
    """Per-entry lower and upper bounds of ``game``'s observation vector."""
    n, P, C = game.num_players, int(game.cfg[C_PENG]), CELLS
    pts = game.options["card_points"]
    maxpt = max(pts.values())
    seat_lo = [-1] * P + [0, 0, 0]  # slot cells, then out, points, cards
    seat_hi = [C - 1] * P + [1, max_pile_points(pts), C]
    low = [-1] * C + [0] * C + seat_lo * n + [0, -1, 0]  # tail: phase, to act, placed
    high = [maxpt] * C + [n] * C + seat_hi * n + [2, n - 1, n * P]
    return np.array(low), np.array(high)
