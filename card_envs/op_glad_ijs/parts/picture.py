"""The pieces of Op Glad IJs's picture (``view.draw``): the cards, the players' panels, the
sizes, and the places of the middle's cards and of the "pass" control (which ``view.clicks``
reads too, so that a click lands where the card is drawn).

Cards: the animal's name on the face, the habitat as a coloured band (an animal and its own
habitat share a colour; a star marks a right-habitat card); 2-animals cards show two names,
2-habitats cards two bands. Drawn only from a state dict (:mod:`card_envs.draw`): other
seats' pending choices and the unknown draw-pile cards are not in a seat's view, so they are
not in its picture.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from card_envs.draw import (
    Svg,
    Theme,
    fan_offsets,
    mix,
    player_color,
)
from card_envs.op_glad_ijs.layout import KIND_ANIMALS, KIND_HABITATS, KIND_RIGHT
from card_envs.op_glad_ijs.parts.deck import (
    ANIMALS,
    HABITATS,
    action_names,
    action_types,
    check_deck_option,
    option_types,
    parse_code,
)

WIDTH, TITLE_H, MARGIN = 1000.0, 36.0, 12.0
CW, CH, GAP = 70.0, 96.0, 6.0
MID_H = 28 + 2 * CH + GAP + 12
SW, SH = 50.0, 69.0                      # cards in the player panels
LINE_H, MAX_LINES = 15.0, 6
PANEL_H = 36 + MAX_LINES * LINE_H + 8
MID_Y = TITLE_H + MARGIN                 # the top of the middle's panel
MID_X = MARGIN + 10                      # the left of its first card
MID_W = WIDTH - 2 * MARGIN - 20          # the width its cards may take
PASS_BOX = (MARGIN + 150.0, MID_Y + 4.0, 50.0, 20.0)  # the "pass" control (x, y, w, h)
#: habitat i (and animal i, whose own habitat it is): desert, ice floe, water lily, spider
#: web, mountains, rainforest
BASE_COLORS = ("#d9a441", "#4aa3df", "#45b36b", "#a569bd", "#a1887f", "#1e8449")
SHORT = {"mountain_goat": "goat", "ice_floe": "ice", "water_lily": "lily",
         "spider_web": "web", "rainforest": "forest"}


def _lum(c: str) -> float:
    r, g, b = (int(c[i:i + 2], 16) / 255 for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def band_color(t: Theme, i: int) -> str:
    return BASE_COLORS[i] if t.name != "dark" else mix(BASE_COLORS[i], "#000000", 0.15)


def animal_color(t: Theme, i: int) -> str:
    base = BASE_COLORS[i]
    return mix(base, "#000000", 0.3) if t.name != "dark" else mix(base, "#ffffff", 0.3)


def _bits(mask: int) -> list[int]:
    return [i for i in range(len(ANIMALS)) if mask >> i & 1]


def short(code: str) -> str:
    """A compact card name for text lines: ``"goat/web"``, ``"2 animals camel+toad"``."""
    for k, v in SHORT.items():
        code = code.replace(k, v)
    return code.replace("animals:", "").replace("habitats:", "")


def _name_lines(name: str) -> list[str]:
    return name.split("_") if "_" in name else [name]


def animal_card(svg: Svg, x: float, y: float, w: float, h: float, code: str | None,
                highlight: bool = False) -> None:
    """One card (``code`` None: its back)."""
    if code is None:
        svg.card(x, y, w, h, None, highlight=highlight)
        return
    t = svg.theme
    kind, am, hm = parse_code(code)
    r = min(w, h) * 0.1
    fs = w * 0.17
    svg.rect(x, y, w, h, fill=t.card_face, stroke=t.card_edge, rx=r)
    clip = svg.new_id("clip")
    svg.add(f'<clipPath id="{clip}"><rect x="{x:g}" y="{y:g}" width="{w:g}" height="{h:g}" '
            f'rx="{r:g}"/></clipPath>')

    def band(y0: float, hh: float, i: int) -> None:
        fill = band_color(t, i)
        svg.rect(x, y0, w, hh, fill=fill, clip_path=f"url(#{clip})")
        ink = "#1d1d1f" if _lum(fill) > 0.5 else "#ffffff"
        lines = _name_lines(HABITATS[i])
        for k, line in enumerate(lines):
            svg.text(x + w / 2, y0 + hh / 2 + (k - (len(lines) - 1) / 2) * fs * 1.05, line,
                     size=fs * 0.9, fill=ink, weight="bold")

    def animal(y0: float, hh: float, i: int) -> None:
        lines = _name_lines(ANIMALS[i])
        for k, line in enumerate(lines):
            svg.text(x + w / 2, y0 + hh / 2 + (k - (len(lines) - 1) / 2) * fs * 1.1, line,
                     size=fs, fill=animal_color(t, i), weight="bold")

    if kind == KIND_ANIMALS:
        a, b = _bits(am)
        animal(y, h / 2, a)
        svg.line(x + w * 0.15, y + h / 2, x + w * 0.85, y + h / 2, stroke=t.muted)
        animal(y + h / 2, h / 2, b)
    elif kind == KIND_HABITATS:
        a, b = _bits(hm)
        band(y, h / 2, a)
        band(y + h / 2, h / 2, b)
    else:
        (a,), (b,) = _bits(am), _bits(hm)
        animal(y, h * 0.58, a)
        band(y + h * 0.58, h * 0.42, b)
        if kind == KIND_RIGHT:
            svg.star(x + w - fs * 0.8, y + fs * 0.8, fs * 0.55, t.highlight)
    svg.rect(x, y, w, h, stroke=t.highlight if highlight else t.card_edge, rx=r,
             stroke_width=3.0 if highlight else 1.0)


@lru_cache(maxsize=16)
def _codes(options: str) -> tuple[str, ...]:
    opts = json.loads(options)
    opts["deck"] = check_deck_option(opts["deck"], opts)
    return tuple(code for code, _ in option_types(opts))


@lru_cache(maxsize=16)
def _names(options: str) -> tuple[str, ...]:
    return tuple(short(a).removeprefix("slap ") for a in action_names(list(_codes(options))))


def type_codes(options: dict[str, Any]) -> tuple[str, ...]:
    """The card types of the game with these options, in action order (their codes)."""
    return _codes(json.dumps(options, sort_keys=True))


@lru_cache(maxsize=16)
def slap_types(num_types: int) -> tuple[tuple[int, int], ...]:
    """Per action, its (first, second) card type, -1 for none (``deck.action_types``)."""
    return tuple(action_types(num_types))


def middle_places(count: int) -> list[tuple[float, float, float]]:
    """Where the middle's ``count`` cards lie, in turned order: ``(x, y, visible width)`` of
    each (a card drawn over by the next one shows only its left part). One row when they fit,
    else two (the earlier half on top), overlapping when a row is crowded."""
    per_row = int((MID_W + GAP) // (CW + GAP))
    rows = [count] if count <= per_row else [(count + 1) // 2, count // 2]
    out = []
    for r, k in enumerate(rows):
        xs = fan_offsets(k, MID_W, CW, GAP)
        for i, dx in enumerate(xs):
            seen = min(CW, xs[i + 1] - dx) if i + 1 < k else CW
            out.append((MID_X + dx, MID_Y + 28 + r * (CH + GAP), seen))
    return out


def pass_control(svg: Svg) -> None:
    """The "pass" chip (:data:`PASS_BOX`) and how slaps are clicked, in the middle's header."""
    t = svg.theme
    x, y, w, h = PASS_BOX
    svg.rect(x, y, w, h, fill=t.card_face, stroke=t.card_edge, rx=h / 2, stroke_width=0.8)
    svg.text(x + w / 2, y + h / 2, "pass", size=11, weight="bold")
    svg.text(x + w + 10, y + h / 2, "one hand: click a card twice \u00b7 two hands: the animal "
             "card, then the habitat card", size=10, anchor="start", fill=t.muted)


def slap_names(options: dict[str, Any]) -> tuple[str, ...]:
    """Per action of the game with these options: ``"pass"``, ``"camel/ice"`` (one hand),
    ``"camel/ice + toad/web"`` (two)."""
    return _names(json.dumps(options, sort_keys=True))


def _choice_line(view: dict, q: int, names: tuple[str, ...]) -> str:
    cur = view["current_player"]
    if cur is None:
        return ""
    c = view["choices"][q]
    if c is not None:
        return f"chose: {names[c]}"
    if q < cur:
        return "chose (hidden)"
    return "choosing..." if q == cur else "waits"


def _last_line(view: dict, q: int, names: tuple[str, ...]) -> str:
    last = view["last_slaps"][q]
    if last is None:
        return ""
    gain = view["last_gains"][q]
    return f"last: {names[last]}" + (f" ({gain:+d})" if gain else "")


def columns(n: int) -> int:
    """Player panels per row."""
    return n if n <= 3 else (2 if n == 4 else 3)


def size(n: int) -> tuple[float, float]:
    """Width and height of the picture with ``n`` players."""
    rows = -(-n // columns(n))
    return WIDTH, TITLE_H + 2 * MARGIN + MID_H + rows * (PANEL_H + MARGIN)


def player_panel(svg: Svg, view: dict, q: int, x: float, y: float, w: float, note: str,
                 names: tuple[str, ...]) -> None:
    """Player ``q``'s panel: its draw pile (face down), its won pile's top card, and text
    lines for its choice in the window, its last slap, its public bottom cards and (in the
    full view) its next card."""
    t = svg.theme
    cur, obs = view["current_player"], view.get("observer")
    svg.panel(x, y, w, PANEL_H, f"player_{q}", color=player_color(t, q),
              active=cur == q, note=note, mark="you" if obs == q else None)
    pile = view["draw_piles"][q]
    known = view["known_bottom"][q]
    sx, sy = x + 12, y + 38
    svg.back_stack(sx, sy, SW, SH, len(pile), label="draw")
    wp = view["won_piles"][q]
    wx = sx + SW + 14
    if wp:
        animal_card(svg, wx, sy, SW, SH, wp[-1])
    else:
        svg.empty_slot(wx, sy, SW, SH)
    svg.text(wx + SW / 2, sy + SH + 11, "won (top)", size=10, fill=t.muted)
    lx = wx + SW + 14
    lines: list[tuple[str, str]] = []
    for text, ink in ((_choice_line(view, q, names), t.text),
                      (_last_line(view, q, names), t.muted),
                      (f"bottom: {known} known" if known else "", t.muted),
                      (f"next: {short(pile[0])}" if obs is None and pile and
                       pile[0] is not None else "", t.muted)):
        head, plus, rest = text.partition(" + ")
        lines += [(head, ink)] + ([("    + " + rest, ink)] if plus else [])
    lines = [x for x in lines if x[0]][:MAX_LINES]
    for i, (line, ink) in enumerate(lines):
        svg.text(lx, sy + 6 + i * LINE_H, line, size=10.5, anchor="start", fill=ink)
