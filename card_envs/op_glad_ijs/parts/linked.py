"""The Python side of Op Glad IJs' linked piles (``card_envs.op_glad_ijs.layout``): reading a
pile's slots and card types, linking piles into free slots (the state-dict codec and the text
view; the kernels move cards in ``parts.piles``)."""

from __future__ import annotations

import numpy as np

from card_envs.core.checks import requirer
from card_envs.op_glad_ijs import layout as L

_require = requirer("op_glad_ijs")


def slots(state: np.ndarray, head: int, length: int) -> list[int]:
    """The card slots of the pile whose first slot is ``state[head]`` and which holds
    ``state[length]`` cards, in link order; raises :class:`StateDictError` for broken links."""
    out = []
    s = int(state[head])
    for _ in range(max(0, min(int(state[length]), L.MAX_CARDS + 1))):
        _require(0 <= s < L.MAX_CARDS, "broken pile links")
        out.append(s)
        s = int(state[L.NEXT + 2 * s])
    _require(s == -1, "broken pile links")
    return out


def types(state: np.ndarray, slot_list: list[int]) -> list[int]:
    """The card types in ``slot_list``."""
    return [int(state[L.CARDS + 2 * s]) for s in slot_list]


def link(state: np.ndarray, type_list: list[int], slot: int) -> tuple[int, int]:
    """Store ``type_list`` (in link order) in slots ``slot, slot + 1, ...`` linked in that
    order; returns the first and last slot (-1, -1 if empty)."""
    k = len(type_list)
    for i, t in enumerate(type_list):
        state[L.CARDS + 2 * (slot + i)] = t
        state[L.NEXT + 2 * (slot + i)] = slot + i + 1 if i + 1 < k else -1
    return (slot, slot + k - 1) if k else (-1, -1)


def middle(state: np.ndarray) -> list[int]:
    """The middle's card types, in turned order."""
    return types(state, slots(state, L.MHEAD, L.MLEN))


def draw_slots(state: np.ndarray, seat: int) -> list[int]:
    """Slots of seat's draw pile, bottom first."""
    return slots(state, L.DTOP + seat, L.DLEN + seat)[::-1]


def draw_pile(state: np.ndarray, seat: int) -> list[int]:
    """Seat's draw pile, bottom first."""
    return types(state, draw_slots(state, seat))


def won_pile(state: np.ndarray, seat: int) -> list[int]:
    """Seat's won pile, bottom first (top last)."""
    return types(state, slots(state, L.WTOP + seat, L.WLEN + seat)[::-1])


def out_cards(state: np.ndarray) -> list[int]:
    """The cards out of the game, in the order they went out."""
    return types(state, slots(state, L.OHEAD, L.OLEN))
