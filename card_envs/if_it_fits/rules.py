"""If It Fits rules as numba kernels over one int32 state array (pure: no PettingZoo, no I/O):
``init`` and ``outcome`` (the deal and the final scoring, in ``parts/turns.py``), ``step`` and
``legal_mask``.

State layout and action encoding: :mod:`card_envs.if_it_fits.layout` (``T = rows*cols`` cells,
``S = (rows-1)*cols`` slots, ``B = T + S``: ``0..T-1`` cell, ``T..B-1`` slot, then ``B + A_*``);
the rule queries (geometry, where things may go, boxes and scores):
:mod:`card_envs.if_it_fits.queries`; table kernels (placement, boxes):
``parts/board.py``; the mask's move helpers: ``parts/moves.py``; the turn sequence:
``parts/turns.py``; observation: :mod:`card_envs.if_it_fits.observe`. ``step`` dispatches on
the phase to one ``_step_<phase>`` helper each. Rules: ``docs/rules/if_it_fits.md``.
"""

from __future__ import annotations

import numpy as np

from card_envs.core.jit import njit
from card_envs.core.kernels import (
    C_PLAYERS,
    CUR,
    DONE,
    PHASE,
    STEPS,
)
from card_envs.core.refs import noref
from card_envs.if_it_fits.layout import (
    A_DIR,
    A_DRAW,
    A_END,
    A_HAND,
    A_PASS,
    A_ROT,
    A_SKIP,
    A_SLEEP,
    A_START,
    CATS_EACH,
    CF_ADV,
    CF_COLS,
    CF_NB,
    CF_NC,
    CF_O_FLIST,
    CF_O_PILE,
    CF_ROWS,
    CF_TABLE,
    F_KIND,
    FIELDS,
    HANDMAX,
    KIND_TOY,
    NUM_START,
    P_CAT,
    P_CELL,
    P_DISCARD,
    P_PASS,
    P_PLAY,
    P_PRINCESS,
    P_ROT,
    P_SLEEP_CELL,
    P_SLEEP_DIR,
    P_START_CARD,
    P_START_END,
    P_START_ROT,
    P_TOY_CELL,
    P_TOY_SLOT,
    P_TURN,
    S_CATLOC,
    S_FIRST,
    S_FRONTN,
    S_HAND,
    S_HANDN,
    S_PLAYED,
    S_PN,
    S_RELAX,
    S_SEL,
    S_SELCELL,
    S_SELSTART,
    S_STARTE,
    S_STARTN,
    S_STARTUSED,
    S_STARTW,
    S_SUPPLY,
    S_TOY,
    SLOT_TOY,
)
from card_envs.if_it_fits.parts.board import (
    add_cat,
    place_card,
    place_sleeper,
    princess_replace,
    set_catloc,
    set_slot,
)
from card_envs.if_it_fits.parts.moves import (
    any_sleep,
    any_toy_slot,
    cat_slots,
    hand_remove,
    playable,
    strict,
)
from card_envs.if_it_fits.parts.turns import (
    begin_turn,
    discard,
    end_turn,
    init,
    outcome,
    to_play,
)
from card_envs.if_it_fits.queries import (
    any_fit,
    card_open,
    find,
    fits,
    open_nbr,
    sleep_dir_ok,
    sleep_joins,
    start_end_cell,
    start_fit,
    toy_slot_ok,
)

__all__ = ["init", "legal_mask", "outcome", "step"]


@njit(cache=True, inline="always")
def _specials(cfg: np.ndarray) -> int:
    """``B``: the first action after the cells and slots."""
    T = cfg[CF_ROWS] * cfg[CF_COLS]
    return T + T - cfg[CF_COLS]


@njit(cache=True)
def legal_mask(state: np.ndarray, cfg: np.ndarray, mask: np.ndarray) -> None:
    """Write the int8 legal-action mask of the seat to act (all 0 once the game is over)."""
    state, cfg, mask = noref(state), noref(cfg), noref(mask)
    mask[:] = 0
    if state[DONE]:
        return
    T = cfg[CF_ROWS] * cfg[CF_COLS]
    S = T - cfg[CF_COLS]
    B = T + S
    p = state[CUR]
    ph = state[PHASE]
    if ph == P_TURN:
        mask[B + A_DRAW] = 1
        if state[S_SUPPLY + p] > 0 and any_sleep(state, cfg, p):
            mask[B + A_SLEEP] = 1
    elif ph == P_PLAY:
        for h in range(state[S_HANDN + p]):
            if playable(state, cfg, state[S_HAND + p * HANDMAX + h]):
                mask[B + A_HAND + h] = 1
    elif ph == P_CELL:
        cid = state[S_HAND + p * HANDMAX + state[S_SEL]]
        fl = cfg[CF_O_FLIST]
        if strict(state, cfg):
            o0, o1 = card_open(cfg, cid, 0), card_open(cfg, cid, 1)
            for k in range(state[S_FRONTN]):  # frontier cells are empty, next to a card
                i = state[fl + k]
                if fits(state, cfg, i, o0) or fits(state, cfg, i, o1):
                    mask[i] = 1
        else:
            for k in range(state[S_FRONTN]):
                mask[state[fl + k]] = 1
    elif ph == P_ROT or ph == P_START_ROT:
        i = state[S_SELCELL]
        if ph == P_ROT:
            cid = state[S_HAND + p * HANDMAX + state[S_SEL]]
        else:
            cid = cfg[CF_NB] + state[S_SELSTART]
        st = strict(state, cfg)
        for r in range(2):
            if not st or fits(state, cfg, i, card_open(cfg, cid, r)):
                mask[B + A_ROT + r] = 1
    elif ph == P_CAT:
        a, b = cat_slots(state, cfg, p)
        if a >= 0:
            mask[T + a] = 1
        if b >= 0:
            mask[T + b] = 1
        mask[B + A_SKIP] = 1
    elif ph == P_TOY_SLOT:
        for s in range(S):
            if toy_slot_ok(state, cfg, p, s):
                mask[T + s] = 1
    elif ph == P_TOY_CELL:
        fl = cfg[CF_O_FLIST]
        for k in range(state[S_FRONTN]):
            mask[state[fl + k]] = 1
    elif ph == P_PRINCESS:
        for q in range(cfg[C_PLAYERS]):
            for k in range(CATS_EACH):
                loc = state[S_CATLOC + q * CATS_EACH + k]
                if loc >= 0:
                    mask[T + loc if loc < S else loc - S] = 1
    elif ph == P_SLEEP_CELL:
        fl = cfg[CF_O_FLIST]
        for k in range(state[S_FRONTN]):  # sleep_cell_ok on the frontier (empty cells)
            i = state[fl + k]
            on = open_nbr(state, cfg, i)
            if on != 0 and sleep_joins(state, cfg, p, i, on):
                mask[i] = 1
    elif ph == P_SLEEP_DIR:
        for d in range(4):
            if sleep_dir_ok(state, cfg, p, state[S_SELCELL], d):
                mask[B + A_DIR + d] = 1
    elif ph == P_DISCARD:
        for h in range(state[S_HANDN + p]):
            mask[B + A_HAND + h] = 1
    elif ph == P_PASS:
        mask[B + A_PASS] = 1
    elif ph == P_START_CARD:
        for k in range(NUM_START):
            if not state[S_STARTUSED] & (1 << k):
                mask[B + A_START + k] = 1
    elif ph == P_START_END:
        cid = cfg[CF_NB] + state[S_SELSTART]
        st = strict(state, cfg)
        for e in range(2):
            i = start_end_cell(state, cfg, e)
            if i >= 0 and (not st or fits(state, cfg, i, card_open(cfg, cid, 0))
                           or fits(state, cfg, i, card_open(cfg, cid, 1))):
                mask[B + A_END + e] = 1


# --- step: one helper per phase -----------------------------------------------------------
@njit(cache=True)
def _step_turn(state: np.ndarray, cfg: np.ndarray, action: int, rewards: np.ndarray) -> int:
    """A: draw the top card (a special toy card is placed at once), or B: a sleeping cat."""
    p = state[CUR]
    if action - _specials(cfg) == A_SLEEP:
        state[PHASE] = P_SLEEP_CELL
        return 0
    state[S_PN] -= 1
    cid = state[cfg[CF_O_PILE] + state[S_PN]]
    state[cfg[CF_O_PILE] + state[S_PN]] = 0
    if cid < cfg[CF_NC] and cfg[CF_TABLE + cid * FIELDS + F_KIND] == KIND_TOY:
        state[S_TOY] = cid
        if any_toy_slot(state, cfg, p):
            state[PHASE] = P_TOY_SLOT
            return 0
        if state[S_FRONTN] > 0:
            state[PHASE] = P_TOY_CELL
            return 0
        discard(state, cfg, cid)  # the table is full: the toy card leaves the game
        return to_play(state, cfg, rewards)
    state[S_HAND + p * HANDMAX + state[S_HANDN + p]] = cid
    state[S_HANDN + p] += 1
    return to_play(state, cfg, rewards)


@njit(cache=True)
def _step_play(state: np.ndarray, cfg: np.ndarray, action: int, rewards: np.ndarray) -> int:
    """The hand position to play: a Princess, or a card (its cell comes next)."""
    p = state[CUR]
    h = action - _specials(cfg) - A_HAND
    state[S_SEL] = h
    cid = state[S_HAND + p * HANDMAX + h]
    if cid == cfg[CF_NC]:
        state[PHASE] = P_PRINCESS
    else:
        state[S_RELAX] = 1 if cfg[CF_ADV] and not any_fit(state, cfg, cid) else 0
        state[PHASE] = P_CELL
    return 0


@njit(cache=True)
def _step_cell(state: np.ndarray, cfg: np.ndarray, action: int, rewards: np.ndarray) -> int:
    """The cell of the card being played."""
    state[S_SELCELL] = action
    state[PHASE] = P_ROT
    return 0


@njit(cache=True)
def _step_rot(state: np.ndarray, cfg: np.ndarray, action: int, rewards: np.ndarray) -> int:
    """The rotation: the card is laid; an awake cat may follow."""
    p = state[CUR]
    cid = hand_remove(state, p, state[S_SEL])
    i = state[S_SELCELL]
    place_card(state, cfg, i, cid, action - _specials(cfg) - A_ROT)
    state[S_PLAYED] = i
    if state[S_SUPPLY + p] > 0:
        x, y = cat_slots(state, cfg, p)
        if x >= 0 or y >= 0:
            state[PHASE] = P_CAT
            return 0
    return end_turn(state, cfg, rewards)


@njit(cache=True)
def _step_cat(state: np.ndarray, cfg: np.ndarray, action: int, rewards: np.ndarray) -> int:
    """An awake cat on a slot of the card just played, or skip."""
    p = state[CUR]
    if action - _specials(cfg) != A_SKIP:
        s = action - cfg[CF_ROWS] * cfg[CF_COLS]
        set_slot(state, cfg, s, p + 1)
        add_cat(state, cfg, find(state, cfg, s), p)
        state[S_SUPPLY + p] -= 1
        set_catloc(state, p, -1, s)
    return end_turn(state, cfg, rewards)


@njit(cache=True)
def _step_toy_slot(state: np.ndarray, cfg: np.ndarray, action: int,
                   rewards: np.ndarray) -> int:
    """The drawn special toy card goes on a slot; then the hand is played."""
    s = action - cfg[CF_ROWS] * cfg[CF_COLS]
    set_slot(state, cfg, s, SLOT_TOY + state[S_TOY] - cfg[CF_NB] - NUM_START)
    return to_play(state, cfg, rewards)


@njit(cache=True)
def _step_toy_cell(state: np.ndarray, cfg: np.ndarray, action: int,
                   rewards: np.ndarray) -> int:
    """The drawn special toy card is laid as a card (no slot for it); then the hand."""
    place_card(state, cfg, action, state[S_TOY], 0)
    return to_play(state, cfg, rewards)


@njit(cache=True)
def _step_princess(state: np.ndarray, cfg: np.ndarray, action: int,
                   rewards: np.ndarray) -> int:
    """The cat the Princess replaces (a slot, or a sleeping cat's cell); the turn ends."""
    T = cfg[CF_ROWS] * cfg[CF_COLS]
    S = T - cfg[CF_COLS]
    princess_replace(state, cfg, S + action if action < T else action - T)
    hand_remove(state, state[CUR], state[S_SEL])
    return end_turn(state, cfg, rewards)


@njit(cache=True)
def _step_sleep_cell(state: np.ndarray, cfg: np.ndarray, action: int,
                     rewards: np.ndarray) -> int:
    """The cell of the sleeping cat."""
    state[S_SELCELL] = action
    state[PHASE] = P_SLEEP_DIR
    return 0


@njit(cache=True)
def _step_sleep_dir(state: np.ndarray, cfg: np.ndarray, action: int,
                    rewards: np.ndarray) -> int:
    """The card whose box the sleeping cat joins: it is laid and the turn ends."""
    p = state[CUR]
    i = state[S_SELCELL]
    place_sleeper(state, cfg, i, p, action - _specials(cfg) - A_DIR)
    state[S_SUPPLY + p] -= 1
    set_catloc(state, p, -1, cfg[CF_ROWS] * cfg[CF_COLS] - cfg[CF_COLS] + i)
    return end_turn(state, cfg, rewards)


@njit(cache=True)
def _step_discard(state: np.ndarray, cfg: np.ndarray, action: int,
                  rewards: np.ndarray) -> int:
    """Nothing in the hand can be played: the chosen card is discarded."""
    discard(state, cfg, hand_remove(state, state[CUR], action - _specials(cfg) - A_HAND))
    return end_turn(state, cfg, rewards)


@njit(cache=True)
def _step_pass(state: np.ndarray, cfg: np.ndarray, action: int, rewards: np.ndarray) -> int:
    """End phase, empty hand: the turn passes."""
    return end_turn(state, cfg, rewards)


@njit(cache=True)
def _step_start_card(state: np.ndarray, cfg: np.ndarray, action: int,
                     rewards: np.ndarray) -> int:
    """The start card to lay: the first goes to the centre, the others to an end of the row."""
    k = action - _specials(cfg) - A_START
    state[S_SELSTART] = k
    if state[S_STARTN] == 0:
        state[S_SELCELL] = (cfg[CF_ROWS] // 2) * cfg[CF_COLS] + cfg[CF_COLS] // 2
        state[S_RELAX] = 0
        state[PHASE] = P_START_ROT
    else:
        state[S_RELAX] = 1 if cfg[CF_ADV] and not start_fit(state, cfg, k) else 0
        state[PHASE] = P_START_END
    return 0


@njit(cache=True)
def _step_start_end(state: np.ndarray, cfg: np.ndarray, action: int,
                    rewards: np.ndarray) -> int:
    """The end of the start row (west / east) for the start card."""
    state[S_SELCELL] = start_end_cell(state, cfg, action - _specials(cfg) - A_END)
    state[PHASE] = P_START_ROT
    return 0


@njit(cache=True)
def _step_start_rot(state: np.ndarray, cfg: np.ndarray, action: int,
                    rewards: np.ndarray) -> int:
    """The start card's rotation: it is laid; the next seat, or the first turn."""
    n = cfg[C_PLAYERS]
    p = state[CUR]
    k = state[S_SELSTART]
    i = state[S_SELCELL]
    place_card(state, cfg, i, cfg[CF_NB] + k, action - _specials(cfg) - A_ROT)
    state[S_STARTUSED] |= 1 << k
    state[S_STARTN] += 1
    c = i % cfg[CF_COLS]
    if c < state[S_STARTW]:
        state[S_STARTW] = c
    if c > state[S_STARTE]:
        state[S_STARTE] = c
    state[S_SELSTART] = -1
    state[S_SELCELL] = -1
    state[S_RELAX] = 0
    if state[S_STARTN] == n:
        begin_turn(state, cfg, state[S_FIRST])
    else:
        state[CUR] = p + 1 if p + 1 < n else 0
        state[PHASE] = P_START_CARD
    return 0


@njit(cache=True)
def step(state: np.ndarray, cfg: np.ndarray, action: int, rewards: np.ndarray) -> int:
    """Apply a legal action of the seat to act; returns ST_* bits (rewards only at the end).
    Dispatches on the phase to ``_step_<phase>``."""
    state, cfg, rewards = noref(state), noref(cfg), noref(rewards)
    state[STEPS] += 1
    ph = state[PHASE]
    if ph == P_TURN:
        return _step_turn(state, cfg, action, rewards)
    if ph == P_PLAY:
        return _step_play(state, cfg, action, rewards)
    if ph == P_CELL:
        return _step_cell(state, cfg, action, rewards)
    if ph == P_ROT:
        return _step_rot(state, cfg, action, rewards)
    if ph == P_CAT:
        return _step_cat(state, cfg, action, rewards)
    if ph == P_TOY_SLOT:
        return _step_toy_slot(state, cfg, action, rewards)
    if ph == P_TOY_CELL:
        return _step_toy_cell(state, cfg, action, rewards)
    if ph == P_PRINCESS:
        return _step_princess(state, cfg, action, rewards)
    if ph == P_SLEEP_CELL:
        return _step_sleep_cell(state, cfg, action, rewards)
    if ph == P_SLEEP_DIR:
        return _step_sleep_dir(state, cfg, action, rewards)
    if ph == P_DISCARD:
        return _step_discard(state, cfg, action, rewards)
    if ph == P_PASS:
        return _step_pass(state, cfg, action, rewards)
    if ph == P_START_CARD:
        return _step_start_card(state, cfg, action, rewards)
    if ph == P_START_END:
        return _step_start_end(state, cfg, action, rewards)
    return _step_start_rot(state, cfg, action, rewards)
