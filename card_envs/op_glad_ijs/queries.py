"""Op Glad IJs' rule queries: what the rules say about a position, written once for the rules'
helpers (``parts.resolve``, ``rules``), the heuristic (``card_envs.agents.op_glad_ijs``), the
features and the view (rules: ``docs/rules/op_glad_ijs.md``, "Judge", "Resolve").

The kernels work on a state array, or on a scratch array holding only the middle's derived
fields (:func:`middle_from_counts`, for callers that see only the observed per-type counts);
they read ``MCOUNT``, ``PLEN``/``PLIST``, ``NA``/``NH``, ``NRIGHT`` and ``MLEN``. The judgement
classes ``J_*`` are in ``layout``.
"""

from __future__ import annotations

import numpy as np

from card_envs.core.jit import njit
from card_envs.core.kernels import CUR, DONE, winners_by_keys
from card_envs.op_glad_ijs import layout as L
from card_envs.op_glad_ijs.layout import (
    A_ONE,
    A_PASS,
    CA,
    CB,
    CT_AM,
    CT_HM,
    CT_KIND,
    G_T,
    J_ANIMALS,
    J_FAULT,
    J_HABITATS,
    J_PAIR,
    J_PASS,
    J_RIGHT,
    KCOUNT,
    KIND_ANIMALS,
    KIND_HABITATS,
    KIND_RIGHT,
    MCOUNT,
    MLEN,
    NA,
    NH,
    NRIGHT,
    NUM_ANIMALS,
    PLEN,
    PLIST,
)
from card_envs.op_glad_ijs.parts.piles import count_add

__all__ = ["best_slaps", "judge", "middle_from_counts", "pairs_available", "pending_hidden",
           "scores", "slap_gain", "target_exists", "visible"]

# the layout's pair encoding, compiled for kernels (rules.legal_mask, best_slaps)
pair_base_nb = njit(cache=True, inline="always")(L.pair_base)


@njit(cache=True, inline="always")
def visible(state: np.ndarray) -> tuple[int, int]:
    """Bitmasks of animals / habitats visible on normal cards in the middle."""
    va = 0
    vh = 0
    for i in range(NUM_ANIMALS):
        if state[NA + i] > 0:
            va |= 1 << i
        if state[NH + i] > 0:
            vh |= 1 << i
    return va, vh


@njit(cache=True)
def judge(state: np.ndarray, cfg: np.ndarray, action: int, va: int, vh: int) -> int:
    """Class of a slap against the current middle: J_PASS, J_RIGHT/ANIMALS/HABITATS (correct
    one-hand slaps), J_PAIR (correct two-hand slap) or J_FAULT (``va``, ``vh``: the middle's
    :func:`visible` animals and habitats)."""
    if action == A_PASS:
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
def target_exists(state: np.ndarray, cfg: np.ndarray) -> bool:
    """Does the middle hold a correct target (a right-habitat card, a matching pair, or a
    special card whose condition holds)? O(types)."""
    if state[NRIGHT] > 0:
        return True
    va, vh = visible(state)
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


@njit(cache=True)
def best_slaps(state: np.ndarray, cfg: np.ndarray) -> tuple[np.ndarray, int]:
    """The correct slaps of the best priority class the middle offers, and that class.

    In priority order: one hand on a right-habitat card (``J_RIGHT``), on a 2-animals card
    whose habitats are visible (``J_ANIMALS``), on a 2-habitats card whose animals are visible
    (``J_HABITATS``), two hands on two matching cards of different types (``J_PAIR``). The
    actions come in ascending type order (pairs by first, then second type); with no correct
    slap the array is empty and the class is ``J_FAULT`` (every slap would fault)."""
    T = cfg[G_T]
    k = state[PLEN]
    out = np.empty(k + k * (k - 1) // 2, np.int32)
    va, vh = visible(state)
    for cls in (J_RIGHT, J_ANIMALS, J_HABITATS):
        c = 0
        for i in range(k):
            a = A_ONE + state[PLIST + i]
            if judge(state, cfg, a, va, vh) == cls:
                out[c] = a
                c += 1
        if c:
            return out[:c], cls
    c = 0
    for i in range(k):
        base = pair_base_nb(state[PLIST + i], T)
        for j in range(i + 1, k):
            a = base + state[PLIST + j]
            if judge(state, cfg, a, va, vh) == J_PAIR:
                out[c] = a
                c += 1
    return out[:c], (J_PAIR if c else J_FAULT)


@njit(cache=True, inline="always")
def pairs_available(state: np.ndarray, t: int, u: int) -> int:
    """How many two-hand slaps on types ``t`` and ``u`` the middle can still serve (each takes
    one card of each type; ``t == u`` takes two cards of that type)."""
    ct = state[MCOUNT + t]
    if t == u:
        return ct // 2
    cu = state[MCOUNT + u]
    return ct if ct < cu else cu


@njit(cache=True)
def slap_gain(state: np.ndarray, cls: int, won: int) -> int:
    """Change of the slapper's won pile if its slap of class ``cls`` (:func:`judge`) is the
    window's only one: the whole middle for a correct one-hand slap, 2 for a correct pair, -1
    for a fault while its won pile (``won`` cards) is not empty, else 0."""
    if cls == J_PASS:
        return 0
    if cls == J_FAULT:
        return -1 if won > 0 else 0
    if cls == J_PAIR:
        return 2
    return state[MLEN]


@njit(cache=True)
def middle_from_counts(counts: np.ndarray, cfg: np.ndarray) -> np.ndarray:
    """A scratch array holding a middle of ``counts[t]`` cards of each type ``t``: its derived
    fields (present types, animals / habitats on normal cards, right-habitat cards, size) as a
    state's, built by the pile kernel (``parts.piles.count_add``); the header reads
    "running". The queries above take it in place of a state."""
    mid = np.zeros(KCOUNT, np.int32)
    m = 0
    for t in range(cfg[G_T]):
        c = counts[t]
        for _ in range(c):
            count_add(mid, cfg, t, 1)
        m += c
    mid[MLEN] = m
    return mid


@njit(cache=True)
def scores(won: np.ndarray, points: np.ndarray, winners: np.ndarray) -> None:
    """Final points and winners from the won-pile sizes ``won`` (one per seat): points = won
    cards; most cards wins, a tie is a shared win (``winners`` 1 / 0)."""
    n = won.shape[0]
    key1 = np.empty(n, np.float64)
    key2 = np.zeros(n, np.float64)
    for p in range(n):
        points[p] = won[p]
        key1[p] = won[p]
    winners_by_keys(key1, key2, n, winners)


def pending_hidden(state: np.ndarray, observer: int) -> list[int]:
    """Seats whose choice in the current window ``observer`` cannot see (the seats before the
    one to act have chosen, hidden until the window is resolved)."""
    if state[DONE]:
        return []
    return [q for q in range(int(state[CUR])) if q != observer]
