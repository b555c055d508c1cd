"""If It Fits table kernels (numba): layout of cfg and state, card placement with incremental
boxes (union-find with per-box open-side and cat counters), cat moves and final scoring.

Directions ``d``: 0 N, 1 E, 2 S, 3 W; a card's open sides are a 4-bit mask (bit ``d``).
Turning a card 180 degrees swaps N/S and E/W. Cells are ``r * cols + c``; the cat slot ``s``
is the long side between cell ``s`` (north) and cell ``s + cols`` (south), ``s < (rows-1)*cols``.

Config (int32, after the shared header): see the ``CF_*`` constants; the card table (``FIELDS``
entries per card id: kind, open bits, ball, mouse, yarn, sprayer) starts at ``CF_TABLE``.
Card ids: box cards ``0..NB-1``, start cards ``NB..NB+4``, special toy cards
``NB+5..NB+4+NT``; the Princess is id ``NC = NB+5+NT``.

State (int32): shared header, scalar fields (``S_*`` below), then per-table arrays whose offsets
are in the config (``CF_O_*``):

| field  | size   | meaning                                                            |
|--------|--------|--------------------------------------------------------------------|
| PILE   | PILEMAX| draw pile, bottom first; ``S_PN`` cards, the top is ``PILE[PN-1]``  |
| CELL   | T      | 0 empty; ``1+2*id+rot`` card; ``-(o+1)`` sleeping cat of seat o; -6 Princess |
| SJOIN  | T      | sleeping cat: the cell of the card whose box it joined, else -1    |
| PARENT | T      | union-find parent (boxes); the root holds the box counters         |
| FRONT  | T      | root: open sides of the box facing an empty cell or the edge       |
| CATS   | 6T     | root*6 + o: cats of seat o (awake + sleeping) in the box, o=5 Princesses |
| COPEN  | T      | open sides of the card in the cell after rotation (0 cat/empty)    |
| NBC    | T      | empty cell: number of occupied neighbours                          |
| WALLNB | T      | empty cell: directions in which a card shows a wall to it          |
| OPENNB | T      | empty cell: directions in which a card shows an open side to it    |
| SLOT   | S      | 0 free, 1-5 awake cat of seat v-1, 6 Princess, 7+k special toy card k |
| SLOTOK | S      | 1 = a cat slot (both long sides open, joined)                      |
| FLIST  | T      | the frontier: empty cells next to an occupied cell (``S_FRONTN``)  |
| FPOS   | T      | position of a cell in FLIST, -1 if not there                       |
| OBSC   | (8T+S+6NT)/4 | public observation part, int8 packed 4 per entry, absolute seats |
| DISC   | NC+5   | discarded cards (ids), ``S_DISCN`` of them                         |
"""

from __future__ import annotations

import numpy as np

from card_envs.core.jit import njit
from card_envs.core.kernels import C_HEADER, C_PLAYERS, HEADER

MAX_PLAYERS = 5
CATS_EACH = 5
HANDMAX = 3
FIELDS = 6
F_KIND, F_OPEN, F_BALL, F_SPRAY = 0, 1, 2, 5
KIND_BOX, KIND_START, KIND_TOY = 0, 1, 2
PRINCESS_OWNER = 5  # index in CATS and code -6 / 6
SLOT_PRINCESS = 6
SLOT_TOY = 7
NPLANES = 8
PK_KIND, PK_SIDES, PK_TOYS, PK_SPRAY, PK_OWNER, PK_JOIN = 0, 1, 2, 5, 6, 7
TOYREC = 6  # per special toy card: on a slot, row, col, ball, mouse, yarn

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
CF_O_NBC = 19
CF_O_WALLNB = 20
CF_O_OPENNB = 21
CF_O_SLOT = 22
CF_O_SLOTOK = 23
CF_O_OBSC = 24
CF_O_DISC = 25
CF_SIZE = 26
CF_OBS = 27
CF_O_FLIST = 28
CF_O_FPOS = 29
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


def layout(rows: int, cols: int, nb: int, nt: int) -> dict[str, int]:
    """Offsets of the per-table state arrays and the sizes (Python side, for configure)."""
    T, S = rows * cols, (rows - 1) * cols
    pilemax = nb + nt + 5
    nc = nb + 5 + nt
    o: dict[str, int] = {}
    k = S_DYN
    for name, size in (("pile", pilemax), ("cell", T), ("sjoin", T), ("parent", T),
                       ("front", T), ("cats", 6 * T), ("copen", T), ("nbc", T),
                       ("wallnb", T), ("opennb", T), ("slot", S), ("slotok", S),
                       ("flist", T), ("fpos", T),
                       ("obsc", (obs_public(rows, cols, nt) + 3) // 4), ("disc", nc + 5)):
        o[name] = k
        k += size
    o["size"] = k
    o["pilemax"] = pilemax
    o["nc"] = nc
    return o


def obs_public(rows: int, cols: int, nt: int) -> int:
    """Length of the public part of the observation (cached in OBSC)."""
    T = rows * cols
    return NPLANES * T + T - cols + TOYREC * nt


@njit(cache=True, inline="always")
def obsc(state: np.ndarray, cfg: np.ndarray) -> np.ndarray:
    """The packed int8 observation planes (a view into the state)."""
    return state[cfg[CF_O_OBSC]:cfg[CF_O_DISC]].view(np.int8)


@njit(cache=True)
def frontier_add(state: np.ndarray, cfg: np.ndarray, j: int) -> None:
    n = state[S_FRONTN]
    state[cfg[CF_O_FLIST] + n] = j
    state[cfg[CF_O_FPOS] + j] = n
    state[S_FRONTN] = n + 1


@njit(cache=True)
def frontier_remove(state: np.ndarray, cfg: np.ndarray, i: int) -> None:
    fl, fp = cfg[CF_O_FLIST], cfg[CF_O_FPOS]
    k = state[fp + i]
    if k < 0:
        return
    n = state[S_FRONTN] - 1
    last = state[fl + n]
    state[fl + k] = last
    state[fp + last] = k
    state[fp + i] = -1
    state[S_FRONTN] = n


@njit(cache=True, inline="always")
def rot_open(bits: int, rot: int) -> int:
    if rot == 0:
        return bits
    return ((bits << 2) | (bits >> 2)) & 15


@njit(cache=True, inline="always")
def card_open(cfg: np.ndarray, cid: int, rot: int) -> int:
    return rot_open(cfg[CF_TABLE + cid * FIELDS + F_OPEN], rot)


@njit(cache=True, inline="always")
def neighbour(cfg: np.ndarray, i: int, d: int) -> int:
    """The cell next to ``i`` in direction ``d``, or -1 off the table."""
    C = cfg[CF_COLS]
    if d == 0:
        return i - C if i >= C else -1
    if d == 2:
        return i + C if i + C < cfg[CF_ROWS] * C else -1
    c = i % C
    if d == 1:
        return i + 1 if c + 1 < C else -1
    return i - 1 if c > 0 else -1


@njit(cache=True)
def find(state: np.ndarray, cfg: np.ndarray, i: int) -> int:
    par = cfg[CF_O_PARENT]
    while state[par + i] != i:
        g = state[par + state[par + i]]
        state[par + i] = g
        i = g
    return i


@njit(cache=True)
def union(state: np.ndarray, cfg: np.ndarray, a: int, b: int) -> None:
    ra = find(state, cfg, a)
    rb = find(state, cfg, b)
    if ra == rb:
        return
    state[cfg[CF_O_PARENT] + rb] = ra
    fr = cfg[CF_O_FRONT]
    state[fr + ra] += state[fr + rb]
    state[fr + rb] = 0
    ct = cfg[CF_O_CATS]
    for o in range(6):
        state[ct + ra * 6 + o] += state[ct + rb * 6 + o]
        state[ct + rb * 6 + o] = 0


@njit(cache=True)
def cat_allowed(state: np.ndarray, cfg: np.ndarray, p: int, root: int) -> bool:
    """The cat rule: seat ``p`` may add a cat to the box ``root`` unless another player or a
    Princess has a cat there and ``p`` has none."""
    ct = cfg[CF_O_CATS] + root * 6
    if state[ct + p] > 0:
        return True
    for o in range(6):
        if state[ct + o] > 0:
            return False
    return True


@njit(cache=True)
def place_card(state: np.ndarray, cfg: np.ndarray, i: int, cid: int, rot: int) -> None:
    """Lay card ``cid`` turned ``rot`` in the empty cell ``i``: joins boxes through open-open
    sides, updates the box counters, slot flags, neighbour masks and observation planes."""
    T = cfg[CF_ROWS] * cfg[CF_COLS]
    C = cfg[CF_COLS]
    o = card_open(cfg, cid, rot)
    cell, fr, par = cfg[CF_O_CELL], cfg[CF_O_FRONT], cfg[CF_O_PARENT]
    nbc = cfg[CF_O_NBC]
    frontier_remove(state, cfg, i)
    state[cell + i] = 1 + 2 * cid + rot
    state[cfg[CF_O_COPEN] + i] = o
    state[par + i] = i
    state[cfg[CF_O_SJOIN] + i] = -1
    ct = cfg[CF_O_CATS] + i * 6
    for q in range(6):
        state[ct + q] = 0
    f = 0
    for d in range(4):
        bit = 1 << d
        opp = (d + 2) & 3
        j = neighbour(cfg, i, d)
        if j < 0:
            if o & bit:
                f += 1  # an open side on the edge: this box can never close
            continue
        v = state[cell + j]
        if v == 0 and state[nbc + j] == 0:
            frontier_add(state, cfg, j)
        state[nbc + j] += 1  # kept for every cell, so the result is order-independent
        if o & bit:
            state[cfg[CF_O_OPENNB] + j] |= 1 << opp
        else:
            state[cfg[CF_O_WALLNB] + j] |= 1 << opp
        if v == 0:
            if o & bit:
                f += 1
        elif v > 0 and state[cfg[CF_O_COPEN] + j] & (1 << opp):
            state[fr + find(state, cfg, j)] -= 1  # j's open side is now covered
    state[fr + i] = f
    for d in range(4):
        j = neighbour(cfg, i, d)
        if j < 0 or state[cell + j] <= 0:
            continue
        if o & (1 << d) and state[cfg[CF_O_COPEN] + j] & (1 << ((d + 2) & 3)):
            union(state, cfg, i, j)
            if d == 0:
                state[cfg[CF_O_SLOTOK] + j] = 1
            elif d == 2:
                state[cfg[CF_O_SLOTOK] + i] = 1
    # observation planes (absolute seats)
    ob = obsc(state, cfg)
    tb = CF_TABLE + cid * FIELDS
    ob[PK_KIND * T + i] = cfg[tb + F_KIND] + 1
    ob[PK_SIDES * T + i] = o
    for k in range(3):
        ob[(PK_TOYS + k) * T + i] = cfg[tb + F_BALL + k]
    ob[PK_SPRAY * T + i] = cfg[tb + F_SPRAY]
    _ = C


@njit(cache=True)
def place_sleeper(state: np.ndarray, cfg: np.ndarray, i: int, owner: int, jd: int) -> None:
    """Lay a sleeping cat of seat ``owner`` in the empty cell ``i``, joining the box of the card
    in direction ``jd``; it shuts every open side facing it."""
    T = cfg[CF_ROWS] * cfg[CF_COLS]
    cell, fr, nbc = cfg[CF_O_CELL], cfg[CF_O_FRONT], cfg[CF_O_NBC]
    frontier_remove(state, cfg, i)
    j0 = neighbour(cfg, i, jd)
    root = find(state, cfg, j0)
    state[cell + i] = -(owner + 1)
    state[cfg[CF_O_COPEN] + i] = 0
    state[cfg[CF_O_PARENT] + i] = root
    state[cfg[CF_O_SJOIN] + i] = j0
    state[fr + i] = 0
    state[cfg[CF_O_CATS] + root * 6 + owner] += 1
    for d in range(4):
        j = neighbour(cfg, i, d)
        if j < 0:
            continue
        v = state[cell + j]
        if v == 0 and state[nbc + j] == 0:
            frontier_add(state, cfg, j)
        state[nbc + j] += 1
        if v > 0 and state[cfg[CF_O_COPEN] + j] & (1 << ((d + 2) & 3)):
            state[fr + find(state, cfg, j)] -= 1
    ob = obsc(state, cfg)
    ob[PK_KIND * T + i] = 4
    ob[PK_OWNER * T + i] = owner + 1
    ob[PK_JOIN * T + i] = jd + 1


@njit(cache=True)
def set_slot(state: np.ndarray, cfg: np.ndarray, s: int, code: int) -> None:
    """Write slot ``s`` (and its observation planes, absolute seats)."""
    T = cfg[CF_ROWS] * cfg[CF_COLS]
    S = T - cfg[CF_COLS]
    state[cfg[CF_O_SLOT] + s] = code
    ob = obsc(state, cfg)
    x = NPLANES * T
    if code >= SLOT_TOY:
        ob[x + s] = SLOT_TOY
        tb = CF_TABLE + (cfg[CF_NB] + 5 + code - SLOT_TOY) * FIELDS
        y = x + S + TOYREC * (code - SLOT_TOY)
        ob[y] = 1
        ob[y + 1] = s // cfg[CF_COLS]
        ob[y + 2] = s % cfg[CF_COLS]
        for k in range(3):
            ob[y + 3 + k] = cfg[tb + F_BALL + k]
    else:
        ob[x + s] = code


@njit(cache=True)
def set_catloc(state: np.ndarray, owner: int, old: int, new: int) -> None:
    """Move one of ``owner``'s cats from location ``old`` to ``new`` (-1 supply, slot s, or
    S + cell for a sleeping cat)."""
    for k in range(CATS_EACH):
        if state[S_CATLOC + owner * CATS_EACH + k] == old:
            state[S_CATLOC + owner * CATS_EACH + k] = new
            return


@njit(cache=True)
def princess_replace(state: np.ndarray, cfg: np.ndarray, target: int) -> None:
    """A Princess replaces the cat at ``target`` (slot s, or S + cell for a sleeping cat);
    the cat goes back to its owner's supply."""
    T = cfg[CF_ROWS] * cfg[CF_COLS]
    S = T - cfg[CF_COLS]
    ct = cfg[CF_O_CATS]
    if target < S:
        owner = state[cfg[CF_O_SLOT] + target] - 1
        root = find(state, cfg, target)
        set_slot(state, cfg, target, SLOT_PRINCESS)
    else:
        i = target - S
        owner = -state[cfg[CF_O_CELL] + i] - 1
        root = find(state, cfg, i)
        state[cfg[CF_O_CELL] + i] = -(PRINCESS_OWNER + 1)
        obsc(state, cfg)[PK_OWNER * T + i] = SLOT_PRINCESS
    state[ct + root * 6 + owner] -= 1
    state[ct + root * 6 + PRINCESS_OWNER] += 1
    state[S_SUPPLY + owner] += 1
    set_catloc(state, owner, target, -1)


@njit(cache=True)
def clear_table(state: np.ndarray, cfg: np.ndarray) -> None:
    """Empty table, slots, derived arrays and observation planes."""
    T = cfg[CF_ROWS] * cfg[CF_COLS]
    for k in range(cfg[CF_O_CELL], cfg[CF_O_DISC]):
        state[k] = 0
    for i in range(T):
        state[cfg[CF_O_PARENT] + i] = i
        state[cfg[CF_O_SJOIN] + i] = -1
        state[cfg[CF_O_FPOS] + i] = -1


@njit(cache=True)
def rebuild(state: np.ndarray, cfg: np.ndarray) -> None:
    """Recompute every derived array (boxes, counters, masks, observation planes, cat
    locations) from CELL, SJOIN and SLOT: replays the cards, then the sleeping cats, then the
    slots. Used when loading a state dict and to cross-check the incremental updates."""
    n = cfg[C_PLAYERS]
    T = cfg[CF_ROWS] * cfg[CF_COLS]
    S = T - cfg[CF_COLS]
    cells = np.empty(T, np.int32)
    joins = np.empty(T, np.int32)
    slots = np.empty(S, np.int32)
    for i in range(T):
        cells[i] = state[cfg[CF_O_CELL] + i]
        joins[i] = state[cfg[CF_O_SJOIN] + i]
    for s in range(S):
        slots[s] = state[cfg[CF_O_SLOT] + s]
    clear_table(state, cfg)
    state[S_FRONTN] = 0
    for k in range(MAX_PLAYERS * CATS_EACH):
        state[S_CATLOC + k] = -1
    for i in range(T):
        if cells[i] > 0:
            v = cells[i] - 1
            place_card(state, cfg, i, v // 2, v % 2)
    for i in range(T):
        if cells[i] < 0:
            owner = -cells[i] - 1
            jd = 0
            for d in range(4):
                if neighbour(cfg, i, d) == joins[i]:
                    jd = d
            place_sleeper(state, cfg, i, owner, jd)
            if owner == PRINCESS_OWNER:
                obsc(state, cfg)[PK_OWNER * T + i] = SLOT_PRINCESS
            else:
                set_catloc(state, owner, -1, S + i)
    for s in range(S):
        v = slots[s]
        if v == 0:
            continue
        set_slot(state, cfg, s, v)
        root = find(state, cfg, s)
        if 1 <= v <= MAX_PLAYERS:
            state[cfg[CF_O_CATS] + root * 6 + v - 1] += 1
            set_catloc(state, v - 1, -1, s)
        elif v == SLOT_PRINCESS:
            state[cfg[CF_O_CATS] + root * 6 + PRINCESS_OWNER] += 1
    _ = n


@njit(cache=True)
def score(state: np.ndarray, cfg: np.ndarray, points: np.ndarray, minus: np.ndarray) -> None:
    """Final points and minus points (sprayers of scored boxes, doubled where closed) per seat,
    box by box (rules: shared/rules/if_it_fits.md, Scoring)."""
    n = cfg[C_PLAYERS]
    adv = cfg[CF_ADV]
    T = cfg[CF_ROWS] * cfg[CF_COLS]
    S = T - cfg[CF_COLS]
    toys = np.zeros((T, 3), np.int64)
    spray = np.zeros(T, np.int64)
    awake = np.zeros((T, MAX_PLAYERS), np.int64)
    sleep = np.zeros((T, MAX_PLAYERS), np.int64)
    isroot = np.zeros(T, np.bool_)
    cell = cfg[CF_O_CELL]
    for p in range(n):
        points[p] = 0.0
        minus[p] = 0.0
    for i in range(T):
        v = state[cell + i]
        if v == 0:
            continue
        r = find(state, cfg, i)
        if v > 0:
            isroot[r] = True
            tb = CF_TABLE + ((v - 1) // 2) * FIELDS
            for k in range(3):
                toys[r, k] += cfg[tb + F_BALL + k]
            spray[r] += cfg[tb + F_SPRAY]
        elif -v - 1 < MAX_PLAYERS:
            sleep[r, -v - 1] += 1
    for s in range(S):
        v = state[cfg[CF_O_SLOT] + s]
        if v == 0 or v == SLOT_PRINCESS:
            continue
        r = find(state, cfg, s)
        if v <= MAX_PLAYERS:
            awake[r, v - 1] += 1
        else:
            tb = CF_TABLE + (cfg[CF_NB] + 5 + v - SLOT_TOY) * FIELDS
            for k in range(3):
                toys[r, k] += cfg[tb + F_BALL + k]
    for r in range(T):
        if not isroot[r]:
            continue
        closed = state[cfg[CF_O_FRONT] + r] == 0
        mult = 2 if closed else 1
        best = max(toys[r, 0], max(toys[r, 1], toys[r, 2]))
        value = (best - spray[r]) * mult
        top = 0
        for p in range(n):
            c = 2 * awake[r, p] + (1 if adv else 2) * sleep[r, p]
            if c > top:
                top = c
        if top == 0:
            continue
        for p in range(n):
            c = 2 * awake[r, p] + (1 if adv else 2) * sleep[r, p]
            if c == top and awake[r, p] > 0:
                points[p] += value
                minus[p] += spray[r] * mult
            if not adv and awake[r, p] > 0:
                points[p] += awake[r, p] + sleep[r, p] - 1
