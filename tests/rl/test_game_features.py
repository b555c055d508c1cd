"""Game features in the RL layer: computed once per observation by the batched VecEnv (one
compiled pass), read by the policy as they are, and computed from raw observations wherever a
trained policy meets the game without the VecEnv (opponents, the arena's ``PPOAgent``,
evaluations). The test-only toy game (``tests/support/toy_cards/features.py``) and every
built-in game that declares features run through the same checks."""

from __future__ import annotations

import random

import numpy as np
import pytest

pytest.importorskip("sb3_contrib", reason="train extra")
torch = pytest.importorskip("torch", reason="train extra")

import card_envs  # noqa: E402
from card_envs.core.features import Features, has_features  # noqa: E402
from card_envs.core.registry import env_class, env_ids  # noqa: E402
from card_envs.rl.sb3 import BatchedVecEnv, PolicyOpponent  # noqa: E402
from card_envs.rl.sb3.selfplay import SelfPlayPool  # noqa: E402
from card_envs.rl.sb3.train import policy_spec  # noqa: E402

FEATURE_GAMES = [e for e in env_ids() if has_features(env_class(e).game_class)]


def _model(env_id: str, venv: BatchedVecEnv) -> object:
    from sb3_contrib import MaskablePPO

    pol, kw = policy_spec(env_id, num_players=venv.game.num_players)
    return MaskablePPO(pol, venv, n_steps=8, batch_size=8 * venv.num_envs, policy_kwargs=kw,
                       seed=0, device="cpu")


@pytest.mark.parametrize("env_id", FEATURE_GAMES)
def test_vecenv_observations_carry_the_features_of_the_raw_observation(env_id: str) -> None:
    from card_envs.core.registry import manifest

    venv = BatchedVecEnv(env_id, 32, features=True, seed=3, **manifest(env_id).train.options)
    fx = venv.features
    obs = venv.reset()
    assert obs.shape == (32, fx.width) and obs.dtype == np.float32
    assert venv.observation_space.shape == (fx.width,)
    rng = np.random.default_rng(0)
    ended = 0
    for t in range(5000):
        if t >= 60 and ended >= 2:
            break
        raw = venv.vec.observations.copy()
        np.testing.assert_array_equal(obs, fx.compute(raw))
        o, g, a = fx.split(obs)
        np.testing.assert_array_equal(o, raw.astype(np.float32))
        # "legal" is the learner's mask (the learner is to act in every game)
        np.testing.assert_array_equal(a[:, 0, :] > 0, venv.action_masks())
        masks = venv.action_masks()
        acts = np.argmax(masks * rng.random(masks.shape), axis=1)
        obs, _, done, infos = venv.step(acts)
        for i in np.flatnonzero(done):
            term = infos[i]["terminal_observation"]
            assert term.shape == (fx.width,)
            np.testing.assert_array_equal(term, fx.compute(term[:fx.obs_size]))
            ended += 1
    prev = obs.copy()
    venv.step(np.argmax(venv.action_masks(), axis=1))
    np.testing.assert_array_equal(prev, obs)  # the returned array survives the next step
    assert ended > 0


def test_features_off_gives_the_raw_observation() -> None:
    venv = BatchedVecEnv("toy_v0", 8, seed=1)
    assert venv.features is None and venv.reset().dtype == venv.game.obs_dtype
    pol, kw = policy_spec("toy_v0", {"game_features": False}, num_players=2)
    assert "features" not in kw["features_extractor_kwargs"] and "scorer_arch" not in kw


def test_a_policy_with_features_plays_from_raw_observations(tmp_path) -> None:
    """PolicyOpponent, predict and the arena's PPOAgent all get raw observations."""
    from card_envs.agents.ppo import PPOAgent
    from card_envs.arena import run_arena

    venv = BatchedVecEnv("toy_v0", 16, features=True, seed=0)
    model = _model("toy_v0", venv)
    model.learn(256)
    fx = venv.features
    raw = venv.vec.observations.copy()
    masks = venv.action_masks()
    a_raw, _ = model.predict(raw, action_masks=masks, deterministic=True)
    a_fx, _ = model.predict(fx.compute(raw), action_masks=masks, deterministic=True)
    np.testing.assert_array_equal(a_raw, a_fx)
    opp = PolicyOpponent(model.policy, deterministic=True)
    np.testing.assert_array_equal(opp(raw, masks), a_raw)
    path = tmp_path / "toy.zip"
    model.save(path)
    agent = PPOAgent("toy_v0", path=str(path))
    res = run_arena("toy_v0", [agent, "random"], games=20, seed=1, progress=False)
    assert res["ppo"].games == 20
    sampled = PPOAgent("toy_v0", path=str(path), deterministic=False, seed=4)
    env = card_envs.make_raw("toy_v0")
    env.reset(seed=2)
    ob = env.observe(env.agent_selection)
    assert ob["action_mask"][sampled.act(ob["observation"], ob["action_mask"])] == 1


def test_self_play_snapshots_reach_the_vecenv() -> None:
    """The pool the trainer adds snapshots to is the pool the VecEnv draws from (it used to
    be copied at construction, so training only ever met "random")."""
    pool = SelfPlayPool(2, 0.5)
    venv = BatchedVecEnv("toy_v0", 16, opponents=pool.pool, features=True, seed=0)
    model = _model("toy_v0", venv)
    pool.add_snapshot(model)
    assert venv._pool is pool.pool and len(venv._pool.members) == 2
    assert isinstance(venv._pool.members[1], PolicyOpponent)
    venv._draw_members(np.arange(16))
    venv._member[:] = 1  # every game against the snapshot: it must play legal moves
    for _ in range(20):
        venv.step(np.argmax(venv.action_masks(), axis=1))
    assert venv.opponent_steps > 0


@pytest.mark.parametrize("env_id", FEATURE_GAMES)
def test_features_are_unchanged_when_hidden_information_is_resampled(env_id: str) -> None:
    env = card_envs.make_raw(env_id)
    fx = Features(env.game)
    rng = random.Random(5)
    checked = 0
    for g in range(4):
        env.reset(seed=100 + g)
        for _ in range(200):
            a = env.agent_selection
            if not env.agents or env.terminations[a] or env.truncations[a]:
                break
            if rng.random() < 0.2:
                seat = env.possible_agents.index(a)
                before = fx.compute(env.observe(a)["observation"])
                probe = env.clone()
                for k in range(2):
                    probe.resample(seat, rng=np.random.default_rng(k))
                    np.testing.assert_array_equal(
                        fx.compute(probe.observe(a)["observation"]), before)
                checked += 1
            env.step(rng.choice(env.legal_actions()))
    assert checked >= 3
