"""If It Fits layout: the config and state arrays, the phases, the action encoding and the
observation layout. Every module that reads these arrays (kernels, game, agents, features,
tests) imports the offsets from here.

Directions ``d``: 0 N, 1 E, 2 S, 3 W; a card's open sides are a 4-bit mask (bit ``d``).
Turning a card 180 degrees swaps N/S and E/W. Cells are ``r * cols + c``; the cat slot ``s``
is the long side between cell ``s`` (north) and cell ``s + cols`` (south), ``s < (rows-1)*cols``.

Config (int32, after the shared header): see the ``CF_*`` constants; the card table (``FIELDS``
entries per card id: kind, open bits, ball, mouse, yarn, sprayer) starts at ``CF_TABLE``, then
each card's observation row (``CF_O_ROWS``: the ``CARD_REC`` entries packed 4 per int32, 3
int32 per card id).
Card ids: box cards ``0..NB-1``, start cards ``NB..NB+4``, special toy cards
``NB+5..NB+4+NT``; the Princess is id ``NC = NB+5+NT``.

State (int32): shared header, scalar fields (``S_*`` below), then per-table arrays whose offsets
are in the config (``CF_O_*``, computed by :func:`offsets`):

| field  | size   | meaning                                                            |
|--------|--------|--------------------------------------------------------------------|
| PILE   | PILEMAX| draw pile, bottom first; ``S_PN`` cards, the top is ``PILE[PN-1]``  |
| CELL   | T      | 0 empty; ``1+2*id+rot`` card; ``-(o+1)`` sleeping cat of seat o; -6 Princess |
| SJOIN  | T      | sleeping cat: the cell of the card whose box it joined, else -1    |
| PARENT | T      | union-find parent (boxes); the root holds the box counters         |
| FRONT  | T      | root: open sides of the box facing an empty cell or the edge       |
| CATS   | T      | root: the box's cat counters, ``CAT_BITS`` = 4 bits each: cats of  |
|        |        | seat o (awake + sleeping) at bits 4o..4o+3, o=5 Princesses         |
| COPEN  | T      | open sides of the card in the cell after rotation (bits 0-3; 0 for |
|        |        | a cat or empty); ``COPEN_SLOT``: slot ``i`` below it is a cat slot |
|        |        | (both long sides open, joined; ``queries.slot_ok``)                |
| NBR    | T      | empty cell: the directions in which a card shows it an open side   |
|        |        | (bits 0-3), a wall (bits 4-7), and its occupied neighbours (bits   |
|        |        | 8-10): ``NBR_*``; ``queries.open_nbr``, ``wall_nbr``, ``nbr_count`` |
| SLOT   | S      | 0 free, 1-5 awake cat of seat v-1, 6 Princess, 7+k special toy card k |
| FLIST  | T      | the frontier: empty cells next to an occupied cell (``S_FRONTN``)  |
| FPOS   | T      | position of a cell in FLIST, -1 if not there                       |
| OBSC   | obsc_size | public observation part, absolute seats: the planes (8T+S entries,
|        |        | all below 16) 8 per int32 (4 bits each), then the toy card records 4 per int32 |
| DISC   | NC+5   | discarded cards (ids), ``S_DISCN`` of them                         |

The observation (table in ``card_envs.if_it_fits.env``): the public planes (``PK_*``, ``T``
entries each), the slot plane, the special toy card records (``TR_*``), then from
``X = obs_public(...)`` the own hand and the start cards (``CR_*`` records), the drawn toy card,
the per-seat counters (``O_*``), and from ``Y = obs_tail(...)`` the scalars (``Y_*``).

The rule queries' records (:mod:`card_envs.if_it_fits.queries`): a box record (``B_*``, one
int32 row per box: cards, toys, sprayers, open sides, cats per seat, Princesses) and what
surrounds an empty cell (``N_*``, one int32 row per cell).
"""

from __future__ import annotations

import numpy as np

from card_envs.core.kernels import C_HEADER, HEADER

#: ``x & IDX`` is ``x`` for every index and size of the arrays (all below 2**24) and tells the
#: compiler that it is not negative: numba then leaves out its negative-index handling, about
#: four instructions per array access where an index or size comes from the config or state
IDX = 0xFFFFFF

MAX_PLAYERS = 5
CATS_EACH = 5
HANDMAX = 3
DEAL = 2  # box cards dealt to each hand at the start
NUM_START = 5  # start cards S1..S5 (card ids NB..NB+4)
NUM_PRINCESS = 5  # Princesses in the game (the basic game uses one per player)
SIDES = "NESW"  # direction d is SIDES[d]; open bit 1 << d
OPEN_N, OPEN_E, OPEN_S, OPEN_W = 1, 2, 4, 8  # open-side bits
ALL_OPEN = 15  # open on every side (a special toy card laid as a card)
COPEN_SLOT = 16  # COPEN flag of cell i: its card is joined to the card south: slot i is a cat slot
TOYS = ("ball", "mouse", "yarn")
MAX_ICONS = 9  # most toys of one kind, or sprayers, on one card (checked by parts/deck.py)

# --- card table (config) ------------------------------------------------------------------
FIELDS = 6  # per card id: kind, open bits, ball, mouse, yarn, sprayer
F_KIND, F_OPEN, F_BALL, F_SPRAY = 0, 1, 2, 5  # F_BALL + k for TOYS[k]
KIND_BOX, KIND_START, KIND_TOY = 0, 1, 2

# --- cat codes ----------------------------------------------------------------------------
PRINCESS_OWNER = 5  # owner index of the Princesses in CATS
NCOUNT = PRINCESS_OWNER + 1  # cat counters per box: seats 0-4, then Princesses
CAT_BITS = 4  # bits of a box's cat counter in its CATS word: owner o at bits CAT_BITS * o up
CAT_MASK = (1 << CAT_BITS) - 1
# A counter never carries into the next: a box holds at most the CATS_EACH cats of a seat or
# the NUM_PRINCESS Princesses (merging two boxes adds their words), and the NCOUNT counters
# stay below the sign bit.
assert max(CATS_EACH, NUM_PRINCESS) <= CAT_MASK and NCOUNT * CAT_BITS <= 31
CELL_PRINCESS = -(PRINCESS_OWNER + 1)  # CELL code of a Princess on a sleeping cat's place
SLOT_PRINCESS = 6  # SLOT code (1..5 are awake cats of seat v-1)
SLOT_TOY = 7  # SLOT code of special toy card k: SLOT_TOY + k

# --- NBR: per cell, what its neighbours show it (one int32; read with queries.open_nbr etc.) --
NBR_OPEN = 0  # bits 0-3: directions in which a card shows the cell an open side
NBR_WALL = 4  # bits 4-7: directions in which a card shows the cell a wall
NBR_COUNT = 8  # bits 8-10: occupied neighbours (cards and sleeping cats), 0-4

# --- config -------------------------------------------------------------------------------
CF_ROWS = C_HEADER
CF_COLS = C_HEADER + 1
CF_ADV = C_HEADER + 2
CF_NB = C_HEADER + 3
CF_NT = C_HEADER + 4
CF_NPR = C_HEADER + 5
CF_NC = C_HEADER + 6
CF_PILEMAX = C_HEADER + 7
CF_O_PILE = 12
CF_O_CELL = 13
CF_O_SJOIN = 14
CF_O_PARENT = 15
CF_O_FRONT = 16
CF_O_CATS = 17
CF_O_COPEN = 18
CF_O_NBR = 19
CF_O_SLOT = 20
CF_O_OBSC = 21
CF_O_DISC = 22
CF_SIZE = 23
CF_OBS = 24
CF_O_FLIST = 25
CF_O_FPOS = 26
CF_O_ROWS = 27
CF_TABLE = 32

# --- state scalars ------------------------------------------------------------------------
S_FIRST = HEADER
S_STARTN = HEADER + 1
S_STARTW = HEADER + 2
S_STARTE = HEADER + 3
S_STARTUSED = HEADER + 4
S_SEL = HEADER + 5
S_SELCELL = HEADER + 6
S_PLAYED = HEADER + 7
S_RELAX = HEADER + 8
S_ENDTRIG = HEADER + 9
S_PN = HEADER + 10
S_TOY = HEADER + 11
S_NSEG = HEADER + 12
S_FRONTN = HEADER + 13
S_DISCN = HEADER + 14
S_SELSTART = HEADER + 15
S_SUPPLY = HEADER + 16
S_HANDN = S_SUPPLY + MAX_PLAYERS
S_HAND = S_HANDN + MAX_PLAYERS
S_CATLOC = S_HAND + MAX_PLAYERS * HANDMAX
S_SEGB = S_CATLOC + MAX_PLAYERS * CATS_EACH
S_DYN = S_SEGB + MAX_PLAYERS + 1

# --- phases -------------------------------------------------------------------------------
PHASES = ("start_card", "start_end", "start_rotation", "turn", "toy_slot", "toy_cell", "play",
          "cell", "rotation", "cat", "princess", "sleep_cell", "sleep_dir", "discard", "pass",
          "end")
(P_START_CARD, P_START_END, P_START_ROT, P_TURN, P_TOY_SLOT, P_TOY_CELL, P_PLAY, P_CELL,
 P_ROT, P_CAT, P_PRINCESS, P_SLEEP_CELL, P_SLEEP_DIR, P_DISCARD, P_PASS, P_END) = range(16)

# --- actions: 0..T-1 cells, T..B-1 slots (B = T + S), then B + A_* ------------------------
A_HAND = 0  # B+0..2 hand position
A_ROT = 3  # B+3..4 rotation 0 / 180 degrees
A_DIR = 5  # B+5..8 sleeping cat joins the card to the N / E / S / W
A_START = 9  # B+9..13 start card S1..S5
A_END = 14  # B+14..15 start row end west / east
A_DRAW = 16
A_SLEEP = 17
A_SKIP = 18
A_PASS = 19
NUM_SPECIAL = 20

# --- observation --------------------------------------------------------------------------
NPLANES = 8  # public planes of T entries each (then the slot plane of S entries)
PK_KIND, PK_SIDES, PK_TOYS, PK_SPRAY, PK_OWNER, PK_JOIN = 0, 1, 2, 5, 6, 7
CK_EMPTY = 0  # PK_KIND: 1 + card kind for a card (CK_BOX, CK_START, CK_TOY)
CK_BOX, CK_START, CK_TOY = KIND_BOX + 1, KIND_START + 1, KIND_TOY + 1
CK_SLEEPER = 4  # PK_KIND of a sleeping cat (or the Princess in its place)
REL_SELF = 1  # PK_OWNER / slot code of the observer's own cats (relative seat + 1)
TOYREC = 6  # per special toy card: on a slot, row, col, ball, mouse, yarn
TR_ON, TR_ROW, TR_COL, TR_TOYS = 0, 1, 2, 3
CARD_REC = 9  # a card row: kind / available, N, E, S, W, ball, mouse, yarn, sprayer
CR_KIND, CR_SIDES, CR_TOYS, CR_SPRAY = 0, 1, 5, 8
HK_NONE, HK_BOX, HK_PRINCESS = 0, 1, 2  # CR_KIND of a hand position
# offsets from X = obs_public(rows, cols, nt)
O_HAND = 0  # HANDMAX card rows
O_STARTS = O_HAND + HANDMAX * CARD_REC  # NUM_START card rows, CR_KIND = available
O_TOY = O_STARTS + NUM_START * CARD_REC  # the drawn special toy card: ball, mouse, yarn
O_SEATS = O_TOY + 3  # supplies (n), then hand sizes (n), per relative seat
# offsets from Y = obs_tail(rows, cols, nt, n) = X + O_SEATS + 2n
Y_PILE = 0
Y_PHASE = 1
Y_CUR = 2  # relative seat to act, -1 at the end
Y_ENDTRIG = 3
Y_SEL = 4  # hand position being played, else -1
Y_SELSTART = 5  # start card being laid, else -1
Y_SELCELL = 6  # selected cell: row, col (-1)
Y_PLAYED = 8  # card played this turn: row, col (-1)
Y_RELAX = 10  # advanced rule lifted for the card being placed
Y_FIRST = 11  # start player, relative
Y_SIZE = 12
EXTRA_OBS = O_SEATS + Y_SIZE  # + 2n per-seat entries


def obs_planes(rows: int, cols: int) -> int:
    """Length of the public planes (``NPLANES`` of ``T`` entries, then the slot plane), the
    part of OBSC packed 8 entries per int32; the special toy card records follow."""
    return NPLANES * rows * cols + (rows - 1) * cols


def obsc_size(rows: int, cols: int, nt: int) -> int:
    """int32 entries of OBSC: the planes at 4 bits an entry, the toy records at 8 bits."""
    return (obs_planes(rows, cols) + 7) // 8 + (TOYREC * nt + 3) // 4


def unpack_public(words: np.ndarray, rows: int, cols: int, nt: int) -> np.ndarray:
    """The public part of the observation (``obs_public`` entries, int64) from OBSC's words
    (Python, for tests and tools; ``observe`` does this compiled)."""
    p = obs_planes(rows, cols)
    w = np.asarray(words, np.int64) & 0xFFFFFFFF
    nib = (w[:(p + 7) // 8, None] >> (4 * np.arange(8))) & 0xF
    byt = (w[(p + 7) // 8:, None] >> (8 * np.arange(4))) & 0xFF
    return np.concatenate([nib.ravel()[:p], byt.ravel()[:TOYREC * nt]])


def obs_public(rows: int, cols: int, nt: int) -> int:
    """Length of the public part of the observation (cached in OBSC); also ``X``."""
    T = rows * cols
    return NPLANES * T + T - cols + TOYREC * nt


def obs_tail(rows: int, cols: int, nt: int, n: int) -> int:
    """Start ``Y`` of the observation's scalars (``Y_*``)."""
    return obs_public(rows, cols, nt) + O_SEATS + 2 * n


def obs_size(rows: int, cols: int, n: int, nt: int) -> int:
    """Length of the observation."""
    return obs_public(rows, cols, nt) + EXTRA_OBS + 2 * n


def num_actions(rows: int, cols: int) -> int:
    """Size of the action space: cells, slots, then ``NUM_SPECIAL``."""
    return rows * cols + (rows - 1) * cols + NUM_SPECIAL


def offsets(rows: int, cols: int, nb: int, nt: int) -> dict[str, int]:
    """Offsets of the per-table state arrays and the sizes (Python side, for configure)."""
    T, S = rows * cols, (rows - 1) * cols
    pilemax = nb + nt + NUM_PRINCESS
    nc = nb + NUM_START + nt
    o: dict[str, int] = {}
    k = S_DYN
    for name, size in (("pile", pilemax), ("cell", T), ("sjoin", T), ("parent", T),
                       ("front", T), ("cats", T), ("copen", T), ("nbr", T),
                       ("slot", S), ("flist", T), ("fpos", T), ("obsc", obsc_size(rows, cols, nt)),
                       ("disc", nc + NUM_PRINCESS)):
        o[name] = k
        k += size
    o["size"] = k
    o["pilemax"] = pilemax
    o["nc"] = nc
    return o

# --- box records (``queries.box_counters``): one int32 row per box, at its union-find root --
B_CARDS = 0  # cards in the box
B_TOYS = 1  # B_TOYS + k: icons of TOYS[k] (cards and special toy cards on its slots)
B_SPRAY = 4  # sprayers
B_FRONT = 5  # open sides facing an empty cell or the edge (0: closed)
B_AWAKE = 6  # + seat: awake cats
B_SLEEP = B_AWAKE + MAX_PLAYERS  # + seat: sleeping cats
B_PRIN = B_SLEEP + MAX_PLAYERS  # Princesses (awake or in a sleeping cat's place)
BOX_ROW = B_PRIN + 1

# --- what surrounds an empty cell (``queries.around``): one int32 row per cell ----------------
N_DONE = 0  # 1: the row is filled
N_EMPTY = 1  # directions in which it faces an empty cell or the edge (bits)
N_NROOT = 2  # + d: root of the card in direction d if it shows the cell an open side, else -1
N_M = 6  # number of distinct such roots
N_ROOTS = 7  # + k: those roots, k < N_M
N_DECS = 11  # + k: open sides of box N_ROOTS + k facing the cell
N_CALM = 15  # 1: none of those boxes has an awake cat (nothing laid there changes any points)
NEAR_ROW = 16
