"""Isflak state-dict codec and consistency check (schema: ``card_envs.isflak.env``).

The core's ``Game`` dispatches here: :func:`fields_to_dict`, :func:`fields_from_dict`,
:func:`check_state`, :func:`resample` (Isflak has perfect information: never called, the core
copies the state).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from card_envs.core.checks import is_int, requirer, short_repr
from card_envs.core.errors import StateDictError
from card_envs.core.game import Game
from card_envs.core.kernels import CUR, DONE, PHASE
from card_envs.isflak import layout as L
from card_envs.isflak.parts.board import BORDER
from card_envs.isflak.parts.deck import CARD_CODES, KIND, card_id
from card_envs.isflak.parts.state import cell_codes, piles, slot_cells
from card_envs.isflak.queries import pile_points
from card_envs.isflak.rules import can_move

_require = requirer("isflak")


def fields_to_dict(g: Game, state: np.ndarray, observer: int | None) -> dict[str, Any]:
    """The game's state-dict fields (everything is public, so ``observer`` changes nothing)."""
    grid = [[None if state[L.GRID + r * L.COLS + c] < 0
             else CARD_CODES[state[L.GRID + r * L.COLS + c]] for c in range(L.COLS)]
            for r in range(L.ROWS)]
    n = g.num_players
    penguins = [[None if x < 0 else [int(x) // L.COLS, int(x) % L.COLS] for x in row]
                for row in slot_cells(state, n, int(g.cfg[L.C_PENG])).tolist()]
    codes = [[CARD_CODES[x] for x in pile] for pile in piles(state, n)]
    out = [bool(state[L.OUT + q]) for q in range(n)]
    return {"grid": grid, "penguins": penguins, "piles": codes, "out": out}


def fields_from_dict(g: Game, state: np.ndarray, d: Mapping[str, Any]) -> None:
    """Write the fields of ``d`` into ``state`` (header already written by the core)."""
    n, P, C = g.num_players, int(g.cfg[L.C_PENG]), L.CELLS
    points = g.options["card_points"]
    grid, penguins, piles_, out = d["grid"], d["penguins"], d["piles"], d["out"]
    if not isinstance(grid, list) or len(grid) != L.ROWS or \
            any(not isinstance(row, list) or len(row) != L.COLS for row in grid):
        raise StateDictError(f"grid must be {L.ROWS} lists of {L.COLS} card codes / null")
    for r, row in enumerate(grid):
        for c, code in enumerate(row):
            state[L.GRID + r * L.COLS + c] = -1 if code is None else card_id(code)
    own = [0] * C
    state[L.PEN:L.PEN + L.MAX_SLOTS] = -1
    if not isinstance(penguins, list) or len(penguins) != n or \
            any(not isinstance(row, list) or len(row) != P for row in penguins):
        raise StateDictError(f"penguins must be {n} lists of {P} [row, col] / null")
    for q, row in enumerate(penguins):
        for k, pos in enumerate(row):
            if pos is None:
                continue
            if not isinstance(pos, list) or len(pos) != 2 or \
                    not all(is_int(x) for x in pos) or \
                    not (0 <= pos[0] < L.ROWS and 0 <= pos[1] < L.COLS):
                raise StateDictError(f"penguin position must be [row, col], got {short_repr(pos)}")
            cell = pos[0] * L.COLS + pos[1]
            if own[cell]:
                raise StateDictError(f"two penguins on {pos}")
            state[L.PEN + q * P + k] = cell
            own[cell] = q + 1
    if not isinstance(piles_, list) or len(piles_) != n or \
            any(not isinstance(p, list) for p in piles_) or sum(map(len, piles_)) > C:
        raise StateDictError(f"piles must be {n} lists of card codes, at most {C} in all")
    taken = []
    for q, pile in enumerate(piles_):
        ids = [card_id(code) for code in pile]
        taken += [q * L.SEAT_SHIFT + i for i in ids]
        state[L.PCOUNT + q] = len(ids)
        state[L.SCORE + q] = pile_points(ids, points)
    state[L.NTAKEN] = len(taken)
    state[L.TAKEN:L.TAKEN + len(taken)] = taken
    if not isinstance(out, list) or len(out) != n or \
            any(not isinstance(x, bool) for x in out):
        raise StateDictError(f"out must be {n} bools")
    state[L.OUT:L.OUT + n] = out
    state[L.CELL:L.CELL + C + 1] = cell_codes(state[L.GRID:L.GRID + C].tolist(), own, points)
    placed = int((state[L.PEN:L.PEN + n * P] >= 0).sum())
    state[L.PLACED] = placed if state[PHASE] == L.P_PLACE else n * P


def check_state(g: Game, state: np.ndarray) -> None:
    """Raise ``StateDictError`` unless ``state`` is a consistent Isflak position."""
    n, P, C = g.num_players, int(g.cfg[L.C_PENG]), L.CELLS
    points = g.options["card_points"]
    grid = state[L.GRID:L.GRID + C]
    pen = state[L.PEN:L.PEN + L.MAX_SLOTS]
    phase, cur = int(state[PHASE]), int(state[CUR])
    _require(0 <= int(state[L.NTAKEN]) <= C, "taken count in 0..35")
    pls = piles(state, n)
    _require(bool(((grid >= -1) & (grid < L.DECK)).all()), "grid card ids in range")
    on_grid = grid[grid >= 0].tolist()
    cards = on_grid + [x for p in pls for x in p]
    _require(len(cards) == C and len(set(cards)) == C and
             all(0 <= x < L.DECK for x in cards),
             "the 35 cards are each exactly once on the grid or in a pile")
    _require(bool((state[L.PCOUNT + n:L.PCOUNT + L.MAX_PLAYERS] == 0).all()) and
             bool((state[L.OUT + n:L.OUT + L.MAX_PLAYERS] == 0).all()) and
             bool((state[L.SCORE + n:L.SCORE + L.MAX_PLAYERS] == 0).all()) and
             bool((pen[n * P:] == -1).all()), "unused seats / slots empty")
    _require(int(state[L.NTAKEN]) == sum(map(len, pls)) and
             bool((state[L.TAKEN + int(state[L.NTAKEN]):L.TAKEN + C] == 0).all()),
             "taken cards counted")
    for q in range(n):
        _require(int(state[L.SCORE + q]) == pile_points(pls[q], points) and
                 int(state[L.PCOUNT + q]) == len(pls[q]),
                 f"seat {q}: score and pile size equal its pile")
        _require(int(state[L.OUT + q]) in (0, 1), "out flags are 0/1")
    own = [0] * C
    for s in range(L.MAX_SLOTS):
        cell = int(pen[s])
        if cell >= 0:
            _require(cell < C and grid[cell] >= 0 and own[cell] == 0,
                     f"penguin slot {s} stands alone on a card")
            own[cell] = s // P + 1
    _require(state[L.CELL:L.CELL + C + 1].tolist() == cell_codes(grid.tolist(), own, points),
             "CELL = free bit, penguin owner and card points of each cell; sentinel 0")
    placed = int((pen >= 0).sum())
    _require(int(state[DONE]) == (phase == L.P_END), "phase 'end' iff the game is over")
    if phase == L.P_PLACE:
        _check_placement(g, state, cur, placed, on_grid, pls)
        return
    _require(int(state[L.PLACED]) == n * P, "every penguin placed")
    for q in range(n):
        on_board = int((pen[q * P:(q + 1) * P] >= 0).sum())
        if state[L.OUT + q]:
            _require(on_board == 0, f"seat {q} is out: no penguin on the board")
        else:
            _require(on_board == P, f"seat {q} is in: all its penguins on the board")
    if phase == L.P_END:
        _require(cur == -1 and bool(state[L.OUT:L.OUT + n].all()),
                 "everyone is out at the end")
        return
    _require(phase == L.P_MOVE and 0 <= cur < n and not state[L.OUT + cur],
             "the seat to act is in the game")
    _require(bool(can_move(state, g.cfg, cur)), "the seat to act can move")


def _check_placement(g: Game, state: np.ndarray, cur: int, placed: int,
                     on_grid: list[int], pls: list[list[int]]) -> None:
    """The placement-phase part of :func:`check_state`."""
    n, P = g.num_players, int(g.cfg[L.C_PENG])
    grid = state[L.GRID:L.GRID + L.CELLS]
    pen = state[L.PEN:L.PEN + L.MAX_SLOTS]
    _require(len(on_grid) == L.CELLS and not any(pls), "no card taken while placing")
    _require(int(state[L.PLACED]) == placed < n * P, "placement count")
    _require(not state[L.OUT:L.OUT + n].any(), "nobody out while placing")
    _require(0 <= cur < n, "a seat to act")
    start = (cur - placed) % n
    for i in range(placed):  # the i-th placement: seat start+i, slot i // n
        _require(int(pen[((start + i) % n) * P + i // n]) >= 0,
                 "penguins placed in turn order, slots in order")
    for s in range(L.MAX_SLOTS):
        if pen[s] >= 0:
            _require(bool(BORDER[pen[s]]) and KIND[grid[pen[s]]] != L.K_ACE,
                     "penguins placed on border non-ace cards")


def resample(g: Game, state: np.ndarray, observer: int, rng: np.random.Generator) -> np.ndarray:
    """A full state consistent with what ``observer`` knows: everything is public, so a copy
    (the core's ``Game.resample`` copies without calling this)."""
    return state.copy()
