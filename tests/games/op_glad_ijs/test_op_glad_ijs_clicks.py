"""Op Glad IJs on the board (``view.clicks``, ``view.result_text``): a slap is clicked on the
cards ``draw`` puts in the middle (one hand: the card twice; two hands: the animal card, then
the card with its habitat), "pass" on the pass control drawn while seats choose, and the
result names the winners with their won cards."""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET

import card_envs
from card_envs.core import kernels as K
from card_envs.op_glad_ijs.view import clicks, draw, result_text

SVG_NS = "{http://www.w3.org/2000/svg}"


def placed_texts(svg: str) -> list[tuple[float, float, str]]:
    """Every ``<text>`` of an SVG: its anchor point and its text."""
    return [(float(e.get("x")), float(e.get("y")), e.text or "")
            for e in ET.fromstring(svg).iter(f"{SVG_NS}text")]


def inside(x: float, y: float, box) -> bool:
    bx, by, bw, bh = box
    return bx <= x <= bx + bw and by <= y <= by + bh


def with_middle(codes: list[str]):
    """A 2-player env whose middle holds ``codes`` (taken from the draw piles, the card that
    was turned put back under player_0's pile), turned in that order."""
    env = card_envs.make_raw("op_glad_ijs_v0")
    env.reset(seed=1)
    d = env.state_dict()
    piles = d["draw_piles"]
    for code in codes:
        next(p for p in piles if code in p).remove(code)
    piles[0].extend(d["middle"])
    d["middle"], d["last_turned"] = list(codes), codes[-1]
    env.load_state_dict(d)
    return env


def action(env, name: str) -> int:
    return next(a for a in range(env.game.num_actions) if env.action_to_str(a) == name)


def names_in(svg: str, box) -> set[str]:
    return {s for x, y, s in placed_texts(svg) if inside(x, y, box)}


def test_two_hands_click_the_animal_card_then_its_habitat() -> None:
    """Camel in the rainforest turned first, gorilla on the ice floe second: the gorilla
    belongs in the rainforest, so the gorilla card is clicked first, then the camel card."""
    env = with_middle(["camel/rainforest", "gorilla/ice_floe"])
    view = env.state_dict(observer=0)
    svg = draw(view, "light")
    a = action(env, "slap camel/rainforest + gorilla/ice_floe")
    first, second = clicks(view, [a])[a]
    assert "gorilla" in names_in(svg, first) and "camel" not in names_in(svg, first)
    assert "camel" in names_in(svg, second) and "gorilla" not in names_in(svg, second)


def test_one_hand_clicks_the_latest_card_of_its_type_twice() -> None:
    env = with_middle(["gorilla/ice_floe", "camel/rainforest", "gorilla/ice_floe"])
    view = env.state_dict(observer=1)
    one = action(env, "slap gorilla/ice_floe")
    two = action(env, "slap gorilla/ice_floe + gorilla/ice_floe")
    paths = clicks(view, env.legal_actions())
    assert paths[one][0] == paths[one][1]
    assert paths[two][1] == paths[one][0]  # the latest gorilla, after the earlier one
    assert paths[two][0][0] < paths[two][1][0]
    svg = draw(view, "dark")
    assert "gorilla" in names_in(svg, paths[two][0]) and "gorilla" in names_in(svg, paths[one][0])


def test_pass_is_the_control_drawn_while_seats_choose() -> None:
    env = card_envs.make_raw("op_glad_ijs_v0", num_players=3)
    env.reset(seed=4)
    view = env.state_dict(observer=2)
    (box,) = clicks(view, [action(env, "pass")])[0]
    assert "pass" in names_in(draw(view, "light"), box)
    rnd = random.Random(4)
    while not env.state_array[K.DONE]:
        env.step(rnd.choice(env.legal_actions()))
    assert "pass" not in {s for _, _, s in placed_texts(draw(env.state_dict(), "light"))}


def test_result_text_gives_the_rule_then_the_won_cards() -> None:
    env = card_envs.make_raw("op_glad_ijs_v0", num_players=3, max_turned=60)
    env.reset(seed=2)
    rule = result_text(env.state_dict(observer=0))
    assert "most cards" in rule.lower() and "player_" not in rule
    rnd = random.Random(2)
    while not env.state_array[K.DONE]:
        env.step(rnd.choice(env.legal_actions()))
    points, winners = env.game.outcome(env.state_array)
    text = result_text(env.state_dict(observer=1))
    assert text.startswith(rule)
    for q in range(3):
        assert f"player_{q} {int(points[q])}" in text
    best = [f"player_{q}" for q in range(3) if winners[q]]
    assert (f"{best[0]} wins" if len(best) == 1 else ", ".join(best)) in text
    assert "cut off after 60 turned cards" in text
