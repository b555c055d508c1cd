"""Isflak's board clicks (``view.clicks``) land on what the picture draws: a placement on the
card at the row and column of its name (the numbers drawn along the grid's edges), a move on
the card of the moving penguin (its number on its belly, in its player's colour) and then on
the card the engine slides it to; ``view.result_text`` gives the rule and the final figures."""

from __future__ import annotations

import random
import re
import xml.etree.ElementTree as ET

import card_envs
from card_envs.core import kernels as K
from card_envs.draw import THEMES, mix, player_color
from card_envs.isflak import view as V
from svg_views import SVG_NS

OPTS = ({}, {"num_players": 4, "penguins_per_player": 3},
        {"num_players": 3, "penguins_per_player": 1, "card_points": [5, 0, 2]})


def _texts(svg: str) -> list[tuple[float, float, str, str]]:
    return [(float(e.get("x")), float(e.get("y")), e.text or "", e.get("fill", ""))
            for e in ET.fromstring(svg).iter(f"{SVG_NS}text")]


def _inside(box: tuple, x: float, y: float) -> bool:
    bx, by, bw, bh = box
    return bx <= x <= bx + bw and by <= y <= by + bh


def _play(opts: dict, seed: int):
    env = card_envs.make_raw("isflak_v0", **opts)
    env.reset(seed=seed)
    rnd = random.Random(seed)
    while not env.state_array[K.DONE]:
        yield env, rnd.choice(env.legal_actions())


def test_a_placement_is_the_card_at_its_row_and_column() -> None:
    for opts in OPTS:
        for env, action in _play(opts, seed=4):
            view = env.state_dict(observer=0)
            if view["phase"] != "placement":
                break
            texts = _texts(V.draw(view, "light"))
            paths = V.clicks(view, env.legal_actions())
            for a, (box,) in paths.items():
                r, c = map(int, re.fullmatch(r"place r(\d)c(\d)", env.action_to_str(a)).groups())
                x, y, w, h = box
                code = view["grid"][r][c]  # the card's rank is drawn inside the box
                assert any(t == code[:-1] and _inside(box, tx, ty) for tx, ty, t, _ in texts)
                assert any(t == f"r{r}" and abs(ty - (y + h / 2)) < 1 and tx < x
                           for tx, ty, t, _ in texts)
                assert any(t == f"c{c}" and abs(tx - (x + w / 2)) < 1 and ty < y
                           for tx, ty, t, _ in texts)
            env.step(action)
            cur = view["current_player"]
            placed = [p for p in env.state_dict()["penguins"][cur] if p is not None]
            assert V.cell_box(*placed[-1]) == paths[action][0]  # the penguin just placed


def test_a_move_is_the_penguin_then_the_card_it_slides_to() -> None:
    light = THEMES["light"]
    moves = 0
    for opts in OPTS:
        for env, action in _play(opts, seed=9):
            view = env.state_dict(observer=1)
            if view["phase"] != "movement":
                env.step(action)
                continue
            cur = view["current_player"]
            texts = _texts(V.draw(view, "light"))
            paths = V.clicks(view, env.legal_actions())
            firsts = {p[0] for p in paths.values()}
            assert len(firsts) <= len(view["penguins"][cur])  # one first box per penguin
            for a, (penguin, target) in paths.items():
                k = int(re.fullmatch(r"move penguin (\d) \w+ \d", env.action_to_str(a))[1])
                belly = mix(player_color(light, cur), "#000000", 0.25)
                assert any(t == str(k) and fill == belly and _inside(penguin, tx, ty)
                           for tx, ty, t, fill in texts)
                r = round((target[1] - V.GRID_Y) / (V.CH + V.GAP))
                c = round((target[0] - V.GRID_X) / (V.CW + V.GAP))
                assert V.cell_box(r, c) == target and view["grid"][r][c] is not None
                assert [r, c] not in [p for row in view["penguins"] for p in row]
            before = env.state_dict()["penguins"][cur]
            env.step(action)
            k = int(env.action_to_str(action).split()[2])
            after = env.state_dict()["penguins"][cur][k]
            if after is not None:  # (the mover may go out at once and leave the board)
                assert paths[action] == [V.cell_box(*before[k]), V.cell_box(*after)]
                moves += 1
    assert moves > 50


def test_result_text_states_the_rule_then_the_figures() -> None:
    opts = {"num_players": 3, "card_points": [5, 0, 2]}
    env = card_envs.make_raw("isflak_v0", **opts)
    env.reset(seed=1)
    rule = V.result_text(env.state_dict())
    assert rule.startswith("Most points win") and "ace 5, face card 0, number card 2" in rule
    rnd = random.Random(1)
    while not env.state_array[K.DONE]:
        env.step(rnd.choice(env.legal_actions()))
    points, winners = env.game.outcome(env.state_array)
    piles = env.state_dict()["piles"]
    text = V.result_text(env.state_dict(observer=2))
    for q in range(3):
        assert f"player_{q} {int(points[q])} ({len(piles[q])} cards)" in text
    best = [q for q in range(3) if winners[q]]
    assert f"with {int(points[best[0]])} points" in text
    assert all(f"player_{q}" in text.split("Points:")[0] for q in best)
