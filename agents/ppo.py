"""A trained MaskablePPO policy as an arena agent: ``"ppo"`` (the pretrained baseline shipped
with the package for the game, 2 players), ``"ppo:path/to/model.zip"`` (or
``"ppo:path=...,deterministic=False"``).

Inference needs torch, stable-baselines3 and sb3-contrib (the ``train`` extra; not the
trainer). The model must have been trained on the same game and player count (its action
space and observation size are checked; a model whose policy reads the game's features gets
them computed from each observation, :mod:`card_envs.core.features`). A model saved by
:func:`card_envs.rl.train` names its policy classes by import path
(``card_envs.rl.policy``); loading imports them, so this module itself never imports the RL
layer. The baselines: ``agents/data/ppo/<env_id>.zip``, each with a ``.json`` beside it saying
how it was trained (command, seed, minutes, evaluation).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from agents.base import Agent, legal_actions
from agents.params import Param, check_params
from card_envs.core.registry import env_class

BASELINES = Path(__file__).resolve().parent / "data" / "ppo"


def baseline_path(env_id: str, num_players: int = 2) -> Path:
    """The pretrained baseline of ``env_id`` shipped with the package (2 players);
    ``ValueError`` if there is none for that game and player count."""
    path = BASELINES / f"{env_id}.zip"
    if num_players != 2 or not path.is_file():
        have = sorted(p.stem for p in BASELINES.glob("*.zip"))
        raise ValueError(f"no pretrained ppo baseline for {env_id} with {num_players} players "
                         f"(shipped: {', '.join(have) or 'none'}, 2 players each); give a "
                         "model: 'ppo:path/to/model.zip'")
    return path


class PPOAgent(Agent):
    """Plays the action of a saved MaskablePPO model, masked to the legal ones; greedy by
    default (``deterministic=False`` samples from the policy with the agent's own seeded RNG,
    ``self.rng``: torch's global RNG is never touched)."""

    name = "ppo"
    params: ClassVar[dict[str, Param]] = {
        "path": Param("str", doc="a model .zip saved by MaskablePPO.save (default: the "
                      "pretrained baseline)", file=True),
        "deterministic": Param("bool", doc="greedy (True) or sampled moves", optional=False),
        "model": Param("object", doc="a loaded MaskablePPO model", spec=False),
    }

    def __init__(self, env_id: str, seed: int | None = None, path: str | None = None,
                 deterministic: bool = True, model: Any = None, **options: Any) -> None:
        p = check_params(type(self), {"path": path, "deterministic": deterministic})
        path, deterministic = p["path"], p["deterministic"]
        super().__init__(env_id, seed, **options)
        known = env_class(env_id).game_class.option_specs()
        game = env_class(env_id).game_class(**{k: v for k, v in options.items() if k in known})
        if model is None:
            if not path:
                path = str(baseline_path(env_id, game.num_players))
            try:
                from sb3_contrib import MaskablePPO
            except ImportError as e:  # pragma: no cover - depends on the install
                raise ImportError("the ppo agent runs the policy with torch, "
                                  "stable-baselines3 and sb3-contrib, which are not installed: "
                                  "pip install 'card-envs[train]'") from e
            found = [p for p in (Path(path), Path(f"{path}.zip")) if p.is_file()]
            if not found:  # SB3 would append '.zip' and raise about 'model.zip.zip'
                raise FileNotFoundError(f"ppo agent: no model file {path!r} (a .zip saved by "
                                        "MaskablePPO.save, e.g. runs/slide/final.zip)")
            model = MaskablePPO.load(found[0], device="cpu")
        self.model, self.path = model, path
        self.deterministic = bool(deterministic)
        fx = getattr(model.policy.features_extractor, "raw_size", None)
        obs_shape = (fx,) if fx is not None else tuple(model.observation_space.shape)
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
        prepare = getattr(policy, "prepare", None)
        obs, _ = policy.obs_to_tensor(observation if prepare is None else prepare(observation))
        with torch.no_grad():
            probs = policy.get_distribution(obs, action_mask.astype(bool)[None]) \
                .distribution.probs[0].double().numpy()
        p = probs[legal]
        return int(self.rng.choices(legal.tolist(), weights=(p / p.sum()).tolist())[0])
