"""What a newcomer meets first: the module docs, the end of a game, seeds for ``resample``,
names for games (``"slide"`` and ``"slide_v0"`` alike everywhere)."""

from __future__ import annotations

import pydoc
import random
import subprocess
import sys

import numpy as np
import pytest

import card_envs
from card_envs import IllegalActionError, OptionError
from card_envs.core.env import GameOverError


def _finished(env_id: str = "slide_v0"):
    env = card_envs.make(env_id)
    env.reset(seed=0)
    rnd = random.Random(0)
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else
                 rnd.choice(np.flatnonzero(obs["action_mask"]).tolist()))
    return env


def test_the_end_of_a_game_says_what_to_do() -> None:
    env = _finished()
    assert env.agents == []
    with pytest.raises(GameOverError, match="call reset") as e:
        env.last()
    assert isinstance(e.value, KeyError)  # as PettingZoo's last() raises there
    for action in (None, 3):
        with pytest.raises(IllegalActionError, match="every agent has left.*reset"):
            env.step(action)
    env.reset(seed=1)
    assert env.last()[2] is False


def test_resample_accepts_the_usual_seed_forms() -> None:
    env = card_envs.make_raw("slide_v0")
    env.reset(seed=3)
    ref = env.resample(0, np.random.default_rng(7)).state_dict(observer=0)
    for rng in (7, None, random.Random(7), np.random.SeedSequence(7), np.random.PCG64(7)):
        assert env.resample(0, rng).state_dict(observer=0) == ref
    assert env.resample(0, 5).state_dict() == env.resample(0, 5).state_dict()
    assert env.resample(0, random.Random(5)).state_dict() == \
        env.resample(0, random.Random(5)).state_dict()
    eng = card_envs.Engine("slide_v0")
    s = eng.new_state(3)
    assert np.array_equal(eng.resample(s, 0, 11), eng.resample(s, 0, 11))
    for bad in (-1, 1.5, "seed"):
        with pytest.raises(OptionError, match="rng must be"):
            env.resample(0, bad)


def test_help_shows_the_env_docs_in_a_fresh_interpreter() -> None:
    code = ("import card_envs, pydoc; "
            "print(pydoc.render_doc(card_envs.slide.env, renderer=pydoc.plaintext)); "
            "print(pydoc.render_doc(card_envs.slide_v0, renderer=pydoc.plaintext))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    assert out.count("Action space") >= 2 and out.count("Observation") >= 2
    assert "docs/rules/slide.md" in out


def test_every_env_module_carries_its_documentation() -> None:
    for env_id in card_envs.ENV_IDS:
        mod = getattr(card_envs, env_id)
        doc = pydoc.getdoc(mod)
        assert doc == pydoc.getdoc(card_envs.env_class(env_id)) and "Version" in doc, env_id


def test_game_names_are_accepted_everywhere() -> None:
    for m in card_envs.core.registry.manifests():
        assert type(card_envs.make(m.name)) is type(card_envs.make(m.env_id))
        assert card_envs.vector.make(m.name, num_envs=2, seed=0).num_envs == 2
    with pytest.raises(OptionError, match="unknown game 'chess'.*slide"):
        card_envs.make_raw("chess")


def test_gymnasium_registration() -> None:
    """Every game is a Gymnasium env id (the single-agent view, opponents as kwargs), also
    without importing card_envs first (``module:id``)."""
    import gymnasium

    ids = {card_envs.gymnasium_id(m) for m in card_envs.core.registry.manifests()}
    assert {"card_envs/Slide-v0", "card_envs/Isflak-v0", "card_envs/OpGladIJs-v0",
            "card_envs/Flipology-v0", "card_envs/IfItFits-v0"} <= ids
    assert ids <= set(gymnasium.registry)
    env = gymnasium.make("card_envs/Slide-v0", opponents="heuristic", num_players=3)
    obs, info = env.reset(seed=0)
    mask = env.unwrapped.action_masks()
    obs2, reward, term, trunc, info = env.step(int(np.flatnonzero(mask)[0]))
    assert env.observation_space.contains(obs2) and not trunc
    code = ("import gymnasium; e = gymnasium.make('card_envs:card_envs/Isflak-v0'); "
            "print(e.reset(seed=1)[0].shape)")
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True,
                         text=True, timeout=120, check=True)
    assert out.stdout.strip().startswith("(")


def test_global_state_for_centralized_critics() -> None:
    """``state()`` shows what a seat cannot see (a resample for seat 0 changes it while seat
    0's observation stays), so a critic gets the full information."""
    env = card_envs.make_raw("slide_v0")
    env.reset(seed=4)
    obs0 = env.observe("player_0")["observation"]
    alt = env.resample(0, 3)
    assert np.array_equal(alt.observe("player_0")["observation"], obs0)
    assert not np.array_equal(alt.state(), env.state())
    par = card_envs.op_glad_ijs_v0.parallel_env()
    par.reset(seed=0)
    assert par.state_space.contains(par.state())
