"""Flipology rules as numba kernels over one int32 state array (pure: no PettingZoo, no I/O).

The protocol kernels (``init``, ``step``, ``legal_mask``, ``outcome``); ``step`` dispatches to
one ``_step_<phase>`` per phase. State layout: ``card_envs.flipology.layout``; deals, setup and
Regrowth: ``parts.deal``; effects: ``parts.effects``; turns, rounds, Hermit crabs and the end:
``parts.rounds``; card values, flips and scoring: ``queries``; observation: ``observe``. The
config array (built by ``FlipologyGame``) carries the options, the action offsets, the deck
(kind and points per card id) and the adjacency tables (``layout.T_*``).
"""

from __future__ import annotations

import numpy as np

from card_envs.core.jit import njit
from card_envs.core.kernels import C_PLAYERS, C_START, CUR, DONE, PHASE, STEPS, rng_int
from card_envs.flipology.layout import (
    A_COUNT_DOWN,
    A_COUNT_UP,
    A_KEEP,
    A_REGROW,
    A_SKIP,
    ALL_SEATS,
    BONUS,
    CHAIN,
    FACE,
    G_DISC0,
    G_HAND0,
    G_HANDN,
    G_ROWLEN,
    G_SERIES,
    G_SKIP,
    GAME,
    HAND,
    HANDMAX,
    HCARD,
    HSCAN,
    KNOW,
    LEVELS,
    P_EFFECT,
    P_HCOUNT,
    P_HERMIT,
    P_REGROW,
    P_SETUP,
    P_TURN,
    PICK,
    PICKED_DOWN,
    PICKED_UP,
    POS,
    START,
    STATE_SIZE,
    T_KIND,
    T_PTS,
)
from card_envs.flipology.parts.deal import deal_game, place_card, regrow
from card_envs.flipology.parts.effects import (
    abs_pos,
    apply_effect,
    effect_enum,
    settle,
    start_frame,
)
from card_envs.flipology.parts.rounds import end_turn, hermit_choices, hermit_next
from card_envs.flipology.queries import (
    flip_face,
    game_result,
    has_effect,
    scores_face_down,
    series_outcome,
)

__all__ = ["STATE_SIZE", "init", "legal_mask", "outcome", "step"]


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
        mask[cfg[G_SKIP] + A_REGROW] = 1
        mask[cfg[G_SKIP] + A_KEEP] = 1
    elif ph == P_HERMIT:
        hermit_choices(state, cfg, mask, True)
    elif ph == P_HCOUNT:
        mask[cfg[G_SKIP] + A_COUNT_UP] = 1
        mask[cfg[G_SKIP] + A_COUNT_DOWN] = 1


@njit(cache=True)
def outcome(state: np.ndarray, cfg: np.ndarray, points: np.ndarray,
            winners: np.ndarray) -> None:
    """Final points and winners: the game's points (Moon: lowest wins), or in a series the
    running totals (highest wins)."""
    if cfg[G_SERIES]:
        series_outcome(state, cfg, points, winners)
    else:
        game_result(state, cfg, points, winners)


# --- step: one helper per phase -------------------------------------------------------------
@njit(cache=True)
def _settle_turn(state: np.ndarray, cfg: np.ndarray, rewards: np.ndarray) -> int:
    """Run the pending effect up to the next choice, else end the turn."""
    if settle(state, cfg):
        return 0
    return end_turn(state, cfg, rewards)


@njit(cache=True, inline="always")
def _step_turn(state: np.ndarray, cfg: np.ndarray, action: int, rewards: np.ndarray) -> int:
    """The turn flip of a card of the own (top) row; turned face up, its effect starts."""
    state[CHAIN] = 0
    q = abs_pos(cfg, state[CUR], action)
    c = state[POS + q]
    k = cfg[T_KIND + c]
    up = state[FACE + q]
    state[FACE + q] = flip_face(k, up, False)  # the owner's own flip may turn a Cat down
    if not up:
        state[KNOW + c] = ALL_SEATS
        if has_effect(k):
            start_frame(state, cfg, q)
    return _settle_turn(state, cfg, rewards)


@njit(cache=True, inline="always")
def _step_effect(state: np.ndarray, cfg: np.ndarray, action: int, rewards: np.ndarray) -> int:
    """A choice inside the pending effect."""
    apply_effect(state, cfg, action)
    return _settle_turn(state, cfg, rewards)


@njit(cache=True, inline="always")
def _step_setup(state: np.ndarray, cfg: np.ndarray, action: int) -> int:
    """Place a hand card face down at the next position of the new row."""
    place_card(state, cfg, action - cfg[G_HAND0])
    return 0


@njit(cache=True, inline="always")
def _step_regrow(state: np.ndarray, cfg: np.ndarray, action: int) -> int:
    """Great Tree: regrow the hand or keep it, then place it."""
    if action == cfg[G_SKIP] + A_REGROW:
        regrow(state, cfg)
    state[PHASE] = P_SETUP
    return 0


@njit(cache=True, inline="always")
def _step_hermit(state: np.ndarray, cfg: np.ndarray, action: int, rewards: np.ndarray) -> int:
    """A Hermit crab's owner picks a discarded animal (a Sloth/Koala: then up or down) or
    skips; then the next Hermit crab or the end of the game."""
    owner = state[CUR]
    if action == cfg[G_SKIP] + A_SKIP:
        state[HSCAN] += 1
        return hermit_next(state, cfg, rewards)
    c = action - cfg[G_DISC0]
    state[KNOW + c] = ALL_SEATS  # a pick is public the moment it is made
    if scores_face_down(cfg[T_KIND + c]):
        state[HCARD] = c
        state[PHASE] = P_HCOUNT
        return 0
    state[PICK + c] = PICKED_UP
    state[BONUS + owner] += cfg[T_PTS + c]
    state[HSCAN] += 1
    return hermit_next(state, cfg, rewards)


@njit(cache=True, inline="always")
def _step_hermit_count(state: np.ndarray, cfg: np.ndarray, action: int,
                       rewards: np.ndarray) -> int:
    """The picked Sloth/Koala counts as face up (minus its points) or face down (plus)."""
    owner = state[CUR]
    c = state[HCARD]
    state[HCARD] = -1
    if action == cfg[G_SKIP] + A_COUNT_UP:
        state[PICK + c] = PICKED_UP
        state[BONUS + owner] -= cfg[T_PTS + c]
    else:
        state[PICK + c] = PICKED_DOWN
        state[BONUS + owner] += cfg[T_PTS + c]
    state[HSCAN] += 1
    state[PHASE] = P_HERMIT
    return hermit_next(state, cfg, rewards)


@njit(cache=True)
def step(state: np.ndarray, cfg: np.ndarray, action: int, rewards: np.ndarray) -> int:
    """Apply a legal action of the seat to act; returns ST_* bits (rewards at the end)."""
    state[STEPS] += 1
    ph = state[PHASE]
    if ph == P_TURN:
        return _step_turn(state, cfg, action, rewards)
    if ph == P_EFFECT:
        return _step_effect(state, cfg, action, rewards)
    if ph == P_SETUP:
        return _step_setup(state, cfg, action)
    if ph == P_REGROW:
        return _step_regrow(state, cfg, action)
    if ph == P_HERMIT:
        return _step_hermit(state, cfg, action, rewards)
    return _step_hermit_count(state, cfg, action, rewards)
