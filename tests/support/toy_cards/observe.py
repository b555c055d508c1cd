"""Three Cards' observation: the kernel and its bounds (table in the env's docstring)."""

from __future__ import annotations

import numpy as np

from card_envs.core import kernels as K
from card_envs.core.game import Game
from card_envs.core.jit import njit
from toy_cards.layout import (
    CARDS,
    HAND,
    LEAD,
    O_HAND,
    O_PLAYED,
    O_TRICKS,
    OWNER,
    PLAYED,
    TRICK,
    TRICKS,
)


@njit(cache=True)
def observe(state: np.ndarray, cfg: np.ndarray, seat: int, obs: np.ndarray) -> None:
    """``seat``'s observation: its hand, the played cards, tricks, lead and seat to act."""
    n = cfg[K.C_PLAYERS]
    t = state[TRICK]
    for v in range(CARDS):
        owner, played = state[OWNER + v], state[PLAYED + v]
        obs[O_HAND + v] = 1 if (owner == seat and played < 0) else 0
        if played < 0:
            obs[O_PLAYED + v] = 0
        elif played < t:
            obs[O_PLAYED + v] = 1 + K.rel_seat(owner, seat, n)
        else:
            obs[O_PLAYED + v] = 1 + n + K.rel_seat(owner, seat, n)
    for q in range(n):
        obs[O_TRICKS + K.rel_seat(q, seat, n)] = state[TRICKS + q]
    obs[O_TRICKS + n] = t
    obs[O_TRICKS + n + 1] = K.rel_seat(state[LEAD], seat, n)
    obs[O_TRICKS + n + 2] = K.rel_seat(state[K.CUR], seat, n)


def obs_bounds(game: Game) -> tuple[np.ndarray, np.ndarray]:
    """Per-entry bounds of the observation for ``game``'s seat count."""
    n = game.num_players
    low = np.concatenate([np.zeros(2 * CARDS + n + 2), [-1]])
    high = np.concatenate([np.ones(CARDS), np.full(CARDS, 2 * n), np.full(n + 1, HAND),
                           [n - 1, n - 1]])
    return low, high
