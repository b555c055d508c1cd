"""If It Fits observation kernel (numba): the public planes cached in the state (packed, see
``layout.obsc_size``), made relative to the observer, then the own hand, the start cards and
the public counters; and the bounds of every entry (:func:`obs_bounds`). Layout:
:mod:`card_envs.if_it_fits.layout` (``PK_*``, ``CR_*``, ``O_*``, ``Y_*``); table in
``card_envs.if_it_fits.env``."""

from __future__ import annotations

from typing import Any

import numpy as np
from llvmlite import ir
from numba import config, types
from numba.extending import intrinsic

from card_envs.core.game import Game
from card_envs.core.jit import njit
from card_envs.core.kernels import C_PLAYERS, CUR, PHASE
from card_envs.core.refs import noref
from card_envs.if_it_fits.layout import (
    ALL_OPEN,
    CARD_REC,
    CATS_EACH,
    CF_COLS,
    CF_NB,
    CF_NC,
    CF_NT,
    CF_O_OBSC,
    CF_O_ROWS,
    CF_ROWS,
    CF_TABLE,
    CK_SLEEPER,
    CR_KIND,
    F_BALL,
    FIELDS,
    HANDMAX,
    HK_BOX,
    HK_PRINCESS,
    IDX,
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

_M16 = np.uint64(0x0000FFFF0000FFFF)
_M8 = np.uint64(0x00FF00FF00FF00FF)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)


def _put_u64_py(arr: np.ndarray, k: int, x: Any) -> None:
    """``arr[k:k+8]`` (int8) becomes the bytes of the uint64 ``x``, little-endian (plain
    Python, ``NUMBA_DISABLE_JIT=1``)."""
    arr[k:k + 8] = np.array([x], "<u8").view(np.int8)


@intrinsic
def _put_u64_jit(typingctx: Any, arr: Any, k: Any, x: Any) -> Any:
    """One unaligned 8-byte store of the uint64 ``x`` at ``arr[k]`` (a 1-D int8 array; the
    caller keeps ``k + 8 <= arr.size``; little-endian like every numba target we run on)."""
    if not (isinstance(arr, types.Array) and arr.dtype == types.int8 and arr.ndim == 1):
        return None

    def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        ary = context.make_array(sig.args[0])(context, builder, value=args[0])
        at = context.cast(builder, args[1], sig.args[1], types.intp)
        ptr = builder.bitcast(builder.gep(ary.data, [at]), ir.IntType(64).as_pointer())
        store = builder.store(context.cast(builder, args[2], sig.args[2], types.uint64), ptr)
        store.align = 1
        return context.get_dummy_value()

    return types.none(arr, k, x), codegen


put_u64 = _put_u64_py if config.DISABLE_JIT else _put_u64_jit


@njit(cache=True, inline="always")
def _card_row(cfg: np.ndarray, r: int, kind: int, obs: np.ndarray, x: int) -> None:
    """The card row at ``obs[x:]``: ``kind``, then the sides, toys and sprayers of the card
    whose precomputed row (``CF_O_ROWS``) starts at ``cfg[r]``: its first 8 entries are the
    bytes of ``cfg[r]`` and ``cfg[r + 1]`` (every entry below 128) with the kind in byte 0."""
    a = (int(cfg[r]) & 0xFFFFFF00) | (int(kind) & 0xFF)
    put_u64(obs, x, np.uint64(a) | (np.uint64(int(cfg[r + 1])) << np.uint64(32)))
    obs[x + 8] = cfg[r + 2]


@njit(cache=True)
def observe(state: np.ndarray, cfg: np.ndarray, seat: int, obs: np.ndarray) -> None:
    """Write ``seat``'s observation (layout in ``card_envs.if_it_fits.env``): the public
    planes (cached in the state with absolute seats, made relative here), the own hand and the
    public counters. Other hands and the pile order are not shown."""
    state, cfg, obs = noref(state), noref(cfg), noref(obs)
    n = cfg[C_PLAYERS] & IDX  # (& IDX: see layout.IDX)
    seat &= IDX
    C = cfg[CF_COLS] & IDX
    T = (cfg[CF_ROWS] & IDX) * C
    S = (T - C) & IDX
    P = (NPLANES * T + S) & IDX
    L = (P + TOYREC * cfg[CF_NT]) & IDX
    ob = cfg[CF_O_OBSC] & IDX
    rows = cfg[CF_O_ROWS] & IDX
    full = P >> 3
    m16, m8, m4 = _M16, _M8, _M4
    for w in range(full):  # the planes: 8 entries of 4 bits per int32 to 8 bytes at a time
        x = np.uint64(int(state[ob + w]) & 0xFFFFFFFF)  # nibble k to byte k: spread by
        # 16, 8 and 4 bits
        x = (x | (x << np.uint64(16))) & m16
        x = (x | (x << np.uint64(8))) & m8
        x = (x | (x << np.uint64(4))) & m4
        put_u64(obs, 8 * w, x)
    for k in range(8 * full, P):
        obs[k] = (state[ob + (k >> 3)] >> (4 * (k & 7))) & 0xF
    tb = (ob + ((P + 7) >> 3)) & IDX
    for k in range(L - P):  # the special toy card records, a byte each
        obs[P + k] = (state[tb + (k >> 2)] >> (8 * (k & 3))) & 0xFF
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
    m = state[S_HANDN + seat]
    for h in range(HANDMAX):
        cid = state[S_HAND + seat * HANDMAX + h]
        xh = x + h * CARD_REC
        if h < m and cid != nc and cid >= 0:
            _card_row(cfg, rows + 3 * cid, HK_BOX, obs, xh)
        else:
            for k in range(CARD_REC):
                obs[xh + k] = 0
            if h < m:
                obs[xh + CR_KIND] = HK_PRINCESS
    x = L + O_STARTS
    avail = 0 if state[S_STARTN] >= n else ~state[S_STARTUSED]
    rs = rows + 3 * (cfg[CF_NB] & IDX)
    for k in range(NUM_START):
        _card_row(cfg, rs + 3 * k, (avail >> k) & 1, obs, x + k * CARD_REC)
    x = L + O_TOY
    toy = state[S_TOY]
    for k in range(3):
        obs[x + k] = 0
    if toy >= 0:
        for k in range(3):
            obs[x + k] = cfg[CF_TABLE + toy * FIELDS + F_BALL + k]
    x = L + O_SEATS
    for r in range(n):
        q = (seat + r if seat + r < n else seat + r - n) & IDX
        obs[x + r] = state[S_SUPPLY + q]
        obs[x + n + r] = state[S_HANDN + q]
    y = x + 2 * n
    obs[y + Y_PILE] = state[S_PN]
    ph = state[PHASE]
    obs[y + Y_PHASE] = ph
    cur = state[CUR]
    obs[y + Y_CUR] = -1 if cur < 0 else (cur - seat if cur >= seat else cur - seat + n)
    obs[y + Y_ENDTRIG] = state[S_ENDTRIG]
    obs[y + Y_SEL] = -1
    if ph == P_CELL or ph == P_ROT or ph == P_PRINCESS:
        obs[y + Y_SEL] = state[S_SEL]
    obs[y + Y_SELSTART] = state[S_SELSTART]
    for fld, yf in ((S_SELCELL, Y_SELCELL), (S_PLAYED, Y_PLAYED)):
        c = state[fld]
        obs[y + yf] = -1
        obs[y + yf + 1] = -1
        if c >= 0:
            obs[y + yf] = c // C
            obs[y + yf + 1] = c % C
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
