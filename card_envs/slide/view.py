"""Slide's views: the text (``render``) and the picture (``draw``, for
``render_mode="svg"/"rgb_array"``).

The text is what a spectator sees: every grid with face-down cards as ``?``, the middle, and at
the end each seat's points and the winners (``rules.outcome``).

The picture shows every seat's 4x4 grid and the middle, drawn only from a state dict
(:mod:`card_envs.draw`): face-down cards the view does not know are card backs; in the
omniscient view they show their value inside a back-coloured frame. Values are coloured from
green (1, good) to red (10, bad). At the end the cards that vanish (an equal orthogonal
neighbour) are faded, and each panel shows points and cards left; the scoring and the winners
are the rules' queries (``card_envs.slide.queries``).
"""

from __future__ import annotations

import colorsys
from typing import Any

import numpy as np

from card_envs.core.game import Game
from card_envs.core.kernels import CUR, PHASE
from card_envs.draw import Svg, Theme, player_color, seat_title, view_note
from card_envs.slide import layout as L
from card_envs.slide.layout import NUM_VALUES, ROUNDS, SLOTS
from card_envs.slide.queries import grid_points, paired, winning_seats
from card_envs.slide.statedict import faces, grids


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
PAD, HEAD, FOOT = 12.0, 32.0, 24.0     # panel padding, header and footer heights
GRID_W = 4 * CW + 3 * GAP
PANEL_W = GRID_W + 2 * PAD
PANEL_H = HEAD + 4 * CH + 3 * GAP + FOOT + PAD
TITLE_H, MID_H, MARGIN = 36.0, CH + 34.0, 12.0


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
    h = TITLE_H + MARGIN + MID_H + MARGIN + rows * PANEL_H + (rows - 1) * MARGIN + MARGIN
    return w, h


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


def draw(view: dict, theme: Theme) -> str:
    """An SVG of a Slide state dict (``env.state_dict(observer)``)."""
    grids, faces = view["grids"], view["face_up"]
    n = len(grids)
    cur, obs = view["current_player"], view.get("observer")
    over = view["phase"] == "end"
    w, h = size(n)
    svg = Svg(w, h, theme, title="Slide")
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
    y = TITLE_H + MARGIN
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
    cols = _columns(n)
    top = y + MID_H + MARGIN
    left = (w - cols * PANEL_W - (cols - 1) * MARGIN) / 2
    reveals = view["reveals"]
    for q in range(n):
        px = left + (q % cols) * (PANEL_W + MARGIN)
        py = top + (q // cols) * (PANEL_H + MARGIN)
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
            svg.text(px + PAD, py + PANEL_H - 17, f"{scores[q][1]} cards left", size=12,
                     anchor="start", fill=t.muted)
            if q in win:
                svg.badge(px + PANEL_W - PAD, py + PANEL_H - 17, "WINNER", size=10,
                          fill=t.highlight, color="#1d1d1f", anchor="end")
        gone = scores[q][2] if over else set()
        chosen = reveals[q] if view["phase"] == "reveal" else None
        for r in range(4):
            for c in range(4):
                _card(svg, px + PAD + c * (CW + GAP), py + HEAD + r * (CH + GAP),
                      grids[q][r][c], faces[q][r][c], chosen == r * 4 + c, (r, c) in gone)
    return svg.to_string()
