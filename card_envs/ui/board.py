"""Playing on the picture: where each legal move is clicked, where another seat's last move
was played, and the sentence that says how the game is won.

A game's view module (``card_envs/<game>/view.py``, reached as ``type(env.game).view``) has
``clicks(view, actions)``, the boxes ``[x, y, w, h]`` (in the SVG's user units) a person
clicks in order to play each action on ``draw(view, theme)``'s picture, and
``result_text(view)``. Both read one seat's view only, so what they give the browser is no
more than that seat knows. A game whose view module lacks them is still playable from the
move list (no paths, no sentence).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

__all__ = ["Box", "last_moves", "move_paths", "result_sentence"]

Box = list[float]  # [x, y, width, height] in the picture's user units


def _box(box: Sequence[Any]) -> Box:
    """A box as four rounded floats (``ValueError`` for anything else: a view bug)."""
    out = [round(float(v), 2) for v in box]
    if len(out) != 4 or not all(math.isfinite(v) for v in out):
        raise ValueError(f"a click box is four finite numbers, got {box!r}")
    return out


def move_paths(env: Any, view: dict[str, Any], actions: Sequence[int]) -> dict[int, list[Box]]:
    """``{action: [box, ...]}``: the click path of each of ``actions`` on the picture of
    ``view`` (a seat's state dict of ``env``'s position); ``{}`` when the game's view module
    has no ``clicks``."""
    clicks = getattr(type(env.game).view, "clicks", None)
    if clicks is None or not actions:
        return {}
    paths = clicks(view, [int(a) for a in actions])
    return {int(a): [_box(b) for b in path] for a, path in paths.items()}


def result_sentence(env: Any, view: dict[str, Any]) -> str:
    """How the game is won, as the game's ``result_text`` says it for ``view`` ("" when the
    view module has none)."""
    text = getattr(type(env.game).view, "result_text", None)
    return "" if text is None else str(text(view))


def last_moves(log: Sequence[dict[str, Any]], marks: Sequence[list[Box] | None],
               human: int) -> list[dict[str, Any]]:
    """The moves of the other seats since ``human`` last moved, the latest of each seat, in
    the order they were played: ``{n, seat, label, boxes}`` (``label`` and ``boxes`` None for a
    hidden choice; ``boxes`` ``[]`` when the game gives no places). ``marks[k]`` is the boxes
    of ``log[k]``."""
    start = max((k + 1 for k, e in enumerate(log) if e["seat"] == human), default=0)
    latest: dict[int, int] = {}
    for k in range(start, len(log)):
        latest[log[k]["seat"]] = k
    return [{**log[k], "boxes": marks[k]} for k in sorted(latest.values())]
