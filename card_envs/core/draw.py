"""Drawing toolkit of the games' viewers (``card_envs/<game>/viewer.py``): themes, a small SVG
builder, and rasterisation to PNG / RGB arrays (``resvg``, a Rust renderer shipped as a wheel:
no system libraries).

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

import io
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import escape, quoteattr

import numpy as np

from card_envs.core.errors import OptionError

__all__ = ["THEMES", "Picture", "Svg", "Theme", "theme", "to_png", "to_rgb_array"]


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


def theme(t: str | Theme = "light") -> Theme:
    """The theme named ``t`` (``"light"``, ``"dark"``) or ``t`` itself; ``OptionError`` for an
    unknown name."""
    if isinstance(t, Theme):
        return t
    if t not in THEMES:
        raise OptionError(f"theme must be one of {sorted(THEMES)}, got {t!r}")
    return THEMES[t]


def _attrs(kw: dict[str, Any]) -> str:
    out = []
    for k, v in kw.items():
        if v is None:
            continue
        out.append(f"{k.rstrip('_').replace('_', '-')}={quoteattr(str(v))}")
    return " ".join(out)


class Svg:
    """An SVG document under construction: ``width x height`` user units (= pixels at scale
    1), the theme's background painted first. Methods append elements; :meth:`to_string`
    closes the document."""

    def __init__(self, width: float, height: float, theme: Theme, title: str | None = None
                 ) -> None:
        self.width, self.height, self.theme = float(width), float(height), theme
        self.parts: list[str] = []
        if title:
            self.parts.append(f"<title>{escape(title)}</title>")
        self.rect(0, 0, width, height, fill=theme.background)

    def add(self, element: str) -> None:
        """Append raw SVG markup."""
        self.parts.append(element)

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


def to_png(svg: str, scale: float = 1.0) -> bytes:
    """PNG bytes of an SVG document (``scale``: pixels per user unit)."""
    return bytes(_resvg().svg_to_bytes(svg_string=svg, zoom=float(scale)))


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
