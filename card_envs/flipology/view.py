"""Flipology's views of a position: the ANSI text (:func:`render`, full or one seat's view),
the SVG picture of a state dict (:func:`draw`), where each move is played on that picture
(:func:`clicks`) and how the game is won (:func:`result_text`).

The picture is drawn only from a state dict (``env.state_dict(seat)`` for what that seat
knows, ``env.state_dict()`` for everything): the viewer contract of :mod:`card_envs.draw`. A
title bar (variant, phase, round and turn, the seat to act, the result when over), one panel
per seat (its rows, top row first in the Great Tree, the neighbours its row ends touch, its
hand during the setup, its score), and a strip with the deck, the discard pile and the pending
effect. Cards the view names are drawn face up (face down but known: inset in a back frame);
cards it does not name are backs. Each panel carries the numbers the moves use: its row seen
from the seat to act (``r1`` = the next seat's row, as in ``position r1c4``), column and level
numbers, hand slot numbers; the moves that have no place on the table (skip, regrow, keep,
count face up / down) are chips in the title bar while they can be played. The picture's size
depends only on the options. Its pieces: ``parts.picture`` and ``parts.cards``, placed by
``parts.places``; the scores it prints: ``parts.scores`` (the rules' queries).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from card_envs.core.game import Game
from card_envs.core.kernels import CUR, PHASE
from card_envs.draw import Svg, Theme
from card_envs.draw import theme as as_theme
from card_envs.flipology import layout as L
from card_envs.flipology.parts.deck import card_table
from card_envs.flipology.parts.picture import info_panel, marks, seat_panel, title_bar
from card_envs.flipology.parts.places import (
    Box,
    cell_box,
    control_boxes,
    discard_layout,
    hand_box,
    sizes,
)
from card_envs.flipology.parts.scores import arrays, moon_up, result
from card_envs.flipology.queries import species_count

__all__ = ["clicks", "draw", "render", "result_text"]


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
        seat_panel(svg, view, s, z, marked, res)
    info_panel(svg, view, z)
    return svg.to_string()


def clicks(view: Mapping[str, Any], actions: Sequence[int]) -> dict[int, list[Box]]:
    """Where each of ``actions`` is played on :func:`draw`'s picture of ``view``: a position
    on its card (rows counted from the seat to act, as the move names count them), a hand
    slot on the seat to act's card in that slot, a Hermit crab's pick on the card in the
    discard pile, skip / regrow / keep / count face up / count face down on their control in
    the title bar. A picked card this view does not know lies somewhere among its unknown
    discards: such picks share the back drawn for them, split into one strip each."""
    z = sizes(view)
    n, sp, hn = z["n"], z["rl"] * z["nl"], z["hn"]
    nc = len(card_table(view)[0])
    hand0, disc0 = n * sp, n * sp + hn
    skip = disc0 + nc
    cur = view["current_player"]
    piles = dict(discard_layout(view, z)) if any(disc0 <= a < skip for a in actions) else {}
    unknown = sorted(int(a) - disc0 for a in actions
                     if disc0 <= a < skip and int(a) - disc0 not in piles)
    out: dict[int, list[Box]] = {}
    for a in actions:
        a = int(a)
        if a < disc0 and (cur is None or a < 0):
            raise ValueError(f"clicks: action {a} is not a legal move of this view")
        if a < hand0:
            rel, i = divmod(a, sp)
            lv, c = divmod(i, z["rl"])
            out[a] = [cell_box((int(cur) + rel) % n, lv, c, z)]
        elif a < disc0:
            out[a] = [hand_box(int(cur), a - hand0, z)]
        elif a < skip:
            c = a - disc0
            if c in piles:
                out[a] = [piles[c]]
                continue
            if None not in piles:
                raise ValueError(f"clicks: card {c} is not in this view's discard pile")
            x, y, w, h = piles[None]
            k, m = unknown.index(c), len(unknown)
            out[a] = [(x + k * w / m, y, w / m, h)]
        elif a - skip < len(L.SINGLES):
            out[a] = [control_boxes(a - skip, z)[0]]
        else:
            raise ValueError(f"clicks: action {a} is out of range")
    return out


def result_text(view: Mapping[str, Any]) -> str:
    """The win rule and, once the game is over, each seat's points (a series: totals) with
    the winners named, and the species counts when they broke a tie."""
    o = view["options"]
    series = bool(o.get("series"))
    picks = " and Hermit crab picks" if o["variant"] == "nature" else ""
    moon = "; if the Moon lies face up the lowest points win" if o.get("moon") else ""
    rule = (f"highest points win (face-up cards, minus face-up Sloths and Koalas, plus "
            f"face-down ones{picks}){moon}; a tie goes to more face-up animal species, then "
            f"is shared.")
    if series:
        bonus = "; with the Moon face up the winner scores 25, the others 0" if moon else ""
        rule = (f"A series: the highest total wins once someone reaches 100 points or after "
                f"{o['max_games']} games. Each game's points add up (its winner +10{bonus}); "
                f"in a game the {rule}")
    else:
        rule = rule[0].upper() + rule[1:]
    res = result(view)
    if res is None:
        return rule
    points, win = res
    seats = [q for q in range(len(points)) if win[q]]
    names = " and ".join(f"player_{q}" for q in seats)
    what = "total" if series else "points"
    head = f"{names} {'wins' if len(seats) == 1 else 'share the win'}"
    head += f" with {what} {points[seats[0]]}." if series else f" with {points[seats[0]]} points."
    if not series and moon_up(view):
        head += " The Moon is face up: the lowest points won."
    text = f"{rule} {head} {what.capitalize()}: " + ", ".join(
        f"player_{q} {p}" for q, p in enumerate(points)) + "."
    tied = [q for q in range(len(points)) if points[q] == points[seats[0]]]
    if not series and len(tied) > len(seats):
        state, cfg = arrays(view)
        text += " Tie broken by face-up animal species: " + ", ".join(
            f"player_{q} {int(species_count(state, cfg, q))}" for q in tied) + "."
    return text
