"""Checks of a game's pictures as a person plays them: every legal move has a place on the
board (``view.clicks``) and the result says how the game was won (``view.result_text``).

The boxes ``clicks`` returns must lie inside the picture ``draw`` makes of the same view, and
the click paths must name exactly one action each (distinct, none a prefix of another), so a
page can turn clicks on the board into a move.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence

import numpy as np

from card_envs.core import kernels as K
from card_envs.testing.kit import Case, random_action

__all__ = ["check_clicks", "check_result_text", "clicks_problems", "svg_size"]

_SIZE = re.compile(r'<svg[^>]*?\bviewBox="([-\d.eE+]+)[ ,]+([-\d.eE+]+)[ ,]+([-\d.eE+]+)[ ,]+'
                   r'([-\d.eE+]+)"')
_WH = re.compile(r'<svg[^>]*?\bwidth="([\d.]+)[^"]*"[^>]*?\bheight="([\d.]+)')


def svg_size(svg: str) -> tuple[float, float]:
    """The width and height of an SVG document in user units (its viewBox, else its size)."""
    m = _SIZE.search(svg)
    if m:
        return float(m.group(3)), float(m.group(4))
    m = _WH.search(svg)
    if not m:
        raise AssertionError("the picture's <svg> has neither a viewBox nor a width/height")
    return float(m.group(1)), float(m.group(2))


def clicks_problems(paths: Mapping[int, Sequence[Sequence[float]]], actions: Sequence[int],
                    size: tuple[float, float]) -> list[str]:
    """What is wrong with ``paths`` (``view.clicks``'s answer) for ``actions`` on a picture of
    ``size``: a missing action, a path of no or more than two boxes, a box outside the picture
    or of no area, two actions with one path, a path that is the prefix of another."""
    out: list[str] = []
    width, height = size
    if sorted(int(a) for a in paths) != sorted(int(a) for a in actions):
        out.append(f"clicks answered for {sorted(paths)}, asked for {sorted(actions)}")
    seen: dict[tuple, int] = {}
    for a, path in paths.items():
        if not 1 <= len(path) <= 2:
            out.append(f"action {a}: {len(path)} boxes (1 or 2 expected)")
            continue
        key = []
        for box in path:
            if len(box) != 4 or not all(np.isfinite(v) for v in box):
                out.append(f"action {a}: box {box!r} is not four finite numbers")
                continue
            x, y, w, h = (float(v) for v in box)
            if w <= 0 or h <= 0:
                out.append(f"action {a}: box {box!r} has no area")
            if x < -1e-6 or y < -1e-6 or x + w > width + 1e-6 or y + h > height + 1e-6:
                out.append(f"action {a}: box {box!r} leaves the {width:g}x{height:g} picture")
            key.append((round(x, 3), round(y, 3), round(w, 3), round(h, 3)))
        seen_key = tuple(key)
        if seen_key in seen:
            out.append(f"actions {seen[seen_key]} and {a} have the same click path")
        seen[seen_key] = a
    for p, a in seen.items():
        for q, b in seen.items():
            if a != b and len(p) < len(q) and q[:len(p)] == p:
                out.append(f"action {a}'s click path is the start of action {b}'s")
    return out


def _floats(path: Sequence[Sequence[float]]) -> list[list[float]]:
    return [[float(v) for v in box] for box in path]


def check_clicks(case: Case, seed: int, k: int = 400) -> None:
    """Over one random game (up to ``k`` moves): in every position, from the view of the seat
    to act and of another seat, every legal move has a valid click path on the picture, and
    each move's path can be asked for alone with the view from before it."""
    env = case.raw()
    env.reset(seed=seed)
    view_mod = type(env.game).view
    rnd = random.Random(seed)
    steps = 0
    while steps < k and not env.state_array[K.DONE]:
        seat = int(env.state_array[K.CUR])
        legal = [int(a) for a in env.legal_actions()]
        own: Mapping[int, Sequence[Sequence[float]]] = {}
        for observer in sorted({seat, (seat + 1) % env.game.num_players}):
            view = env.state_dict(observer=observer)
            size = svg_size(view_mod.draw(view, "light"))
            paths = view_mod.clicks(view, legal)
            problems = clicks_problems(paths, legal, size)
            assert not problems, (f"{case.id} seed {seed} move {steps}, observer {observer}: "
                                  + "; ".join(problems[:5]))
            if observer == seat:
                own = paths
        action = random_action(env, rnd)
        alone = view_mod.clicks(env.state_dict(observer=seat), [action])
        assert _floats(alone[action]) == _floats(own[action]), (
            f"{case.id}: clicks for action {action} alone differ from those among all moves")
        env.step(action)
        steps += 1


def check_result_text(case: Case, seed: int) -> None:
    """``view.result_text`` is a sentence at the start and, after a whole random game, names
    every winner (``player_<seat>``) for every observer."""
    env = case.raw()
    env.reset(seed=seed)
    view_mod = type(env.game).view
    first = view_mod.result_text(env.state_dict(observer=0))
    assert isinstance(first, str) and first.strip(), "result_text must say how the game is won"
    rnd = random.Random(seed)
    while not env.state_array[K.DONE]:
        env.step(random_action(env, rnd))
    _, winners = env.game.outcome(env.state_array)
    for observer in [None, *range(env.game.num_players)]:
        text = view_mod.result_text(env.state_dict(observer=observer))
        assert isinstance(text, str) and text.strip()
        for s in np.flatnonzero(np.asarray(winners)):
            assert f"player_{int(s)}" in text, f"{case.id}: {text!r} does not name player_{s}"
