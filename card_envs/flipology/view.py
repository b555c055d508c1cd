"""Flipology's views of a position: the ANSI text (:func:`render`, full or one seat's view) and
the SVG picture of a state dict (:func:`draw`).

The picture is drawn only from a state dict (``env.state_dict(seat)`` for what that seat
knows, ``env.state_dict()`` for everything): the viewer contract of :mod:`card_envs.draw`. A
title bar (variant, phase, round and turn, the seat to act, the result when over), one panel
per seat (its rows, top row first in the Great Tree, the neighbours its row ends touch, its
hand during the setup, its score), and a strip with the deck, the discard pile and the pending
effect. Cards the view names are drawn face up (face down but known: inset in a back frame);
cards it does not name are backs. The picture's size depends only on the options. Its pieces:
``parts.picture`` and ``parts.cards``; the scores it prints: ``parts.scores`` (the rules'
queries).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from card_envs.core.game import Game
from card_envs.core.kernels import CUR, PHASE
from card_envs.draw import Svg, Theme
from card_envs.draw import theme as as_theme
from card_envs.flipology import layout as L
from card_envs.flipology.parts.picture import (
    TITLE,
    M,
    info_panel,
    marks,
    seat_panel,
    sizes,
    title_bar,
)
from card_envs.flipology.parts.scores import result

__all__ = ["draw", "render"]


def render(game: Game, state: np.ndarray, observer: int | None = None) -> str:
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


def draw(view: Mapping[str, Any], theme: Theme | str) -> str:
    """The SVG document of ``view`` (a Flipology state dict) in ``theme`` (a Theme or its
    name)."""
    theme = as_theme(theme)
    z = sizes(view)
    svg = Svg(z["W"], z["H"], theme, title="Flipology")
    title_bar(svg, view, z)
    marked = marks(view, z)
    res = result(view)
    for s in range(z["n"]):
        r, c = divmod(s, 2)
        seat_panel(svg, view, s, M + c * (z["pw"] + M), TITLE + r * (z["ph"] + M), z, marked,
                   res)
    info_panel(svg, view, z)
    return svg.to_string()
