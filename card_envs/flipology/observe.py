"""Flipology observation: the kernel ``observe`` and the bounds of its entries (layout table:
``card_envs.flipology.env``; sections: ``layout.obs_layout``)."""

from __future__ import annotations

import numpy as np

from card_envs.core.game import Game
from card_envs.core.jit import njit
from card_envs.core.kernels import C_PLAYERS, CUR, PHASE, rel_seat
from card_envs.flipology.layout import (
    BONUS,
    CHAIN,
    CHAIN_LIMIT,
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
    G_NPOS,
    G_SEATPOS,
    GAME,
    HAND,
    HANDMAX,
    HCARD,
    HSCAN,
    KNOW,
    LEVELS,
    NUM_KINDS,
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
    PHASES,
    PICK,
    POS,
    REGROW,
    ROUND,
    ROUNDS,
    START,
    SUN_PEEKS,
    T_KIND,
    T_PTS,
    TOTAL,
    TURN,
)
from card_envs.flipology.parts.deck import MAX_POINTS
from card_envs.flipology.parts.effects import rel_pos
from card_envs.flipology.queries import public_score

__all__ = ["obs_bounds", "observe"]


@njit(cache=True, inline="always")
def _rel(sp: int, npos: int, seat: int, p: int) -> int:
    """Position ``p`` relative to ``seat`` (:func:`rel_pos`), -1 stays -1."""
    return -1 if p < 0 else rel_pos(sp, npos, seat, p)


@njit(cache=True)
def observe(state: np.ndarray, cfg: np.ndarray, seat: int, obs: np.ndarray) -> None:
    """``seat``'s observation: faces everywhere, identities only of cards it knows."""
    n = cfg[C_PLAYERS]
    sp = cfg[G_SEATPOS]
    npos = cfg[G_NPOS]
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
    obs[k + OBS_EF_SRC] = _rel(sp, npos, seat, state[EF_SRC])
    obs[k + OBS_EF_STEP] = state[EF_STEP]
    obs[k + OBS_EF_A] = _rel(sp, npos, seat, state[EF_A])
    obs[k + OBS_EF_B] = _rel(sp, npos, seat, state[EF_B])
    for j in range(SUN_PEEKS):
        obs[k + OBS_EF_PEEK + j] = _rel(sp, npos, seat, state[EF_PEEK + j])
    obs[k + OBS_EF_CHAIN] = state[CHAIN]
    k += OBS_EFFECT_LEN
    ph = state[PHASE]
    if ph == P_HERMIT or ph == P_HCOUNT:
        hs = state[HSCAN]
        st = state[START]
        p = ((st + hs // sp) % n) * sp + hs % sp
        obs[k + OBS_HERMIT_POS] = rel_pos(sp, npos, seat, p)
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


def obs_bounds(game: Game) -> tuple[np.ndarray, np.ndarray]:
    """Per-entry lower and upper bounds of ``game``'s observation (a ``FlipologyGame``: seats,
    row and hand sizes, deck points, ``max_games``)."""
    g = game
    n, sp, hn, nc = g.num_players, g.seatpos, g.handn, g.ncards
    big = min(sum(g.points) + 25, OBS_CLIP)
    npos = g.npos
    lo: list[int] = []
    hi: list[int] = []

    def add(k: int, a: int, b: int) -> None:
        lo.extend([a] * k)
        hi.extend([b] * k)

    for _ in range(n * sp):
        add(1, -1, 1)
        add(1, -1, NUM_KINDS - 1)
        add(1, -1, MAX_POINTS)
    for _ in range(hn):
        add(1, -1, NUM_KINDS - 1)
        add(1, -1, MAX_POINTS)
    add(n, 0, hn)
    add(nc, 0, 3)
    add(1, 0, nc)
    add(1, -1, NUM_KINDS - 1)  # effect kind
    add(1, 0, 1)
    add(1, -1, npos - 1)
    add(1, 0, max(SUN_PEEKS, n))  # sub-step
    add(2 + SUN_PEEKS, -1, npos - 1)  # Monkey a, b, Sun peeks
    add(1, 0, CHAIN_LIMIT)
    add(1, -1, npos - 1)  # hermit crab position
    add(1, -1, nc - 1)
    add(1, 0, len(PHASES) - 1)
    add(1, 0, ROUNDS)
    add(1, 0, 2 * n - 1)
    add(1, 0, n - 1)
    add(1, -1, n - 1)
    add(1, 0, g.options["max_games"])
    add(1, 0, 3)
    add(1, 0, nc)
    add(n, -OBS_CLIP, OBS_CLIP)  # series totals
    add(n, -big, big)  # public scores
    add(n, -big, big)  # hermit crab bonus
    add(n, 0, 1)
    return np.array(lo), np.array(hi)
