"""Python accessors of an Isflak state array (read by the state-dict codec and the text view)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from card_envs.core.errors import StateDictError
from card_envs.isflak import layout as L
from card_envs.isflak.queries import card_points, cell_code


def slot_cells(state: np.ndarray, n: int, peng: int) -> np.ndarray:
    """(n, P) cell of each penguin slot, -1 if not placed / gone."""
    return state[L.PEN:L.PEN + n * peng].reshape(n, peng)


def piles(state: np.ndarray, n: int) -> list[list[int]]:
    """Card ids of each of the ``n`` seats' piles, in the order taken."""
    out: list[list[int]] = [[] for _ in range(n)]
    for x in state[L.TAKEN:L.TAKEN + state[L.NTAKEN]].tolist():
        q, card = divmod(x, L.SEAT_SHIFT)
        if 0 <= q < n:
            out[q].append(card)
        else:
            raise StateDictError(f"inconsistent isflak state: taken entry {x} has no seat")
    return out


def occupant_slots(state: np.ndarray) -> dict[int, int]:
    """cell -> penguin slot standing on it."""
    pen = state[L.PEN:L.PEN + L.MAX_SLOTS].tolist()
    return {c: s for s, c in enumerate(pen) if c >= 0}


def cell_codes(grid: list[int], own: list[int], points: Mapping[str, int]) -> list[int]:
    """The ``CELL`` entries for card ids ``grid`` (-1 gap) and owners ``own`` (1 + seat, 0
    none) under the ``card_points`` option ``points``, plus the 0 sentinel."""
    return [int(cell_code(-1 if g < 0 else card_points(g, points), o))
            for g, o in zip(grid, own)] + [0]
