"""If It Fits' rule queries (numba): the table's geometry, the boxes and what they score, and
where a card, a sleeping cat, an awake cat or a special toy card may go.

Each rule is written here once. The kernels (``rules.py`` and its helpers in ``parts/``), the
features (``features.py``, on the observed table replayed into an engine state by
``parts/scratch.py``), the text and the picture (``view.py``, on a state dict's table rebuilt
into one), the state-dict checks and the heuristic (``card_envs.agents.if_it_fits``) ask these
queries instead of restating them. They read an engine state and its config (offsets:
:mod:`card_envs.if_it_fits.layout`); the box queries also read *box records*: one int32 row
per box (``B_*``, written by :func:`box_counters`, or built by a caller for a box that does
not exist yet, :func:`card_box`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from card_envs.core.jit import njit
from card_envs.core.kernels import C_PLAYERS
from card_envs.if_it_fits.layout import (
    ALL_OPEN,
    B_AWAKE,
    B_CARDS,
    B_FRONT,
    B_PRIN,
    B_SLEEP,
    B_SPRAY,
    B_TOYS,
    BOX_ROW,
    CAT_BITS,
    CAT_MASK,
    CF_ADV,
    CF_COLS,
    CF_NB,
    CF_O_CATS,
    CF_O_CELL,
    CF_O_COPEN,
    CF_O_FLIST,
    CF_O_FRONT,
    CF_O_NBR,
    CF_O_PARENT,
    CF_O_SLOT,
    CF_ROWS,
    CF_TABLE,
    COPEN_SLOT,
    F_BALL,
    F_OPEN,
    F_SPRAY,
    FIELDS,
    IDX,
    MAX_PLAYERS,
    N_CALM,
    N_DECS,
    N_DONE,
    N_EMPTY,
    N_M,
    N_NROOT,
    N_ROOTS,
    NBR_COUNT,
    NBR_OPEN,
    NBR_WALL,
    NUM_START,
    OPEN_N,
    OPEN_S,
    PRINCESS_OWNER,
    S_FRONTN,
    S_STARTE,
    S_STARTW,
    SLOT_PRINCESS,
    SLOT_TOY,
)

__all__ = ["any_fit", "around", "box_allows", "box_counters", "box_points", "box_value",
           "boxes", "card_box", "card_cell_ok", "card_open", "cat_allowed", "cat_count", "find",
           "fits", "free_cells", "nbr_count", "neighbour", "neighbour_at", "open_nbr",
           "rot_open", "score", "sleep_cell_ok", "sleep_dir_ok", "sleep_joins", "slot_ok",
           "slots_opened", "sprayed", "start_end_cell", "start_fit", "toward", "toy_slot_ok",
           "wall_nbr"]


# --- geometry ------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def rot_open(bits: int, rot: int) -> int:
    """Open-side bits ``bits`` turned by ``rot`` (0, or 1 = 180 degrees)."""
    if rot == 0:
        return bits
    return ((bits << 2) | (bits >> 2)) & ALL_OPEN


@njit(cache=True, inline="always")
def card_open(cfg: np.ndarray, cid: int, rot: int) -> int:
    """Open-side bits of card ``cid`` laid with rotation ``rot``."""
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


@njit(cache=True, inline="always")
def neighbour_at(i: int, c: int, C: int, T: int, d: int) -> int:
    """:func:`neighbour` of cell ``i`` in column ``c`` (``i % C``, computed once by a caller
    that asks for several directions) of a table of ``C`` columns and ``T`` cells."""
    if d == 0:
        return i - C if i >= C else -1
    if d == 2:
        return i + C if i + C < T else -1
    if d == 1:
        return i + 1 if c + 1 < C else -1
    return i - 1 if c > 0 else -1


@njit(cache=True, inline="always")
def toward(cfg: np.ndarray, i: int, d: int) -> int:
    """The cell next to ``i`` in direction ``d``, known to be on the table (e.g. a direction in
    which a card shows ``i`` a side): no edge test, no division."""
    C = cfg[CF_COLS]
    if d == 0:
        return i - C
    if d == 2:
        return i + C
    return i + 1 if d == 1 else i - 1


@njit(cache=True, inline="always")
def find(state: np.ndarray, cfg: np.ndarray, i: int) -> int:
    """The root of the box of cell ``i`` (a slot ``s`` is in the box of cell ``s``). Reads
    only: a query must not change the state. The board kernels keep every cell's parent at its
    root (``board.union`` relabels the merged box), so the loop ends after one look."""
    par = cfg[CF_O_PARENT] & IDX  # (& IDX: see layout.IDX)
    r = state[par + i]
    while r != i:
        i = r
        r = state[par + i]
    return r


# --- where things may go -------------------------------------------------------------------
@njit(cache=True, inline="always")
def open_nbr(state: np.ndarray, cfg: np.ndarray, i: int) -> int:
    """The directions (bits) in which a card shows cell ``i`` an open side."""
    return (state[cfg[CF_O_NBR] + i] >> NBR_OPEN) & ALL_OPEN


@njit(cache=True, inline="always")
def wall_nbr(state: np.ndarray, cfg: np.ndarray, i: int) -> int:
    """The directions (bits) in which a card shows cell ``i`` a wall."""
    return (state[cfg[CF_O_NBR] + i] >> NBR_WALL) & ALL_OPEN


@njit(cache=True, inline="always")
def nbr_count(state: np.ndarray, cfg: np.ndarray, i: int) -> int:
    """The occupied neighbours of cell ``i`` (cards and sleeping cats, 0-4)."""
    return state[cfg[CF_O_NBR] + i] >> NBR_COUNT


@njit(cache=True)
def cat_allowed(state: np.ndarray, cfg: np.ndarray, p: int, root: int) -> bool:
    """The cat rule: seat ``p`` may add a cat to the box ``root`` unless another player or a
    Princess has a cat there and ``p`` has none (read from the box's CATS word)."""
    w = state[cfg[CF_O_CATS] + root]
    if w == 0:
        return True
    return (w >> (CAT_BITS * p)) & CAT_MASK != 0


@njit(cache=True, inline="always")
def fits(state: np.ndarray, cfg: np.ndarray, i: int, o: int) -> bool:
    """Advanced rule: no wall of the new card (open sides ``o``) in cell ``i`` faces a wall of
    a neighbouring card."""
    return (wall_nbr(state, cfg, i) & ~o) == 0


@njit(cache=True)
def card_cell_ok(state: np.ndarray, cfg: np.ndarray, i: int, cid: int, strict: bool) -> bool:
    """Card ``cid`` may go to cell ``i`` (empty, next to a card; with ``strict`` the advanced
    no-wall-to-wall rule holds for one of its rotations)."""
    if state[cfg[CF_O_CELL] + i] != 0 or nbr_count(state, cfg, i) == 0:
        return False
    if not strict:
        return True
    return fits(state, cfg, i, card_open(cfg, cid, 0)) or \
        fits(state, cfg, i, card_open(cfg, cid, 1))


@njit(cache=True)
def any_fit(state: np.ndarray, cfg: np.ndarray, cid: int) -> bool:
    """Card ``cid`` has a placement obeying the advanced no-wall-to-wall rule (else the rule is
    lifted for it)."""
    fl = cfg[CF_O_FLIST]
    for k in range(state[S_FRONTN]):
        if card_cell_ok(state, cfg, state[fl + k], cid, True):
            return True
    return False


@njit(cache=True)
def free_cells(state: np.ndarray, cfg: np.ndarray) -> np.ndarray:
    """The empty cells next to a card or a sleeping cat, ascending: where a card may be laid
    (the basic rule)."""
    fl = cfg[CF_O_FLIST]
    return np.sort(state[fl:fl + state[S_FRONTN]])


@njit(cache=True)
def start_end_cell(state: np.ndarray, cfg: np.ndarray, e: int) -> int:
    """Cell at the west (e=0) or east (e=1) end of the start row, -1 off the table."""
    C = cfg[CF_COLS]
    row = cfg[CF_ROWS] // 2
    if e == 0:
        return row * C + state[S_STARTW] - 1 if state[S_STARTW] > 0 else -1
    return row * C + state[S_STARTE] + 1 if state[S_STARTE] + 1 < C else -1


@njit(cache=True)
def start_fit(state: np.ndarray, cfg: np.ndarray, k: int) -> bool:
    """Start card ``k`` (0-4, not the first laid) fits an end of the start row under the
    advanced no-wall-to-wall rule (else the rule is lifted for it)."""
    for e in range(2):
        i = start_end_cell(state, cfg, e)
        if i >= 0 and card_cell_ok(state, cfg, i, cfg[CF_NB] + k, True):
            return True
    return False


@njit(cache=True)
def sleep_dir_ok(state: np.ndarray, cfg: np.ndarray, p: int, i: int, d: int) -> bool:
    """A sleeping cat of ``p`` in cell ``i`` may join the box of the card in direction ``d``:
    that card shows an open side to ``i`` and the cat rule allows ``p`` in its box (the boxes
    it merely faces do not matter)."""
    if not open_nbr(state, cfg, i) & (1 << d):
        return False
    return cat_allowed(state, cfg, p, find(state, cfg, toward(cfg, i, d)))


@njit(cache=True)
def sleep_joins(state: np.ndarray, cfg: np.ndarray, p: int, i: int, on: int) -> bool:
    """A sleeping cat of ``p`` in the empty cell ``i`` has a box to join among the cards that
    show ``i`` an open side in the directions ``on`` (bits; :func:`open_nbr` of ``i``)."""
    for d in range(4):
        if on >> d & 1:
            if cat_allowed(state, cfg, p, find(state, cfg, toward(cfg, i, d))):
                return True
    return False


@njit(cache=True)
def sleep_cell_ok(state: np.ndarray, cfg: np.ndarray, p: int, i: int) -> bool:
    """``p`` may lay a sleeping cat in cell ``i`` (empty, with a box it may join)."""
    if state[cfg[CF_O_CELL] + i] != 0:
        return False
    return sleep_joins(state, cfg, p, i, open_nbr(state, cfg, i))


@njit(cache=True, inline="always")
def slot_ok(state: np.ndarray, cfg: np.ndarray, s: int) -> bool:
    """Slot ``s`` is a cat slot (both long sides open, joined: ``COPEN_SLOT`` of cell ``s``)."""
    return state[cfg[CF_O_COPEN] + s] & COPEN_SLOT != 0


@njit(cache=True)
def toy_slot_ok(state: np.ndarray, cfg: np.ndarray, p: int, s: int) -> bool:
    """Slot ``s`` is a free cat slot in a box the cat rule lets ``p`` into (where ``p``'s awake
    cat or drawn special toy card may go)."""
    if not slot_ok(state, cfg, s) or state[cfg[CF_O_SLOT] + s] != 0:
        return False  # (tests, not a value-context ``and``: numba compiles those slowly)
    return cat_allowed(state, cfg, p, find(state, cfg, s))


@njit(cache=True, inline="always")
def slots_opened(state: np.ndarray, cfg: np.ndarray, i: int, o: int) -> int:
    """The cat slots (0-2) a card with open sides ``o`` laid in the empty cell ``i`` makes: to
    the north and south, where it is open and the card there shows it an open side."""
    both = o & open_nbr(state, cfg, i)
    return (1 if both & OPEN_N else 0) + (1 if both & OPEN_S else 0)


# --- boxes ---------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def around(state: np.ndarray, cfg: np.ndarray, W: np.ndarray, i: int, near: np.ndarray) -> None:
    """What surrounds the empty cell ``i``, into ``near[i]`` (``N_*`` of the layout; ``near``
    has a row per cell): the directions in which it faces an empty cell or the edge, the
    boxes whose cards show it an open side (per direction, and each box once with the number
    of such sides) and whether none of them has an awake cat (their records in ``W``, see
    :func:`box_counters`: then nothing laid there changes anyone's points now)."""
    cell, copen = cfg[CF_O_CELL], cfg[CF_O_COPEN]
    m = em = 0
    for d in range(4):
        j = neighbour(cfg, i, d)
        near[i, N_NROOT + d] = -1
        if j < 0 or state[cell + j] == 0:
            em |= 1 << d
        elif state[cell + j] > 0 and state[copen + j] & (1 << ((d + 2) & 3)):
            r = find(state, cfg, j)
            near[i, N_NROOT + d] = r
            k = 0
            while k < m and near[i, N_ROOTS + k] != r:
                k += 1
            if k == m:
                near[i, N_ROOTS + k] = r
                near[i, N_DECS + k] = 0
                m += 1
            near[i, N_DECS + k] += 1
    calm = 1
    for k in range(m):
        for q in range(cfg[C_PLAYERS]):
            calm &= W[near[i, N_ROOTS + k], B_AWAKE + q] == 0
    near[i, N_DONE], near[i, N_EMPTY], near[i, N_M], near[i, N_CALM] = 1, em, m, calm


@njit(cache=True, inline="always")
def card_box(W: np.ndarray, near: np.ndarray, i: int, o: int, ball: int, mouse: int,
             yarn: int, sp: int, t: int) -> int:
    """Into ``W[t]``: the box record of the box a card with open sides ``o`` (after rotation),
    these toys and ``sp`` sprayers would form, laid in the empty cell ``i`` that ``near[i]``
    describes (:func:`around`), the existing boxes in the rows of their roots. It joins each
    box whose card shows it an open side where it is open too, and covers every open side
    facing it. Returns the joined boxes as bits over ``near[i]``'s boxes (bit k:
    ``N_ROOTS + k``)."""
    for x in range(BOX_ROW):
        W[t, x] = 0
    for d in range(4):
        W[t, B_FRONT] += (o >> d) & (near[i, N_EMPTY] >> d) & 1  # open to empty cells, the edge
    W[t, B_CARDS] = 1
    W[t, B_TOYS] = ball
    W[t, B_TOYS + 1] = mouse
    W[t, B_TOYS + 2] = yarn
    W[t, B_SPRAY] = sp
    joined = 0
    for k in range(near[i, N_M]):
        r = near[i, N_ROOTS + k]
        for d in range(4):
            if o & (1 << d) and near[i, N_NROOT + d] == r:
                joined |= 1 << k
        if joined >> k & 1:
            for x in range(BOX_ROW):
                W[t, x] += W[r, x]
            W[t, B_FRONT] -= near[i, N_DECS + k]
    return joined


@njit(cache=True)
def box_counters(state: np.ndarray, cfg: np.ndarray, W: np.ndarray) -> None:
    """The box record of every box on the table, in the row of its root (``W``: int32, at
    least ``T`` rows of ``BOX_ROW``, zeros; rows of non-roots stay zero, a root has
    ``W[r, B_CARDS] > 0``)."""
    T = (cfg[CF_ROWS] * cfg[CF_COLS]) & IDX  # (& IDX: see layout.IDX)
    S = (T - cfg[CF_COLS]) & IDX
    cell, slot, front = cfg[CF_O_CELL] & IDX, cfg[CF_O_SLOT] & IDX, cfg[CF_O_FRONT] & IDX
    for i in range(T):
        v = state[cell + i]
        if v == 0:
            continue
        r = find(state, cfg, i)
        if v > 0:
            tb = CF_TABLE + ((v - 1) // 2) * FIELDS
            W[r, B_CARDS] += 1
            for k in range(3):
                W[r, B_TOYS + k] += cfg[tb + F_BALL + k]
            W[r, B_SPRAY] += cfg[tb + F_SPRAY]
        else:
            W[r, B_PRIN if -v - 1 == PRINCESS_OWNER else B_SLEEP - v - 1] += 1
    for s in range(S):
        v = state[slot + s]
        if v == 0:
            continue
        r = find(state, cfg, s)
        if v <= MAX_PLAYERS:
            W[r, B_AWAKE + v - 1] += 1
        elif v == SLOT_PRINCESS:
            W[r, B_PRIN] += 1
        else:
            tb = CF_TABLE + (cfg[CF_NB] + NUM_START + v - SLOT_TOY) * FIELDS
            for k in range(3):
                W[r, B_TOYS + k] += cfg[tb + F_BALL + k]
    for i in range(T):
        if W[i, B_CARDS] > 0:
            W[i, B_FRONT] = state[front + i]


@njit(cache=True)
def box_value(W: np.ndarray, r: int) -> int:
    """Box ``W[r]``'s value: toys of its most frequent kind - sprayers, doubled when closed."""
    v = max(W[r, B_TOYS], max(W[r, B_TOYS + 1], W[r, B_TOYS + 2])) - W[r, B_SPRAY]
    return 2 * v if W[r, B_FRONT] == 0 else v


@njit(cache=True, inline="always")
def cat_count(W: np.ndarray, r: int, q: int, adv: int) -> int:
    """Seat ``q``'s cats in box ``W[r]`` as the majority counts them: an awake cat 2, a
    sleeping cat 2 (advanced: 1)."""
    return 2 * W[r, B_AWAKE + q] + (1 if adv else 2) * W[r, B_SLEEP + q]


@njit(cache=True, inline="always")
def box_allows(W: np.ndarray, r: int, q: int, n: int) -> bool:
    """The cat rule on box ``W[r]``: seat ``q`` may add a cat unless another seat or a
    Princess has a cat there and ``q`` has none."""
    if W[r, B_AWAKE + q] + W[r, B_SLEEP + q] > 0:
        return True
    if W[r, B_PRIN] > 0:
        return False
    for o in range(n):
        if W[r, B_AWAKE + o] + W[r, B_SLEEP + o] > 0:
            return False
    return True


@njit(cache=True)
def box_points(W: np.ndarray, r: int, n: int, adv: int, P: np.ndarray, out: int) -> int:
    """``P[out, q]``: the points seat ``q`` gets from box ``W[r]`` (the seats with the most
    cats, :func:`cat_count`, that have an awake cat there score its value; basic game: +1 per
    extra cat of a seat with an awake cat). Returns the seats scoring the value, as bits."""
    top = 0
    for q in range(n):
        P[out, q] = 0.0
        top = max(top, cat_count(W, r, q, adv))
    if top == 0:
        return 0
    value = box_value(W, r)
    won = 0
    for q in range(n):
        a = W[r, B_AWAKE + q]
        if a > 0:
            if cat_count(W, r, q, adv) == top:
                P[out, q] += value
                won |= 1 << q
            if not adv:
                P[out, q] += a + W[r, B_SLEEP + q] - 1
    return won


@njit(cache=True, inline="always")
def sprayed(W: np.ndarray, r: int, won: int, q: int) -> int:
    """Seat ``q``'s minus points from box ``W[r]``: its sprayers, doubled when closed, if ``q``
    scores its value (``won``: :func:`box_points`' result)."""
    if won >> q & 1:
        return W[r, B_SPRAY] * (2 if W[r, B_FRONT] == 0 else 1)
    return 0


@njit(cache=True)
def score(state: np.ndarray, cfg: np.ndarray, points: np.ndarray, minus: np.ndarray) -> None:
    """Points and minus points per seat if the table were scored now (the final score at the
    end), box by box (rules: docs/rules/if_it_fits.md, Scoring)."""
    n = cfg[C_PLAYERS]
    T = cfg[CF_ROWS] * cfg[CF_COLS]
    W = np.zeros((T, BOX_ROW), np.int32)
    P = np.zeros((1, MAX_PLAYERS))
    box_counters(state, cfg, W)
    for p in range(n):
        points[p] = 0.0
        minus[p] = 0.0
    for r in range(T):
        if W[r, B_CARDS] == 0:
            continue
        won = box_points(W, r, n, cfg[CF_ADV], P, 0)
        for p in range(n):
            points[p] += P[0, p]
            minus[p] += sprayed(W, r, won, p)


def boxes(state: np.ndarray, cfg: np.ndarray) -> list[dict[str, Any]]:
    """The boxes on this table and their scores now (Python, for the picture, tests and
    tools): per box, ordered by its first cell, its ``cells`` ((row, col), sorted),
    ``closed``, ``toys`` ([ball, mouse, yarn]), ``sprayers``, ``value``, per seat its
    ``awake`` and ``asleep`` cats, ``points`` and ``minus`` points, and its ``princesses``."""
    n, C = int(cfg[C_PLAYERS]), int(cfg[CF_COLS])
    T = int(cfg[CF_ROWS]) * C
    W = np.zeros((T, BOX_ROW), np.int32)
    box_counters(state, cfg, W)
    cells: dict[int, list[tuple[int, int]]] = {}
    for i in np.flatnonzero(state[cfg[CF_O_CELL]:cfg[CF_O_CELL] + T]).tolist():
        cells.setdefault(int(find(state, cfg, i)), []).append((i // C, i % C))
    P = np.zeros((1, MAX_PLAYERS))
    out = []
    for r, cs in cells.items():
        won = box_points(W, r, n, int(cfg[CF_ADV]), P, 0)
        w = W[r].tolist()
        out.append({"cells": sorted(cs), "closed": w[B_FRONT] == 0,
                    "toys": w[B_TOYS:B_TOYS + 3], "sprayers": w[B_SPRAY],
                    "value": int(box_value(W, r)), "awake": w[B_AWAKE:B_AWAKE + n],
                    "asleep": w[B_SLEEP:B_SLEEP + n], "princesses": w[B_PRIN],
                    "points": [int(x) for x in P[0, :n]],
                    "minus": [int(sprayed(W, r, won, q)) for q in range(n)]})
    return sorted(out, key=lambda b: b["cells"][0])
