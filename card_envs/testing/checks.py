"""The checks every game must pass, written once (as ``pettingzoo.test`` does for PettingZoo).

Each ``check_*`` takes a :class:`~card_envs.testing.kit.Case` (an env id and options) and
raises ``AssertionError`` with a message when the game breaks the contract. The randomized
ones take a ``seed`` (and a step count ``k``) so a property-based runner such as hypothesis
can drive them; :func:`check_game` runs them all with a few seeds.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from card_envs.core import kernels as K
from card_envs.core import vector
from card_envs.core.contract import contract_problems, package_of
from card_envs.core.engine import Engine
from card_envs.core.env import ResetNeededError
from card_envs.core.errors import IllegalActionError, OptionError, StateDictError
from card_envs.core.registry import ENV_IDS, env_class, env_module, make, manifest
from card_envs.testing.kit import Case, digest, play_steps, random_action, snapshot

BAD_ACTIONS = [-1, 10**9, 1.0, "1", np.float32(2), np.array([1, 2]), np.array([[0]]),
               True, [0], None, np.array(0.5)]


@contextmanager
def raises(exc: type[BaseException] | tuple[type[BaseException], ...],
           match: str | None = None) -> Iterator[dict[str, BaseException]]:
    """Assert that the block raises ``exc`` (whose message matches ``match``); the exception
    is put in the yielded dict under ``"value"``."""
    box: dict[str, BaseException] = {}
    try:
        yield box
    except exc as e:
        if match is not None and not re.search(match, str(e)):
            raise AssertionError(f"{type(e).__name__} message {str(e)!r} does not match "
                                 f"{match!r}") from e
        box["value"] = e
        return
    raise AssertionError(f"expected {exc} to be raised")


def _started(case: Case, steps: int = 5, wrapped: bool = False) -> Any:
    env = case.wrapped() if wrapped else case.raw()
    env.reset(seed=11)
    play_steps(env, random.Random(3), steps)
    return env


def _masked(env: Any) -> np.ndarray:
    masked = np.flatnonzero(env.observe(env.agent_selection)["action_mask"] == 0)
    assert masked.size, "every kit position must offer a masked-out action to test"
    return masked


# --- registry and PettingZoo conformance ---------------------------------------------------
def check_contract(case: Case) -> None:
    """The game's folder keeps the game contract (:mod:`card_envs.core.contract`): the same
    modules, with the same public names, as every other game."""
    problems = contract_problems(package_of(manifest(case.env_id).env))
    assert not problems, f"{case.env_id} breaks the game contract:\n" + "\n".join(problems)


def check_module_entry_points(case: Case) -> None:
    """``env()`` loses on an illegal action, ``raw_env()`` raises; same class."""
    mod = env_module(case.env_id)
    assert type(mod.env()).__name__ == type(mod.raw_env()).__name__
    assert mod.env().illegal_action == "lose" and mod.raw_env().illegal_action == "raise"


def check_pettingzoo_api(case: Case, num_cycles: int = 200) -> None:
    """PettingZoo's own ``api_test`` on the wrapped and the raw env."""
    from pettingzoo.test import api_test

    api_test(case.wrapped(), num_cycles=num_cycles)
    api_test(case.raw(), num_cycles=num_cycles)


def check_pettingzoo_seed(case: Case, num_cycles: int = 200) -> None:
    """PettingZoo's ``seed_test``: the same seed gives the same game."""
    from pettingzoo.test import seed_test

    seed_test(case.wrapped, num_cycles=num_cycles)


def check_determinism_across_processes(case: Case, seed: int = 123) -> None:
    """Same seed and actions give the same digest in a fresh process (with another hash
    seed), and another seed gives another game."""
    here = digest(case.env_id, case.options, seed=seed)
    register = ""
    if case.env_id not in ENV_IDS:  # a game registered at run time: its package's manifest
        package = manifest(case.env_id).env.partition(":")[0].rpartition(".")[0]
        register = (f"import card_envs, importlib; card_envs.register(importlib.import_module("
                    f"{package + '.manifest'!r}).MANIFEST); ")
    code = ("import sys, json; sys.path[:0] = json.loads(sys.argv[1]); " + register +
            "from card_envs.testing.kit import digest; "
            f"print(digest({case.env_id!r}, {case.options!r}, seed={seed}))")
    env = {**os.environ, "PYTHONHASHSEED": "7"}
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code, json.dumps(sys.path)],
                         capture_output=True, text=True, env=env, check=True, timeout=600)
    assert out.stdout.strip() == here, "another process played another game"
    assert digest(case.env_id, case.options, seed=seed + 1) != here


# --- random play with invariants ----------------------------------------------------------
def check_random_play(case: Case, seed: int) -> None:
    """One random game: ``check_state`` after every step, observations in their space, one
    seat to act, masks equal ``legal_actions``, at most ``max_length()`` actions, winners at
    the declared end of the points, terminal infos and rewards as documented."""
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
        raise AssertionError("game did not end")
    cap = game.max_length()
    assert cap is None or steps <= cap, f"{steps} actions, more than max_length() = {cap}"
    points, winners = game.outcome(env.state_array)
    wp = points[winners == 1]
    assert any(np.all(wp == (points.max() if d > 0 else points.min()))
               for d in game.winner_points), f"winners {winners} hold no extreme of {points}"
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
def check_bad_actions(case: Case, wrapped: bool = False) -> None:
    """Malformed and out-of-range actions raise ``IllegalActionError`` and change nothing;
    in the raw env a masked-out action does too, naming the legal ones."""
    env = _started(case, wrapped=wrapped)
    before = snapshot(env)
    for bad in [*BAD_ACTIONS, env.game.num_actions]:
        with raises(IllegalActionError) as e:
            env.step(bad)
        assert isinstance(e["value"], ValueError) and e["value"].phase in env.game.phases
        assert snapshot(env) == before, f"state changed by bad action {bad!r}"
    if not wrapped:
        masked = _masked(env)
        with raises(IllegalActionError, match="not legal") as e:
            env.step(int(masked[0]))
        assert e["value"].legal == env.legal_actions()
        assert snapshot(env) == before


def check_numpy_integers(case: Case) -> None:
    """numpy integers and one-element integer arrays act like Python ints."""
    for conv in (np.int64, np.int32, np.uint16, np.array, lambda a: np.array([a])):
        env = _started(case)
        ref = env.clone()
        a = env.legal_actions()[0]
        env.step(conv(a))
        ref.step(a)
        assert snapshot(env) == snapshot(ref)


def check_masked_action_loses(case: Case) -> None:
    """In the wrapped env a masked-out action ends the game: -1 for the offender, 0 else."""
    env = _started(case, wrapped=True)
    masked = _masked(env)
    offender = env.agent_selection
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(int(masked[0]))
    assert all(env.terminations.values())
    for a in env.agents:
        assert env._cumulative_rewards[a] == (-1.0 if a == offender else 0.0)
    with raises(IllegalActionError, match="over"):
        env.step(0)
    for _ in env.agent_iter():
        env.step(None)
    assert env.agents == []


def check_step_after_end(case: Case) -> None:
    """Stepping a finished game raises and changes nothing."""
    env = case.raw()
    env.reset(seed=5)
    play_steps(env, random.Random(5), 10**6)
    before = snapshot(env)
    for a in (0, 1, np.int64(0)):
        with raises(IllegalActionError, match="over"):
            env.step(a)
    assert snapshot(env) == before


def check_use_before_reset(case: Case) -> None:
    """step/observe before reset raise; reset options may not change the configuration."""
    env = case.raw()
    with raises(ResetNeededError):
        env.step(0)
    with raises(ResetNeededError):
        env.observe("player_0")
    n = env.game.num_players
    other = n + 1 if n < env.game.max_players else n - 1
    with raises(OptionError, match="options"):
        env.reset(seed=0, options={"num_players": other})
    env.reset(seed=0, options={"num_players": n})  # unchanged option: accepted


def check_invalid_options(case: Case) -> None:
    """Bad shared options raise ``OptionError`` naming the option."""
    g = env_class(case.env_id).game_class
    for n in (g.min_players - 1, g.max_players + 1, 2.0, "2", None, True):
        with raises(OptionError, match="num_players"):
            make(case.env_id, num_players=n)
    with raises(OptionError, match="unknown option"):
        make(case.env_id, players=2)
    with raises(OptionError, match="reward_mode"):
        make(case.env_id, reward_mode="score")
    for s in (-1, g.min_players, "first", 0.0):
        with raises(OptionError, match="start_player"):
            make(case.env_id, num_players=g.min_players, start_player=s)
    with raises(OptionError, match="render_mode"):
        make(case.env_id, render_mode="rgb")
    assert issubclass(OptionError, ValueError)
    with raises(OptionError, match="seed"):
        case.raw().reset(seed=-1)


# --- state I/O, clone ---------------------------------------------------------------------
def check_state_dict_round_trip(case: Case, seed: int, k: int) -> None:
    """After ``k`` random steps, the JSON state dict loads into another env, which then plays
    on exactly like the original and its clone."""
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


def check_clone_independent(case: Case) -> None:
    """Playing a clone leaves the original untouched."""
    env = _started(case)
    before = snapshot(env)
    twin = env.clone()
    play_steps(twin, random.Random(0), 20)
    assert snapshot(env) == before
    assert snapshot(twin) != before


def check_bad_state_dicts(case: Case) -> None:
    """Broken state dicts raise ``StateDictError`` and keep the old state."""
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
        with raises(StateDictError):
            env.load_state_dict(bad)
        assert snapshot(env) == before


# --- hidden information -------------------------------------------------------------------
def check_hidden_information(case: Case, seed: int, k: int) -> None:
    """Resampling what a seat cannot know leaves its observation, mask and observer state
    dict unchanged, passes ``check_state``, and (in a hidden-information game) changes the
    hidden state at least once."""
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


def check_global_state(case: Case) -> None:
    """``state()`` (for centralized critics) lies in ``state_space``, is the whole state but
    the RNG words, is a copy, and follows the game; the parallel env (if any) has it too."""
    env = _started(case)
    g = env.state()
    assert env.state_space.contains(g) and g.shape == env.state_space.shape
    assert np.array_equal(g, env.state_array[K.RNG_HI + 1:])
    g[:] = 0
    assert not np.array_equal(env.state(), g), "state() must return a copy"
    before = env.state()
    play_steps(env, random.Random(1), 1)
    assert not np.array_equal(env.state(), before), "state() did not follow a step"


# --- batched engine -----------------------------------------------------------------------
def check_vector_matches_aec(case: Case, num_envs: int = 3, seed: int = 77) -> None:
    """The batched engine plays the same games as AEC envs, across auto-resets."""
    B = num_envs
    vec = vector.make(case.env_id, num_envs=B, seed=seed, **case.options)
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


def check_vector_rejects_illegal(case: Case) -> None:
    """The batched engine refuses a batch with one bad action and steps no game."""
    vec = vector.make(case.env_id, num_envs=4, seed=1, **case.options)
    before = vec.states.copy()
    actions = vec.sample_actions().copy()
    masked = np.flatnonzero(vec.action_masks[2] == 0)
    assert masked.size, "every kit position must offer a masked-out action to test"
    for bad in ([*actions[:2], -1, actions[3]], [*actions[:2], vec.num_actions, actions[3]],
                [*actions[:2], masked[0], actions[3]]):
        with raises(IllegalActionError, match="game 2"):
            vec.step(np.array(bad))
        assert np.array_equal(vec.states, before)
    with raises(IllegalActionError, match="shape"):
        vec.step(actions[:3])
    with raises(IllegalActionError):
        vec.step(actions.astype(np.float64))


def check_engine_loop(case: Case) -> None:
    """The raw :class:`Engine` plays the same states as the AEC env."""
    eng = Engine(case.env_id, **case.options)
    env = case.raw()
    env.reset(seed=9)
    s = eng.new_state(9)
    assert np.array_equal(s, env.state_array)
    rnd = random.Random(1)
    while not eng.is_terminal(s):
        a = rnd.choice(eng.legal_actions(s))
        with raises(IllegalActionError):
            eng.apply(s, -1)
        eng.apply(s, a)
        env.step(a)
        assert np.array_equal(s, env.state_array)
    assert eng.current_player(s) == -1


def check_render_and_action_names(case: Case) -> None:
    """``render_mode="ansi"`` renders text, no render mode renders nothing, and every action
    has a distinct name."""
    env = case.raw(render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert isinstance(text, str) and text
    names = {env.action_to_str(a) for a in range(env.game.num_actions)}
    assert len(names) == env.game.num_actions, "action names must be distinct"
    quiet = case.raw()
    quiet.reset(seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert quiet.render() is None


def check_matches_pettingzoo_wrappers(case: Case) -> None:
    """``env()``'s native illegal-move handling gives what PettingZoo's wrapper stack gives."""
    from pettingzoo.utils import wrappers

    ours = _started(case, wrapped=True)
    theirs = wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(
        wrappers.TerminateIllegalWrapper(case.raw(), illegal_reward=-1)))
    theirs.reset(seed=11)
    play_steps(theirs, random.Random(3), 5)
    mask = ours.observe(ours.agent_selection)["action_mask"]
    bad = int(np.flatnonzero(mask == 0)[0])
    assert theirs.observe(theirs.agent_selection)["action_mask"].tolist() == mask.tolist()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ours.step(bad)
        theirs.step(bad)
    assert any(issubclass(w.category, UserWarning) for w in caught), "no illegal-move warning"
    for a in ours.possible_agents:
        assert ours._cumulative_rewards[a] == theirs._cumulative_rewards[a]
        assert ours.terminations[a] == theirs.terminations[a]
    for _ in ours.agent_iter(max_iter=10 * len(ours.possible_agents)):
        ours.step(None)  # every agent leaves through a dead step
    assert ours.agents == []


#: Checks that take only the case, cheap enough for every configuration.
PER_CASE: tuple[Callable[[Case], None], ...] = (
    check_pettingzoo_api, check_bad_actions, check_numpy_integers, check_masked_action_loses,
    check_step_after_end, check_vector_matches_aec, check_global_state,
)
#: Checks run on one configuration per game.
PER_GAME: tuple[Callable[[Case], None], ...] = (
    check_contract, check_module_entry_points, check_pettingzoo_seed,
    check_determinism_across_processes, check_use_before_reset, check_invalid_options,
    check_clone_independent,
    check_bad_state_dicts, check_vector_rejects_illegal, check_engine_loop,
    check_render_and_action_names, check_matches_pettingzoo_wrappers,
)
#: Randomized checks: ``(check, takes_k)``.
RANDOMIZED: tuple[tuple[Callable[..., None], bool], ...] = (
    (check_random_play, False), (check_state_dict_round_trip, True),
    (check_hidden_information, True),
)


def check_game(env_id: str, options: dict[str, Any] | None = None, seeds: int = 5,
               processes: bool = True) -> None:
    """Every check of the kit on one configuration of a registered game (``seeds`` random
    games per randomized check; ``processes=False`` skips the cross-process one). Raises
    ``AssertionError`` (or the game's exception) at the first failure."""
    case = Case(env_id, dict(options or {}))
    for check in PER_CASE + PER_GAME:
        if processes or check is not check_determinism_across_processes:
            check(case)
    check_bad_actions(case, wrapped=True)
    rnd = random.Random(0)
    for _ in range(seeds):
        for check, takes_k in RANDOMIZED:
            seed = rnd.randrange(2**31)
            if takes_k:
                check(case, seed, rnd.randrange(200))
            else:
                check(case, seed)
