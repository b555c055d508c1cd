"""If It Fits move helpers of the mask and step kernels (numba): whether the advanced rule holds
for the card being placed, whether a seat has somewhere to put a sleeping cat, a special toy
card or an awake cat, what a hand can play, and taking a card out of a hand. The placement
queries they build on are in :mod:`card_envs.if_it_fits.queries`."""

from __future__ import annotations

import numpy as np

from card_envs.core.jit import njit
from card_envs.core.kernels import C_PLAYERS
from card_envs.if_it_fits.layout import (
    CATS_EACH,
    CF_ADV,
    CF_COLS,
    CF_NC,
    CF_O_FLIST,
    CF_ROWS,
    HANDMAX,
    S_FRONTN,
    S_HAND,
    S_HANDN,
    S_PLAYED,
    S_RELAX,
    S_SUPPLY,
)
from card_envs.if_it_fits.queries import open_nbr, sleep_joins, toy_slot_ok


@njit(cache=True, inline="always")
def strict(state: np.ndarray, cfg: np.ndarray) -> bool:
    """The advanced no-wall-to-wall rule applies to the card being placed."""
    return cfg[CF_ADV] != 0 and state[S_RELAX] == 0


@njit(cache=True)
def any_sleep(state: np.ndarray, cfg: np.ndarray, p: int) -> bool:
    """``p`` has a cell for a sleeping cat."""
    fl = cfg[CF_O_FLIST]
    for k in range(state[S_FRONTN]):  # sleep_cell_ok on the frontier (empty cells)
        i = state[fl + k]
        on = open_nbr(state, cfg, i)
        if on != 0 and sleep_joins(state, cfg, p, i, on):
            return True
    return False


@njit(cache=True)
def any_toy_slot(state: np.ndarray, cfg: np.ndarray, p: int) -> bool:
    """A drawn special toy card of ``p`` has a slot."""
    S = (cfg[CF_ROWS] - 1) * cfg[CF_COLS]
    for s in range(S):
        if toy_slot_ok(state, cfg, p, s):
            return True
    return False


@njit(cache=True)
def cat_slots(state: np.ndarray, cfg: np.ndarray, p: int) -> tuple[int, int]:
    """The (up to two) slots touching the card played this turn where ``p``'s awake cat may
    lie; -1 for none."""
    C = cfg[CF_COLS]
    S = (cfg[CF_ROWS] - 1) * C
    i = state[S_PLAYED]
    a = i - C if i >= C and toy_slot_ok(state, cfg, p, i - C) else -1
    b = i if i < S and toy_slot_ok(state, cfg, p, i) else -1
    return a, b


@njit(cache=True)
def cats_on_table(state: np.ndarray, cfg: np.ndarray) -> int:
    """Number of the players' cats on the table (awake or sleeping)."""
    k = 0
    for q in range(cfg[C_PLAYERS]):
        k += CATS_EACH - state[S_SUPPLY + q]
    return k


@njit(cache=True)
def playable(state: np.ndarray, cfg: np.ndarray, cid: int) -> bool:
    """Card ``cid`` can be played: a Princess needs a cat on the table, a card a free cell."""
    if cid == cfg[CF_NC]:
        return cats_on_table(state, cfg) > 0
    return state[S_FRONTN] > 0


@njit(cache=True)
def hand_playable(state: np.ndarray, cfg: np.ndarray, p: int) -> bool:
    """Some card in ``p``'s hand can be played."""
    for h in range(state[S_HANDN + p]):
        if playable(state, cfg, state[S_HAND + p * HANDMAX + h]):
            return True
    return False


@njit(cache=True)
def hand_remove(state: np.ndarray, p: int, h: int) -> int:
    """Take the card at hand position ``h`` out of ``p``'s hand (the rest move up)."""
    base = S_HAND + p * HANDMAX
    cid = state[base + h]
    m = state[S_HANDN + p]
    for k in range(h, m - 1):
        state[base + k] = state[base + k + 1]
    state[base + m - 1] = -1
    state[S_HANDN + p] = m - 1
    return cid
