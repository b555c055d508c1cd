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
    OBS_BONUS,
    OBS_CELL,
    OBS_CLIP,
    OBS_CUR,
    OBS_DECKN,
    OBS_EF_A,
    OBS_EF_B,
    OBS_EF_CHAIN,
    OBS_EF_COPY,
    OBS_EF_KIND,
    OBS_EF_PEEK,
    OBS_EF_SRC,
    OBS_EF_STEP,
    OBS_EFFECT_LEN,
    OBS_FACE,
    OBS_GAME,
    OBS_HERMIT_CARD,
    OBS_HERMIT_LEN,
    OBS_HERMIT_POS,
    OBS_INFO_LEN,
    OBS_KIND,
    OBS_LEVELS,
    OBS_PHASE,
    OBS_POINTS,
    OBS_PUBLIC,
    OBS_REGROW,
    OBS_ROUND,
    OBS_SLOT,
    OBS_SLOT_KIND,
    OBS_SLOT_POINTS,
    OBS_START,
    OBS_TOTAL,
    OBS_TURN,
    P_HCOUNT,
    P_HERMIT,
    PICK,
    POS,
    REGROW,
    ROUND,
    START,
    SUN_PEEKS,
    T_KIND,
    T_PTS,
    TOTAL,
    TURN,
)
from card_envs.flipology.layout import obs_size as obs_size
from card_envs.flipology.scoring import public_score

__all__ = ["OBS_CLIP", "obs_size", "observe"]


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
                obs[k + OBS_FACE] = -1
                obs[k + OBS_KIND] = -1
                obs[k + OBS_POINTS] = -1
            else:
                obs[k + OBS_FACE] = state[FACE + p]
                if state[KNOW + c] & bit:
                    obs[k + OBS_KIND] = cfg[T_KIND + c]
                    obs[k + OBS_POINTS] = cfg[T_PTS + c]
                else:
                    obs[k + OBS_KIND] = -1
                    obs[k + OBS_POINTS] = -1
            k += OBS_CELL
    hn = cfg[G_HANDN]
    for j in range(hn):
        c = state[HAND + seat * HANDMAX + j]
        if c < 0:
            obs[k + OBS_SLOT_KIND] = -1
            obs[k + OBS_SLOT_POINTS] = -1
        else:
            obs[k + OBS_SLOT_KIND] = cfg[T_KIND + c]
            obs[k + OBS_SLOT_POINTS] = cfg[T_PTS + c]
        k += OBS_SLOT
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
    obs[k + OBS_EF_KIND] = state[EF_KIND]
    obs[k + OBS_EF_COPY] = state[EF_COPY]
    obs[k + OBS_EF_SRC] = _rel(cfg, seat, state[EF_SRC])
    obs[k + OBS_EF_STEP] = state[EF_STEP]
    obs[k + OBS_EF_A] = _rel(cfg, seat, state[EF_A])
    obs[k + OBS_EF_B] = _rel(cfg, seat, state[EF_B])
    for j in range(SUN_PEEKS):
        obs[k + OBS_EF_PEEK + j] = _rel(cfg, seat, state[EF_PEEK + j])
    obs[k + OBS_EF_CHAIN] = state[CHAIN]
    k += OBS_EFFECT_LEN
    ph = state[PHASE]
    if ph == P_HERMIT or ph == P_HCOUNT:
        hs = state[HSCAN]
        st = state[START]
        p = ((st + hs // sp) % n) * sp + hs % sp
        obs[k + OBS_HERMIT_POS] = rel_action(cfg, seat, p)
    else:
        obs[k + OBS_HERMIT_POS] = -1
    obs[k + OBS_HERMIT_CARD] = state[HCARD]
    k += OBS_HERMIT_LEN
    obs[k + OBS_PHASE] = ph
    obs[k + OBS_ROUND] = state[ROUND]
    obs[k + OBS_TURN] = state[TURN]
    obs[k + OBS_START] = rel_seat(state[START], seat, n)
    obs[k + OBS_CUR] = rel_seat(state[CUR], seat, n)
    obs[k + OBS_GAME] = state[GAME]
    obs[k + OBS_LEVELS] = state[LEVELS]
    obs[k + OBS_DECKN] = state[DECKN]
    k += OBS_INFO_LEN
    q = seat
    for _ in range(n):
        obs[k + OBS_TOTAL * n] = min(max(state[TOTAL + q], -OBS_CLIP), OBS_CLIP)
        obs[k + OBS_PUBLIC * n] = public_score(state, cfg, q)
        obs[k + OBS_BONUS * n] = state[BONUS + q]
        obs[k + OBS_REGROW * n] = state[REGROW + q]
        k += 1
        q = q + 1 if q + 1 < n else 0
