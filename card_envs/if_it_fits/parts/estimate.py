"""If It Fits features, part two: what one action does to the boxes of the observed table
(``parts/scratch.py``): the boxes it joins, shuts or closes, the toys it adds, the cats, the
cat rule, the cat slots it opens and the change of the points now, as ``features.py``'s
per-action features (``ACTION_FEATURES``, table in its docstring). The rules come from
:mod:`card_envs.if_it_fits.queries`."""

from __future__ import annotations

import numpy as np

from card_envs.core import kernels as K
from card_envs.core.jit import njit
from card_envs.if_it_fits import layout as L
from card_envs.if_it_fits.layout import (
    B_AWAKE,
    B_CARDS,
    B_FRONT,
    B_PRIN,
    B_SLEEP,
    B_TOYS,
    N_CALM,
    N_DECS,
    N_DONE,
    N_M,
    N_NROOT,
    N_ROOTS,
)
from card_envs.if_it_fits.parts.scratch import (
    DQ,
    NOW,
    PTS,
    T_CARD,
    T_NONE,
    TMP,
    TMP2,
    TOYS,
)
from card_envs.if_it_fits.queries import (
    around,
    box_allows,
    box_points,
    box_value,
    card_box,
    card_open,
    find,
    fits,
    sleep_dir_ok,
    slots_opened,
)

ACTION_FEATURES = ("legal", "row", "col", "rot", "size", "joins", "value", "gain", "open",
                   "closes", "toys", "match", "mine", "others", "allowed", "cat_slots",
                   "points", "opp_points")
NF = len(ACTION_FEATURES)
(I_LEGAL, I_ROW, I_COL, I_ROT, I_SIZE, I_JOINS, I_VALUE, I_GAIN, I_OPEN, I_CLOSES, I_TOYS,
 I_MATCH, I_MINE, I_OTHERS, I_ALLOWED, I_CATSLOTS, I_POINTS, I_OPP) = range(NF)


# --- the consequences of one action --------------------------------------------------------
@njit(cache=True)
def _copy(W: np.ndarray, src: int, dst: int) -> None:
    """Row ``src`` of ``W`` into row ``dst``."""
    for x in range(L.BOX_ROW):
        W[dst, x] = W[src, x]


@njit(cache=True)
def _shut(scfg: np.ndarray, W: np.ndarray, P: np.ndarray, r: int, dec: int) -> int:
    """Box ``r`` loses ``dec`` open sides (a card or a sleeping cat now faces them): its point
    changes go to DQ; 1 if that closes it."""
    n = scfg[K.C_PLAYERS]
    T = P.shape[0] - 3
    _copy(W, r, T + TMP2)
    W[T + TMP2, B_FRONT] -= dec
    box_points(W, T + TMP2, n, scfg[L.CF_ADV], P, T + PTS)
    for q in range(n):
        P[T + DQ, q] += P[T + PTS, q] - P[r, q]
    return 1 if W[T + TMP2, B_FRONT] == 0 else 0


@njit(cache=True)
def _info(st: np.ndarray, scfg: np.ndarray, W: np.ndarray, Nb: np.ndarray, i: int) -> None:
    """``Nb[i]``: what surrounds the empty cell ``i`` (``queries.around``), unless there."""
    if not Nb[i, N_DONE]:
        around(st, scfg, W, i, Nb)


@njit(cache=True)
def _finish(scfg: np.ndarray, W: np.ndarray, P: np.ndarray, gain: float, closes: int, r: int,
            tc: int, res: np.ndarray) -> None:
    """Box TMP is the target box after the action (it was box ``r``; -1 for a new card whose
    merged boxes are already in ``gain`` and DQ), ``tc`` its added toys in TOYS: its points,
    value, cats and the point changes into ``res`` (cleared first)."""
    n = scfg[K.C_PLAYERS]
    T = P.shape[0] - 3
    t = T + TMP
    for f in range(NF):
        res[f] = 0.0
    if r >= 0:
        gain -= box_value(W, r)
        for q in range(n):
            P[T + DQ, q] -= P[r, q]
        closes += 1 if W[t, B_FRONT] == 0 and W[r, B_FRONT] > 0 else 0
    else:
        closes += 1 if W[t, B_FRONT] == 0 else 0
    box_points(W, t, n, scfg[L.CF_ADV], P, T + PTS)
    for q in range(n):
        P[T + DQ, q] += P[T + PTS, q]
    res[I_SIZE] = W[t, B_CARDS] / 10.0
    res[I_VALUE] = box_value(W, t) / 10.0
    res[I_GAIN] = (gain + box_value(W, t)) / 5.0
    res[I_OPEN] = W[t, B_FRONT] / 4.0
    res[I_CLOSES] = closes / 2.0
    mine = W[t, B_AWAKE] + W[t, B_SLEEP]
    others = W[t, B_PRIN]
    for q in range(1, n):
        others += W[t, B_AWAKE + q] + W[t, B_SLEEP + q]
    res[I_MINE] = mine / 5.0
    res[I_OTHERS] = others / 5.0
    res[I_ALLOWED] = 1.0 if box_allows(W, t, 0, n) else 0.0
    res[I_POINTS] = P[T + DQ, 0] / 5.0
    before = P[T + NOW, 1]
    after = before + P[T + DQ, 1]
    for q in range(2, n):
        before = max(before, P[T + NOW, q])
        after = max(after, P[T + NOW, q] + P[T + DQ, q])
    res[I_OPP] = (after - before) / 5.0
    best = max(W[t, B_TOYS], max(W[t, B_TOYS + 1], W[t, B_TOYS + 2]))
    added = match = 0
    for k in range(3):
        added += W[T + TOYS, tc + k]
        if W[t, B_TOYS + k] == best:
            match = max(match, W[T + TOYS, tc + k])
    res[I_TOYS] = added / 3.0
    res[I_MATCH] = match / 3.0


@njit(cache=True)
def where(scfg: np.ndarray, i: int, half: float, res: np.ndarray) -> None:
    """Row and column of cell ``i`` (``half`` = 0.5 for the slot below it) into ``res``."""
    C = scfg[L.CF_COLS]
    res[I_ROW] = (i // C + half) / (scfg[L.CF_ROWS] - 1)
    res[I_COL] = (i % C) / (C - 1)


@njit(cache=True)
def eval_card(st: np.ndarray, scfg: np.ndarray, W: np.ndarray, P: np.ndarray, Nb: np.ndarray,
              i: int, o: int, tc: int, sp: int, cat: bool, res: np.ndarray) -> None:
    """A card with open sides ``o`` (after rotation), toys ``tc`` (in TOYS) and ``sp``
    sprayers laid in the empty cell ``i`` (``queries.card_box``: the boxes it joins, the open
    sides it covers). ``cat``: a cat step follows (a hand card)."""
    n = scfg[K.C_PLAYERS]
    T = P.shape[0] - 3
    _info(st, scfg, W, Nb, i)
    joined = card_box(W, Nb, i, o, W[T + TOYS, tc], W[T + TOYS, tc + 1], W[T + TOYS, tc + 2],
                      sp, T + TMP)
    for q in range(n):
        P[T + DQ, q] = 0.0
    gain = 0.0
    closes = nj = 0
    for k in range(Nb[i, N_M]):
        r = Nb[i, N_ROOTS + k]
        if joined >> k & 1:
            nj += 1
            gain -= box_value(W, r)
            for q in range(n):
                P[T + DQ, q] -= P[r, q]
        else:
            closes += _shut(scfg, W, P, r, Nb[i, N_DECS + k])
    _finish(scfg, W, P, gain, closes, -1, tc, res)
    res[I_JOINS] = nj / 2.0
    slots = 0
    if cat and st[L.S_SUPPLY] > 0 and res[I_ALLOWED] > 0:  # new slots north / south of it
        slots = slots_opened(st, scfg, i, o)
    res[I_CATSLOTS] = slots / 2.0
    where(scfg, i, 0.0, res)


@njit(cache=True)
def eval_sleeper(st: np.ndarray, scfg: np.ndarray, W: np.ndarray, P: np.ndarray,
                 Nb: np.ndarray, i: int, jd: int, res: np.ndarray) -> None:
    """The observer's sleeping cat in the empty cell ``i``, joining the box of the card in
    direction ``jd`` (which shows it an open side) and shutting every open side facing it
    (``parts/board.place_sleeper``)."""
    T = P.shape[0] - 3
    _info(st, scfg, W, Nb, i)
    R = Nb[i, N_NROOT + jd]
    for q in range(scfg[K.C_PLAYERS]):
        P[T + DQ, q] = 0.0
    _copy(W, R, T + TMP)
    W[T + TMP, B_SLEEP] += 1
    closes = 0
    for k in range(Nb[i, N_M]):
        r = Nb[i, N_ROOTS + k]
        if r == R:
            W[T + TMP, B_FRONT] -= Nb[i, N_DECS + k]
        else:
            closes += _shut(scfg, W, P, r, Nb[i, N_DECS + k])
    _finish(scfg, W, P, 0.0, closes, R, T_NONE, res)
    where(scfg, i, 0.0, res)


@njit(cache=True)
def eval_box(scfg: np.ndarray, W: np.ndarray, P: np.ndarray, r: int, col: int, delta: int,
              prin: int, tc: int, res: np.ndarray) -> None:
    """Box ``r`` with counter ``col`` changed by ``delta`` (a cat comes or goes), ``prin``
    Princesses more and the toys ``tc`` (in TOYS) added (a special toy card on a slot)."""
    T = P.shape[0] - 3
    _copy(W, r, T + TMP)
    W[T + TMP, col] += delta
    W[T + TMP, B_PRIN] += prin
    for k in range(3):
        W[T + TMP, B_TOYS + k] += W[T + TOYS, tc + k]
    for q in range(scfg[K.C_PLAYERS]):
        P[T + DQ, q] = 0.0
    _finish(scfg, W, P, 0.0, 0, r, tc, res)


@njit(cache=True)
def eval_princess(st: np.ndarray, scfg: np.ndarray, W: np.ndarray, P: np.ndarray, a: int,
                  res: np.ndarray) -> None:
    """A Princess onto the cat of action ``a`` (a slot ``T + s`` or a sleeping cat's cell):
    the cat goes back to its owner."""
    T = P.shape[0] - 3
    if a >= T:
        owner = st[scfg[L.CF_O_SLOT] + a - T] - 1
        eval_box(scfg, W, P, find(st, scfg, a - T), B_AWAKE + owner, -1, 1, T_NONE, res)
        where(scfg, a - T, 0.5, res)
    else:
        owner = -st[scfg[L.CF_O_CELL] + a] - 1
        eval_box(scfg, W, P, find(st, scfg, a), B_SLEEP + owner, -1, 1, T_NONE, res)
        where(scfg, a, 0.0, res)


# --- per action ----------------------------------------------------------------------------
@njit(cache=True)
def keep(res: np.ndarray, cand: np.ndarray, found: bool) -> bool:
    """Keep ``cand`` in ``res`` if it is the first option or has more ``points``."""
    if not found or cand[I_POINTS] > res[I_POINTS]:
        for f in range(NF):
            res[f] = cand[f]
    return True


@njit(cache=True)
def card(st: np.ndarray, scfg: np.ndarray, W: np.ndarray, P: np.ndarray, Nb: np.ndarray,
          i: int, cid: int, r: int, cat: bool, res: np.ndarray) -> None:
    """Card ``cid`` turned ``r`` laid in cell ``i`` (:func:`eval_card`)."""
    T = P.shape[0] - 3
    tb = L.CF_TABLE + cid * L.FIELDS
    for k in range(3):
        W[T + TOYS, T_CARD + k] = scfg[tb + L.F_BALL + k]
    eval_card(st, scfg, W, P, Nb, i, card_open(scfg, cid, r), T_CARD, scfg[tb + L.F_SPRAY],
              cat, res)
    res[I_ROT] = r


@njit(cache=True)
def best_rot(st: np.ndarray, scfg: np.ndarray, W: np.ndarray, P: np.ndarray, Nb: np.ndarray,
              i: int, cid: int, strict: bool, cat: bool, res: np.ndarray, cand: np.ndarray,
              found: bool) -> bool:
    """Card ``cid`` in cell ``i``: its legal rotations (``strict``: the advanced
    no-wall-to-wall rule), the best kept in ``res``; whether an option was found so far."""
    _info(st, scfg, W, Nb, i)
    for r in range(2):
        if not strict or fits(st, scfg, i, card_open(scfg, cid, r)):
            if not Nb[i, N_CALM]:
                card(st, scfg, W, P, Nb, i, cid, r, cat, cand)
                found = keep(res, cand, found)
            elif not found or res[I_POINTS] < 0:  # it has 0 points: evaluated only if kept
                card(st, scfg, W, P, Nb, i, cid, r, cat, res)
                found = True
    return found


@njit(cache=True)
def best_sleep(st: np.ndarray, scfg: np.ndarray, W: np.ndarray, P: np.ndarray, Nb: np.ndarray,
               i: int, res: np.ndarray, cand: np.ndarray, found: bool) -> bool:
    """The observer's sleeping cat in cell ``i``: its legal directions, the best in ``res``."""
    _info(st, scfg, W, Nb, i)
    for d in range(4):
        if sleep_dir_ok(st, scfg, 0, i, d):
            if not Nb[i, N_CALM]:
                eval_sleeper(st, scfg, W, P, Nb, i, d, cand)
                found = keep(res, cand, found)
            elif not found or res[I_POINTS] < 0:  # as in best_rot
                eval_sleeper(st, scfg, W, P, Nb, i, d, res)
                found = True
    return found
