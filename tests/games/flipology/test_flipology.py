"""Flipology (``flipology_v0``) rule tests against ``docs/rules/flipology.md``: the deck, the
options and every "Examples (must be tests)" item of the spec.

Positions are set up by swapping chosen cards into place in a real dealt game (so every
card stays conserved), then the engine is driven through its public actions; helpers and
independent references: ``tests/games/flipology/flipology_ref.py``.
More: ``test_flipology_effects.py``, ``test_flipology_end.py``, ``test_flipology_great_tree.py``,
``test_flipology_info.py``.
"""

from __future__ import annotations

import json
import re

import pytest

import card_envs
from card_envs import OptionError, StateDictError
from card_envs.core import kernels as K
from card_envs.core.env import CardEnv
from card_envs.flipology import layout as L
from card_envs.flipology.game import adjacency
from card_envs.flipology.parts.deck import default_deck
from card_envs.testing import snapshot
from flipology_ref import (
    ENV_ID,
    act_pos,
    after_setup,
    all_down,
    arrange,
    card_of,
    face,
    legal_positions,
    phase,
    ref_points,
)


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
    from card_envs.flipology.queries import seat_points
    assert seat_points(env.state_array, env.game.cfg, 0) == 12
    assert ref_points(env.game, env.state_dict())[0] == 12


# --- state dicts ----------------------------------------------------------------------------
def _with_discard() -> CardEnv:
    """A game in its turns with an animal in the discard pile."""
    env = card_envs.make_raw(ENV_ID)
    env.reset(seed=0)
    g = env.game
    while not any(g.kinds[c] <= L.RED_PANDA for c in env.state_dict()["discard"]):
        env.step(env.legal_actions()[0])
    return env


@pytest.mark.parametrize("field", ["known", "discard", "picked", "returned"])
def test_a_card_listed_twice_is_refused_not_merged(field: str) -> None:
    """Every list of card ids in a state dict names each card once: a repeated card is a
    malformed dict (StateDictError, env unchanged), not one to de-duplicate silently."""
    if field == "returned":  # a Great Tree seat that used its Regrowth
        env = card_envs.make_raw(ENV_ID, variant="great_tree")
        env.reset(seed=1)
        env.step(env.game.skip + L.A_REGROW)
    else:
        env = _with_discard()
    d = env.state_dict()
    if field == "picked":  # a Hermit crab picked the discarded animal: valid as it is
        c = next(c for c in d["discard"] if env.game.kinds[c] <= L.RED_PANDA)
        d["picked"] = [[c, "up"]]
        env.load_state_dict(d)
    before = snapshot(env)
    bad = json.loads(json.dumps(d))
    seat_lists = field in ("known", "returned")
    entries = bad[field][0] if seat_lists else bad[field]
    assert entries, "the position needs an entry to repeat"
    entries.append(entries[0])
    card = entries[0][0] if field == "picked" else entries[0]
    where = f"{field}[0]" if seat_lists else field
    with pytest.raises(StateDictError, match=rf"^{re.escape(where)} lists card {card} twice$") \
            as e:
        env.load_state_dict(bad)
    assert e.value.__cause__ is None and snapshot(env) == before
