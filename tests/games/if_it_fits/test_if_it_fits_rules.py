"""If It Fits rules (docs/rules/if_it_fits.md): the spec's examples and the rule tests, on
positions built with tests/games/if_it_fits/if_it_fits_ref.py and cross-checked against its
independent box model."""

from __future__ import annotations

from typing import Any

import pytest

from card_envs import StateDictError
from card_envs.core import kernels as K
from card_envs.if_it_fits.layout import (
    A_DIR,
    A_DRAW,
    A_HAND,
    A_PASS,
    A_ROT,
    A_SKIP,
    A_SLEEP,
)
from card_envs.if_it_fits.queries import slot_ok
from if_it_fits_ref import (
    DECK,
    Model,
    engine_boxes,
    fresh,
    make,
    position,
    same_boxes,
    to_turn,
)


# --- spec examples ------------------------------------------------------------------------
def test_example_two_stacked_cards_form_one_box_with_a_slot() -> None:
    env = fresh()
    position(env, {(4, 5): ("I1-1", 0), (5, 5): ("I1-2", 0)})
    bx = engine_boxes(env)
    assert [b["cells"] for b in bx] == [[(4, 5), (5, 5)]]
    same_boxes(env)
    assert slot_ok(env.state_array, env.game.cfg, 4 * 11 + 5)
    # a wall on either side: two boxes, no slot
    for upper, lower in ((("U2-1", 0), ("I1-2", 0)), (("I1-1", 0), ("U1-1", 1))):
        position(env, {(4, 5): upper, (5, 5): lower})
        assert len(engine_boxes(env)) == 2
        assert not any(slot_ok(env.state_array, env.game.cfg, s) for s in range(env.game.S))
        same_boxes(env)


def test_example_x_card_with_four_walls_is_closed_and_doubles() -> None:
    env = fresh()
    position(env, {(5, 5): ("X-1", 0), (4, 5): ("U1-1", 0), (6, 5): ("U1-2", 1),
                   (5, 6): ("U2-1", 0), (5, 4): ("U2-2", 1)})
    b = next(b for b in engine_boxes(env) if b["cells"] == [(5, 5)])
    assert b["closed"] and b["value"] == 2  # one ball, doubled
    same_boxes(env)
    position(env, {(5, 5): ("X-1", 0), (4, 5): ("U1-1", 0), (6, 5): ("U1-2", 1),
                   (5, 6): ("U2-1", 0)})
    b = next(b for b in engine_boxes(env) if (5, 5) in b["cells"])
    assert not b["closed"] and b["value"] == 1


TEST_DECK = {
    "box_cards": [{"name": "top", "open": "S", "toys": {"ball": 2, "mouse": 1}, "sprayer": 0},
                  {"name": "bot", "open": "N", "toys": {"mouse": 2, "yarn": 1}, "sprayer": 1},
                  {"name": "mid", "open": "NS", "toys": {"ball": 1, "mouse": 1}},
                  {"name": "col", "open": "NS", "toys": {"ball": 1}},
                  *({"name": f"f{k}", "open": "", "toys": {}} for k in range(10))],
    "start_cards": DECK["start_cards"], "special_toy_cards": DECK["special_toy_cards"],
}


def test_example_box_value_two_balls_three_mice_one_yarn_one_sprayer() -> None:
    env = make(deck=TEST_DECK)
    to_turn(env)
    position(env, {(4, 5): ("top", 0), (5, 5): ("bot", 0)}, slots={(4, 5): 0})
    [b] = [b for b in engine_boxes(env) if (4, 5) in b["cells"]]
    assert b["toys"] == [2, 3, 1] and b["sprayers"] == 1 and b["closed"] and b["value"] == 4
    points, winners = env.game.outcome(env.state_array)
    assert points.tolist() == [4.0, 0.0]
    same_boxes(env)
    position(env, {(4, 5): ("col", 0), (5, 5): ("bot", 0), (3, 5): ("top", 0)},
             slots={(4, 5): 1})
    [b] = [b for b in engine_boxes(env) if (4, 5) in b["cells"]]
    assert b["toys"] == [3, 3, 1] and b["closed"] and b["value"] == 4
    position(env, {(4, 5): ("mid", 0), (5, 5): ("bot", 0)}, slots={(4, 5): 1})
    [b] = [b for b in engine_boxes(env) if (4, 5) in b["cells"]]
    assert b["toys"] == [1, 3, 1] and not b["closed"] and b["value"] == 2


def column(extra_cells: dict, slots: dict, adv: bool = False) -> Any:
    """A column of four N-S cards at (3..6, 5) (one box, slots (3,5), (4,5), (5,5)); toys:
    one ball, one mouse, one yarn, nothing -> value 1, open at the bottom."""
    env = fresh(advanced=adv)
    cells = {(3, 5): ("I1-1", 0), (4, 5): ("I1-2", 0), (5, 5): ("I1-3", 0),
             (6, 5): ("I1-7", 0), **extra_cells}
    position(env, cells, slots=slots)
    same_boxes(env)
    return env


def test_example_two_awake_vs_awake_plus_sleeping() -> None:
    red, blue = 0, 1
    cat = {(2, 5): ("cat", blue, (3, 5))}
    slots = {(3, 5): red, (4, 5): red, (5, 5): blue}
    env = column(cat, slots)
    [b] = [b for b in engine_boxes(env) if (3, 5) in b["cells"]]
    assert b["value"] == 1 and b["cats"] == {0: [2, 0], 1: [1, 1]}
    assert env.game.outcome(env.state_array)[0].tolist() == [1 + 1, 1 + 1]
    env = column(cat, slots, adv=True)  # advanced: 2 vs 1.5, no extra cats
    assert env.game.outcome(env.state_array)[0].tolist() == [1, 0]


def test_example_only_sleeping_cats_score_nothing() -> None:
    red, blue = 0, 1
    env = column({(2, 5): ("cat", blue, (3, 5))}, {})
    assert env.game.outcome(env.state_array)[0].tolist() == [0, 0]
    two = {(2, 5): ("cat", blue, (3, 5)), (7, 5): ("cat", blue, (6, 5))}
    env = column(two, {(4, 5): red})
    [b] = [b for b in engine_boxes(env) if (3, 5) in b["cells"]]
    assert b["closed"]  # both open ends are shut by the sleeping cats
    assert env.game.outcome(env.state_array)[0].tolist() == [0, 0]  # Blue alone on top
    env = column(two, {(4, 5): red}, adv=True)  # 1 vs 1: Red scores (value 1, doubled)
    assert env.game.outcome(env.state_array)[0].tolist() == [2, 0]


def joining_position(red_cat: dict) -> Any:
    env = fresh()
    cells = {(3, 5): ("I1-1", 0), (4, 5): ("I1-2", 0), (6, 5): ("I1-3", 0),
             (7, 5): ("I1-4", 0)}
    position(env, cells, slots={(6, 5): 1, **red_cat}, hands=[["I1-5", "X-1"], ["X-2"]],
             phase="rotation", cur=0, selected_hand=0, selected_cell=[5, 5])
    return env


def test_example_cat_rule_on_a_joining_card() -> None:
    env = joining_position({})
    assert len(engine_boxes(env)) == 2
    env.step(env.game.B + A_ROT)  # the card joins box A (no cats) and box B (Blue's cat)
    assert env.game.phase_name(env.state_array) == "turn"  # no cat possible: turn over
    assert env.agent_selection == "player_1"
    assert len(engine_boxes(env)) == 1
    env = joining_position({(3, 5): 0})  # Red already has a cat in box A
    env.step(env.game.B + A_ROT)
    T = env.game.T
    assert set(env.legal_actions()) == {T + 4 * 11 + 5, T + 5 * 11 + 5, env.game.B + A_SKIP}
    env.step(T + 4 * 11 + 5)
    [b] = [b for b in engine_boxes(env) if (4, 5) in b["cells"]]
    assert b["cats"][0] == [2, 0] and b["cats"][1] == [1, 0]


# --- more rules ---------------------------------------------------------------------------
def test_special_toy_card_goes_to_a_slot_or_the_table() -> None:
    env = fresh()
    d = position(env, {(4, 5): ("I1-1", 0), (5, 5): ("I1-2", 0)}, hands=[["X-1"], ["X-2"]])
    d["draw_pile"] = ["balls"] + [c for c in d["draw_pile"] if c != "balls"]
    env.load_state_dict(d)
    env.step(env.game.B + A_DRAW)
    assert env.game.phase_name(env.state_array) == "toy_slot"
    assert env.legal_actions() == [env.game.T + 4 * 11 + 5]
    env.step(env.game.T + 4 * 11 + 5)
    d = env.state_dict()
    assert d["slots"][4][5] == {"toy": "balls"} and d["phase"] == "play"
    assert engine_boxes(env)[0]["toys"] == [3, 1, 0]
    # no slot anywhere: laid like a card open on all sides, then play goes on
    d = position(env, {(4, 5): ("X-1", 0)}, hands=[[], ["X-2"]])
    d["draw_pile"] = ["mice"] + [c for c in d["draw_pile"] if c != "mice"]
    env.load_state_dict(d)
    env.step(env.game.B + A_DRAW)
    assert env.game.phase_name(env.state_array) == "toy_cell"
    assert set(env.legal_actions()) == {3 * 11 + 5, 5 * 11 + 5, 4 * 11 + 4, 4 * 11 + 6}
    env.step(5 * 11 + 5)
    assert env.agent_selection == "player_1"  # the hand was empty: the turn ends
    [b] = engine_boxes(env)
    assert b["cells"] == [(4, 5), (5, 5)] and b["toys"] == [1, 2, 0]
    same_boxes(env)


def test_sleeping_cat_joins_a_chosen_box_and_shuts_sides() -> None:
    env = fresh()
    position(env, {(4, 4): ("X-1", 0), (4, 6): ("X-2", 0)}, slots={})
    B = env.game.B
    env.step(B + A_SLEEP)
    assert 4 * 11 + 5 in env.legal_actions()
    env.step(4 * 11 + 5)
    assert set(env.legal_actions()) == {B + A_DIR + 1, B + A_DIR + 3}
    env.step(B + A_DIR + 1)  # joins the box to the east
    d = env.state_dict()
    assert d["table"][4][5] == {"sleeping_cat": 0, "joined": [4, 6]} and d["supplies"][0] == 4
    same_boxes(env)
    bx = engine_boxes(env)
    assert [b["cats"][0] for b in bx] == [[0, 0], [0, 1]]


def test_sleeping_cat_not_into_a_box_of_others() -> None:
    env = fresh()
    position(env, {(4, 5): ("I1-1", 0), (5, 5): ("I1-2", 0)}, slots={(4, 5): 1})
    assert env.game.B + A_SLEEP not in env.legal_actions()
    position(env, {(4, 5): ("I1-1", 0), (5, 5): ("I1-2", 0)}, slots={(4, 5): "princess"})
    assert env.game.B + A_SLEEP not in env.legal_actions()
    position(env, {(4, 5): ("I1-1", 0), (5, 5): ("I1-2", 0)}, slots={(4, 5): 0})
    assert env.game.B + A_SLEEP in env.legal_actions()


def test_sleeping_cat_judged_on_the_box_it_joins_and_shuts_the_box_it_faces() -> None:
    """Decision (docs/rules/if_it_fits.md, B): the cat rule is judged on the box the sleeping
    cat joins; an open side of another box that it merely faces is shut by it, whoever has
    cats there."""
    red, blue = 0, 1
    env = fresh()
    # box A: (3,5) open S over (4,5) open N E, Blue's cat on the slot between them; its only
    # open side to an empty cell is (4,5)'s east side, facing (4,6). Box B: (4,7) open W only.
    cells = {(3, 5): ("U1-1", 1), (4, 5): ("L1-1", 0), (4, 7): ("U2-1", 1)}
    position(env, cells, slots={(3, 5): blue}, cur=red)
    a = next(b for b in engine_boxes(env) if (4, 5) in b["cells"])
    assert not a["closed"] and a["value"] == 2
    B = env.game.B
    assert B + A_SLEEP in env.legal_actions()
    env.step(B + A_SLEEP)
    assert 4 * 11 + 6 in env.legal_actions()  # B may be joined, although A is faced too
    env.step(4 * 11 + 6)
    assert set(env.legal_actions()) == Model(env.state_dict()).legal() == {B + A_DIR + 1}
    env.step(B + A_DIR + 1)  # joins B to the east; not A (Blue's cat, none of Red's)
    assert env.state_dict()["table"][4][6] == {"sleeping_cat": red, "joined": [4, 7]}
    same_boxes(env)
    a = next(b for b in engine_boxes(env) if (4, 5) in b["cells"])
    b = next(b for b in engine_boxes(env) if (4, 7) in b["cells"])
    assert (4, 6) in b["cells"] and (4, 6) not in a["cells"]
    assert b["cats"] == {red: [0, 1], blue: [0, 0]} and b["closed"]
    assert a["cats"] == {red: [0, 0], blue: [1, 0]}
    assert a["closed"] and a["value"] == 4  # shut by Red's sleeping cat: 2 balls, doubled
    # Blue scores its closed box; Red's only cat in B is sleeping: Red scores nothing there
    assert env.game.outcome(env.state_array)[0].tolist() == [0, 4]


def test_princess_replaces_any_cat_and_the_trigger_stays() -> None:
    env = fresh()
    cells = {(4, 5): ("I1-1", 0), (5, 5): ("I1-2", 0), (3, 5): ("cat", 1, (4, 5))}
    position(env, cells, slots={(4, 5): 0}, hands=[["princess"], ["X-1"]], phase="play",
             end_triggered=True)
    T, B = env.game.T, env.game.B
    env.step(B + A_HAND)
    assert set(env.legal_actions()) == {T + 4 * 11 + 5, 3 * 11 + 5}
    env.step(3 * 11 + 5)
    d = env.state_dict()
    assert d["table"][3][5] == {"sleeping_cat": "princess", "joined": [4, 5]}
    assert d["supplies"] == [4, 5] and d["hands"][0] == [] and d["end_triggered"]
    [b] = [b for b in engine_boxes(env) if (4, 5) in b["cells"]]
    assert b["princesses"] == 1 and b["cats"][1] == [0, 0]
    same_boxes(env)
    assert env.game.phase_name(env.state_array) == "play"  # player_1 plays out its hand


def test_princess_unplayable_without_cats_and_discard() -> None:
    env = fresh(table=(3, 5))
    full = {(r, c): (f"X-{1 + r * 5 + c}" if r * 5 + c < 8 else f"T1-{r * 5 + c - 7}", 0)
            for r in range(3) for c in range(5)}
    # A full table leaves seat 0 nothing to play: a 'play' position with no legal action is
    # rejected by the loader (the engine never stops there); the turn is in 'discard'.
    with pytest.raises(StateDictError, match="no legal action"):
        position(env, full, hands=[["princess", "U1-1"], ["U1-2"]], phase="play")
    position(env, full, hands=[["princess", "U1-1"], ["U1-2"]], phase="discard")
    B = env.game.B
    assert env.legal_actions() == [B + A_HAND, B + A_HAND + 1]
    env.step(B + A_HAND + 1)
    d = env.state_dict()
    assert d["discarded"] == ["U1-1"] and d["hands"][0] == ["princess"]


def test_fifth_cat_triggers_end_then_hands_are_played_out() -> None:
    env = fresh()
    cells = {(4, 5): ("I1-1", 0), (5, 5): ("I1-2", 0)}
    cells.update({(r, 0): ("U2-" + str(r), 0) for r in range(1, 5)})
    cats = {(r, 1): ("cat", 0, (r, 0)) for r in range(1, 5)}
    # seat 0 draws I1-3 (the top card) into an empty hand and plays it: once the end is
    # triggered its hand is empty while seat 1 still holds two cards, so seat 0 must pass
    d = position(env, {**cells, **cats}, hands=[[], ["X-2", "X-3"]])
    pile = [c for c in d["draw_pile"] if c != "I1-3"]
    env.load_state_dict({**d, "draw_pile": ["I1-3", *pile]})
    B, T = env.game.B, env.game.T
    env.step(B + A_DRAW)
    hand = env.state_dict()["hands"][0]
    env.step(B + A_HAND + hand.index("I1-3"))
    env.step(6 * 11 + 5)
    env.step(B + A_ROT)
    assert env.legal_actions() == [T + 5 * 11 + 5, B + A_SKIP]
    env.step(T + 5 * 11 + 5)
    d = env.state_dict()
    assert d["supplies"][0] == 0 and d["end_triggered"]
    assert d["phase"] == "play" and d["current_player"] == 1
    passes = 0
    while not env.state_array[K.DONE]:
        ph = env.game.phase_name(env.state_array)
        assert ph in ("play", "cell", "rotation", "cat", "discard", "pass", "princess")
        if ph == "pass":
            passes += 1
            assert env.legal_actions() == [B + A_PASS]
            assert env.state_dict()["hands"][int(env.state_array[K.CUR])] == []
        env.step(env.legal_actions()[0])
    assert passes >= 1
    assert all(h == [] for h in env.state_dict()["hands"])


def test_empty_pile_triggers_the_end() -> None:
    env = fresh()
    d = position(env, {(4, 5): ("X-1", 0)}, hands=[["X-2"], ["X-3"]])
    d["draw_pile"], d["pile_segments"] = ["X-4"], [0, 1]
    d["discarded"] = [c for c in env.game.card_names[:72] + ["balls", "mice", "yarns"]
                      if c not in ("X-1", "X-2", "X-3", "X-4")] + ["princess", "princess"]
    env.load_state_dict(d)
    B = env.game.B
    env.step(B + A_DRAW)
    env.step(B + A_HAND)
    env.step(env.legal_actions()[0])
    env.step(B + A_ROT)
    if env.game.phase_name(env.state_array) == "cat":
        env.step(B + A_SKIP)
    d = env.state_dict()
    assert d["end_triggered"] and d["current_player"] == 1 and d["phase"] == "play"
    assert B + A_DRAW not in env.legal_actions() and B + A_SLEEP not in env.legal_actions()


def test_advanced_no_wall_to_wall_for_box_cards() -> None:
    env = fresh(advanced=True)
    position(env, {(4, 5): ("U1-1", 0)}, hands=[["U1-2"], ["X-3"]], phase="play")
    B = env.game.B
    env.step(B + A_HAND)
    d = env.state_dict()
    assert d["relaxed"] is False
    legal = set(env.legal_actions())
    # U1-1 shows walls E, S, W; U1-2 (open N or, turned, S) cannot face the E/W walls
    assert legal == {3 * 11 + 5, 5 * 11 + 5}
    env.step(5 * 11 + 5)  # south of it: must turn so its open side faces north
    assert env.legal_actions() == [B + A_ROT]
    same_boxes(env)


def test_tie_break_fewest_minus_points() -> None:
    env = fresh()
    cells = {(3, 5): ("I1-8", 0), (4, 5): ("I1-4", 0), (5, 5): ("I1-6", 0),
             (3, 8): ("I1-1", 0), (4, 8): ("I1-2", 0)}
    position(env, cells, slots={(3, 5): 0, (3, 8): 1})
    pts, win = env.game.outcome(env.state_array)
    # box A: ball 3 (I1-8 ball+spray, I1-4 ball+mouse, I1-6 yarn+ball) - 1 = 2; box B 1
    assert pts.tolist() == [2, 1] and win.tolist() == [1, 0]
    cells[(5, 8)] = ("I1-3", 0)
    cells[(6, 8)] = ("I1-5", 0)
    position(env, cells, slots={(3, 5): 0, (3, 8): 1})
    pts, win = env.game.outcome(env.state_array)
    assert pts.tolist() == [2, 2] and win.tolist() == [0, 1]  # equal points, fewer minus


