"""Flipology observation kernel (layout table: ``card_envs.flipology.env``)."""

from __future__ import annotations

import numpy as np

from card_envs.core.jit import njit
from card_envs.core.kernels import C_PLAYERS, CUR, PHASE, rel_seat
from card_envs.flipology.effects import rel_action
from card_envs.flipology.layout import (
    BONUS,
    CHAIN,
    DECKN,
    DLEN,
    DLIST,
    EF_A,
    EF_B,
    EF_COPY,
    EF_KIND,
    EF_PEEK,
    EF_SRC,
    EF_STEP,
    FACE,
    G_HANDN,
    G_NCARDS,
    G_SEATPOS,
    GAME,
    HAND,
    HANDMAX,
    HCARD,
    HSCAN,
    KNOW,
    LEVELS,
    P_HCOUNT,
    P_HERMIT,
    PICK,
    POS,
    REGROW,
    ROUND,
    START,
    T_KIND,
    T_PTS,
    TOTAL,
    TURN,
)
from card_envs.flipology.scoring import public_score

OBS_CLIP = 30000


def obs_size(n: int, seatpos: int, handn: int, ncards: int) -> int:
    return 3 * n * seatpos + 2 * handn + n + ncards + 1 + 10 + 2 + 8 + 4 * n


@njit(cache=True, inline="always")
def _rel(cfg: np.ndarray, seat: int, p: int) -> int:
    return -1 if p < 0 else rel_action(cfg, seat, p)


@njit(cache=True)
def observe(state: np.ndarray, cfg: np.ndarray, seat: int, obs: np.ndarray) -> None:
    """``seat``'s observation: faces everywhere, identities only of cards it knows."""
    n = cfg[C_PLAYERS]
    sp = cfg[G_SEATPOS]
    bit = 1 << seat
    k = 0
    for r in range(n):
        q = seat + r
        if q >= n:
            q -= n
        for p in range(q * sp, q * sp + sp):
            c = state[POS + p]
            if c < 0:
                obs[k] = -1
                obs[k + 1] = -1
                obs[k + 2] = -1
            else:
                obs[k] = state[FACE + p]
                if state[KNOW + c] & bit:
                    obs[k + 1] = cfg[T_KIND + c]
                    obs[k + 2] = cfg[T_PTS + c]
                else:
                    obs[k + 1] = -1
                    obs[k + 2] = -1
            k += 3
    hn = cfg[G_HANDN]
    for j in range(hn):
        c = state[HAND + seat * HANDMAX + j]
        if c < 0:
            obs[k] = -1
            obs[k + 1] = -1
        else:
            obs[k] = cfg[T_KIND + c]
            obs[k + 1] = cfg[T_PTS + c]
        k += 2
    q = seat
    for _ in range(n):
        m = 0
        for j in range(hn):
            if state[HAND + q * HANDMAX + j] >= 0:
                m += 1
        obs[k] = m
        k += 1
        q = q + 1 if q + 1 < n else 0
    nc = cfg[G_NCARDS]
    unknown = 0
    obs[k:k + nc] = 0
    for i in range(state[DLEN]):
        c = state[DLIST + i]
        if state[KNOW + c] & bit:
            obs[k + c] = 1 + state[PICK + c]
        else:
            unknown += 1
    k += nc
    obs[k] = unknown
    k += 1
    obs[k] = state[EF_KIND]
    obs[k + 1] = state[EF_COPY]
    obs[k + 2] = _rel(cfg, seat, state[EF_SRC])
    obs[k + 3] = state[EF_STEP]
    obs[k + 4] = _rel(cfg, seat, state[EF_A])
    obs[k + 5] = _rel(cfg, seat, state[EF_B])
    obs[k + 6] = _rel(cfg, seat, state[EF_PEEK])
    obs[k + 7] = _rel(cfg, seat, state[EF_PEEK + 1])
    obs[k + 8] = _rel(cfg, seat, state[EF_PEEK + 2])
    obs[k + 9] = state[CHAIN]
    k += 10
    ph = state[PHASE]
    if ph == P_HERMIT or ph == P_HCOUNT:
        hs = state[HSCAN]
        st = state[START]
        p = ((st + hs // sp) % n) * sp + hs % sp
        obs[k] = rel_action(cfg, seat, p)
    else:
        obs[k] = -1
    obs[k + 1] = state[HCARD]
    k += 2
    obs[k] = ph
    obs[k + 1] = state[ROUND]
    obs[k + 2] = state[TURN]
    obs[k + 3] = rel_seat(state[START], seat, n)
    obs[k + 4] = rel_seat(state[CUR], seat, n)
    obs[k + 5] = state[GAME]
    obs[k + 6] = state[LEVELS]
    obs[k + 7] = state[DECKN]
    k += 8
    q = seat
    for _ in range(n):
        obs[k] = min(max(state[TOTAL + q], -OBS_CLIP), OBS_CLIP)
        obs[k + n] = public_score(state, cfg, q)
        obs[k + 2 * n] = state[BONUS + q]
        obs[k + 3 * n] = state[REGROW + q]
        k += 1
        q = q + 1 if q + 1 < n else 0
