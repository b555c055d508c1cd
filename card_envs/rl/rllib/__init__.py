"""Any game as an RLlib ``MultiAgentEnv`` for turn-based play, and the PPO configuration that
trains it on RLlib's new API stack with a masking RLModule.

Needs the ``rllib`` extra (``ray[rllib]``, torch). Nothing here imports ray until a class or
function of it is used.

>>> from card_envs.rl.rllib import RLlibCardEnv, ppo_config
>>> env = RLlibCardEnv({"env_id": "slide_v0"})
>>> obs, infos = env.reset(seed=0)       # {"player_0": {"observation": ..., "action_mask": ...}}
>>> algo = ppo_config("slide_v0", num_env_runners=2).build_algo()          # doctest: +SKIP

The modules:

* :mod:`~card_envs.rl.rllib.env`: :class:`RLlibCardEnv` (turns, rewards reaching every seat,
  illegal actions, shaping) and :func:`require_ray`;
* :mod:`~card_envs.rl.rllib.config`: :func:`ppo_config` (self-play ``"shared"`` or
  ``"league"``), :func:`module_config`, :data:`PPO_DEFAULTS`, the league's mapping;
* :mod:`~card_envs.rl.rllib.module`: the masking RLModules (``MaskedActorCriticModule``,
  ``MaskedRandomModule``; imports ray and torch);
* :mod:`~card_envs.rl.rllib.callbacks`: ``SelfPlayCallback`` (mask checks, win rate, the
  league's snapshots; imports ray);
* :mod:`~card_envs.rl.rllib.train`: ``train_rllib``, a training run on a wall-time budget
  (behind ``examples/train_rllib.py``).

This package exports the names of the first two; the others are imported from their modules.
"""

from card_envs.rl.rllib.config import (
    MAIN,
    PPO_DEFAULTS,
    RANDOM,
    league_mapping,
    module_config,
    ppo_config,
    snapshot_ids,
)
from card_envs.rl.rllib.env import RLlibCardEnv, require_ray

__all__ = ["MAIN", "PPO_DEFAULTS", "RANDOM", "RLlibCardEnv", "league_mapping",
           "module_config", "ppo_config", "require_ray", "snapshot_ids"]
