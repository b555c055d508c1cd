"""Flipology end scoring (numba): points per seat, the Moon, the species tie-break."""

from __future__ import annotations

import numpy as np

from card_envs.core.jit import njit
from card_envs.core.kernels import C_PLAYERS, winners_by_keys
from card_envs.flipology.layout import (
    BONUS,
    FACE,
    G_SEATPOS,
    KOALA,
    MOON,
    POS,
    RED_PANDA,
    SLOTH,
    T_KIND,
    T_PTS,
)


@njit(cache=True)
def seat_points(state: np.ndarray, cfg: np.ndarray, s: int) -> int:
    """End points of seat ``s``: face-up cards, minus face-up Sloths/Koalas, plus face-down
    Sloths/Koalas, plus Hermit crab picks."""
    sp = cfg[G_SEATPOS]
    tot = state[BONUS + s]
    for p in range(s * sp, s * sp + sp):
        c = state[POS + p]
        if c < 0:
            continue
        k = cfg[T_KIND + c]
        v = cfg[T_PTS + c]
        if k == SLOTH or k == KOALA:
            tot += -v if state[FACE + p] else v
        elif state[FACE + p]:
            tot += v
    return tot


@njit(cache=True)
def public_score(state: np.ndarray, cfg: np.ndarray, s: int) -> int:
    """Score from public information only: face-up cards (Sloths/Koalas negative), face-down
    cards 0, Hermit crab picks."""
    sp = cfg[G_SEATPOS]
    tot = state[BONUS + s]
    for p in range(s * sp, s * sp + sp):
        c = state[POS + p]
        if c < 0 or state[FACE + p] == 0:
            continue
        k = cfg[T_KIND + c]
        v = cfg[T_PTS + c]
        tot += -v if (k == SLOTH or k == KOALA) else v
    return tot


@njit(cache=True)
def species_count(state: np.ndarray, cfg: np.ndarray, s: int) -> int:
    """Distinct face-up animal species (kind and points) in seat ``s``'s row(s)."""
    sp = cfg[G_SEATPOS]
    cnt = 0
    for p in range(s * sp, s * sp + sp):
        c = state[POS + p]
        if c < 0 or state[FACE + p] == 0 or cfg[T_KIND + c] > RED_PANDA:
            continue
        k = cfg[T_KIND + c]
        v = cfg[T_PTS + c]
        new = True
        for r in range(s * sp, p):
            d = state[POS + r]
            if d >= 0 and state[FACE + r] and cfg[T_KIND + d] == k and cfg[T_PTS + d] == v:
                new = False
                break
        if new:
            cnt += 1
    return cnt


@njit(cache=True)
def moon_up(state: np.ndarray, cfg: np.ndarray) -> bool:
    """The Moon lies face up in some row (then the lowest score wins)."""
    npos = cfg[C_PLAYERS] * cfg[G_SEATPOS]
    for p in range(npos):
        c = state[POS + p]
        if c >= 0 and state[FACE + p] and cfg[T_KIND + c] == MOON:
            return True
    return False


@njit(cache=True)
def game_result(state: np.ndarray, cfg: np.ndarray, points: np.ndarray,
                winners: np.ndarray) -> bool:
    """Points per seat and winners of the current game; returns whether the Moon is up
    (then the lowest score wins)."""
    n = cfg[C_PLAYERS]
    moon = moon_up(state, cfg)
    key1 = np.empty(n, np.float64)
    key2 = np.empty(n, np.float64)
    for s in range(n):
        v = seat_points(state, cfg, s)
        points[s] = v
        key1[s] = -v if moon else v
        key2[s] = species_count(state, cfg, s)
    winners_by_keys(key1, key2, n, winners)
    return moon
