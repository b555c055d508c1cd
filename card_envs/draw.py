"""Drawing toolkit of the games' pictures (``draw`` in ``card_envs/<game>/view.py``): themes,
a small SVG builder, and rasterisation to PNG / RGB arrays (``resvg``, a Rust renderer shipped
as a wheel: no system libraries).

A viewer is ``draw(view: dict, theme: Theme) -> str``: an SVG document of ``view``, a state
dict as :meth:`CardEnv.state_dict` returns it (``observer=seat``: what that seat knows, hidden
cards ``None``; ``observer=None``: everything). Drawing only from that dict keeps hidden
information out of a seat's picture by construction, and keeps drawing out of the engines.

>>> svg = Svg(200, 100, theme("dark"))
>>> svg.card(10, 10, 40, 60, "7", color=svg.theme.palette[0])
>>> svg.card(60, 10, 40, 60, None)                      # face down
>>> to_rgb_array(svg.to_string()).shape                 # (100, 200, 3)
"""

from __future__ import annotations

import functools
import importlib.util
import io
import math
import os
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import escape, quoteattr

import numpy as np

__all__ = ["SUITS", "SUIT_SYMBOLS", "THEMES", "Picture", "Svg", "Theme", "ThemeError",
           "fan_offsets", "mix", "player_color", "seat_title", "suit_color", "theme", "to_png",
           "to_rgb_array", "view_note"]

#: suit letters (as in card codes such as ``"10H"``) -> the suit's symbol
SUIT_SYMBOLS: dict[str, str] = {"S": "\u2660", "H": "\u2665", "D": "\u2666", "C": "\u2663"}
SUITS: tuple[str, ...] = tuple(SUIT_SYMBOLS)
_RED_SUITS = frozenset("HD")


@dataclass(frozen=True)
class Theme:
    """Colours and font of a picture. ``palette``: eight well-separated colours (suits,
    animals, players...), readable on both ``card_face`` and ``background``."""

    name: str
    background: str
    text: str
    muted: str
    card_face: str
    card_back: str
    card_back_mark: str
    card_edge: str
    highlight: str
    panel: str
    palette: tuple[str, ...]
    font: str = "DejaVu Sans, Verdana, Arial, sans-serif"


THEMES: dict[str, Theme] = {
    "light": Theme("light", background="#f4f1ea", text="#1d1d1f", muted="#7a776f",
                   card_face="#ffffff", card_back="#2f5d8a", card_back_mark="#a9c4de",
                   card_edge="#3a3a3a", highlight="#e8a317", panel="#e4dfd3",
                   palette=("#c0392b", "#1f6fb2", "#2e8b57", "#8e44ad", "#d35400",
                            "#16a085", "#7f6000", "#c2185b")),
    "dark": Theme("dark", background="#1b1e24", text="#eceff4", muted="#9aa3b2",
                  card_face="#2b303b", card_back="#3b5b85", card_back_mark="#7f9cc4",
                  card_edge="#a0a8b8", highlight="#f0c04a", panel="#262a33",
                  palette=("#ff6b5e", "#5fa8ff", "#5fd38d", "#c792ea", "#ffa14f",
                           "#4fd6c6", "#e6c84f", "#ff7fb0")),
}


class ThemeError(ValueError):
    """An unknown theme name (the envs turn it into :class:`~card_envs.OptionError`)."""


def theme(t: str | Theme = "light") -> Theme:
    """The theme named ``t`` (``"light"``, ``"dark"``) or ``t`` itself; :class:`ThemeError`
    (a ``ValueError``) for an unknown name."""
    if isinstance(t, Theme):
        return t
    if not isinstance(t, str) or t not in THEMES:
        raise ThemeError(f"theme must be one of {sorted(THEMES)}, got {t!r}")
    return THEMES[t]


def player_color(t: Theme, seat: int) -> str:
    """The colour of seat ``seat`` (penguins, panels, markers): the palette, cycled."""
    return t.palette[seat % len(t.palette)]


def suit_color(t: Theme, suit: str) -> str:
    """Red for hearts and diamonds, the text colour for spades and clubs."""
    return t.palette[0] if suit in _RED_SUITS else t.text


def mix(a: str, b: str, t: float) -> str:
    """The colour ``t`` of the way from ``#rrggbb`` ``a`` to ``b`` (tints, shades)."""
    ca = [int(a[i:i + 2], 16) for i in (1, 3, 5)]
    cb = [int(b[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x + (y - x) * t):02x}" for x, y in zip(ca, cb))


def view_note(view: dict) -> str:
    """Whose view a state dict is: ``"player_1's view"`` or ``"omniscient view"``."""
    obs = view.get("observer")
    return "omniscient view" if obs is None else f"player_{obs}'s view"


def seat_title(view: dict) -> list[str]:
    """Title-bar items every viewer shows: the phase and the seat to act (or "game over")."""
    cur = view.get("current_player")
    items = [str(view.get("phase", ""))]
    if cur is None:
        items.append("truncated" if view.get("truncated") else "game over")
    else:
        items.append(f"to act: player_{cur}")
    return items


def fan_offsets(count: int, width: float, card_w: float, gap: float = 4.0) -> list[float]:
    """x offsets of ``count`` cards ``card_w`` wide laid in a row of at most ``width``: side by
    side with ``gap`` when they fit, else overlapping evenly (the last card shown whole)."""
    if count <= 0:
        return []
    step = card_w + gap
    if count > 1 and (count - 1) * step + card_w > width:
        step = max(0.0, (width - card_w) / (count - 1))
    return [i * step for i in range(count)]


_NAMES: dict[str, str] = {}


def _attrs(kw: dict[str, Any]) -> str:
    out = []
    for k, v in kw.items():
        if v is None:
            continue
        name = _NAMES.get(k)
        if name is None:
            name = _NAMES[k] = k.rstrip("_").replace("_", "-")
        s = str(v)
        if "&" in s or "<" in s or '"' in s or ">" in s or "\n" in s:
            out.append(f"{name}={quoteattr(s)}")
        else:
            out.append(f'{name}="{s}"')
    return " ".join(out)


class Svg:
    """An SVG document under construction: ``width x height`` user units (= pixels at scale
    1), the theme's background painted first. Methods append elements; :meth:`to_string`
    closes the document."""

    def __init__(self, width: float, height: float, theme: Theme, title: str | None = None
                 ) -> None:
        self.width, self.height, self.theme = float(width), float(height), theme
        self.parts: list[str] = []
        self._ids = 0
        if title:
            self.parts.append(f"<title>{escape(title)}</title>")
        self.rect(0, 0, width, height, fill=theme.background)

    def add(self, element: str) -> None:
        """Append raw SVG markup."""
        self.parts.append(element)

    def new_id(self, prefix: str = "i") -> str:
        """A fresh element id (for clip paths, gradients), unique in this document."""
        self._ids += 1
        return f"{prefix}{self._ids}"

    def rect(self, x: float, y: float, w: float, h: float, fill: str | None = None,
             stroke: str | None = None, rx: float = 0.0, stroke_width: float = 1.0,
             opacity: float | None = None, **kw: Any) -> None:
        self.parts.append(f"<rect {_attrs(dict(x=f'{x:g}', y=f'{y:g}', width=f'{w:g}', height=f'{h:g}', rx=f'{rx:g}' if rx else None, fill=fill or 'none', stroke=stroke, stroke_width=stroke_width if stroke else None, opacity=opacity, **kw))}/>")  # noqa: E501

    def circle(self, cx: float, cy: float, r: float, fill: str | None = None,
               stroke: str | None = None, stroke_width: float = 1.0, **kw: Any) -> None:
        self.parts.append(f"<circle {_attrs(dict(cx=f'{cx:g}', cy=f'{cy:g}', r=f'{r:g}', fill=fill or 'none', stroke=stroke, stroke_width=stroke_width if stroke else None, **kw))}/>")  # noqa: E501

    def line(self, x1: float, y1: float, x2: float, y2: float, stroke: str,
             stroke_width: float = 1.0, **kw: Any) -> None:
        self.parts.append(f"<line {_attrs(dict(x1=f'{x1:g}', y1=f'{y1:g}', x2=f'{x2:g}', y2=f'{y2:g}', stroke=stroke, stroke_width=stroke_width, **kw))}/>")  # noqa: E501

    def polygon(self, points: list[tuple[float, float]], fill: str | None = None,
                stroke: str | None = None, stroke_width: float = 1.0, **kw: Any) -> None:
        pts = " ".join(f"{x:g},{y:g}" for x, y in points)
        self.parts.append(f"<polygon {_attrs(dict(points=pts, fill=fill or 'none', stroke=stroke, stroke_width=stroke_width if stroke else None, **kw))}/>")  # noqa: E501

    def text(self, x: float, y: float, s: Any, size: float = 12.0, fill: str | None = None,
             anchor: str = "middle", weight: str = "normal", **kw: Any) -> None:
        """Text with its baseline centred vertically on ``y`` (``dominant-baseline``
        central) and ``anchor`` ``start | middle | end`` at ``x``."""
        self.parts.append(
            f"<text {_attrs(dict(x=f'{x:g}', y=f'{y:g}', font_size=f'{size:g}', font_family=self.theme.font, font_weight=weight if weight != 'normal' else None, fill=fill or self.theme.text, text_anchor=anchor, dominant_baseline='central', **kw))}>"  # noqa: E501
            f"{escape(str(s))}</text>")

    def card(self, x: float, y: float, w: float, h: float, label: Any | None,
             color: str | None = None, sub: Any | None = None, highlight: bool = False,
             face_up: bool | None = None) -> None:
        """A card: face up with ``label`` large in ``color`` (and ``sub`` small below), or,
        when ``label is None`` (or ``face_up=False``), its back: nothing of its face shows."""
        t = self.theme
        up = label is not None if face_up is None else face_up
        edge = t.highlight if highlight else t.card_edge
        sw = 2.5 if highlight else 1.0
        r = min(w, h) * 0.12
        if not up:
            self.rect(x, y, w, h, fill=t.card_back, stroke=edge, rx=r, stroke_width=sw)
            self.rect(x + w * 0.18, y + h * 0.14, w * 0.64, h * 0.72, stroke=t.card_back_mark,
                      rx=r * 0.6, stroke_width=1.2)
            return
        self.rect(x, y, w, h, fill=t.card_face, stroke=edge, rx=r, stroke_width=sw)
        size = min(w * 0.55, h * 0.42)
        cy = y + h * (0.42 if sub is not None else 0.5)
        self.text(x + w / 2, cy, label, size=size, fill=color or t.text, weight="bold")
        if sub is not None:
            self.text(x + w / 2, y + h * 0.78, sub, size=size * 0.45, fill=color or t.muted)

    def path(self, d: str, fill: str | None = None, stroke: str | None = None,
             stroke_width: float = 1.0, **kw: Any) -> None:
        """An SVG path (``d`` in path syntax)."""
        self.parts.append(f"<path {_attrs(dict(d=d, fill=fill or 'none', stroke=stroke, stroke_width=stroke_width if stroke else None, **kw))}/>")  # noqa: E501

    def suit(self, cx: float, cy: float, size: float, suit: str, color: str | None = None
             ) -> None:
        """A suit symbol (``"S" "H" "D" "C"``) drawn as shapes (no font needed), ``size``
        high, centred on ``(cx, cy)``, in ``color`` (default :func:`suit_color`)."""
        if suit not in SUIT_SYMBOLS:
            raise ValueError(f"suit must be one of {SUITS}, got {suit!r}")
        c = color or suit_color(self.theme, suit)
        h = size / 2
        if suit == "D":
            self.polygon([(cx, cy - h), (cx + h * 0.72, cy), (cx, cy + h), (cx - h * 0.72, cy)],
                         fill=c)
            return
        if suit == "H":
            self.path(f"M{cx:g},{cy + h:g} C{cx - h * 0.2:g},{cy + h * 0.6:g} "
                      f"{cx - h:g},{cy + h * 0.1:g} {cx - h:g},{cy - h * 0.4:g} "
                      f"C{cx - h:g},{cy - h * 1.05:g} {cx - h * 0.15:g},{cy - h * 1.05:g} "
                      f"{cx:g},{cy - h * 0.45:g} "
                      f"C{cx + h * 0.15:g},{cy - h * 1.05:g} {cx + h:g},{cy - h * 1.05:g} "
                      f"{cx + h:g},{cy - h * 0.4:g} "
                      f"C{cx + h:g},{cy + h * 0.1:g} {cx + h * 0.2:g},{cy + h * 0.6:g} "
                      f"{cx:g},{cy + h:g} Z", fill=c)
            return
        # spade and club: a head above a stem
        stem = [(cx, cy + h * 0.05), (cx + h * 0.42, cy + h), (cx - h * 0.42, cy + h)]
        self.polygon(stem, fill=c)
        if suit == "C":
            r = h * 0.4
            self.circle(cx, cy - h * 0.52, r, fill=c)
            self.circle(cx - h * 0.45, cy + h * 0.1, r, fill=c)
            self.circle(cx + h * 0.45, cy + h * 0.1, r, fill=c)
            self.circle(cx, cy, r * 0.6, fill=c)
            return
        self.path(f"M{cx:g},{cy - h:g} C{cx + h * 0.2:g},{cy - h * 0.6:g} "
                  f"{cx + h:g},{cy - h * 0.2:g} {cx + h:g},{cy + h * 0.25:g} "
                  f"C{cx + h:g},{cy + h * 0.8:g} {cx + h * 0.15:g},{cy + h * 0.8:g} "
                  f"{cx:g},{cy + h * 0.35:g} "
                  f"C{cx - h * 0.15:g},{cy + h * 0.8:g} {cx - h:g},{cy + h * 0.8:g} "
                  f"{cx - h:g},{cy + h * 0.25:g} "
                  f"C{cx - h:g},{cy - h * 0.2:g} {cx - h * 0.2:g},{cy - h * 0.6:g} "
                  f"{cx:g},{cy - h:g} Z", fill=c)

    def star(self, cx: float, cy: float, r: float, fill: str) -> None:
        """A five-pointed star (outer radius ``r``)."""
        pts = []
        for i in range(10):
            rr = r if i % 2 == 0 else r * 0.45
            a = -math.pi / 2 + i * math.pi / 5
            pts.append((round(cx + rr * math.cos(a), 2), round(cy + rr * math.sin(a), 2)))
        self.polygon(pts, fill=fill)

    def playing_card(self, x: float, y: float, w: float, h: float, rank: str | None,
                     suit: str | None = None, highlight: bool = False) -> None:
        """A French-suited card: ``rank`` (``"A"``, ``"10"``, ``"K"``...) top left and a
        large suit symbol, in the suit's colour; ``rank=None``: its back."""
        if rank is None or suit is None:
            self.card(x, y, w, h, None, highlight=highlight)
            return
        t = self.theme
        c = suit_color(t, suit)
        self.rect(x, y, w, h, fill=t.card_face, stroke=t.highlight if highlight else t.card_edge,
                  rx=min(w, h) * 0.1, stroke_width=2.5 if highlight else 1.0)
        fs = min(w * 0.36, h * 0.3)
        self.text(x + w * 0.07, y + fs * 0.62 + h * 0.03, rank, size=fs, fill=c, anchor="start",
                  weight="bold")
        self.suit(x + w * 0.82, y + fs * 0.62 + h * 0.03, fs * 0.7, suit, c)
        self.suit(x + w * 0.5, y + h * 0.64, min(w, h) * 0.46, suit, c)

    def back_stack(self, x: float, y: float, w: float, h: float, count: int,
                   label: Any | None = None, depth: int = 3) -> None:
        """A face-down pile of ``count`` cards (up to ``depth`` backs drawn offset) with the
        count on top; an empty pile is a dashed outline."""
        if count <= 0:
            self.empty_slot(x, y, w, h)
        else:
            shown = min(depth, count)
            for i in range(shown - 1, -1, -1):
                self.card(x + i * 2.5, y - i * 2.5, w, h, None)
            self.badge(x + w / 2, y + h / 2, str(count), size=min(w, h) * 0.28)
        if label is not None:
            self.text(x + w / 2, y + h + 11, label, size=10, fill=self.theme.muted)

    def empty_slot(self, x: float, y: float, w: float, h: float) -> None:
        """An empty card place: a dashed outline."""
        self.rect(x, y, w, h, stroke=self.theme.muted, rx=min(w, h) * 0.12, stroke_width=1.0,
                  stroke_dasharray="4 3")

    def badge(self, x: float, y: float, s: Any, size: float = 11.0, fill: str | None = None,
              color: str | None = None, anchor: str = "middle") -> None:
        """A pill with text (``anchor`` places ``x`` at its start, middle or end)."""
        t = self.theme
        text = str(s)
        w = max(size * 1.6, size * 0.7 * len(text) + size)
        hgt = size * 1.6
        x0 = x - w / 2 if anchor == "middle" else (x - w if anchor == "end" else x)
        self.rect(x0, y - hgt / 2, w, hgt, fill=fill or t.panel, stroke=t.card_edge, rx=hgt / 2,
                  stroke_width=0.8)
        self.text(x0 + w / 2, y, text, size=size, fill=color or t.text, weight="bold")

    def title_bar(self, title: str, items: list[str] | tuple[str, ...] = (),
                  height: float = 36.0, right: str | None = None) -> float:
        """A band across the top: ``title`` in bold, then ``items`` separated by dots, and
        ``right`` aligned right (e.g. the observer); returns its height."""
        t = self.theme
        self.rect(0, 0, self.width, height, fill=t.panel)
        self.line(0, height, self.width, height, stroke=t.card_edge, stroke_width=0.8)
        self.text(12, height / 2, title, size=17, anchor="start", weight="bold")
        if items:
            self.text(12 + len(title) * 10.5 + 14, height / 2, "  \u00b7  ".join(items),
                      size=13, anchor="start", fill=t.text)
        if right:
            self.text(self.width - 12, height / 2, right, size=13, anchor="end", fill=t.muted)
        return height

    def panel(self, x: float, y: float, w: float, h: float, title: str,
              color: str | None = None, active: bool = False, note: str | None = None,
              mark: str | None = None) -> None:
        """A player's panel: a rounded box with a colour stripe and ``title``; ``active``
        outlines it in the highlight colour (the seat to act), ``mark`` is a badge after the
        title (e.g. "you"), ``note`` right-aligned in the header (e.g. points)."""
        t = self.theme
        self.rect(x, y, w, h, fill=t.panel, stroke=t.highlight if active else t.card_edge,
                  rx=8, stroke_width=3.0 if active else 0.8)
        if color:
            self.rect(x + 8, y + 8, 6, 16, fill=color, rx=2)
        self.text(x + (20 if color else 10), y + 16, title, size=13, anchor="start",
                  weight="bold")
        if mark:
            self.badge(x + (20 if color else 10) + len(title) * 8.2 + 8, y + 16, mark, size=9,
                       fill=t.highlight, color="#1d1d1f", anchor="start")
        if note:
            self.text(x + w - 10, y + 16, note, size=12, anchor="end")

    def to_string(self) -> str:
        w, h = f"{self.width:g}", f"{self.height:g}"
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
                f'viewBox="0 0 {w} {h}">' + "".join(self.parts) + "</svg>")


def _resvg() -> Any:
    try:
        import resvg_py
    except ImportError as e:  # pragma: no cover - a dependency of the package
        raise ImportError("rasterising needs resvg-py (a dependency of card-envs): "
                          "pip install resvg-py") from e
    return resvg_py


_FONT_DIRS = ("/usr/share/fonts", "/usr/local/share/fonts", "~/.local/share/fonts", "~/.fonts",
              "/Library/Fonts", "/System/Library/Fonts", "C:/Windows/Fonts")


@functools.lru_cache(maxsize=1)
def _fonts() -> dict[str, Any]:
    """resvg's font options: only the folder of DejaVu Sans (the themes' font) when it is
    found, so that a frame does not load every system font again; else the system fonts."""
    roots = [os.path.expanduser(d) for d in _FONT_DIRS]
    spec = importlib.util.find_spec("matplotlib")  # ships DejaVu; found, not imported
    if spec is not None and spec.submodule_search_locations:
        roots.append(os.path.join(spec.submodule_search_locations[0], "mpl-data", "fonts"))
    for root in roots:
        if not os.path.isdir(root):
            continue
        for folder, _, files in os.walk(root):
            if "DejaVuSans.ttf" in files and "DejaVuSans-Bold.ttf" in files:
                return {"skip_system_fonts": True, "font_dirs": [folder]}
    return {}


def to_png(svg: str, scale: float = 1.0) -> bytes:
    """PNG bytes of an SVG document (``scale``: pixels per user unit)."""
    return bytes(_resvg().svg_to_bytes(svg_string=svg, zoom=float(scale), **_fonts()))


def to_rgb_array(svg: str, scale: float = 1.0) -> np.ndarray:
    """An ``(H, W, 3)`` uint8 array of an SVG document (alpha composited on white)."""
    from PIL import Image

    img = Image.open(io.BytesIO(to_png(svg, scale)))
    img.load()
    if img.mode != "RGBA":
        img = img.convert("RGBA")
    base = Image.new("RGBA", img.size, (255, 255, 255, 255))
    return np.asarray(Image.alpha_composite(base, img).convert("RGB"), np.uint8).copy()


class Picture:
    """An SVG picture that shows inline in Jupyter (``_repr_svg_``), with its string
    (``svg``, ``str(picture)``), PNG (``png()``) and array (``rgb_array()``)."""

    def __init__(self, svg: str) -> None:
        self.svg = svg

    def _repr_svg_(self) -> str:
        return self.svg

    def __str__(self) -> str:
        return self.svg

    def png(self, scale: float = 1.0) -> bytes:
        return to_png(self.svg, scale)

    def rgb_array(self, scale: float = 1.0) -> np.ndarray:
        return to_rgb_array(self.svg, scale)

    def save(self, path: str, scale: float = 1.0) -> None:
        """Write ``.svg`` (the string) or ``.png`` (rasterised), by the suffix."""
        if str(path).endswith(".png"):
            with open(path, "wb") as f:
                f.write(self.png(scale))
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(self.svg)
