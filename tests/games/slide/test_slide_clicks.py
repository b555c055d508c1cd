"""Slide's board clicks (``view.clicks``) land on what the picture draws: a reveal on the
seat to act's card at the row and column of its name (the row and column numbers drawn
beside it), a pick on the middle's cards of its value and then on the push-in arrow of its
side, drawn only for the sides the rules allow; ``view.result_text`` gives the rule and the
final figures."""

from __future__ import annotations

import random
import re
import xml.etree.ElementTree as ET

import card_envs
from card_envs.core import kernels as K
from card_envs.slide import view as V
from card_envs.slide.layout import PICK0
from svg_views import SVG_NS, walk

OPTS = ({"num_players": 2}, {"num_players": 3}, {"num_players": 6})


def _rects(svg: str) -> set[tuple[float, float, float, float]]:
    return {tuple(round(float(e.get(k)), 2) for k in ("x", "y", "width", "height"))
            for e in ET.fromstring(svg).iter(f"{SVG_NS}rect")}


def _texts(svg: str) -> list[tuple[float, float, str]]:
    return [(float(e.get("x")), float(e.get("y")), e.text or "")
            for e in ET.fromstring(svg).iter(f"{SVG_NS}text")]


def _inside(box: tuple, x: float, y: float) -> bool:
    bx, by, bw, bh = box
    return bx <= x <= bx + bw and by <= y <= by + bh


def _polygons_in(svg: str, box: tuple) -> int:
    out = 0
    for e in ET.fromstring(svg).iter(f"{SVG_NS}polygon"):
        pts = [tuple(map(float, p.split(","))) for p in e.get("points").split()]
        out += all(_inside(box, x, y) for x, y in pts)
    return out


def test_a_reveal_is_the_card_at_its_row_and_column() -> None:
    for opts in OPTS:
        for env in walk("slide_v0", opts, seed=5, max_steps=40):
            view = env.state_dict(observer=env.state_dict()["current_player"])
            if view["phase"] != "reveal":
                continue
            cur = view["current_player"]
            svg = V.draw(view, "light")
            rects, texts = _rects(svg), _texts(svg)
            for a, (box,) in V.clicks(view, env.legal_actions()).items():
                r, c = map(int, re.fullmatch(r"reveal r(\d)c(\d)", env.action_to_str(a)).groups())
                assert tuple(round(v, 2) for v in box) == V.cell_box(cur, r, c, len(view["grids"]))
                assert tuple(round(v, 2) for v in box) in rects  # a card is drawn there
                assert view["grids"][cur][r][c] is None  # face down: unknown to everyone
                x, y, w, h = box
                gx, gy = V.grid_xy(cur, len(view["grids"]))
                assert any(t == f"r{r}" and abs(ty - (y + h / 2)) < 1 and tx < gx
                           for tx, ty, t in texts)
                assert any(t == f"c{c}" and abs(tx - (x + w / 2)) < 1 and ty < gy
                           for tx, ty, t in texts)


def test_a_pick_is_a_middle_card_then_the_arrow_of_its_side() -> None:
    seen_sides = set()
    for opts in OPTS:
        for env in walk("slide_v0", opts, seed=11, max_steps=120):
            d = env.state_dict()
            if d["phase"] != "pick":
                continue
            view = env.state_dict(observer=d["current_player"])
            svg = V.draw(view, "light")
            texts = _texts(svg)
            legal = env.legal_actions()
            paths = V.clicks(view, legal)
            sides = {box for a in legal for box in paths[a][1:]}
            for a in legal:
                first, second = paths[a]
                value, side = divmod(a - PICK0, 4)
                assert env.action_to_str(a).startswith(f"pick {value + 1} from ")
                labels = [t for tx, ty, t in texts if _inside(first, tx, ty)]
                assert labels and set(labels) == {str(value + 1)}  # only cards of that value
                assert labels.count(str(value + 1)) == view["middle"].count(value + 1)
                assert _polygons_in(svg, second) == 1  # its arrow
                seen_sides.add(side)
            # an arrow for each side the rules allow, and no other
            assert len(list(ET.fromstring(svg).iter(f"{SVG_NS}polygon"))) == len(sides)
            assert len(sides) == len({a % 4 for a in legal})
    assert seen_sides == {0, 1, 2, 3}


def test_the_pushed_card_lands_where_its_arrow_points() -> None:
    env = card_envs.make_raw("slide_v0", num_players=3)
    env.reset(seed=2)
    rnd = random.Random(2)
    checked = 0
    while not env.state_array[K.DONE]:
        d = env.state_dict()
        if d["phase"] == "pick":
            a = rnd.choice(env.legal_actions())
            cur = d["current_player"]
            _, (x, y, w, h) = V.clicks(d, [a])[a]
            side = (a - PICK0) % 4
            env.step(a)
            grid = env.state_dict()["grids"][cur]
            # the arrow sits beside the cell the new card takes, outside the grid
            gx, gy = V.grid_xy(cur, 3)
            if side < 2:  # left, right: the end of the arrow's row
                row, col = int((y + h / 2 - gy) // (V.CH + V.GAP)), 0 if side == 0 else 3
            else:  # top, bottom: the end of the arrow's column
                row, col = 0 if side == 2 else 3, int((x + w / 2 - gx) // (V.CW + V.GAP))
            assert grid[row][col] == (a - PICK0) // 4 + 1
            checked += 1
        else:
            env.step(rnd.choice(env.legal_actions()))
    assert checked == 16 * 3


def test_result_text_states_the_rule_then_the_figures() -> None:
    env = card_envs.make_raw("slide_v0", num_players=4)
    env.reset(seed=3)
    assert V.result_text(env.state_dict()).startswith("Lowest points win")
    rnd = random.Random(3)
    while not env.state_array[K.DONE]:
        env.step(rnd.choice(env.legal_actions()))
    points, winners = env.game.outcome(env.state_array)
    text = V.result_text(env.state_dict(observer=1))
    for q in range(4):
        assert f"player_{q} {int(points[q])} (" in text
    best = [q for q in range(4) if winners[q]]
    assert f"player_{best[0]}" in text.split("Points:")[0]
    assert f"with {int(points[best[0]])} points" in text
