"""If It Fits rules as numba kernels over one int32 state array (pure: no PettingZoo, no I/O).

Layout of config and state, placement and scoring: :mod:`card_envs.if_it_fits.board`.
Action encoding (``T = rows*cols`` cells, ``S = (rows-1)*cols`` slots, ``B = T + S``):
``0..T-1`` cell, ``T..B-1`` slot, ``B+0..2`` hand position, ``B+3..4`` rotation, ``B+5..8``
direction N/E/S/W, ``B+9..13`` start card, ``B+14..15`` start-row end west/east, ``B+16`` draw,
``B+17`` sleeping cat, ``B+18`` skip, ``B+19`` pass.
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
from card_envs.if_it_fits.board import (
    CATS_EACH,
    CF_ADV,
    CF_COLS,
    CF_NB,
    CF_NC,
    CF_NPR,
    CF_NT,
    CF_O_CATS,
    CF_O_CELL,
    CF_O_DISC,
    CF_O_FLIST,
    CF_O_NBC,
    CF_O_OBSC,
    CF_O_OPENNB,
    CF_O_PILE,
    CF_O_SLOT,
    CF_O_SLOTOK,
    CF_O_WALLNB,
    CF_ROWS,
    CF_TABLE,
    F_BALL,
    F_KIND,
    F_SPRAY,
    FIELDS,
    HANDMAX,
    KIND_TOY,
    MAX_PLAYERS,
    NPLANES,
    PK_OWNER,
    S_CATLOC,
    S_DISCN,
    S_DYN,
    S_ENDTRIG,
    S_FIRST,
    S_FRONTN,
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
    S_STARTN,
    S_STARTUSED,
    S_STARTW,
    S_SUPPLY,
    S_TOY,
    SLOT_TOY,
    TOYREC,
    card_open,
    cat_allowed,
    clear_table,
    find,
    neighbour,
    place_card,
    place_sleeper,
    princess_replace,
    score,
    set_catloc,
    set_slot,
)

(P_START_CARD, P_START_END, P_START_ROT, P_TURN, P_TOY_SLOT, P_TOY_CELL, P_PLAY, P_CELL,
 P_ROT, P_CAT, P_PRINCESS, P_SLEEP_CELL, P_SLEEP_DIR, P_DISCARD, P_PASS, P_END) = range(16)
A_HAND, A_ROT, A_DIR, A_START, A_END, A_DRAW, A_SLEEP, A_SKIP, A_PASS = \
    0, 3, 5, 9, 14, 16, 17, 18, 19
NUM_SPECIAL = 20
EXTRA_OBS = 3 * 9 + 5 * 9 + 3 + 1 + 11  # + 2n per-seat entries


def num_actions(rows: int, cols: int) -> int:
    return rows * cols + (rows - 1) * cols + NUM_SPECIAL


def obs_size(rows: int, cols: int, n: int, nt: int) -> int:
    T = rows * cols
    return NPLANES * T + T - cols + TOYREC * nt + EXTRA_OBS + 2 * n


# --- small queries ------------------------------------------------------------------------
@njit(cache=True, inline="always")
def fits(state: np.ndarray, cfg: np.ndarray, i: int, o: int) -> bool:
    """Advanced rule: no wall of the new card faces a wall of a neighbouring card."""
    return (state[cfg[CF_O_WALLNB] + i] & ~o & 15) == 0


@njit(cache=True)
def card_cell_ok(state: np.ndarray, cfg: np.ndarray, i: int, cid: int, strict: bool) -> bool:
    if state[cfg[CF_O_CELL] + i] != 0 or state[cfg[CF_O_NBC] + i] == 0:
        return False
    if not strict:
        return True
    return fits(state, cfg, i, card_open(cfg, cid, 0)) or \
        fits(state, cfg, i, card_open(cfg, cid, 1))


@njit(cache=True)
def any_fit(state: np.ndarray, cfg: np.ndarray, cid: int) -> bool:
    fl = cfg[CF_O_FLIST]
    for k in range(state[S_FRONTN]):
        if card_cell_ok(state, cfg, state[fl + k], cid, True):
            return True
    return False


@njit(cache=True, inline="always")
def strict(state: np.ndarray, cfg: np.ndarray) -> bool:
    return cfg[CF_ADV] != 0 and state[S_RELAX] == 0


@njit(cache=True)
def start_end_cell(state: np.ndarray, cfg: np.ndarray, e: int) -> int:
    """Cell at the west (e=0) or east (e=1) end of the start row, -1 off the table."""
    C = cfg[CF_COLS]
    row = cfg[CF_ROWS] // 2
    if e == 0:
        return row * C + state[S_STARTW] - 1 if state[S_STARTW] > 0 else -1
    return row * C + state[S_STARTE] + 1 if state[S_STARTE] + 1 < C else -1


@njit(cache=True)
def sleep_dir_ok(state: np.ndarray, cfg: np.ndarray, p: int, i: int, d: int) -> bool:
    if not state[cfg[CF_O_OPENNB] + i] & (1 << d):
        return False
    return cat_allowed(state, cfg, p, find(state, cfg, neighbour(cfg, i, d)))


@njit(cache=True)
def sleep_cell_ok(state: np.ndarray, cfg: np.ndarray, p: int, i: int) -> bool:
    if state[cfg[CF_O_CELL] + i] != 0 or state[cfg[CF_O_OPENNB] + i] == 0:
        return False
    for d in range(4):
        if sleep_dir_ok(state, cfg, p, i, d):
            return True
    return False


@njit(cache=True)
def any_sleep(state: np.ndarray, cfg: np.ndarray, p: int) -> bool:
    fl = cfg[CF_O_FLIST]
    on = cfg[CF_O_OPENNB]
    for k in range(state[S_FRONTN]):  # frontier cells are empty
        i = state[fl + k]
        if state[on + i] != 0:
            for d in range(4):
                if sleep_dir_ok(state, cfg, p, i, d):
                    return True
    return False


@njit(cache=True)
def toy_slot_ok(state: np.ndarray, cfg: np.ndarray, p: int, s: int) -> bool:
    return state[cfg[CF_O_SLOTOK] + s] == 1 and state[cfg[CF_O_SLOT] + s] == 0 and \
        cat_allowed(state, cfg, p, find(state, cfg, s))


@njit(cache=True)
def any_toy_slot(state: np.ndarray, cfg: np.ndarray, p: int) -> bool:
    S = (cfg[CF_ROWS] - 1) * cfg[CF_COLS]
    for s in range(S):
        if toy_slot_ok(state, cfg, p, s):
            return True
    return False


@njit(cache=True)
def cat_slots(state: np.ndarray, cfg: np.ndarray, p: int) -> tuple[int, int]:
    """The (up to two) slots touching the card played this turn where ``p``'s awake cat may
    lie; -1 for none."""
    C = cfg[CF_COLS]
    S = (cfg[CF_ROWS] - 1) * C
    i = state[S_PLAYED]
    a = i - C if i >= C and toy_slot_ok(state, cfg, p, i - C) else -1
    b = i if i < S and toy_slot_ok(state, cfg, p, i) else -1
    return a, b


@njit(cache=True)
def cats_on_table(state: np.ndarray, cfg: np.ndarray) -> int:
    k = 0
    for q in range(cfg[C_PLAYERS]):
        k += CATS_EACH - state[S_SUPPLY + q]
    return k


@njit(cache=True)
def playable(state: np.ndarray, cfg: np.ndarray, cid: int) -> bool:
    if cid == cfg[CF_NC]:
        return cats_on_table(state, cfg) > 0
    return state[S_FRONTN] > 0


@njit(cache=True)
def hand_playable(state: np.ndarray, cfg: np.ndarray, p: int) -> bool:
    for h in range(state[S_HANDN + p]):
        if playable(state, cfg, state[S_HAND + p * HANDMAX + h]):
            return True
    return False


@njit(cache=True)
def hand_remove(state: np.ndarray, p: int, h: int) -> int:
    base = S_HAND + p * HANDMAX
    cid = state[base + h]
    m = state[S_HANDN + p]
    for k in range(h, m - 1):
        state[base + k] = state[base + k + 1]
    state[base + m - 1] = -1
    state[S_HANDN + p] = m - 1
    return cid


# --- turn flow ----------------------------------------------------------------------------
@njit(cache=True)
def begin_turn(state: np.ndarray, cfg: np.ndarray, q: int) -> None:
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
def finish(state: np.ndarray, cfg: np.ndarray, rewards: np.ndarray) -> int:
    n = cfg[C_PLAYERS]
    state[CUR] = -1
    state[PHASE] = P_END
    state[DONE] = 1
    points = np.empty(n, np.float64)
    minus = np.empty(n, np.float64)
    winners = np.empty(n, np.int64)
    score(state, cfg, points, minus)
    for p in range(n):
        minus[p] = -minus[p]
    winners_by_keys(points, minus, n, winners)
    terminal_rewards(cfg[C_REWARD], points, winners, n, rewards)
    return ST_DONE | ST_REWARD


@njit(cache=True)
def end_turn(state: np.ndarray, cfg: np.ndarray, rewards: np.ndarray) -> int:
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
    state[cfg[CF_O_DISC] + state[S_DISCN]] = cid
    state[S_DISCN] += 1


# --- kernels ------------------------------------------------------------------------------
@njit(cache=True)
def init(state: np.ndarray, cfg: np.ndarray) -> None:
    """Deal a new game using the RNG already stored in the state header."""
    n = cfg[C_PLAYERS]
    nb, nt = cfg[CF_NB], cfg[CF_NT]
    for k in range(S_FIRST, S_DYN):
        state[k] = 0
    for k in range(cfg[CF_O_PILE], cfg[CF_O_CELL]):
        state[k] = 0
    clear_table(state, cfg)
    for k in range(cfg[CF_O_DISC], state.shape[0]):
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
    # hands: 2 box cards each (a special toy card drawn now is put back and redrawn)
    box = np.arange(nb).astype(np.int32)
    shuffle_prefix(state, box, 2 * n)
    for q in range(n):
        state[S_HAND + q * HANDMAX] = box[2 * q]
        state[S_HAND + q * HANDMAX + 1] = box[2 * q + 1]
        state[S_HANDN + q] = 2
    m = nb - 2 * n + nt
    rest = np.empty(m, np.int32)
    for k in range(nb - 2 * n):
        rest[k] = box[2 * n + k]
    for k in range(nt):
        rest[nb - 2 * n + k] = nb + 5 + k
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


@njit(cache=True)
def legal_mask(state: np.ndarray, cfg: np.ndarray, mask: np.ndarray) -> None:
    """Write the int8 legal-action mask of the seat to act (all 0 once the game is over)."""
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
        for k in range(state[S_FRONTN]):
            i = state[fl + k]
            if sleep_cell_ok(state, cfg, p, i):
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
        for k in range(5):
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


@njit(cache=True)
def step(state: np.ndarray, cfg: np.ndarray, action: int, rewards: np.ndarray) -> int:
    """Apply a legal action of the seat to act; returns ST_* bits (rewards only at the end)."""
    n = cfg[C_PLAYERS]
    T = cfg[CF_ROWS] * cfg[CF_COLS]
    S = T - cfg[CF_COLS]
    B = T + S
    p = state[CUR]
    ph = state[PHASE]
    state[STEPS] += 1
    a = action - B
    if ph == P_TURN:
        if a == A_SLEEP:
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
    if ph == P_PLAY:
        h = a - A_HAND
        state[S_SEL] = h
        cid = state[S_HAND + p * HANDMAX + h]
        if cid == cfg[CF_NC]:
            state[PHASE] = P_PRINCESS
        else:
            state[S_RELAX] = 1 if cfg[CF_ADV] and not any_fit(state, cfg, cid) else 0
            state[PHASE] = P_CELL
        return 0
    if ph == P_CELL:
        state[S_SELCELL] = action
        state[PHASE] = P_ROT
        return 0
    if ph == P_ROT:
        cid = hand_remove(state, p, state[S_SEL])
        i = state[S_SELCELL]
        place_card(state, cfg, i, cid, a - A_ROT)
        state[S_PLAYED] = i
        if state[S_SUPPLY + p] > 0:
            x, y = cat_slots(state, cfg, p)
            if x >= 0 or y >= 0:
                state[PHASE] = P_CAT
                return 0
        return end_turn(state, cfg, rewards)
    if ph == P_CAT:
        if a != A_SKIP:
            s = action - T
            set_slot(state, cfg, s, p + 1)
            state[cfg[CF_O_CATS] + find(state, cfg, s) * 6 + p] += 1
            state[S_SUPPLY + p] -= 1
            set_catloc(state, p, -1, s)
        return end_turn(state, cfg, rewards)
    if ph == P_TOY_SLOT:
        set_slot(state, cfg, action - T, SLOT_TOY + state[S_TOY] - cfg[CF_NB] - 5)
        return to_play(state, cfg, rewards)
    if ph == P_TOY_CELL:
        place_card(state, cfg, action, state[S_TOY], 0)
        return to_play(state, cfg, rewards)
    if ph == P_PRINCESS:
        princess_replace(state, cfg, S + action if action < T else action - T)
        discard_hand = hand_remove(state, p, state[S_SEL])
        _ = discard_hand
        return end_turn(state, cfg, rewards)
    if ph == P_SLEEP_CELL:
        state[S_SELCELL] = action
        state[PHASE] = P_SLEEP_DIR
        return 0
    if ph == P_SLEEP_DIR:
        i = state[S_SELCELL]
        place_sleeper(state, cfg, i, p, a - A_DIR)
        state[S_SUPPLY + p] -= 1
        set_catloc(state, p, -1, S + i)
        return end_turn(state, cfg, rewards)
    if ph == P_DISCARD:
        discard(state, cfg, hand_remove(state, p, a - A_HAND))
        return end_turn(state, cfg, rewards)
    if ph == P_PASS:
        return end_turn(state, cfg, rewards)
    if ph == P_START_CARD:
        k = a - A_START
        state[S_SELSTART] = k
        cid = cfg[CF_NB] + k
        if state[S_STARTN] == 0:
            state[S_SELCELL] = (cfg[CF_ROWS] // 2) * cfg[CF_COLS] + cfg[CF_COLS] // 2
            state[S_RELAX] = 0
            state[PHASE] = P_START_ROT
        else:
            ok = False
            for e in range(2):
                i = start_end_cell(state, cfg, e)
                if i >= 0 and card_cell_ok(state, cfg, i, cid, True):
                    ok = True
            state[S_RELAX] = 1 if cfg[CF_ADV] and not ok else 0
            state[PHASE] = P_START_END
        return 0
    if ph == P_START_END:
        state[S_SELCELL] = start_end_cell(state, cfg, a - A_END)
        state[PHASE] = P_START_ROT
        return 0
    # P_START_ROT
    k = state[S_SELSTART]
    i = state[S_SELCELL]
    place_card(state, cfg, i, cfg[CF_NB] + k, a - A_ROT)
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
def _card_row(cfg: np.ndarray, cid: int, obs: np.ndarray, x: int) -> None:
    tb = CF_TABLE + cid * FIELDS
    o = cfg[tb + 1]
    for d in range(4):
        obs[x + d] = (o >> d) & 1
    for k in range(3):
        obs[x + 4 + k] = cfg[tb + F_BALL + k]
    obs[x + 7] = cfg[tb + F_SPRAY]


@njit(cache=True)
def observe(state: np.ndarray, cfg: np.ndarray, seat: int, obs: np.ndarray) -> None:
    """Write ``seat``'s observation (layout in ``card_envs.if_it_fits.env``): the public
    planes (cached in the state with absolute seats, made relative here), the own hand and the
    public counters. Other hands and the pile order are not shown."""
    n = cfg[C_PLAYERS]
    C = cfg[CF_COLS]
    T = cfg[CF_ROWS] * C
    S = T - C
    L = NPLANES * T + S + TOYREC * cfg[CF_NT]
    ob = cfg[CF_O_OBSC]
    src = state[ob:cfg[CF_O_DISC]].view(np.int8)
    for k in range(L):  # an explicit loop: the slice copy of a view is ~30x slower
        obs[k] = src[k]
    for q in range(n):
        rq = q - seat + 1 if q >= seat else q - seat + n + 1
        for k in range(CATS_EACH):
            loc = state[S_CATLOC + q * CATS_EACH + k]
            if loc >= 0:
                if loc < S:
                    obs[NPLANES * T + loc] = rq
                else:
                    obs[PK_OWNER * T + loc - S] = rq
    x = L
    nc = cfg[CF_NC]
    for h in range(HANDMAX):
        cid = state[S_HAND + seat * HANDMAX + h] if h < state[S_HANDN + seat] else -1
        for k in range(9):
            obs[x + k] = 0
        if cid == nc:
            obs[x] = 2
        elif cid >= 0:
            obs[x] = 1
            _card_row(cfg, cid, obs, x + 1)
        x += 9
    done_start = state[S_STARTN] >= n
    for k in range(5):
        obs[x] = 0 if done_start or state[S_STARTUSED] & (1 << k) else 1
        _card_row(cfg, cfg[CF_NB] + k, obs, x + 1)
        x += 9
    toy = state[S_TOY]
    for k in range(3):
        obs[x + k] = cfg[CF_TABLE + toy * FIELDS + F_BALL + k] if toy >= 0 else 0
    x += 3
    for r in range(n):
        q = seat + r if seat + r < n else seat + r - n
        obs[x + r] = state[S_SUPPLY + q]
        obs[x + n + r] = state[S_HANDN + q]
    x += 2 * n
    obs[x] = state[S_PN]
    obs[x + 1] = state[PHASE]
    cur = state[CUR]
    obs[x + 2] = -1 if cur < 0 else (cur - seat if cur >= seat else cur - seat + n)
    obs[x + 3] = state[S_ENDTRIG]
    ph = state[PHASE]
    obs[x + 4] = state[S_SEL] if ph == P_CELL or ph == P_ROT or ph == P_PRINCESS else -1
    obs[x + 5] = state[S_SELSTART]
    sc = state[S_SELCELL]
    obs[x + 6] = sc // C if sc >= 0 else -1
    obs[x + 7] = sc % C if sc >= 0 else -1
    pc = state[S_PLAYED]
    obs[x + 8] = pc // C if pc >= 0 else -1
    obs[x + 9] = pc % C if pc >= 0 else -1
    obs[x + 10] = state[S_RELAX]
    f = state[S_FIRST]
    obs[x + 11] = f - seat if f >= seat else f - seat + n
