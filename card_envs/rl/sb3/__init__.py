"""stable-baselines3 on the batched engine: a ``VecEnv`` of many games, its opponents, the
MaskablePPO policies and the self-play trainer (the ``train`` extra: torch, stable-baselines3,
sb3-contrib).

>>> from card_envs.rl.sb3 import BatchedVecEnv
>>> venv = BatchedVecEnv("slide_v0", num_envs=64, opponents="random", seed=0)  # doctest: +SKIP

The modules:

* :mod:`~card_envs.rl.sb3.vec_env`: :class:`BatchedVecEnv`, the opponents
  :class:`PolicyOpponent` and :class:`AgentOpponent`, :func:`feature_space`;
* :mod:`~card_envs.rl.sb3.train`: ``train``, ``DEFAULTS``, ``TrainResult``, ``policy_spec``
  (sb3-contrib's MaskablePPO in self-play; also exported by :mod:`card_envs.rl`);
* :mod:`~card_envs.rl.sb3.policy`: ``MaskedPolicy``, ``ObsFeatures``, ``ActionFeaturePolicy``;
* :mod:`~card_envs.rl.sb3.selfplay`: ``SelfPlayPool``, the training opponents;
* :mod:`~card_envs.rl.sb3.buffers`: ``ZeroCopyRolloutBuffer`` and ``link``;
* :mod:`~card_envs.rl.sb3.shaping`: ``PotentialShaping``, a ``VecEnv`` wrapper.

This package exports the names of the first; the others are imported from their modules.
"""

from card_envs.rl.sb3.vec_env import (
    AgentOpponent,
    BatchedVecEnv,
    BatchPolicy,
    PolicyOpponent,
    feature_space,
)

__all__ = ["AgentOpponent", "BatchPolicy", "BatchedVecEnv", "PolicyOpponent", "feature_space"]
