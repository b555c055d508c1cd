"""Action-aligned features of an If It Fits observation (numba and numpy only: no torch).

A card laid in cell ``i`` is worth what it does to the boxes around ``i``: which boxes it joins,
whether it shuts or closes one, which toys it adds to the box's leading kind, which cat slots it
opens, how the points change. A plain MLP on the flat observation has to rebuild the boxes from
the open-side plane to see that. :func:`fill` (the kernel of :mod:`card_envs.core.features`)
computes it from one observation row alone: it **replays the observed table through the
engine's own board kernels** (``place_card``, ``place_sleeper``, ``set_slot``, in the order of
``parts/board.rebuild``) into a scratch state whose config holds the observed card faces
(``parts/scratch.py``), so the boxes, open sides, cat counters, slots and the frontier are the
engine's; ``legal`` is the engine's ``rules.legal_mask`` of that state, and every rule (where
things may go, the boxes a card joins or shuts, the cat rule, what a box scores) is asked of
the rule queries (:mod:`card_envs.if_it_fits.queries`). Seats are relative to the observer
(the observer is seat 0).

"Points now" are the points each seat would get if the game were scored now (the rules'
scoring: value of a box = most frequent toy kind - sprayers, doubled when closed; the cat
majority with awake cats; +1 per extra cat in the basic game), per box: ``queries.box_points``.

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
The observed table's replay, boxes and points now are in ``parts/scratch.py``, what one action
does to them in ``parts/estimate.py``; this module picks the actions to evaluate.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from card_envs.core import kernels as K
from card_envs.core.jit import njit
from card_envs.if_it_fits import layout as L
from card_envs.if_it_fits.layout import B_AWAKE, B_FRONT, B_SLEEP
from card_envs.if_it_fits.parts.estimate import (
    ACTION_FEATURES,
    I_LEGAL,
    I_TOYS,
    NF,
    best_rot,
    best_sleep,
    card,
    eval_box,
    eval_card,
    eval_princess,
    eval_sleeper,
    keep,
    where,
)
from card_envs.if_it_fits.parts.scratch import (
    NOW,
    T_DRAWN,
    T_NONE,
    TOYS,
    scratch,
    sizes,
    table_boxes,
)
from card_envs.if_it_fits.queries import (
    any_fit,
    find,
    open_nbr,
    sleep_dir_ok,
    start_end_cell,
    start_fit,
    toy_slot_ok,
)
from card_envs.if_it_fits.rules import legal_mask

__all__ = ["ACTION_FEATURES", "GLOBAL_FEATURES", "POTENTIAL_GLOBAL", "dims", "fill",
           "potential"]

GLOBAL_FEATURES = ("points", "best_other", "lead", "boxes", "closed_boxes", "my_boxes",
                   "free_slots", "frontier", "sleep_cells", "supply", "hand", "pile", "end",
                   "to_act") + tuple(f"phase_{p}" for p in L.PHASES)
G_PHASE = GLOBAL_FEATURES.index("phase_" + L.PHASES[0])


def dims(game: Any) -> tuple[int, int]:
    """``(G, F)``: the same for every option of If It Fits (``A = game.num_actions``)."""
    return len(GLOBAL_FEATURES), NF


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
        best_rot(st, scfg, W, P, Nb, a, hand, strict, True, res, cand, False)
    elif ph == L.P_ROT or ph == L.P_START_ROT:
        card(st, scfg, W, P, Nb, st[L.S_SELCELL], hand if ph == L.P_ROT else start,
             a - B - L.A_ROT, ph == L.P_ROT, res)
    elif ph == L.P_TOY_CELL:
        eval_card(st, scfg, W, P, Nb, a, L.ALL_OPEN, T_DRAWN, 0, False, res)
    elif ph == L.P_PLAY:
        cid = st[L.S_HAND + a - B - L.A_HAND]
        if cid == scfg[L.CF_NC]:  # a Princess: every players' cat it may replace
            for s in range(T - scfg[L.CF_COLS]):
                if 1 <= st[scfg[L.CF_O_SLOT] + s] <= n:
                    eval_princess(st, scfg, W, P, T + s, cand)
                    found = keep(res, cand, found)
            for i in range(T):
                if -n <= st[scfg[L.CF_O_CELL] + i] <= -1:
                    eval_princess(st, scfg, W, P, i, cand)
                    found = keep(res, cand, found)
        else:
            tight = adv and any_fit(st, scfg, cid)  # else the rule is lifted for this card
            for k in range(st[L.S_FRONTN]):
                found = best_rot(st, scfg, W, P, Nb, st[fl + k], cid, tight, True, res, cand,
                                 found)
    elif ph == L.P_DISCARD:
        cid = st[L.S_HAND + a - B - L.A_HAND]
        tb = L.CF_TABLE + cid * L.FIELDS
        if cid != scfg[L.CF_NC]:
            res[I_TOYS] = (scfg[tb + L.F_BALL] + scfg[tb + L.F_BALL + 1]
                           + scfg[tb + L.F_BALL + 2]) / 3.0
    elif (ph == L.P_CAT and a < B) or ph == L.P_TOY_SLOT:
        cat = ph == L.P_CAT
        eval_box(scfg, W, P, find(st, scfg, a - T), B_AWAKE, 1 if cat else 0, 0,
                 T_NONE if cat else T_DRAWN, res)
        where(scfg, a - T, 0.5, res)
    elif ph == L.P_PRINCESS:
        eval_princess(st, scfg, W, P, a, res)
    elif ph == L.P_SLEEP_CELL:
        best_sleep(st, scfg, W, P, Nb, a, res, cand, False)
    elif ph == L.P_SLEEP_DIR:
        eval_sleeper(st, scfg, W, P, Nb, st[L.S_SELCELL], a - B - L.A_DIR, res)
    elif ph == L.P_TURN and a == B + L.A_SLEEP:
        for k in range(st[L.S_FRONTN]):
            found = best_sleep(st, scfg, W, P, Nb, st[fl + k], res, cand, found)
    elif ph == L.P_START_END:
        best_rot(st, scfg, W, P, Nb, start_end_cell(st, scfg, a - B - L.A_END), start, strict,
                 False, res, cand, False)
    elif ph == L.P_START_CARD:
        cid = scfg[L.CF_NB] + a - B - L.A_START
        C = scfg[L.CF_COLS]
        if st[L.S_STARTN] == 0:
            best_rot(st, scfg, W, P, Nb, (scfg[L.CF_ROWS] // 2) * C + C // 2, cid, False, False,
                     res, cand, False)
            return
        ok = start_fit(st, scfg, a - B - L.A_START)  # else the advanced rule is lifted
        for e in range(2):
            i = start_end_cell(st, scfg, e)
            if i >= 0:
                found = best_rot(st, scfg, W, P, Nb, i, cid, adv and ok, False, res, cand, found)


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
    for s in range(T - scfg[L.CF_COLS]):
        free += toy_slot_ok(st, scfg, 0, s)
    for k in range(st[L.S_FRONTN]):  # sleep_cell_ok on the frontier (empty cells), unrolled
        i = st[scfg[L.CF_O_FLIST] + k]
        ok = False
        for d in range(4):
            ok |= open_nbr(st, scfg, i) != 0 and sleep_dir_ok(st, scfg, 0, i, d)
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
    nw = (T + 3) * L.BOX_ROW
    buf = np.zeros(ns + nc + nw + T * L.NEAR_ROW + A, np.int32)  # one allocation, sliced
    st, scfg = buf[:ns], buf[ns:ns + nc]
    W = buf[ns + nc:ns + nc + nw].reshape((T + 3, L.BOX_ROW))
    Nb = buf[ns + nc + nw:ns + nc + nw + T * L.NEAR_ROW].reshape((T, L.NEAR_ROW))
    mask = buf[buf.size - A:]
    fbuf = np.zeros((T + 3) * L.MAX_PLAYERS + 2 * NF)  # P, then res and cand
    P = fbuf[:(T + 3) * L.MAX_PLAYERS].reshape((T + 3, L.MAX_PLAYERS))
    res, cand = fbuf[fbuf.size - 2 * NF:fbuf.size - NF], fbuf[fbuf.size - NF:]
    scratch(obs, cfg, st, scfg)
    table_boxes(st, scfg, W, P)
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
    for :class:`card_envs.rl.sb3.shaping.PotentialShaping`): the global feature ``lead``, the
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
