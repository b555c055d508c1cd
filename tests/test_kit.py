"""The shared checks of ``tests/kit.py``, run for every registered game configuration.

The cases are the test_cases of every manifest."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pettingzoo.test import api_test, seed_test

import card_envs
from card_envs import IllegalActionError, OptionError, StateDictError
from card_envs.core import kernels as K
from card_envs.core.env import ResetNeededError
from kit import Case, digest, play_steps, random_action, snapshot

CASES = [Case(m.env_id, dict(o)) for m in card_envs.core.registry.manifests()
         for o in m.test_cases]
FIRST = {c.env_id: c for c in reversed(CASES)}  # one case per game for the costlier checks
IDS = [c.id for c in CASES]
FIRST_IDS = list(FIRST)

cases = pytest.mark.parametrize("case", CASES, ids=IDS)
first_cases = pytest.mark.parametrize("case", list(FIRST.values()), ids=FIRST_IDS)
FUZZ = settings(max_examples=15, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])


# --- registry and PettingZoo conformance ---------------------------------------------------
def test_registry_lists_every_game_once() -> None:
    assert len(set(card_envs.ENV_IDS)) == len(card_envs.ENV_IDS)
    assert set(FIRST) == set(card_envs.ENV_IDS), "every registered game needs a kit CASE"
    for env_id in card_envs.ENV_IDS:
        mod = getattr(card_envs, env_id)
        assert type(mod.env()).__name__ == type(mod.raw_env()).__name__
        assert mod.env().illegal_action == "lose" and mod.raw_env().illegal_action == "raise"
    with pytest.raises(OptionError, match="unknown env id"):
        card_envs.make("nope_v0")


def test_module_style_import() -> None:
    from card_envs import slide_v0

    env = slide_v0.env()
    env.reset(seed=0)
    assert env.agents == ["player_0", "player_1"]


@cases
def test_pettingzoo_api(case: Case) -> None:
    api_test(case.wrapped(), num_cycles=200)
    api_test(case.raw(), num_cycles=200)


@first_cases
def test_pettingzoo_seed(case: Case) -> None:
    seed_test(case.wrapped, num_cycles=200)


@first_cases
def test_determinism_across_processes(case: Case) -> None:
    here = digest(case.env_id, case.options, seed=123)
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from kit import digest; "
            f"print(digest({case.env_id!r}, {case.options!r}, seed=123))")
    env = {**os.environ, "PYTHONHASHSEED": "7"}
    out = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent)],
                         capture_output=True, text=True, env=env, check=True, timeout=300)
    assert out.stdout.strip() == here
    assert digest(case.env_id, case.options, seed=124) != here


# --- random play with invariants ----------------------------------------------------------
@cases
@FUZZ
@given(seed=st.integers(0, 2**31 - 1))
def test_fuzz_invariants(case: Case, seed: int) -> None:
    env = case.raw()
    env.reset(seed=seed)
    rnd = random.Random(seed)
    space = env.observation_space(env.possible_agents[0])
    game = env.game
    for steps in range(100_000):
        st_ = env.state_array
        game.check_state(st_)
        if st_[K.DONE]:
            break
        agent = env.agent_selection
        obs = env.observe(agent)
        assert space.contains(obs), f"observation outside its space at step {steps}"
        assert obs["action_mask"].dtype == np.int8 and obs["action_mask"].sum() >= 1
        for other in env.agents:
            if other != agent:
                assert env.observe(other)["action_mask"].sum() == 0
        assert env.game.legal_actions(st_) == np.flatnonzero(obs["action_mask"]).tolist()
        env.step(random_action(env, rnd))
    else:
        pytest.fail("game did not end")
    points, winners = game.outcome(env.state_array)
    rewards = [env._cumulative_rewards[a] for a in env.possible_agents]
    for i, a in enumerate(env.possible_agents):
        assert env.infos[a] == {"points": points[i], "winner": bool(winners[i])}
        truncated = env.state_array[K.DONE] == K.DONE_TRUNCATED
        assert env.truncations[a] == truncated and env.terminations[a] == (not truncated)
    if game.options["reward_mode"] == "win":
        expect = [0.0] * len(rewards) if winners.all() else \
            [1.0 if w else -1.0 for w in winners]
        assert rewards == expect
    assert json.loads(json.dumps(env.state_dict()))["current_player"] is None


# --- bad input ----------------------------------------------------------------------------
def _started(case: Case, steps: int = 5, wrapped: bool = False):
    env = case.wrapped() if wrapped else case.raw()
    env.reset(seed=11)
    play_steps(env, random.Random(3), steps)
    return env


BAD_ACTIONS = [-1, 10**9, 1.0, "1", np.float32(2), np.array([1, 2]), np.array([[0]]),
               True, [0], None, np.array(0.5)]


@cases
@pytest.mark.parametrize("wrapped", [False, True])
def test_bad_actions_raise_and_change_nothing(case: Case, wrapped: bool) -> None:
    env = _started(case, wrapped=wrapped)
    before = snapshot(env)
    for bad in [*BAD_ACTIONS, env.game.num_actions]:
        with pytest.raises(IllegalActionError) as e:
            env.step(bad)
        assert isinstance(e.value, ValueError) and e.value.phase in env.game.phases
        assert snapshot(env) == before, f"state changed by bad action {bad!r}"
    if not wrapped:
        masked = np.flatnonzero(env.observe(env.agent_selection)["action_mask"] == 0)
        assert masked.size, "every kit position must offer a masked-out action to test"
        with pytest.raises(IllegalActionError, match="not legal") as e:
            env.step(int(masked[0]))
        assert e.value.legal == env.legal_actions()
        assert snapshot(env) == before


@cases
def test_numpy_integers_accepted(case: Case) -> None:
    for conv in (np.int64, np.int32, np.uint16, np.array, lambda a: np.array([a])):
        env = _started(case)
        ref = env.clone()
        a = env.legal_actions()[0]
        env.step(conv(a))
        ref.step(a)
        assert snapshot(env) == snapshot(ref)


@cases
def test_masked_action_in_wrapped_env_loses(case: Case) -> None:
    env = _started(case, wrapped=True)
    mask = env.observe(env.agent_selection)["action_mask"]
    masked = np.flatnonzero(mask == 0)
    assert masked.size, "every kit position must offer a masked-out action to test"
    offender = env.agent_selection
    env.step(int(masked[0]))
    assert all(env.terminations.values())
    for a in env.agents:
        assert env._cumulative_rewards[a] == (-1.0 if a == offender else 0.0)
    with pytest.raises(IllegalActionError, match="over"):
        env.step(0)
    for _ in env.agent_iter():
        env.step(None)
    assert env.agents == []


@cases
def test_step_after_end_raises(case: Case) -> None:
    env = case.raw()
    env.reset(seed=5)
    play_steps(env, random.Random(5), 10**6)
    before = snapshot(env)
    for a in (0, 1, np.int64(0)):
        with pytest.raises(IllegalActionError, match="over"):
            env.step(a)
    assert snapshot(env) == before


@first_cases
def test_use_before_reset_raises(case: Case) -> None:
    env = case.raw()
    with pytest.raises(ResetNeededError):
        env.step(0)
    with pytest.raises(ResetNeededError):
        env.observe("player_0")
    with pytest.raises(OptionError, match="options"):
        env.reset(seed=0, options={"num_players": 3})
    env.reset(seed=0, options={"num_players": 2})  # unchanged option: accepted


@first_cases
def test_invalid_options_raise(case: Case) -> None:
    g = card_envs.env_class(case.env_id).game_class
    for n in (g.min_players - 1, g.max_players + 1, 2.0, "2", None, True):
        with pytest.raises(OptionError, match="num_players"):
            card_envs.make(case.env_id, num_players=n)
    with pytest.raises(OptionError, match="unknown option"):
        card_envs.make(case.env_id, players=2)
    with pytest.raises(OptionError, match="reward_mode"):
        card_envs.make(case.env_id, reward_mode="score")
    for s in (-1, g.min_players, "first", 0.0):
        with pytest.raises(OptionError, match="start_player"):
            card_envs.make(case.env_id, num_players=g.min_players, start_player=s)
    with pytest.raises(OptionError, match="render_mode"):
        card_envs.make(case.env_id, render_mode="rgb")
    assert issubclass(OptionError, ValueError)
    with pytest.raises(OptionError, match="seed"):
        case.raw().reset(seed=-1)


# --- state I/O, clone ---------------------------------------------------------------------
@cases
@FUZZ
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(0, 200))
def test_state_dict_round_trip_mid_game(case: Case, seed: int, k: int) -> None:
    env = case.raw()
    env.reset(seed=seed)
    play_steps(env, random.Random(seed), k)
    d = json.loads(json.dumps(env.state_dict()))
    other = case.raw()
    other.reset(seed=seed + 1)
    other.load_state_dict(d)
    assert other.state_dict() == env.state_dict()
    if env.state_array[K.DONE]:  # a finished game's last rewards are step history
        return
    assert snapshot(other) == snapshot(env)
    twin = env.clone()
    r1, r2, r3 = random.Random(k), random.Random(k), random.Random(k)
    play_steps(env, r1, 10**6)
    play_steps(other, r2, 10**6)
    play_steps(twin, r3, 10**6)
    assert snapshot(other) == snapshot(env) == snapshot(twin)
    for a in env.possible_agents:
        assert env.infos[a] == other.infos[a]


@first_cases
def test_clone_is_independent(case: Case) -> None:
    env = _started(case)
    before = snapshot(env)
    twin = env.clone()
    play_steps(twin, random.Random(0), 20)
    assert snapshot(env) == before
    assert snapshot(twin) != before


@first_cases
def test_bad_state_dict_keeps_old_state(case: Case) -> None:
    env = _started(case)
    before = snapshot(env)
    good = env.state_dict()
    field = next(k for k in good if k not in ("game", "version", "options", "phase",
                                                "current_player", "steps", "rng", "truncated"))
    bad_dicts = [
        None, [], {}, {**good, "game": "other"}, {**good, "version": "99"},
        {k: v for k, v in good.items() if k != field}, {**good, field: "garbage"},
        {**good, "phase": "nope"}, {**good, "current_player": 99},
        {**good, "options": {**good["options"], "num_players": 99}},
        env.state_dict(observer=0),
    ]
    for bad in bad_dicts:
        with pytest.raises(StateDictError):
            env.load_state_dict(bad)
        assert snapshot(env) == before


# --- hidden information -------------------------------------------------------------------
@cases
@FUZZ
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(0, 150))
def test_hidden_information_invariance(case: Case, seed: int, k: int) -> None:
    env = case.raw()
    env.reset(seed=seed)
    play_steps(env, random.Random(seed), k)
    rng = np.random.default_rng(seed)
    changed = False
    for seat, agent in enumerate(env.possible_agents):
        obs = env.observe(agent)
        view = env.state_dict(observer=seat)
        for _ in range(3):
            alt = env.resample(seat, rng)
            env.game.check_state(alt.state_array)
            assert np.array_equal(alt.observe(agent)["observation"], obs["observation"])
            assert np.array_equal(alt.observe(agent)["action_mask"], obs["action_mask"])
            assert alt.state_dict(observer=seat) == view
            changed |= alt.state_dict() != env.state_dict()
    if not env.game.perfect_information and not env.state_array[K.DONE]:
        assert changed, "resample never changed the hidden state"


# --- batched engine -----------------------------------------------------------------------
@cases
def test_vector_matches_aec(case: Case) -> None:
    B, seed = 3, 77
    vec = card_envs.vector.make(case.env_id, num_envs=B, seed=seed, **case.options)
    envs = [case.raw() for _ in range(B)]
    for i, e in enumerate(envs):
        e.reset(seed=seed + i)
    ended = [False] * B
    for _ in range(50_000):  # until every game has crossed an auto-reset
        if all(ended):
            break
        for i, e in enumerate(envs):
            seat = int(vec.current_player[i])
            assert e.agent_selection == e.possible_agents[seat]
            o = e.observe(e.agent_selection)
            assert np.array_equal(o["observation"], vec.observations[i])
            assert np.array_equal(o["action_mask"], vec.action_masks[i])
        actions = vec.sample_actions().copy()
        _, _, _, rewards, term, trunc = vec.step(actions)
        for i, e in enumerate(envs):
            e.step(int(actions[i]))
            assert bool(term[i]) == (e.state_array[K.DONE] == K.DONE_TERMINATED)
            assert bool(trunc[i]) == (e.state_array[K.DONE] == K.DONE_TRUNCATED)
            got = [e.rewards.get(a, 0.0) for a in e.possible_agents]
            assert np.allclose(rewards[i], got)
            if term[i] or trunc[i]:
                ended[i] = True
                e.reset()
    assert all(ended), "the comparison must cross at least one auto-reset per game"


@first_cases
def test_vector_rejects_illegal_actions_without_stepping(case: Case) -> None:
    vec = card_envs.vector.make(case.env_id, num_envs=4, seed=1, **case.options)
    before = vec.states.copy()
    actions = vec.sample_actions().copy()
    masked = np.flatnonzero(vec.action_masks[2] == 0)
    assert masked.size, "every kit position must offer a masked-out action to test"
    for bad in ([*actions[:2], -1, actions[3]], [*actions[:2], vec.num_actions, actions[3]],
                [*actions[:2], masked[0], actions[3]]):
        with pytest.raises(IllegalActionError, match="game 2"):
            vec.step(np.array(bad))
        assert np.array_equal(vec.states, before)
    with pytest.raises(IllegalActionError, match="shape"):
        vec.step(actions[:3])
    with pytest.raises(IllegalActionError):
        vec.step(actions.astype(np.float64))


@first_cases
def test_engine_loop(case: Case) -> None:
    eng = card_envs.Engine(case.env_id, **case.options)
    env = case.raw()
    env.reset(seed=9)
    s = eng.new_state(9)
    assert np.array_equal(s, env.state_array)
    rnd = random.Random(1)
    while not eng.is_terminal(s):
        a = rnd.choice(eng.legal_actions(s))
        with pytest.raises(IllegalActionError):
            eng.apply(s, -1)
        eng.apply(s, a)
        env.step(a)
        assert np.array_equal(s, env.state_array)
    assert eng.current_player(s) == -1


@first_cases
def test_render_and_action_names(case: Case) -> None:
    env = case.raw(render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert isinstance(text, str) and text
    names = {env.action_to_str(a) for a in range(env.game.num_actions)}
    assert len(names) == env.game.num_actions, "action names must be distinct"
    quiet = case.raw()
    quiet.reset(seed=0)
    assert quiet.render() is None


@first_cases
def test_env_matches_pettingzoo_classic_wrappers(case: Case) -> None:
    """env()'s native illegal-move handling gives what PettingZoo's wrapper stack gives."""
    from pettingzoo.utils import wrappers

    ours = _started(case, wrapped=True)
    theirs = wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(
        wrappers.TerminateIllegalWrapper(case.raw(), illegal_reward=-1)))
    theirs.reset(seed=11)
    play_steps(theirs, random.Random(3), 5)
    mask = ours.observe(ours.agent_selection)["action_mask"]
    bad = int(np.flatnonzero(mask == 0)[0])
    assert theirs.observe(theirs.agent_selection)["action_mask"].tolist() == mask.tolist()
    with pytest.warns(UserWarning):
        ours.step(bad)
    theirs.step(bad)
    for a in ours.possible_agents:
        assert ours._cumulative_rewards[a] == theirs._cumulative_rewards[a]
        assert ours.terminations[a] == theirs.terminations[a]
    for _ in ours.agent_iter(max_iter=10 * len(ours.possible_agents)):
        ours.step(None)  # every agent leaves through a dead step
    assert ours.agents == []


def test_runs_without_jit() -> None:
    """NUMBA_DISABLE_JIT=1 (debugging, coverage) runs the same engine as plain Python."""
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from kit import digest; "
            "print(digest('slide_v0', {}, seed=5, games=1))")
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code, str(Path(__file__).parent)],
                         capture_output=True, text=True, env=env, check=True, timeout=300)
    assert out.stdout.strip() == digest("slide_v0", {}, seed=5, games=1)
