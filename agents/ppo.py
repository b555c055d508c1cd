"""A trained PPO policy as an arena agent: ``"ppo"`` (the pretrained baseline shipped with the
package for the game and seat count), ``"ppo:path/to/final.safetensors"`` (a policy saved by
:func:`card_envs.rl.train_ppo`), ``"ppo:path/to/model.zip"`` (a MaskablePPO model saved by
stable-baselines3), or ``"ppo:path=...,deterministic=False"``.

A ``.safetensors`` policy needs torch alone: its weights are read without pickle
(:mod:`card_envs.agents.weights`) and the network is :class:`card_envs.agents.net.PolicyNet`;
a policy saved for another game, game version or player count is refused with a clear error.
A ``.zip`` needs stable-baselines3 and sb3-contrib (the ``train`` extra) and is loaded by SB3,
which unpickles parts of it: load only files you trust. The baselines (the package data
``card_envs/agents/data/ppo/``, the folder ``agents/data/ppo/`` of the repository):
``<env_id>.safetensors`` (2 seats) and ``<env_id>_<n>p.safetensors`` (``n`` seats), each with a
``.json`` beside it saying how it was trained (command, seed, settings, evaluation).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from card_envs.agents.base import Agent, legal_actions
from card_envs.agents.params import Param, check_params
from card_envs.agents.weights import WeightsError
from card_envs.core.registry import env_class, resolve_env_id

BASELINES = Path(__file__).resolve().parent / "data" / "ppo"


def baseline_path(env_id: str, num_players: int = 2) -> Path:
    """The pretrained baseline of ``env_id`` for ``num_players`` seats shipped with the package
    (``<env_id>.safetensors`` at 2 seats, ``<env_id>_<n>p.safetensors`` at ``n``);
    ``ValueError`` naming what is shipped if there is none."""
    name = env_id if num_players == 2 else f"{env_id}_{num_players}p"
    path = BASELINES / f"{name}.safetensors"
    if not path.is_file():
        have = sorted(p.stem for p in BASELINES.glob(f"{env_id}*.safetensors"))
        seats = sorted(2 if h == env_id else int(h.rsplit("_", 1)[1][:-1]) for h in have)
        raise ValueError(f"no pretrained ppo baseline for {env_id} with {num_players} players "
                         f"(shipped for {', '.join(map(str, seats)) or 'no'} players); give a "
                         "model: 'ppo:path/to/final.safetensors'")
    return path


def _load_sb3(path: str) -> Any:
    """A MaskablePPO model from a ``.zip`` (clear errors for a missing or corrupt file)."""
    try:
        from sb3_contrib import MaskablePPO
    except ImportError as e:  # pragma: no cover - depends on the install
        raise ImportError("a .zip model is a stable-baselines3 model: it needs "
                          "stable-baselines3 and sb3-contrib (pip install 'card-envs[train]'); "
                          "policies saved by card-envs' own trainer (.safetensors) need "
                          "torch only") from e
    found = [p for p in (Path(path), Path(f"{path}.zip")) if p.is_file()]
    if not found:  # SB3 would append '.zip' and raise about 'model.zip.zip'
        raise FileNotFoundError(f"ppo agent: no model file {path!r} (a .safetensors policy "
                                "saved by train_ppo, or a .zip saved by MaskablePPO.save)")
    try:
        return MaskablePPO.load(found[0], device="cpu")
    except Exception as e:  # zipfile, pickle, KeyError...: a file that is not such a model
        raise WeightsError(f"{found[0]}: not a MaskablePPO model .zip ({type(e).__name__}: "
                           f"{e})") from None


class PPOAgent(Agent):
    """Plays the action of a saved policy (a :class:`card_envs.agents.net.NetPolicy` or a
    MaskablePPO model), masked to the legal ones; greedy by
    default (``deterministic=False`` samples from the policy with the agent's own seeded RNG,
    ``self.rng``: torch's global RNG is never touched)."""

    name = "ppo"
    params: ClassVar[dict[str, Param]] = {
        "path": Param("str", doc="a policy .safetensors saved by train_ppo or a model .zip "
                      "saved by MaskablePPO.save (default: the pretrained baseline)",
                      file=True),
        "deterministic": Param("bool", doc="greedy (True) or sampled moves", optional=False),
        "model": Param("object", doc="a loaded NetPolicy or MaskablePPO model", spec=False),
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
            if str(path).endswith(".safetensors"):
                from card_envs.agents.net import load_policy

                if not Path(path).is_file():
                    raise FileNotFoundError(f"ppo agent: no policy file {path!r}")
                model = load_policy(path, env_id, game.num_players,
                                    {k: v for k, v in options.items() if k in known})
            else:
                model = _load_sb3(path)
        self.model, self.path = model, path
        self.deterministic = bool(deterministic)
        self.native = hasattr(model, "pinput")  # an card_envs.agents.net.NetPolicy
        if self.native:
            want = (game.obs_size, game.num_actions, game.num_players)
            have = (model.game.obs_size, model.game.num_actions, model.num_players)
            if model.env_id != resolve_env_id(env_id):
                raise WeightsError(f"a policy for {model.env_id}, not {resolve_env_id(env_id)}")
            if have != want:
                raise WeightsError(f"the policy plays {model.env_id} with (observation, actions, "
                                   f"players) {have}; this game has {want}")
            return
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
        if self.native:
            if self.deterministic:
                return int(self.model(observation, action_mask)[0])
            import torch

            x, rows, acts, off = self.model.pinput.compute(np.asarray(observation)[None],
                                                           np.asarray(action_mask)[None])
            from card_envs.agents.net import as_tensors, segment_log_softmax

            with torch.no_grad():
                logits, _ = self.model.net(*as_tensors(x, rows, acts, off))
                p = segment_log_softmax(logits, torch.zeros(len(acts), dtype=torch.long),
                                        1).exp().double().numpy()
            return int(self.rng.choices(acts.tolist(), weights=(p / p.sum()).tolist())[0])
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
