"""Op Glad IJs seen: the ANSI text of a state (:func:`render`, what a spectator sees: draw piles
face down) and the picture of a state dict (:func:`draw`, ``render_mode="svg"/"rgb_array"``:
the middle in turned order, the last turned card outlined, and per player the draw pile (face
down, its size), the won pile's top card and size, the window's choice and the last resolved
slap; the pieces are in ``parts.picture``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from card_envs.core.game import Game
from card_envs.core.kernels import CUR, DONE
from card_envs.draw import Svg, Theme, fan_offsets, seat_title, view_note
from card_envs.op_glad_ijs import layout as L
from card_envs.op_glad_ijs.parts.linked import middle, won_pile
from card_envs.op_glad_ijs.parts.picture import (
    CH,
    CW,
    GAP,
    MARGIN,
    MID_H,
    PANEL_H,
    TITLE_H,
    animal_card,
    columns,
    player_panel,
    size,
    slap_names,
)
from card_envs.op_glad_ijs.queries import scores


def render(game: Game, state: np.ndarray, observer: int | None = None) -> str:
    """ANSI text of ``state`` (the same for every ``observer``: nothing hidden is shown)."""
    n, c = game.num_players, game.codes
    cur = int(state[CUR])
    head = (f"Op Glad IJs  card {int(state[L.TURNED])} turned by player_"
            f"{int(state[L.TURNED_BY])}  window {int(state[L.WINDOW])}")
    if cur >= 0:
        head += f"  to choose: player_{cur}"
    lines = [head]
    mid = [c[t] for t in middle(state)]
    lines.append("middle: " + (", ".join(mid) if mid else "-"))
    if state[DONE]:
        points, winners = game.outcome(state)
        if state[L.OLEN]:
            lines.append(f"out of the game: {int(state[L.OLEN])} cards")
    for q in range(n):
        won = won_pile(state, q)
        top = c[won[-1]] if won else "-"
        label = (f"player_{q}: draw {int(state[L.DLEN + q])} "
                 f"(known bottom {int(state[L.KNOWN + q])})  won {len(won)} (top {top})")
        if cur >= 0 and q < cur:
            label += "  [chosen]"
        if state[DONE]:
            label += f"  points {int(points[q])}" + ("  WINNER" if winners[q] else "")
        lines.append(label)
    return "\n".join(lines)


def _winners(view: dict) -> set[int]:
    """The winners of a finished game's state dict (``queries.scores`` of the won piles)."""
    won = np.asarray([len(p) for p in view["won_piles"]], np.int32)
    points = np.zeros(len(won), np.float64)
    winners = np.zeros(len(won), np.int64)
    scores(won, points, winners)
    return {q for q in range(len(won)) if winners[q]}


def draw(view: dict, theme: Theme) -> str:
    """An SVG of an Op Glad IJs state dict (``env.state_dict(observer)``)."""
    names = slap_names(view["options"])
    n = len(view["draw_piles"])
    cur = view["current_player"]
    over = cur is None
    w, h = size(n)
    svg = Svg(w, h, theme, title="Op Glad IJs")
    t = svg.theme
    won = [len(p) for p in view["won_piles"]]
    win = _winners(view) if over else set()
    items: list[Any] = [f"card {view['turned_count']} by player_{view['turned_by']}",
                        f"window {view['window']}", *seat_title(view)]
    if over:
        items.append("winner" + ("s " if len(win) > 1 else " ") +
                     ", ".join(f"player_{q}" for q in sorted(win)))
    svg.title_bar("Op Glad IJs", items, TITLE_H, right=view_note(view))
    # the middle
    y = TITLE_H + MARGIN
    svg.rect(MARGIN, y, w - 2 * MARGIN, MID_H, fill=t.panel, rx=8, stroke=t.card_edge,
             stroke_width=0.8)
    mid = view["middle"]
    svg.text(MARGIN + 10, y + 14, f"middle: {len(mid)} card{'s' if len(mid) != 1 else ''}",
             size=12, anchor="start", weight="bold")
    notes = [f"cut-off after {view['options']['max_turned']} turned"]
    if view["out"]:
        notes.insert(0, f"out of the game: {len(view['out'])}")
    svg.text(w - MARGIN - 10, y + 14, "  \u00b7  ".join(notes), size=11, anchor="end",
             fill=t.muted)
    per_row = int((w - 2 * MARGIN - 20 + GAP) // (CW + GAP))
    rows = [mid] if len(mid) <= per_row else [mid[:(len(mid) + 1) // 2],
                                              mid[(len(mid) + 1) // 2:]]
    k = 0
    for r, row in enumerate(rows):
        xs = fan_offsets(len(row), w - 2 * MARGIN - 20, CW, GAP)
        for dx, code in zip(xs, row):
            k += 1
            animal_card(svg, MARGIN + 10 + dx, y + 28 + r * (CH + GAP), CW, CH, code,
                        highlight=k == len(mid) and not over)
    if not mid:
        svg.text(MARGIN + 10, y + 28 + CH / 2, "empty", size=12, anchor="start", fill=t.muted)
    # the players
    cols = columns(n)
    pw = (w - 2 * MARGIN - (cols - 1) * MARGIN) / cols
    top = y + MID_H + MARGIN
    for q in range(n):
        note = f"{won[q]} won" + (" \u00b7 WINNER" if q in win else
                                  " \u00b7 turns next" if view["turner"] == q and not over
                                  else "")
        player_panel(svg, view, q, MARGIN + (q % cols) * (pw + MARGIN),
                     top + (q // cols) * (PANEL_H + MARGIN), pw, note, names)
    return svg.to_string()
