"""If It Fits turn sequence (numba): the deal (``init``), the start of a turn, the end of a
turn (the end trigger, the play-out, the final scoring: ``outcome``) and the step after a
draw. ``init`` and ``outcome`` are the engine's kernels (:mod:`card_envs.if_it_fits.rules`)."""

from __future__ import annotations

import numpy as np

from card_envs.core.jit import njit
from card_envs.core.kernels import (
    C_PLAYERS,
    C_REWARD,
    C_START,
    CUR,
    DONE,
    DONE_TERMINATED,
    PHASE,
    ST_DONE,
    ST_REWARD,
    STEPS,
    rng_int,
    shuffle_prefix,
    terminal_rewards,
    winners_by_keys,
)
from card_envs.core.refs import noref
from card_envs.if_it_fits.layout import (
    CATS_EACH,
    CF_ADV,
    CF_COLS,
    CF_NB,
    CF_NC,
    CF_NPR,
    CF_NT,
    CF_O_CELL,
    CF_O_DISC,
    CF_O_PILE,
    DEAL,
    HANDMAX,
    IDX,
    MAX_PLAYERS,
    NUM_START,
    P_DISCARD,
    P_END,
    P_PASS,
    P_PLAY,
    P_START_CARD,
    P_TURN,
    S_CATLOC,
    S_DISCN,
    S_DYN,
    S_ENDTRIG,
    S_FIRST,
    S_HAND,
    S_HANDN,
    S_NSEG,
    S_PLAYED,
    S_PN,
    S_RELAX,
    S_SEGB,
    S_SEL,
    S_SELCELL,
    S_SELSTART,
    S_STARTE,
    S_STARTW,
    S_SUPPLY,
    S_TOY,
)
from card_envs.if_it_fits.parts.board import clear_table
from card_envs.if_it_fits.parts.moves import hand_playable
from card_envs.if_it_fits.queries import score


@njit(cache=True)
def begin_turn(state: np.ndarray, cfg: np.ndarray, q: int) -> None:
    """Seat ``q`` starts a turn: draw or sleep, or in the end phase play, discard or pass."""
    state[CUR] = q
    state[S_PLAYED] = -1
    state[S_SEL] = -1
    state[S_SELCELL] = -1
    state[S_RELAX] = 0
    state[S_TOY] = -1
    if state[S_ENDTRIG]:
        if state[S_HANDN + q] == 0:
            state[PHASE] = P_PASS
        elif hand_playable(state, cfg, q):
            state[PHASE] = P_PLAY
        else:
            state[PHASE] = P_DISCARD
    else:
        state[PHASE] = P_TURN


@njit(cache=True)
def outcome(state: np.ndarray, cfg: np.ndarray, points: np.ndarray,
            winners: np.ndarray) -> None:
    """Final points per seat and the winners (most points, then fewest minus points)."""
    n = cfg[C_PLAYERS]
    minus = np.empty(n, np.float64)
    score(state, cfg, points, minus)
    for p in range(n):
        minus[p] = -minus[p]
    winners_by_keys(points, minus, n, winners)


@njit(cache=True)
def finish(state: np.ndarray, cfg: np.ndarray, rewards: np.ndarray) -> int:
    """The game ends: score it and write the terminal rewards."""
    n = cfg[C_PLAYERS]
    state[CUR] = -1
    state[PHASE] = P_END
    state[DONE] = DONE_TERMINATED
    points = np.empty(n, np.float64)
    winners = np.empty(n, np.int64)
    outcome(state, cfg, points, winners)
    terminal_rewards(cfg[C_REWARD], points, winners, n, rewards)
    return ST_DONE | ST_REWARD


@njit(cache=True)
def end_turn(state: np.ndarray, cfg: np.ndarray, rewards: np.ndarray) -> int:
    """End the turn: trigger the end (empty pile, empty supply), finish once every hand is
    played out, else the next seat's turn."""
    n = cfg[C_PLAYERS]
    p = state[CUR]
    if not state[S_ENDTRIG] and (state[S_PN] == 0 or state[S_SUPPLY + p] == 0):
        state[S_ENDTRIG] = 1
    if state[S_ENDTRIG]:
        left = 0
        for q in range(n):
            left += state[S_HANDN + q]
        if left == 0:
            return finish(state, cfg, rewards)
    begin_turn(state, cfg, p + 1 if p + 1 < n else 0)
    return 0


@njit(cache=True)
def to_play(state: np.ndarray, cfg: np.ndarray, rewards: np.ndarray) -> int:
    """After the draw (and a special toy card): play a card, discard, or end an empty turn."""
    p = state[CUR]
    state[S_TOY] = -1
    if state[S_HANDN + p] == 0:
        return end_turn(state, cfg, rewards)
    state[PHASE] = P_PLAY if hand_playable(state, cfg, p) else P_DISCARD
    return 0


@njit(cache=True)
def discard(state: np.ndarray, cfg: np.ndarray, cid: int) -> None:
    """Card ``cid`` leaves the game face up."""
    state[cfg[CF_O_DISC] + state[S_DISCN]] = cid
    state[S_DISCN] += 1


@njit(cache=True)
def init(state: np.ndarray, cfg: np.ndarray) -> None:
    """Deal a new game using the RNG already stored in the state header."""
    state, cfg = noref(state), noref(cfg)
    n = cfg[C_PLAYERS]
    nb, nt = cfg[CF_NB], cfg[CF_NT]
    for k in range(S_FIRST, S_DYN):
        state[k] = 0
    for k in range(cfg[CF_O_PILE] & IDX, cfg[CF_O_CELL] & IDX):  # (& IDX: see layout.IDX)
        state[k] = 0
    clear_table(state, cfg)
    for k in range(cfg[CF_O_DISC] & IDX, state.shape[0]):
        state[k] = 0
    first = cfg[C_START]
    if first < 0:
        first = rng_int(state, n)
    state[S_FIRST] = first
    for q in range(MAX_PLAYERS):
        state[S_SUPPLY + q] = CATS_EACH if q < n else 0
        for h in range(HANDMAX):
            state[S_HAND + q * HANDMAX + h] = -1
        for k in range(CATS_EACH):
            state[S_CATLOC + q * CATS_EACH + k] = -1
    # hands: DEAL box cards each (a special toy card drawn now is put back and redrawn)
    box = np.arange(nb).astype(np.int32)
    dealt = DEAL * n
    shuffle_prefix(state, box, dealt)
    for q in range(n):
        for h in range(DEAL):
            state[S_HAND + q * HANDMAX + h] = box[DEAL * q + h]
        state[S_HANDN + q] = DEAL
    m = nb - dealt + nt
    rest = np.empty(m, np.int32)
    for k in range(nb - dealt):
        rest[k] = box[dealt + k]
    for k in range(nt):
        rest[nb - dealt + k] = nb + NUM_START + k
    shuffle_prefix(state, rest, m)
    pile = cfg[CF_O_PILE]
    princess = cfg[CF_NC]
    if cfg[CF_ADV]:
        for k in range(m):
            state[pile + k] = rest[k]
        for k in range(cfg[CF_NPR]):
            state[pile + m + k] = princess
        total = m + cfg[CF_NPR]
        shuffle_prefix(state, state[pile:pile + total], total)
        state[S_NSEG] = 1
        state[S_SEGB] = 0
        state[S_SEGB + 1] = total
        state[S_PN] = total
    else:
        base, extra = m // n, m % n
        pos = 0
        used = 0
        state[S_NSEG] = n
        for j in range(n):  # j = 0 is the bottom pile; the top piles get the extra cards
            k = n - 1 - j
            size = base + (1 if k < extra else 0)
            state[S_SEGB + j] = pos
            for t in range(size):
                state[pile + pos + t] = rest[used + t]
            used += size
            state[pile + pos + size] = princess
            shuffle_prefix(state, state[pile + pos:pile + pos + size + 1], size + 1)
            pos += size + 1
        state[S_SEGB + n] = pos
        state[S_PN] = pos
    c = cfg[CF_COLS] // 2
    state[S_STARTW] = c
    state[S_STARTE] = c
    state[S_SEL] = -1
    state[S_SELCELL] = -1
    state[S_SELSTART] = -1
    state[S_PLAYED] = -1
    state[S_TOY] = -1
    state[CUR] = first
    state[PHASE] = P_START_CARD
    state[DONE] = 0
    state[STEPS] = 0
