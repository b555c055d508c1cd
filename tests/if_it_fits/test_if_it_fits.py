"""If It Fits: spec examples, rule tests, and invariants checked against independent
(brute-force) implementations in tests/if_it_fits/if_it_fits_ref.py, built from the state
dict and the deck JSON."""

from __future__ import annotations

import json
import random
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import card_envs
from card_envs import OptionError, StateDictError
from card_envs.core import kernels as K
from card_envs.if_it_fits import deck as D
from if_it_fits_ref import (
    DECK,
    ENV,
    PROPS,
    SIDES,
    Model,
    engine_boxes,
    fresh,
    make,
    play_random,
    position,
    same_boxes,
    to_turn,
)


# --- deck ---------------------------------------------------------------------------------
def test_default_deck_file_is_the_spec_deck() -> None:
    assert DECK == D.generate_default()
    t = D.card_table(D.load_default()).reshape(-1, D.FIELDS)
    box = t[:72]
    assert len(box) == 72 and len(t) == 80
    assert box[:, 2:5].sum(0).tolist() == [30, 30, 30] and box[:, 5].sum() == 9
    shapes = [c["open"] for c in DECK["box_cards"]]
    for _, o in D.SHAPES:
        assert shapes.count("".join(s for s in SIDES if s in o)) == 8
    assert [c["toys"] for c in DECK["special_toy_cards"]] == \
        [{"ball": 2}, {"mouse": 2}, {"yarn": 2}]
    assert [c["open"] for c in DECK["start_cards"]] == ["NESW", "NS", "EW", "NE", "N"]


@pytest.mark.parametrize("bad", [
    {}, {"box_cards": [], "start_cards": [], "special_toy_cards": []},
    {**DECK, "box_cards": DECK["box_cards"][:5]},
    {**DECK, "start_cards": DECK["start_cards"][:4]},
    {**DECK, "box_cards": [{**DECK["box_cards"][0], "open": "NN"}] + DECK["box_cards"][1:]},
    {**DECK, "box_cards": [{**DECK["box_cards"][0], "open": "Q"}] + DECK["box_cards"][1:]},
    {**DECK, "box_cards": [{**DECK["box_cards"][0], "toys": {"fish": 1}}] +
     DECK["box_cards"][1:]},
    {**DECK, "box_cards": [{**DECK["box_cards"][0], "sprayer": -1}] + DECK["box_cards"][1:]},
    {**DECK, "box_cards": [DECK["box_cards"][1]] + DECK["box_cards"][1:]},
    "/nonexistent/deck.json", 7,
])
def test_bad_decks_rejected(bad: Any) -> None:
    with pytest.raises(OptionError, match="deck"):
        make(deck=bad)


@pytest.mark.parametrize("bad", [(2, 11), (11, 4), (22, 11), "11x11", (11.0, 11), (11,)])
def test_bad_table_rejected(bad: Any) -> None:
    with pytest.raises(OptionError, match="table"):
        make(table=bad)
    with pytest.raises(OptionError, match="advanced"):
        make(advanced=1)


def test_user_deck_from_file_and_dict(tmp_path: Any) -> None:
    deck = json.loads(json.dumps(DECK))
    deck["box_cards"] = deck["box_cards"][:20]
    deck["special_toy_cards"] = deck["special_toy_cards"][:1]
    path = tmp_path / "deck.json"
    path.write_text(json.dumps(deck))
    for spec in (deck, str(path)):
        env = make(deck=spec)
        env.reset(seed=1)
        assert len(env.state_dict()["draw_pile"]) == 20 - 4 + 1 + 2
        play_random(env, random.Random(0))
        assert env.state_array[K.DONE]


# --- setup --------------------------------------------------------------------------------
@pytest.mark.parametrize("n,adv", [(2, False), (3, False), (5, False), (4, True)])
def test_setup(n: int, adv: bool) -> None:
    env = make(num_players=n, advanced=adv)
    env.reset(seed=n)
    d = env.state_dict()
    assert d["phase"] == "start_card" and d["current_player"] == 0
    for h in d["hands"]:
        assert len(h) == 2 and all(c[0] in "XTILU" for c in h)  # box cards only
    pile = d["draw_pile"][::-1]  # bottom first
    m = 72 - 2 * n + 3
    assert len(pile) == m + (5 if adv else n)
    assert sorted(c for c in pile if c != "princess") == sorted(
        c["name"] for c in DECK["box_cards"] + DECK["special_toy_cards"]
        if c["name"] not in sum(d["hands"], []))
    segs = d["pile_segments"]
    if adv:
        assert segs == [0, len(pile)] and pile.count("princess") == 5
    else:
        sizes = [segs[j + 1] - segs[j] - 1 for j in range(n)]  # bottom pile first
        assert sum(sizes) == m and max(sizes) - min(sizes) <= 1
        assert sizes == sorted(sizes)  # the top piles get the extra cards
        for j in range(n):
            assert pile[segs[j]:segs[j + 1]].count("princess") == 1
    assert d["supplies"] == [5] * n


def test_start_cards_laid_in_a_row() -> None:
    env = make(num_players=3, start_player=1)
    env.reset(seed=0)
    g = env.game
    B = g.B
    assert env.agent_selection == "player_1"
    env.step(B + 9 + 2)  # S3, open E W
    assert env.game.phase_name(env.state_array) == "start_rotation"
    env.step(B + 3)
    assert env.state_dict()["table"][5][5] == {"card": "S3", "rot": 0}
    assert env.agent_selection == "player_2"
    assert B + 9 + 2 not in env.legal_actions()
    env.step(B + 9 + 0)
    assert set(env.legal_actions()) == {B + 14, B + 15}
    env.step(B + 14)  # west end
    env.step(B + 4)
    env.step(B + 9 + 4)
    env.step(B + 15)  # east end
    env.step(B + 3)
    d = env.state_dict()
    assert [d["table"][5][c] and d["table"][5][c]["card"] for c in (4, 5, 6)] == \
        ["S1", "S3", "S5"]
    assert d["phase"] == "turn" and d["current_player"] == 1
    assert d["start_cards_used"] == ["S1", "S3", "S5"]
    same_boxes(env)


def test_advanced_start_row_no_wall_to_wall() -> None:
    env = make(advanced=True)
    env.reset(seed=0)
    B = env.game.B
    env.step(B + 9 + 4)  # S5: open N only
    env.step(B + 3)  # E and W are walls
    env.step(B + 9 + 1)  # S2: open N S -> E/W walls: cannot be laid anywhere
    assert env.state_dict()["relaxed"] is True
    assert set(env.legal_actions()) == {B + 14, B + 15}


# --- spec examples ------------------------------------------------------------------------
def test_example_two_stacked_cards_form_one_box_with_a_slot() -> None:
    env = fresh()
    position(env, {(4, 5): ("I1-1", 0), (5, 5): ("I1-2", 0)})
    bx = engine_boxes(env)
    assert [b["cells"] for b in bx] == [[(4, 5), (5, 5)]]
    same_boxes(env)
    assert env.game.arr(env.state_array, "slotok", env.game.S)[4 * 11 + 5] == 1
    # a wall on either side: two boxes, no slot
    for upper, lower in ((("U2-1", 0), ("I1-2", 0)), (("I1-1", 0), ("U1-1", 1))):
        position(env, {(4, 5): upper, (5, 5): lower})
        assert len(engine_boxes(env)) == 2
        assert env.game.arr(env.state_array, "slotok", env.game.S).sum() == 0
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
    env.step(env.game.B + 3)  # the card joins box A (no cats) and box B (Blue's cat)
    assert env.game.phase_name(env.state_array) == "turn"  # no cat possible: turn over
    assert env.agent_selection == "player_1"
    assert len(engine_boxes(env)) == 1
    env = joining_position({(3, 5): 0})  # Red already has a cat in box A
    env.step(env.game.B + 3)
    T = env.game.T
    assert set(env.legal_actions()) == {T + 4 * 11 + 5, T + 5 * 11 + 5, env.game.B + 18}
    env.step(T + 4 * 11 + 5)
    [b] = [b for b in engine_boxes(env) if (4, 5) in b["cells"]]
    assert b["cats"][0] == [2, 0] and b["cats"][1] == [1, 0]


# --- more rules ---------------------------------------------------------------------------
def test_special_toy_card_goes_to_a_slot_or_the_table() -> None:
    env = fresh()
    d = position(env, {(4, 5): ("I1-1", 0), (5, 5): ("I1-2", 0)}, hands=[["X-1"], ["X-2"]])
    d["draw_pile"] = ["balls"] + [c for c in d["draw_pile"] if c != "balls"]
    env.load_state_dict(d)
    env.step(env.game.B + 16)
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
    env.step(env.game.B + 16)
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
    env.step(B + 17)
    assert 4 * 11 + 5 in env.legal_actions()
    env.step(4 * 11 + 5)
    assert set(env.legal_actions()) == {B + 5 + 1, B + 5 + 3}
    env.step(B + 5 + 1)  # joins the box to the east
    d = env.state_dict()
    assert d["table"][4][5] == {"sleeping_cat": 0, "joined": [4, 6]} and d["supplies"][0] == 4
    same_boxes(env)
    bx = engine_boxes(env)
    assert [b["cats"][0] for b in bx] == [[0, 0], [0, 1]]


def test_sleeping_cat_not_into_a_box_of_others() -> None:
    env = fresh()
    position(env, {(4, 5): ("I1-1", 0), (5, 5): ("I1-2", 0)}, slots={(4, 5): 1})
    assert env.game.B + 17 not in env.legal_actions()
    position(env, {(4, 5): ("I1-1", 0), (5, 5): ("I1-2", 0)}, slots={(4, 5): "princess"})
    assert env.game.B + 17 not in env.legal_actions()
    position(env, {(4, 5): ("I1-1", 0), (5, 5): ("I1-2", 0)}, slots={(4, 5): 0})
    assert env.game.B + 17 in env.legal_actions()


def test_princess_replaces_any_cat_and_the_trigger_stays() -> None:
    env = fresh()
    cells = {(4, 5): ("I1-1", 0), (5, 5): ("I1-2", 0), (3, 5): ("cat", 1, (4, 5))}
    position(env, cells, slots={(4, 5): 0}, hands=[["princess"], ["X-1"]], phase="play",
             end_triggered=True)
    T, B = env.game.T, env.game.B
    env.step(B + 0)
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
    assert env.legal_actions() == [B + 0, B + 1]
    env.step(B + 1)
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
    env.step(B + 16)
    hand = env.state_dict()["hands"][0]
    env.step(B + hand.index("I1-3"))
    env.step(6 * 11 + 5)
    env.step(B + 3)
    assert env.legal_actions() == [T + 5 * 11 + 5, B + 18]
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
            assert env.legal_actions() == [B + 19]
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
    env.step(B + 16)
    env.step(B + 0)
    env.step(env.legal_actions()[0])
    env.step(B + 3)
    if env.game.phase_name(env.state_array) == "cat":
        env.step(B + 18)
    d = env.state_dict()
    assert d["end_triggered"] and d["current_player"] == 1 and d["phase"] == "play"
    assert B + 16 not in env.legal_actions() and B + 17 not in env.legal_actions()


def test_advanced_no_wall_to_wall_for_box_cards() -> None:
    env = fresh(advanced=True)
    position(env, {(4, 5): ("U1-1", 0)}, hands=[["U1-2"], ["X-3"]], phase="play")
    B = env.game.B
    env.step(B + 0)
    d = env.state_dict()
    assert d["relaxed"] is False
    legal = set(env.legal_actions())
    # U1-1 shows walls E, S, W; U1-2 (open N or, turned, S) cannot face the E/W walls
    assert legal == {3 * 11 + 5, 5 * 11 + 5}
    env.step(5 * 11 + 5)  # south of it: must turn so its open side faces north
    assert env.legal_actions() == [B + 3]
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


# --- hidden information -------------------------------------------------------------------
def test_other_hands_and_pile_order_are_hidden() -> None:
    env = make(num_players=3)
    env.reset(seed=4)
    play_random(env, random.Random(4), 30)
    d = env.state_dict()
    # swap the box cards of seat 1's hand with box cards from the pile
    d2 = json.loads(json.dumps(d))
    pile_box = [i for i, c in enumerate(d2["draw_pile"]) if c[0] in "XTILU"]
    for k, c in enumerate(d2["hands"][1]):
        if c != "princess":
            i = pile_box[k]
            d2["hands"][1][k], d2["draw_pile"][i] = d2["draw_pile"][i], c
    d2["draw_pile"][:3] = d2["draw_pile"][:3][::-1]
    d2["draw_pile"] = d2["draw_pile"]
    assert d2 != d
    other = make(num_players=3)
    other.reset(seed=0)
    other.load_state_dict(d2)
    for seat in (0, 2):
        a = f"player_{seat}"
        assert np.array_equal(other.observe(a)["observation"], env.observe(a)["observation"])
        assert other.state_dict(observer=seat) == env.state_dict(observer=seat)
    if d2["hands"][1] != d["hands"][1]:
        assert not np.array_equal(other.observe("player_1")["observation"],
                                  env.observe("player_1")["observation"])
    view = env.state_dict(observer=0)
    assert view["hands"][0] == d["hands"][0]
    assert all(x is None for q in (1, 2) for x in view["hands"][q])
    assert all(x is None for x in view["draw_pile"])


def test_pile_reversal_changes_no_observation() -> None:
    env = make()
    to_turn(env, 3)
    d = env.state_dict()
    other = make()
    other.reset(seed=0)
    d2 = {**d, "draw_pile": d["draw_pile"][::-1], "pile_segments": [0, len(d["draw_pile"])]}
    other.load_state_dict(d2)
    for a in env.possible_agents:
        assert np.array_equal(other.observe(a)["observation"], env.observe(a)["observation"])


def test_resample_keeps_observer_view() -> None:
    env = make(num_players=4)
    env.reset(seed=2)
    play_random(env, random.Random(2), 60)
    for seat in range(4):
        alt = env.resample(seat, np.random.default_rng(seat))
        assert np.array_equal(alt.observe(f"player_{seat}")["observation"],
                              env.observe(f"player_{seat}")["observation"])
        assert alt.state_dict(observer=seat) == env.state_dict(observer=seat)


# --- invariants against the independent model -----------------------------------------------
@PROPS
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 5), adv=st.booleans(),
       small=st.booleans())
def test_random_play_matches_brute_force(seed: int, n: int, adv: bool, small: bool) -> None:
    opts = {"num_players": n, "advanced": adv}
    if small:
        opts["table"] = (5, 7)
    env = make(**opts)
    env.reset(seed=seed)
    rnd = random.Random(seed)
    steps = 0
    while not env.state_array[K.DONE]:
        d = env.state_dict()
        m = Model(d)
        assert set(env.legal_actions()) == m.legal(), d["phase"]
        if steps % 3 == 0:
            same_boxes(env)
            tot = sum(len(h) for h in d["hands"]) + len(d["draw_pile"]) + \
                len(d["discarded"]) + sum(x is not None and "card" in x
                                          for row in d["table"] for x in row) + \
                sum(x is not None and "toy" in x for row in d["slots"] for x in row) + \
                (d["drawn_toy"] is not None) + sum(
                    x is not None and x.get("sleeping_cat") == "princess"
                    for row in d["table"] for x in row) + sum(
                    x is not None and x.get("cat") == "princess" for row in d["slots"]
                    for x in row)
            assert tot == 75 + d["start_cards_laid"] + env.game.npr  # cards conserved
            cats = [d["supplies"][q] + sum(
                x is not None and x.get("sleeping_cat") == q for row in d["table"]
                for x in row) + sum(x is not None and x.get("cat") == q
                                    for row in d["slots"] for x in row) for q in range(n)]
            assert cats == [5] * n  # cats conserved
        env.step(rnd.choice(env.legal_actions()))
        steps += 1
        assert steps < 2000
    d = env.state_dict()
    pts, minus = Model(d).score()
    got = [env.infos[a]["points"] for a in env.possible_agents]
    assert got == pts
    best = max(pts)
    top = [q for q in range(n) if pts[q] == best]
    least = min(minus[q] for q in top)
    winners = [q for q in top if minus[q] == least]
    assert [env.infos[a]["winner"] for a in env.possible_agents] == \
        [q in winners for q in range(n)]
    assert all(h == [] for h in d["hands"]) and d["end_triggered"]


@PROPS
@given(seed=st.integers(0, 2**31 - 1))
def test_advanced_relax_flag_is_exact(seed: int) -> None:
    env = make(advanced=True, table=(5, 7))
    env.reset(seed=seed)
    rnd = random.Random(seed)
    while not env.state_array[K.DONE]:
        d = env.state_dict()
        if d["phase"] == "cell":
            m = Model({**d, "relaxed": False})
            strict_cells = m.legal()
            assert d["relaxed"] == (not strict_cells)
        env.step(rnd.choice(env.legal_actions()))


def test_heuristic_beats_random_quickly() -> None:
    from agents.registry import make_agent

    wins = 0
    games = 30
    for g in range(games):
        env = card_envs.make(ENV)
        env.reset(seed=1000 + g)
        seats = {f"player_{(g + k) % 2}": a for k, a in
                 enumerate((make_agent("heuristic", ENV, seed=g),
                            make_agent("random", ENV, seed=g)))}
        final = {}
        for agent in env.agent_iter():
            obs, rew, term, trunc, info = env.last()
            if term or trunc:
                final[agent] = rew
            env.step(None if term or trunc else
                     seats[agent].act(obs["observation"], obs["action_mask"]))
        h = next(a for a, s in seats.items() if s.name == "heuristic")
        wins += final[h] > 0
    assert wins >= 0.7 * games
