"""Three Cards as text: hands (``?`` for what the observer cannot see), the trick, the score."""

from __future__ import annotations

import numpy as np

from card_envs.core.kernels import CUR
from toy_cards.layout import CARDS, LEAD, OWNER, PLAYED, TRICK, TRICKS


def render(state: np.ndarray, n: int, observer: int | None = None) -> str:
    t = int(state[TRICK])
    lines = [f"trick {min(t + 1, 3)}/3, lead seat {int(state[LEAD])}, "
             f"to act {int(state[CUR])}"]
    for q in range(n):
        hand = [v + 1 for v in range(CARDS) if state[OWNER + v] == q and state[PLAYED + v] < 0]
        shown = " ".join(str(v) for v in hand) if observer in (None, q) else "? " * len(hand)
        table = [v + 1 for v in range(CARDS) if state[OWNER + v] == q and state[PLAYED + v] == t]
        lines.append(f"seat {q}: hand [{shown.strip()}] table {table} "
                     f"tricks {int(state[TRICKS + q])}")
    return "\n".join(lines)
