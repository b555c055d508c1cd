"""Op Glad IJs window resolution: judge every seat's slap (``queries.judge``), hand out the
cards by priority, split equal pair slaps, find who turns next and punish the faults (rules:
``docs/rules/op_glad_ijs.md``, "Resolve", "Faults", "Who turns next").

The seeded random draws (which correct slap of a class came first, the pair order, splits)
are taken from the state's RNG in a fixed order, so a state replays bit for bit.

The helpers of :func:`resolve` (and ``piles.slide_under``) are compiled into it
(``inline="always"``): as separate compiled calls, made every window, they cost ~3% of a
batched step.
"""

from __future__ import annotations

import numpy as np

from card_envs.core.jit import njit
from card_envs.core.kernels import C_PLAYERS, rng_int
from card_envs.op_glad_ijs.layout import (
    CA,
    CB,
    CHOICE,
    CT_KIND,
    J_ANIMALS,
    J_FAULT,
    J_HABITATS,
    J_PAIR,
    J_RIGHT,
    KIND_RIGHT,
    LAST,
    TURNED_BY,
    TURNER,
    WINDOW,
)
from card_envs.op_glad_ijs.parts.piles import mid_take, slide_under, take_all, won_push
from card_envs.op_glad_ijs.queries import judge, pairs_available, visible


@njit(cache=True, inline="always")
def popcount(x: int) -> int:
    """Number of set bits of ``x``."""
    c = 0
    while x:
        x &= x - 1
        c += 1
    return c


@njit(cache=True, inline="always")
def nth_bit(x: int, j: int) -> int:
    """Index of the ``j``-th set bit of ``x`` (0-based, from the lowest)."""
    i = 0
    while True:
        if x >> i & 1:
            if j == 0:
                return i
            j -= 1
        i += 1


@njit(cache=True, inline="always")
def _classes(state: np.ndarray, cfg: np.ndarray) -> tuple[int, int, int, int, int]:
    """Seat bitmasks of the window's correct right-habitat, 2-animals, 2-habitats and pair
    slaps, and of its faults."""
    n = cfg[C_PLAYERS]
    va, vh = visible(state)
    m1 = 0
    m2 = 0
    m3 = 0
    m4 = 0
    faults = 0
    for q in range(n):
        j = judge(state, cfg, state[CHOICE + q], va, vh)
        if j == J_RIGHT:
            m1 |= 1 << q
        elif j == J_ANIMALS:
            m2 |= 1 << q
        elif j == J_HABITATS:
            m3 |= 1 << q
        elif j == J_PAIR:
            m4 |= 1 << q
        elif j == J_FAULT:
            faults |= 1 << q
    return m1, m2, m3, m4, faults


@njit(cache=True, inline="always")
def _take_pair(state: np.ndarray, cfg: np.ndarray, s: int, partner: int, t: int,
               u: int) -> None:
    """Seat ``s`` takes the earliest-turned cards of types ``t`` and ``u`` (won in turned
    order), or shares them with ``partner`` (>= 0: one each, drawn at random)."""
    p1, s1 = mid_take(state, cfg, t)
    p2, s2 = mid_take(state, cfg, u)
    if t == u or p2 >= p1:  # p2 was measured after removing p1
        x, y = s1, s2  # x turned earlier
    else:
        x, y = s2, s1
    if partner < 0:
        won_push(state, s, x)
        won_push(state, s, y)
        state[TURNER] = s
    else:
        if rng_int(state, 2) == 0:
            won_push(state, s, x)
            won_push(state, partner, y)
        else:
            won_push(state, s, y)
            won_push(state, partner, x)
        state[TURNER] = partner


@njit(cache=True, inline="always")
def _pair_slaps(state: np.ndarray, cfg: np.ndarray, pairs: int) -> bool:
    """Handle the correct pair slaps (seat bitmask ``pairs``) in a seeded random order; each
    takes its two cards while they are there. Returns whether any took cards."""
    n = cfg[C_PLAYERS]
    took = False
    rem = pairs
    while rem:
        s = nth_bit(rem, rng_int(state, popcount(rem)))
        rem &= ~(1 << s)
        a = state[CHOICE + s]
        t = cfg[CA + a]
        u = cfg[CB + a]
        avail = pairs_available(state, t, u)
        if avail == 0:
            continue  # its cards are gone: nothing, no fault
        partner = -1
        if avail == 1:  # the only such pair: split with a random other slapper of it
            same = 0
            for q in range(n):
                if rem >> q & 1 and state[CHOICE + q] == a:
                    same |= 1 << q
            if same:
                partner = nth_bit(same, rng_int(state, popcount(same)))
                rem &= ~(1 << partner)
        _take_pair(state, cfg, s, partner, t, u)
        took = True
    return took


@njit(cache=True, inline="always")
def _right_pair_fault(state: np.ndarray, cfg: np.ndarray, faults: int) -> None:
    """Nobody took cards in the card's first window: the first faulting two-hand slap with a
    right-habitat card, clockwise from the card's turner, makes its left neighbour turn
    next."""
    n = cfg[C_PLAYERS]
    tb = state[TURNED_BY]
    for i in range(n):
        q = (tb + i) % n
        if faults >> q & 1:
            a = state[CHOICE + q]
            u = cfg[CB + a]
            if u >= 0 and (cfg[CT_KIND + cfg[CA + a]] == KIND_RIGHT or
                           cfg[CT_KIND + u] == KIND_RIGHT):
                state[TURNER] = (q + 1) % n
                break


@njit(cache=True)
def resolve(state: np.ndarray, cfg: np.ndarray) -> bool:
    """Judge and resolve the window's slaps; returns whether any slap took cards."""
    n = cfg[C_PLAYERS]
    m1, m2, m3, m4, faults = _classes(state, cfg)
    took = False
    best = m1 if m1 else (m2 if m2 else m3)
    if best:  # the first of the best one-hand class wins the whole middle
        w = nth_bit(best, rng_int(state, popcount(best)))
        take_all(state, cfg, w)
        state[TURNER] = w
        took = True
    else:
        took = _pair_slaps(state, cfg, m4)
    if not took and state[WINDOW] == 0 and faults:
        _right_pair_fault(state, cfg, faults)
    for q in range(n):
        if faults >> q & 1:
            slide_under(state, q)
    for q in range(n):
        state[LAST + q] = state[CHOICE + q]
        state[CHOICE + q] = -1
    return took
