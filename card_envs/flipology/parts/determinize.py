"""Flipology's determinization kernel (numba): a full state consistent with what one seat
knows, every card it does not know dealt again over the places such cards occupy."""

from __future__ import annotations

import numpy as np

from card_envs.core import kernels as K
from card_envs.core.jit import njit
from card_envs.flipology import layout as L

_NPLACES = L.MAXPOS + L.MAX_PLAYERS * L.HANDMAX + 2 * L.MAXC  # room for any place list
# a place's attributes (what stays with the place when its card is redrawn), columns of `at`
_OFF, _KNOW, _PICK, _SEQ, _RETO = 0, 1, 2, 3, 4
_DISCARDED = -1  # _OFF of a place in the discard pile (a set: no offset)


@njit(cache=True, inline="always")
def _add_place(state: np.ndarray, at: np.ndarray, m: int, off: int, c: int, bit: int) -> int:
    """Append the place at state offset ``off`` (or ``_DISCARDED``), now holding card ``c``
    unknown to the observer (``bit``), with the attributes that stay with the place: the
    seats that know its card, a Hermit crab's pick, its draw number and the other seats'
    Regrowth returns. Returns the new count."""
    at[m, _OFF] = off
    at[m, _KNOW] = state[L.KNOW + c]
    at[m, _PICK] = state[L.PICK + c]
    at[m, _SEQ] = state[L.SEQ + c]
    at[m, _RETO] = state[L.RET + c] & ~bit
    return m + 1


@njit(cache=True)
def determinize(state: np.ndarray, cfg: np.ndarray, observer: int, out: np.ndarray,
                rng: np.ndarray) -> None:
    """Write into ``out`` a full state consistent with what ``observer`` knows, drawn from
    ``rng`` (a one-element uint64 array, :func:`card_envs.core.kernels.draw`); ``state`` must
    be a valid position (nothing is bounds-checked).

    The cards ``observer`` does not know (the pool: every card in play without its knowledge
    bit, in card-id order) are dealt uniformly at random over the places such cards occupy:
    other seats' face-down cards and hands, the deck, the unknown part of the discard pile.
    What stays with a place: which seats know its card, its draw number, a Hermit crab's pick
    and the other seats' Regrowth returns; the cards the observer returned by Regrowth (its
    own knowledge, kept with the card) go only to the deck or to places drawn after its
    Regrowth. The discard pile is a set, so its places are taken in the order of their
    attributes. ``out``'s RNG words are seeded from ``rng`` too, so ``out`` depends only on
    what ``observer`` knows and on ``rng``: positions that differ only in the arrangement of
    the unknown cards give the same ``out``. The distribution is that of the Python
    determinization this replaced (``ref_resample`` in the tests)."""
    nc = cfg[L.G_NCARDS]
    npos = cfg[L.G_NPOS]
    bit = 1 << observer
    out[:] = state
    K.rng_seed(out, K.draw(rng))
    at = np.empty((_NPLACES, 5), np.int64)
    m = 0
    for p in range(npos):
        c = state[L.POS + p]
        if 0 <= c < nc and not state[L.KNOW + c] & bit:
            m = _add_place(state, at, m, L.POS + p, c, bit)
    for i in range(L.MAX_PLAYERS * L.HANDMAX):
        c = state[L.HAND + i]
        if 0 <= c < nc and not state[L.KNOW + c] & bit:
            m = _add_place(state, at, m, L.HAND + i, c, bit)
    for i in range(min(state[L.DECKN], L.MAXC)):
        c = state[L.DECK + i]
        if 0 <= c < nc and not state[L.KNOW + c] & bit:
            m = _add_place(state, at, m, L.DECK + i, c, bit)
    d0 = m
    for c in range(nc):
        if state[L.DISC + c] and not state[L.KNOW + c] & bit:
            m = _add_place(state, at, m, _DISCARDED, c, bit)
    if m - d0 > 1:  # the discard places in the order of their attributes, not of their cards
        key = (at[d0:m, _SEQ] << 18) | (at[d0:m, _KNOW] << 10) | (at[d0:m, _RETO] << 2) | \
            at[d0:m, _PICK]
        at[d0:m] = at[d0:m][np.argsort(key)]
    # the pool, from what the observer knows: its own returns first dealt, then the rest
    mine = np.empty(nc, np.int64)
    rest = np.empty(nc, np.int64)
    nm = nr = 0
    for c in range(nc):
        if cfg[L.T_ASIDE + c] == 0 and not state[L.KNOW + c] & bit:
            out[L.DISC + c] = 0
            if state[L.RET + c] & bit:
                mine[nm] = c
                nm += 1
            else:
                rest[nr] = c
                nr += 1
    m = min(m, nm + nr)  # equal in a valid state
    card = np.full(m, -1, np.int64)  # the card dealt to each place
    if nm > 0:
        t = state[L.RETSEQ + observer]
        ok = np.empty(m, np.int64)
        nok = 0
        for j in range(m):
            if L.DECK <= at[j, _OFF] < L.DECK + L.MAXC or at[j, _SEQ] > t:
                ok[nok] = j
                nok += 1
        nm = min(nm, nok)  # nok >= nm in a valid state
        K.draw_shuffle(rng, ok[:nok], nm)
        for i in range(nm):
            card[ok[i]] = mine[i]
    K.draw_shuffle(rng, rest[:nr], nr)
    k = 0
    for j in range(m):
        if card[j] < 0 and k < nr:
            card[j] = rest[k]
            k += 1
    for j in range(m):
        c = card[j]
        if c < 0:
            continue
        out[L.KNOW + c] = at[j, _KNOW]
        out[L.PICK + c] = at[j, _PICK]
        out[L.SEQ + c] = at[j, _SEQ]
        out[L.RET + c] = at[j, _RETO] | (state[L.RET + c] & bit)
        if at[j, _OFF] == _DISCARDED:
            out[L.DISC + c] = 1
        else:
            out[at[j, _OFF]] = c
    k = 0
    for c in range(nc):
        if out[L.DISC + c]:
            out[L.DLIST + k] = c
            k += 1
    out[L.DLEN] = k
    out[L.DLIST + k:L.DLIST + L.MAXC] = 0
