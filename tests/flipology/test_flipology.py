"""Rule tests of Flipology (``flipology_v0``) against ``shared/rules/flipology.md``.

Positions are set up by swapping chosen cards into place in a real dealt game (so every card
stays conserved), then the engine is driven through its public actions. Masks, scores, the
observed board and whole turn/effect steps are re-derived from state dicts by the independent
references in ``tests/flipology_ref.py`` (``ref_mask``, ``ref_points``, ``ref_board_obs``,
``RefTurn``) and compared on random games.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import card_envs
from card_envs import OptionError
from card_envs.core import kernels as K
from card_envs.flipology import layout as L
from card_envs.flipology.deck import default_deck
from card_envs.flipology.game import adjacency
from flipology_ref import (
    ENV_ID,
    KINDS,
    RefTurn,
    act_pos,
    after_setup,
    all_down,
    arrange,
    card_of,
    exact,
    face,
    kind_at,
    legal_positions,
    phase,
    ref_board_obs,
    ref_mask,
    ref_points,
)


def hyp(n: int = 20) -> settings:
    return settings(max_examples=n, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


# --- deck and options ---------------------------------------------------------------------
def test_default_deck_matches_spec_table() -> None:
    deck = default_deck()
    cards = [(g["kind"], v) for g in deck["cards"] for v in g["points"]]
    assert len(cards) == 84
    assert sum(1 for k, _ in cards if k == "null") == 6
    assert sorted(v for k, v in cards if k == "dog") == [5] * 4 + [6] * 4
    assert sorted(v for k, v in cards if k == "cat") == [4, 4, 5, 5, 6, 6]
    assert sorted(v for k, v in cards if k == "koala") == [8] * 4


def test_user_deck_and_bad_options() -> None:
    deck = default_deck()
    deck["cards"][0]["points"] = [1] * 8  # cheaper dogs
    env = card_envs.make_raw(ENV_ID, deck=deck)
    env.reset(seed=0)
    assert {env.game.points[c] for c in card_of(env.game, "dog")} == {1}
    for bad in ({"cards": [{"kind": "unicorn", "points": [1]}]}, {"cards": "x"}, [1, 2],
                {"cards": [{"kind": "dog", "points": [99]}]},
                {"cards": [{"kind": "dog", "points": [5] * 10}]}):  # too few cards
        with pytest.raises(OptionError):
            card_envs.make_raw(ENV_ID, deck=bad)
    with pytest.raises(OptionError, match="Great Tree"):
        card_envs.make_raw(ENV_ID, num_players=5, variant="great_tree")
    for k, v in (("variant", "desert"), ("moon", 1), ("series", "yes"), ("max_games", 0)):
        with pytest.raises(OptionError, match=k):
            card_envs.make_raw(ENV_ID, **{k: v})


# --- spec examples ------------------------------------------------------------------------
def test_example_circle_adjacency_three_players() -> None:
    adj, _ = adjacency(3, 7, 1, 1)
    assert 2 * 7 + 0 in adj[6]  # seat 0 right end touches seat 2's left end
    assert 1 * 7 + 6 in adj[0]  # seat 0 left end touches seat 1's right end
    env = after_setup(num_players=3)
    arrange(env, {6: "dog"}, all_down(env))
    env.step(act_pos(env, 6))
    assert legal_positions(env) == {5, 14}


def test_example_monkey_snake_frog_choice() -> None:
    env = after_setup()
    arrange(env, {6: "monkey", 5: "snake", 7: "frog"}, all_down(env))  # seat 1 = to my right
    env.step(act_pos(env, 6))
    assert face(env, 5) == 1 and face(env, 7) == 1
    assert phase(env) == "effect" and legal_positions(env) == {5, 7}
    env.step(act_pos(env, 5))  # apply the Snake: any other card of its row
    assert env.state_dict()["effect_stack"][0]["kind"] == "snake"
    assert legal_positions(env) == {0, 1, 2, 3, 4, 6}


def test_example_parrot_with_only_hermit_crab_does_nothing() -> None:
    env = after_setup()
    arrange(env, {0: "parrot", 3: "hermit_crab"}, {**all_down(env), 3: 1})
    before = env.state_dict()
    env.step(act_pos(env, 0))
    assert phase(env) == "turn" and env.state_array[K.CUR] == 1
    after = env.state_dict()
    assert after["face_up"][0][0][0] is True
    assert after["rows"] == before["rows"]


def test_example_wind_cat_stays_dog_does_not_act() -> None:
    env = after_setup()
    arrange(env, {3: "wind", 1: "cat", 5: "dog"}, {**all_down(env), 1: 1, 6: 1})
    env.step(act_pos(env, 3))
    assert face(env, 1) == 1  # the face-up Cat stays up
    assert face(env, 5) == 1 and face(env, 6) == 0  # others flipped either way
    assert all(face(env, p) == 1 for p in (0, 2, 4))
    assert phase(env) == "turn" and env.state_array[K.CUR] == 1  # the Dog did not act


def test_example_score() -> None:
    env = after_setup()
    arrange(env, {0: ("dog", 6), 1: ("cat", 5), 2: ("sloth", 7), 3: ("koala", 8),
                  4: ("frog", 4), 5: "mole", 6: "hawk"},
            {**all_down(env), 0: 1, 1: 1, 2: 1})
    from card_envs.flipology.scoring import seat_points
    assert seat_points(env.state_array, env.game.cfg, 0) == 12
    assert ref_points(env.game, env.state_dict())[0] == 12


# --- effects ------------------------------------------------------------------------------
def test_dog_chain_across_rows_into_hawk() -> None:
    env = after_setup()
    arrange(env, {6: "dog", 7: "hawk"}, all_down(env))
    env.step(act_pos(env, 6))
    assert legal_positions(env) == {5, 7}
    env.step(act_pos(env, 7))  # the Dog turns up the opponent's Hawk: I apply it
    assert env.state_array[K.CUR] == 0
    assert env.state_dict()["effect_stack"][0]["kind"] == "hawk"
    assert legal_positions(env) == set(range(7))  # the Hawk's row is seat 1's: mine is open
    env.step(act_pos(env, 2))
    assert phase(env) in ("turn", "effect")


def test_frog_two_places_away() -> None:
    env = after_setup()
    arrange(env, {0: "frog"}, all_down(env))
    env.step(act_pos(env, 0))
    assert legal_positions(env) == {2, 12}  # 0-1-2 and 0-13-12 around the circle


def test_hawk_any_other_row() -> None:
    env = after_setup(num_players=3)
    arrange(env, {2: "hawk"}, all_down(env))
    env.step(act_pos(env, 2))
    assert legal_positions(env) == set(range(7, 21))


def test_mole_swaps_and_owner_learns_card() -> None:
    env = after_setup()
    arrange(env, {2: "mole", 10: "koala"}, all_down(env))
    obs_before = env.observe("player_0")["observation"].copy()
    assert obs_before[3 * 10 + 1] == -1  # seat 1's face-down Koala is unknown to me
    env.step(act_pos(env, 2))
    assert len(legal_positions(env)) == 13
    env.step(act_pos(env, 10))
    assert kind_at(env, 2) == "koala" and face(env, 2) == 0
    assert kind_at(env, 10) == "mole" and face(env, 10) == 1
    obs = env.observe("player_0")["observation"]
    assert obs[3 * 2 + 1] == L.KOALA  # moved into my row: I know it
    assert phase(env) == "turn"


def test_monkey_single_effect_applies_automatically() -> None:
    env = after_setup()
    arrange(env, {3: "monkey", 2: "dog", 4: "panda"}, all_down(env))
    env.step(act_pos(env, 3))
    assert face(env, 2) == 1 and face(env, 4) == 1
    assert env.state_dict()["effect_stack"][0]["kind"] == "dog"
    assert legal_positions(env) == {1, 3}


def test_parrot_copies_dog_and_mole() -> None:
    env = after_setup()
    arrange(env, {0: "parrot", 9: "dog", 11: "mole"}, {**all_down(env), 9: 1, 11: 1})
    env.step(act_pos(env, 0))
    assert legal_positions(env) == {9, 11}
    env.step(act_pos(env, 9))
    ef = env.state_dict()["effect_stack"][0]
    assert ef["kind"] == "dog" and ef["copy"] and ef["source"] == [0, 0, 0]
    assert legal_positions(env) == {1, 13}  # neighbours of the Parrot, not of the Dog
    env2 = after_setup()
    arrange(env2, {0: "parrot", 11: "mole", 8: "cat"}, {**all_down(env2), 11: 1})
    env2.step(act_pos(env2, 0))  # one copyable animal: chosen automatically
    assert env2.state_dict()["effect_stack"][0]["kind"] == "mole"
    env2.step(act_pos(env2, 8))
    assert kind_at(env2, 8) == "parrot" and face(env2, 8) == 1 and kind_at(env2, 0) == "cat"


def test_snake_own_row_only() -> None:
    env = after_setup()
    arrange(env, {9: "snake", 8: "dog"}, all_down(env))
    env.step(act_pos(env, 1))  # a first turn elsewhere
    env.step(act_pos(env, 9))  # seat 1 flips its Snake
    assert legal_positions(env) == {7, 8, 10, 11, 12, 13}


def test_wolves_remove_and_null() -> None:
    env = after_setup()
    arrange(env, {0: "wolves", 1: "dog", 9: "cat"}, {**all_down(env), 1: 1})
    env.step(act_pos(env, 0))
    assert 0 not in legal_positions(env) and len(legal_positions(env)) == 13
    env.step(act_pos(env, 9))
    d = env.state_dict()
    assert d["rows"][1][0][2] == "null" and d["face_up"][1][0][2] and d["nulls_placed"] == 1
    cat = card_of(env.game, "cat")[0]
    assert cat in d["discard"] and cat in env.state_dict(observer=1)["discard"]
    assert cat in env.state_dict(observer=0)["discard"]


def test_parrot_copying_wolves_cannot_remove_itself_or_nulls() -> None:
    env = after_setup()
    arrange(env, {0: "parrot", 3: "wolves", 4: "dog"}, {**all_down(env), 3: 1})
    st_ = env.state_array.copy()
    st_[L.POS + 5] = env.game.ncards  # a null (replacing a card that goes to the discard)
    st_[L.DISC + int(env.state_array[L.POS + 5])] = 1
    st_[L.KNOW + int(env.state_array[L.POS + 5])] = L.ALL_SEATS
    st_[L.FACE + 5] = 1
    st_[L.NULLS] = 1
    env.load_state_dict(env.game.state_dict(st_))
    env.step(act_pos(env, 0))
    assert env.state_dict()["effect_stack"][0]["kind"] == "wolves"
    assert legal_positions(env) == set(range(14)) - {0, 5}


def test_rain_one_per_row_in_seat_order_no_effects() -> None:
    env = after_setup(num_players=3)
    arrange(env, {0: "rain", 8: "dog", 15: "hawk"}, all_down(env))
    env.step(act_pos(env, 0))
    assert legal_positions(env) == set(range(7))
    env.step(act_pos(env, 1))
    assert legal_positions(env) == set(range(7, 14))
    env.step(act_pos(env, 8))
    assert legal_positions(env) == set(range(14, 21))
    env.step(act_pos(env, 15))
    assert face(env, 8) == 1 and face(env, 15) == 1 and face(env, 1) == 1
    assert phase(env) == "turn" and env.state_array[K.CUR] == 1  # no Dog or Hawk effect


def test_sun_peeks_then_flips_one_or_none() -> None:
    env = after_setup(num_players=3)
    arrange(env, {0: "sun", 7: "koala", 8: "dog", 15: "panda"}, {**all_down(env), 9: 1})
    env.step(act_pos(env, 0))
    cand = set(range(7, 21)) - {9}
    assert legal_positions(env) == cand
    env.step(act_pos(env, 7))
    assert legal_positions(env) == cand - {7}
    env.step(act_pos(env, 8))
    env.step(act_pos(env, 15))
    assert legal_positions(env) == {7, 8, 15} and env.game.skip in env.legal_actions()
    mine = env.observe("player_0")["observation"]
    theirs = env.observe("player_2")["observation"]
    assert mine[3 * 7 + 1] == L.KOALA and mine[3 * 15 + 1] == L.PANDA
    assert theirs[3 * ((7 - 14) % 21) + 1] == -1  # seat 2 did not see seat 1's Koala
    view = env.state_dict(observer=2)
    assert view["effect_stack"][0]["peeks"] == [[1, 0, 0], [1, 0, 1], [2, 0, 1]]  # positions public
    env.step(act_pos(env, 8))  # the Dog turns up without effect
    assert face(env, 8) == 1 and phase(env) == "turn" and env.state_array[K.CUR] == 1
    env2 = after_setup()
    arrange(env2, {0: "sun"}, all_down(env2))
    env2.step(act_pos(env2, 0))
    for p in (7, 8, 9):
        env2.step(act_pos(env2, p))
    env2.step(env2.game.skip)
    assert all(face(env2, p) == 0 for p in (7, 8, 9))


def test_cat_protection_and_owner_flip() -> None:
    env = after_setup()
    arrange(env, {0: "dog", 1: "cat", 8: "panda"}, {**all_down(env), 1: 1})
    env.step(act_pos(env, 0))
    env.step(act_pos(env, 1))
    assert face(env, 1) == 1  # an effect cannot turn the Cat down
    env.step(act_pos(env, 8))  # seat 1's turn
    env.step(act_pos(env, 1))  # my own turn flip may turn my Cat down
    assert face(env, 1) == 0


def test_turning_face_down_never_triggers() -> None:
    env = after_setup()
    arrange(env, {0: "dog"}, {**all_down(env), 0: 1})
    env.step(act_pos(env, 0))
    assert face(env, 0) == 0 and phase(env) == "turn" and env.state_array[K.CUR] == 1


def test_chain_bound() -> None:
    env = after_setup()
    arrange(env, {0: "dog"}, all_down(env))
    st_ = env.state_array.copy()
    st_[L.CHAIN] = L.CHAIN_LIMIT - 1  # pretend 63 effects already ran in this turn
    st_[K.STEPS] += 0
    env.load_state_dict(env.game.state_dict(st_))
    # a fresh turn resets the counter; reach the bound through the frame itself
    env.step(act_pos(env, 0))
    assert env.state_array[L.CHAIN] == 1
    from card_envs.flipology.effects import start_frame
    s = env.state_array.copy()
    s[L.CHAIN] = L.CHAIN_LIMIT
    start_frame(s, env.game.cfg, 1)
    assert s[L.EF_KIND] == -1


# --- end of the game ----------------------------------------------------------------------
def play_out(env, choose=None, rnd=None) -> None:
    rnd = rnd or random.Random(0)
    while not env.state_array[K.DONE]:
        legal = env.legal_actions()
        a = choose(env, legal) if choose else None
        env.step(a if a is not None else rnd.choice(legal))


def test_hermit_crab_picks_sloth_face_down() -> None:
    env = after_setup()
    g = env.game
    arrange(env, exact(env, {3: "hermit_crab", 10: "cat"}), {**all_down(env), 3: 1})
    s = env.state_array.copy()
    sloth = [c for c in card_of(g, "sloth") if s[L.DISC + c]]
    if not sloth:  # put a Sloth into the discard pile
        c = card_of(g, "sloth", avoid=set(s[L.POS:L.POS + g.npos].tolist()))[0]
        deck = list(s[L.DECK:L.DECK + s[L.DECKN]])
        x = int(np.flatnonzero(s[L.DISC:L.DISC + g.ncards])[0])
        s[L.DISC + x] = 0
        s[L.DECK + deck.index(c)] = x
        s[L.DISC + c] = 1
        s[L.SEQ + c], s[L.SEQ + x] = s[L.SEQ + x], s[L.SEQ + c]
        sloth = [c]
    s[L.ROUND] = 2
    s[L.TURN] = 1
    s[K.CUR] = 1
    env.load_state_dict(g.state_dict(s))
    env.step(act_pos(env, 10))
    assert phase(env) == "hermit" and env.state_array[K.CUR] == 0
    assert env.game.disc0 + sloth[0] in env.legal_actions()
    view = env.state_dict(observer=0)
    assert None not in view["discard"]  # the owner sees the whole pile
    env.step(g.disc0 + sloth[0])
    assert phase(env) == "hermit_count"
    assert env.legal_actions() == [g.skip + 3, g.skip + 4]
    env.step(g.skip + 4)
    assert env.state_array[K.DONE]
    d = env.state_dict()
    assert d["picked"] == [[sloth[0], "down"]] and d["hermit_bonus"][0] == g.points[sloth[0]]
    points, _ = g.outcome(env.state_array)
    assert points.tolist() == ref_points(g, d)


def _finish_with(env, faces: dict) -> None:
    """Jump to the last turn of round 3 (seat n-1, start player 0) with ``faces``; it flips
    its face-down Cat at its position 6 (+ its points, no effect)."""
    s = env.state_array.copy()
    n = env.game.num_players
    for p, f in faces.items():
        s[L.FACE + p] = f
        if f:
            s[L.KNOW + s[L.POS + p]] = L.ALL_SEATS
    s[L.ROUND], s[L.TURN], s[K.CUR] = 2, n - 1, n - 1
    env.load_state_dict(env.game.state_dict(s))
    env.step(act_pos(env, (n - 1) * 7 + 6))


def test_moon_lowest_wins_and_points_reward_negated() -> None:
    env = after_setup(moon=True, reward_mode="points")
    arrange(env, exact(env, {0: "moon", 1: ("koala", 8), 7: ("panda", 9), 13: ("cat", 4)}),
            {**all_down(env), 0: 1, 1: 1, 7: 1})
    _finish_with(env, {})
    pts, win = env.game.outcome(env.state_array)
    assert pts.tolist() == [-1, 13] and win.tolist() == [1, 0]
    assert env._cumulative_rewards == {"player_0": 1.0, "player_1": -13.0}


def test_species_tie_break() -> None:
    env = after_setup()
    # seat 0: two different frogs (two species) + mole + hawk: 4 species; seat 1: two
    # copies of the same hawk (one species) + mole + cat: 3 species
    arrange(env, exact(env, {0: ("frog", 4), 1: ("frog", 5), 2: ("mole", 1), 3: ("hawk", 3),
                  7: ("hawk", 4), 8: ("hawk", 4), 9: ("mole", 1), 13: ("cat", 4)}),
            {**all_down(env), 0: 1, 1: 1, 2: 1, 3: 1, 7: 1, 8: 1, 9: 1})
    _finish_with(env, {})
    pts, win = env.game.outcome(env.state_array)
    assert pts.tolist() == [13, 13] and win.tolist() == [1, 0]


def test_series_bonus_moon_25_and_next_start() -> None:
    env = after_setup(series=True, moon=True)
    arrange(env, exact(env, {0: ("panda", 9), 7: ("kiwi", 9), 8: ("dog", 5), 13: ("cat", 4)}),
            {**all_down(env), 0: 1, 7: 1, 8: 1})
    _finish_with(env, {})
    d = env.state_dict()
    assert d["totals"] == [9, 18 + 10] and d["game_number"] == 1 and d["start_player"] == 1
    assert d["phase"] == "setup" and d["current_player"] == 1
    env2 = after_setup(series=True, moon=True)
    arrange(env2, exact(env2, {0: "moon", 7: ("kiwi", 9), 13: ("cat", 4)}),
            {**all_down(env2), 0: 1, 7: 1})
    _finish_with(env2, {})
    assert env2.state_dict()["totals"] == [25, 0]


def test_series_ends_at_100_or_max_games() -> None:
    env = card_envs.make_raw(ENV_ID, series=True, max_games=2)
    env.reset(seed=3)
    play_out(env)
    d = env.state_dict()
    pts, win = env.game.outcome(env.state_array)
    assert d["game_number"] == 2 or max(d["totals"]) >= 100
    assert pts.tolist() == d["totals"]
    assert win.tolist() == [int(t == max(d["totals"])) for t in d["totals"]]
    env = card_envs.make_raw(ENV_ID, series=True)
    env.reset(seed=4)
    play_out(env)
    d = env.state_dict()
    assert max(d["totals"]) >= 100 or d["game_number"] == 20


# --- Great Tree ---------------------------------------------------------------------------
def test_great_tree_setup_regrowth_and_rows() -> None:
    env = card_envs.make_raw(ENV_ID, variant="great_tree", num_players=2)
    env.reset(seed=1)
    g = env.game
    assert phase(env) == "regrow" and env.legal_actions() == [g.skip + 1, g.skip + 2]
    hand = list(env.state_dict()["hands"][0])
    env.step(g.skip + 1)  # regrow
    assert env.state_dict()["hands"][0] != hand and env.state_dict()["regrow_used"][0]
    assert not set(hand) & set(env.state_dict()["hands"][0])
    for _ in range(4):  # the 5th card is placed automatically
        env.step(env.legal_actions()[0])
    assert phase(env) == "regrow" and env.state_array[K.CUR] == 1
    env.step(g.skip + 2)
    for _ in range(4):
        env.step(env.legal_actions()[0])
    assert phase(env) == "turn"
    kinds = {KINDS[k] for k in g.kinds if True}
    assert "rain" in kinds  # the deck has Rain and Hermit crabs, set aside in the Great Tree
    for c in range(g.ncards):
        if KINDS[g.kinds[c]] in ("rain", "hermit_crab"):
            assert g.aside[c]
    turns = 0
    while env.state_dict()["levels"] == 1:  # round 1: two turns each
        if phase(env) == "turn":
            turns += 1
            assert legal_positions(env) == {int(env.state_array[K.CUR]) * 15 + c
                                            for c in range(5)}
        env.step(env.legal_actions()[0])
    assert turns == 4
    d = env.state_dict()
    # new start player: highest public score; previous start keeps it when tied
    pub = [sum((-g.points[c] if KINDS[g.kinds[c]] in ("sloth", "koala") else g.points[c])
               for c, f in zip(d["rows"][s][0], d["face_up"][s][0]) if f and c != "null")
           for s in range(2)]
    assert d["start_player"] == (0 if pub[0] >= pub[1] else 1)
    # seat 0 used its regrowth, seat 1 may still regrow
    assert d["phase"] == ("setup" if d["start_player"] == 0 else "regrow")
    for _ in range(200):
        if phase(env) == "turn":
            break
        if phase(env) == "regrow":
            assert env.state_array[K.CUR] == 1
        env.step(env.legal_actions()[0])
    assert env.state_dict()["levels"] == 2
    assert min(legal_positions(env) - {0}) % 15 >= 5  # turns flip the top row


def test_great_tree_adjacency_vertical_and_frog_corner() -> None:
    adj, d2 = adjacency(2, 5, 3, 2)
    assert set(adj[7]) - {-1} == {6, 8, 2}  # level 1 col 2: left, right, below
    assert set(adj[0]) - {-1} == {1, 15 + 4, 5}  # row end touches seat 1's end
    assert 1 in d2[5] and 6 in d2[0]  # around a corner
    assert 10 not in d2[0]  # level 2 does not exist yet
    adj3, d3 = adjacency(2, 5, 3, 3)
    assert 10 in d3[0] and 12 in d3[2]


def test_great_tree_monkey_chooses_two_of_four() -> None:
    env = after_setup(variant="great_tree")
    while env.state_dict()["levels"] < 2 or phase(env) != "turn":
        env.step(env.legal_actions()[0])
    cur = int(env.state_array[K.CUR])
    base = cur * 15
    arrange(env, {base + 5 + 2: "monkey"}, {base + 5 + 2: 0})
    env.step(act_pos(env, base + 7))
    assert legal_positions(env) == {base + 6, base + 8, base + 2}  # level 2 not dealt yet: 3
    env.step(act_pos(env, base + 2))
    assert legal_positions(env) == {base + 6, base + 8}


# --- hidden information -------------------------------------------------------------------
@hyp(15)
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(0, 60),
       opts=st.sampled_from([{}, {"num_players": 4}, {"variant": "great_tree"}]))
def test_unknown_cards_do_not_change_observation(seed: int, k: int, opts: dict) -> None:
    env = card_envs.make_raw(ENV_ID, **opts)
    env.reset(seed=seed)
    rnd = random.Random(seed)
    for _ in range(k):
        if env.state_array[K.DONE]:
            break
        env.step(rnd.choice(env.legal_actions()))
    g = env.game
    s = env.state_array
    for seat in range(g.num_players):
        obs = env.observe(f"player_{seat}")["observation"]
        view = env.state_dict(observer=seat)
        hidden = [c for c in range(g.ncards) if not g.aside[c] and not s[L.KNOW + c] >> seat & 1]
        for _ in range(5):
            if len(hidden) < 2:
                break
            a, b = rnd.sample(hidden, 2)  # swap two unknown cards wherever they are
            alt = s.copy()
            for base, size in ((L.POS, g.npos), (L.HAND, L.MAX_PLAYERS * L.HANDMAX),
                               (L.DECK, int(s[L.DECKN]))):
                seg = alt[base:base + size]
                ia, ib = seg == a, seg == b
                seg[ia], seg[ib] = b, a
            alt[L.DISC + a], alt[L.DISC + b] = s[L.DISC + b], s[L.DISC + a]
            alt[L.KNOW + a], alt[L.KNOW + b] = s[L.KNOW + b], s[L.KNOW + a]
            o2 = np.empty_like(obs)
            g.k_observe(alt, g.cfg, seat, o2)
            assert np.array_equal(o2, obs)
            assert g.state_dict(alt, seat) == view
        text = json.dumps(view)
        for c in range(g.ncards):  # the view names exactly the cards the seat knows
            known = bool(s[L.KNOW + c] >> seat & 1)
            where = np.flatnonzero(s[L.POS:L.POS + g.npos] == c)
            if where.size:
                sp, i = divmod(int(where[0]), g.seatpos)
                cell = view["rows"][sp][i // g.rowlen][i % g.rowlen]
                assert cell == (c if known else None)
            if not known:
                assert c not in view["discard"] and all(c not in h for h in view["hands"])
        assert "deck" in text and all(x is None for x in view["deck"])


def test_resample_keeps_observation() -> None:
    env = after_setup(num_players=3)
    for seat in range(3):
        agent = f"player_{seat}"
        alt = env.resample(seat, np.random.default_rng(seat))
        assert np.array_equal(alt.observe(agent)["observation"],
                              env.observe(agent)["observation"])
        assert alt.state_dict(observer=seat) == env.state_dict(observer=seat)
        assert alt.state_dict() != env.state_dict()


# --- invariants ---------------------------------------------------------------------------
@hyp(80)
@given(seed=st.integers(0, 2**31 - 1),
       opts=st.sampled_from([{}, {"num_players": 3, "moon": True}, {"num_players": 6},
                             {"num_players": 8, "moon": True, "start_player": "random"},
                             {"variant": "great_tree", "num_players": 3},
                             {"variant": "great_tree", "num_players": 4, "series": True,
                              "max_games": 2, "moon": True},
                             {"series": True, "max_games": 2}]))
def test_random_play_invariants(seed: int, opts: dict) -> None:
    env = card_envs.make_raw(ENV_ID, **opts)
    env.reset(seed=seed)
    g = env.game
    rnd = random.Random(seed)
    for _ in range(5000):
        d = env.state_dict()
        s = env.state_array
        # 84 cards conserved, counting nulls: every real card once, nulls aside or placed
        places = [x for seat in d["rows"] for row in seat for x in row if isinstance(x, int)]
        places += [x for h in d["hands"] for x in h if isinstance(x, int)]
        places += d["deck"] + d["discard"]
        aside = [c for c in range(g.ncards) if g.aside[c]]
        assert sorted(places + aside) == list(range(84))
        nulls = sum(x == "null" for seat in d["rows"] for row in seat for x in row)
        assert nulls == d["nulls_placed"]
        assert env.legal_actions() == ref_mask(g, d)
        seat = int(s[K.CUR]) if not s[K.DONE] else 0
        assert ref_board_obs(g, env.state_dict(observer=seat), seat) == \
            env.observe(f"player_{seat}")["observation"][:3 * g.npos].tolist()
        if s[K.DONE]:
            break
        a = rnd.choice(env.legal_actions())
        expect = RefTurn(g, d).step(a) if d["phase"] in ("turn", "effect") else None
        env.step(a)
        if expect is not None:
            assert env.state_dict() == expect
    else:
        pytest.fail("game did not end")
    pts, win = g.outcome(env.state_array)
    if not opts.get("series"):
        assert pts.tolist() == ref_points(g, env.state_dict())


def test_series_shared_win_next_start_first_winner_clockwise() -> None:
    env = after_setup(num_players=3, series=True)
    arrange(env, exact(env, {7: ("panda", 9), 8: ("cat", 4), 14: ("kiwi", 9), 20: ("cat", 4)}),
            {**all_down(env), 7: 1, 8: 1, 14: 1})
    _finish_with(env, {})
    d = env.state_dict()
    assert d["totals"] == [0, 23, 23] and d["start_player"] == 1


# --- more effects and knowledge -----------------------------------------------------------
def test_parrot_copies_monkey_in_its_own_place() -> None:
    env = after_setup()
    arrange(env, {3: "parrot", 10: "monkey", 2: "dog", 4: "frog"}, {**all_down(env), 10: 1})
    env.step(act_pos(env, 3))  # the only copyable animal: the Monkey, copied automatically
    assert face(env, 2) == 1 and face(env, 4) == 1
    ef = env.state_dict()["effect_stack"][0]
    assert ef["kind"] == "monkey" and ef["copy"] and ef["step"] == 2
    assert legal_positions(env) == {2, 4}


def test_parrot_ignores_parrots_and_hermit_crabs() -> None:
    env = after_setup()
    arrange(env, {0: "parrot", 3: "parrot", 4: "hermit_crab", 9: "snake"},
            {**all_down(env), 3: 1, 4: 1, 9: 1})
    env.step(act_pos(env, 0))  # only the Snake can be copied: in the Parrot's row
    ef = env.state_dict()["effect_stack"][0]
    assert ef["kind"] == "snake" and ef["source"] == [0, 0, 0]
    assert legal_positions(env) == {1, 2, 3, 4, 5, 6}


def _to_discard(env, kind: str) -> int:
    """Swap a card of ``kind`` (from the deck) into the discard pile; returns its id."""
    s = env.state_array.copy()
    g = env.game
    deck = list(s[L.DECK:L.DECK + s[L.DECKN]])
    c = next(x for x in card_of(g, kind) if x in deck)
    x = int(np.flatnonzero(s[L.DISC:L.DISC + g.ncards])[0])
    s[L.DISC + x], s[L.DISC + c] = 0, 1
    s[L.SEQ + c], s[L.SEQ + x] = s[L.SEQ + x], s[L.SEQ + c]
    s[L.DECK + deck.index(c)] = x
    s[L.KNOW + c], s[L.KNOW + x] = s[L.KNOW + x], 0
    env.load_state_dict(g.state_dict(s))
    return c


def test_two_hermit_crabs_each_pick_once_in_order() -> None:
    env = after_setup()
    arrange(env, exact(env, {3: "hermit_crab", 4: "hermit_crab", 13: ("cat", 4)}),
            {**all_down(env), 3: 1, 4: 1})
    panda = _to_discard(env, "panda")
    _finish_with(env, {})
    g = env.game
    assert phase(env) == "hermit" and env.state_array[K.CUR] == 0
    assert env.observe("player_0")["observation"][g.npos * 3 + 2 * g.handn + 2 + panda] == 1
    env.step(g.disc0 + panda)
    assert phase(env) == "hermit" and g.disc0 + panda not in env.legal_actions()
    env.step(g.skip)
    assert env.state_array[K.DONE]
    assert env.state_dict()["hermit_bonus"] == [9, 0]
    assert g.outcome(env.state_array)[0].tolist() == [9 + 4, 4]


def test_knowledge_setup_discards_and_cards_seen_face_up() -> None:
    env = after_setup()
    full = env.state_dict()["discard"]
    for seat in (0, 1):
        view = env.state_dict(observer=seat)["discard"]
        assert len(view) == 4 and sum(x is None for x in view) == 2  # own 2 known
        assert set(x for x in view if x is not None) <= set(full)
    arrange(env, {6: "dog", 7: "panda", 8: "platypus"}, all_down(env))
    env.step(act_pos(env, 6))
    env.step(act_pos(env, 7))  # my Dog turns seat 1's Panda up
    env.step(act_pos(env, 7))  # seat 1 turns it down again
    obs = env.observe("player_0")["observation"]
    assert obs[3 * 7:3 * 7 + 3].tolist() == [0, L.PANDA, 9]  # still remembered
    assert obs[3 * 8 + 1] == -1  # never seen


def _gt_level2(seed: int = 0):
    env = after_setup(seed=seed, variant="great_tree")
    while env.state_dict()["levels"] < 2 or phase(env) != "turn":
        env.step(env.legal_actions()[0])
    return env


def test_great_tree_hawk_reaches_own_lower_row_snake_stays_in_its_row() -> None:
    env = _gt_level2()
    base = int(env.state_array[K.CUR]) * 15
    arrange(env, {base + 6: "hawk"}, {p: 0 for p in range(env.game.npos)
                                      if env.state_array[L.POS + p] >= 0})
    env.step(act_pos(env, base + 6))
    top = {base + 5 + c for c in range(5)}
    dealt = {p for p in range(env.game.npos) if env.state_array[L.POS + p] >= 0}
    assert legal_positions(env) == dealt - top  # own level-0 row included
    env = _gt_level2(seed=1)
    base = int(env.state_array[K.CUR]) * 15
    arrange(env, {base + 6: "snake"}, {p: 0 for p in range(env.game.npos)
                                       if env.state_array[L.POS + p] >= 0})
    env.step(act_pos(env, base + 6))
    assert legal_positions(env) == {base + 5, base + 7, base + 8, base + 9}


def test_great_tree_new_start_player_rule() -> None:
    from card_envs.flipology.rounds import new_start

    env = after_setup(variant="great_tree", num_players=3)
    g = env.game
    arrange(env, {0: ("panda", 9), 15: ("kiwi", 9), 30: ("quokka", 9)},
            {p: 0 for p in range(g.npos) if env.state_array[L.POS + p] >= 0})
    s = env.state_array.copy()
    s[L.FACE + 15] = s[L.FACE + 30] = 1
    new_start(s, g.cfg)
    assert s[L.START] == 1  # seats 1 and 2 tied highest: first clockwise from seat 0
    s[L.START] = 0
    s[L.FACE + 0] = 1
    new_start(s, g.cfg)
    assert s[L.START] == 0  # the previous start player is tied for highest: no change


def test_great_tree_resample_respects_regrowth() -> None:
    env = card_envs.make_raw(ENV_ID, variant="great_tree")
    env.reset(seed=2)
    g = env.game
    returned = env.state_dict()["hands"][0]
    env.step(g.skip + 1)  # seat 0 returns its 5 cards to the deck
    assert sorted(env.state_dict(observer=0)["returned"][0]) == sorted(returned)
    assert env.state_dict(observer=1)["returned"][0] == [None] * 5
    rng = np.random.default_rng(0)
    for _ in range(50):
        alt = env.resample(0, rng)
        g.check_state(alt.state_array)
        d = alt.state_dict()
        assert not set(returned) & set(d["hands"][1])  # dealt before the Regrowth
        assert set(returned) <= set(d["deck"])
