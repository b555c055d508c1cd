"""Flipology effect machinery (numba): flips, the pending effect frame, target enumeration.

The effect "stack" is one frame (``EF_*`` in the state): every effect's trigger is its last
act (a Dog flips, then the flipped card's effect runs; a Monkey flips both neighbours, then
applies at most one), so a depth-first chain is a sequence of tail calls and the stack never
holds more than one frame. ``settle`` runs the frame until a real choice is needed: automatic
parts (Wind, a Monkey's two flips, effects without a target, choices with one option) are
applied inside the step; a choice with two or more options becomes an AEC step.
"""

from __future__ import annotations

import numpy as np

from card_envs.core.jit import njit
from card_envs.core.kernels import C_PLAYERS, CUR, PHASE
from card_envs.flipology.layout import (
    ALL_SEATS,
    CHAIN,
    CHAIN_LIMIT,
    DLEN,
    DLIST,
    DOG,
    EF_A,
    EF_B,
    EF_COPY,
    EF_KIND,
    EF_PEEK,
    EF_SRC,
    EF_STEP,
    FACE,
    FROG,
    G_NCARDS,
    G_NPOS,
    G_ROWLEN,
    G_SEATPOS,
    G_SKIP,
    HAWK,
    KNOW,
    LEVELS,
    MAXPOS,
    MOLE,
    MONKEY,
    MONKEY_CHOOSE,
    MONKEY_SECOND,
    NULLS,
    P_EFFECT,
    PARROT,
    POS,
    RAIN,
    SNAKE,
    SUN,
    SUN_PEEKS,
    T_ADJ,
    T_D2,
    T_KIND,
    WIND,
    WOLVES,
)
from card_envs.flipology.layout import DISC as DISC_
from card_envs.flipology.queries import copyable, flip_face, has_effect, swap_faces


@njit(cache=True, inline="always")
def kind_at(state: np.ndarray, cfg: np.ndarray, p: int) -> int:
    """Kind of the card at position ``p``."""
    return cfg[T_KIND + state[POS + p]]


@njit(cache=True, inline="always")
def rel_pos(sp: int, npos: int, cur: int, p: int) -> int:
    """Action / relative index of absolute position ``p`` (0 <= p < npos) seen from seat
    ``cur`` (``sp`` positions per seat): seat ``cur``'s positions come first, wrapping around
    the table (no division; scalars only, for the loops)."""
    d = p - cur * sp
    return d + npos if d < 0 else d


@njit(cache=True, inline="always")
def abs_pos(cfg: np.ndarray, cur: int, a: int) -> int:
    """Absolute position of the position action ``a`` (0 <= a < npos) of seat ``cur`` (the
    inverse of :func:`rel_pos`)."""
    q = a + cur * cfg[G_SEATPOS]
    return q - cfg[G_NPOS] if q >= cfg[G_NPOS] else q


@njit(cache=True)
def discard(state: np.ndarray, c: int) -> None:
    """Put card ``c`` on the discard pile (flag and list)."""
    state[DISC_ + c] = 1
    state[DLIST + state[DLEN]] = c
    state[DLEN] += 1


@njit(cache=True)
def clear_frame(state: np.ndarray) -> None:
    """No effect pending."""
    state[EF_KIND] = -1
    state[EF_SRC] = -1
    state[EF_STEP] = 0
    state[EF_A] = -1
    state[EF_B] = -1
    state[EF_COPY] = 0
    state[EF_PEEK] = -1
    state[EF_PEEK + 1] = -1
    state[EF_PEEK + 2] = -1


@njit(cache=True)
def start_frame(state: np.ndarray, cfg: np.ndarray, p: int) -> None:
    """The card at ``p`` just turned face up with an effect: it becomes the pending effect
    (unless the chain bound is reached: then nothing happens)."""
    clear_frame(state)
    if state[CHAIN] >= CHAIN_LIMIT:
        return
    state[CHAIN] += 1
    state[EF_KIND] = kind_at(state, cfg, p)
    state[EF_SRC] = p


@njit(cache=True)
def flip(state: np.ndarray, cfg: np.ndarray, p: int) -> bool:
    """Flip by an effect (``queries.flip_face``: a face-up Cat stays up). True if the card
    turned face up and has an effect (whether that effect triggers is the caller's
    business)."""
    c = state[POS + p]
    k = cfg[T_KIND + c]
    up = state[FACE + p]
    state[FACE + p] = flip_face(k, up, True)
    if up:
        return False
    state[KNOW + c] = ALL_SEATS
    return has_effect(k)


@njit(cache=True)
def neighbours(state: np.ndarray, cfg: np.ndarray, p: int) -> tuple[int, int, int]:
    """(count, first, second) of the existing orthogonal neighbours of ``p``."""
    base = T_ADJ + ((state[LEVELS] - 1) * MAXPOS + p) * 4
    m = 0
    a = -1
    b = -1
    for j in range(4):
        q = cfg[base + j]
        if q >= 0 and state[POS + q] >= 0:
            if m == 0:
                a = q
            elif m == 1:
                b = q
            m += 1
    return m, a, b


@njit(cache=True)
def monkey_flip(state: np.ndarray, cfg: np.ndarray, a: int, b: int) -> None:
    """Flip the Monkey's chosen neighbours ``a`` and ``b`` (``b`` may be -1) and continue with
    the effect to apply: none, the only one, or a choice between both."""
    ta = flip(state, cfg, a)
    tb = False
    if b >= 0:
        tb = flip(state, cfg, b)
    if ta and tb and state[CHAIN] < CHAIN_LIMIT:
        state[EF_A] = a
        state[EF_B] = b
        state[EF_STEP] = MONKEY_CHOOSE
    elif ta:
        start_frame(state, cfg, a)
    elif tb:
        start_frame(state, cfg, b)
    else:
        clear_frame(state)


@njit(cache=True, inline="always")
def _put(mask: np.ndarray, write: bool, a: int) -> None:
    if write:
        mask[a] = 1


@njit(cache=True)
def effect_enum(state: np.ndarray, cfg: np.ndarray, mask: np.ndarray,
                write: bool) -> tuple[int, int]:
    """Legal actions of the pending effect's current sub-step (marked in ``mask`` when
    ``write``). Returns (count, one legal action). Automatic sub-steps (Wind, a Monkey with at
    most two neighbours) have none."""
    k = state[EF_KIND]
    src = state[EF_SRC]
    step = state[EF_STEP]
    cur = state[CUR]
    n = cfg[C_PLAYERS]
    npos = cfg[G_NPOS]
    rl = cfg[G_ROWLEN]
    sp = cfg[G_SEATPOS]
    cnt = 0
    one = -1
    if k == DOG or k == FROG:
        if k == DOG:
            base = T_ADJ + ((state[LEVELS] - 1) * MAXPOS + src) * 4
            m = 4
        else:
            base = T_D2 + ((state[LEVELS] - 1) * MAXPOS + src) * 8
            m = 8
        for j in range(m):
            q = cfg[base + j]
            if q >= 0 and state[POS + q] >= 0:
                one = rel_pos(sp, npos, cur, q)
                _put(mask, write, one)
                cnt += 1
    elif k == HAWK or k == MOLE or k == WOLVES:
        r0 = (src // rl) * rl  # the source's row: r0 .. r0 + rl - 1
        nullc = cfg[G_NCARDS]
        for q in range(npos):
            c = state[POS + q]
            if c < 0 or q == src:
                continue
            if k == HAWK and r0 <= q < r0 + rl:
                continue
            if k == WOLVES and c == nullc:
                continue
            one = rel_pos(sp, npos, cur, q)
            _put(mask, write, one)
            cnt += 1
    elif k == SNAKE:
        r0 = (src // rl) * rl
        for q in range(r0, r0 + rl):
            if q != src and state[POS + q] >= 0:
                one = rel_pos(sp, npos, cur, q)
                _put(mask, write, one)
                cnt += 1
    elif k == PARROT:
        for q in range(npos):
            c = state[POS + q]
            if c >= 0 and state[FACE + q] and copyable(cfg[T_KIND + c]):
                one = rel_pos(sp, npos, cur, q)
                _put(mask, write, one)
                cnt += 1
    elif k == MONKEY:
        if step == MONKEY_CHOOSE:
            for q in (state[EF_A], state[EF_B]):
                one = rel_pos(sp, npos, cur, q)
                _put(mask, write, one)
                cnt += 1
        else:
            base = T_ADJ + ((state[LEVELS] - 1) * MAXPOS + src) * 4
            m = 0
            for j in range(4):
                q = cfg[base + j]
                if q >= 0 and state[POS + q] >= 0:
                    m += 1
            if m > 2:
                for j in range(4):
                    q = cfg[base + j]
                    if q >= 0 and state[POS + q] >= 0 and q != state[EF_A]:
                        one = rel_pos(sp, npos, cur, q)
                        _put(mask, write, one)
                        cnt += 1
    elif k == RAIN:
        s = (cur + step) % n
        for q in range(s * sp, s * sp + sp):
            if state[POS + q] >= 0:
                one = rel_pos(sp, npos, cur, q)
                _put(mask, write, one)
                cnt += 1
    elif k == SUN:
        if step < SUN_PEEKS:
            for q in range(npos):
                if (state[POS + q] >= 0 and q // sp != cur and state[FACE + q] == 0
                        and q != state[EF_PEEK] and q != state[EF_PEEK + 1]):
                    one = rel_pos(sp, npos, cur, q)
                    _put(mask, write, one)
                    cnt += 1
        else:
            for j in range(SUN_PEEKS):
                q = state[EF_PEEK + j]
                if q >= 0 and state[FACE + q] == 0:
                    one = rel_pos(sp, npos, cur, q)
                    _put(mask, write, one)
                    cnt += 1
            one = cfg[G_SKIP]
            _put(mask, write, one)
            cnt += 1
    return cnt, one


@njit(cache=True)
def apply_effect(state: np.ndarray, cfg: np.ndarray, a: int) -> None:
    """Apply the legal action ``a`` of the pending effect's current sub-step."""
    k = state[EF_KIND]
    step = state[EF_STEP]
    src = state[EF_SRC]
    cur = state[CUR]
    if k == SUN and step == SUN_PEEKS:
        if a != cfg[G_SKIP]:
            q = abs_pos(cfg, cur, a)
            state[FACE + q] = 1
            state[KNOW + state[POS + q]] = ALL_SEATS
        clear_frame(state)
        return
    q = abs_pos(cfg, cur, a)
    if k == DOG or k == FROG or k == HAWK or k == SNAKE:
        if flip(state, cfg, q):
            start_frame(state, cfg, q)
        else:
            clear_frame(state)
    elif k == MOLE:
        c = state[POS + q]
        state[POS + q] = state[POS + src]
        state[POS + src] = c
        up_src, up_q = swap_faces(state[FACE + src], state[FACE + q])
        state[FACE + src] = up_src
        state[FACE + q] = up_q
        state[KNOW + c] |= 1 << (src // cfg[G_SEATPOS])
        clear_frame(state)
    elif k == WOLVES:
        c = state[POS + q]
        discard(state, c)
        state[KNOW + c] = ALL_SEATS
        state[POS + q] = cfg[G_NCARDS]
        state[FACE + q] = 1
        state[NULLS] += 1
        clear_frame(state)
    elif k == PARROT:
        state[EF_KIND] = kind_at(state, cfg, q)
        state[EF_COPY] = 1
        state[EF_STEP] = 0
    elif k == MONKEY:
        if step == 0:
            state[EF_A] = q
            state[EF_STEP] = MONKEY_SECOND
        elif step == MONKEY_SECOND:
            monkey_flip(state, cfg, state[EF_A], q)
        else:
            start_frame(state, cfg, q)
    elif k == RAIN:
        flip(state, cfg, q)
        state[EF_STEP] = step + 1
        if step + 1 >= cfg[C_PLAYERS]:
            clear_frame(state)
    elif k == SUN:
        state[EF_PEEK + step] = q
        state[KNOW + state[POS + q]] |= 1 << cur
        state[EF_STEP] = step + 1


@njit(cache=True)
def settle(state: np.ndarray, cfg: np.ndarray) -> bool:
    """Run the pending effect until it needs a choice (True: phase set to effect) or the
    chain is over (False)."""
    while state[EF_KIND] >= 0:
        k = state[EF_KIND]
        src = state[EF_SRC]
        if k == WIND:
            r0 = (src // cfg[G_ROWLEN]) * cfg[G_ROWLEN]
            for q in range(r0, r0 + cfg[G_ROWLEN]):
                if q != src and state[POS + q] >= 0:
                    flip(state, cfg, q)
            clear_frame(state)
            continue
        if k == MONKEY and state[EF_STEP] == 0:
            m, a, b = neighbours(state, cfg, src)
            if m <= 2:
                if m == 0:
                    clear_frame(state)
                else:
                    monkey_flip(state, cfg, a, b)
                continue
        cnt, one = effect_enum(state, cfg, cfg, False)  # counting only: cfg is never written
        if cnt == 0:
            if k == SUN and state[EF_STEP] < SUN_PEEKS:
                state[EF_STEP] = SUN_PEEKS
            else:
                clear_frame(state)
            continue
        if cnt == 1:
            apply_effect(state, cfg, one)
            continue
        state[PHASE] = P_EFFECT
        return True
    return False
