"""ANSI rendering of Op Glad IJs: what a spectator sees (draw piles face down)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from card_envs.core.kernels import CUR, DONE
from card_envs.op_glad_ijs import layout as L

if TYPE_CHECKING:
    from card_envs.op_glad_ijs.game import OpGladIJsGame


def render(game: OpGladIJsGame, state: np.ndarray) -> str:
    n, c = game.num_players, game.codes
    cur = int(state[CUR])
    head = (f"Op Glad IJs  card {int(state[L.TURNED])} turned by player_"
            f"{int(state[L.TURNED_BY])}  window {int(state[L.WINDOW])}")
    if cur >= 0:
        head += f"  to choose: player_{cur}"
    lines = [head]
    mid = [c[t] for t in game.middle(state)]
    lines.append("middle: " + (", ".join(mid) if mid else "-"))
    if state[DONE]:
        points, winners = game.outcome(state)
        if state[L.OLEN]:
            lines.append(f"out of the game: {int(state[L.OLEN])} cards")
    for q in range(n):
        won = game.won_pile(state, q)
        top = c[won[-1]] if won else "-"
        label = (f"player_{q}: draw {int(state[L.DLEN + q])} "
                 f"(known bottom {int(state[L.KNOWN + q])})  won {len(won)} (top {top})")
        if cur >= 0 and q < cur:
            label += "  [chosen]"
        if state[DONE]:
            label += f"  points {int(points[q])}" + ("  WINNER" if winners[q] else "")
        lines.append(label)
    return "\n".join(lines)
