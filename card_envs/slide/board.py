"""The 4x4 grid mechanics of Slide (numba): which sides a card may enter from and the push
that shifts a line of cards toward the empty slot."""

from __future__ import annotations

import numpy as np

from card_envs.core.jit import njit
from card_envs.slide.layout import FACE, GRID, LEFT, RIGHT, SLOTS, TOP


@njit(cache=True, inline="always")
def side_ok(empty: int, side: int) -> bool:
    """May a card be pushed in from ``side`` when the empty slot is ``empty``?"""
    r = empty // 4
    c = empty % 4
    if side == LEFT:
        return c != 0
    if side == RIGHT:
        return c != 3
    if side == TOP:
        return r != 0
    return r != 3  # BOTTOM


@njit(cache=True)
def shift_in(a: np.ndarray, base: int, empty: int, side: int, value: int) -> None:
    """On the 4x4 grid ``a[base:base+16]``: shift the cells between the edge ``side`` and the
    gap ``empty`` one place toward the gap and put ``value`` at the edge."""
    r = empty // 4
    c = empty % 4
    if side == LEFT:
        for k in range(c, 0, -1):
            a[base + r * 4 + k] = a[base + r * 4 + k - 1]
        a[base + r * 4] = value
    elif side == RIGHT:
        for k in range(c, 3):
            a[base + r * 4 + k] = a[base + r * 4 + k + 1]
        a[base + r * 4 + 3] = value
    elif side == TOP:
        for k in range(r, 0, -1):
            a[base + k * 4 + c] = a[base + (k - 1) * 4 + c]
        a[base + c] = value
    else:  # BOTTOM
        for k in range(r, 3):
            a[base + k * 4 + c] = a[base + (k + 1) * 4 + c]
        a[base + 12 + c] = value


@njit(cache=True)
def push(state: np.ndarray, seat: int, empty: int, side: int, value: int) -> None:
    """Push ``value`` (face up) into ``seat``'s grid from ``side``; shifted cards keep their
    face."""
    shift_in(state, GRID + seat * SLOTS, empty, side, value)
    shift_in(state, FACE + seat * SLOTS, empty, side, 1)
