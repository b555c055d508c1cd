"""Isflak's views: the ANSI text (:func:`render`), the picture (:func:`draw`), where its moves
are played on the picture (:func:`clicks`) and how the game is won (:func:`result_text`).

The text: the grid with the penguins, then each seat's points, cards and pile. The picture
(``render_mode="svg"/"rgb_array"``): the 5x7 grid of playing cards with the penguins in their
player's colour (slot number on the belly), and each player's pile and points; drawn only from
a state dict (:mod:`card_envs.draw`). Isflak has perfect information, so every view is the
whole state. Gaps are dashed outlines; the seat to act is outlined. Row and column numbers run
along the grid, as the moves name cells (``place r0c3``). Points and winners are the rules'
(:mod:`card_envs.isflak.queries`).

On the picture a placement is a click on its card, a move a click on the penguin (the card
it stands on), then on the card it slides to.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from card_envs.core.game import Game
from card_envs.core.kernels import CUR, PHASE
from card_envs.draw import Svg, Theme, fan_offsets, mix, player_color, seat_title, view_note
from card_envs.draw import theme as as_theme
from card_envs.isflak import layout as L
from card_envs.isflak.layout import COLS, DIRS, MAX_DIST, MOVE0, MOVES_PER_PENGUIN, NDIR, ROWS
from card_envs.isflak.parts.deck import CARD_CODES, CARD_IDS
from card_envs.isflak.parts.state import occupant_slots
from card_envs.isflak.parts.state import piles as seat_piles
from card_envs.isflak.queries import find_winners, pile_points

CW, CH, GAP = 58.0, 80.0, 6.0
TITLE_H, MARGIN, LABEL = 36.0, 14.0, 16.0
GRID_X = MARGIN + LABEL
GRID_Y = TITLE_H + MARGIN + LABEL
GRID_W, GRID_H = COLS * CW + (COLS - 1) * GAP, ROWS * CH + (ROWS - 1) * GAP
SIDE_X = GRID_X + GRID_W + 2 * MARGIN
SIDE_W = 300.0
WIDTH = SIDE_X + SIDE_W + MARGIN
HEIGHT = GRID_Y + GRID_H + MARGIN
MINI_W, MINI_H = 24.0, 34.0

Box = tuple[float, float, float, float]  # x, y, width, height in the picture's units


def cell_box(r: int, c: int) -> Box:
    """The card at row ``r``, column ``c`` of the grid (its place once taken)."""
    return GRID_X + c * (CW + GAP), GRID_Y + r * (CH + GAP), CW, CH


def render(game: Game, state: np.ndarray, observer: int | None = None) -> str:
    """The grid (cards, penguins as seat and slot), then each seat's points, cards and pile
    (everything is public: ``observer`` changes nothing)."""
    P = int(game.cfg[L.C_PENG])
    cur = int(state[CUR])
    head = f"Isflak  phase {game.phase_name(state)}"
    if cur >= 0:
        head += f"  to act: player_{cur}"
    lines = [head, "     " + " ".join(f"  c{c} " for c in range(L.COLS))]
    slots = occupant_slots(state)
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
    for q, pile in enumerate(seat_piles(state, game.num_players)):
        label = f"player_{q}: {int(state[L.SCORE + q])} points, {len(pile)} cards"
        if state[L.OUT + q]:
            label += ", out"
        if state[PHASE] == L.P_END and winners[q]:
            label += "  WINNER"
        lines.append(label + ("  [" + " ".join(CARD_CODES[x] for x in pile) + "]" if pile
                              else ""))
    return "\n".join(lines)


def split_code(code: str) -> tuple[str, str]:
    """``"10H"`` -> ``("10", "H")``."""
    return code[:-1], code[-1]


def penguin(svg: Svg, cx: float, cy: float, color: str, slot: int, s: float = 1.0) -> None:
    """A penguin in ``color`` standing on ``(cx, cy)`` (its feet), its slot on the belly."""
    body_y = cy - 17 * s
    svg.add(f'<ellipse cx="{cx:g}" cy="{body_y:g}" rx="{13 * s:g}" ry="{17 * s:g}" '
            f'fill="{color}" stroke="#1d1d1f" stroke-width="1.5"/>')
    svg.add(f'<ellipse cx="{cx:g}" cy="{body_y + 4 * s:g}" rx="{8 * s:g}" ry="{11 * s:g}" '
            f'fill="#ffffff"/>')
    for dx in (-4, 4):
        svg.circle(cx + dx * s, body_y - 10 * s, 1.8 * s, fill="#1d1d1f")
    svg.polygon([(cx - 3 * s, body_y - 7 * s), (cx + 3 * s, body_y - 7 * s),
                 (cx, body_y - 3.5 * s)], fill="#f39c12")
    svg.text(cx, body_y + 5 * s, slot, size=10 * s, fill=mix(color, "#000000", 0.25),
             weight="bold")


def _winners(points: list[int], cards: list[int]) -> set[int]:
    """The seats that won a finished game with these points and pile sizes."""
    n = len(points)
    out = np.zeros(n, np.int64)
    find_winners(np.array(points, np.float64), np.array(cards, np.float64), n, out)
    return {q for q in range(n) if out[q]}


def draw(view: Mapping[str, Any], theme: Theme | str) -> str:
    """An SVG of an Isflak state dict (``env.state_dict(observer)``) in ``theme`` (a Theme
    or its name): the grid with its row and column numbers, the penguins with their numbers,
    each player's pile and points."""
    grid, penguins, piles, out = view["grid"], view["penguins"], view["piles"], view["out"]
    pts_opt = view["options"]["card_points"]
    n = len(piles)
    cur, obs = view["current_player"], view.get("observer")
    over = view["phase"] == "end"
    points = [pile_points([CARD_IDS[c] for c in pile], pts_opt) for pile in piles]
    cards = [len(p) for p in piles]
    svg = Svg(WIDTH, HEIGHT, as_theme(theme), title="Isflak")
    t = svg.theme
    items = seat_title(view)
    win: set[int] = _winners(points, cards) if over else set()
    if over:
        items.append("winner" + ("s " if len(win) > 1 else " ") +
                     ", ".join(f"player_{q}" for q in sorted(win)))
    svg.title_bar("Isflak", items, TITLE_H, right=view_note(view))
    for c in range(COLS):  # the coordinates of the move names, along the top and the left
        svg.text(cell_box(0, c)[0] + CW / 2, GRID_Y - LABEL / 2 - 1, f"c{c}", size=10,
                 fill=t.muted)
    for r in range(ROWS):
        svg.text(MARGIN + LABEL / 2 - 2, cell_box(r, 0)[1] + CH / 2, f"r{r}", size=10,
                 fill=t.muted)
    on: dict[tuple[int, int], tuple[int, int]] = {}
    for q, row in enumerate(penguins):
        for k, cell in enumerate(row):
            if cell is not None:
                on[(cell[0], cell[1])] = (q, k)
    for r in range(ROWS):
        for c in range(COLS):
            x, y, _, _ = cell_box(r, c)
            code = grid[r][c]
            if code is None:
                svg.empty_slot(x + 4, y + 4, CW - 8, CH - 8)
                continue
            who = on.get((r, c))
            svg.playing_card(x, y, CW, CH, *split_code(code),
                             highlight=who is not None and who[0] == cur)
            if who is not None:
                penguin(svg, x + CW * 0.62, y + CH - 3, player_color(t, who[0]), who[1])
    # players
    gap = 8.0
    ph = (GRID_H + LABEL - (n - 1) * gap) / n
    y0 = GRID_Y - LABEL
    for q in range(n):
        y = y0 + q * (ph + gap)
        svg.panel(SIDE_X, y, SIDE_W, ph, f"player_{q}", color=player_color(t, q),
                  active=cur == q, note=f"{points[q]} points",
                  mark="you" if obs == q else None)
        left = sum(1 for cell in penguins[q] if cell is None)
        status = f"{cards[q]} cards"
        if out[q]:
            status += " \u00b7 out"
        elif view["phase"] == "placement" and left:
            status += f" \u00b7 {left} penguin{'s' if left > 1 else ''} to place"
        if q in win:
            status += " \u00b7 WINNER"
        svg.text(SIDE_X + 12, y + 36, status, size=11, anchor="start",
                 fill=t.highlight if q in win else t.muted,
                 weight="bold" if q in win else "normal")
        pile = piles[q]
        mh = min(MINI_H, max(ph - 56, 0.0))
        if mh >= 14:
            mw = MINI_W * mh / MINI_H
            xs = fan_offsets(len(pile), SIDE_W - 24, mw, 3.0)
            for dx, code in zip(xs, pile):
                svg.playing_card(SIDE_X + 12 + dx, y + 48, mw, mh, *split_code(code))
    return svg.to_string()


def clicks(view: Mapping[str, Any], actions: Sequence[int]) -> dict[int, list[Box]]:
    """Where each of ``actions`` is played on :func:`draw`'s picture of ``view``: a
    placement on its card; a move on the card of the penguin that moves (the seat to act's
    penguin of that number), then on the card it slides to."""
    out: dict[int, list[Box]] = {}
    cur = view["current_player"]
    for a in actions:
        a = int(a)
        if 0 <= a < MOVE0:
            out[a] = [cell_box(*divmod(a, COLS))]
            continue
        k, rest = divmod(a - MOVE0, MOVES_PER_PENGUIN)
        d, s = divmod(rest, MAX_DIST)
        own = view["penguins"][cur] if cur is not None else []
        if a < 0 or k >= len(own) or d >= NDIR or own[k] is None:
            raise ValueError(f"clicks: action {a} is not a legal move of this view")
        r, c = own[k]
        tr, tc = r + DIRS[d][0] * (s + 1), c + DIRS[d][1] * (s + 1)
        if not (0 <= tr < ROWS and 0 <= tc < COLS):
            raise ValueError(f"clicks: action {a} leaves the grid")
        out[a] = [cell_box(r, c), cell_box(tr, tc)]
    return out


def result_text(view: Mapping[str, Any]) -> str:
    """The win rule (with this game's card points) and, once the game is over, each seat's
    points and cards with the winners named."""
    pts = view["options"]["card_points"]
    rule = (f"Most points win (each card taken: ace {pts['ace']}, face card {pts['face']}, "
            f"number card {pts['number']}); a tie goes to the bigger pile, then is shared.")
    if view["phase"] != "end":
        return rule
    piles = view["piles"]
    points = [pile_points([CARD_IDS[c] for c in pile], pts) for pile in piles]
    cards = [len(p) for p in piles]
    win = sorted(_winners(points, cards))
    names = " and ".join(f"player_{q}" for q in win)
    head = (f"{names} {'wins' if len(win) == 1 else 'share the win'} with "
            f"{points[win[0]]} points ({cards[win[0]]} cards).")
    rest = ", ".join(f"player_{q} {p} ({k} cards)" for q, (p, k) in enumerate(zip(points, cards)))
    return f"{rule} {head} Points: {rest}."
