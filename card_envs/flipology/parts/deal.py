"""Flipology deals (numba): a new game, the hands of a new row, the setup placements and the
Great Tree's Regrowth."""

from __future__ import annotations

import numpy as np

from card_envs.core.jit import njit
from card_envs.core.kernels import C_PLAYERS, CUR, PHASE, shuffle_prefix
from card_envs.flipology.layout import (
    ALL_SEATS,
    BONUS,
    CHAIN,
    DECK,
    DECKN,
    DISC,
    DLEN,
    FACE,
    G_HANDN,
    G_NCARDS,
    G_ROWLEN,
    G_SEATPOS,
    G_VARIANT,
    GREAT_TREE,
    HAND,
    HANDMAX,
    HCARD,
    HSCAN,
    KNOW,
    LEVELS,
    MAX_PLAYERS,
    MAXC,
    MAXPOS,
    NDRAW,
    NULLS,
    P_REGROW,
    P_SETUP,
    P_TURN,
    PICK,
    PLACED,
    POS,
    REGROW,
    RET,
    RETSEQ,
    ROUND,
    SEQ,
    SETK,
    START,
    T_ASIDE,
    TURN,
)
from card_envs.flipology.parts.effects import clear_frame, discard

__all__ = ["deal_game", "deal_level", "place_card", "regrow"]


@njit(cache=True)
def _draw(state: np.ndarray) -> int:
    """Draw the top card of the deck (numbering the draw)."""
    state[DECKN] -= 1
    c = state[DECK + state[DECKN]]
    state[NDRAW] += 1
    state[SEQ + c] = state[NDRAW]
    return c


@njit(cache=True)
def deal_level(state: np.ndarray, cfg: np.ndarray) -> None:
    """Deal a hand to every seat (from the start player) and open the setup of a new row."""
    n = cfg[C_PLAYERS]
    hn = cfg[G_HANDN]
    st = state[START]
    for i in range(n):
        s = (st + i) % n
        for j in range(hn):
            c = _draw(state)
            state[HAND + s * HANDMAX + j] = c
            state[KNOW + c] |= 1 << s
    state[SETK] = 0
    state[PLACED] = 0
    _open_setup(state, cfg)


@njit(cache=True)
def _open_setup(state: np.ndarray, cfg: np.ndarray) -> None:
    """Give the setup to seat START + SETK (regrowth choice first in the Great Tree)."""
    s = (state[START] + state[SETK]) % cfg[C_PLAYERS]
    state[CUR] = s
    state[PLACED] = 0
    if cfg[G_VARIANT] == GREAT_TREE and state[REGROW + s] == 0:
        state[PHASE] = P_REGROW
    else:
        state[PHASE] = P_SETUP


@njit(cache=True)
def deal_game(state: np.ndarray, cfg: np.ndarray) -> None:
    """Collect every card, shuffle and deal a new game (series totals are kept)."""
    nc = cfg[G_NCARDS]
    for p in range(MAXPOS):
        state[POS + p] = -1
        state[FACE + p] = 0
    for i in range(MAX_PLAYERS * HANDMAX):
        state[HAND + i] = -1
    m = 0
    for c in range(MAXC):
        state[DISC + c] = 0
        state[PICK + c] = 0
        state[KNOW + c] = 0
        state[DECK + c] = 0
        state[SEQ + c] = 0
        state[RET + c] = 0
    state[NDRAW] = 0
    for c in range(nc):
        if cfg[T_ASIDE + c] == 0:
            state[DECK + m] = c
            m += 1
    state[KNOW + nc] = ALL_SEATS
    state[DLEN] = 0
    state[DECKN] = m
    shuffle_prefix(state, state[DECK:DECK + m], m)
    for s in range(MAX_PLAYERS):
        state[BONUS + s] = 0
        state[REGROW + s] = 0
        state[RETSEQ + s] = 0
    state[ROUND] = 0
    state[TURN] = 0
    state[LEVELS] = 1
    state[NULLS] = 0
    state[CHAIN] = 0
    state[HSCAN] = 0
    state[HCARD] = -1
    clear_frame(state)
    deal_level(state, cfg)


@njit(cache=True)
def _place(state: np.ndarray, cfg: np.ndarray, slot: int) -> None:
    """Lay hand slot ``slot`` face down at the next position of the new row."""
    s = state[CUR]
    rl = cfg[G_ROWLEN]
    p = s * cfg[G_SEATPOS] + (state[LEVELS] - 1) * rl + state[PLACED]
    state[POS + p] = state[HAND + s * HANDMAX + slot]
    state[FACE + p] = 0
    state[HAND + s * HANDMAX + slot] = -1
    state[PLACED] += 1


@njit(cache=True)
def place_card(state: np.ndarray, cfg: np.ndarray, slot: int) -> None:
    """Place hand slot ``slot``; then the forced last card, the end of this seat's setup (the
    next seat's setup) or the end of the setup (the start player's first turn)."""
    _place(state, cfg, slot)
    s = state[CUR]
    rl = cfg[G_ROWLEN]
    hn = cfg[G_HANDN]
    if state[PLACED] == rl - 1 and hn == rl:  # one card left: forced
        for j in range(hn):
            if state[HAND + s * HANDMAX + j] >= 0:
                _place(state, cfg, j)
                break
    if state[PLACED] < rl:
        return
    for j in range(hn):  # Nature: the two cards left go to the discard pile, face down
        c = state[HAND + s * HANDMAX + j]
        if c >= 0:
            discard(state, c)
            state[HAND + s * HANDMAX + j] = -1
    state[SETK] += 1
    if state[SETK] < cfg[C_PLAYERS]:
        _open_setup(state, cfg)
        return
    state[PHASE] = P_TURN
    state[TURN] = 0
    state[CUR] = state[START]


@njit(cache=True)
def regrow(state: np.ndarray, cfg: np.ndarray) -> None:
    """Great Tree Regrowth: draw 5 new cards first, then shuffle the old 5 into the deck."""
    s = state[CUR]
    hn = cfg[G_HANDN]
    old = np.empty(HANDMAX, np.int32)
    for j in range(hn):
        old[j] = state[HAND + s * HANDMAX + j]
    for j in range(hn):
        c = _draw(state)
        state[HAND + s * HANDMAX + j] = c
        state[KNOW + c] |= 1 << s
    m = state[DECKN]
    for j in range(hn):
        state[DECK + m + j] = old[j]
        state[KNOW + old[j]] = 0
        state[SEQ + old[j]] = 0
        state[RET + old[j]] |= 1 << s
    state[RETSEQ + s] = state[NDRAW]
    state[DECKN] = m + hn
    shuffle_prefix(state, state[DECK:DECK + m + hn], m + hn)
    state[REGROW + s] = 1
