"""Op Glad IJs judging kernels: the class of a slap against the middle, and whether the middle
still holds a correct target (rules: ``docs/rules/op_glad_ijs.md``, "Judge")."""

from __future__ import annotations

import numpy as np

from card_envs.core.jit import njit
from card_envs.op_glad_ijs.layout import (
    A_PASS,
    CA,
    CB,
    CT_AM,
    CT_HM,
    CT_KIND,
    G_T,
    KIND_ANIMALS,
    KIND_HABITATS,
    KIND_RIGHT,
    MCOUNT,
    NA,
    NH,
    NRIGHT,
    NUM_ANIMALS,
)

# judgement classes, in priority order of the correct ones
J_PASS, J_RIGHT, J_ANIMALS, J_HABITATS, J_PAIR, J_FAULT = 0, 1, 2, 3, 4, 5


@njit(cache=True, inline="always")
def visible(state: np.ndarray) -> tuple[int, int]:
    """Bitmasks of animals / habitats visible on normal cards in the middle."""
    va = 0
    vh = 0
    for i in range(NUM_ANIMALS):
        if state[NA + i] > 0:
            va |= 1 << i
        if state[NH + i] > 0:
            vh |= 1 << i
    return va, vh


@njit(cache=True)
def judge(state: np.ndarray, cfg: np.ndarray, action: int, va: int, vh: int) -> int:
    """Class of a slap against the current middle: J_PASS, J_RIGHT/ANIMALS/HABITATS (correct
    one-hand slaps), J_PAIR (correct two-hand slap) or J_FAULT."""
    if action == A_PASS:
        return J_PASS
    t = cfg[CA + action]
    u = cfg[CB + action]
    kt = cfg[CT_KIND + t]
    if u < 0:
        if kt == KIND_RIGHT:
            return J_RIGHT
        if kt == KIND_ANIMALS:
            return J_ANIMALS if (cfg[CT_AM + t] & ~vh) == 0 else J_FAULT
        if kt == KIND_HABITATS:
            return J_HABITATS if (cfg[CT_HM + t] & ~va) == 0 else J_FAULT
        return J_FAULT
    ku = cfg[CT_KIND + u]
    if kt >= KIND_ANIMALS or ku >= KIND_ANIMALS:
        return J_FAULT
    if (cfg[CT_AM + t] & cfg[CT_HM + u]) | (cfg[CT_AM + u] & cfg[CT_HM + t]):
        return J_PAIR
    return J_FAULT


@njit(cache=True)
def target_exists(state: np.ndarray, cfg: np.ndarray) -> bool:
    """Does the middle hold a correct target (a right-habitat card, a matching pair, or a
    special card whose condition holds)? O(types)."""
    if state[NRIGHT] > 0:
        return True
    va, vh = visible(state)
    if va & vh:
        return True
    T = cfg[G_T]
    for t in range(T):
        if state[MCOUNT + t] > 0:
            k = cfg[CT_KIND + t]
            if k == KIND_ANIMALS and (cfg[CT_AM + t] & ~vh) == 0:
                return True
            if k == KIND_HABITATS and (cfg[CT_HM + t] & ~va) == 0:
                return True
    return False


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
