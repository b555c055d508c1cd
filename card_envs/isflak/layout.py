"""Isflak's state, config, action and observation layout: the constants every module imports.

Board: 5 rows x 7 columns, cell ``row*7 + col``. Cards are ids ``suit*13 + rank`` (suits
``SUITS`` = S, H, D, C; rank 0 ace, 1-9 the numbers 2-10, 10-12 J, Q, K: ``RANKS``). A seat ``q``
owns the penguin slots ``q*P .. q*P + P-1`` (``P`` = penguins per player, ``cfg[C_PENG]``);
slots keep their number for the whole game.

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
The config array is extended (``IsflakGame.configure`` in ``card_envs.isflak.game``) with
``CFG_PTS[card + 1]``: the points of each card (index 0, a gap: -1).

Phases ``P_PLACE`` 0 placement, ``P_MOVE`` 1 movement, ``P_END`` 2 end. Actions
``Discrete(35 + 48P)``: ``0-34`` place on cell ``row*7+col``; ``MOVE0 + (k*8 + d)*6 + (s-1)``
move penguin slot ``k`` in direction ``d`` (``DIRS``, ``DIR_NAMES``) by ``s`` cells (1-6).

Observation (``obs_size(n, P)`` entries; the table is in ``card_envs.isflak.env``): ``OBS_POINTS``
(35 card points, -1 gap), ``OBS_OWNER`` (35 owner codes: 0 none, 1 + relative seat), then a
block of ``P + SEAT_FIELDS`` per relative seat ``i`` from ``obs_seat(i, P)`` (the P slot cells,
then ``SEAT_OUT``, ``SEAT_SCORE``, ``SEAT_CARDS`` after the slots), then the ``OBS_TAIL`` entries
from ``obs_tail(n, P)``: ``T_PHASE``, ``T_TO_ACT`` (relative, -1 at the end), ``T_PLACED``.
"""

from __future__ import annotations

from card_envs.core.kernels import C_HEADER, HEADER

# --- board and cards -------------------------------------------------------------------------
ROWS, COLS = 5, 7
CELLS = ROWS * COLS
DECK = 52
RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS = ("S", "H", "D", "C")
MAX_PLAYERS = 6
MAX_SLOTS = 16  # players x penguins <= 16
# card kinds
K_NUMBER, K_FACE, K_ACE = 1, 2, 3

# --- actions ---------------------------------------------------------------------------------
NDIR = 8
MAX_DIST = 6
MOVES_PER_PENGUIN = NDIR * MAX_DIST  # 48 movement actions per penguin slot
MOVE0 = CELLS  # first movement action; 0..CELLS-1 are the placements
# directions d: (drow, dcol)
DIRS = ((-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1))
DIR_NAMES = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")

# --- phases ----------------------------------------------------------------------------------
P_PLACE, P_MOVE, P_END = 0, 1, 2
PHASES = ("placement", "movement", "end")

# --- config entries (after the shared header) ------------------------------------------------
C_PENG = C_HEADER  # penguins per player
C_PTS_ACE = C_HEADER + 1
C_PTS_FACE = C_HEADER + 2
C_PTS_NUMBER = C_HEADER + 3
# extended config table (after the 8 game entries of the config header)
CFG_PTS = C_HEADER + 8
CFG_SIZE = CFG_PTS + DECK + 1

# --- state -----------------------------------------------------------------------------------
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

# --- observation -----------------------------------------------------------------------------
OBS_POINTS = 0  # CELLS entries: points of the card on the cell, -1 gap
OBS_OWNER = CELLS  # CELLS entries: 0 no penguin, else 1 + the owner's relative seat
OBS_SEATS = 2 * CELLS  # first per-seat block
# per-seat block: the P slot cells, then these entries (offsets after the slots)
SEAT_OUT, SEAT_SCORE, SEAT_CARDS = 0, 1, 2
SEAT_FIELDS = 3
# the entries after the seat blocks (offsets from obs_tail)
T_PHASE, T_TO_ACT, T_PLACED = 0, 1, 2
OBS_TAIL = 3
OWN_CODE = 1  # OBS_OWNER code of the observer's own penguins (relative seat 0)


def num_actions(peng: int) -> int:
    """Size of the action space with ``peng`` penguins per player."""
    return CELLS + peng * MOVES_PER_PENGUIN


def move_action(k: int, d: int, s: int) -> int:
    """The action moving penguin slot ``k`` in direction ``d`` by ``s`` (1-6) cells."""
    return MOVE0 + (k * NDIR + d) * MAX_DIST + (s - 1)


def obs_seat(i: int, peng: int) -> int:
    """Index of relative seat ``i``'s first penguin slot in the observation."""
    return OBS_SEATS + i * (peng + SEAT_FIELDS)


def obs_tail(n: int, peng: int) -> int:
    """Index of the phase entry (the first entry after the ``n`` seat blocks)."""
    return OBS_SEATS + n * (peng + SEAT_FIELDS)


def obs_size(n: int, peng: int) -> int:
    """Length of the observation vector for ``n`` seats with ``peng`` penguins each."""
    return obs_tail(n, peng) + OBS_TAIL


def peng_of_obs(length: int, n: int) -> int:
    """Penguins per player of an observation of ``length`` entries for ``n`` seats."""
    return (length - OBS_SEATS - OBS_TAIL) // n - SEAT_FIELDS
