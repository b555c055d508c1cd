"""The RL layer: card-envs' own PPO trainer, Gymnasium and stable-baselines3 views of the games,
the SB3 policies and trainer (top layer: imports core, the games, agents and the arena; nothing
below imports it).

>>> from card_envs.rl import SingleAgentEnv, BatchedVecEnv, train, train_ppo
>>> env = SingleAgentEnv("slide_v0", opponents="heuristic")       # Gymnasium, one seat
>>> res = train_ppo("slide_v0", minutes=15, out_dir="runs/slide")  # doctest: +SKIP
>>> venv = BatchedVecEnv("slide_v0", num_envs=64)                  # doctest: +SKIP
>>> res = train("slide_v0", minutes=5, out_dir="runs/slide")       # doctest: +SKIP

:mod:`~card_envs.rl.ppo` (``train_ppo``, ``PPO_DEFAULTS``: torch only, the network is
:class:`card_envs.agents.net.PolicyNet`) is the fast trainer; :mod:`~card_envs.rl.expert`
(``expert_iteration``, ``EXPERT_DEFAULTS``) improves that network with the ``az`` search's games;

other modules: :mod:`~card_envs.rl.single_agent` (``SingleAgentEnv``, ``OpponentPool``: numpy and
Gymnasium only), :mod:`~card_envs.rl.sb3` (``BatchedVecEnv``, ``PolicyOpponent``),
:mod:`~card_envs.rl.policy` (``MaskedPolicy``, ``ObsFeatures``, ``ActionFeaturePolicy``),
:mod:`~card_envs.rl.shaping` (``PotentialShaping``), :mod:`~card_envs.rl.selfplay`
(``SelfPlayPool``, ``AgentOpponent``), :mod:`~card_envs.rl.evaluation` (``evaluate``,
``plot_history``), :mod:`~card_envs.rl.trainer` (``train``, ``DEFAULTS``, ``policy_spec``); the
package :mod:`~card_envs.rl.rllib` has the RLlib env, PPO configuration, masking modules and
training run (the ``rllib`` extra). The game features the policies read are computed by the
games' own compiled code (:mod:`card_envs.core.features`), not here. The names below are
imported on first use, so ``SingleAgentEnv`` works without the ``train`` extra (torch,
stable-baselines3, sb3-contrib), which everything else needs.
"""

from __future__ import annotations

import importlib
from typing import Any

from card_envs.rl._moved import install

install()  # the earlier module names (card_envs.rl.ppo_run, ...): the same modules

#: public name -> module of ``card_envs.rl`` that defines it
_EXPORTS: dict[str, str] = {
    "OpponentPool": "single_agent",
    "SingleAgentEnv": "single_agent",
    "BatchedVecEnv": "sb3",
    "PolicyOpponent": "sb3",
    "ActionFeaturePolicy": "policy",
    "MaskedPolicy": "policy",
    "ObsFeatures": "policy",
    "PotentialShaping": "shaping",
    "AgentOpponent": "sb3",
    "SelfPlayPool": "selfplay",
    "evaluate": "evaluation",
    "plot_history": "evaluation",
    "DEFAULTS": "trainer",
    "TrainResult": "trainer",
    "policy_spec": "trainer",
    "train": "trainer",
    "PPO_DEFAULTS": "ppo",
    "PPOResult": "ppo",
    "train_ppo": "ppo",
    "EXPERT_DEFAULTS": "expert",
    "ExpertResult": "expert",
    "expert_iteration": "expert",
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
