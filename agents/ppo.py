"""A trained MaskablePPO policy as an arena agent: ``"ppo:path/to/model.zip"`` (or
``"ppo:path=...,deterministic=False"``).

Needs the ``train`` extra (torch, stable-baselines3, sb3-contrib). The model must have been
trained on the same game and player count (its observation and action spaces are checked).
A model saved by :func:`card_envs.rl.train` names its policy and feature classes by import path
(``card_envs.rl.policy``, ``card_envs.rl.features.<game>``); loading imports them, so this
module itself never imports the RL layer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from agents.base import Agent, legal_actions
from card_envs.core.registry import env_class


class PPOAgent(Agent):
    """Plays the action of a saved MaskablePPO model, masked to the legal ones; greedy by
    default (``deterministic=False`` samples from the policy with the agent's own seeded RNG,
    ``self.rng``: torch's global RNG is never touched)."""

    name = "ppo"

    def __init__(self, env_id: str, seed: int | None = None, path: str | None = None,
                 deterministic: bool = True, model: Any = None, **options: Any) -> None:
        super().__init__(env_id, seed, **options)
        if model is None:
            if not path:
                raise ValueError("the ppo agent needs a model: 'ppo:path/to/model.zip'")
            try:
                from sb3_contrib import MaskablePPO
            except ImportError as e:  # pragma: no cover - depends on the install
                raise ImportError("the ppo agent needs the train extra: "
                                  "pip install 'card-envs[train]'") from e
            found = [p for p in (Path(path), Path(f"{path}.zip")) if p.is_file()]
            if not found:  # SB3 would append '.zip' and raise about 'model.zip.zip'
                raise FileNotFoundError(f"ppo agent: no model file {path!r} (a .zip saved by "
                                        "MaskablePPO.save, e.g. runs/slide/final.zip)")
            model = MaskablePPO.load(found[0], device="cpu")
        self.model, self.path = model, path
        self.deterministic = bool(deterministic)
        known = env_class(env_id).game_class.option_specs()
        game = env_class(env_id).game_class(**{k: v for k, v in options.items() if k in known})
        obs_shape = tuple(model.observation_space.shape)
        if obs_shape != (game.obs_size,) or model.action_space.n != game.num_actions:
            raise ValueError(f"model spaces {obs_shape}/{model.action_space.n} do not match "
                             f"{env_id} with {game.num_players} players "
                             f"({game.obs_size}/{game.num_actions})")

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = legal_actions(action_mask)
        if legal.size == 1:
            return int(legal[0])
        if self.deterministic:
            action, _ = self.model.predict(observation, action_masks=action_mask.astype(bool),
                                           deterministic=True)
            return int(action)
        # sample with the agent's own RNG (self.rng), never torch's global one
        import torch

        policy = self.model.policy
        obs, _ = policy.obs_to_tensor(observation)
        with torch.no_grad():
            probs = policy.get_distribution(obs, action_mask.astype(bool)[None]) \
                .distribution.probs[0].double().numpy()
        p = probs[legal]
        return int(self.rng.choices(legal.tolist(), weights=(p / p.sum()).tolist())[0])
