"""Isflak rules as numba kernels over one int32 state array (pure: no PettingZoo, no I/O).

The state, config, action and observation layout is in :mod:`card_envs.isflak.layout` (its
docstring has the table), the ray tables in :mod:`card_envs.isflak.board`, the card kinds and
the card-points config table in :mod:`card_envs.isflak.deck`. The rules: ``docs/rules/isflak.md``.

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
    rel_seat,
    rng_int,
    shuffle_prefix,
    terminal_rewards,
    winners_by_keys,
)

# the layout names are re-exported: ``from card_envs.isflak.rules import X`` keeps working
from card_envs.isflak.board import BORDER, RAY, RAYLEN
from card_envs.isflak.deck import KIND, extend_config
from card_envs.isflak.layout import (
    C_PENG,
    C_PTS_ACE,
    C_PTS_FACE,
    C_PTS_NUMBER,
    CELL,
    CELLS,
    CFG_PTS,
    CFG_SIZE,
    COLS,
    DECK,
    DIRS,
    F_FREE,
    GRID,
    K_ACE,
    K_FACE,
    K_NUMBER,
    MAX_DIST,
    MAX_PLAYERS,
    MAX_SLOTS,
    MOVE0,
    MOVES_PER_PENGUIN,
    NDIR,
    NTAKEN,
    OBS_OWNER,
    OBS_POINTS,
    OBS_SEATS,
    OUT,
    OWN_MASK,
    OWN_SHIFT,
    P_END,
    P_MOVE,
    P_PLACE,
    PCOUNT,
    PEN,
    PLACED,
    PTS_SHIFT,
    ROWS,
    SCORE,
    SEAT_CARDS,
    SEAT_FIELDS,
    SEAT_OUT,
    SEAT_SCORE,
    SEAT_SHIFT,
    SENTINEL,
    STATE_SIZE,
    T_PHASE,
    T_PLACED,
    T_TO_ACT,
    TAKEN,
    num_actions,
    obs_size,
)

__all__ = [  # kernels, then the names re-exported from layout, board and deck
    "init", "legal_mask", "place_mask", "can_move", "take", "go_out", "outcome", "advance",
    "step", "observe",
    "BORDER", "RAY", "RAYLEN", "KIND", "extend_config", "num_actions", "obs_size",
    "ROWS", "COLS", "CELLS", "DECK", "MAX_PLAYERS", "MAX_SLOTS", "NDIR", "MAX_DIST", "MOVE0",
    "DIRS", "K_NUMBER", "K_FACE", "K_ACE", "C_PENG", "C_PTS_ACE", "C_PTS_FACE",
    "C_PTS_NUMBER", "CFG_PTS", "CFG_SIZE", "CELL", "PEN", "OUT", "SCORE", "PCOUNT", "PLACED",
    "NTAKEN", "GRID", "TAKEN", "STATE_SIZE", "SENTINEL", "SEAT_SHIFT", "F_FREE", "OWN_SHIFT",
    "OWN_MASK", "PTS_SHIFT", "P_PLACE", "P_MOVE", "P_END",
]


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
        state[CELL + c] = F_FREE | ((cfg[CFG_PTS + card + 1] + 1) << PTS_SHIFT)
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

    Movement: a ray per penguin and direction over the free bits of ``CELL`` (the off-board
    sentinel is 0)."""
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
        r = pos * MOVES_PER_PENGUIN
        for j0 in range(0, MOVES_PER_PENGUIN, MAX_DIST):
            for s in range(MAX_DIST):
                if (state[CELL + RAY[r + j0 + s]] & F_FREE) == 0:
                    break
                mask[a + j0 + s] = 1


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
    state[SCORE + seat] += (state[CELL + cell] >> PTS_SHIFT) - 1
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
    """Final points per seat and the winners (most points, then most cards, else shared)."""
    n = cfg[C_PLAYERS]
    key2 = np.empty(n, np.float64)
    for p in range(n):
        points[p] = state[SCORE + p]
        key2[p] = state[PCOUNT + p]
    winners_by_keys(points, key2, n, winners)


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
    state[CELL + action] += ((p + 1) << OWN_SHIFT) - F_FREE  # free -> owned by p
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
    peng = cfg[C_PENG]
    a = action - MOVE0
    slot = p * peng + a // MOVES_PER_PENGUIN
    frm = state[PEN + slot]
    to = RAY[frm * MOVES_PER_PENGUIN + a % MOVES_PER_PENGUIN]
    take(state, p, frm)
    state[CELL + to] += ((p + 1) << OWN_SHIFT) - F_FREE  # free -> owned by p
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


@njit(cache=True)
def observe(state: np.ndarray, cfg: np.ndarray, seat: int, obs: np.ndarray) -> None:
    """Write ``seat``'s observation (layout in ``card_envs.isflak.env``); seats are relative,
    the observer first. Everything is public."""
    n = cfg[C_PLAYERS]
    peng = cfg[C_PENG]
    for c in range(CELLS):
        x = state[CELL + c]
        obs[OBS_POINTS + c] = (x >> PTS_SHIFT) - 1
        o = (x >> OWN_SHIFT) & OWN_MASK  # owner seat + 1 -> 1 + relative seat; 0 stays 0
        obs[OBS_OWNER + c] = rel_seat(o - 1, seat, n) + 1 if o else 0
    j = OBS_SEATS
    q = seat
    for _ in range(n):
        for k in range(peng):
            obs[j] = state[PEN + q * peng + k]
            j += 1
        obs[j + SEAT_OUT] = state[OUT + q]
        obs[j + SEAT_SCORE] = state[SCORE + q]
        obs[j + SEAT_CARDS] = state[PCOUNT + q]
        j += SEAT_FIELDS
        q = q + 1 if q + 1 < n else 0
    obs[j + T_PHASE] = state[PHASE]
    obs[j + T_TO_ACT] = rel_seat(state[CUR], seat, n)
    obs[j + T_PLACED] = state[PLACED]
