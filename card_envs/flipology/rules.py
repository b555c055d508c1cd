"""Flipology rules as numba kernels over one int32 state array (pure: no PettingZoo, no I/O).

State layout: ``card_envs.flipology.layout``; effect machinery: ``card_envs.flipology.effects``;
scoring: ``card_envs.flipology.scoring``. The config array (built by ``FlipologyGame``)
carries the options, the action offsets, the deck (kind and points per card id) and the
adjacency tables (``layout.T_*``).
"""

from __future__ import annotations

import numpy as np

from card_envs.core.jit import njit
from card_envs.core.kernels import (
    C_PLAYERS,
    C_REWARD,
    C_START,
    CUR,
    DONE,
    PHASE,
    ST_DONE,
    ST_REWARD,
    STEPS,
    rng_int,
    shuffle_prefix,
    terminal_rewards,
    winners_by_keys,
)
from card_envs.flipology.effects import (
    abs_pos,
    apply_effect,
    clear_frame,
    discard,
    effect_enum,
    has_effect,
    settle,
    start_frame,
)
from card_envs.flipology.layout import (
    ALL_SEATS,
    BONUS,
    CHAIN,
    DECK,
    DECKN,
    DISC,
    DLEN,
    DLIST,
    FACE,
    G_DISC0,
    G_HAND0,
    G_HANDN,
    G_MAXGAMES,
    G_NCARDS,
    G_ROWLEN,
    G_SEATPOS,
    G_SERIES,
    G_SKIP,
    G_TARGET,
    G_VARIANT,
    GAME,
    HAND,
    HANDMAX,
    HCARD,
    HERMIT,
    HSCAN,
    KNOW,
    KOALA,
    LEVELS,
    MAX_PLAYERS,
    MAXC,
    MAXPOS,
    NDRAW,
    NULLS,
    P_EFFECT,
    P_END,
    P_HCOUNT,
    P_HERMIT,
    P_REGROW,
    P_SETUP,
    P_TURN,
    PICK,
    PLACED,
    POS,
    RED_PANDA,
    REGROW,
    RET,
    RETSEQ,
    ROUND,
    ROUNDS,
    SEQ,
    SETK,
    SLOTH,
    START,
    STATE_SIZE,
    T_ASIDE,
    T_KIND,
    T_PTS,
    TOTAL,
    TURN,
)
from card_envs.flipology.observe import observe  # noqa: F401  (kernel of the protocol)
from card_envs.flipology.scoring import game_result, public_score

__all__ = ["STATE_SIZE", "init", "legal_mask", "observe", "outcome", "step"]


@njit(cache=True)
def _draw(state: np.ndarray) -> int:
    state[DECKN] -= 1
    c = state[DECK + state[DECKN]]
    state[NDRAW] += 1
    state[SEQ + c] = state[NDRAW]
    return c


@njit(cache=True)
def _deal_level(state: np.ndarray, cfg: np.ndarray) -> None:
    """Deal a hand to every seat (from the start player) and open the setup of a new row."""
    n = cfg[C_PLAYERS]
    hn = cfg[G_HANDN]
    st = state[START]
    for i in range(n):
        s = (st + i) % n
        for j in range(hn):
            c = _draw(state)
            state[HAND + s * HANDMAX + j] = c
            state[KNOW + c] |= 1 << s
    state[SETK] = 0
    state[PLACED] = 0
    _open_setup(state, cfg)


@njit(cache=True)
def _open_setup(state: np.ndarray, cfg: np.ndarray) -> None:
    """Give the setup to seat START + SETK (regrowth choice first in the Great Tree)."""
    s = (state[START] + state[SETK]) % cfg[C_PLAYERS]
    state[CUR] = s
    state[PLACED] = 0
    if cfg[G_VARIANT] == 1 and state[REGROW + s] == 0:
        state[PHASE] = P_REGROW
    else:
        state[PHASE] = P_SETUP


@njit(cache=True)
def deal_game(state: np.ndarray, cfg: np.ndarray) -> None:
    """Collect every card, shuffle and deal a new game (series totals are kept)."""
    nc = cfg[G_NCARDS]
    for p in range(MAXPOS):
        state[POS + p] = -1
        state[FACE + p] = 0
    for i in range(MAX_PLAYERS * HANDMAX):
        state[HAND + i] = -1
    m = 0
    for c in range(MAXC):
        state[DISC + c] = 0
        state[PICK + c] = 0
        state[KNOW + c] = 0
        state[DECK + c] = 0
        state[SEQ + c] = 0
        state[RET + c] = 0
    state[NDRAW] = 0
    for c in range(nc):
        if cfg[T_ASIDE + c] == 0:
            state[DECK + m] = c
            m += 1
    state[KNOW + nc] = ALL_SEATS
    state[DLEN] = 0
    state[DECKN] = m
    shuffle_prefix(state, state[DECK:DECK + m], m)
    for s in range(MAX_PLAYERS):
        state[BONUS + s] = 0
        state[REGROW + s] = 0
        state[RETSEQ + s] = 0
    state[ROUND] = 0
    state[TURN] = 0
    state[LEVELS] = 1
    state[NULLS] = 0
    state[CHAIN] = 0
    state[HSCAN] = 0
    state[HCARD] = -1
    clear_frame(state)
    _deal_level(state, cfg)


@njit(cache=True)
def init(state: np.ndarray, cfg: np.ndarray) -> None:
    """Deal a new game (series: the first game) using the RNG already in the header."""
    n = cfg[C_PLAYERS]
    for i in range(POS, STATE_SIZE):
        state[i] = 0
    st = cfg[C_START]
    if st < 0:
        st = rng_int(state, n)
    state[START] = st
    state[GAME] = 0
    state[DONE] = 0
    state[STEPS] = 0
    deal_game(state, cfg)


@njit(cache=True)
def animal(k: int) -> bool:
    return k <= RED_PANDA


@njit(cache=True)
def legal_mask(state: np.ndarray, cfg: np.ndarray, mask: np.ndarray) -> None:
    """Write the int8 legal-action mask of the seat to act (all 0 once the game is over)."""
    mask[:] = 0
    if state[DONE]:
        return
    ph = state[PHASE]
    cur = state[CUR]
    if ph == P_TURN:
        rl = cfg[G_ROWLEN]
        a0 = (state[LEVELS] - 1) * rl
        for col in range(rl):
            mask[a0 + col] = 1
    elif ph == P_EFFECT:
        effect_enum(state, cfg, mask, True)
    elif ph == P_SETUP:
        h0 = cfg[G_HAND0]
        for j in range(cfg[G_HANDN]):
            if state[HAND + cur * HANDMAX + j] >= 0:
                mask[h0 + j] = 1
    elif ph == P_REGROW:
        mask[cfg[G_SKIP] + 1] = 1
        mask[cfg[G_SKIP] + 2] = 1
    elif ph == P_HERMIT:
        _hermit_choices(state, cfg, mask, True)
    elif ph == P_HCOUNT:
        mask[cfg[G_SKIP] + 3] = 1
        mask[cfg[G_SKIP] + 4] = 1


@njit(cache=True)
def _hermit_choices(state: np.ndarray, cfg: np.ndarray, mask: np.ndarray, write: bool) -> int:
    """Discarded animals not yet picked (and skip); returns how many cards."""
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
def _place(state: np.ndarray, cfg: np.ndarray, slot: int) -> None:
    s = state[CUR]
    rl = cfg[G_ROWLEN]
    p = s * cfg[G_SEATPOS] + (state[LEVELS] - 1) * rl + state[PLACED]
    state[POS + p] = state[HAND + s * HANDMAX + slot]
    state[FACE + p] = 0
    state[HAND + s * HANDMAX + slot] = -1
    state[PLACED] += 1


@njit(cache=True)
def _after_place(state: np.ndarray, cfg: np.ndarray) -> None:
    """After a placement: forced last card, end of this seat's setup, end of the setup."""
    s = state[CUR]
    rl = cfg[G_ROWLEN]
    hn = cfg[G_HANDN]
    if state[PLACED] == rl - 1 and hn == rl:  # one card left: forced
        for j in range(hn):
            if state[HAND + s * HANDMAX + j] >= 0:
                _place(state, cfg, j)
                break
    if state[PLACED] < rl:
        return
    for j in range(hn):  # Nature: the two cards left go to the discard pile, face down
        c = state[HAND + s * HANDMAX + j]
        if c >= 0:
            discard(state, c)
            state[HAND + s * HANDMAX + j] = -1
    state[SETK] += 1
    if state[SETK] < cfg[C_PLAYERS]:
        _open_setup(state, cfg)
        return
    state[PHASE] = P_TURN
    state[TURN] = 0
    state[CUR] = state[START]


@njit(cache=True)
def _regrow(state: np.ndarray, cfg: np.ndarray) -> None:
    """Great Tree Regrowth: draw 5 new cards first, then shuffle the old 5 into the deck."""
    s = state[CUR]
    hn = cfg[G_HANDN]
    old = np.empty(HANDMAX, np.int32)
    for j in range(hn):
        old[j] = state[HAND + s * HANDMAX + j]
    for j in range(hn):
        c = _draw(state)
        state[HAND + s * HANDMAX + j] = c
        state[KNOW + c] |= 1 << s
    m = state[DECKN]
    for j in range(hn):
        state[DECK + m + j] = old[j]
        state[KNOW + old[j]] = 0
        state[SEQ + old[j]] = 0
        state[RET + old[j]] |= 1 << s
    state[RETSEQ + s] = state[NDRAW]
    state[DECKN] = m + hn
    shuffle_prefix(state, state[DECK:DECK + m + hn], m + hn)
    state[REGROW + s] = 1


@njit(cache=True)
def _new_start(state: np.ndarray, cfg: np.ndarray) -> None:
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
def _end_turn(state: np.ndarray, cfg: np.ndarray, rewards: np.ndarray) -> int:
    n = cfg[C_PLAYERS]
    per_round = n if cfg[G_VARIANT] == 0 else 2 * n
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
        return _hermit_next(state, cfg, rewards)
    if cfg[G_VARIANT] == 1:
        _new_start(state, cfg)
        state[LEVELS] += 1
        _deal_level(state, cfg)
        return 0
    state[CUR] = state[START]
    return 0


@njit(cache=True)
def _hermit_next(state: np.ndarray, cfg: np.ndarray, rewards: np.ndarray) -> int:
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
            if _hermit_choices(state, cfg, cfg, False) > 0:
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
    n = cfg[C_PLAYERS]
    npos = n * cfg[G_SEATPOS]
    for p in range(npos):  # face-down Sloths and Koalas are revealed
        c = state[POS + p]
        if c >= 0:
            k = cfg[T_KIND + c]
            if k == SLOTH or k == KOALA:
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
    nw = 0
    for q in range(n):
        if moon:
            state[TOTAL + q] += 25 if winners[q] else 0
        else:
            state[TOTAL + q] += int(points[q]) + (10 if winners[q] else 0)
        nw += winners[q]
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
    state[CUR] = -1
    state[PHASE] = P_END
    state[DONE] = 1


@njit(cache=True)
def series_outcome(state: np.ndarray, cfg: np.ndarray, points: np.ndarray,
                   winners: np.ndarray) -> None:
    n = cfg[C_PLAYERS]
    key2 = np.zeros(n, np.float64)
    for q in range(n):
        points[q] = state[TOTAL + q]
    winners_by_keys(points, key2, n, winners)


@njit(cache=True)
def outcome(state: np.ndarray, cfg: np.ndarray, points: np.ndarray,
            winners: np.ndarray) -> None:
    """Final points and winners: the game's points (Moon: lowest wins), or in a series the
    running totals (highest wins)."""
    if cfg[G_SERIES]:
        series_outcome(state, cfg, points, winners)
    else:
        game_result(state, cfg, points, winners)


@njit(cache=True)
def step(state: np.ndarray, cfg: np.ndarray, action: int, rewards: np.ndarray) -> int:
    """Apply a legal action of the seat to act; returns ST_* bits (rewards at the end)."""
    state[STEPS] += 1
    ph = state[PHASE]
    if ph == P_TURN or ph == P_EFFECT:
        if ph == P_TURN:
            state[CHAIN] = 0
            q = abs_pos(cfg, state[CUR], action)
            c = state[POS + q]
            if state[FACE + q]:
                state[FACE + q] = 0  # the owner's own flip may turn a Cat down
            else:
                state[FACE + q] = 1
                state[KNOW + c] = ALL_SEATS
                if has_effect(cfg[T_KIND + c]):
                    start_frame(state, cfg, q)
        else:
            apply_effect(state, cfg, action)
        if settle(state, cfg):
            return 0
        return _end_turn(state, cfg, rewards)
    if ph == P_SETUP:
        _place(state, cfg, action - cfg[G_HAND0])
        _after_place(state, cfg)
        return 0
    if ph == P_REGROW:
        if action == cfg[G_SKIP] + 1:
            _regrow(state, cfg)
        state[PHASE] = P_SETUP
        return 0
    sk = cfg[G_SKIP]
    owner = state[CUR]
    if ph == P_HERMIT:
        if action == sk:
            state[HSCAN] += 1
            return _hermit_next(state, cfg, rewards)
        c = action - cfg[G_DISC0]
        k = cfg[T_KIND + c]
        state[KNOW + c] = ALL_SEATS  # a pick is public the moment it is made
        if k == SLOTH or k == KOALA:
            state[HCARD] = c
            state[PHASE] = P_HCOUNT
            return 0
        state[PICK + c] = 1
        state[BONUS + owner] += cfg[T_PTS + c]
        state[HSCAN] += 1
        return _hermit_next(state, cfg, rewards)
    # P_HCOUNT
    c = state[HCARD]
    state[HCARD] = -1
    if action == sk + 3:
        state[PICK + c] = 1
        state[BONUS + owner] -= cfg[T_PTS + c]
    else:
        state[PICK + c] = 2
        state[BONUS + owner] += cfg[T_PTS + c]
    state[HSCAN] += 1
    state[PHASE] = P_HERMIT
    return _hermit_next(state, cfg, rewards)

