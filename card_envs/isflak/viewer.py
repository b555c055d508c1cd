"""Isflak's picture (``render_mode="svg"/"rgb_array"``): the 5x7 grid of playing cards with the
penguins in their player's colour (slot number on the belly), and each player's pile and points.

Drawn only from a state dict (:mod:`card_envs.draw`); Isflak has perfect information, so
every view is the whole state. Gaps are dashed outlines; the seat to act is outlined.
"""

from __future__ import annotations

from card_envs.draw import Svg, Theme, fan_offsets, mix, player_color, seat_title, view_note
from card_envs.isflak.deck import CARD_IDS, KIND
from card_envs.isflak.layout import COLS, K_ACE, K_FACE, K_NUMBER, ROWS

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
_KIND_NAME = {K_ACE: "ace", K_FACE: "face", K_NUMBER: "number"}


def split_code(code: str) -> tuple[str, str]:
    """``"10H"`` -> ``("10", "H")``."""
    return code[:-1], code[-1]


def card_points(code: str, points: dict[str, int]) -> int:
    """What a card is worth with the ``card_points`` option."""
    return int(points[_KIND_NAME[int(KIND[CARD_IDS[code]])]])


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
    keys = list(zip(points, cards))
    best = max(keys)
    return {q for q, k in enumerate(keys) if k == best}


def draw(view: dict, theme: Theme) -> str:
    """An SVG of an Isflak state dict (``env.state_dict(observer)``)."""
    grid, penguins, piles, out = view["grid"], view["penguins"], view["piles"], view["out"]
    pts_opt = view["options"]["card_points"]
    n = len(piles)
    cur, obs = view["current_player"], view.get("observer")
    over = view["phase"] == "end"
    points = [sum(card_points(c, pts_opt) for c in pile) for pile in piles]
    cards = [len(p) for p in piles]
    svg = Svg(WIDTH, HEIGHT, theme, title="Isflak")
    t = svg.theme
    items = seat_title(view)
    win: set[int] = _winners(points, cards) if over else set()
    if over:
        items.append("winner" + ("s " if len(win) > 1 else " ") +
                     ", ".join(f"player_{q}" for q in sorted(win)))
    svg.title_bar("Isflak", items, TITLE_H, right=view_note(view))
    for c in range(COLS):
        svg.text(GRID_X + c * (CW + GAP) + CW / 2, GRID_Y - LABEL / 2 - 1, f"c{c}", size=10,
                 fill=t.muted)
    for r in range(ROWS):
        svg.text(MARGIN + LABEL / 2 - 2, GRID_Y + r * (CH + GAP) + CH / 2, f"r{r}", size=10,
                 fill=t.muted)
    on: dict[tuple[int, int], tuple[int, int]] = {}
    for q, row in enumerate(penguins):
        for k, cell in enumerate(row):
            if cell is not None:
                on[(cell[0], cell[1])] = (q, k)
    for r in range(ROWS):
        for c in range(COLS):
            x, y = GRID_X + c * (CW + GAP), GRID_Y + r * (CH + GAP)
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
