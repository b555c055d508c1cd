"""The observed table replayed through the engine's own board code into a scratch engine state
(:func:`scratch`: what one observation shows, seats relative to the observer, who is seat 0),
so that the rule queries (:mod:`card_envs.if_it_fits.queries`) answer on it; and the features'
workspace: the boxes of that table and their points now (:func:`table_boxes`). Read by the
features (``features.py``, ``parts/estimate.py``) and the heuristic
(``card_envs.agents.if_it_fits``). Everything is read from the observation alone."""

from __future__ import annotations

import numpy as np

from card_envs.core import kernels as K
from card_envs.core.jit import njit
from card_envs.if_it_fits import layout as L
from card_envs.if_it_fits.parts.board import (
    add_cat,
    place_card,
    place_sleeper,
    set_catloc,
    set_slot,
)
from card_envs.if_it_fits.queries import box_counters, box_points, find

# The features' workspace of one observation, three arrays passed to every helper. ``W``
# (int32, T + 3 rows of ``BOX_ROW``): the box record (``B_*`` of the layout) of each box in the
# row of its union-find root; then the box being evaluated (TMP), a second one (TMP2) and toys
# (TOYS: a card's at 0, the drawn special toy card's at 3, none at 6). ``P`` (float64, T + 3
# rows): each root's points per seat, then the points now (NOW), a box's (PTS), the changes
# (DQ). ``Nb`` (int32, T rows of ``NEAR_ROW``): per empty cell, computed once when first
# needed, what surrounds it (``N_*`` of the layout, ``queries.around``).
TMP, TMP2, TOYS = 0, 1, 2  # + T: rows of W
NOW, PTS, DQ = 0, 1, 2  # + T: rows of P
T_CARD, T_DRAWN, T_NONE = 0, 3, 6  # in W's TOYS row


# --- the scratch state: the observed table replayed through the engine ----------------------
@njit(cache=True)
def _face(obs: np.ndarray, scfg: np.ndarray, cid: int, kind: int, bits: int, x: int,
          stride: int, spray: int) -> None:
    """Card ``cid`` of the scratch card table: ``kind``, open ``bits``, the toys at ``obs[x]``,
    ``obs[x + stride]``, ``obs[x + 2 stride]`` and ``spray`` sprayers."""
    tb = L.CF_TABLE + cid * L.FIELDS
    scfg[tb + L.F_KIND] = kind
    scfg[tb + L.F_OPEN] = bits
    for k in range(3):
        scfg[tb + L.F_BALL + k] = obs[x + k * stride]
    scfg[tb + L.F_SPRAY] = spray


@njit(cache=True)
def _row_face(obs: np.ndarray, scfg: np.ndarray, cid: int, kind: int, x: int) -> None:
    """Card ``cid`` from the observation's card row at ``x`` (a hand or start card)."""
    bits = 0
    for d in range(4):
        bits |= (1 << d) if obs[x + L.CR_SIDES + d] else 0
    _face(obs, scfg, cid, kind, bits, x + L.CR_TOYS, 1, obs[x + L.CR_SPRAY])


@njit(cache=True)
def scratch(obs: np.ndarray, cfg: np.ndarray, st: np.ndarray, scfg: np.ndarray) -> None:
    """Into the zeroed ``st`` and ``scfg``: an engine state (relative seats, observer = 0)
    holding what ``obs`` shows, under a config whose card table has the observed faces (sizes:
    :func:`sizes`): card ``i`` for the card in
    cell ``i`` (laid unturned: its observed sides), ``T + h`` for hand position ``h``, then the
    start cards (``CF_NB``), the special toy cards and the Princess (``CF_NC``). The derived
    arrays (boxes, counters, slots, frontier, cat locations) come from the board kernels, laid
    as ``board.rebuild`` lays them."""
    n, R, C, nt = cfg[K.C_PLAYERS], cfg[L.CF_ROWS], cfg[L.CF_COLS], cfg[L.CF_NT]
    T = R * C
    S = T - C
    X = L.NPLANES * T + S + L.TOYREC * nt
    Y = X + L.O_SEATS + 2 * n
    nb = T + L.HANDMAX
    scfg[:L.CF_TABLE] = cfg[:L.CF_TABLE]
    scfg[L.CF_NB] = nb
    scfg[L.CF_NC] = nb + L.NUM_START + nt
    for i in range(T):  # what board.clear_table sets apart from zeros
        st[cfg[L.CF_O_PARENT] + i] = i
        st[cfg[L.CF_O_SJOIN] + i] = -1
        st[cfg[L.CF_O_FPOS] + i] = -1
    for k in range(L.MAX_PLAYERS * L.CATS_EACH):
        st[L.S_CATLOC + k] = -1
    y0 = L.NPLANES * T + S
    for k in range(nt):
        _face(obs, scfg, nb + L.NUM_START + k, L.KIND_TOY, L.ALL_OPEN,
              y0 + L.TOYREC * k + L.TR_TOYS, 1, 0)
    # the replay of board.rebuild (cards, then sleeping cats, then slots), from the observation
    for i in range(T):
        k = obs[L.PK_KIND * T + i]
        if 0 < k < L.CK_SLEEPER:
            _face(obs, scfg, i, k - 1, obs[L.PK_SIDES * T + i], L.PK_TOYS * T + i, T,
                  obs[L.PK_SPRAY * T + i])
            place_card(st, scfg, i, i, 0)
    for i in range(T):
        if obs[L.PK_KIND * T + i] == L.CK_SLEEPER:
            w = obs[L.PK_OWNER * T + i]
            owner = L.PRINCESS_OWNER if w == L.SLOT_PRINCESS else w - 1
            place_sleeper(st, scfg, i, owner, obs[L.PK_JOIN * T + i] - 1)
            if owner != L.PRINCESS_OWNER:
                set_catloc(st, owner, -1, S + i)
    for s in range(S):
        v = obs[y0 - S + s]
        code = v
        for k in range(nt if v == L.SLOT_TOY else 0):
            y = y0 + L.TOYREC * k
            if obs[y + L.TR_ON] and obs[y + L.TR_ROW] * C + obs[y + L.TR_COL] == s:
                code = L.SLOT_TOY + k
        if v == 0:
            continue
        set_slot(st, scfg, s, code)
        if v <= L.MAX_PLAYERS or v == L.SLOT_PRINCESS:
            owner = v - 1 if v <= L.MAX_PLAYERS else L.PRINCESS_OWNER
            add_cat(st, scfg, find(st, scfg, s), owner)
            if owner != L.PRINCESS_OWNER:
                set_catloc(st, owner, -1, s)
    st[K.PHASE] = obs[Y + L.Y_PHASE]
    st[K.CUR] = obs[Y + L.Y_CUR]
    st[K.DONE] = 1 if obs[Y + L.Y_PHASE] == L.P_END else 0
    for q in range(L.MAX_PLAYERS * L.HANDMAX):
        st[L.S_HAND + q] = -1
    for q in range(n):
        st[L.S_SUPPLY + q] = obs[X + L.O_SEATS + q]
        st[L.S_HANDN + q] = obs[X + L.O_SEATS + n + q]
    for h in range(L.HANDMAX):
        x = X + L.O_HAND + h * L.CARD_REC
        if obs[x + L.CR_KIND] == L.HK_PRINCESS:
            st[L.S_HAND + h] = scfg[L.CF_NC]
        elif obs[x + L.CR_KIND] == L.HK_BOX:
            _row_face(obs, scfg, T + h, L.KIND_BOX, x)
            st[L.S_HAND + h] = T + h
    st[L.S_STARTW] = st[L.S_STARTE] = C // 2
    for k in range(L.NUM_START):
        x = X + L.O_STARTS + k * L.CARD_REC
        _row_face(obs, scfg, nb + k, L.KIND_START, x)
        st[L.S_STARTUSED] |= 0 if obs[x + L.CR_KIND] else 1 << k
    for c in range(C):
        if obs[L.PK_KIND * T + (R // 2) * C + c] == L.CK_START:  # the start row
            st[L.S_STARTN] += 1
            st[L.S_STARTW] = min(st[L.S_STARTW], c)
            st[L.S_STARTE] = max(st[L.S_STARTE], c)
    for f, yf in ((L.S_PN, L.Y_PILE), (L.S_ENDTRIG, L.Y_ENDTRIG), (L.S_SEL, L.Y_SEL),
                  (L.S_SELSTART, L.Y_SELSTART), (L.S_RELAX, L.Y_RELAX), (L.S_FIRST, L.Y_FIRST)):
        st[f] = obs[Y + yf]
    for f, yf in ((L.S_SELCELL, L.Y_SELCELL), (L.S_PLAYED, L.Y_PLAYED)):
        st[f] = obs[Y + yf] * C + obs[Y + yf + 1] if obs[Y + yf] >= 0 else -1
    st[L.S_TOY] = -1


@njit(cache=True)
def sizes(cfg: np.ndarray) -> tuple[int, int]:
    """Sizes of the scratch state and of its config."""
    T = cfg[L.CF_ROWS] * cfg[L.CF_COLS]
    return cfg[L.CF_SIZE], L.CF_TABLE + (T + L.HANDMAX + L.NUM_START + cfg[L.CF_NT] + 1) * L.FIELDS


# --- boxes and points now ------------------------------------------------------------------
@njit(cache=True)
def table_boxes(st: np.ndarray, scfg: np.ndarray, W: np.ndarray, P: np.ndarray) -> None:
    """Every box's record and points per seat, and the points now, from the scratch state (``W``
    and ``P`` zeros)."""
    n = scfg[K.C_PLAYERS]
    T = scfg[L.CF_ROWS] * scfg[L.CF_COLS]
    box_counters(st, scfg, W)
    for i in range(T):
        if W[i, L.B_CARDS] > 0:
            box_points(W, i, n, scfg[L.CF_ADV], P, i)
            for q in range(n):
                P[T + NOW, q] += P[i, q]
