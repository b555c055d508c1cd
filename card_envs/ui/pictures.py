"""The picture of one seat's view as an SVG string, for the replay page and the play server.

:func:`picture_svg` is the one place the ui layer asks for a picture. It uses, in order: the
env's own ``picture(observer, theme)`` (the core's render API), else the game's picture
(``draw(view, theme) -> str`` in ``card_envs/<game>/view.py``), else :func:`text_svg`, a plain
SVG of the state dict's lines. All three draw only from ``env.state_dict(observer)``, so a
seat's picture shows nothing that seat cannot know.
"""

from __future__ import annotations

import json
from typing import Any
from xml.sax.saxutils import escape

from card_envs.core.errors import NoViewerError
from card_envs.core.pictures import theme, viewer
from card_envs.draw import Svg, Theme

__all__ = ["picture_svg", "text_svg"]

_LINE = 15.0  # text line height of the fallback picture (px)
_WRAP = 96  # characters per line of the fallback picture


def _wrap(key: str, value: Any) -> list[str]:
    text = f"{key}: {json.dumps(value, separators=(',', ':'))}"
    lines = [text[i:i + _WRAP] for i in range(0, len(text), _WRAP)] or [""]
    return [lines[0], *("    " + s for s in lines[1:])]


def text_svg(view: dict[str, Any], t: Theme | str = "light", title: str | None = None) -> str:
    """A plain SVG of a state dict, one ``key: value`` per line (long values wrapped); the
    fallback picture of a game without a viewer. Hidden cards are ``null`` as in the dict."""
    th = theme(t)
    lines: list[str] = []
    for k, v in view.items():
        if k in ("options", "rng"):
            continue
        lines.extend(_wrap(k, v))
    width = 8.0 * _WRAP + 40
    height = _LINE * (len(lines) + 2) + 20
    svg = Svg(width, height, th, title=title)
    head = f"{view.get('game', '?')} - " + (
        "all cards" if view.get("observer") is None else f"seat {view['observer']}'s view")
    svg.text(20, 20, head, size=14, anchor="start", weight="bold")
    for i, line in enumerate(lines):
        svg.add(f'<text x="20" y="{44 + i * _LINE:g}" font-size="12" '
                f'font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" '
                f'fill="{th.text}" xml:space="preserve">{escape(line)}</text>')
    return svg.to_string()


def picture_svg(env: Any, observer: int | None, t: Theme | str = "light") -> str:
    """The SVG of ``observer``'s view of ``env`` (a seat, or None for every card)."""
    th = theme(t)
    picture = getattr(env, "picture", None)
    if callable(picture):
        try:
            return str(picture(observer, th).svg)
        except NoViewerError:  # a game without a picture: the fallbacks below
            pass
    view = env.state_dict(observer=observer)
    try:
        return str(viewer(type(env.game))(view, th))
    except NoViewerError:
        return text_svg(view, th)
