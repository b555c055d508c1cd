"""Slide's rule queries (numba): where the gap is, which sides a card may enter from, what a
pick does to a grid, which cards vanish at the end, what a grid scores and who wins.

Each rule is written here once; the rules (``rules.py``), the features (``features.py``), the
text and the picture (``view.py``) and the heuristic (``card_envs.agents.slide`` with its
estimate, ``parts/estimate.py``) ask these queries instead of restating them.

A grid is 16 cells, slot ``row*4 + col``: 0 empty, 1-10 a value and, in an observation,
``FACE_DOWN_CODE`` for a face-down card (its value unknown: it never pairs and never scores).
The state holds the true values of face-down cards, so a state's grid is scored in full.
"""

from __future__ import annotations

import numpy as np

from card_envs.core.jit import njit
from card_envs.core.kernels import winners_by_keys
from card_envs.slide.layout import FACE_DOWN_CODE, GRID, LEFT, RIGHT, SLOTS, TOP

__all__ = ["gap", "grid_points", "paired", "push", "seat_points", "shift_in", "side_ok",
           "vanishes", "winning_seats"]


@njit(cache=True)
def gap(g: np.ndarray) -> int:
    """The empty slot of the grid ``g`` (the gap the next pick is pushed toward), -1 if the
    grid is full."""
    for i in range(SLOTS):
        if g[i] == 0:
            return i
    return -1


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
def push(g: np.ndarray, empty: int, side: int, value: int, out: np.ndarray) -> None:
    """The grid after a pick: ``out`` = ``g`` with ``value`` pushed in from ``side`` toward the
    gap ``empty`` (:func:`shift_in` on a copy)."""
    for i in range(SLOTS):
        out[i] = g[i]
    shift_in(out, 0, empty, side, value)


@njit(cache=True, inline="always")
def vanishes(g: np.ndarray, i: int) -> bool:
    """Does the card at slot ``i`` of the grid ``g`` vanish at the end: a value 1-10 with an
    orthogonal neighbour of the same value? False for an empty slot and a face-down code."""
    v = g[i]
    if not 0 < v < FACE_DOWN_CODE:
        return False
    r = i // 4
    c = i % 4
    if c > 0 and g[i - 1] == v:
        return True
    if c < 3 and g[i + 1] == v:
        return True
    if r > 0 and g[i - 4] == v:
        return True
    return r < 3 and g[i + 4] == v


@njit(cache=True)
def paired(g: np.ndarray, out: np.ndarray) -> int:
    """``out[i]`` = 1 where the card at slot ``i`` of the grid ``g`` vanishes
    (:func:`vanishes`), else 0; returns how many do."""
    k = 0
    for i in range(SLOTS):
        if vanishes(g, i):  # a branch per case: numba compiles ``1 if ... else 0`` ~6x slower
            out[i] = 1
            k += 1
        else:
            out[i] = 0
    return k


@njit(cache=True)
def grid_points(g: np.ndarray) -> tuple[int, int]:
    """The final scoring of the grid ``g``: (points, cards left) after every card with an equal
    orthogonal neighbour is removed. Face-down codes count as absent, so on an observation's
    grid this is what the face-up cards would score if the game ended now."""
    pts = 0
    cards = 0
    for i in range(SLOTS):
        v = g[i]
        if 0 < v < FACE_DOWN_CODE and not vanishes(g, i):
            pts += v
            cards += 1
    return pts, cards


@njit(cache=True)
def seat_points(state: np.ndarray, seat: int) -> tuple[int, int]:
    """The final scoring of ``seat``'s grid in ``state`` (:func:`grid_points`; the state holds
    every card's true value, face down or not): (points, cards left)."""
    g = GRID + seat * SLOTS
    return grid_points(state[g:g + SLOTS])


@njit(cache=True)
def winning_seats(points: np.ndarray, cards: np.ndarray, n: int, out: np.ndarray) -> None:
    """Slide's winner rule over seats ``0..n-1``: ``out[q]`` = 1 for the seats with the lowest
    points, then the fewest cards left (seats still tied share the win), else 0."""
    key1 = np.empty(n, np.float64)
    key2 = np.empty(n, np.float64)
    for p in range(n):
        key1[p] = -points[p]
        key2[p] = -cards[p]
    winners_by_keys(key1, key2, n, out)
