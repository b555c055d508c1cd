"""ANSI text of a Flipology position (full view, or one seat's view)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from card_envs.core.kernels import CUR, PHASE
from card_envs.flipology import layout as L

if TYPE_CHECKING:
    from card_envs.flipology.game import FlipologyGame


def render(game: FlipologyGame, state: np.ndarray, observer: int | None = None) -> str:
    """Text of the position: every card, or only those ``observer`` knows (``?``)."""
    n = game.num_players
    cur = int(state[CUR])
    head = (f"Flipology ({game.options['variant']})  game {int(state[L.GAME]) + 1}  "
            f"round {min(int(state[L.ROUND]), L.ROUNDS - 1) + 1}/{L.ROUNDS}  "
            f"phase {game.phase_name(state)}  "
            f"start player_{int(state[L.START])}")
    if cur >= 0:
        head += f"  to act: player_{cur}"
    lines = [head]
    if state[L.EF_KIND] >= 0:
        lines.append(f"pending effect: {L.KIND_NAMES[int(state[L.EF_KIND])]} "
                     f"step {int(state[L.EF_STEP])}")
    if state[PHASE] == L.P_END:
        points, winners = game.outcome(state)
    for s in range(n):
        label = f"player_{s}"
        if game.options["series"]:
            label += f"  total {int(state[L.TOTAL + s])}"
        if state[PHASE] == L.P_END:
            label += f"  points {int(points[s])}" + ("  WINNER" if winners[s] else "")
        lines.append(label)
        for lv in range(int(state[L.LEVELS]) - 1, -1, -1):
            cells = []
            for c in range(game.rowlen):
                p = s * game.seatpos + lv * game.rowlen + c
                card = int(state[L.POS + p])
                if card < 0:
                    cells.append(".")
                    continue
                known = observer is None or state[L.KNOW + card] >> observer & 1
                name = game.card_name(card) if known else "?"
                cells.append(name.upper() if state[L.FACE + p] else f"({name})")
            lines.append("  " + " ".join(cells))
    return "\n".join(lines)
