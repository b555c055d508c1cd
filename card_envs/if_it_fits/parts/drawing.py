"""Drawing pieces of If It Fits' picture (``parts/picture.py``): the colours, the deck's cards by
name (their faces from the deck's card table), a card's open sides on the table, and toys,
cats and cards in SVG."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from card_envs.draw import Svg, Theme
from card_envs.if_it_fits.layout import (
    F_BALL,
    F_KIND,
    F_OPEN,
    F_SPRAY,
    FIELDS,
    KIND_BOX,
    KIND_START,
    KIND_TOY,
    TOYS,
)
from card_envs.if_it_fits.parts.deck import card_names, card_table, default_deck
from card_envs.if_it_fits.queries import rot_open

# cardboard, its wall, and the toys' colours per theme: (light, dark)
_COLORS: dict[str, tuple[str, str]] = {
    "board": ("#e6cfa6", "#7a5f3e"), "start": ("#edd9b4", "#87694a"),
    "toycard": ("#f3e6cc", "#94785a"), "wall": ("#6b4423", "#e9d3a9"),
    "ball": ("#d62828", "#ff6b5e"), "mouse": ("#6d6d6d", "#d0d0d0"),
    "yarn": ("#7b2cbf", "#c792ea"), "spray": ("#1f78d1", "#5fb8ff"),
    "princess": ("#1d1d1f", "#0d0d0f"),
}
SEAT_PALETTE = (1, 2, 4, 7, 5)  # theme palette entries of the seats' cats (not the toys')


def color(name: str, theme: Theme) -> str:
    """A viewer colour (``board``, ``wall``, a toy...) in ``theme``."""
    pair = _COLORS[name]
    return pair[1] if theme.name == "dark" else pair[0]


def seat_color(seat: int, theme: Theme) -> str:
    """The colour of ``seat``'s cats and chip."""
    return theme.palette[SEAT_PALETTE[seat % len(SEAT_PALETTE)] % len(theme.palette)]


def deck_cards(view: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Card name -> ``{kind: box|start|toy, open: bits (N=1 E=2 S=4 W=8), toys: [ball,
    mouse, yarn], sprayer}`` for the view's deck (the ``deck`` option or the default deck;
    the result is shared: do not change it)."""
    deck = view["options"].get("deck")
    return _default_cards() if deck is None else _cards(deck)


@lru_cache(maxsize=1)
def _default_cards() -> dict[str, dict[str, Any]]:
    return _cards(default_deck())


def _cards(deck: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    kinds = {KIND_BOX: "box", KIND_START: "start", KIND_TOY: "toy"}
    table = card_table(deck).reshape(-1, FIELDS).tolist()
    return {name: {"kind": kinds[t[F_KIND]], "open": t[F_OPEN],
                   "toys": t[F_BALL:F_BALL + 3], "sprayer": t[F_SPRAY]}
            for name, t in zip(card_names(deck), table, strict=True)}


def cell_open(view: Mapping[str, Any], cards: Mapping[str, Any], r: int, c: int) -> int:
    """The open sides of the card in cell (r, c) (0 for a sleeping cat or an empty cell)."""
    x = view["table"][r][c]
    if not x or "card" not in x:
        return 0
    return int(rot_open(cards[x["card"]]["open"], int(x["rot"])))


# --- drawing ------------------------------------------------------------------------------
def toy_icon(svg: Svg, toy: str, x: float, y: float, s: float) -> None:
    """A toy (``ball``, ``mouse``, ``yarn``) or ``spray`` (water sprayer) icon of size ``s``
    centred on (x, y)."""
    t = svg.theme
    col = color(toy, t)
    r = s / 2
    if toy == "ball":
        svg.circle(x, y, r, fill=col)
        svg.circle(x - r * 0.35, y - r * 0.35, r * 0.28, fill="#ffffff", opacity=0.7)
    elif toy == "mouse":
        svg.line(x + r * 0.8, y + r * 0.1, x + r * 1.3, y + r * 0.6, stroke=col,
                 stroke_width=max(1.0, s * 0.1))
        svg.add(f'<ellipse cx="{x:g}" cy="{y + r * 0.1:g}" rx="{r * 0.95:g}" '
                f'ry="{r * 0.62:g}" fill="{col}"/>')
        svg.circle(x - r * 0.45, y - r * 0.5, r * 0.32, fill=col)
    elif toy == "yarn":
        svg.circle(x, y, r, fill=col)
        w = max(0.8, s * 0.08)
        svg.add(f'<path d="M{x - r * 0.8:g},{y - r * 0.3:g} Q{x:g},{y - r * 0.9:g} '
                f'{x + r * 0.8:g},{y - r * 0.3:g} M{x - r * 0.9:g},{y + r * 0.2:g} '
                f'Q{x:g},{y - r * 0.4:g} {x + r * 0.9:g},{y + r * 0.2:g} '
                f'M{x - r * 0.6:g},{y + r * 0.7:g} Q{x:g},{y + r * 0.1:g} '
                f'{x + r * 0.6:g},{y + r * 0.7:g}" fill="none" stroke="#ffffff" '
                f'stroke-width="{w:g}" opacity="0.75"/>')
    else:  # a water drop
        a = r * 0.68
        svg.add(f'<path d="M{x:g},{y - r * 1.05:g} L{x + a * 0.94:g},{y + r * 0.1:g} '
                f'A{a:g},{a:g} 0 1 1 {x - a * 0.94:g},{y + r * 0.1:g} Z" fill="{col}"/>')
        svg.circle(x - a * 0.35, y + r * 0.25, a * 0.25, fill="#ffffff", opacity=0.6)


def toy_row(svg: Svg, toys: Sequence[int], spray: int, x: float, y: float, w: float,
            s: float) -> None:
    """The icons of a card centred on (x, y) within width ``w``: each toy (a count beyond
    2 of a kind as "icon×k"), then the sprayers."""
    items: list[tuple[str, int]] = [(k, n) for k, n in zip(TOYS, toys) if n]
    if spray:
        items.append(("spray", spray))
    icons = sum(n if n <= 2 else 1 for _, n in items)
    if not icons:
        return
    step = min(s * 1.25, w / max(1, icons))
    cx = x - step * (icons - 1) / 2
    for k, n in items:
        for _ in range(n if n <= 2 else 1):
            toy_icon(svg, k, cx, y, s)
            if n > 2:
                svg.text(cx + s * 0.55, y + s * 0.45, f"×{n}", size=s * 0.7, anchor="start",
                         weight="bold")
            cx += step


def cat_head(svg: Svg, x: float, y: float, r: float, fill: str, label: str | None,
             asleep: bool = False) -> None:
    """A cat's head (ears and face) of radius ``r`` at (x, y), ``label`` on it."""
    t = svg.theme
    edge = "#b8b8b8" if fill == color("princess", t) else t.card_edge
    for sgn in (-1, 1):
        svg.polygon([(x + sgn * r * 0.95, y - r * 0.2), (x + sgn * r * 0.75, y - r * 1.25),
                     (x + sgn * r * 0.2, y - r * 0.85)], fill=fill, stroke=edge,
                    stroke_width=0.8)
    svg.circle(x, y, r, fill=fill, stroke=edge, stroke_width=0.8)
    if label is not None:
        svg.text(x, y + r * 0.1, label, size=r * 1.15, fill="#ffffff", weight="bold")
    if asleep:
        svg.text(x + r * 1.25, y - r * 0.9, "z", size=r * 0.9, fill=t.text, weight="bold")


def box_card(svg: Svg, x: float, y: float, w: float, h: float, cd: Mapping[str, Any],
             opens: int, name: str | None = None, walls_only: Sequence[bool] | None = None
             ) -> None:
    """A card seen from above: cardboard, a thick wall on every closed side (``walls_only``:
    which sides to draw as walls, default the closed ones), its toys and sprayers, its name
    small in a corner."""
    t = svg.theme
    fill = color({"box": "board", "start": "start", "toy": "toycard"}[cd["kind"]], t)
    svg.rect(x, y, w, h, fill=fill)
    wall = color("wall", t)
    ww = max(2.0, min(w, h) * 0.11)
    corners = ((x, y, x + w, y), (x + w, y, x + w, y + h), (x, y + h, x + w, y + h),
               (x, y, x, y + h))
    for d, (x1, y1, x2, y2) in enumerate(corners):
        shut = not opens >> d & 1 if walls_only is None else walls_only[d]
        if shut:
            dx = ww / 2 * (1 if d == 3 else -1 if d == 1 else 0)
            dy = ww / 2 * (1 if d == 0 else -1 if d == 2 else 0)
            svg.line(x1 + dx, y1 + dy, x2 + dx, y2 + dy, stroke=wall, stroke_width=ww,
                     stroke_linecap="square")
    toy_row(svg, cd["toys"], cd["sprayer"], x + w / 2, y + h * 0.52, w * 0.8,
            min(h * 0.3, w * 0.2))
    if name is not None and w >= 44:
        svg.text(x + w - ww - 1.5, y + h - ww - 4, name, size=min(7.5, h * 0.17),
                 anchor="end", fill=wall, opacity=0.8)
