"""Isflak rules as numba kernels over one int32 state array (pure: no PettingZoo, no I/O).

The state, config, action and observation layout is in :mod:`card_envs.isflak.layout` (its
docstring has the table), the ray tables in :mod:`card_envs.isflak.parts.board`, the card kinds
in :mod:`card_envs.isflak.parts.deck`; the board rules the heuristic and the features share
(how far a penguin slides, where a move takes it, who wins) are the queries of
:mod:`card_envs.isflak.queries`. The observation kernel is :mod:`card_envs.isflak.observe`. The
rules: ``docs/rules/isflak.md``.

``step`` reads the phase and hands the action to ``_step_placement`` or ``_step_movement``;
both end with ``advance`` (the next seat that can move; seats that cannot go out; the end).
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
    PHASE,
    ST_DONE,
    ST_REWARD,
    STEPS,
    rng_int,
    shuffle_prefix,
    terminal_rewards,
)
from card_envs.isflak.layout import (
    C_PENG,
    CELL,
    CELLS,
    CFG_PTS,
    DECK,
    F_FREE,
    GRID,
    K_FACE,
    K_NUMBER,
    MAX_DIST,
    MAX_SLOTS,
    MOVE0,
    MOVES_PER_PENGUIN,
    NDIR,
    NTAKEN,
    OUT,
    P_END,
    P_MOVE,
    P_PLACE,
    PCOUNT,
    PEN,
    PLACED,
    SCORE,
    SEAT_SHIFT,
    STATE_SIZE,
    TAKEN,
)
from card_envs.isflak.parts.board import BORDER, RAY
from card_envs.isflak.parts.deck import KIND
from card_envs.isflak.queries import (
    cell_code,
    cell_points,
    find_winners,
    move_slot,
    move_target,
    occupy,
    slide,
)

__all__ = ["init", "legal_mask", "place_mask", "can_move", "take", "go_out", "outcome",
           "advance", "step"]


@njit(cache=True)
def init(state: np.ndarray, cfg: np.ndarray) -> None:
    """Deal a new game using the RNG already stored in the state header."""
    n = cfg[C_PLAYERS]
    deck = np.empty(DECK, np.int32)
    for i in range(DECK):
        deck[i] = i
    shuffle_prefix(state, deck, CELLS)
    for i in range(CELL, STATE_SIZE):
        state[i] = 0
    for c in range(CELLS):
        card = deck[c]
        state[GRID + c] = card
        state[CELL + c] = cell_code(cfg[CFG_PTS + card + 1], 0)
    for k in range(MAX_SLOTS):
        state[PEN + k] = -1
    first = cfg[C_START]
    if first < 0:
        first = rng_int(state, n)
    state[CUR] = first
    state[PHASE] = P_PLACE
    state[DONE] = 0
    state[STEPS] = 0


@njit(cache=True, inline="always")
def place_mask(state: np.ndarray, mask: np.ndarray) -> None:
    """Placement: free border cards; number cards if any is free, else face cards."""
    found = False
    for c in range(CELLS):
        if BORDER[c] and state[CELL + c] & F_FREE and KIND[state[GRID + c]] == K_NUMBER:
            mask[c] = 1
            found = True
    if found:
        return
    for c in range(CELLS):
        if BORDER[c] and state[CELL + c] & F_FREE and KIND[state[GRID + c]] == K_FACE:
            mask[c] = 1


@njit(cache=True)
def legal_mask(state: np.ndarray, cfg: np.ndarray, mask: np.ndarray) -> None:
    """Write the int8 legal-action mask of the seat to act (all 0 once the game is over).

    Movement: each penguin slides in each direction as far as the query ``slide`` says (over
    the free bits of ``CELL``; the off-board sentinel is 0)."""
    for i in range(mask.shape[0]):
        mask[i] = 0
    if state[DONE]:
        return
    if state[PHASE] == P_PLACE:
        place_mask(state, mask)
        return
    peng = cfg[C_PENG]
    base = state[CUR] * peng
    for k in range(peng):
        pos = state[PEN + base + k]
        if pos < 0:
            continue
        a = MOVE0 + k * MOVES_PER_PENGUIN
        for d in range(NDIR):
            n = slide(state, pos, d, CELL)
            for s in range(MAX_DIST):  # s < n (a fixed bound compiles to faster code)
                if s == n:
                    break
                mask[a + s] = 1
            a += MAX_DIST


@njit(cache=True, inline="always")
def can_move(state: np.ndarray, cfg: np.ndarray, seat: int) -> bool:
    """Has ``seat`` a penguin with a free card next to it (in any of the 8 directions)?"""
    peng = cfg[C_PENG]
    base = seat * peng
    for k in range(peng):
        pos = state[PEN + base + k]
        if pos < 0:
            continue
        r = pos * MOVES_PER_PENGUIN
        for j0 in range(0, MOVES_PER_PENGUIN, MAX_DIST):
            if state[CELL + RAY[r + j0]] & F_FREE:
                return True
    return False


@njit(cache=True, inline="always")
def take(state: np.ndarray, seat: int, cell: int) -> None:
    """Move the card on ``cell`` into ``seat``'s pile; the cell becomes a gap (``CELL`` 0, so a
    penguin on it leaves the cell; the caller updates ``PEN``)."""
    i = state[NTAKEN]
    state[TAKEN + i] = seat * SEAT_SHIFT + state[GRID + cell]
    state[NTAKEN] = i + 1
    state[PCOUNT + seat] += 1
    state[SCORE + seat] += cell_points(state, CELL + cell)
    state[GRID + cell] = -1
    state[CELL + cell] = 0


@njit(cache=True, inline="always")
def go_out(state: np.ndarray, cfg: np.ndarray, seat: int) -> None:
    """``seat`` leaves: it banks the cards under its penguins (slot order), which leave."""
    peng = cfg[C_PENG]
    for k in range(seat * peng, seat * peng + peng):
        pos = state[PEN + k]
        if pos >= 0:
            take(state, seat, pos)
            state[PEN + k] = -1
    state[OUT + seat] = 1


@njit(cache=True)
def outcome(state: np.ndarray, cfg: np.ndarray, points: np.ndarray,
            winners: np.ndarray) -> None:
    """Final points per seat and the winners (:func:`~card_envs.isflak.queries.find_winners`:
    most points, then most cards, else shared)."""
    n = cfg[C_PLAYERS]
    key2 = np.empty(n, np.float64)
    for p in range(n):
        points[p] = state[SCORE + p]
        key2[p] = state[PCOUNT + p]
    find_winners(points, key2, n, winners)


@njit(cache=True, inline="always")
def advance(state: np.ndarray, cfg: np.ndarray, first: int, rewards: np.ndarray) -> int:
    """Give the turn to the first seat from ``first`` on (clockwise) that can move; seats that
    cannot move on their turn go out. If everyone is out the game ends."""
    n = cfg[C_PLAYERS]
    q = first
    for _ in range(n):
        if not state[OUT + q]:
            if can_move(state, cfg, q):
                state[CUR] = q
                return 0
            go_out(state, cfg, q)
        q = q + 1 if q + 1 < n else 0
    state[CUR] = -1
    state[PHASE] = P_END
    state[DONE] = 1
    points = np.empty(n, np.float64)
    winners = np.empty(n, np.int64)
    outcome(state, cfg, points, winners)
    terminal_rewards(cfg[C_REWARD], points, winners, n, rewards)
    return ST_DONE | ST_REWARD


@njit(cache=True, inline="always")
def _step_placement(state: np.ndarray, cfg: np.ndarray, p: int, nxt: int, action: int,
                    rewards: np.ndarray) -> int:
    """Seat ``p`` puts its next penguin (slot ``placed // n``) on cell ``action``; after the
    ``n*P``-th placement the movement starts with the seat after the last placer (the start
    player)."""
    n = cfg[C_PLAYERS]
    peng = cfg[C_PENG]
    placed = state[PLACED]
    slot = p * peng + placed // n
    state[PEN + slot] = action
    occupy(state, CELL + action, p + 1)  # free -> owned by p
    placed += 1
    state[PLACED] = placed
    if placed < n * peng:
        state[CUR] = nxt
        return 0
    state[PHASE] = P_MOVE  # n*P placements: the start player is next again
    return advance(state, cfg, nxt, rewards)


@njit(cache=True, inline="always")
def _step_movement(state: np.ndarray, cfg: np.ndarray, p: int, nxt: int, action: int,
                   rewards: np.ndarray) -> int:
    """Seat ``p`` slides a penguin along a ray; it takes the card the penguin left."""
    slot = p * cfg[C_PENG] + move_slot(action)
    frm = state[PEN + slot]
    to = move_target(frm, action)
    take(state, p, frm)
    occupy(state, CELL + to, p + 1)  # free -> owned by p
    state[PEN + slot] = to
    return advance(state, cfg, nxt, rewards)


@njit(cache=True)
def step(state: np.ndarray, cfg: np.ndarray, action: int, rewards: np.ndarray) -> int:
    """Apply a legal action of the seat to act. Returns ST_* status bits; ``rewards[:n]`` is
    written when ST_REWARD is set (only at the end of the game)."""
    n = cfg[C_PLAYERS]
    p = state[CUR]
    state[STEPS] += 1
    nxt = p + 1 if p + 1 < n else 0
    if state[PHASE] == P_PLACE:
        return _step_placement(state, cfg, p, nxt, action, rewards)
    return _step_movement(state, cfg, p, nxt, action, rewards)
