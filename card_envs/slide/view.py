"""Slide's views: the text (``render``), the picture (``draw``, for
``render_mode="svg"/"rgb_array"``), where its moves are played on the picture (``clicks``) and
how the game is won (``result_text``).

The text is what a spectator sees: every grid with face-down cards as ``?``, the middle, and at
the end each seat's points and the winners (``rules.outcome``).

The picture shows every seat's 4x4 grid and the middle, drawn only from a state dict
(:mod:`card_envs.draw`): face-down cards the view does not know are card backs; in the
omniscient view they show their value inside a back-coloured frame. Values are coloured from
green (1, good) to red (10, bad). At the end the cards that vanish (an equal orthogonal
neighbour) are faded, and each panel shows points and cards left; the scoring and the winners
are the rules' queries (``card_envs.slide.queries``). Row and column numbers (``r0``-``r3``,
``c0``-``c3``) run along each grid, as the reveal moves name cards (``reveal r1c2``); in the
pick phase arrows beside the grid of the seat to act mark the sides it may push a card in from.

Playing on the picture (:func:`clicks`): a reveal is a click on its card; a pick is a click on
the middle's cards of its value, then on the arrow of its side. :func:`result_text` says how
the game is won and, at the end, the points that decided it.
"""

from __future__ import annotations

import colorsys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from card_envs.core.game import Game
from card_envs.core.kernels import CUR, PHASE
from card_envs.draw import Svg, Theme, player_color, seat_title, view_note
from card_envs.draw import theme as as_theme
from card_envs.slide import layout as L
from card_envs.slide.layout import BOTTOM, LEFT, NUM_VALUES, PICK0, RIGHT, ROUNDS, SIDES, SLOTS, TOP
from card_envs.slide.queries import grid_points, paired, side_ok, winning_seats
from card_envs.slide.statedict import faces, grids

Box = tuple[float, float, float, float]  # x, y, width, height in the picture's units


def render(game: Game, state: np.ndarray, observer: int | None = None) -> str:
    """The text of ``state`` (face-down cards as ``?``, points at the end). Face-down values
    are unknown to every seat and the text shows no pending reveal, so every ``observer``
    sees the same text."""
    n = game.num_players
    gr, fa = grids(game, state), faces(game, state)
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
                v, f = int(gr[q, r, c]), int(fa[q, r, c])
                cells.append(" ." if v == 0 else (f"{v:2d}" if f else " ?"))
            lines.append("  " + " ".join(cells))
    return "\n".join(lines)


CW, CH, GAP = 46.0, 62.0, 6.0          # card size and spacing
PAD, HEAD, FOOT = 6.0, 28.0, 22.0      # panel padding, header and footer heights
EDGE = 16.0                            # band around a grid: coordinates, push-in arrows
GRID_W = 4 * CW + 3 * GAP
GRID_H = 4 * CH + 3 * GAP
PANEL_W = GRID_W + 2 * (PAD + EDGE)
PANEL_H = HEAD + GRID_H + 2 * EDGE + FOOT
TITLE_H, MID_H, MARGIN = 36.0, CH + 34.0, 12.0
MID_Y = TITLE_H + MARGIN               # top of the middle's panel


def value_color(t: Theme, v: int) -> str:
    """Value 1..10 on a green -> red ramp, dark on light faces, bright on dark ones."""
    hue = (130 - 130 * (v - 1) / (NUM_VALUES - 1)) / 360
    light, sat = (0.34, 0.85) if t.name != "dark" else (0.64, 0.8)
    r, g, b = colorsys.hls_to_rgb(hue, light, sat)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


def _columns(n: int) -> int:
    return n if n <= 3 else (2 if n == 4 else 3)


def size(n: int) -> tuple[float, float]:
    """Picture size for ``n`` players (fixed for a configuration: video frames agree)."""
    cols = _columns(n)
    rows = -(-n // cols)
    w = max(2 * MARGIN + cols * PANEL_W + (cols - 1) * MARGIN, 560.0)
    h = MID_Y + MID_H + MARGIN + rows * PANEL_H + (rows - 1) * MARGIN + MARGIN
    return w, h


def panel_xy(q: int, n: int) -> tuple[float, float]:
    """Top left corner of seat ``q``'s panel in the picture of ``n`` seats."""
    cols = _columns(n)
    left = (size(n)[0] - cols * PANEL_W - (cols - 1) * MARGIN) / 2
    top = MID_Y + MID_H + MARGIN
    return left + (q % cols) * (PANEL_W + MARGIN), top + (q // cols) * (PANEL_H + MARGIN)


def grid_xy(q: int, n: int) -> tuple[float, float]:
    """Top left corner of seat ``q``'s 4x4 grid (its card at row 0, column 0)."""
    px, py = panel_xy(q, n)
    return px + PAD + EDGE, py + HEAD + EDGE


def cell_box(q: int, r: int, c: int, n: int) -> Box:
    """The card at row ``r``, column ``c`` of seat ``q``'s grid."""
    gx, gy = grid_xy(q, n)
    return gx + c * (CW + GAP), gy + r * (CH + GAP), CW, CH


def side_box(q: int, side: int, empty: int, n: int) -> Box:
    """The band beside seat ``q``'s grid where a card is pushed in from ``side`` toward the
    empty slot ``empty`` (row ``empty // 4``, column ``empty % 4``): its push-in arrow."""
    gx, gy = grid_xy(q, n)
    r, c = divmod(empty, 4)
    if side in (LEFT, RIGHT):
        x = gx - EDGE if side == LEFT else gx + GRID_W
        return x, gy + r * (CH + GAP), EDGE, CH
    y = gy - EDGE if side == TOP else gy + GRID_H
    return gx + c * (CW + GAP), y, CW, EDGE


def middle_box(middle: Sequence[int], v: int) -> Box | None:
    """The cards of value ``v`` in the middle (its first card and the equal ones after it),
    ``None`` when there is none."""
    if v not in middle:
        return None
    i = list(middle).index(v)
    k = 1
    while i + k < len(middle) and middle[i + k] == v:
        k += 1
    return MARGIN + 10 + i * (CW + GAP), MID_Y + 26, k * CW + (k - 1) * GAP, CH


def _empty_slot(grid: Sequence[Sequence[Any]]) -> int:
    """The slot ``row*4 + col`` of the empty place of a grid (-1: none)."""
    for r in range(4):
        for c in range(4):
            if grid[r][c] == 0:
                return r * 4 + c
    return -1


def final_scores(grid: list[list[int]]) -> tuple[int, int, set[tuple[int, int]]]:
    """(points, cards left, vanishing cells) of a fully known grid (0 = empty), by the rules'
    queries (``grid_points``, ``paired``)."""
    g = np.asarray(grid, np.int64).reshape(SLOTS)
    pts, cards = grid_points(g)
    gone = np.zeros(SLOTS, np.int64)
    paired(g, gone)
    return int(pts), int(cards), {(int(i) // 4, int(i) % 4) for i in np.flatnonzero(gone)}


def _winners(scores: list[tuple[int, int, Any]]) -> set[int]:
    """The winning seats of the final ``scores`` (the rules' ``winning_seats``)."""
    n = len(scores)
    out = np.zeros(n, np.int64)
    winning_seats(np.array([s[0] for s in scores], np.int64),
                  np.array([s[1] for s in scores], np.int64), n, out)
    return {int(q) for q in np.flatnonzero(out)}


def _card(svg: Svg, x: float, y: float, v: Any, up: bool, chosen: bool, gone: bool) -> None:
    t = svg.theme
    if v == 0:
        svg.empty_slot(x, y, CW, CH)
        return
    if v is None:  # unknown to this view
        svg.card(x, y, CW, CH, None, highlight=chosen)
        return
    if not up:  # face down, but the omniscient view knows it: a back with a peek plaque
        svg.card(x, y, CW, CH, None, highlight=chosen)
        svg.rect(x + CW * 0.2, y + CH * 0.3, CW * 0.6, CH * 0.4, fill=t.card_face, rx=4,
                 stroke=t.card_back_mark, stroke_width=1.0)
        svg.text(x + CW / 2, y + CH / 2, v, size=14, fill=value_color(t, v), weight="bold")
        return
    svg.card(x, y, CW, CH, v, color=value_color(t, v), highlight=chosen)
    if gone:
        svg.rect(x, y, CW, CH, fill=t.background, rx=CW * 0.12, opacity="0.62")
        svg.line(x + 6, y + CH - 6, x + CW - 6, y + 6, stroke=t.muted, stroke_width=2.0)


def _arrow(svg: Svg, box: Box, side: int) -> None:
    """A push-in control on ``box``: a tinted band with an arrow pointing into the grid."""
    t = svg.theme
    x, y, w, h = box
    svg.rect(x + 1, y + 1, w - 2, h - 2, fill=t.highlight, rx=4, opacity="0.35",
             stroke=t.highlight, stroke_width=1.2)
    cx, cy, a = x + w / 2, y + h / 2, 5.0
    tip = {LEFT: (a, 0.0), RIGHT: (-a, 0.0), TOP: (0.0, a), BOTTOM: (0.0, -a)}[side]
    ox, oy = -tip[1], tip[0]  # the base, across the arrow
    svg.polygon([(cx + tip[0], cy + tip[1]), (cx - tip[0] + ox, cy - tip[1] + oy),
                 (cx - tip[0] - ox, cy - tip[1] - oy)], fill=t.text)


def _coordinates(svg: Svg, q: int, n: int) -> None:
    """Row and column numbers along the top and left of seat ``q``'s grid (the ``rRcC`` of
    the reveal moves), small and muted."""
    gx, gy = grid_xy(q, n)
    for k in range(4):
        svg.text(gx + k * (CW + GAP) + CW / 2, gy - EDGE / 2, f"c{k}", size=9,
                 fill=svg.theme.muted)
        svg.text(gx - EDGE / 2, gy + k * (CH + GAP) + CH / 2, f"r{k}", size=9,
                 fill=svg.theme.muted)


def draw(view: Mapping[str, Any], theme: Theme | str) -> str:
    """An SVG of a Slide state dict (``env.state_dict(observer)``): the middle, each seat's
    grid with its row and column numbers, and in the pick phase the arrows of the sides the
    seat to act may push a card in from. ``theme``: a Theme or its name."""
    grids, faces = view["grids"], view["face_up"]
    n = len(grids)
    cur, obs = view["current_player"], view.get("observer")
    over = view["phase"] == "end"
    w, h = size(n)
    svg = Svg(w, h, as_theme(theme), title="Slide")
    t = svg.theme
    items = [f"round {min(view['round'] + 1, ROUNDS)}/{ROUNDS}", *seat_title(view)]
    scores = [final_scores(g) for g in grids] if over else []
    win: set[int] = set()
    if over:
        win = _winners(scores)
        items.append("winner" + ("s " if len(win) > 1 else " ") +
                     ", ".join(f"player_{q}" for q in sorted(win)))
    svg.title_bar("Slide", items, TITLE_H, right=view_note(view))
    # the middle
    y = MID_Y
    svg.rect(MARGIN, y, w - 2 * MARGIN, MID_H, fill=t.panel, rx=8, stroke=t.card_edge,
             stroke_width=0.8)
    svg.text(MARGIN + 10, y + 14, "middle", size=12, anchor="start", weight="bold")
    fp = view["first_player"]
    svg.text(w - MARGIN - 10, y + 14, f"first player: player_{fp}", size=12, anchor="end",
             fill=player_color(t, fp))
    mid = view["middle"]
    for i, v in enumerate(mid):
        svg.card(MARGIN + 10 + i * (CW + GAP), y + 26, CW, CH, v, color=value_color(t, v))
    if not mid:
        svg.text(MARGIN + 10, y + 26 + CH / 2, "empty", size=12, anchor="start", fill=t.muted)
    # the grids
    reveals = view["reveals"]
    for q in range(n):
        px, py = panel_xy(q, n)
        if over:
            pts, cards, _ = scores[q]
            note = f"{pts} points"
        else:
            shown = sum(grids[q][r][c] for r in range(4) for c in range(4)
                        if faces[q][r][c] and grids[q][r][c])
            note = f"face up: {shown}"
        svg.panel(px, py, PANEL_W, PANEL_H, f"player_{q}", color=player_color(t, q),
                  active=cur == q, note=note, mark="you" if obs == q else None)
        if over:
            svg.text(px + PAD + EDGE, py + PANEL_H - FOOT / 2 - 1, f"{scores[q][1]} cards left",
                     size=12, anchor="start", fill=t.muted)
            if q in win:
                svg.badge(px + PANEL_W - PAD - EDGE, py + PANEL_H - FOOT / 2 - 1, "WINNER",
                          size=10, fill=t.highlight, color="#1d1d1f", anchor="end")
        _coordinates(svg, q, n)
        gone = scores[q][2] if over else set()
        chosen = reveals[q] if view["phase"] == "reveal" else None
        for r in range(4):
            for c in range(4):
                x, y, _, _ = cell_box(q, r, c, n)
                _card(svg, x, y, grids[q][r][c], faces[q][r][c], chosen == r * 4 + c,
                      (r, c) in gone)
    if view["phase"] == "pick" and cur is not None and mid:
        empty = _empty_slot(grids[cur])
        if empty >= 0:
            for side in range(len(SIDES)):
                if side_ok(empty, side):
                    _arrow(svg, side_box(cur, side, empty, n), side)
    return svg.to_string()


def clicks(view: Mapping[str, Any], actions: Sequence[int]) -> dict[int, list[Box]]:
    """Where each of ``actions`` is played on :func:`draw`'s picture of ``view``: a reveal
    on the card at its row and column of the grid of the seat to act; a pick on the cards of
    its value in the middle, then on the arrow of its side beside that seat's grid."""
    n = len(view["grids"])
    cur = view["current_player"]
    if not actions:
        return {}
    if cur is None:
        raise ValueError("clicks: the game is over, no seat is to act")
    empty = _empty_slot(view["grids"][cur])
    out: dict[int, list[Box]] = {}
    for a in actions:
        a = int(a)
        if 0 <= a < PICK0:
            out[a] = [cell_box(cur, a // 4, a % 4, n)]
            continue
        v, side = divmod(a - PICK0, 4)
        box = middle_box(view["middle"], v + 1)
        if box is None or empty < 0 or not 0 <= side < len(SIDES):
            raise ValueError(f"clicks: action {a} is not a legal move of this view")
        out[a] = [box, side_box(cur, side, empty, n)]
    return out


def result_text(view: Mapping[str, Any]) -> str:
    """The win rule and, once the game is over, each seat's points and cards left with the
    winners named."""
    rule = ("Lowest points win: at the end every card with an equal orthogonal neighbour "
            "vanishes and the rest are added up; a tie goes to fewer cards left, then is "
            "shared.")
    if view["phase"] != "end":
        return rule
    scores = [final_scores(g) for g in view["grids"]]
    win = sorted(_winners(scores))
    names = " and ".join(f"player_{q}" for q in win)
    pts, cards = scores[win[0]][0], scores[win[0]][1]
    head = (f"{names} {'wins' if len(win) == 1 else 'share the win'} with {pts} points "
            f"({cards} cards left).")
    rest = ", ".join(f"player_{q} {p} ({k} cards)" for q, (p, k, _) in enumerate(scores))
    return f"{rule} {head} Points: {rest}."
