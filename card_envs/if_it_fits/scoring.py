"""If It Fits scoring: the final-score kernel (per box: value, cat majority, extra cats) and a
Python view of the engine's boxes for tests and tools."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from card_envs.core.jit import njit
from card_envs.core.kernels import C_PLAYERS
from card_envs.if_it_fits.board import find
from card_envs.if_it_fits.layout import (
    CELL_PRINCESS,
    CF_ADV,
    CF_COLS,
    CF_NB,
    CF_O_CELL,
    CF_O_FRONT,
    CF_O_SLOT,
    CF_ROWS,
    CF_TABLE,
    F_BALL,
    F_SPRAY,
    FIELDS,
    MAX_PLAYERS,
    NUM_START,
    SLOT_PRINCESS,
    SLOT_TOY,
)

if TYPE_CHECKING:
    from card_envs.if_it_fits.game import IfItFitsGame


@njit(cache=True)
def score(state: np.ndarray, cfg: np.ndarray, points: np.ndarray, minus: np.ndarray) -> None:
    """Final points and minus points (sprayers of scored boxes, doubled where closed) per seat,
    box by box (rules: docs/rules/if_it_fits.md, Scoring)."""
    n = cfg[C_PLAYERS]
    adv = cfg[CF_ADV]
    T = cfg[CF_ROWS] * cfg[CF_COLS]
    S = T - cfg[CF_COLS]
    toys = np.zeros((T, 3), np.int64)
    spray = np.zeros(T, np.int64)
    awake = np.zeros((T, MAX_PLAYERS), np.int64)
    sleep = np.zeros((T, MAX_PLAYERS), np.int64)
    isroot = np.zeros(T, np.bool_)
    cell = cfg[CF_O_CELL]
    for p in range(n):
        points[p] = 0.0
        minus[p] = 0.0
    for i in range(T):
        v = state[cell + i]
        if v == 0:
            continue
        r = find(state, cfg, i)
        if v > 0:
            isroot[r] = True
            tb = CF_TABLE + ((v - 1) // 2) * FIELDS
            for k in range(3):
                toys[r, k] += cfg[tb + F_BALL + k]
            spray[r] += cfg[tb + F_SPRAY]
        elif -v - 1 < MAX_PLAYERS:
            sleep[r, -v - 1] += 1
    for s in range(S):
        v = state[cfg[CF_O_SLOT] + s]
        if v == 0 or v == SLOT_PRINCESS:
            continue
        r = find(state, cfg, s)
        if v <= MAX_PLAYERS:
            awake[r, v - 1] += 1
        else:
            tb = CF_TABLE + (cfg[CF_NB] + NUM_START + v - SLOT_TOY) * FIELDS
            for k in range(3):
                toys[r, k] += cfg[tb + F_BALL + k]
    for r in range(T):
        if not isroot[r]:
            continue
        closed = state[cfg[CF_O_FRONT] + r] == 0
        mult = 2 if closed else 1
        best = max(toys[r, 0], max(toys[r, 1], toys[r, 2]))
        value = (best - spray[r]) * mult
        top = 0
        for p in range(n):
            c = 2 * awake[r, p] + (1 if adv else 2) * sleep[r, p]
            if c > top:
                top = c
        if top == 0:
            continue
        for p in range(n):
            c = 2 * awake[r, p] + (1 if adv else 2) * sleep[r, p]
            if c == top and awake[r, p] > 0:
                points[p] += value
                minus[p] += spray[r] * mult
            if not adv and awake[r, p] > 0:
                points[p] += awake[r, p] + sleep[r, p] - 1


def boxes(game: IfItFitsGame, state: np.ndarray) -> list[dict[str, Any]]:
    """The engine's boxes (from its union-find and counters): per box its cells (sorted), the
    closed flag, toy counts, sprayers, value and cats (per seat [awake, sleeping]; Princesses).
    Used by tests and tools; not on the hot path."""
    st = state.copy()
    T, C, S = game.T, game.cols, game.S
    cells = game.arr(st, "cell", T)
    slots = game.arr(st, "slot", S)
    out: dict[int, dict[str, Any]] = {}
    for i in range(T):
        v = int(cells[i])
        if v == 0:
            continue
        r = find(st, game.cfg, i)
        b = out.setdefault(r, {"cells": [], "toys": [0, 0, 0], "sprayers": 0,
                               "cats": {q: [0, 0] for q in range(game.num_players)},
                               "princesses": 0,
                               "closed": bool(st[game.lay["front"] + r] == 0)})
        b["cells"].append(i)
        if v > 0:
            tb = CF_TABLE + ((v - 1) // 2) * FIELDS
            for k in range(3):
                b["toys"][k] += int(game.cfg[tb + F_BALL + k])
            b["sprayers"] += int(game.cfg[tb + F_SPRAY])
        elif v == CELL_PRINCESS:
            b["princesses"] += 1
        else:
            b["cats"][-v - 1][1] += 1
    for s in range(S):
        v = int(slots[s])
        if v == 0:
            continue
        b = out[find(st, game.cfg, s)]
        if v <= MAX_PLAYERS:
            b["cats"][v - 1][0] += 1
        elif v == SLOT_PRINCESS:
            b["princesses"] += 1
        else:
            tb = CF_TABLE + (game.nb + NUM_START + v - SLOT_TOY) * FIELDS
            for k in range(3):
                b["toys"][k] += int(game.cfg[tb + F_BALL + k])
    res = []
    for b in out.values():
        b["cells"] = [(i // C, i % C) for i in sorted(b["cells"])]
        b["value"] = (max(b["toys"]) - b["sprayers"]) * (2 if b["closed"] else 1)
        res.append(b)
    return sorted(res, key=lambda b: b["cells"][0])
