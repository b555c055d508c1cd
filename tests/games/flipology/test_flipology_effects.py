"""Flipology effects: targets, chains, the Cat, the chain bound (``docs/rules/flipology.md``).

Positions are set up by swapping chosen cards into place in a real dealt game (so every
card stays conserved), then the engine is driven through its public actions; helpers and
independent references: ``tests/games/flipology/flipology_ref.py``.
"""

from __future__ import annotations

from card_envs.core import kernels as K
from card_envs.flipology import layout as L
from flipology_ref import (
    act_pos,
    after_setup,
    all_down,
    arrange,
    card_of,
    face,
    kind_at,
    legal_positions,
    obs_cell,
    phase,
)


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
    assert obs_cell(obs_before, 10)[L.OBS_KIND] == -1  # seat 1's face-down Koala is unknown to me
    env.step(act_pos(env, 2))
    assert len(legal_positions(env)) == 13
    env.step(act_pos(env, 10))
    assert kind_at(env, 2) == "koala" and face(env, 2) == 0
    assert kind_at(env, 10) == "mole" and face(env, 10) == 1
    obs = env.observe("player_0")["observation"]
    assert obs_cell(obs, 2)[L.OBS_KIND] == L.KOALA  # moved into my row: I know it
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
    assert obs_cell(mine, 7)[L.OBS_KIND] == L.KOALA and obs_cell(mine, 15)[L.OBS_KIND] == L.PANDA
    assert obs_cell(theirs, (7 - 14) % 21)[L.OBS_KIND] == -1  # seat 2 did not see seat 1's Koala
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
    from card_envs.flipology.parts.effects import start_frame
    s = env.state_array.copy()
    s[L.CHAIN] = L.CHAIN_LIMIT
    start_frame(s, env.game.cfg, 1)
    assert s[L.EF_KIND] == -1


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
