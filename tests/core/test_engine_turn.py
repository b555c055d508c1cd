"""``Engine.step_observe`` / ``observe_turn``: one compiled call per turn that equals the separate
calls (``apply``, ``legal_mask``, ``observe`` of the seat to act, ``legal_actions``) on random
playouts of every game, and refuses bad input with the precise error, the state unchanged."""

from __future__ import annotations

import copy
import pickle
import random

import numba
import numpy as np
import pytest

import card_envs
from card_envs import CardEnvError, Engine, IllegalActionError

GAMES = [*card_envs.ENV_IDS, "toy_v0"]  # the toy: a game registered from outside the package


def _playout(eng: Engine, seed: int, max_steps: int = 400) -> int:
    """Play ``eng`` with step_observe and, in lockstep, with the separate calls on a second
    copy of the state; assert they agree at every turn. Returns the steps played."""
    rnd = random.Random(seed)
    state, ref = eng.new_state(seed), eng.new_state(seed)
    obs, mask = eng.obs, eng.mask
    n = eng.observe_turn(state)
    steps = 0
    while True:
        legal = eng.legal_actions(ref)  # first: If It Fits' legal_mask writes into the state
        assert np.array_equal(state, ref)
        assert n == len(legal) and eng.legal[:n].tolist() == legal
        assert np.array_equal(mask, eng.legal_mask(ref))
        if not n:
            assert eng.is_terminal(ref) and not mask.any()
            return steps
        assert np.array_equal(obs, eng.observe(ref, eng.current_player(ref)))
        if steps == max_steps:
            return steps
        action = rnd.choice(legal)
        rewards = eng.apply(ref, action)
        n = eng.step_observe(state, action if steps % 2 else np.int64(action))
        assert np.array_equal(eng.rewards, rewards)
        assert eng.obs is obs and eng.mask is mask  # the same buffers, overwritten
        steps += 1


@pytest.mark.parametrize("env_id", GAMES)
def test_step_observe_equals_the_separate_calls(env_id: str) -> None:
    eng = Engine(env_id)
    assert sum(_playout(eng, seed) for seed in range(3)) > 0


def test_step_observe_at_more_seats() -> None:
    for env_id in card_envs.ENV_IDS:
        cls = card_envs.env_class(env_id).game_class
        if cls.max_players > 2:
            _playout(Engine(env_id, num_players=cls.max_players), seed=5, max_steps=150)


def _mid_game(env_id: str, steps: int = 3) -> tuple[Engine, np.ndarray]:
    eng = Engine(env_id)
    state = eng.new_state(1)
    rnd = random.Random(1)
    for _ in range(steps):
        eng.step(state, rnd.choice(eng.legal_actions(state)))
    return eng, state


@pytest.mark.parametrize("env_id", card_envs.ENV_IDS)
def test_bad_actions_raise_and_leave_the_state_unchanged(env_id: str) -> None:
    eng, state = _mid_game(env_id)
    before = state.copy()
    legal = eng.legal_actions(state)
    masked = next(a for a in range(eng.num_actions) if a not in legal)
    bad = [(masked, "masked out"), (-1, "out of range"), (eng.num_actions, "out of range"),
           (np.int64(eng.num_actions), "out of range"), (2**70, "out of range"),
           (1.0, "integers"), (True, "integers"), ("3", "integers"), (None, "integers"),
           (np.float64(legal[0]), "integers")]
    for action, why in bad:
        with pytest.raises(IllegalActionError, match=why) as e:
            eng.step_observe(state, action)
        assert np.array_equal(state, before), action
        assert e.value.legal == legal and e.value.phase == eng.game.phase_name(state)
    # numpy integers and 0-d integer arrays are integers
    for action in (np.int32(legal[0]), np.uint8(legal[0]), np.array(legal[0])):
        s = before.copy()
        eng.step_observe(s, action)
        ref = before.copy()
        eng.apply(ref, legal[0])
        assert np.array_equal(s, ref)


def test_a_finished_game_takes_no_action() -> None:
    eng = Engine("isflak_v0")
    state = eng.new_state(0)
    rnd = random.Random(0)
    n = eng.observe_turn(state)
    while n:
        n = eng.step_observe(state, eng.legal[rnd.randrange(n)])
    final = state.copy()
    with pytest.raises(IllegalActionError, match="game is over") as e:
        eng.step_observe(state, 0)
    assert e.value.legal == [] and np.array_equal(state, final)
    assert eng.observe_turn(state) == 0 and not eng.mask.any()


@pytest.mark.parametrize("env_id", ["slide_v0", "if_it_fits_v0"])
def test_bad_states_raise_before_a_kernel_runs(env_id: str) -> None:
    eng, state = _mid_game(env_id)
    other = Engine("op_glad_ijs_v0" if env_id == "slide_v0" else "slide_v0").new_state(0)
    wide = np.zeros(2 * state.size, np.int32)
    wide[::2] = state
    bad = [other, state.astype(np.int64), state.astype(np.float32), wide[::2], state[::-1],
           state[:-1], state.reshape(1, -1), state.tolist(), None]
    for s in bad:
        kept = copy.deepcopy(s)
        with pytest.raises(CardEnvError, match="state must be") as e:
            eng.step_observe(s, eng.legal_actions(state)[0])
        assert not isinstance(e.value, IllegalActionError)
        with pytest.raises(CardEnvError, match="state must be"):
            eng.observe_turn(s)
        if isinstance(s, np.ndarray):
            assert np.array_equal(s, kept)
    frozen = state.copy()
    frozen.flags.writeable = False
    with pytest.raises(CardEnvError, match="state must be"):
        eng.step_observe(frozen, eng.legal_actions(state)[0])


def test_engines_pickle_and_copy_with_their_own_buffers() -> None:
    eng, state = _mid_game("slide_v0")
    n = eng.observe_turn(state)
    for twin in (pickle.loads(pickle.dumps(eng)), copy.deepcopy(eng)):
        assert twin.observe_turn(state) == n
        assert np.array_equal(twin.obs, eng.obs) and twin.obs is not eng.obs
        assert np.shares_memory(twin.obs, twin._ws)
        s = state.copy()
        twin.step_observe(s, twin.legal[0])
        assert not np.array_equal(s, state)


def test_new_state_deals_the_same_game_in_the_turn_loop() -> None:
    """Once the turn loop runs, ``new_state`` deals in one compiled call: the same deals as
    ``Game.new_state`` (before it, and for seeds beyond int64, the Game's own path)."""
    for env_id in card_envs.ENV_IDS:
        eng = Engine(env_id)
        seeds = [0, 1, 7, 2**31, 2**63 - 1, 2**63, 2**70]
        before = [eng.new_state(s) for s in seeds]
        assert not eng._fast_new  # nothing built or compiled by new_state alone
        eng.observe_turn(before[0])
        assert eng._fast_new
        for s, b in zip(seeds, before):
            assert np.array_equal(eng.new_state(s), b)
            assert np.array_equal(eng.game.new_state(s), b)
        for bad in (-1, 1.5, "3", True):
            with pytest.raises(card_envs.OptionError, match="seed must be"):
                eng.new_state(bad)


@numba.njit
def _all_legal(state: np.ndarray, cfg: np.ndarray, mask: np.ndarray) -> None:
    mask[:] = 1


def test_every_action_legal_stays_inside_the_buffers() -> None:
    """The legal-action scan writes a word at a time: with every action legal (Isflak's 227
    actions end inside a word) it must not run into the next buffer (the rewards)."""
    game = card_envs.env_class("isflak_v0").game_class()
    assert game.num_actions % 8
    game.k_legal_mask = _all_legal
    eng = Engine(game)
    eng.rewards[:] = 7.0
    assert eng.observe_turn(eng.game.new_state(0)) == eng.num_actions
    assert eng.legal.tolist() == list(range(eng.num_actions)) and eng.mask.all()
    assert eng.rewards.tolist() == [7.0] * eng.num_players
