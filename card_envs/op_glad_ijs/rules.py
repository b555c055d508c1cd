"""Op Glad IJs rules as numba kernels over one int32 state array (pure: no PettingZoo, no I/O).

The kernels of the engine protocol (``card_envs.core.game``): ``init``, ``legal_mask``,
``step``, ``observe``, ``outcome``. ``step`` dispatches on the phase to one helper per phase
(only ``react`` takes actions). The state, config, observation and action layouts are in
``card_envs.op_glad_ijs.layout`` (all its names are importable from here too); the pile
kernels are in ``piles``, judging in ``judge``, the resolution of a window in ``resolve``.
Rules: ``docs/rules/op_glad_ijs.md``.
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
    rel_seat,
    rng_int,
    shuffle_prefix,
    terminal_rewards,
    winners_by_keys,
)
from card_envs.op_glad_ijs import layout as L
from card_envs.op_glad_ijs.judge import (  # noqa: F401 (importable from here)
    J_ANIMALS,
    J_FAULT,
    J_HABITATS,
    J_PAIR,
    J_PASS,
    J_RIGHT,
    judge,
    target_exists,
)
from card_envs.op_glad_ijs.layout import *  # noqa: F403 (the layout, importable from here)
from card_envs.op_glad_ijs.layout import (
    A_ONE,
    A_PASS,
    CA,
    CARDS,
    CB,
    CHOICE,
    CT_COUNT,
    DBOT,
    DLEN,
    DTOP,
    G_MAXT,
    G_N,
    G_T,
    GAIN,
    KCOUNT,
    KNOWN,
    LAST,
    LAST_TURNED,
    MAX_PLAYERS,
    MAX_WINDOWS,
    MCOUNT,
    MHEAD,
    MTAIL,
    NEXT,
    O_CHOSEN,
    O_LAST_TURNED,
    O_OWN,
    O_SEATS,
    O_TURNED_BY,
    O_TURNER,
    O_WINDOW,
    OBS_MIDDLE,
    OHEAD,
    OTAIL,
    P_END,
    P_REACT,
    PLEN,
    PLIST,
    REWARD_CARDS,
    S_DRAW,
    S_KNOWN,
    S_LAST,
    S_WON,
    S_WON_TOP,
    SEAT_FIELDS,
    STATE_SIZE,
    TURNED,
    TURNED_BY,
    TURNER,
    WINDOW,
    WLEN,
    WTOP,
)
from card_envs.op_glad_ijs.piles import middle_out, turn_card
from card_envs.op_glad_ijs.resolve import resolve

# the layout's encoding functions, compiled for kernels (here and in the agents' policies)
pair_base_nb = njit(cache=True, inline="always")(L.pair_base)
obs_known_nb = njit(cache=True, inline="always")(L.obs_known)


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
    n = cfg[C_PLAYERS]
    key1 = np.empty(n, np.float64)
    key2 = np.zeros(n, np.float64)
    for p in range(n):
        points[p] = state[WLEN + p]
        key1[p] = state[WLEN + p]
    winners_by_keys(key1, key2, n, winners)


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


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
def observe(state: np.ndarray, cfg: np.ndarray, seat: int, obs: np.ndarray) -> None:
    """Write ``seat``'s observation (layout in ``card_envs.op_glad_ijs.env``); seats are
    relative, the observer first. Other seats' pending choices and the order of the unknown
    part of every draw pile are not shown."""
    n = cfg[C_PLAYERS]
    T = cfg[G_T]
    for t in range(T):
        obs[OBS_MIDDLE + t] = state[MCOUNT + t]
    obs[T + O_LAST_TURNED] = state[LAST_TURNED]
    obs[T + O_WINDOW] = state[WINDOW]
    obs[T + O_TURNED_BY] = rel_seat(state[TURNED_BY], seat, n)
    obs[T + O_TURNER] = rel_seat(state[TURNER], seat, n)
    a = state[CHOICE + seat]
    obs[T + O_CHOSEN] = 1 if a >= 0 else 0
    obs[T + O_OWN] = cfg[CA + a] if a > A_PASS else -1
    obs[T + O_OWN + 1] = cfg[CB + a] if a > A_PASS else -1
    kb = obs_known_nb(n, T)
    for t in range(T):
        obs[kb + t] = state[KCOUNT + t]
    k = T + O_SEATS
    q = seat
    for _ in range(n):
        w = state[WLEN + q]
        obs[k + S_DRAW] = state[DLEN + q]
        obs[k + S_WON] = w
        obs[k + S_WON_TOP] = state[CARDS + 2 * state[WTOP + q]] if w > 0 else -1
        obs[k + S_KNOWN] = state[KNOWN + q]
        la = state[LAST + q]
        obs[k + S_LAST] = cfg[CA + la] if la > A_PASS else -1
        obs[k + S_LAST + 1] = cfg[CB + la] if la > A_PASS else -1
        k += SEAT_FIELDS
        q = q + 1 if q + 1 < n else 0
