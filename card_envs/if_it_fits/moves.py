"""If It Fits move queries (numba): where a card, a sleeping cat, an awake cat or a special toy
card may go, and what a hand can play. Read by the mask and step kernels and by the loader's
checks."""

from __future__ import annotations

import numpy as np

from card_envs.core.jit import njit
from card_envs.core.kernels import C_PLAYERS
from card_envs.if_it_fits.board import card_open, cat_allowed, find, neighbour
from card_envs.if_it_fits.layout import (
    ALL_OPEN,
    CATS_EACH,
    CF_ADV,
    CF_COLS,
    CF_NC,
    CF_O_CELL,
    CF_O_FLIST,
    CF_O_NBC,
    CF_O_OPENNB,
    CF_O_SLOT,
    CF_O_SLOTOK,
    CF_O_WALLNB,
    CF_ROWS,
    HANDMAX,
    S_FRONTN,
    S_HAND,
    S_HANDN,
    S_PLAYED,
    S_RELAX,
    S_STARTE,
    S_STARTW,
    S_SUPPLY,
)


@njit(cache=True, inline="always")
def fits(state: np.ndarray, cfg: np.ndarray, i: int, o: int) -> bool:
    """Advanced rule: no wall of the new card faces a wall of a neighbouring card."""
    return (state[cfg[CF_O_WALLNB] + i] & ~o & ALL_OPEN) == 0


@njit(cache=True)
def card_cell_ok(state: np.ndarray, cfg: np.ndarray, i: int, cid: int, strict: bool) -> bool:
    """Card ``cid`` may go to cell ``i`` (empty, next to a card; with ``strict`` the advanced
    no-wall-to-wall rule holds for one of its rotations)."""
    if state[cfg[CF_O_CELL] + i] != 0 or state[cfg[CF_O_NBC] + i] == 0:
        return False
    if not strict:
        return True
    return fits(state, cfg, i, card_open(cfg, cid, 0)) or \
        fits(state, cfg, i, card_open(cfg, cid, 1))


@njit(cache=True)
def any_fit(state: np.ndarray, cfg: np.ndarray, cid: int) -> bool:
    """Card ``cid`` has a placement obeying the advanced no-wall-to-wall rule."""
    fl = cfg[CF_O_FLIST]
    for k in range(state[S_FRONTN]):
        if card_cell_ok(state, cfg, state[fl + k], cid, True):
            return True
    return False


@njit(cache=True, inline="always")
def strict(state: np.ndarray, cfg: np.ndarray) -> bool:
    """The advanced no-wall-to-wall rule applies to the card being placed."""
    return cfg[CF_ADV] != 0 and state[S_RELAX] == 0


@njit(cache=True)
def start_end_cell(state: np.ndarray, cfg: np.ndarray, e: int) -> int:
    """Cell at the west (e=0) or east (e=1) end of the start row, -1 off the table."""
    C = cfg[CF_COLS]
    row = cfg[CF_ROWS] // 2
    if e == 0:
        return row * C + state[S_STARTW] - 1 if state[S_STARTW] > 0 else -1
    return row * C + state[S_STARTE] + 1 if state[S_STARTE] + 1 < C else -1


@njit(cache=True)
def sleep_dir_ok(state: np.ndarray, cfg: np.ndarray, p: int, i: int, d: int) -> bool:
    """A sleeping cat of ``p`` in cell ``i`` may join the box of the card in direction ``d``:
    that card shows an open side to ``i`` and the cat rule allows ``p`` in its box (the boxes
    it merely faces do not matter)."""
    if not state[cfg[CF_O_OPENNB] + i] & (1 << d):
        return False
    return cat_allowed(state, cfg, p, find(state, cfg, neighbour(cfg, i, d)))


@njit(cache=True)
def sleep_cell_ok(state: np.ndarray, cfg: np.ndarray, p: int, i: int) -> bool:
    """``p`` may lay a sleeping cat in cell ``i`` (empty, with a box it may join)."""
    if state[cfg[CF_O_CELL] + i] != 0 or state[cfg[CF_O_OPENNB] + i] == 0:
        return False
    for d in range(4):
        if sleep_dir_ok(state, cfg, p, i, d):
            return True
    return False


@njit(cache=True)
def any_sleep(state: np.ndarray, cfg: np.ndarray, p: int) -> bool:
    """``p`` has a cell for a sleeping cat."""
    fl = cfg[CF_O_FLIST]
    on = cfg[CF_O_OPENNB]
    for k in range(state[S_FRONTN]):  # frontier cells are empty
        i = state[fl + k]
        if state[on + i] != 0:
            for d in range(4):
                if sleep_dir_ok(state, cfg, p, i, d):
                    return True
    return False


@njit(cache=True)
def toy_slot_ok(state: np.ndarray, cfg: np.ndarray, p: int, s: int) -> bool:
    """Slot ``s`` is a free cat slot in a box the cat rule lets ``p`` into."""
    return state[cfg[CF_O_SLOTOK] + s] == 1 and state[cfg[CF_O_SLOT] + s] == 0 and \
        cat_allowed(state, cfg, p, find(state, cfg, s))


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
