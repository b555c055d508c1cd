"""Pieces of the Flipology picture (``parts/picture.py``): kind colours and labels, one card
drawn in any of its states."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from card_envs.draw import Svg, Theme
from card_envs.flipology.layout import KIND_NAMES
from card_envs.flipology.queries import scores_face_down

# kind -> (label, hint); the hint is the effect in a few letters
KIND_TEXT: dict[str, tuple[str, str]] = {
    "dog": ("Dog", "flip adj."), "frog": ("Frog", "flip 2 away"), "hawk": ("Hawk", "other row"),
    "mole": ("Mole", "swap"), "monkey": ("Monkey", "both adj."), "parrot": ("Parrot", "copy"),
    "snake": ("Snake", "own row"), "wolves": ("Wolves", "remove"),
    "hermit_crab": ("Hermit", "+discard"), "cat": ("Cat", "stays up"),
    "sloth": ("Sloth", "±down/up"), "koala": ("Koala", "±down/up"), "panda": ("Panda", "unique"),
    "kiwi": ("Kiwi", "unique"), "quokka": ("Quokka", "unique"),
    "platypus": ("Platypus", "unique"), "okapi": ("Okapi", "unique"),
    "red_panda": ("R. panda", "unique"), "moon": ("Moon", "low wins"),
    "rain": ("Rain", "each row"), "sun": ("Sun", "peek 3"), "wind": ("Wind", "whole row"),
    "null": ("Clearing", "null"),
}

# kind colours per theme: (light, dark); the unique animals share the gold of rarities
_KIND_COLORS: dict[str, tuple[str, str]] = {
    "dog": ("#a0522d", "#e0a070"), "frog": ("#2e8b57", "#5fd38d"),
    "hawk": ("#7f6000", "#e6c84f"), "mole": ("#5d4037", "#bca08f"),
    "monkey": ("#d35400", "#ffa14f"), "parrot": ("#16a085", "#4fd6c6"),
    "snake": ("#6b8e23", "#b5d65f"), "wolves": ("#546e7a", "#9fb3c0"),
    "hermit_crab": ("#e4572e", "#ff8a65"), "cat": ("#c2185b", "#ff7fb0"),
    "sloth": ("#8e44ad", "#c792ea"), "koala": ("#3949ab", "#8fa3ff"),
    "moon": ("#283593", "#b0b8ff"), "rain": ("#1f6fb2", "#5fa8ff"),
    "sun": ("#d4a000", "#ffd54f"), "wind": ("#00838f", "#80deea"),
}
_UNIQUE = ("#b8860b", "#f0c04a")


def kind_color(kind: str, theme: Theme) -> str:
    """The colour of a card kind in ``theme`` (``null``: the theme's muted grey)."""
    if kind == "null":
        return theme.muted
    pair = _KIND_COLORS.get(kind, _UNIQUE)
    return pair[1] if theme.name == "dark" else pair[0]


def seat_color(seat: int, theme: Theme) -> str:
    """The colour that marks ``seat`` (its chip, its panel's bar)."""
    return theme.palette[seat % len(theme.palette)]


def fit_size(text: str, width: float, size: float) -> float:
    """A font size at most ``size`` at which ``text`` fits ``width`` (DejaVu-ish widths)."""
    return min(size, width / max(1.0, 0.62 * len(text)))


def empty_slot(svg: Svg, x: float, y: float, w: float, h: float) -> None:
    """An empty position: a dashed outline."""
    svg.rect(x + 1, y + 1, w - 2, h - 2, stroke=svg.theme.muted, rx=min(w, h) * 0.12,
             stroke_width=1.0, stroke_dasharray="4 3", opacity=0.6)


def card(svg: Svg, x: float, y: float, w: float, h: float, kind: str | None, pts: int,
         face_up: bool, mark: str | None = None) -> None:
    """One card: ``kind is None`` a back (unknown to the viewer); face up: a header band in
    the kind's colour with its name, the points large, the effect hint small; face down but
    known: the same face inset in a back-coloured frame with a down arrow. ``mark``:
    ``"hl"`` (highlight), ``"sel"`` (dashed highlight) or ``"peek"`` (looked at by a Sun)."""
    t = svg.theme
    r = min(w, h) * 0.12
    if kind is None:
        svg.card(x, y, w, h, None)
    else:
        if not face_up:
            svg.rect(x, y, w, h, fill=t.card_back, stroke=t.card_edge, rx=r)
            _face(svg, x + 3.5, y + 3.5, w - 7, h - 11, kind, pts, framed=False)
            a = max(2.5, h * 0.04)  # a down arrow on the frame
            svg.polygon([(x + w / 2 - a * 1.4, y + h - 6 - a * 0.4),
                         (x + w / 2 + a * 1.4, y + h - 6 - a * 0.4), (x + w / 2, y + h - 6 + a)],
                        fill=t.card_back_mark)
        else:
            _face(svg, x, y, w, h, kind, pts, framed=True)
    if mark == "hl":
        svg.rect(x - 2.5, y - 2.5, w + 5, h + 5, stroke=t.highlight, rx=r + 2, stroke_width=3)
    elif mark == "sel":
        svg.rect(x - 2.5, y - 2.5, w + 5, h + 5, stroke=t.highlight, rx=r + 2, stroke_width=2.5,
                 stroke_dasharray="5 3")
    elif mark == "peek":
        svg.rect(x - 2.5, y - 2.5, w + 5, h + 5, stroke=t.highlight, rx=r + 2, stroke_width=2,
                 stroke_dasharray="2 2")
        svg.circle(x + w - 2, y + 2, 7, fill=t.highlight)
        svg.text(x + w - 2, y + 2.5, "◉", size=9, fill=t.background)


def _face(svg: Svg, x: float, y: float, w: float, h: float, kind: str, pts: int,
          framed: bool) -> None:
    """The face of a card: band, points, hint."""
    t = svg.theme
    col = kind_color(kind, t)
    r = min(w, h) * 0.12
    svg.rect(x, y, w, h, fill=t.card_face, stroke=t.card_edge if framed else None, rx=r)
    band = h * 0.26
    svg.add(f'<path d="M{x:g},{y + band:g} V{y + r:g} Q{x:g},{y:g} {x + r:g},{y:g} '
            f'H{x + w - r:g} Q{x + w:g},{y:g} {x + w:g},{y + r:g} V{y + band:g} Z" '
            f'fill="{col}"/>')
    label, hint = KIND_TEXT.get(kind, (kind, ""))
    svg.text(x + w / 2, y + band / 2 + 0.5, label, size=fit_size(label, w - 5, band * 0.62),
             fill=t.card_face, weight="bold")
    big = f"±{pts}" if scores_face_down(KIND_NAMES.index(kind)) else str(pts)
    svg.text(x + w / 2, y + band + (h - band) * 0.42, big, size=min(w * 0.42, h * 0.3),
             fill=col, weight="bold")
    if h > 60:  # the effect hint on row cards only
        svg.text(x + w / 2, y + h - h * 0.12, hint, size=fit_size(hint, w - 4, h * 0.1),
                 fill=t.muted)


def kind_of(card_id: Any, kinds: Sequence[int]) -> str | None:
    """The kind name of a row / hand / pile entry (``None``: unknown card)."""
    if card_id is None:
        return None
    if card_id == "null":
        return "null"
    return KIND_NAMES[kinds[card_id]]
