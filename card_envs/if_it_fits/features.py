"""Action-aligned features of an If It Fits observation (numba and numpy only: no torch).

A card laid in cell ``i`` is worth what it does to the boxes around ``i``: which boxes it joins,
whether it shuts or closes one, which toys it adds to the box's leading kind, which cat slots it
opens, how the points change. A plain MLP on the flat observation has to rebuild the boxes from
the open-side plane to see that. :func:`fill` (the kernel of :mod:`card_envs.core.features`)
computes it from one observation row alone: it **replays the observed table through the
engine's own board kernels** (``place_card``, ``place_sleeper``, ``set_slot``, in the order of
``board.rebuild``) into a scratch state whose config holds the observed card faces
(:func:`_scratch`), so the boxes, open sides, cat counters, slots and the frontier are the
engine's; ``legal`` is the engine's ``rules.legal_mask`` of that state, and the queries
(``fits``, ``any_fit``, ``card_cell_ok``, ``sleep_dir_ok``, ``cat_allowed``, ``start_end_cell``)
are the rules' own. Seats are relative to the observer (the observer is seat 0).

"Points now" are the points each seat would get if the game were scored now (the rules'
scoring: value of a box = most frequent toy kind - sprayers, doubled when closed; the cat
majority with awake cats; +1 per extra cat in the basic game), per box in :func:`_box_points`.

Per action (``ACTION_FEATURES``, ``F = 18``; 0 for illegal actions). The *target box* is the
box the action puts something into, as it is after the action:

| name        | meaning                                                                    |
|-------------|----------------------------------------------------------------------------|
| ``legal``   | the observer is to act and the action is legal (= the action mask)         |
| ``row``     | row of the cell the action acts on / (rows-1); a slot: its north row + 0.5 |
| ``col``     | its column / (cols-1)                                                      |
| ``rot``     | the reported card placement is turned 180 degrees (1/0)                    |
| ``size``    | cards in the target box / 10                                               |
| ``joins``   | existing boxes the placed card joins into the target box / 2               |
| ``value``   | the target box's value (toys of its leading kind - sprayers, x2 closed) / 10 |
| ``gain``    | ``value`` - the value(s) of the box(es) before the action, / 5            |
| ``open``    | open sides of the target box facing an empty cell or the edge / 4          |
| ``closes``  | boxes the action closes (the target box, boxes whose open side it shuts) / 2 |
| ``toys``    | toy icons the placed card / special toy card adds / 3                      |
| ``match``   | of those, icons of the target box's leading kind / 3                       |
| ``mine``    | the observer's cats (awake + sleeping) in the target box / 5               |
| ``others``  | the other seats' cats and Princesses in the target box / 5                 |
| ``allowed`` | the cat rule lets the observer's cat into the target box (1/0)             |
| ``cat_slots`` | slots of the placed card the observer's awake cat may take next (what the |
|             | ``cat`` step offers; 0 with an empty supply) / 2                           |
| ``points``  | change of the observer's points now / 5                                    |
| ``opp_points`` | change of the best other seat's points now / 5                          |

What each action reports, by phase (the action encoding: ``card_envs.if_it_fits.env``):

* ``cell`` cell / ``rotation`` / ``toy_cell`` cell / ``start_rotation``: laying the selected
  hand card, the start card or the drawn special toy card (open on all sides) there (only a
  hand card is followed by a ``cat`` step, so only it has ``cat_slots``); where the
  rotation comes next (``cell``, ``start_end``) the legal rotation with the highest ``points``
  (the first on ties) is reported, ``rot`` telling which.
* ``play`` hand position: a box card, its legal placement (cell and rotation, as the ``cell``
  and ``rotation`` steps would allow) with the highest ``points``; a Princess, its best
  replacement. ``start_card``: the start card's best placement (ends and rotations).
* ``cat`` slot: an awake cat of the observer there; ``toy_slot`` slot: the drawn special toy
  card there; ``princess`` slot / cell: a Princess replacing that cat (it goes home).
* ``sleep_cell`` cell (its best legal direction) / ``sleep_dir``: the sleeping cat there,
  joining that neighbour's box and shutting every open side it faces; ``turn`` "sleeping cat":
  the best sleeping-cat placement; "draw": nothing is known (only ``legal``).
* ``discard`` hand position: ``toys`` of the card (nothing changes on the table); ``skip`` and
  ``pass``: only ``legal``.

Global features (``GLOBAL_FEATURES``): the observer's points now / 10, the best other seat's /
10, the lead / 10, boxes / 30, closed boxes / 20, boxes with an observer cat / 5, free cat slots
the observer's cat may take / 10, the frontier (empty cells next to a card) / 20, cells for the
observer's sleeping cat / 20, the observer's supply / 5 and hand size / 3, the pile / its
maximum, the end trigger, whether the observer is to act, then the phase one-hot (16).

Everything is a pure function of the observation (so unchanged by ``env.resample``); every
variant (players, table, advanced) and custom decks (the card faces come from the observation).
The observed table's replay, boxes and points now are in
:mod:`card_envs.if_it_fits.feature_table`; this module evaluates the actions on them.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from card_envs.core import kernels as K
from card_envs.core.jit import njit
from card_envs.if_it_fits import layout as L
from card_envs.if_it_fits.board import (
    card_open,
    cat_allowed,
    find,
    neighbour,
)
from card_envs.if_it_fits.feature_table import (
    B_AWAKE,
    B_CARDS,
    B_FRONT,
    B_PRIN,
    B_SLEEP,
    B_SPRAY,
    B_TOYS,
    DQ,
    N_CALM,
    N_DECS,
    N_DONE,
    N_EMPTY,
    N_M,
    N_NROOT,
    N_ROOTS,
    NB_ROW,
    NOW,
    PTS,
    T_CARD,
    T_DRAWN,
    T_NONE,
    TMP,
    TMP2,
    TOYS,
    box_points,
    box_value,
    scratch,
    sizes,
    table_boxes,
)
from card_envs.if_it_fits.moves import (
    any_fit,
    card_cell_ok,
    fits,
    sleep_dir_ok,
    start_end_cell,
)
from card_envs.if_it_fits.rules import legal_mask

ACTION_FEATURES = ("legal", "row", "col", "rot", "size", "joins", "value", "gain", "open",
                   "closes", "toys", "match", "mine", "others", "allowed", "cat_slots",
                   "points", "opp_points")
GLOBAL_FEATURES = ("points", "best_other", "lead", "boxes", "closed_boxes", "my_boxes",
                   "free_slots", "frontier", "sleep_cells", "supply", "hand", "pile", "end",
                   "to_act") + tuple(f"phase_{p}" for p in L.PHASES)
NF = len(ACTION_FEATURES)
(I_LEGAL, I_ROW, I_COL, I_ROT, I_SIZE, I_JOINS, I_VALUE, I_GAIN, I_OPEN, I_CLOSES, I_TOYS,
 I_MATCH, I_MINE, I_OTHERS, I_ALLOWED, I_CATSLOTS, I_POINTS, I_OPP) = range(NF)
G_PHASE = GLOBAL_FEATURES.index("phase_" + L.PHASES[0])


def dims(game: Any) -> tuple[int, int]:
    """``(G, F)``: the same for every option of If It Fits (``A = game.num_actions``)."""
    return len(GLOBAL_FEATURES), NF



# --- the consequences of one action --------------------------------------------------------
@njit(cache=True)
def _copy(W: np.ndarray, src: int, dst: int) -> None:
    """Row ``src`` of ``W`` into row ``dst``."""
    for x in range(NB_ROW):
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
    """``Nb[i]`` for the empty cell ``i`` (see ``N_*``), unless already there."""
    if Nb[i, N_DONE]:
        return
    cell, copen = scfg[L.CF_O_CELL], scfg[L.CF_O_COPEN]
    m = em = 0
    for d in range(4):
        j = neighbour(scfg, i, d)
        Nb[i, N_NROOT + d] = -1
        if j < 0 or st[cell + j] == 0:
            em |= 1 << d
        elif st[cell + j] > 0 and st[copen + j] & (1 << ((d + 2) & 3)):
            r = find(st, scfg, j)
            Nb[i, N_NROOT + d] = r
            k = 0
            while k < m and Nb[i, N_ROOTS + k] != r:
                k += 1
            if k == m:
                Nb[i, N_ROOTS + k] = r
                Nb[i, N_DECS + k] = 0
                m += 1
            Nb[i, N_DECS + k] += 1
    calm = 1
    for k in range(m):
        for q in range(scfg[K.C_PLAYERS]):
            calm &= W[Nb[i, N_ROOTS + k], B_AWAKE + q] == 0
    Nb[i, N_DONE], Nb[i, N_EMPTY], Nb[i, N_M], Nb[i, N_CALM] = 1, em, m, calm


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
    res[I_ALLOWED] = 1.0 if mine > 0 or others == 0 else 0.0
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
def _where(scfg: np.ndarray, i: int, half: float, res: np.ndarray) -> None:
    """Row and column of cell ``i`` (``half`` = 0.5 for the slot below it) into ``res``."""
    C = scfg[L.CF_COLS]
    res[I_ROW] = (i // C + half) / (scfg[L.CF_ROWS] - 1)
    res[I_COL] = (i % C) / (C - 1)


@njit(cache=True)
def _eval_card(st: np.ndarray, scfg: np.ndarray, W: np.ndarray, P: np.ndarray, Nb: np.ndarray,
               i: int, o: int, tc: int, sp: int, cat: bool, res: np.ndarray) -> None:
    """A card with open sides ``o`` (after rotation), toys ``tc`` (in TOYS) and ``sp``
    sprayers laid in the empty cell ``i``, as ``board.place_card`` lays it: it joins the
    boxes whose card shows it an open side where it is open too and covers every open side
    facing it. ``cat``: a cat step follows (a hand card)."""
    n = scfg[K.C_PLAYERS]
    T = P.shape[0] - 3
    t = T + TMP
    _info(st, scfg, W, Nb, i)
    for x in range(NB_ROW):
        W[t, x] = 0
    for d in range(4):
        W[t, B_FRONT] += (o >> d) & (Nb[i, N_EMPTY] >> d) & 1  # open to empty cells, the edge
    W[t, B_CARDS] = 1
    for k in range(3):
        W[t, B_TOYS + k] = W[T + TOYS, tc + k]
    W[t, B_SPRAY] = sp
    for q in range(n):
        P[T + DQ, q] = 0.0
    gain = 0.0
    closes = nj = 0
    for k in range(Nb[i, N_M]):
        r = Nb[i, N_ROOTS + k]
        joined = False
        for d in range(4):
            if o & (1 << d) and Nb[i, N_NROOT + d] == r:
                joined = True
        if joined:
            nj += 1
            for x in range(NB_ROW):
                W[t, x] += W[r, x]
            W[t, B_FRONT] -= Nb[i, N_DECS + k]
            gain -= box_value(W, r)
            for q in range(n):
                P[T + DQ, q] -= P[r, q]
        else:
            closes += _shut(scfg, W, P, r, Nb[i, N_DECS + k])
    _finish(scfg, W, P, gain, closes, -1, tc, res)
    res[I_JOINS] = nj / 2.0
    slots = 0
    if cat and st[L.S_SUPPLY] > 0 and res[I_ALLOWED] > 0:  # new slots north / south of it
        if o & L.OPEN_N and Nb[i, N_NROOT] >= 0:
            slots += 1
        if o & L.OPEN_S and Nb[i, N_NROOT + 2] >= 0:
            slots += 1
    res[I_CATSLOTS] = slots / 2.0
    _where(scfg, i, 0.0, res)


@njit(cache=True)
def _eval_sleeper(st: np.ndarray, scfg: np.ndarray, W: np.ndarray, P: np.ndarray,
                  Nb: np.ndarray, i: int, jd: int, res: np.ndarray) -> None:
    """The observer's sleeping cat in the empty cell ``i``, joining the box of the card in
    direction ``jd`` (which shows it an open side) and shutting every open side facing it
    (``board.place_sleeper``)."""
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
    _where(scfg, i, 0.0, res)


@njit(cache=True)
def _eval_box(scfg: np.ndarray, W: np.ndarray, P: np.ndarray, r: int, col: int, delta: int,
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
def _eval_princess(st: np.ndarray, scfg: np.ndarray, W: np.ndarray, P: np.ndarray, a: int,
                   res: np.ndarray) -> None:
    """A Princess onto the cat of action ``a`` (a slot ``T + s`` or a sleeping cat's cell):
    the cat goes back to its owner."""
    T = P.shape[0] - 3
    if a >= T:
        owner = st[scfg[L.CF_O_SLOT] + a - T] - 1
        _eval_box(scfg, W, P, find(st, scfg, a - T), B_AWAKE + owner, -1, 1, T_NONE, res)
        _where(scfg, a - T, 0.5, res)
    else:
        owner = -st[scfg[L.CF_O_CELL] + a] - 1
        _eval_box(scfg, W, P, find(st, scfg, a), B_SLEEP + owner, -1, 1, T_NONE, res)
        _where(scfg, a, 0.0, res)


# --- per action ----------------------------------------------------------------------------
@njit(cache=True)
def _keep(res: np.ndarray, cand: np.ndarray, found: bool) -> bool:
    """Keep ``cand`` in ``res`` if it is the first option or has more ``points``."""
    if not found or cand[I_POINTS] > res[I_POINTS]:
        for f in range(NF):
            res[f] = cand[f]
    return True


@njit(cache=True)
def _card(st: np.ndarray, scfg: np.ndarray, W: np.ndarray, P: np.ndarray, Nb: np.ndarray,
          i: int, cid: int, r: int, cat: bool, res: np.ndarray) -> None:
    """Card ``cid`` turned ``r`` laid in cell ``i`` (:func:`_eval_card`)."""
    T = P.shape[0] - 3
    tb = L.CF_TABLE + cid * L.FIELDS
    for k in range(3):
        W[T + TOYS, T_CARD + k] = scfg[tb + L.F_BALL + k]
    _eval_card(st, scfg, W, P, Nb, i, card_open(scfg, cid, r), T_CARD, scfg[tb + L.F_SPRAY],
               cat, res)
    res[I_ROT] = r


@njit(cache=True)
def _best_rot(st: np.ndarray, scfg: np.ndarray, W: np.ndarray, P: np.ndarray, Nb: np.ndarray,
              i: int, cid: int, strict: bool, cat: bool, res: np.ndarray, cand: np.ndarray,
              found: bool) -> bool:
    """Card ``cid`` in cell ``i``: its legal rotations (``strict``: the advanced
    no-wall-to-wall rule), the best kept in ``res``; whether an option was found so far."""
    _info(st, scfg, W, Nb, i)
    for r in range(2):
        if not strict or fits(st, scfg, i, card_open(scfg, cid, r)):
            if not Nb[i, N_CALM]:
                _card(st, scfg, W, P, Nb, i, cid, r, cat, cand)
                found = _keep(res, cand, found)
            elif not found or res[I_POINTS] < 0:  # it has 0 points: evaluated only if kept
                _card(st, scfg, W, P, Nb, i, cid, r, cat, res)
                found = True
    return found


@njit(cache=True)
def _best_sleep(st: np.ndarray, scfg: np.ndarray, W: np.ndarray, P: np.ndarray, Nb: np.ndarray,
                i: int, res: np.ndarray, cand: np.ndarray, found: bool) -> bool:
    """The observer's sleeping cat in cell ``i``: its legal directions, the best in ``res``."""
    _info(st, scfg, W, Nb, i)
    for d in range(4):
        if sleep_dir_ok(st, scfg, 0, i, d):
            if not Nb[i, N_CALM]:
                _eval_sleeper(st, scfg, W, P, Nb, i, d, cand)
                found = _keep(res, cand, found)
            elif not found or res[I_POINTS] < 0:  # as in _best_rot
                _eval_sleeper(st, scfg, W, P, Nb, i, d, res)
                found = True
    return found


@njit(cache=True)
def _action(st: np.ndarray, scfg: np.ndarray, W: np.ndarray, P: np.ndarray, Nb: np.ndarray,
            ph: int, a: int, res: np.ndarray, cand: np.ndarray) -> None:
    """The features of the legal action ``a`` in phase ``ph`` into ``res`` (zeros before)."""
    T = scfg[L.CF_ROWS] * scfg[L.CF_COLS]
    B = 2 * T - scfg[L.CF_COLS]
    n = scfg[K.C_PLAYERS]
    adv = scfg[L.CF_ADV] != 0
    strict = adv and st[L.S_RELAX] == 0
    hand = st[L.S_HAND + st[L.S_SEL]] if st[L.S_SEL] >= 0 else -1
    start = scfg[L.CF_NB] + st[L.S_SELSTART]
    fl = scfg[L.CF_O_FLIST]
    found = False
    if ph == L.P_CELL:
        _best_rot(st, scfg, W, P, Nb, a, hand, strict, True, res, cand, False)
    elif ph == L.P_ROT or ph == L.P_START_ROT:
        _card(st, scfg, W, P, Nb, st[L.S_SELCELL], hand if ph == L.P_ROT else start,
              a - B - L.A_ROT, ph == L.P_ROT, res)
    elif ph == L.P_TOY_CELL:
        _eval_card(st, scfg, W, P, Nb, a, L.ALL_OPEN, T_DRAWN, 0, False, res)
    elif ph == L.P_PLAY:
        cid = st[L.S_HAND + a - B - L.A_HAND]
        if cid == scfg[L.CF_NC]:  # a Princess: every players' cat it may replace
            for s in range(T - scfg[L.CF_COLS]):
                if 1 <= st[scfg[L.CF_O_SLOT] + s] <= n:
                    _eval_princess(st, scfg, W, P, T + s, cand)
                    found = _keep(res, cand, found)
            for i in range(T):
                if -n <= st[scfg[L.CF_O_CELL] + i] <= -1:
                    _eval_princess(st, scfg, W, P, i, cand)
                    found = _keep(res, cand, found)
        else:
            tight = adv and any_fit(st, scfg, cid)  # else the rule is lifted for this card
            for k in range(st[L.S_FRONTN]):
                found = _best_rot(st, scfg, W, P, Nb, st[fl + k], cid, tight, True, res, cand,
                                  found)
    elif ph == L.P_DISCARD:
        cid = st[L.S_HAND + a - B - L.A_HAND]
        tb = L.CF_TABLE + cid * L.FIELDS
        if cid != scfg[L.CF_NC]:
            res[I_TOYS] = (scfg[tb + L.F_BALL] + scfg[tb + L.F_BALL + 1]
                           + scfg[tb + L.F_BALL + 2]) / 3.0
    elif (ph == L.P_CAT and a < B) or ph == L.P_TOY_SLOT:
        cat = ph == L.P_CAT
        _eval_box(scfg, W, P, find(st, scfg, a - T), B_AWAKE, 1 if cat else 0, 0,
                  T_NONE if cat else T_DRAWN, res)
        _where(scfg, a - T, 0.5, res)
    elif ph == L.P_PRINCESS:
        _eval_princess(st, scfg, W, P, a, res)
    elif ph == L.P_SLEEP_CELL:
        _best_sleep(st, scfg, W, P, Nb, a, res, cand, False)
    elif ph == L.P_SLEEP_DIR:
        _eval_sleeper(st, scfg, W, P, Nb, st[L.S_SELCELL], a - B - L.A_DIR, res)
    elif ph == L.P_TURN and a == B + L.A_SLEEP:
        for k in range(st[L.S_FRONTN]):
            found = _best_sleep(st, scfg, W, P, Nb, st[fl + k], res, cand, found)
    elif ph == L.P_START_END:
        _best_rot(st, scfg, W, P, Nb, start_end_cell(st, scfg, a - B - L.A_END), start, strict,
                  False, res, cand, False)
    elif ph == L.P_START_CARD:
        cid = scfg[L.CF_NB] + a - B - L.A_START
        C = scfg[L.CF_COLS]
        if st[L.S_STARTN] == 0:
            _best_rot(st, scfg, W, P, Nb, (scfg[L.CF_ROWS] // 2) * C + C // 2, cid, False, False,
                      res, cand, False)
            return
        ok = False  # the advanced rule is lifted if neither end allows it (rules._step_start_card)
        for e in range(2):
            i = start_end_cell(st, scfg, e)
            ok |= i >= 0 and card_cell_ok(st, scfg, i, cid, True)
        for e in range(2):
            i = start_end_cell(st, scfg, e)
            if i >= 0:
                found = _best_rot(st, scfg, W, P, Nb, i, cid, adv and ok, False, res, cand, found)


@njit(cache=True)
def _globals(obs: np.ndarray, st: np.ndarray, scfg: np.ndarray, W: np.ndarray, P: np.ndarray,
             x: int, y: int, glob: np.ndarray) -> None:
    """The global features (module docstring) into ``glob``."""
    n = scfg[K.C_PLAYERS]
    T = scfg[L.CF_ROWS] * scfg[L.CF_COLS]
    own = P[T + NOW, 0]
    best = P[T + NOW, 1]
    for q in range(2, n):
        best = max(best, P[T + NOW, q])
    boxes = closed = mine = free = sleep = 0
    for i in range(T):
        if st[scfg[L.CF_O_CELL] + i] > 0 and st[scfg[L.CF_O_PARENT] + i] == i:
            boxes += 1
            closed += W[i, B_FRONT] == 0
            mine += W[i, B_AWAKE] + W[i, B_SLEEP] > 0
    slotok, slot = scfg[L.CF_O_SLOTOK], scfg[L.CF_O_SLOT]
    for s in range(T - scfg[L.CF_COLS]):  # moves.toy_slot_ok, its cheap tests first
        if st[slotok + s] == 1 and st[slot + s] == 0:
            free += cat_allowed(st, scfg, 0, find(st, scfg, s))
    for k in range(st[L.S_FRONTN]):  # moves.sleep_cell_ok on the frontier (empty cells)
        i = st[scfg[L.CF_O_FLIST] + k]
        ok = False
        for d in range(4):
            ok |= st[scfg[L.CF_O_OPENNB] + i] != 0 and sleep_dir_ok(st, scfg, 0, i, d)
        sleep += ok
    vals = (own / 10.0, best / 10.0, (own - best) / 10.0, boxes / 30.0, closed / 20.0,
            mine / 5.0, free / 10.0, st[L.S_FRONTN] / 20.0, sleep / 20.0,
            obs[x + L.O_SEATS] / 5.0, obs[x + L.O_SEATS + n] / 3.0,
            obs[y + L.Y_PILE] / scfg[L.CF_PILEMAX], float(obs[y + L.Y_ENDTRIG]),
            1.0 if obs[y + L.Y_CUR] == 0 else 0.0)
    for k in range(len(vals)):
        glob[k] = vals[k]
    for p in range(len(L.PHASES)):
        glob[G_PHASE + p] = 1.0 if obs[y + L.Y_PHASE] == p else 0.0


@njit(cache=True)
def fill(obs: np.ndarray, cfg: np.ndarray, glob: np.ndarray, act: np.ndarray) -> None:
    """Write every entry of ``glob`` (``(G,)``) and ``act`` (``(F, A)``, feature-major) from
    one observation row ``obs`` and the game's ``cfg`` (module docstring)."""
    T = cfg[L.CF_ROWS] * cfg[L.CF_COLS]
    x = L.NPLANES * T + T - cfg[L.CF_COLS] + L.TOYREC * cfg[L.CF_NT]
    y = x + L.O_SEATS + 2 * cfg[K.C_PLAYERS]
    A = act.shape[1]
    ns, nc = sizes(cfg)
    nw = (T + 3) * NB_ROW
    buf = np.zeros(ns + nc + nw + T * (N_CALM + 1) + A, np.int32)  # one allocation, sliced
    st, scfg = buf[:ns], buf[ns:ns + nc]
    W = buf[ns + nc:ns + nc + nw].reshape((T + 3, NB_ROW))
    Nb = buf[ns + nc + nw:ns + nc + nw + T * (N_CALM + 1)].reshape((T, N_CALM + 1))
    mask = buf[buf.size - A:]
    fbuf = np.zeros((T + 3) * L.MAX_PLAYERS + 2 * NF)  # P, then res and cand
    P = fbuf[:(T + 3) * L.MAX_PLAYERS].reshape((T + 3, L.MAX_PLAYERS))
    res, cand = fbuf[fbuf.size - 2 * NF:fbuf.size - NF], fbuf[fbuf.size - NF:]
    scratch(obs, cfg, st, scfg)
    table_boxes(obs, st, scfg, W, P)
    for k in range(3):
        W[T + TOYS, T_DRAWN + k] = obs[x + L.O_TOY + k]
    _globals(obs, st, scfg, W, P, x, y, glob)
    for f in range(NF):
        for a in range(A):
            act[f, a] = 0.0
    if obs[y + L.Y_CUR] != 0:
        return  # the observer is not to act: nothing is legal (as in its action mask)
    legal_mask(st, scfg, mask)
    for a in range(A):
        if mask[a]:
            for f in range(NF):
                res[f] = 0.0
            _action(st, scfg, W, P, Nb, obs[y + L.Y_PHASE], a, res, cand)
            res[I_LEGAL] = 1.0
            for f in range(NF):
                act[f, a] = res[f]


@functools.lru_cache(maxsize=8)
def _features_for(num_players: int) -> Any:
    from card_envs.core.features import Features
    from card_envs.if_it_fits.game import IfItFitsGame

    return Features(IfItFitsGame(num_players=num_players))


#: the global feature :func:`potential` returns (a trainer that has the features already reads
#: it from them instead of calling :func:`potential`)
POTENTIAL_GLOBAL = "lead"


def potential(obs: np.ndarray, num_players: int) -> np.ndarray:
    """Reward-shaping potential of observations ``(B, L)`` (the manifest's ``train.potential``,
    for :class:`card_envs.rl.shaping.PotentialShaping`): the global feature ``lead``, the
    observer's points now minus the best other seat's, / 10 (the final scoring applied to the
    table as it is: a game fact). 0 at the deal (no cat on the table, so no points). Default
    table and deck; ``ValueError`` for rows of another length."""
    n = int(num_players)
    fx = _features_for(n)
    x = np.asarray(obs)
    x = x.reshape(1, -1) if x.ndim == 1 else x
    if x.ndim != 2 or x.shape[1] != fx.obs_size:
        raise ValueError(f"{n}-seat If It Fits observations (default table and deck) of "
                         f"length {fx.obs_size} expected, got shape {np.shape(obs)}")
    glob = fx.split(fx.compute(x))[1]
    return glob[:, GLOBAL_FEATURES.index(POTENTIAL_GLOBAL)].astype(np.float64)
