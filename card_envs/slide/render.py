"""ANSI rendering of Slide: what a spectator sees (face-down cards as ``?``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from card_envs.core.kernels import CUR, PHASE
from card_envs.slide import layout as L

if TYPE_CHECKING:
    from card_envs.slide.game import SlideGame


def render(game: SlideGame, state: np.ndarray) -> str:
    """The full-view text of ``state`` (face-down cards as ``?``, points at the end)."""
    n = game.num_players
    grids, faces = game.grids(state), game.faces(state)
    phase = game.phase_name(state)
    cur = int(state[CUR])
    head = f"Slide  round {int(state[L.ROUND]) + 1}/{L.ROUNDS}  phase {phase}  " \
           f"first player {int(state[L.FIRST])}"
    if cur >= 0:
        head += f"  to act: player_{cur}"
    lines = [head]
    mid = [str(v + 1) for v in range(L.NUM_VALUES) for _ in range(state[L.MID + v])]
    lines.append("middle: " + (" ".join(mid) if mid else "-"))
    if state[PHASE] == L.P_END:
        points, winners = game.outcome(state)
    for q in range(n):
        label = f"player_{q}"
        if state[PHASE] == L.P_END:
            label += f"  points {int(points[q])}" + ("  WINNER" if winners[q] else "")
        lines.append(label)
        for r in range(4):
            cells = []
            for c in range(4):
                v, f = int(grids[q, r, c]), int(faces[q, r, c])
                cells.append(" ." if v == 0 else (f"{v:2d}" if f else " ?"))
            lines.append("  " + " ".join(cells))
    return "\n".join(lines)
