"""Three Cards kernels: deal three cards each from nine, play tricks, highest card wins."""

from __future__ import annotations

import numpy as np

from card_envs.core import kernels as K
from card_envs.core.jit import njit
from toy_cards.layout import (
    CARDS,
    HAND,
    LEAD,
    OWNER,
    P_END,
    P_PLAY,
    PLAYED,
    TRICK,
    TRICKS,
)
from toy_cards.queries import top_card


@njit(cache=True)
def init(state: np.ndarray, cfg: np.ndarray) -> None:
    n = cfg[K.C_PLAYERS]
    deck = np.arange(CARDS)
    K.shuffle_prefix(state, deck, HAND * n)
    for v in range(CARDS):
        state[OWNER + v] = -1
        state[PLAYED + v] = -1
    for i in range(HAND * n):
        state[OWNER + deck[i]] = i % n
    for q in range(3):
        state[TRICKS + q] = 0
    start = cfg[K.C_START] if cfg[K.C_START] >= 0 else K.rng_int(state, n)
    state[TRICK] = 0
    state[LEAD] = start
    state[K.CUR] = start
    state[K.PHASE] = P_PLAY
    state[K.DONE] = 0
    state[K.STEPS] = 0


@njit(cache=True)
def _plays(state: np.ndarray) -> int:
    k = 0
    for v in range(CARDS):
        if state[PLAYED + v] == state[TRICK]:
            k += 1
    return k


@njit(cache=True)
def outcome(state: np.ndarray, cfg: np.ndarray, points: np.ndarray,
            winners: np.ndarray) -> None:
    n = cfg[K.C_PLAYERS]
    key2 = np.zeros(n, np.float64)
    for q in range(n):
        points[q] = state[TRICKS + q]
    K.winners_by_keys(points, key2, n, winners)


@njit(cache=True)
def _step_play(state: np.ndarray, cfg: np.ndarray, action: int, rewards: np.ndarray) -> int:
    n = cfg[K.C_PLAYERS]
    t = state[TRICK]
    state[PLAYED + action] = t
    plays = _plays(state)
    if plays < n:
        state[K.CUR] = (state[LEAD] + plays) % n
        return 0
    best = top_card(state[PLAYED:PLAYED + CARDS] == t)
    w = state[OWNER + best]
    state[TRICKS + w] += 1
    state[TRICK] = t + 1
    state[LEAD] = w
    state[K.CUR] = w
    if t + 1 < HAND:
        return 0
    state[K.CUR] = -1
    state[K.PHASE] = P_END
    state[K.DONE] = K.DONE_TERMINATED
    points = np.zeros(n, np.float64)
    winners = np.zeros(n, np.int64)
    outcome(state, cfg, points, winners)
    K.terminal_rewards(cfg[K.C_REWARD], points, winners, n, rewards)
    return K.ST_DONE | K.ST_REWARD


@njit(cache=True)
def step(state: np.ndarray, cfg: np.ndarray, action: int, rewards: np.ndarray) -> int:
    """Apply a legal action: one helper per phase (only ``play`` takes actions)."""
    state[K.STEPS] += 1
    return _step_play(state, cfg, action, rewards)


@njit(cache=True)
def legal_mask(state: np.ndarray, cfg: np.ndarray, mask: np.ndarray) -> None:
    cur = state[K.CUR]
    for v in range(CARDS):
        mask[v] = 1 if (cur >= 0 and state[OWNER + v] == cur and state[PLAYED + v] < 0) else 0
