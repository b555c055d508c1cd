"""The RL layer: the trainers, and the Gymnasium and stable-baselines3 views of the games they
train on (top layer: imports core, the games, agents and the arena; nothing below imports it).

>>> from card_envs.rl import SingleAgentEnv, BatchedVecEnv, train, train_ppo
>>> env = SingleAgentEnv("slide_v0", opponents="heuristic")       # Gymnasium, one seat
>>> res = train_ppo("slide_v0", minutes=15, out_dir="runs/slide")  # doctest: +SKIP
>>> venv = BatchedVecEnv("slide_v0", num_envs=64)                  # doctest: +SKIP
>>> res = train("slide_v0", minutes=5, out_dir="runs/slide")       # doctest: +SKIP

Each trainer has its package:

* :mod:`card_envs.rl.ppo`: card-envs' own PPO (``train_ppo``, ``PPO_DEFAULTS``: torch only, the
  network is :class:`card_envs.agents.net.PolicyNet`), the fast trainer;
* :mod:`card_envs.rl.sb3`: stable-baselines3 (``BatchedVecEnv``, ``PolicyOpponent``; the
  modules ``train``: ``train``, ``DEFAULTS``, ``policy_spec``; ``policy``: ``MaskedPolicy``,
  ``ObsFeatures``, ``ActionFeaturePolicy``; ``selfplay``, ``shaping``, ``buffers``);
* :mod:`card_envs.rl.rllib`: the RLlib env, PPO configuration, masking modules and training run
  (the ``rllib`` extra).

* :mod:`card_envs.rl.az`: Gumbel AlphaZero self-play (``train_az``, ``AZ_DEFAULTS``): the
  ``az`` search teaches the network it searches with, for any number of seats (torch only).

What the trainers share stands beside them: :mod:`~card_envs.rl.single_agent`
(``SingleAgentEnv``, ``OpponentPool``: numpy and Gymnasium only), :mod:`~card_envs.rl.evaluation`
(``evaluate``, ``evaluate_batched``, ``plot_history``), :mod:`~card_envs.rl.trajectories`
(per-seat trajectories in a flat sample buffer, compiled), :mod:`~card_envs.rl.nets` (torch
layers) and :mod:`~card_envs.rl.runs` (run folders). Older module paths
(``card_envs.rl.trainer``, ``card_envs.rl.policy``, ``card_envs.rl.ppo_run``, ...) still import,
as the same modules; ``card_envs.rl.expert`` (expert iteration) is the self-play trainer's
module, its ``expert_iteration`` a deprecated spelling of ``train_az``.

The game features the policies read are computed by the games' own compiled code
(:mod:`card_envs.core.features`), not here. The names below are imported on first use, so
``SingleAgentEnv`` works without the ``train`` extra (torch, stable-baselines3, sb3-contrib),
which everything else needs.
"""

from __future__ import annotations

import importlib
from typing import Any

from card_envs.rl import _moved

_moved.install()  # the earlier module names (card_envs.rl.ppo_run, ...): the same modules

#: public name -> module of ``card_envs.rl`` that defines it
_EXPORTS: dict[str, str] = {
    "OpponentPool": "single_agent",
    "SingleAgentEnv": "single_agent",
    "BatchedVecEnv": "sb3",
    "PolicyOpponent": "sb3",
    "AgentOpponent": "sb3",
    "ActionFeaturePolicy": "sb3.policy",
    "MaskedPolicy": "sb3.policy",
    "ObsFeatures": "sb3.policy",
    "PotentialShaping": "sb3.shaping",
    "SelfPlayPool": "sb3.selfplay",
    "DEFAULTS": "sb3.train",
    "TrainResult": "sb3.train",
    "policy_spec": "sb3.train",
    "train": "sb3.train",
    "evaluate": "evaluation",
    "plot_history": "evaluation",
    "PPO_DEFAULTS": "ppo",
    "PPOResult": "ppo",
    "train_ppo": "ppo",
    "AZ_DEFAULTS": "az",
    "AZResult": "az",
    "AZSettings": "az",
    "train_az": "az",
    "EXPERT_DEFAULTS": "az.train",
    "ExpertResult": "az.train",
    "expert_iteration": "az.train",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'card_envs.rl' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"card_envs.rl.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
