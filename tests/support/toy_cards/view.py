"""Three Cards' views: the text (hands, ``?`` for what the observer cannot see, the trick, the
score), the picture, drawn from a state dict only (:mod:`card_envs.draw`), where each move is
clicked (:func:`clicks`) and how the game is won (:func:`result_text`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from card_envs.core.game import Game
from card_envs.core.kernels import CUR
from card_envs.draw import Svg, Theme, player_color, seat_title
from card_envs.draw import theme as as_theme
from toy_cards.layout import CARDS, HAND, LEAD, OWNER, PLAYED, TRICK, TRICKS
from toy_cards.queries import top_card

CW, CH, GAP, PAD = 40.0, 56.0, 6.0, 12.0
HAND_X = PAD + 50  # the first card of a hand
Box = tuple[float, float, float, float]


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


def _row_y(q: int) -> float:
    """The top of seat ``q``'s row."""
    return 36 + q * (CH + 2 * GAP)


def _hand(view: Mapping[str, Any], q: int) -> tuple[list[int], int]:
    """Seat ``q``'s cards the view shows (values - 1, ascending) and how many it hides."""
    owners, played = view["owners"], view["played"]
    hand = [v for v in range(CARDS) if owners[v] == q and played[v] is None]
    gone = sum(1 for v in range(CARDS) if owners[v] == q and played[v] is not None)
    return hand, HAND - gone - len(hand)


def draw(view: dict[str, Any], theme: Theme | str) -> str:
    """An SVG of a state dict in ``theme`` (a Theme or its name): each seat's hand (backs
    where the view hides the card), its card on the table (the trick's top card highlighted)
    and tricks won."""
    theme = as_theme(theme)
    played, tricks = view["played"], view["tricks"]
    n, t = len(tricks), view["trick"]
    width = PAD * 2 + (HAND + 1) * (CW + GAP) + 90
    height = 36 + n * (CH + 2 * GAP)
    svg = Svg(width, height, theme, title=" ".join(seat_title(view)))
    svg.text(PAD, 22, f"trick {min(t + 1, HAND)}/{HAND}", size=14, anchor="start")
    on_table = np.array([p == t for p in played])
    top = top_card(on_table)
    for q in range(n):
        y = _row_y(q)
        svg.text(PAD, y + CH / 2, f"seat {q}", size=12, anchor="start",
                 fill=player_color(theme, q))
        x = HAND_X
        hand, hidden = _hand(view, q)  # the cards this view cannot see: their backs
        for v in hand:
            svg.card(x, y, CW, CH, str(v + 1))
            x += CW + GAP
        for _ in range(hidden):
            svg.card(x, y, CW, CH, None)
            x += CW + GAP
        mine = [v for v in range(CARDS) if view["owners"][v] == q and played[v] == t]
        if mine:
            v = mine[0]
            svg.card(HAND_X + HAND * (CW + GAP), y, CW, CH, str(v + 1), highlight=v == top)
        svg.text(width - PAD, y + CH / 2, f"{tricks[q]} tricks", size=12, anchor="end")
    return svg.to_string()


def clicks(view: Mapping[str, Any], actions: Sequence[int]) -> dict[int, list[Box]]:
    """Where each of ``actions`` (``play v+1`` = action ``v``, by the seat to act) is clicked on
    :func:`draw`'s picture: the card in that seat's hand. A card the view hides has no place
    of its own: its box is the ``v``-th ninth of the seat's face-down cards, so that every
    card still has a box of its own."""
    q = view["current_player"]
    if q is None:
        return {}
    y = _row_y(q)
    hand, hidden = _hand(view, q)
    x0 = HAND_X + len(hand) * (CW + GAP)
    strip = (hidden * (CW + GAP) - GAP) / CARDS
    out: dict[int, list[Box]] = {}
    for a in actions:
        v = int(a)
        if v in hand:
            out[v] = [(HAND_X + hand.index(v) * (CW + GAP), y, CW, CH)]
        else:
            out[v] = [(x0 + v * strip, y, strip, CH)]
    return out


def result_text(view: Mapping[str, Any]) -> str:
    """The rule (the most tricks wins, a tie shares the win) and, at the end, the tricks."""
    rule = "The highest card takes each trick; the most tricks wins (a tie shares the win)."
    if view["current_player"] is not None:
        return rule
    tricks = [int(x) for x in view["tricks"]]
    best = max(tricks)
    who = [f"player_{q}" for q, k in enumerate(tricks) if k == best]
    head = f"{who[0]} wins" if len(who) == 1 else "Shared win: " + ", ".join(who)
    figures = ", ".join(f"player_{q} {k}" for q, k in enumerate(tricks))
    return f"{rule} {head} with {best} trick{'s' if best != 1 else ''} ({figures})."
