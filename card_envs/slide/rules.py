"""Slide rules as numba kernels over one int32 state array (pure: no PettingZoo, no I/O).

The kernel protocol (``card_envs.core.game``): :func:`init`, :func:`legal_mask`, :func:`step`
and :func:`outcome` (here; the observation kernel is ``card_envs.slide.observe``). The state
layout, phases and action encoding are in ``card_envs.slide.layout``; the grid rules (the
push, the allowed sides, the final scoring, the winners) are queries of
``card_envs.slide.queries``; the rules for players are ``docs/rules/slide.md``.
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
    DONE_TERMINATED,
    PHASE,
    ST_DONE,
    ST_REWARD,
    STEPS,
    rng_int,
    shuffle_prefix,
    terminal_rewards,
)
from card_envs.slide.layout import (
    COPIES,
    FACE,
    FIRST,
    GRID,
    MAX_PLAYERS,
    MID,
    NUM_VALUES,
    P_END,
    P_PICK,
    P_REVEAL,
    PICK0,
    REVEAL,
    ROUND,
    ROUNDS,
    SLOTS,
    STATE_SIZE,
)
from card_envs.slide.queries import seat_points, shift_in, side_ok, winning_seats

__all__ = ["init", "legal_mask", "outcome", "push", "step"]


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
def push(state: np.ndarray, seat: int, empty: int, side: int, value: int) -> None:
    """Push ``value`` (face up) into ``seat``'s grid from ``side``; shifted cards keep their
    face."""
    shift_in(state, GRID + seat * SLOTS, empty, side, value)
    shift_in(state, FACE + seat * SLOTS, empty, side, 1)


@njit(cache=True)
def step(state: np.ndarray, cfg: np.ndarray, action: int, rewards: np.ndarray) -> int:
    """Apply a legal action of the seat to act. Returns ST_* status bits; ``rewards[:n]`` is
    written when ST_REWARD is set (only at the end of the game)."""
    state[STEPS] += 1
    if state[PHASE] == P_REVEAL:
        return _step_reveal(state, cfg, action)
    return _step_pick(state, cfg, action, rewards)


@njit(cache=True, inline="always")
def _pass_turn(state: np.ndarray, p: int, n: int) -> bool:
    """Seat ``p`` has acted: the next seat in order acts (True), unless it holds the
    first-player token, i.e. every seat has acted in this phase (False, nothing changed)."""
    nxt = (p + 1) % n
    if nxt != state[FIRST]:
        state[CUR] = nxt
        return True
    return False


@njit(cache=True, inline="always")
def _step_reveal(state: np.ndarray, cfg: np.ndarray, action: int) -> int:
    """The seat to act chooses face-down slot ``action``; after the last seat, every chosen
    card goes face up to the middle and the pick phase starts."""
    n = cfg[C_PLAYERS]
    p = state[CUR]
    state[REVEAL + p] = action
    if _pass_turn(state, p, n):
        return 0
    for q in range(n):  # everyone has chosen: all picked cards go face up to the middle
        s = GRID + q * SLOTS + state[REVEAL + q]
        state[MID + state[s] - 1] += 1
        state[s] = 0
    state[PHASE] = P_PICK
    state[CUR] = state[FIRST]
    return 0


@njit(cache=True, inline="always")
def _step_pick(state: np.ndarray, cfg: np.ndarray, action: int, rewards: np.ndarray) -> int:
    """The seat to act takes a value from the middle and pushes it in from a side; after the
    last seat the round ends (or, after round 15, the game)."""
    n = cfg[C_PLAYERS]
    p = state[CUR]
    a = action - PICK0
    v = a // 4
    state[MID + v] -= 1
    push(state, p, state[REVEAL + p], a % 4, v + 1)
    if _pass_turn(state, p, n):
        return 0
    if state[ROUND] + 1 < ROUNDS:
        _next_round(state, n)
        return 0
    return _finish(state, cfg, rewards)


@njit(cache=True, inline="always")
def _next_round(state: np.ndarray, n: int) -> None:
    """The round is over: the first-player token passes to the left, a reveal phase starts."""
    state[ROUND] += 1
    state[FIRST] = nxt = (state[FIRST] + 1) % n
    state[CUR] = nxt
    state[PHASE] = P_REVEAL
    for q in range(MAX_PLAYERS):
        state[REVEAL + q] = -1


@njit(cache=True)
def _finish(state: np.ndarray, cfg: np.ndarray, rewards: np.ndarray) -> int:
    """End the game after the last pick of round 15: score the grids, write the rewards."""
    n = cfg[C_PLAYERS]
    state[CUR] = -1
    state[PHASE] = P_END
    state[DONE] = DONE_TERMINATED
    points = np.empty(n, np.float64)
    winners = np.empty(n, np.int64)
    outcome(state, cfg, points, winners)
    for q in range(n):
        points[q] = -points[q]
    terminal_rewards(cfg[C_REWARD], points, winners, n, rewards)
    return ST_DONE | ST_REWARD


@njit(cache=True)
def outcome(state: np.ndarray, cfg: np.ndarray, points: np.ndarray,
            winners: np.ndarray) -> None:
    """Final points per seat (lower is better) and the winners (lowest points, then fewest
    cards, then a shared win)."""
    n = cfg[C_PLAYERS]
    cards = np.empty(n, np.float64)
    for p in range(n):
        pts, left = seat_points(state, p)
        points[p] = pts
        cards[p] = left
    winning_seats(points, cards, n, winners)
