"""If It Fits table kernels (numba): card placement with incremental boxes (union-find with
per-box open-side and cat counters), sleeping cats, slots, the Princess, and the rebuild of
every derived array from the table. State layout: :mod:`card_envs.if_it_fits.layout`; the
geometry and the box root (``neighbour``, ``card_open``, ``find``):
:mod:`card_envs.if_it_fits.queries`.
"""

from __future__ import annotations

import numpy as np

from card_envs.core.jit import njit
from card_envs.if_it_fits.layout import (
    CAT_BITS,
    CATS_EACH,
    CELL_PRINCESS,
    CF_COLS,
    CF_NB,
    CF_O_CATS,
    CF_O_CELL,
    CF_O_COPEN,
    CF_O_DISC,
    CF_O_FLIST,
    CF_O_FPOS,
    CF_O_FRONT,
    CF_O_NBR,
    CF_O_OBSC,
    CF_O_PARENT,
    CF_O_SJOIN,
    CF_O_SLOT,
    CF_ROWS,
    CF_TABLE,
    CK_SLEEPER,
    COPEN_SLOT,
    F_BALL,
    F_KIND,
    F_SPRAY,
    FIELDS,
    IDX,
    MAX_PLAYERS,
    NBR_COUNT,
    NBR_OPEN,
    NBR_WALL,
    NPLANES,
    NUM_START,
    PK_JOIN,
    PK_KIND,
    PK_OWNER,
    PK_SIDES,
    PK_SPRAY,
    PK_TOYS,
    PRINCESS_OWNER,
    S_CATLOC,
    S_FRONTN,
    S_SUPPLY,
    SLOT_PRINCESS,
    SLOT_TOY,
    TOYREC,
    TR_COL,
    TR_ON,
    TR_ROW,
    TR_TOYS,
)
from card_envs.if_it_fits.queries import (
    card_open,
    find,
    nbr_count,
    neighbour,
    neighbour_at,
    toward,
)


@njit(cache=True, inline="always")
def obs_put(state: np.ndarray, cfg: np.ndarray, k: int, v: int) -> None:
    """Entry ``k`` of the public planes (``layout.obs_planes``, every entry below 16)
    becomes ``v``: bits ``4 * (k & 7)`` up of the int32 at ``OBSC + k // 8`` (8 entries per
    int32: ``observe`` reads half as many cache lines as at a byte an entry)."""
    w = cfg[CF_O_OBSC] + (k >> 3)
    sh = 4 * (int(k) & 7)
    x = (int(state[w]) & (0xFFFFFFFF ^ (0xF << sh))) | ((int(v) & 0xF) << sh)
    state[w] = x - 0x100000000 if x > 0x7FFFFFFF else x  # the int32 of these bits


@njit(cache=True, inline="always")
def toy_put(state: np.ndarray, cfg: np.ndarray, planes: int, k: int, v: int) -> None:
    """Entry ``k`` of the special toy card records (after the ``planes`` entries of the
    planes; entries below 128) becomes ``v``: byte ``k & 3`` of an int32 after the planes'
    words."""
    w = cfg[CF_O_OBSC] + ((planes + 7) >> 3) + (k >> 2)
    sh = 8 * (k & 3)  # (every entry is below 128: the word stays an int32)
    state[w] = (int(state[w]) & ~(0xFF << sh)) | ((v & 0xFF) << sh)


@njit(cache=True, inline="always")
def add_cat(state: np.ndarray, cfg: np.ndarray, root: int, o: int) -> None:
    """One more cat of owner ``o`` (a seat, or ``PRINCESS_OWNER``) in the box ``root``: its
    counter in the box's CATS word (``CAT_BITS`` bits from ``CAT_BITS * o``)."""
    state[cfg[CF_O_CATS] + root] += 1 << (CAT_BITS * o)


@njit(cache=True)
def frontier_add(state: np.ndarray, cfg: np.ndarray, j: int) -> None:
    """Append the empty cell ``j`` to the frontier list."""
    n = state[S_FRONTN]
    state[cfg[CF_O_FLIST] + n] = j
    state[cfg[CF_O_FPOS] + j] = n
    state[S_FRONTN] = n + 1


@njit(cache=True)
def frontier_remove(state: np.ndarray, cfg: np.ndarray, i: int) -> None:
    """Take cell ``i`` off the frontier list (swap with the last entry), if it is there."""
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


@njit(cache=True)
def union(state: np.ndarray, cfg: np.ndarray, a: int, b: int) -> None:
    """Merge the boxes of cells ``a`` and ``b``; the root of ``a`` keeps the summed counters.
    Every cell of ``b``'s box gets ``a``'s root as its parent (parents stay roots, so
    :func:`~card_envs.if_it_fits.queries.find` looks once and never writes)."""
    ra = find(state, cfg, a)
    rb = find(state, cfg, b)
    if ra == rb:
        return
    par = cfg[CF_O_PARENT] & IDX  # (& IDX: see layout.IDX)
    for k in range((cfg[CF_ROWS] * cfg[CF_COLS]) & IDX):
        if state[par + k] == rb:
            state[par + k] = ra
    fr = cfg[CF_O_FRONT]
    state[fr + ra] += state[fr + rb]
    state[fr + rb] = 0
    ct = cfg[CF_O_CATS]
    state[ct + ra] += state[ct + rb]  # every counter at once (layout: they never carry)
    state[ct + rb] = 0


@njit(cache=True)
def place_card(state: np.ndarray, cfg: np.ndarray, i: int, cid: int, rot: int) -> None:
    """Lay card ``cid`` turned ``rot`` in the empty cell ``i``: joins boxes through open-open
    sides, updates the box counters, slot flags, neighbour masks and observation planes."""
    C = cfg[CF_COLS]
    T = cfg[CF_ROWS] * C
    c = i % C
    o = card_open(cfg, cid, rot)
    cell, fr, par = cfg[CF_O_CELL], cfg[CF_O_FRONT], cfg[CF_O_PARENT]
    nbr = cfg[CF_O_NBR]
    frontier_remove(state, cfg, i)
    state[cell + i] = 1 + 2 * cid + rot
    state[cfg[CF_O_COPEN] + i] = o
    state[par + i] = i
    state[cfg[CF_O_SJOIN] + i] = -1
    state[cfg[CF_O_CATS] + i] = 0
    f = 0
    for d in range(4):
        bit = 1 << d
        opp = (d + 2) & 3
        j = neighbour_at(i, c, C, T, d)
        if j < 0:
            if o & bit:
                f += 1  # an open side on the edge: this box can never close
            continue
        v = state[cell + j]
        if v == 0 and nbr_count(state, cfg, j) == 0:
            frontier_add(state, cfg, j)
        # one more neighbour, showing j an open side or a wall (kept for every cell, so the
        # result is order-independent)
        side = NBR_OPEN if o & bit else NBR_WALL
        state[nbr + j] = (state[nbr + j] + (1 << NBR_COUNT)) | (1 << (side + opp))
        if v == 0:
            if o & bit:
                f += 1
        elif v > 0 and state[cfg[CF_O_COPEN] + j] & (1 << opp):
            state[fr + find(state, cfg, j)] -= 1  # j's open side is now covered
    state[fr + i] = f
    for d in range(4):
        j = neighbour_at(i, c, C, T, d)
        if j < 0 or state[cell + j] <= 0:
            continue
        if o & (1 << d) and state[cfg[CF_O_COPEN] + j] & (1 << ((d + 2) & 3)):
            union(state, cfg, i, j)
            if d == 0:  # joined north or south: the slot between is a cat slot
                state[cfg[CF_O_COPEN] + j] |= COPEN_SLOT
            elif d == 2:
                state[cfg[CF_O_COPEN] + i] |= COPEN_SLOT
    # observation planes (absolute seats)
    tb = CF_TABLE + cid * FIELDS
    obs_put(state, cfg, PK_KIND * T + i, cfg[tb + F_KIND] + 1)
    obs_put(state, cfg, PK_SIDES * T + i, o)
    for k in range(3):
        obs_put(state, cfg, (PK_TOYS + k) * T + i, cfg[tb + F_BALL + k])
    obs_put(state, cfg, PK_SPRAY * T + i, cfg[tb + F_SPRAY])


@njit(cache=True)
def place_sleeper(state: np.ndarray, cfg: np.ndarray, i: int, owner: int, jd: int) -> None:
    """Lay a sleeping cat of seat ``owner`` in the empty cell ``i``, joining the box of the card
    in direction ``jd``; it shuts every open side facing it."""
    C = cfg[CF_COLS]
    T = cfg[CF_ROWS] * C
    c = i % C
    cell, fr, nbr = cfg[CF_O_CELL], cfg[CF_O_FRONT], cfg[CF_O_NBR]
    frontier_remove(state, cfg, i)
    j0 = toward(cfg, i, jd)
    root = find(state, cfg, j0)
    state[cell + i] = -(owner + 1)
    state[cfg[CF_O_COPEN] + i] = 0
    state[cfg[CF_O_PARENT] + i] = root
    state[cfg[CF_O_SJOIN] + i] = j0
    state[fr + i] = 0
    add_cat(state, cfg, root, owner)
    for d in range(4):
        j = neighbour_at(i, c, C, T, d)
        if j < 0:
            continue
        v = state[cell + j]
        if v == 0 and nbr_count(state, cfg, j) == 0:
            frontier_add(state, cfg, j)
        state[nbr + j] += 1 << NBR_COUNT
        if v > 0 and state[cfg[CF_O_COPEN] + j] & (1 << ((d + 2) & 3)):
            state[fr + find(state, cfg, j)] -= 1
    obs_put(state, cfg, PK_KIND * T + i, CK_SLEEPER)
    obs_put(state, cfg, PK_OWNER * T + i, owner + 1)
    obs_put(state, cfg, PK_JOIN * T + i, jd + 1)


@njit(cache=True)
def set_slot(state: np.ndarray, cfg: np.ndarray, s: int, code: int) -> None:
    """Write slot ``s`` (and its observation planes, absolute seats)."""
    T = cfg[CF_ROWS] * cfg[CF_COLS]
    S = T - cfg[CF_COLS]
    state[cfg[CF_O_SLOT] + s] = code
    x = NPLANES * T
    if code >= SLOT_TOY:
        obs_put(state, cfg, x + s, SLOT_TOY)
        tb = CF_TABLE + (cfg[CF_NB] + NUM_START + code - SLOT_TOY) * FIELDS
        y = TOYREC * (code - SLOT_TOY)
        toy_put(state, cfg, x + S, y + TR_ON, 1)
        toy_put(state, cfg, x + S, y + TR_ROW, s // cfg[CF_COLS])
        toy_put(state, cfg, x + S, y + TR_COL, s % cfg[CF_COLS])
        for k in range(3):
            toy_put(state, cfg, x + S, y + TR_TOYS + k, cfg[tb + F_BALL + k])
    else:
        obs_put(state, cfg, x + s, code)


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
    if target < S:
        owner = state[cfg[CF_O_SLOT] + target] - 1
        root = find(state, cfg, target)
        set_slot(state, cfg, target, SLOT_PRINCESS)
    else:
        i = target - S
        owner = -state[cfg[CF_O_CELL] + i] - 1
        root = find(state, cfg, i)
        state[cfg[CF_O_CELL] + i] = CELL_PRINCESS
        obs_put(state, cfg, PK_OWNER * T + i, SLOT_PRINCESS)
    add_cat(state, cfg, root, PRINCESS_OWNER)
    state[cfg[CF_O_CATS] + root] -= 1 << (CAT_BITS * owner)  # the cat leaves the box
    state[S_SUPPLY + owner] += 1
    set_catloc(state, owner, target, -1)


@njit(cache=True)
def clear_table(state: np.ndarray, cfg: np.ndarray) -> None:
    """Empty table, slots, derived arrays and observation planes."""
    T = (cfg[CF_ROWS] * cfg[CF_COLS]) & IDX  # (& IDX: see layout.IDX)
    for k in range(cfg[CF_O_CELL] & IDX, cfg[CF_O_DISC] & IDX):
        state[k] = 0
    par, sj, fp = cfg[CF_O_PARENT] & IDX, cfg[CF_O_SJOIN] & IDX, cfg[CF_O_FPOS] & IDX
    for i in range(T):
        state[par + i] = i
        state[sj + i] = -1
        state[fp + i] = -1


@njit(cache=True)
def rebuild(state: np.ndarray, cfg: np.ndarray) -> None:
    """Recompute every derived array (boxes, counters, masks, observation planes, cat
    locations) from CELL, SJOIN and SLOT: replays the cards, then the sleeping cats, then the
    slots. Used when loading a state dict and to cross-check the incremental updates."""
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
                obs_put(state, cfg, PK_OWNER * T + i, SLOT_PRINCESS)
            else:
                set_catloc(state, owner, -1, S + i)
    for s in range(S):
        v = slots[s]
        if v == 0:
            continue
        set_slot(state, cfg, s, v)
        root = find(state, cfg, s)
        if 1 <= v <= MAX_PLAYERS:
            add_cat(state, cfg, root, v - 1)
            set_catloc(state, v - 1, -1, s)
        elif v == SLOT_PRINCESS:
            add_cat(state, cfg, root, PRINCESS_OWNER)
