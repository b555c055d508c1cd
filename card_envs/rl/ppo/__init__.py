"""card-envs' own PPO: self-play on the batched engine (torch only, no stable-baselines3).

>>> from card_envs.rl.ppo import train_ppo
>>> res = train_ppo("slide_v0", minutes=5, out_dir="runs/slide")           # doctest: +SKIP

The modules:

* :mod:`~card_envs.rl.ppo.train`: :func:`train_ppo`, :data:`PPO_DEFAULTS`, :class:`PPOResult`
  (the settings, the run folder, the evaluations; the design notes);
* :mod:`~card_envs.rl.ppo.run`: ``PPORun``, the learner (network, optimizer, update);
* :mod:`~card_envs.rl.ppo.sampler`: ``Sampler``, the batched games, the league and the sample
  buffers of one share of the games;
* :mod:`~card_envs.rl.ppo.ray`: ``RaySamplers``, the samplers as Ray actors.

This package exports the names of the first; the trajectories of the sample buffer are
:mod:`card_envs.rl.trajectories` (shared with RLlib's batched runner).
"""

from card_envs.rl.ppo.train import PPO_DEFAULTS, PPOResult, train_ppo

__all__ = ["PPO_DEFAULTS", "PPOResult", "train_ppo"]
