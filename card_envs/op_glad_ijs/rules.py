"""Op Glad IJs rules as numba kernels over one int32 state array (pure: no PettingZoo, no I/O).

The kernels of the engine protocol (``card_envs.core.game``): ``init``, ``legal_mask``,
``step``, ``outcome`` (``observe`` is in ``observe``). ``step`` dispatches on the phase to one
helper per phase (only ``react`` takes actions); the helpers are compiled into ``step``
(``inline="always"``): separate compiled calls, made every window, slow the batched engine.
The state, config, observation and action layouts are in ``card_envs.op_glad_ijs.layout``;
the pile kernels are in ``parts.piles``, judging and the other rule queries in ``queries``,
the resolution of a window in ``parts.resolve``. Rules: ``docs/rules/op_glad_ijs.md``.
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
    DONE_TERMINATED,
    DONE_TRUNCATED,
    HEADER,
    PHASE,
    ST_DONE,
    ST_REWARD,
    ST_TRUNC,
    STEPS,
    rng_int,
    shuffle_prefix,
    terminal_rewards,
)
from card_envs.op_glad_ijs.layout import (
    A_ONE,
    A_PASS,
    CARDS,
    CHOICE,
    CT_COUNT,
    DBOT,
    DLEN,
    DTOP,
    G_MAXT,
    G_N,
    G_T,
    GAIN,
    LAST,
    MAX_PLAYERS,
    MAX_WINDOWS,
    MCOUNT,
    MHEAD,
    MTAIL,
    NEXT,
    OHEAD,
    OTAIL,
    P_END,
    P_REACT,
    PLEN,
    PLIST,
    REWARD_CARDS,
    STATE_SIZE,
    TURNED,
    TURNER,
    WINDOW,
    WLEN,
    WTOP,
)
from card_envs.op_glad_ijs.parts.piles import middle_out, turn_card
from card_envs.op_glad_ijs.parts.resolve import resolve
from card_envs.op_glad_ijs.queries import pair_base_nb, scores, target_exists


@njit(cache=True)
def init(state: np.ndarray, cfg: np.ndarray) -> None:
    """Deal a new game using the RNG already stored in the state header; the start player
    turns the first card."""
    n = cfg[C_PLAYERS]
    T = cfg[G_T]
    N = cfg[G_N]
    for i in range(HEADER, STATE_SIZE):
        state[i] = 0
    deck = np.empty(N, np.int32)
    k = 0
    for t in range(T):
        for _ in range(cfg[CT_COUNT + t]):
            deck[k] = t
            k += 1
    shuffle_prefix(state, deck, N)
    start = cfg[C_START]
    if start < 0:
        start = rng_int(state, n)
    for p in range(MAX_PLAYERS):
        state[CHOICE + p] = -1
        state[LAST + p] = -1
        state[DTOP + p] = -1
        state[DBOT + p] = -1
        state[WTOP + p] = -1
    for f in (MHEAD, MTAIL, OHEAD, OTAIL):
        state[f] = -1
    base = N // n
    extra = N % n
    k = 0
    for i in range(n):
        seat = (start + i) % n
        m = base + (1 if i < extra else 0)
        for j in range(m):  # slot k; linked top (last dealt) to bottom (first dealt)
            state[CARDS + 2 * k] = deck[k]
            state[NEXT + 2 * k] = k - 1 if j > 0 else -1
            k += 1
        if m > 0:
            state[DTOP + seat] = k - 1
            state[DBOT + seat] = k - m
        state[DLEN + seat] = m
    state[PHASE] = P_REACT
    state[DONE] = 0
    state[STEPS] = 0
    turn_card(state, cfg, start)


@njit(cache=True)
def legal_mask(state: np.ndarray, cfg: np.ndarray, mask: np.ndarray) -> None:
    """Pass, one hand on any type in the middle, two hands on any two present types (the
    same type twice if two such cards lie there). All 0 once the game is over."""
    mask[:] = 0
    if state[DONE]:
        return
    T = cfg[G_T]
    mask[A_PASS] = 1
    k = state[PLEN]
    for i in range(k):
        t = state[PLIST + i]
        mask[A_ONE + t] = 1
        base = pair_base_nb(t, T)  # + u: the pair (t, u), u >= t
        if state[MCOUNT + t] > 1:
            mask[base + t] = 1
        for j in range(i + 1, k):
            mask[base + state[PLIST + j]] = 1


@njit(cache=True)
def outcome(state: np.ndarray, cfg: np.ndarray, points: np.ndarray,
            winners: np.ndarray) -> None:
    """Points = won-pile size; most cards wins, a tie is a shared win."""
    scores(state[WLEN:WLEN + cfg[C_PLAYERS]], points, winners)


@njit(cache=True)
def step(state: np.ndarray, cfg: np.ndarray, action: int, rewards: np.ndarray) -> int:
    """Apply a legal action of the seat to act: one helper per phase. Only ``react`` has
    actions (``end``: the game is over, nothing is legal, nothing changes)."""
    if state[PHASE] == P_REACT:
        return _step_react(state, cfg, action, rewards)
    return 0


@njit(cache=True, inline="always")
def _step_react(state: np.ndarray, cfg: np.ndarray, action: int, rewards: np.ndarray) -> int:
    """Record the choice of the seat to act; after the last seat of the window, resolve it."""
    n = cfg[C_PLAYERS]
    p = state[CUR]
    state[STEPS] += 1
    state[CHOICE + p] = action
    if p + 1 < n:
        state[CUR] = p + 1
        return 0
    return _end_window(state, cfg, rewards)


@njit(cache=True, inline="always")
def _end_window(state: np.ndarray, cfg: np.ndarray, rewards: np.ndarray) -> int:
    """Resolve the window (dense ``cards`` rewards: the won-pile changes), then open another
    window while a slap took cards and a correct target is left, else end the reaction
    phase."""
    n = cfg[C_PLAYERS]
    dense = cfg[C_REWARD] == REWARD_CARDS
    status = 0
    for q in range(n):
        state[GAIN + q] = -state[WLEN + q]
    took = resolve(state, cfg)
    for q in range(n):
        state[GAIN + q] += state[WLEN + q]
    if dense:
        for q in range(n):
            rewards[q] = state[GAIN + q]
        status = ST_REWARD
    if took and state[WINDOW] + 1 < MAX_WINDOWS and target_exists(state, cfg):
        state[WINDOW] += 1
        state[CUR] = 0
        return status
    return _end_reaction(state, cfg, rewards, status)


@njit(cache=True, inline="always")
def _end_reaction(state: np.ndarray, cfg: np.ndarray, rewards: np.ndarray,
                  status: int) -> int:
    """The reaction phase of this card is over: the next seat with draw cards turns, unless
    no draw cards are left (the end) or the cut-off is reached (truncation)."""
    n = cfg[C_PLAYERS]
    left = 0
    for q in range(n):
        left += state[DLEN + q]
    if left > 0 and state[TURNED] < cfg[G_MAXT]:
        s = state[TURNER]
        while state[DLEN + s] == 0:
            s = (s + 1) % n
        turn_card(state, cfg, s)
        return status
    return _end_game(state, cfg, rewards, left > 0)


@njit(cache=True, inline="always")
def _end_game(state: np.ndarray, cfg: np.ndarray, rewards: np.ndarray, trunc: bool) -> int:
    """The end (``trunc``: cut off): the middle goes out of the game, the seats are scored."""
    n = cfg[C_PLAYERS]
    middle_out(state, cfg)
    state[CUR] = -1
    state[PHASE] = P_END
    state[DONE] = DONE_TRUNCATED if trunc else DONE_TERMINATED
    if cfg[C_REWARD] != REWARD_CARDS:  # dense rewards were paid window by window
        points = np.empty(n, np.float64)
        winners = np.empty(n, np.int64)
        outcome(state, cfg, points, winners)
        terminal_rewards(cfg[C_REWARD], points, winners, n, rewards)
    return ST_DONE | ST_REWARD | (ST_TRUNC if trunc else 0)
