"""The copy-free rollout buffer: the VecEnv writes observations into it, and a rollout stores
exactly what SB3's own buffer stores."""

from __future__ import annotations

import numpy as np
import pytest
import torch

pytest.importorskip("sb3_contrib")

from sb3_contrib import MaskablePPO  # noqa: E402
from stable_baselines3.common.callbacks import CallbackList  # noqa: E402

from card_envs.rl.sb3 import BatchedVecEnv  # noqa: E402
from card_envs.rl.sb3.buffers import ZeroCopyRolloutBuffer, link  # noqa: E402
from card_envs.rl.sb3.train import policy_spec  # noqa: E402

N_STEPS = 6


def _rollout(copy_free: bool, features: bool, rollouts: int = 2) -> MaskablePPO:
    venv = BatchedVecEnv("slide_v0", 8, opponents="random", seed=3, features=features,
                         num_players=2)
    cls, kw = policy_spec("slide_v0", {"game_features": features}, num_players=2)
    model = MaskablePPO(cls, venv, n_steps=N_STEPS, batch_size=48, seed=5, device="cpu",
                        policy_kwargs=kw,
                        rollout_buffer_class=ZeroCopyRolloutBuffer if copy_free else None)
    assert link(model) == (copy_free and True)
    model._setup_learn(total_timesteps=10**9)
    for _ in range(rollouts):
        cb = CallbackList([])
        cb.init_callback(model)
        model.collect_rollouts(model.env, cb, model.rollout_buffer, n_rollout_steps=N_STEPS)
    return model


@pytest.mark.parametrize("features", [True, False])
def test_the_copy_free_buffer_stores_what_sb3_stores(features: bool) -> None:
    torch.manual_seed(0)
    a = _rollout(True, features).rollout_buffer
    torch.manual_seed(0)
    b = _rollout(False, features).rollout_buffer
    for name in ("observations", "actions", "rewards", "episode_starts", "values",
                 "log_probs", "action_masks"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    # with features, every observation but a rollout's first was written in place
    assert a.skipped_copies == (N_STEPS - 1 if features else 0)


def test_a_reset_never_writes_into_the_buffer() -> None:
    model = _rollout(True, True, rollouts=1)
    buf = model.rollout_buffer
    before = buf.observations.copy()
    buf.reset()
    assert buf.next_slot() is not None
    model.env.reset()  # a reset's observations stay in the env's own arrays
    np.testing.assert_array_equal(buf.observations, before)


def test_no_slot_when_full_or_flattened() -> None:
    model = _rollout(True, True, rollouts=1)
    buf = model.rollout_buffer
    assert buf.full and buf.next_slot() is None
    buf.compute_returns_and_advantage(torch.zeros(8), np.zeros(8, bool))
    next(buf.get(16))
    assert buf.next_slot() is None
    buf.reset()  # the same observation array again, and slots to write into
    assert buf.next_slot().shape == (8, model.env.observation_space.shape[0])


def test_link_refuses_other_envs_and_buffers() -> None:
    venv = BatchedVecEnv("slide_v0", 4, num_players=2)
    model = MaskablePPO("MlpPolicy", venv, n_steps=4, batch_size=16, device="cpu")
    assert link(model) is False
    assert venv.obs_target is None
