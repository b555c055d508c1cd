"""Slide's state-dict codec, consistency check and determinization (the kernel
:func:`determinize` and its Python face ``resample``; schema: ``env.py``), and
the ``(n, 4, 4)`` views of the grids the text view reads; the base
:class:`~card_envs.core.game.Game` dispatches to these functions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from card_envs.core.checks import as_bool as _as_bool
from card_envs.core.checks import int_in as _int_in
from card_envs.core.checks import requirer
from card_envs.core.checks import seq as _seq
from card_envs.core.game import Game
from card_envs.core.jit import njit
from card_envs.core.kernels import (
    C_PLAYERS,
    CUR,
    DONE,
    PHASE,
    draw,
    draw_below,
    draw_shuffle,
    rng_seed,
)
from card_envs.slide import layout as L

_require = requirer("slide")


def grids(game: Game, state: np.ndarray) -> np.ndarray:
    """The ``(n, 4, 4)`` view of the grid values (0 empty, true values also face down)."""
    n = game.num_players
    return state[L.GRID:L.GRID + L.SLOTS * n].reshape(n, 4, 4)


def faces(game: Game, state: np.ndarray) -> np.ndarray:
    """The ``(n, 4, 4)`` view of the face-up flags."""
    n = game.num_players
    return state[L.FACE:L.FACE + L.SLOTS * n].reshape(n, 4, 4)


def pending_hidden(game: Game, state: np.ndarray, observer: int) -> list[int]:
    """Seats whose reveal choice ``observer`` cannot see yet (chosen, not resolved)."""
    if state[PHASE] != L.P_REVEAL:
        return []
    n = game.num_players
    return [q for q in range(n) if q != observer and state[L.REVEAL + q] >= 0]


def fields_to_dict(game: Game, state: np.ndarray, observer: int | None) -> dict[str, Any]:
    """Slide's state-dict fields (with ``observer``: face-down values and other seats'
    unresolved reveals are ``None``)."""
    n = game.num_players
    gr = grids(game, state).tolist()
    fa = faces(game, state).astype(bool).tolist()
    if observer is not None:  # face-down values are unknown to everyone
        gr = [[[v if (f or v == 0) else None for v, f in zip(g_row, f_row)]
               for g_row, f_row in zip(g, fs)] for g, fs in zip(gr, fa)]
    reveals = [None if state[L.REVEAL + q] < 0 else int(state[L.REVEAL + q])
               for q in range(n)]
    if observer is not None:
        for q in pending_hidden(game, state, observer):
            reveals[q] = None
    middle = [v + 1 for v in range(L.NUM_VALUES) for _ in range(state[L.MID + v])]
    return {"grids": gr, "face_up": fa, "middle": middle,
            "round": int(state[L.ROUND]), "first_player": int(state[L.FIRST]),
            "reveals": reveals}


def fields_from_dict(game: Game, state: np.ndarray, d: Mapping[str, Any]) -> None:
    """Write the fields of a full state dict into ``state`` (type- and range-checked)."""
    n = game.num_players
    gr = _seq(d["grids"], "grids", n)
    fa = _seq(d["face_up"], "face_up", n)
    for q in range(n):
        g = _seq(gr[q], f"grids[{q}]", 4)
        f = _seq(fa[q], f"face_up[{q}]", 4)
        for r in range(4):
            g_row = _seq(g[r], f"grids[{q}][{r}]", 4)
            f_row = _seq(f[r], f"face_up[{q}][{r}]", 4)
            for c in range(4):
                k = q * L.SLOTS + r * 4 + c
                state[L.GRID + k] = _int_in(g_row[c], 0, L.NUM_VALUES, "grid entry")
                state[L.FACE + k] = _as_bool(f_row[c], "face_up entry")
    for v in _seq(d["middle"], "middle", max_len=n):
        state[L.MID + _int_in(v, 1, L.NUM_VALUES, "middle value") - 1] += 1
    state[L.ROUND] = _int_in(d["round"], 0, L.ROUNDS - 1, "round")
    state[L.FIRST] = _int_in(d["first_player"], 0, n - 1, "first_player")
    reveals = _seq(d["reveals"], "reveals", n)
    state[L.REVEAL:L.REVEAL + L.MAX_PLAYERS] = -1
    for q, s in enumerate(reveals):
        if s is not None:
            state[L.REVEAL + q] = _int_in(s, 0, L.SLOTS - 1, "reveals entry")


def check_state(game: Game, state: np.ndarray) -> None:
    """Raise ``StateDictError`` unless ``state`` is a consistent Slide position."""
    n = game.num_players
    g = grids(game, state)
    f = faces(game, state)
    mid = state[L.MID:L.MID + L.NUM_VALUES]
    phase, cur, first, rnd = int(state[PHASE]), int(state[CUR]), int(state[L.FIRST]), \
        int(state[L.ROUND])
    counts = np.bincount(g.ravel(), minlength=L.NUM_VALUES + 1)[1:] + mid
    _require(bool((counts <= L.COPIES).all()), "more than 10 cards of a value")
    _require(bool(((g == 0) <= (f == 0)).all()), "an empty slot is marked face up")
    _require(int(state[DONE]) == (phase == L.P_END), "phase 'end' iff the game is over")
    _require(bool((state[L.GRID + L.SLOTS * n:L.FACE] == 0).all()), "unused seats not empty")
    order = [(first + i) % n for i in range(n)]
    if phase == L.P_END:
        _require(cur == -1 and rnd == L.ROUNDS - 1, "a finished game is after round 15")
        _require(bool((g > 0).all() and (f == 1).all()), "all cards face up at the end")
        _require(int(mid.sum()) == 0, "middle empty at the end")
        return
    _require(0 <= cur < n, "current_player must be a seat while the game runs")
    done = order[:order.index(cur)]  # seats that already acted this phase
    for q in range(n):
        down = int(((g[q] > 0) & (f[q] == 0)).sum())
        empty = int((g[q] == 0).sum())
        r = int(state[L.REVEAL + q])
        if phase == L.P_REVEAL:
            _require(empty == 0 and down == L.SLOTS - rnd,
                     f"seat {q}: {L.SLOTS - rnd} face-down cards and no gap in reveal")
            _require((r >= 0) == (q in done), f"seat {q}: reveal set iff it has chosen")
            if r >= 0:
                _require(f[q].ravel()[r] == 0,
                         f"seat {q}: revealed slot must be face down")
        else:
            _require(r >= 0, f"seat {q}: reveal slot known in the pick phase")
            if q in done:
                _require(empty == 0 and down == L.SLOTS - rnd - 1, f"seat {q}: grid full")
            else:
                _require(empty == 1 and g[q].ravel()[r] == 0 and
                         down == L.SLOTS - rnd - 1, f"seat {q}: one gap at its reveal")
    if phase == L.P_REVEAL:
        _require(int(mid.sum()) == 0, "middle empty in the reveal phase")
    else:
        _require(int(mid.sum()) == n - len(done), "one middle card per seat still to pick")


@njit(cache=True)
def determinize(state: np.ndarray, cfg: np.ndarray, observer: int, out: np.ndarray,
                rng: np.ndarray) -> None:
    """Write into ``out`` a full state consistent with what ``observer`` knows, drawn from
    ``rng`` (a one-element uint64 array) alone: every face-down value redrawn from the cards
    nobody has seen (10 copies of each value less the face-up ones and the middle), other
    seats' unresolved reveal choices redrawn among their face-down slots, and ``out``'s RNG
    words seeded from ``rng``. Only public fields are read (face-down values, other seats'
    pending choices and the state's RNG are not), so states that differ only there give the
    same ``out``. ``state`` must be a valid Slide state of ``cfg``'s seat count."""
    n = min(cfg[C_PLAYERS], L.MAX_PLAYERS)
    for i in range(min(state.shape[0], out.shape[0])):
        out[i] = state[i]
    rng_seed(out, draw(rng))
    down = np.empty(L.MAX_PLAYERS * L.SLOTS, np.int64)  # face-down places, ascending
    nd = 0
    unseen = np.empty(L.NUM_VALUES, np.int64)
    for v in range(L.NUM_VALUES):
        unseen[v] = L.COPIES - state[L.MID + v]
    for i in range(L.SLOTS * n):
        if state[L.GRID + i] > 0:  # whether a slot is empty is public, not its hidden value
            if state[L.FACE + i] == 0:
                down[nd] = i
                nd += 1
            elif state[L.GRID + i] <= L.NUM_VALUES:
                unseen[state[L.GRID + i] - 1] -= 1
    pool = np.empty(L.NUM_VALUES * L.COPIES, np.int32)  # the unseen cards, by value
    m = 0
    for v in range(L.NUM_VALUES):
        for _ in range(min(unseen[v], L.COPIES)):
            pool[m] = v + 1
            m += 1
    k = min(nd, m)
    draw_shuffle(rng, pool[:m], k)
    for j in range(k):
        out[L.GRID + down[j]] = pool[j]
    if state[PHASE] != L.P_REVEAL:
        return
    for q in range(n):  # whether a seat has chosen is public (seat order), not its choice
        if q != observer and state[L.REVEAL + q] >= 0:
            c = 0
            for s in range(L.SLOTS):
                if state[L.FACE + q * L.SLOTS + s] == 0 and state[L.GRID + q * L.SLOTS + s] > 0:
                    down[c] = s
                    c += 1
            if c > 0:
                out[L.REVEAL + q] = down[draw_below(rng, c)]


def resample(game: Game, state: np.ndarray, observer: int,
             rng: np.random.Generator) -> np.ndarray:
    """Redraw every face-down value from the cards nobody has seen, and other seats'
    unresolved reveal choices among their face-down slots: :func:`determinize` seeded with 64
    bits of ``rng``."""
    out = np.empty_like(state)
    seed = np.array([rng.integers(0, 2**64, dtype=np.uint64)])  # (faster than size=1)
    determinize(state, game.cfg, observer, out, seed)
    return out
