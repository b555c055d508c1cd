"""Op Glad IJs pile kernels: the linked card piles and the middle's derived counts.

Each pile is a singly linked list over the state's card slots (``card_envs.op_glad_ijs.layout``);
these kernels move cards between piles and keep the middle's per-type, per-animal and
per-habitat counts and its sorted list of present types up to date.
"""

from __future__ import annotations

import numpy as np

from card_envs.core.jit import njit
from card_envs.core.kernels import C_PLAYERS, CUR
from card_envs.op_glad_ijs.layout import (
    CARDS,
    CT_AM,
    CT_HM,
    CT_KIND,
    DBOT,
    DLEN,
    DTOP,
    KCOUNT,
    KIND_NORMAL,
    KIND_RIGHT,
    KNOWN,
    LAST_TURNED,
    MCOUNT,
    MHEAD,
    MLEN,
    MTAIL,
    NA,
    NEXT,
    NH,
    NRIGHT,
    NUM_ANIMALS,
    OHEAD,
    OLEN,
    OTAIL,
    PLEN,
    PLIST,
    TURNED,
    TURNED_BY,
    TURNER,
    WINDOW,
    WLEN,
    WTOP,
)


@njit(cache=True, inline="always")
def count_add(state: np.ndarray, cfg: np.ndarray, t: int, d: int) -> None:
    """Add ``d`` (+1 / -1) cards of type ``t`` to the middle's derived counts."""
    c = state[MCOUNT + t] + d
    state[MCOUNT + t] = c
    if d > 0 and c == 1:  # insert t into the sorted list of present types
        k = state[PLEN]
        i = k
        while i > 0 and state[PLIST + i - 1] > t:
            state[PLIST + i] = state[PLIST + i - 1]
            i -= 1
        state[PLIST + i] = t
        state[PLEN] = k + 1
    elif d < 0 and c == 0:
        k = state[PLEN] - 1
        i = 0
        while state[PLIST + i] != t:
            i += 1
        for j in range(i, k):
            state[PLIST + j] = state[PLIST + j + 1]
        state[PLIST + k] = 0
        state[PLEN] = k
    k = cfg[CT_KIND + t]
    if k == KIND_NORMAL:
        am = cfg[CT_AM + t]
        hm = cfg[CT_HM + t]
        for i in range(NUM_ANIMALS):
            if am >> i & 1:
                state[NA + i] += d
            if hm >> i & 1:
                state[NH + i] += d
    elif k == KIND_RIGHT:
        state[NRIGHT] += d


@njit(cache=True)
def mid_take(state: np.ndarray, cfg: np.ndarray, t: int) -> tuple[int, int]:
    """Remove the earliest-turned middle card of type ``t``; return its position and slot."""
    prev = -1
    s = state[MHEAD]
    pos = 0
    while state[CARDS + 2 * s] != t:
        prev = s
        s = state[NEXT + 2 * s]
        pos += 1
    nx = state[NEXT + 2 * s]
    if prev < 0:
        state[MHEAD] = nx
    else:
        state[NEXT + 2 * prev] = nx
    if nx < 0:
        state[MTAIL] = prev
    state[MLEN] -= 1
    count_add(state, cfg, t, -1)
    return pos, s


@njit(cache=True, inline="always")
def won_push(state: np.ndarray, seat: int, s: int) -> None:
    """Put the card in slot ``s`` on top of ``seat``'s won pile."""
    state[NEXT + 2 * s] = state[WTOP + seat]
    state[WTOP + seat] = s
    state[WLEN + seat] += 1


@njit(cache=True, inline="always")
def mid_append(state: np.ndarray, s: int) -> None:
    """Put the card in slot ``s`` at the end of the middle (latest turned)."""
    state[NEXT + 2 * s] = -1
    m = state[MLEN]
    if m == 0:
        state[MHEAD] = s
    else:
        state[NEXT + 2 * state[MTAIL]] = s
    state[MTAIL] = s
    state[MLEN] = m + 1


@njit(cache=True)
def turn_card(state: np.ndarray, cfg: np.ndarray, seat: int) -> None:
    """``seat`` turns the top card of its draw pile into the middle; a new reaction phase."""
    d = state[DLEN + seat] - 1
    s = state[DTOP + seat]
    t = state[CARDS + 2 * s]
    state[DTOP + seat] = state[NEXT + 2 * s]
    if d == 0:
        state[DBOT + seat] = -1
    state[DLEN + seat] = d
    if state[KNOWN + seat] > d:  # the turned card was a public bottom card
        state[KNOWN + seat] = d
        state[KCOUNT + t] -= 1
    mid_append(state, s)
    count_add(state, cfg, t, 1)
    state[TURNED] += 1
    state[LAST_TURNED] = t
    state[TURNED_BY] = seat
    state[TURNER] = (seat + 1) % cfg[C_PLAYERS]
    state[WINDOW] = 0
    state[CUR] = 0


@njit(cache=True)
def take_all(state: np.ndarray, cfg: np.ndarray, seat: int) -> None:
    """``seat`` wins the whole middle: its cards go on its won pile in turned order."""
    s = state[MHEAD]
    while s >= 0:
        nx = state[NEXT + 2 * s]
        won_push(state, seat, s)
        count_add(state, cfg, state[CARDS + 2 * s], -1)
        s = nx
    state[MHEAD] = -1
    state[MTAIL] = -1
    state[MLEN] = 0


@njit(cache=True, inline="always")
def slide_under(state: np.ndarray, q: int) -> None:
    """A fault: the top card of ``q``'s won pile (if any) slides, public, under its draw
    pile."""
    w = state[WLEN + q]
    if w > 0:
        s = state[WTOP + q]
        state[WTOP + q] = state[NEXT + 2 * s]
        state[WLEN + q] = w - 1
        state[NEXT + 2 * s] = -1
        d = state[DLEN + q]
        if d == 0:
            state[DTOP + q] = s
        else:
            state[NEXT + 2 * state[DBOT + q]] = s
        state[DBOT + q] = s
        state[DLEN + q] = d + 1
        state[KNOWN + q] += 1
        state[KCOUNT + state[CARDS + 2 * s]] += 1


@njit(cache=True)
def middle_out(state: np.ndarray, cfg: np.ndarray) -> None:
    """The end of the game: the cards left in the middle go out of the game."""
    m = state[MLEN]
    s = state[MHEAD]
    while s >= 0:
        count_add(state, cfg, state[CARDS + 2 * s], -1)
        s = state[NEXT + 2 * s]
    if m > 0:
        if state[OLEN] == 0:
            state[OHEAD] = state[MHEAD]
        else:
            state[NEXT + 2 * state[OTAIL]] = state[MHEAD]
        state[OTAIL] = state[MTAIL]
    state[OLEN] += m
    state[MHEAD] = -1
    state[MTAIL] = -1
    state[MLEN] = 0
