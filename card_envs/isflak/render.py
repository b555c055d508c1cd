"""ANSI rendering of Isflak (everything is public): the grid with penguins, piles, scores."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from card_envs.core.kernels import CUR, PHASE
from card_envs.isflak import layout as L
from card_envs.isflak.deck import CARD_CODES

if TYPE_CHECKING:
    from card_envs.isflak.game import IsflakGame


def render(game: IsflakGame, state: np.ndarray) -> str:
    """The grid (cards, penguins as seat and slot), then each seat's points, cards and pile."""
    P = game.peng
    cur = int(state[CUR])
    head = f"Isflak  phase {game.phase_name(state)}"
    if cur >= 0:
        head += f"  to act: player_{cur}"
    lines = [head, "     " + " ".join(f"  c{c} " for c in range(L.COLS))]
    slots = game.occupant_slots(state)
    for r in range(L.ROWS):
        cells = []
        for c in range(L.COLS):
            i = r * L.COLS + c
            g, o = int(state[L.GRID + i]), slots.get(i, -1)
            text = "  .  " if g < 0 else f"{CARD_CODES[g]:>3}"
            if g >= 0:
                text += f"{o // P}{o % P}" if o >= 0 else "  "
            cells.append(text)
        lines.append(f"r{r}   " + " ".join(cells))
    lines.append("(a penguin shows as seat and slot after the card, e.g. 'KD01' = player_0's "
                 "penguin 1)")
    if state[PHASE] == L.P_END:
        points, winners = game.outcome(state)
    for q, pile in enumerate(game.piles(state)):
        label = f"player_{q}: {int(state[L.SCORE + q])} points, {len(pile)} cards"
        if state[L.OUT + q]:
            label += ", out"
        if state[PHASE] == L.P_END and winners[q]:
            label += "  WINNER"
        lines.append(label + ("  [" + " ".join(CARD_CODES[x] for x in pile) + "]" if pile
                              else ""))
    return "\n".join(lines)
