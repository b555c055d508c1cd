"""Pieces of the If It Fits viewer (``viewer.py``): the deck's cards by name, the boxes of a
view's table and their scores (as the rules score them), and the drawing of toys, cats and
cards. Everything is computed from the state dict alone."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from card_envs.draw import Svg, Theme
from card_envs.if_it_fits.game import default_deck
from card_envs.if_it_fits.layout import ALL_OPEN, SIDES, TOYS

DIRS = ((-1, 0), (0, 1), (1, 0), (0, -1))  # N E S W, as SIDES
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
    out: dict[str, dict[str, Any]] = {}
    for key, kind in (("box_cards", "box"), ("start_cards", "start"),
                      ("special_toy_cards", "toy")):
        for c in deck[key]:
            bits = ALL_OPEN if kind == "toy" else sum(1 << SIDES.index(s) for s in c["open"])
            out[c["name"]] = {"kind": kind, "open": bits,
                              "toys": [int(c["toys"].get(t, 0)) for t in TOYS],
                              "sprayer": int(c.get("sprayer", 0))}
    return out


def rot_open(bits: int, rot: int) -> int:
    """Open-side bits turned by ``rot`` (0, or 1 = 180 degrees)."""
    return bits if rot == 0 else ((bits << 2) | (bits >> 2)) & ALL_OPEN


def cell_open(view: Mapping[str, Any], cards: Mapping[str, Any], r: int, c: int) -> int:
    """The open sides of the card in cell (r, c) (0 for a sleeping cat or an empty cell)."""
    x = view["table"][r][c]
    if not x or "card" not in x:
        return 0
    return rot_open(cards[x["card"]]["open"], int(x["rot"]))


def boxes(view: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The boxes of the table: per box its cells (sorted), closed, toys [ball, mouse, yarn],
    sprayers, value (the most frequent toy minus sprayers, doubled when closed) and cats
    (``awake`` / ``asleep``: per seat; ``princesses``)."""
    cards = deck_cards(view)
    table = view["table"]
    R, C = len(table), len(table[0])
    par = {(r, c): (r, c) for r in range(R) for c in range(C) if table[r][c]}

    def find(a: tuple[int, int]) -> tuple[int, int]:
        while par[a] != a:
            par[a] = par[par[a]]
            a = par[a]
        return a

    def union(a: tuple[int, int], b: tuple[int, int]) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            par[max(ra, rb)] = min(ra, rb)

    opens = {p: cell_open(view, cards, *p) for p in par}
    front = dict.fromkeys(par, 0)
    for (r, c), x in ((p, table[p[0]][p[1]]) for p in par):
        if "sleeping_cat" in x:
            union((r, c), tuple(x["joined"]))
            continue
        for d, (dr, dc) in enumerate(DIRS):
            if not opens[(r, c)] >> d & 1:
                continue
            q = (r + dr, c + dc)
            if not (0 <= q[0] < R and 0 <= q[1] < C) or q not in par:
                front[(r, c)] += 1  # the table's edge or an empty cell
            elif opens[q] >> ((d + 2) % 4) & 1:
                union((r, c), q)
    n = int(view["options"]["num_players"])
    out: dict[tuple[int, int], dict[str, Any]] = {}
    for p in sorted(par):
        b = out.setdefault(find(p), {"cells": [], "front": 0, "toys": [0, 0, 0],
                                     "sprayers": 0, "awake": [0] * n, "asleep": [0] * n,
                                     "princesses": 0})
        b["cells"].append(p)
        b["front"] += front[p]
        x = table[p[0]][p[1]]
        if "card" in x:
            cd = cards[x["card"]]
            b["toys"] = [a + t for a, t in zip(b["toys"], cd["toys"])]
            b["sprayers"] += cd["sprayer"]
        elif x["sleeping_cat"] == "princess":
            b["princesses"] += 1
        else:
            b["asleep"][int(x["sleeping_cat"])] += 1
    for r, row in enumerate(view["slots"]):
        for c, x in enumerate(row):
            if not x:
                continue
            b = out[find((r, c))]
            if "toy" in x:
                b["toys"] = [a + t for a, t in zip(b["toys"], cards[x["toy"]]["toys"])]
            elif x["cat"] == "princess":
                b["princesses"] += 1
            else:
                b["awake"][int(x["cat"])] += 1
    res = []
    for b in out.values():
        b["closed"] = b.pop("front") == 0
        b["value"] = (max(b["toys"]) - b["sprayers"]) * (2 if b["closed"] else 1)
        res.append(b)
    return sorted(res, key=lambda b: b["cells"][0])


def scores(view: Mapping[str, Any], bxs: Sequence[Mapping[str, Any]] | None = None
           ) -> tuple[list[int], list[int]]:
    """(points, minus points) per seat if the table were scored now (at the end: the final
    score): per box, the seats with the most cats (sleeping cats 1, advanced 0.5) and an
    awake cat there score its value; basic game: +1 per extra cat for a seat with an awake
    cat in the box."""
    n = int(view["options"]["num_players"])
    adv = bool(view["options"].get("advanced"))
    pts, minus = [0] * n, [0] * n
    for b in boxes(view) if bxs is None else bxs:
        count = [2 * b["awake"][p] + (1 if adv else 2) * b["asleep"][p] for p in range(n)]
        top = max(count)
        mult = 2 if b["closed"] else 1
        for p in range(n):
            if top and count[p] == top and b["awake"][p]:
                pts[p] += b["value"]
                minus[p] += b["sprayers"] * mult
            if not adv and b["awake"][p]:
                pts[p] += b["awake"][p] + b["asleep"][p] - 1
    return pts, minus


def result(view: Mapping[str, Any]) -> tuple[list[int], list[bool]] | None:
    """Final (points, winners) of a finished game (most points, then fewest minus points;
    still tied: shared), or ``None`` while playing."""
    if view["phase"] != "end":
        return None
    pts, minus = scores(view)
    key = [(p, -m) for p, m in zip(pts, minus)]
    return pts, [k == max(key) for k in key]


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
