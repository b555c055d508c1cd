"""Flipology's rule queries (numba), each rule written once: what a card scores, what a flip
turns it to, what an effect's choice does, the scores of a position and its winners.

The kernels (``rules``, ``observe`` and their helpers in ``parts``), the features, the picture
(``view``: from a state dict turned into arrays, ``parts.scores``) and the heuristic
(``card_envs.agents.flipology``) ask these instead of restating a rule. The state queries take
the engine's state array and ``cfg`` (layout: ``layout``); :func:`moon_seen` takes an
observation row.
"""

from __future__ import annotations

import numpy as np

from card_envs.core.jit import njit
from card_envs.core.kernels import C_PLAYERS, winners_by_keys
from card_envs.flipology.layout import (
    BONUS,
    CAT,
    DOG,
    FACE,
    FROG,
    G_SEATPOS,
    HAWK,
    KOALA,
    MOLE,
    MONKEY,
    MONKEY_CHOOSE,
    MOON,
    OBS_CELL,
    OBS_FACE,
    OBS_KIND,
    PARROT,
    POS,
    RAIN,
    RED_PANDA,
    ROLE_CHOOSE,
    ROLE_COPY,
    ROLE_FLIP,
    ROLE_PEEK,
    ROLE_REMOVE,
    ROLE_SWAP,
    SLOTH,
    SNAKE,
    SUN,
    SUN_PEEKS,
    T_KIND,
    T_PTS,
    TOTAL,
    WIND,
    WOLVES,
)

__all__ = ["animal", "card_value", "copyable", "effect_role", "flip_chains", "flip_face",
           "game_result", "has_effect", "moon_seen", "moon_up", "public_score",
           "scores_face_down", "seat_points", "series_outcome", "species_count", "swap_faces"]


# --- cards ------------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def animal(k: int) -> bool:
    """Kinds up to the Red panda are animals (the Moon, weather cards and nulls are not): the
    species of the tie-break, the cards a Hermit crab may pick."""
    return k <= RED_PANDA


@njit(cache=True, inline="always")
def scores_face_down(k: int) -> bool:
    """A Sloth or a Koala: minus its points face up, plus its points face down (revealed at
    the end; a Hermit crab's pick of one is then counted face up or face down)."""
    return k == SLOTH or k == KOALA


@njit(cache=True, inline="always")
def card_value(k: int, pts: int, up: int) -> int:
    """End points of a card of kind ``k`` and ``pts`` points lying face up (``up``) or down:
    its points face up, 0 face down; a Sloth/Koala minus its points face up, plus face down.
    A Hermit crab's pick scores as a face-up card (a Sloth/Koala as it is counted)."""
    if scores_face_down(k):
        return -pts if up else pts
    return pts if up else 0


@njit(cache=True, inline="always")
def has_effect(k: int) -> bool:
    """Kind ``k`` has an effect to apply when it turns face up."""
    return k <= WOLVES or k == RAIN or k == SUN or k == WIND


@njit(cache=True, inline="always")
def copyable(k: int) -> bool:
    """Effects a Parrot may copy: Dog, Frog, Hawk, Mole, Monkey, Snake, Wolves."""
    return k <= WOLVES and k != PARROT


# --- flips and effects ------------------------------------------------------------------------
@njit(cache=True, inline="always")
def flip_face(k: int, up: int, by_effect: bool) -> int:
    """The face (1 up, 0 down) a card of kind ``k`` shows after a flip: a face-down card turns
    up, a face-up one down, except a face-up Cat flipped by an effect (not by its owner's turn
    flip), which stays up."""
    if up == 0:
        return 1
    return 1 if by_effect and k == CAT else 0


@njit(cache=True, inline="always")
def flip_chains(k: int) -> bool:
    """A card an effect of kind ``k`` turns face up applies its own effect next: Dog, Frog,
    Hawk, Monkey and Snake flips chain (also when a Parrot copies them); the Rain's, the Sun's
    and the Wind's do not."""
    return k == DOG or k == FROG or k == HAWK or k == SNAKE or k == MONKEY


@njit(cache=True, inline="always")
def swap_faces(src_up: int, target_up: int) -> tuple[int, int]:
    """Faces (source, target) after a Mole's swap of the source card (the Mole, or a Parrot
    copying it) with a target card: the target's card takes the source's place with the face
    it had, the source card takes the target's place face up."""
    return target_up, 1


@njit(cache=True, inline="always")
def effect_role(k: int, step: int) -> int:
    """What a position choice of the pending effect ``k`` at sub-step ``step`` does
    (``layout.ROLE_*``): a Mole swaps, the Wolves remove, a Parrot copies, a Monkey's last
    choice picks the effect to apply, a Sun's first choices peek; every other choice flips."""
    if k == MOLE:
        return ROLE_SWAP
    if k == WOLVES:
        return ROLE_REMOVE
    if k == PARROT:
        return ROLE_COPY
    if k == MONKEY and step == MONKEY_CHOOSE:
        return ROLE_CHOOSE
    if k == SUN and step < SUN_PEEKS:
        return ROLE_PEEK
    return ROLE_FLIP


# --- scores of a position -----------------------------------------------------------------
@njit(cache=True, inline="always")
def _row_points(state: np.ndarray, cfg: np.ndarray, s: int, public: bool) -> int:
    """Seat ``s``'s Hermit crab picks plus the :func:`card_value` of its cards (``public``:
    of its face-up cards only)."""
    sp = cfg[G_SEATPOS]
    tot = state[BONUS + s]
    for p in range(s * sp, s * sp + sp):
        c = state[POS + p]
        if c >= 0 and (state[FACE + p] or not public):
            tot += card_value(cfg[T_KIND + c], cfg[T_PTS + c], state[FACE + p])
    return tot


@njit(cache=True)
def seat_points(state: np.ndarray, cfg: np.ndarray, s: int) -> int:
    """End points of seat ``s``: its cards' :func:`card_value` plus its Hermit crab picks."""
    return _row_points(state, cfg, s, False)


@njit(cache=True, inline="always")
def public_score(state: np.ndarray, cfg: np.ndarray, s: int) -> int:
    """Score from public information only: the face-up cards' :func:`card_value` (Sloths and
    Koalas negative), face-down cards 0, plus the Hermit crab picks."""
    return _row_points(state, cfg, s, True)


@njit(cache=True)
def species_count(state: np.ndarray, cfg: np.ndarray, s: int) -> int:
    """Distinct face-up animal species (kind and points) in seat ``s``'s row(s)."""
    sp = cfg[G_SEATPOS]
    cnt = 0
    for p in range(s * sp, s * sp + sp):
        c = state[POS + p]
        if c < 0 or state[FACE + p] == 0 or not animal(cfg[T_KIND + c]):
            continue
        k = cfg[T_KIND + c]
        v = cfg[T_PTS + c]
        new = True
        for r in range(s * sp, p):
            d = state[POS + r]
            if d >= 0 and state[FACE + r] and cfg[T_KIND + d] == k and cfg[T_PTS + d] == v:
                new = False
                break
        if new:
            cnt += 1
    return cnt


@njit(cache=True)
def moon_up(state: np.ndarray, cfg: np.ndarray) -> bool:
    """The Moon lies face up in some row (then the lowest score wins)."""
    npos = cfg[C_PLAYERS] * cfg[G_SEATPOS]
    for p in range(npos):
        c = state[POS + p]
        if c >= 0 and state[FACE + p] and cfg[T_KIND + c] == MOON:
            return True
    return False


@njit(cache=True)
def moon_seen(obs: np.ndarray, npos: int) -> bool:
    """:func:`moon_up` read from an observation row (its first ``npos`` board cells): face-up
    cards are known to every seat."""
    for p in range(npos):
        j = p * OBS_CELL
        if obs[j + OBS_FACE] == 1 and obs[j + OBS_KIND] == MOON:
            return True
    return False


@njit(cache=True)
def game_result(state: np.ndarray, cfg: np.ndarray, points: np.ndarray,
                winners: np.ndarray) -> bool:
    """Points per seat and winners of the current game; returns whether the Moon is up
    (then the lowest score wins); ties go to more face-up animal species, then are shared."""
    n = cfg[C_PLAYERS]
    moon = moon_up(state, cfg)
    key1 = np.empty(n, np.float64)
    key2 = np.empty(n, np.float64)
    for s in range(n):
        v = seat_points(state, cfg, s)
        points[s] = v
        key1[s] = -v if moon else v
        key2[s] = species_count(state, cfg, s)
    winners_by_keys(key1, key2, n, winners)
    return moon


@njit(cache=True)
def series_outcome(state: np.ndarray, cfg: np.ndarray, points: np.ndarray,
                   winners: np.ndarray) -> None:
    """A series' points are the running totals; the highest wins (ties shared)."""
    n = cfg[C_PLAYERS]
    key2 = np.zeros(n, np.float64)
    for q in range(n):
        points[q] = state[TOTAL + q]
    winners_by_keys(points, key2, n, winners)
