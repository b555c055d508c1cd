"""If It Fits features, part one: the observed table replayed through the engine's own board
code into a scratch state, and its boxes and points now (the workspace that
:mod:`card_envs.if_it_fits.features` evaluates every action on). Everything is read from the
observation alone."""

from __future__ import annotations

import numpy as np

from card_envs.core import kernels as K
from card_envs.core.jit import njit
from card_envs.if_it_fits import layout as L
from card_envs.if_it_fits.board import find, place_card, place_sleeper, set_catloc, set_slot

# The workspace of one observation, three arrays passed to every helper. ``W`` (int32, T + 3
# rows): a box's counters in the row of its union-find root: cards, ball, mouse, yarn, sprayers,
# open sides facing an empty cell or the edge (0: closed), awake and sleeping cats per seat,
# Princesses; then the box being evaluated (TMP), a second one (TMP2) and toys (TOYS: a card's
# at 0, the drawn special toy card's at 3, none at 6). ``P`` (float64, T + 3 rows): each root's
# points per seat, then the points now (NOW), a box's (PTS), the changes (DQ).
B_CARDS, B_TOYS, B_SPRAY, B_FRONT, B_AWAKE = 0, 1, 4, 5, 6
B_SLEEP = B_AWAKE + L.MAX_PLAYERS
B_PRIN = B_SLEEP + L.MAX_PLAYERS
NB_ROW = B_PRIN + 1
TMP, TMP2, TOYS = 0, 1, 2  # + T: rows of W
NOW, PTS, DQ = 0, 1, 2  # + T: rows of P
T_CARD, T_DRAWN, T_NONE = 0, 3, 6  # in W's TOYS row
# ``Nb`` (int32, T x 15): per empty cell, computed once when first needed: done, the directions
# in which it faces an empty cell or the edge, per direction the root of the card there if that
# card shows it an open side (else -1), the distinct such roots and their open sides, and "calm":
# none of those boxes has an awake cat, so nothing laid there changes anyone's points now
N_DONE, N_EMPTY, N_NROOT, N_M, N_ROOTS, N_DECS, N_CALM = 0, 1, 2, 6, 7, 11, 15



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
    :func:`_sizes`): card ``i`` for the card in
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
            st[cfg[L.CF_O_CATS] + find(st, scfg, s) * L.NCOUNT + owner] += 1
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


# --- boxes and points ----------------------------------------------------------------------
@njit(cache=True)
def box_value(W: np.ndarray, r: int) -> int:
    """Box ``W[r]``'s value: toys of its most frequent kind - sprayers, doubled when closed."""
    v = max(W[r, B_TOYS], max(W[r, B_TOYS + 1], W[r, B_TOYS + 2])) - W[r, B_SPRAY]
    return 2 * v if W[r, B_FRONT] == 0 else v


@njit(cache=True)
def box_points(W: np.ndarray, r: int, n: int, adv: int, P: np.ndarray, out: int) -> None:
    """``P[out, q]``: the points seat ``q`` gets from box ``W[r]`` (the rules' scoring: the
    seats with the most cats (awake 1, sleeping 1, advanced 0.5) that have an awake cat there
    score its value; basic: +1 per extra cat of a seat with an awake cat)."""
    w = 1 if adv else 2
    top = 0
    for q in range(n):
        P[out, q] = 0.0
        top = max(top, 2 * W[r, B_AWAKE + q] + w * W[r, B_SLEEP + q])
    if top == 0:
        return
    value = box_value(W, r)
    for q in range(n):
        a = W[r, B_AWAKE + q]
        if a > 0:
            if 2 * a + w * W[r, B_SLEEP + q] == top:
                P[out, q] += value
            if not adv:
                P[out, q] += a + W[r, B_SLEEP + q] - 1


@njit(cache=True)
def table_boxes(obs: np.ndarray, st: np.ndarray, scfg: np.ndarray, W: np.ndarray,
           P: np.ndarray) -> None:
    """Every box's counters and points per seat, and the points now, from the scratch state."""
    n = scfg[K.C_PLAYERS]
    T = scfg[L.CF_ROWS] * scfg[L.CF_COLS]
    cell, slot = scfg[L.CF_O_CELL], scfg[L.CF_O_SLOT]
    for i in range(T):
        v = st[cell + i]
        r = find(st, scfg, i) if v != 0 else 0
        if v > 0:
            W[r, B_CARDS] += 1
            for k in range(3):
                W[r, B_TOYS + k] += obs[(L.PK_TOYS + k) * T + i]
            W[r, B_SPRAY] += obs[L.PK_SPRAY * T + i]
        elif v < 0:
            W[r, B_PRIN if -v - 1 == L.PRINCESS_OWNER else B_SLEEP - v - 1] += 1
    for s in range(T - scfg[L.CF_COLS]):
        v = st[slot + s]
        r = find(st, scfg, s) if v != 0 else 0
        if 1 <= v <= L.MAX_PLAYERS:
            W[r, B_AWAKE + v - 1] += 1
        elif v == L.SLOT_PRINCESS:
            W[r, B_PRIN] += 1
        elif v >= L.SLOT_TOY:
            tb = L.CF_TABLE + (scfg[L.CF_NB] + L.NUM_START + v - L.SLOT_TOY) * L.FIELDS
            for k in range(3):
                W[r, B_TOYS + k] += scfg[tb + L.F_BALL + k]
    for i in range(T):
        if st[cell + i] > 0 and find(st, scfg, i) == i:
            W[i, B_FRONT] = st[scfg[L.CF_O_FRONT] + i]
            box_points(W, i, n, scfg[L.CF_ADV], P, i)
            for q in range(n):
                P[T + NOW, q] += P[i, q]

