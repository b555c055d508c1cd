"""If It Fits observation kernel (numba): the public planes cached in the state, made relative
to the observer, then the own hand, the start cards and the public counters; and the bounds of
every entry (:func:`obs_bounds`). Layout: :mod:`card_envs.if_it_fits.layout` (``PK_*``,
``CR_*``, ``O_*``, ``Y_*``); table in ``card_envs.if_it_fits.env``."""

from __future__ import annotations

import numpy as np

from card_envs.core.game import Game
from card_envs.core.jit import njit
from card_envs.core.kernels import C_PLAYERS, CUR, PHASE
from card_envs.if_it_fits.layout import (
    ALL_OPEN,
    CARD_REC,
    CATS_EACH,
    CF_COLS,
    CF_NB,
    CF_NC,
    CF_NT,
    CF_O_DISC,
    CF_O_OBSC,
    CF_ROWS,
    CF_TABLE,
    CK_SLEEPER,
    CR_KIND,
    CR_SIDES,
    CR_SPRAY,
    CR_TOYS,
    F_BALL,
    F_OPEN,
    F_SPRAY,
    FIELDS,
    HANDMAX,
    HK_BOX,
    HK_PRINCESS,
    MAX_ICONS,
    NPLANES,
    NUM_START,
    O_HAND,
    O_SEATS,
    O_STARTS,
    O_TOY,
    P_CELL,
    P_PRINCESS,
    P_ROT,
    PHASES,
    PK_OWNER,
    S_CATLOC,
    S_ENDTRIG,
    S_FIRST,
    S_HAND,
    S_HANDN,
    S_PLAYED,
    S_PN,
    S_RELAX,
    S_SEL,
    S_SELCELL,
    S_SELSTART,
    S_STARTN,
    S_STARTUSED,
    S_SUPPLY,
    S_TOY,
    SLOT_PRINCESS,
    SLOT_TOY,
    TOYREC,
    Y_CUR,
    Y_ENDTRIG,
    Y_FIRST,
    Y_PHASE,
    Y_PILE,
    Y_PLAYED,
    Y_RELAX,
    Y_SEL,
    Y_SELCELL,
    Y_SELSTART,
)


@njit(cache=True)
def _card_row(cfg: np.ndarray, cid: int, obs: np.ndarray, x: int) -> None:
    """The sides, toys and sprayers of card ``cid`` into the card row at ``obs[x:]``."""
    tb = CF_TABLE + cid * FIELDS
    o = cfg[tb + F_OPEN]
    for d in range(4):
        obs[x + CR_SIDES + d] = (o >> d) & 1
    for k in range(3):
        obs[x + CR_TOYS + k] = cfg[tb + F_BALL + k]
    obs[x + CR_SPRAY] = cfg[tb + F_SPRAY]


@njit(cache=True)
def observe(state: np.ndarray, cfg: np.ndarray, seat: int, obs: np.ndarray) -> None:
    """Write ``seat``'s observation (layout in ``card_envs.if_it_fits.env``): the public
    planes (cached in the state with absolute seats, made relative here), the own hand and the
    public counters. Other hands and the pile order are not shown."""
    n = cfg[C_PLAYERS]
    C = cfg[CF_COLS]
    T = cfg[CF_ROWS] * C
    S = T - C
    L = NPLANES * T + S + TOYREC * cfg[CF_NT]
    ob = cfg[CF_O_OBSC]
    src = state[ob:cfg[CF_O_DISC]].view(np.int8)
    for k in range(L):  # an explicit loop: the slice copy of a view is ~30x slower
        obs[k] = src[k]
    for q in range(n):
        rq = q - seat + 1 if q >= seat else q - seat + n + 1
        for k in range(CATS_EACH):
            loc = state[S_CATLOC + q * CATS_EACH + k]
            if loc >= 0:
                if loc < S:
                    obs[NPLANES * T + loc] = rq
                else:
                    obs[PK_OWNER * T + loc - S] = rq
    x = L + O_HAND
    nc = cfg[CF_NC]
    for h in range(HANDMAX):
        cid = state[S_HAND + seat * HANDMAX + h] if h < state[S_HANDN + seat] else -1
        for k in range(CARD_REC):
            obs[x + k] = 0
        if cid == nc:
            obs[x + CR_KIND] = HK_PRINCESS
        elif cid >= 0:
            obs[x + CR_KIND] = HK_BOX
            _card_row(cfg, cid, obs, x)
        x += CARD_REC
    x = L + O_STARTS
    done_start = state[S_STARTN] >= n
    for k in range(NUM_START):
        obs[x + CR_KIND] = 0 if done_start or state[S_STARTUSED] & (1 << k) else 1
        _card_row(cfg, cfg[CF_NB] + k, obs, x)
        x += CARD_REC
    x = L + O_TOY
    toy = state[S_TOY]
    for k in range(3):
        obs[x + k] = cfg[CF_TABLE + toy * FIELDS + F_BALL + k] if toy >= 0 else 0
    x = L + O_SEATS
    for r in range(n):
        q = seat + r if seat + r < n else seat + r - n
        obs[x + r] = state[S_SUPPLY + q]
        obs[x + n + r] = state[S_HANDN + q]
    y = x + 2 * n
    obs[y + Y_PILE] = state[S_PN]
    obs[y + Y_PHASE] = state[PHASE]
    cur = state[CUR]
    obs[y + Y_CUR] = -1 if cur < 0 else (cur - seat if cur >= seat else cur - seat + n)
    obs[y + Y_ENDTRIG] = state[S_ENDTRIG]
    ph = state[PHASE]
    obs[y + Y_SEL] = state[S_SEL] if ph == P_CELL or ph == P_ROT or ph == P_PRINCESS else -1
    obs[y + Y_SELSTART] = state[S_SELSTART]
    sc = state[S_SELCELL]
    obs[y + Y_SELCELL] = sc // C if sc >= 0 else -1
    obs[y + Y_SELCELL + 1] = sc % C if sc >= 0 else -1
    pc = state[S_PLAYED]
    obs[y + Y_PLAYED] = pc // C if pc >= 0 else -1
    obs[y + Y_PLAYED + 1] = pc % C if pc >= 0 else -1
    obs[y + Y_RELAX] = state[S_RELAX]
    f = state[S_FIRST]
    obs[y + Y_FIRST] = f - seat if f >= seat else f - seat + n


def obs_bounds(game: Game) -> tuple[np.ndarray, np.ndarray]:
    """Per-entry bounds of ``game``'s observation (an If It Fits game), in the order of the
    table in ``env.py``."""
    n, T, S = game.num_players, game.T, game.S
    lo, hi = [], []

    def add(low: int, high: int, k: int = 1) -> None:
        lo.extend([low] * k)
        hi.extend([high] * k)

    def card_row(kind_max: int) -> None:
        add(0, kind_max)
        add(0, 1, 4)
        add(0, MAX_ICONS, 4)

    add(0, CK_SLEEPER, T)
    add(0, ALL_OPEN, T)
    add(0, MAX_ICONS, 4 * T)
    add(0, SLOT_PRINCESS, T)
    add(0, 4, T)
    add(0, SLOT_TOY, S)
    for _ in range(game.nt):
        add(0, 1)
        add(0, game.rows - 2)
        add(0, game.cols - 1)
        add(0, MAX_ICONS, 3)
    for _ in range(HANDMAX):
        card_row(HK_PRINCESS)
    for _ in range(NUM_START):
        card_row(1)
    add(0, MAX_ICONS, 3)
    add(0, CATS_EACH, n)
    add(0, HANDMAX, n)
    add(0, game.lay["pilemax"])
    add(0, len(PHASES) - 1)
    add(-1, n - 1)
    add(0, 1)
    add(-1, HANDMAX - 1)
    add(-1, NUM_START - 1)
    add(-1, game.rows - 1)
    add(-1, game.cols - 1)
    add(-1, game.rows - 1)
    add(-1, game.cols - 1)
    add(0, 1)
    add(0, n - 1)
    return np.asarray(lo), np.asarray(hi)
