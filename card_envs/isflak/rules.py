"""Isflak rules as numba kernels over one int32 state array (pure: no PettingZoo, no I/O).

Board: 5 rows x 7 columns, cell ``row*7 + col``. Cards are ids ``suit*13 + rank`` (suits
S, H, D, C; rank 0 ace, 1-9 the numbers 2-10, 10-12 J, Q, K). A seat ``q`` owns the penguin
slots ``q*P .. q*P + P-1`` (``P`` = penguins per player, ``cfg[C_PENG]``); slots keep their
number for the whole game.

State layout (int32 offsets; sized for 16 penguin slots and 6 seats; what every step touches
comes first and fits in 5 cache lines; the whole state is 600 bytes):

| field  | offset | size | meaning                                                        |
|--------|--------|------|----------------------------------------------------------------|
| header | 0      | 8    | shared header (`card_envs.core.kernels`): RNG, CUR, PHASE...   |
| CELL   | 8      | 36   | per cell: bit 0 free (a card without a penguin), bits 1-3      |
|        |        |      | 1 + seat of the penguin on it (0 none), bits 4-8 1 + points of |
|        |        |      | its card (0 = gap); entry 35 is an always-0 sentinel for rays  |
|        |        |      | leaving the board                                              |
| PEN    | 44     | 16   | cell of each penguin slot, -1 = not placed yet / gone          |
| OUT    | 60     | 6    | 1 = the seat is out                                            |
| SCORE  | 66     | 6    | points in the seat's pile                                      |
| PCOUNT | 72     | 6    | cards in the seat's pile                                       |
| PLACED | 78     | 1    | penguins placed so far (placement phase; n*P afterwards)        |
| NTAKEN | 79     | 1    | cards taken so far (all seats)                                 |
| GRID   | 80     | 35   | card id 0-51 on the cell (also under a penguin), -1 = gap      |
| TAKEN  | 115    | 35   | ``seat*64 + card`` for each card taken, in the order of taking  |

``CELL`` is redundant (derived from ``GRID``, ``PEN`` and the card points) and packs what
``legal_mask`` (free cells), ``observe`` (points, owners) and ``step`` need into one small array.
The config array is extended (``Game.configure``) with ``CFG_PTS[card + 1]``: the points of each
card (index 0, a gap: -1).

Phases: 0 placement, 1 movement, 2 end. Actions ``Discrete(35 + 48P)``: ``0-34`` place on cell
``row*7+col``; ``35 + (k*8 + d)*6 + (s-1)`` move penguin slot ``k`` in direction ``d`` (``DIRS``)
by ``s`` cells (1-6).
"""

from __future__ import annotations

import numpy as np

from card_envs.core.jit import njit
from card_envs.core.kernels import (
    C_HEADER,
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

ROWS, COLS = 5, 7
CELLS = ROWS * COLS
DECK = 52
MAX_PLAYERS = 6
MAX_SLOTS = 16  # players x penguins <= 16
NDIR = 8
MAX_DIST = 6
MOVE0 = CELLS
# directions d: (drow, dcol); names in card_envs.isflak.game.DIR_NAMES
DIRS = ((-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1))

# card kinds
K_NUMBER, K_FACE, K_ACE = 1, 2, 3

# config entries (after the shared header)
C_PENG = C_HEADER  # penguins per player
C_PTS_ACE = C_HEADER + 1
C_PTS_FACE = C_HEADER + 2
C_PTS_NUMBER = C_HEADER + 3
# extended config table (after the 8 game entries of the config header)
CFG_PTS = C_HEADER + 8
CFG_SIZE = CFG_PTS + DECK + 1

CELL = HEADER
PEN = CELL + CELLS + 1
OUT = PEN + MAX_SLOTS
SCORE = OUT + MAX_PLAYERS
PCOUNT = SCORE + MAX_PLAYERS
PLACED = PCOUNT + MAX_PLAYERS
NTAKEN = PLACED + 1
GRID = NTAKEN + 1
TAKEN = GRID + CELLS
STATE_SIZE = TAKEN + CELLS
SENTINEL = CELLS  # CELL[SENTINEL] == 0: the cell "beyond the board" is never free
SEAT_SHIFT = 64  # TAKEN entry = seat * 64 + card
# CELL bits
F_FREE = 1
OWN_SHIFT = 1
OWN_MASK = 7
PTS_SHIFT = 4


P_PLACE, P_MOVE, P_END = 0, 1, 2


def _ray_table() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """RAY[(c*8 + d)*6 + s-1]: the cell ``s`` steps from ``c`` in direction ``d`` (``SENTINEL``
    off the board); RAYLEN[c*8 + d]: how many steps stay on the board; BORDER[c]: 1 on the
    border."""
    ray = np.full(CELLS * NDIR * MAX_DIST, SENTINEL, np.int32)
    raylen = np.zeros(CELLS * NDIR, np.int32)
    border = np.zeros(CELLS, np.int32)
    for c in range(CELLS):
        r0, c0 = divmod(c, COLS)
        border[c] = r0 in (0, ROWS - 1) or c0 in (0, COLS - 1)
        for d, (dr, dc) in enumerate(DIRS):
            for s in range(1, MAX_DIST + 1):
                r, cc = r0 + dr * s, c0 + dc * s
                if not (0 <= r < ROWS and 0 <= cc < COLS):
                    break
                ray[(c * NDIR + d) * MAX_DIST + s - 1] = r * COLS + cc
                raylen[c * NDIR + d] = s
    return ray, raylen, border


RAY, RAYLEN, BORDER = _ray_table()
# kind of each card id: rank 0 ace, ranks 10-12 face, else number
KIND = np.array([K_ACE if i % 13 == 0 else (K_FACE if i % 13 >= 10 else K_NUMBER)
                 for i in range(DECK)], np.int32)


def num_actions(peng: int) -> int:
    return CELLS + peng * NDIR * MAX_DIST


def obs_size(n: int, peng: int) -> int:
    """Length of the observation vector for ``n`` seats with ``peng`` penguins each."""
    return 2 * CELLS + n * (peng + 3) + 3


def extend_config(cfg: np.ndarray, ace: int, face: int, number: int) -> np.ndarray:
    """The config array with the card-points table of the layout docstring appended."""
    out = np.zeros(CFG_SIZE, np.int32)
    out[:cfg.shape[0]] = cfg
    out[CFG_PTS] = -1
    for card in range(DECK):
        k = KIND[card]
        out[CFG_PTS + card + 1] = ace if k == K_ACE else (face if k == K_FACE else number)
    return out


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
        a = MOVE0 + k * NDIR * MAX_DIST
        r = pos * NDIR * MAX_DIST
        for j0 in range(0, NDIR * MAX_DIST, MAX_DIST):
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
        r = pos * NDIR * MAX_DIST
        for j0 in range(0, NDIR * MAX_DIST, MAX_DIST):
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


@njit(cache=True)
def step(state: np.ndarray, cfg: np.ndarray, action: int, rewards: np.ndarray) -> int:
    """Apply a legal action of the seat to act. Returns ST_* status bits; ``rewards[:n]`` is
    written when ST_REWARD is set (only at the end of the game)."""
    n = cfg[C_PLAYERS]
    peng = cfg[C_PENG]
    p = state[CUR]
    state[STEPS] += 1
    nxt = p + 1 if p + 1 < n else 0
    if state[PHASE] == P_PLACE:
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
    a = action - MOVE0
    slot = p * peng + a // (NDIR * MAX_DIST)
    frm = state[PEN + slot]
    to = RAY[frm * NDIR * MAX_DIST + a % (NDIR * MAX_DIST)]
    take(state, p, frm)
    state[CELL + to] += ((p + 1) << OWN_SHIFT) - F_FREE  # free -> owned by p
    state[PEN + slot] = to
    return advance(state, cfg, nxt, rewards)


@njit(cache=True)
def observe(state: np.ndarray, cfg: np.ndarray, seat: int, obs: np.ndarray) -> None:
    """Write ``seat``'s observation (layout in ``card_envs.isflak.env``); seats are relative,
    the observer first. Everything is public."""
    n = cfg[C_PLAYERS]
    peng = cfg[C_PENG]
    for c in range(CELLS):
        x = state[CELL + c]
        obs[c] = (x >> PTS_SHIFT) - 1
        o = (x >> OWN_SHIFT) & OWN_MASK  # owner seat + 1 -> 1 + relative seat; 0 stays 0
        obs[CELLS + c] = rel_seat(o - 1, seat, n) + 1 if o else 0
    j = 2 * CELLS
    q = seat
    for _ in range(n):
        for k in range(peng):
            obs[j] = state[PEN + q * peng + k]
            j += 1
        obs[j] = state[OUT + q]
        obs[j + 1] = state[SCORE + q]
        obs[j + 2] = state[PCOUNT + q]
        j += 3
        q = q + 1 if q + 1 < n else 0
    obs[j] = state[PHASE]
    obs[j + 1] = rel_seat(state[CUR], seat, n)
    obs[j + 2] = state[PLACED]
