"""Three Cards features (the toy game exercises :mod:`card_envs.core.features`).

Per action ``v`` (play the card of value ``v + 1``): ``legal`` (the card is in the observer's
hand and the observer is to act), ``value`` (``(v + 1) / 9``), ``beats`` (higher than every
card already in the current trick), ``unseen_higher`` (higher cards neither in the hand nor
played, / 9). Global: cards in hand / 3, tricks completed / 3, the own tricks / 3.
"""

from __future__ import annotations

import numpy as np

from card_envs.core import kernels as K
from card_envs.core.jit import njit
from toy_cards.layout import CARDS, HAND, O_HAND, O_PLAYED, O_TRICKS

GLOBAL_FEATURES = ("hand", "tricks_done", "own_tricks")
ACTION_FEATURES = ("legal", "value", "beats", "unseen_higher")


def dims(game: object) -> tuple[int, int]:
    """(global width, features per action)."""
    return len(GLOBAL_FEATURES), len(ACTION_FEATURES)


@njit(cache=True)
def fill(obs: np.ndarray, cfg: np.ndarray, glob: np.ndarray, act: np.ndarray) -> None:
    """Write the features of one observation (module docstring)."""
    n = cfg[K.C_PLAYERS]
    to_act = obs[O_TRICKS + n + 2] == 0
    top = -1
    hand = 0
    for v in range(CARDS):
        p = obs[O_PLAYED + v]
        if p > n and v > top:  # in the current trick
            top = v
        hand += obs[O_HAND + v]
    for v in range(CARDS):
        unseen = 0
        for w in range(v + 1, CARDS):
            if obs[O_HAND + w] == 0 and obs[O_PLAYED + w] == 0:
                unseen += 1
        mine = obs[O_HAND + v] == 1
        act[0, v] = 1.0 if (mine and to_act) else 0.0
        act[1, v] = (v + 1) / CARDS
        act[2, v] = 1.0 if (mine and v > top) else 0.0
        act[3, v] = unseen / CARDS
    glob[0] = hand / HAND
    glob[1] = obs[O_TRICKS + n] / HAND
    glob[2] = obs[O_TRICKS] / HAND
