"""Three Cards' views: the text (hands, ``?`` for what the observer cannot see, the trick, the
score) and the picture, drawn from a state dict only (:mod:`card_envs.draw`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from card_envs.core.game import Game
from card_envs.core.kernels import CUR
from card_envs.draw import Svg, Theme, player_color, seat_title
from toy_cards.layout import CARDS, HAND, LEAD, OWNER, PLAYED, TRICK, TRICKS
from toy_cards.queries import top_card

CW, CH, GAP, PAD = 40.0, 56.0, 6.0, 12.0


def render(game: Game, state: np.ndarray, observer: int | None = None) -> str:
    """ANSI text of the state as ``observer`` sees it (None: everything)."""
    t = int(state[TRICK])
    lines = [f"trick {min(t + 1, 3)}/3, lead seat {int(state[LEAD])}, "
             f"to act {int(state[CUR])}"]
    for q in range(game.num_players):
        hand = [v + 1 for v in range(CARDS) if state[OWNER + v] == q and state[PLAYED + v] < 0]
        shown = " ".join(str(v) for v in hand) if observer in (None, q) else "? " * len(hand)
        table = [v + 1 for v in range(CARDS) if state[OWNER + v] == q and state[PLAYED + v] == t]
        lines.append(f"seat {q}: hand [{shown.strip()}] table {table} "
                     f"tricks {int(state[TRICKS + q])}")
    return "\n".join(lines)


def draw(view: dict[str, Any], theme: Theme) -> str:
    """An SVG of a state dict: each seat's hand (backs where the view hides the card), its
    card on the table (the trick's top card highlighted) and tricks won."""
    owners, played, tricks = view["owners"], view["played"], view["tricks"]
    n, t = len(tricks), view["trick"]
    width = PAD * 2 + (HAND + 1) * (CW + GAP) + 90
    height = 36 + n * (CH + 2 * GAP)
    svg = Svg(width, height, theme, title=" ".join(seat_title(view)))
    svg.text(PAD, 22, f"trick {min(t + 1, HAND)}/{HAND}", size=14, anchor="start")
    on_table = np.array([p == t for p in played])
    top = top_card(on_table)
    for q in range(n):
        y = 36 + q * (CH + 2 * GAP)
        svg.text(PAD, y + CH / 2, f"seat {q}", size=12, anchor="start",
                 fill=player_color(theme, q))
        x = PAD + 50
        hand = [v for v in range(CARDS) if owners[v] == q and played[v] is None]
        gone = sum(1 for v in range(CARDS) if owners[v] == q and played[v] is not None)
        hidden = HAND - gone - len(hand)  # cards this view cannot see: their backs
        for v in hand:
            svg.card(x, y, CW, CH, str(v + 1))
            x += CW + GAP
        for _ in range(hidden):
            svg.card(x, y, CW, CH, None)
            x += CW + GAP
        mine = [v for v in range(CARDS) if owners[v] == q and played[v] == t]
        if mine:
            v = mine[0]
            svg.card(PAD + 50 + HAND * (CW + GAP), y, CW, CH, str(v + 1), highlight=v == top)
        svg.text(width - PAD, y + CH / 2, f"{tricks[q]} tricks", size=12, anchor="end")
    return svg.to_string()
