"""Slide rules as numba kernels over one int32 state array (pure: no PettingZoo, no I/O).

State layout (int32 offsets, sized for the maximum of 6 seats):

| field  | offset      | size | meaning                                                      |
|--------|-------------|------|--------------------------------------------------------------|
| header | 0           | 8    | shared header (`card_envs.core.kernels`): RNG, CUR, PHASE... |
| GRID   | 8           | 96   | seat*16 + row*4 + col: value 1-10, 0 = empty slot            |
| FACE   | 104         | 96   | 1 = face up, 0 = face down                                   |
| MID    | 200         | 10   | count of each value 1-10 in the middle                       |
| ROUND  | 210         | 1    | 0-15                                                         |
| FIRST  | 211         | 1    | seat holding the first-player token                          |
| REVEAL | 212         | 6    | slot chosen this reveal phase per seat, -1 = not yet         |

Phases: 0 reveal, 1 pick, 2 end. Actions: ``Discrete(56)``: ``0-15`` reveal slot
``row*4+col``; ``16 + (value-1)*4 + side`` pick ``value`` and push it in from ``side``
(0 left, 1 right, 2 top, 3 bottom).
"""

from __future__ import annotations

import numpy as np

from card_envs.core.jit import njit
from card_envs.core.kernels import (
    C_PLAYERS,
    C_REWARD,
    C_START,
    CUR,
    DONE,
    HEADER,
    PHASE,
    ST_DONE,
    ST_REWARD,
    STEPS,
    rel_seat,
    rng_int,
    shuffle_prefix,
    terminal_rewards,
    winners_by_keys,
)

MAX_PLAYERS = 6
NUM_VALUES = 10
COPIES = 10
SLOTS = 16
ROUNDS = 16
NUM_ACTIONS = 56
PICK0 = 16
LEFT, RIGHT, TOP, BOTTOM = 0, 1, 2, 3

GRID = HEADER
FACE = GRID + MAX_PLAYERS * SLOTS
MID = FACE + MAX_PLAYERS * SLOTS
ROUND = MID + NUM_VALUES
FIRST = ROUND + 1
REVEAL = FIRST + 1
STATE_SIZE = REVEAL + MAX_PLAYERS

P_REVEAL, P_PICK, P_END = 0, 1, 2
FACE_DOWN_CODE = 11  # observation code of a face-down card


def obs_size(n: int) -> int:
    """Length of the observation vector for ``n`` seats."""
    return SLOTS * n + 2 * NUM_VALUES + 5


@njit(cache=True)
def init(state: np.ndarray, cfg: np.ndarray) -> None:
    """Deal a new game using the RNG already stored in the state header."""
    n = cfg[C_PLAYERS]
    deck = np.empty(NUM_VALUES * COPIES, np.int32)
    for i in range(deck.shape[0]):
        deck[i] = i // COPIES + 1
    shuffle_prefix(state, deck, SLOTS * n)
    for i in range(GRID, STATE_SIZE):
        state[i] = 0
    for i in range(SLOTS * n):
        state[GRID + i] = deck[i]
    first = cfg[C_START]
    if first < 0:
        first = rng_int(state, n)
    state[FIRST] = first
    for p in range(MAX_PLAYERS):
        state[REVEAL + p] = -1
    state[CUR] = first
    state[PHASE] = P_REVEAL
    state[DONE] = 0
    state[STEPS] = 0


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
    return r != 3


@njit(cache=True)
def legal_mask(state: np.ndarray, cfg: np.ndarray, mask: np.ndarray) -> None:
    """Write the int8 legal-action mask of the seat to act (all 0 once the game is over)."""
    mask[:] = 0
    if state[DONE]:
        return
    p = state[CUR]
    base = p * SLOTS
    if state[PHASE] == P_REVEAL:
        for s in range(SLOTS):
            if state[FACE + base + s] == 0 and state[GRID + base + s] > 0:
                mask[s] = 1
        return
    empty = state[REVEAL + p]
    for v in range(NUM_VALUES):
        if state[MID + v] > 0:
            for side in range(4):
                if side_ok(empty, side):
                    mask[PICK0 + v * 4 + side] = 1


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
    else:
        for k in range(r, 3):
            a[base + k * 4 + c] = a[base + (k + 1) * 4 + c]
        a[base + 12 + c] = value


@njit(cache=True)
def push(state: np.ndarray, seat: int, empty: int, side: int, value: int) -> None:
    """Push ``value`` (face up) into ``seat``'s grid from ``side``; shifted cards keep their
    face."""
    shift_in(state, GRID + seat * SLOTS, empty, side, value)
    shift_in(state, FACE + seat * SLOTS, empty, side, 1)


@njit(cache=True)
def grid_points(state: np.ndarray, seat: int) -> tuple[int, int]:
    """Final scoring of one grid: (points, cards left) after every card with an equal
    orthogonal neighbour is removed."""
    g = GRID + seat * SLOTS
    pts = 0
    cards = 0
    for r in range(4):
        for c in range(4):
            v = state[g + r * 4 + c]
            if v == 0:
                continue
            paired = (
                (c > 0 and state[g + r * 4 + c - 1] == v)
                or (c < 3 and state[g + r * 4 + c + 1] == v)
                or (r > 0 and state[g + (r - 1) * 4 + c] == v)
                or (r < 3 and state[g + (r + 1) * 4 + c] == v)
            )
            if not paired:
                pts += v
                cards += 1
    return pts, cards


@njit(cache=True)
def outcome(state: np.ndarray, cfg: np.ndarray, points: np.ndarray,
            winners: np.ndarray) -> None:
    """Final points per seat (lower is better) and the winners (lowest points, then fewest
    cards, then a shared win)."""
    n = cfg[C_PLAYERS]
    key1 = np.empty(n, np.float64)
    key2 = np.empty(n, np.float64)
    for p in range(n):
        pts, cards = grid_points(state, p)
        points[p] = pts
        key1[p] = -pts
        key2[p] = -cards
    winners_by_keys(key1, key2, n, winners)


@njit(cache=True)
def step(state: np.ndarray, cfg: np.ndarray, action: int, rewards: np.ndarray) -> int:
    """Apply a legal action of the seat to act. Returns ST_* status bits; ``rewards[:n]`` is
    written when ST_REWARD is set (only at the end of the game)."""
    n = cfg[C_PLAYERS]
    p = state[CUR]
    state[STEPS] += 1
    if state[PHASE] == P_REVEAL:
        state[REVEAL + p] = action
        nxt = (p + 1) % n
        if nxt != state[FIRST]:
            state[CUR] = nxt
            return 0
        for q in range(n):  # everyone has chosen: all picked cards go face up to the middle
            s = GRID + q * SLOTS + state[REVEAL + q]
            state[MID + state[s] - 1] += 1
            state[s] = 0
        state[PHASE] = P_PICK
        state[CUR] = state[FIRST]
        return 0
    a = action - PICK0
    v = a // 4
    state[MID + v] -= 1
    push(state, p, state[REVEAL + p], a % 4, v + 1)
    nxt = (p + 1) % n
    if nxt != state[FIRST]:
        state[CUR] = nxt
        return 0
    if state[ROUND] + 1 < ROUNDS:  # the round is over: the token passes to the left
        state[ROUND] += 1
        state[FIRST] = nxt = (state[FIRST] + 1) % n
        state[CUR] = nxt
        state[PHASE] = P_REVEAL
        for q in range(MAX_PLAYERS):
            state[REVEAL + q] = -1
        return 0
    state[CUR] = -1
    state[PHASE] = P_END
    state[DONE] = 1
    points = np.empty(n, np.float64)
    winners = np.empty(n, np.int64)
    outcome(state, cfg, points, winners)
    for q in range(n):
        points[q] = -points[q]
    terminal_rewards(cfg[C_REWARD], points, winners, n, rewards)
    return ST_DONE | ST_REWARD


@njit(cache=True)
def observe(state: np.ndarray, cfg: np.ndarray, seat: int, obs: np.ndarray) -> None:
    """Write ``seat``'s observation (layout in ``card_envs.slide.env``); seats are relative,
    the observer first. Face-down cards and other seats' pending reveals are not shown."""
    n = cfg[C_PLAYERS]
    mid = SLOTS * n
    uns = mid + NUM_VALUES
    for v in range(NUM_VALUES):
        m = state[MID + v]
        obs[mid + v] = m
        obs[uns + v] = COPIES - m
    k = 0
    q = seat
    for _ in range(n):
        g = GRID + q * SLOTS
        f = FACE + q * SLOTS
        for s in range(SLOTS):
            v = state[g + s]
            if v == 0:
                obs[k] = 0
            elif state[f + s]:
                obs[k] = v
                obs[uns + v - 1] -= 1
            else:
                obs[k] = FACE_DOWN_CODE
            k += 1
        q = q + 1 if q + 1 < n else 0
    t = uns + NUM_VALUES
    obs[t] = state[PHASE]
    obs[t + 1] = state[ROUND]
    obs[t + 2] = rel_seat(state[FIRST], seat, n)
    obs[t + 3] = rel_seat(state[CUR], seat, n)
    obs[t + 4] = state[REVEAL + seat] if state[PHASE] == P_REVEAL else -1
