"""Flipology's course of play (numba): the end of a turn and of a round, the Great Tree's new
start player and rows, the Hermit crabs, the end of a game and of a series."""

from __future__ import annotations

import numpy as np

from card_envs.core.jit import njit
from card_envs.core.kernels import (
    C_PLAYERS,
    C_REWARD,
    CUR,
    DONE,
    DONE_TERMINATED,
    PHASE,
    ST_DONE,
    ST_REWARD,
    terminal_rewards,
)
from card_envs.flipology.layout import (
    ALL_SEATS,
    DLEN,
    DLIST,
    FACE,
    G_DISC0,
    G_MAXGAMES,
    G_SEATPOS,
    G_SERIES,
    G_SKIP,
    G_TARGET,
    G_VARIANT,
    GAME,
    GREAT_TREE,
    HERMIT,
    HSCAN,
    KNOW,
    LEVELS,
    NATURE,
    P_END,
    P_HERMIT,
    P_TURN,
    PICK,
    POS,
    ROUND,
    ROUNDS,
    SERIES_MOON_WIN,
    SERIES_WIN_BONUS,
    START,
    T_KIND,
    TOTAL,
    TURN,
)
from card_envs.flipology.parts.deal import deal_game, deal_level
from card_envs.flipology.queries import (
    animal,
    game_result,
    public_score,
    scores_face_down,
    series_outcome,
)

__all__ = ["end_turn", "hermit_choices", "hermit_next", "new_start"]


@njit(cache=True)
def new_start(state: np.ndarray, cfg: np.ndarray) -> None:
    """Great Tree, after rounds 1 and 2: the highest current (public) score starts; the
    previous start player keeps it when tied for highest, else the first tied seat clockwise."""
    n = cfg[C_PLAYERS]
    st = state[START]
    best = public_score(state, cfg, st)
    bs = st
    for i in range(1, n):
        s = (st + i) % n
        v = public_score(state, cfg, s)
        if v > best:
            best = v
            bs = s
    state[START] = bs


@njit(cache=True)
def end_turn(state: np.ndarray, cfg: np.ndarray, rewards: np.ndarray) -> int:
    """Pass the turn: the next seat, the next round (Great Tree: a new start player and row),
    or after round 3 the Hermit crabs and the end of the game. Returns ST_* bits."""
    n = cfg[C_PLAYERS]
    per_round = n if cfg[G_VARIANT] == NATURE else 2 * n
    state[PHASE] = P_TURN
    state[TURN] += 1
    if state[TURN] < per_round:
        state[CUR] = (state[START] + state[TURN]) % n
        return 0
    state[TURN] = 0
    state[ROUND] += 1
    if state[ROUND] >= ROUNDS:
        state[PHASE] = P_HERMIT
        state[HSCAN] = 0
        return hermit_next(state, cfg, rewards)
    if cfg[G_VARIANT] == GREAT_TREE:
        new_start(state, cfg)
        state[LEVELS] += 1
        deal_level(state, cfg)
        return 0
    state[CUR] = state[START]
    return 0


@njit(cache=True)
def hermit_choices(state: np.ndarray, cfg: np.ndarray, mask: np.ndarray, write: bool) -> int:
    """Discarded animals not yet picked (and skip), marked in ``mask`` when ``write``; returns
    how many cards."""
    d0 = cfg[G_DISC0]
    cnt = 0
    for i in range(state[DLEN]):
        c = state[DLIST + i]
        if state[PICK + c] == 0 and animal(cfg[T_KIND + c]):
            cnt += 1
            if write:
                mask[d0 + c] = 1
    if write:
        mask[cfg[G_SKIP]] = 1
    return cnt


@njit(cache=True)
def hermit_next(state: np.ndarray, cfg: np.ndarray, rewards: np.ndarray) -> int:
    """Find the next face-up Hermit crab (seats from the start player) whose owner has a
    choice; else score the game."""
    n = cfg[C_PLAYERS]
    sp = cfg[G_SEATPOS]
    k = state[HSCAN]
    while k < n * sp:
        p = ((state[START] + k // sp) % n) * sp + k % sp
        c = state[POS + p]
        if c >= 0 and state[FACE + p] and cfg[T_KIND + c] == HERMIT:
            owner = p // sp
            if hermit_choices(state, cfg, cfg, False) > 0:  # counting only: cfg is not written
                state[HSCAN] = k
                state[CUR] = owner
                state[PHASE] = P_HERMIT
                for i in range(state[DLEN]):  # the owner sees the whole discard pile
                    state[KNOW + state[DLIST + i]] |= 1 << owner
                return 0
        k += 1
    state[HSCAN] = k
    return _finish_game(state, cfg, rewards)


@njit(cache=True)
def _finish_game(state: np.ndarray, cfg: np.ndarray, rewards: np.ndarray) -> int:
    """Reveal, score; end the game, or (series) add to the totals and deal the next game."""
    n = cfg[C_PLAYERS]
    npos = n * cfg[G_SEATPOS]
    for p in range(npos):  # face-down Sloths and Koalas are revealed
        c = state[POS + p]
        if c >= 0 and scores_face_down(cfg[T_KIND + c]):
            state[KNOW + c] = ALL_SEATS
    points = np.zeros(n, np.float64)
    winners = np.zeros(n, np.int64)
    moon = game_result(state, cfg, points, winners)
    if cfg[G_SERIES] == 0:
        _close(state)
        if moon:
            for q in range(n):
                points[q] = -points[q]
        terminal_rewards(cfg[C_REWARD], points, winners, n, rewards)
        return ST_DONE | ST_REWARD
    for q in range(n):
        if moon:
            state[TOTAL + q] += SERIES_MOON_WIN if winners[q] else 0
        else:
            state[TOTAL + q] += int(points[q]) + (SERIES_WIN_BONUS if winners[q] else 0)
    state[GAME] += 1
    top = state[TOTAL]
    for q in range(n):
        top = max(top, state[TOTAL + q])
    if top >= cfg[G_TARGET] or state[GAME] >= cfg[G_MAXGAMES]:
        _close(state)
        series_outcome(state, cfg, points, winners)
        terminal_rewards(cfg[C_REWARD], points, winners, n, rewards)
        return ST_DONE | ST_REWARD
    st = state[START]
    for i in range(n):  # the (first clockwise) winner starts the next game
        if winners[(st + i) % n]:
            state[START] = (st + i) % n
            break
    deal_game(state, cfg)
    return 0


@njit(cache=True)
def _close(state: np.ndarray) -> None:
    """The game is over: nobody to act."""
    state[CUR] = -1
    state[PHASE] = P_END
    state[DONE] = DONE_TERMINATED
