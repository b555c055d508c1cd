"""Op Glad IJs rules as numba kernels over one int32 state array (pure: no PettingZoo, no I/O).

Cards are stored as *type* indices ``0..T-1`` of the configuration (``deck.configured_types``).
Config (int32, built by ``OpGladIJsGame.configure``): shared header, then ``G_T`` (types),
``G_N`` (cards), ``G_MAXT`` (cut-off), and tables of ``MAX_TYPES`` entries per type (count,
kind, animal bitmask, habitat bitmask), then the action decoding tables (first and second
type of each action, -1 for none).

State layout (int32 offsets; sized for 6 seats, 120 cards, 48 types; hot fields first):

| field       | offset | size | meaning                                                     |
|-------------|--------|------|-------------------------------------------------------------|
| header      | 0      | 8    | shared header (`card_envs.core.kernels`)                    |
| CHOICE      | 8      | 6    | action chosen in the current window (-1 = not yet)          |
| LAST        | 14     | 6    | action of the last resolved window (-1 = none yet)          |
| TURNED_BY   | 20     | 1    | seat that turned the card of the current reaction phase     |
| TURNER      | 21     | 1    | seat turning next as known so far (before skipping empties) |
| WINDOW      | 22     | 1    | window index within the current card's reaction phase, 0-15 |
| TURNED      | 23     | 1    | cards turned so far (cut-off at ``max_turned``)             |
| LAST_TURNED | 24     | 1    | type of the last turned card                                |
| GAIN        | 25     | 6    | change of each won-pile size in the last resolved window    |
| DLEN        | 31     | 6    | draw pile sizes                                             |
| WLEN        | 37     | 6    | won pile sizes                                              |
| KNOWN       | 43     | 6    | public cards at the bottom of each draw pile (after faults) |
| MLEN        | 49     | 1    | cards in the middle                                         |
| OLEN        | 50     | 1    | cards out of the game                                       |
| NRIGHT      | 51     | 1    | right-habitat cards in the middle                           |
| NA          | 52     | 6    | normal cards in the middle showing animal a                 |
| NH          | 58     | 6    | normal cards in the middle showing habitat h                |
| PLEN        | 64     | 1    | number of types present in the middle                       |
| DTOP        | 65     | 6    | slot of each draw pile's top card (-1 = empty pile)         |
| DBOT        | 71     | 6    | slot of each draw pile's bottom card (-1 = empty pile)      |
| WTOP        | 77     | 6    | slot of each won pile's top card (-1 = empty pile)          |
| MHEAD/MTAIL | 83     | 2    | slots of the earliest / latest middle card (-1 = empty)     |
| OHEAD/OTAIL | 85     | 2    | slots of the first / last card out of the game (-1 = none)  |
| PLIST       | 87     | 48   | the types present in the middle, ascending                  |
| MCOUNT      | 135    | 48   | middle count per type                                       |
| KCOUNT      | 183    | 48   | per type: public cards at the bottoms of all draw piles     |
| CARDS       | 231    | 240  | per card slot (x120): type, next slot (-1 = end of its pile) |

Every card is in exactly one pile, so the piles are singly linked lists over ``MAX_CARDS``
card slots (``CARDS + 2 * slot`` = its type, ``CARDS + 2 * slot + 1`` = the next slot):
a draw pile links top to bottom (turn = pop the top, fault = append at the bottom), a won
pile top to bottom (a stack), the middle and the out pile earliest to latest. ``init``
deals the shuffled deck's ``k``-th card into slot ``k``. 471 int32 (1,884 bytes) in all.
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

MAX_PLAYERS = 6
MAX_CARDS = 120
MAX_TYPES = 48
MAX_ACTIONS = 1 + MAX_TYPES + MAX_TYPES * (MAX_TYPES + 1) // 2
MAX_WINDOWS = 16
MAX_TURNED = 1000  # default cut-off
REWARD_CARDS = 2
KIND_NORMAL, KIND_RIGHT, KIND_ANIMALS, KIND_HABITATS = 0, 1, 2, 3
P_REACT, P_END = 0, 1

# config
G_T = 4
G_N = 5
G_MAXT = 6  # cut-off: turned cards
CT_COUNT = 12
CT_KIND = CT_COUNT + MAX_TYPES
CT_AM = CT_KIND + MAX_TYPES
CT_HM = CT_AM + MAX_TYPES
CA = CT_HM + MAX_TYPES
CB = CA + MAX_ACTIONS
CFG_SIZE = CB + MAX_ACTIONS

# state (hot fields first)
CHOICE = HEADER
LAST = CHOICE + MAX_PLAYERS
TURNED_BY = LAST + MAX_PLAYERS
TURNER = TURNED_BY + 1
WINDOW = TURNER + 1
TURNED = WINDOW + 1
LAST_TURNED = TURNED + 1
GAIN = LAST_TURNED + 1
DLEN = GAIN + MAX_PLAYERS
WLEN = DLEN + MAX_PLAYERS
KNOWN = WLEN + MAX_PLAYERS
MLEN = KNOWN + MAX_PLAYERS
OLEN = MLEN + 1
NRIGHT = OLEN + 1
NA = NRIGHT + 1
NH = NA + 6
PLEN = NH + 6
DTOP = PLEN + 1
DBOT = DTOP + MAX_PLAYERS
WTOP = DBOT + MAX_PLAYERS
MHEAD = WTOP + MAX_PLAYERS
MTAIL = MHEAD + 1
OHEAD = MTAIL + 1
OTAIL = OHEAD + 1
PLIST = OTAIL + 1
MCOUNT = PLIST + MAX_TYPES
KCOUNT = MCOUNT + MAX_TYPES
CARDS = KCOUNT + MAX_TYPES  # per slot: type, next
NEXT = CARDS + 1  # state[NEXT + 2 * slot]
STATE_SIZE = CARDS + 2 * MAX_CARDS

# judgement classes
J_PASS, J_RIGHT, J_ANIMALS, J_HABITATS, J_PAIR, J_FAULT = 0, 1, 2, 3, 4, 5


def num_actions(t: int) -> int:
    return 1 + t + t * (t + 1) // 2


def pair_action(t: int, u: int, T: int) -> int:
    """Action of a two-hand slap on types ``t <= u``."""
    return 1 + T + t * T - t * (t - 1) // 2 + (u - t)


def obs_size(n: int, t: int) -> int:
    return 2 * t + 7 + 6 * n


# --- middle bookkeeping --------------------------------------------------------------------
@njit(cache=True, inline="always")
def _count_add(state, cfg, t, d):
    c = state[MCOUNT + t] + d
    state[MCOUNT + t] = c
    if d > 0 and c == 1:  # insert t into the sorted list of present types
        k = state[PLEN]
        i = k
        while i > 0 and state[PLIST + i - 1] > t:
            state[PLIST + i] = state[PLIST + i - 1]
            i -= 1
        state[PLIST + i] = t
        state[PLEN] = k + 1
    elif d < 0 and c == 0:
        k = state[PLEN] - 1
        i = 0
        while state[PLIST + i] != t:
            i += 1
        for j in range(i, k):
            state[PLIST + j] = state[PLIST + j + 1]
        state[PLIST + k] = 0
        state[PLEN] = k
    k = cfg[CT_KIND + t]
    if k == KIND_NORMAL:
        am = cfg[CT_AM + t]
        hm = cfg[CT_HM + t]
        for i in range(6):
            if am >> i & 1:
                state[NA + i] += d
            if hm >> i & 1:
                state[NH + i] += d
    elif k == KIND_RIGHT:
        state[NRIGHT] += d


@njit(cache=True)
def _mid_take(state, cfg, t):
    """Remove the earliest-turned middle card of type ``t``; return its position and slot."""
    prev = -1
    s = state[MHEAD]
    pos = 0
    while state[CARDS + 2 * s] != t:
        prev = s
        s = state[NEXT + 2 * s]
        pos += 1
    nx = state[NEXT + 2 * s]
    if prev < 0:
        state[MHEAD] = nx
    else:
        state[NEXT + 2 * prev] = nx
    if nx < 0:
        state[MTAIL] = prev
    state[MLEN] -= 1
    _count_add(state, cfg, t, -1)
    return pos, s


@njit(cache=True, inline="always")
def _won_push(state, seat, s):
    """Put the card in slot ``s`` on top of ``seat``'s won pile."""
    state[NEXT + 2 * s] = state[WTOP + seat]
    state[WTOP + seat] = s
    state[WLEN + seat] += 1


@njit(cache=True, inline="always")
def _mid_append(state, s):
    state[NEXT + 2 * s] = -1
    m = state[MLEN]
    if m == 0:
        state[MHEAD] = s
    else:
        state[NEXT + 2 * state[MTAIL]] = s
    state[MTAIL] = s
    state[MLEN] = m + 1


@njit(cache=True)
def _turn(state, cfg, seat):
    """``seat`` turns the top card of its draw pile into the middle; a new reaction phase."""
    d = state[DLEN + seat] - 1
    s = state[DTOP + seat]
    t = state[CARDS + 2 * s]
    state[DTOP + seat] = state[NEXT + 2 * s]
    if d == 0:
        state[DBOT + seat] = -1
    state[DLEN + seat] = d
    if state[KNOWN + seat] > d:  # the turned card was a public bottom card
        state[KNOWN + seat] = d
        state[KCOUNT + t] -= 1
    _mid_append(state, s)
    _count_add(state, cfg, t, 1)
    state[TURNED] += 1
    state[LAST_TURNED] = t
    state[TURNED_BY] = seat
    state[TURNER] = (seat + 1) % cfg[C_PLAYERS]
    state[WINDOW] = 0
    state[CUR] = 0


# --- judging -------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def _visible(state):
    """Bitmasks of animals / habitats visible on normal cards in the middle."""
    va = 0
    vh = 0
    for i in range(6):
        if state[NA + i] > 0:
            va |= 1 << i
        if state[NH + i] > 0:
            vh |= 1 << i
    return va, vh


@njit(cache=True)
def judge(state, cfg, action, va, vh):
    """Class of a slap against the current middle: J_PASS, J_RIGHT/ANIMALS/HABITATS (correct
    one-hand slaps), J_PAIR (correct two-hand slap) or J_FAULT."""
    if action == 0:
        return J_PASS
    t = cfg[CA + action]
    u = cfg[CB + action]
    kt = cfg[CT_KIND + t]
    if u < 0:
        if kt == KIND_RIGHT:
            return J_RIGHT
        if kt == KIND_ANIMALS:
            return J_ANIMALS if (cfg[CT_AM + t] & ~vh) == 0 else J_FAULT
        if kt == KIND_HABITATS:
            return J_HABITATS if (cfg[CT_HM + t] & ~va) == 0 else J_FAULT
        return J_FAULT
    ku = cfg[CT_KIND + u]
    if kt >= KIND_ANIMALS or ku >= KIND_ANIMALS:
        return J_FAULT
    if (cfg[CT_AM + t] & cfg[CT_HM + u]) | (cfg[CT_AM + u] & cfg[CT_HM + t]):
        return J_PAIR
    return J_FAULT


@njit(cache=True)
def target_exists(state, cfg):
    """Does the middle hold a correct target (a right-habitat card, a matching pair, or a
    special card whose condition holds)? O(types)."""
    if state[NRIGHT] > 0:
        return True
    va, vh = _visible(state)
    if va & vh:
        return True
    T = cfg[G_T]
    for t in range(T):
        if state[MCOUNT + t] > 0:
            k = cfg[CT_KIND + t]
            if k == KIND_ANIMALS and (cfg[CT_AM + t] & ~vh) == 0:
                return True
            if k == KIND_HABITATS and (cfg[CT_HM + t] & ~va) == 0:
                return True
    return False


@njit(cache=True, inline="always")
def _popcount(x):
    c = 0
    while x:
        x &= x - 1
        c += 1
    return c


@njit(cache=True, inline="always")
def _nth_bit(x, j):
    """Index of the ``j``-th set bit of ``x`` (0-based, from the lowest)."""
    i = 0
    while True:
        if x >> i & 1:
            if j == 0:
                return i
            j -= 1
        i += 1


# --- the kernels ---------------------------------------------------------------------------
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
    _turn(state, cfg, start)


@njit(cache=True)
def legal_mask(state: np.ndarray, cfg: np.ndarray, mask: np.ndarray) -> None:
    """Pass, one hand on any type in the middle, two hands on any two present types (the
    same type twice if two such cards lie there). All 0 once the game is over."""
    mask[:] = 0
    if state[DONE]:
        return
    T = cfg[G_T]
    mask[0] = 1
    k = state[PLEN]
    for i in range(k):
        t = state[PLIST + i]
        mask[1 + t] = 1
        base = 1 + T + t * T - t * (t - 1) // 2 - t  # + u: the pair (t, u), u >= t
        if state[MCOUNT + t] > 1:
            mask[base + t] = 1
        for j in range(i + 1, k):
            mask[base + state[PLIST + j]] = 1


@njit(cache=True)
def _take_all(state, cfg, seat):
    s = state[MHEAD]
    while s >= 0:
        nx = state[NEXT + 2 * s]
        _won_push(state, seat, s)
        _count_add(state, cfg, state[CARDS + 2 * s], -1)
        s = nx
    state[MHEAD] = -1
    state[MTAIL] = -1
    state[MLEN] = 0


@njit(cache=True)
def _resolve(state, cfg):
    """Judge and resolve the window's slaps; returns whether any slap took cards."""
    n = cfg[C_PLAYERS]
    va, vh = _visible(state)
    m1 = 0
    m2 = 0
    m3 = 0
    m4 = 0
    faults = 0
    for q in range(n):
        j = judge(state, cfg, state[CHOICE + q], va, vh)
        if j == J_RIGHT:
            m1 |= 1 << q
        elif j == J_ANIMALS:
            m2 |= 1 << q
        elif j == J_HABITATS:
            m3 |= 1 << q
        elif j == J_PAIR:
            m4 |= 1 << q
        elif j == J_FAULT:
            faults |= 1 << q
    took = False
    best = m1 if m1 else (m2 if m2 else m3)
    if best:
        w = _nth_bit(best, rng_int(state, _popcount(best)))
        _take_all(state, cfg, w)
        state[TURNER] = w
        took = True
    else:
        rem = m4
        while rem:
            s = _nth_bit(rem, rng_int(state, _popcount(rem)))
            rem &= ~(1 << s)
            a = state[CHOICE + s]
            t = cfg[CA + a]
            u = cfg[CB + a]
            ct = state[MCOUNT + t]
            if t == u:
                avail = ct // 2
            else:
                cu = state[MCOUNT + u]
                avail = ct if ct < cu else cu
            if avail == 0:
                continue  # its cards are gone: nothing, no fault
            partner = -1
            if avail == 1:
                same = 0
                for q in range(n):
                    if rem >> q & 1 and state[CHOICE + q] == a:
                        same |= 1 << q
                if same:
                    partner = _nth_bit(same, rng_int(state, _popcount(same)))
                    rem &= ~(1 << partner)
            p1, s1 = _mid_take(state, cfg, t)
            p2, s2 = _mid_take(state, cfg, u)
            if t == u or p2 >= p1:  # p2 was measured after removing p1
                x, y = s1, s2  # x turned earlier
            else:
                x, y = s2, s1
            if partner < 0:
                _won_push(state, s, x)
                _won_push(state, s, y)
                state[TURNER] = s
            else:
                if rng_int(state, 2) == 0:
                    _won_push(state, s, x)
                    _won_push(state, partner, y)
                else:
                    _won_push(state, s, y)
                    _won_push(state, partner, x)
                state[TURNER] = partner
            took = True
    if not took and state[WINDOW] == 0 and faults:
        tb = state[TURNED_BY]
        for i in range(n):
            q = (tb + i) % n
            if faults >> q & 1:
                a = state[CHOICE + q]
                u = cfg[CB + a]
                if u >= 0 and (cfg[CT_KIND + cfg[CA + a]] == KIND_RIGHT or
                               cfg[CT_KIND + u] == KIND_RIGHT):
                    state[TURNER] = (q + 1) % n
                    break
    for q in range(n):
        if faults >> q & 1:
            w = state[WLEN + q]
            if w > 0:  # the won pile's top card slides under the draw pile
                s = state[WTOP + q]
                state[WTOP + q] = state[NEXT + 2 * s]
                state[WLEN + q] = w - 1
                state[NEXT + 2 * s] = -1
                d = state[DLEN + q]
                if d == 0:
                    state[DTOP + q] = s
                else:
                    state[NEXT + 2 * state[DBOT + q]] = s
                state[DBOT + q] = s
                state[DLEN + q] = d + 1
                state[KNOWN + q] += 1
                state[KCOUNT + state[CARDS + 2 * s]] += 1
    for q in range(n):
        state[LAST + q] = state[CHOICE + q]
        state[CHOICE + q] = -1
    return took


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
    """Record the choice of the seat to act; after the last seat of the window, resolve it,
    then open another window, or end the reaction phase (end check, cut-off, next card)."""
    n = cfg[C_PLAYERS]
    p = state[CUR]
    state[STEPS] += 1
    state[CHOICE + p] = action
    if p + 1 < n:
        state[CUR] = p + 1
        return 0
    dense = cfg[C_REWARD] == REWARD_CARDS
    status = 0
    for q in range(n):
        state[GAIN + q] = -state[WLEN + q]
    took = _resolve(state, cfg)
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
    # the reaction phase of this card is over
    left = 0
    for q in range(n):
        left += state[DLEN + q]
    if left > 0 and state[TURNED] < cfg[G_MAXT]:
        s = state[TURNER]
        while state[DLEN + s] == 0:
            s = (s + 1) % n
        _turn(state, cfg, s)
        return status
    m = state[MLEN]  # the end: cards left in the middle are out of the game
    s = state[MHEAD]
    while s >= 0:
        _count_add(state, cfg, state[CARDS + 2 * s], -1)
        s = state[NEXT + 2 * s]
    if m > 0:
        if state[OLEN] == 0:
            state[OHEAD] = state[MHEAD]
        else:
            state[NEXT + 2 * state[OTAIL]] = state[MHEAD]
        state[OTAIL] = state[MTAIL]
    state[OLEN] += m
    state[MHEAD] = -1
    state[MTAIL] = -1
    state[MLEN] = 0
    state[CUR] = -1
    state[PHASE] = P_END
    trunc = left > 0
    state[DONE] = DONE_TRUNCATED if trunc else DONE_TERMINATED
    if not dense:
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
        obs[t] = state[MCOUNT + t]
    obs[T] = state[LAST_TURNED]
    obs[T + 1] = state[WINDOW]
    obs[T + 2] = rel_seat(state[TURNED_BY], seat, n)
    obs[T + 3] = rel_seat(state[TURNER], seat, n)
    a = state[CHOICE + seat]
    obs[T + 4] = 1 if a >= 0 else 0
    obs[T + 5] = cfg[CA + a] if a > 0 else -1
    obs[T + 6] = cfg[CB + a] if a > 0 else -1
    k = T + 7
    kb = k + 6 * n
    for t in range(T):
        obs[kb + t] = state[KCOUNT + t]
    q = seat
    for _ in range(n):
        dl = state[DLEN + q]
        w = state[WLEN + q]
        kn = state[KNOWN + q]
        obs[k] = dl
        obs[k + 1] = w
        obs[k + 2] = state[CARDS + 2 * state[WTOP + q]] if w > 0 else -1
        obs[k + 3] = kn
        la = state[LAST + q]
        obs[k + 4] = cfg[CA + la] if la > 0 else -1
        obs[k + 5] = cfg[CB + la] if la > 0 else -1
        k += 6
        q = q + 1 if q + 1 < n else 0
