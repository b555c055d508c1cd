"""Slide's observation: the kernel (numba; what one seat sees, seats relative to it) and its
bounds (layout: ``card_envs.slide.layout`` ``OBS_*``, table in ``card_envs.slide.env``)."""

from __future__ import annotations

import numpy as np

from card_envs.core.game import Game
from card_envs.core.jit import njit
from card_envs.core.kernels import C_PLAYERS, CUR, PHASE, rel_seat
from card_envs.slide.layout import (
    COPIES,
    FACE,
    FACE_DOWN_CODE,
    FIRST,
    GRID,
    MID,
    NUM_VALUES,
    OBS_CUR,
    OBS_FIRST,
    OBS_MID,
    OBS_OWN_REVEAL,
    OBS_PHASE,
    OBS_ROUND,
    OBS_UNSEEN,
    P_END,
    P_REVEAL,
    REVEAL,
    ROUND,
    ROUNDS,
    SLOTS,
)


@njit(cache=True)
def observe(state: np.ndarray, cfg: np.ndarray, seat: int, obs: np.ndarray) -> None:
    """Write ``seat``'s observation; seats are relative, the observer first. Face-down cards
    and other seats' pending reveals are not shown."""
    n = cfg[C_PLAYERS]
    t = SLOTS * n  # layout.obs_tail(n)
    mid = t + OBS_MID
    uns = t + OBS_UNSEEN
    for v in range(NUM_VALUES):
        m = state[MID + v]
        obs[mid + v] = m
        obs[uns + v] = COPIES - m
    k = 0
    q = seat
    for _ in range(n):
        g = GRID + q * SLOTS
        f = FACE + q * SLOTS
        for s in range(SLOTS):
            v = state[g + s]
            if v == 0:
                obs[k] = 0
            elif state[f + s]:
                obs[k] = v
                obs[uns + v - 1] -= 1
            else:
                obs[k] = FACE_DOWN_CODE
            k += 1
        q = q + 1 if q + 1 < n else 0
    obs[t + OBS_PHASE] = state[PHASE]
    obs[t + OBS_ROUND] = state[ROUND]
    obs[t + OBS_FIRST] = rel_seat(state[FIRST], seat, n)
    obs[t + OBS_CUR] = rel_seat(state[CUR], seat, n)
    obs[t + OBS_OWN_REVEAL] = state[REVEAL + seat] if state[PHASE] == P_REVEAL else -1


def obs_bounds(game: Game) -> tuple[np.ndarray, np.ndarray]:
    """Per-entry lower and upper bounds of the observation for ``game``'s seat count."""
    n = game.num_players
    low = np.concatenate([np.zeros(SLOTS * n + 2 * NUM_VALUES), [0, 0, 0, -1, -1]])
    high = np.concatenate([np.full(SLOTS * n, FACE_DOWN_CODE),
                           np.full(2 * NUM_VALUES, COPIES),
                           [P_END, ROUNDS - 1, n - 1, n - 1, SLOTS - 1]])
    return low, high
