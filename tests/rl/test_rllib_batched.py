"""RLlib sampling on the batched engine (:class:`~card_envs.rl.rllib.batched.BatchedEnvRunner`),
built in this process without a Ray cluster: its episodes are the learner's trajectories (legal
actions under their masks, log-probabilities of the masked logits, one observation more than
actions, the cut's view at the end of an unfinished one), shared self-play makes every move a
sample, the league plays random and snapshot opponents, the snapshots follow the learner's
weights, a seed reproduces a sample, and bad settings are refused."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("ray.rllib", reason="the rllib extra (ray[rllib]) is not installed")

from ray.rllib.core.columns import Columns  # noqa: E402
from ray.rllib.utils.metrics import WEIGHTS_SEQ_NO  # noqa: E402

from card_envs.core.errors import OptionError  # noqa: E402
from card_envs.rl.rllib import ppo_config  # noqa: E402
from card_envs.rl.rllib.batched import BatchedEnvRunner  # noqa: E402


def _runner(env_id: str = "slide_v0", **kw: Any) -> BatchedEnvRunner:
    return BatchedEnvRunner(config=ppo_config(env_id, num_env_runners=0, **kw))


def _check_episodes(eps: list[Any], num_actions: int) -> int:
    n = 0
    for ep in eps:
        obs = ep.get_observations()
        acts = np.asarray(ep.get_actions())
        masks = np.asarray(obs["action_mask"])
        assert masks.shape == (acts.size + 1, num_actions)
        assert (masks[np.arange(acts.size), acts] == 1).all()  # every action legal
        assert not masks[-1].any()  # the last observation is not a decision
        logits = np.asarray(ep.get_extra_model_outputs(Columns.ACTION_DIST_INPUTS))
        logp = np.asarray(ep.get_extra_model_outputs(Columns.ACTION_LOGP))
        z = logits - logits.max(1, keepdims=True)
        want = z[np.arange(acts.size), acts] - np.log(np.exp(z).sum(1))
        np.testing.assert_allclose(logp, want, atol=1e-4)
        assert np.isfinite(np.asarray(ep.get_rewards())).all()
        n += acts.size
    return n


@pytest.mark.parametrize("env_id", ["slide_v0", "if_it_fits_v0"])  # features; 703 actions
def test_shared_self_play_every_move_is_a_sample(env_id: str) -> None:
    r = _runner(env_id, envs_per_runner=8, selfplay="shared")
    eps = r.sample(num_timesteps=300)
    n = _check_episodes(eps, r.env.game.num_actions)
    assert n == r.last_moves >= 300  # the learner played every seat
    assert any(not ep.is_done for ep in eps)  # trajectories the call cut
    assert r.metrics.peek("num_env_steps_all_seats") == r.last_moves


def test_league_plays_random_then_snapshots_that_follow_the_learner() -> None:
    r = _runner(envs_per_runner=16, selfplay="league", snapshots=1, snapshot_every=2,
                random_weight=0.0)
    eps = r.sample(num_timesteps=400)
    n = _check_episodes(eps, r.env.game.num_actions)
    assert r.last_moves > n  # the opponents' moves are not samples
    snap = r.snapshots[0]
    state = {k: v.detach().clone() for k, v in r.module.state_dict().items()}
    moved = {k: v + 0.5 for k, v in state.items()}
    for seq in (1, 2):  # the second weight update refreshes the snapshot
        r.module.load_state_dict(moved)
        r.set_state({"rl_module": {k: v.numpy() for k, v in moved.items()},
                     WEIGHTS_SEQ_NO: seq})
        copied = all(np.array_equal(snap.state_dict()[k].numpy(), moved[k].numpy())
                     for k in moved)
        assert copied == (seq == 2)
    assert r._have == 1
    r.sample(num_timesteps=400)  # random_weight 0: every league game against the snapshot


def test_episodes_travel_as_arrays_and_arrive_equal() -> None:
    import pickle

    r = _runner(envs_per_runner=8, selfplay="shared")
    eps = r.sample(num_timesteps=100)
    back = pickle.loads(pickle.dumps(eps))
    assert type(back) is type(eps) and len(back) == len(eps)
    for a, b in zip(eps, back):
        assert a.is_terminated == b.is_terminated and len(a) == len(b)
        for get in ("get_actions", "get_rewards"):
            np.testing.assert_array_equal(getattr(a, get)(), getattr(b, get)())
        oa, ob = a.get_observations(), b.get_observations()
        for k in ("observation", "action_mask"):
            np.testing.assert_array_equal(oa[k], ob[k])


def test_same_seed_same_sample() -> None:
    a = [_runner(envs_per_runner=8, selfplay="league", seed=3) for _ in range(2)]
    b = _runner(envs_per_runner=8, selfplay="league", seed=4)
    acts = [[np.asarray(e.get_actions()).tolist() for e in r.sample(num_timesteps=200)]
            for r in (*a, b)]
    assert acts[0] == acts[1] and acts[0] != acts[2]


@pytest.mark.parametrize("kw,match", [
    ({"selfplay": "solo"}, "selfplay"), ({"random_weight": 2.0}, "random_weight"),
    ({"random_weight": float("nan")}, "random_weight"), ({"envs_per_runner": 0}, "envs_per"),
    ({"snapshots": 99}, "snapshots"), ({"shaping": float("inf")}, "shaping"),
    ({"runner": "threads"}, "runner")])
def test_bad_settings_are_refused(kw: dict[str, Any], match: str) -> None:
    with pytest.raises(OptionError, match=match):
        ppo_config("slide_v0", **kw)


def test_unsupported_sample_requests_are_refused() -> None:
    r = _runner(envs_per_runner=4)
    with pytest.raises(ValueError, match="num_timesteps"):
        r.sample(num_episodes=2)
