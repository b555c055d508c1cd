"""RLModules (RLlib's new API stack, torch) that honour the observation's action mask:
:class:`MaskedActorCriticModule` (PPO's policy and value) and :class:`MaskedRandomModule`
(uniform over the legal actions). Imports ray and torch (the ``rllib`` extra).

Both read the observation dict of :class:`~card_envs.rl.rllib.env.RLlibCardEnv`
(``{"observation", "action_mask"}``) and return ``action_dist_inputs``: logits in which every
masked-out action is ``-1e8``, so its probability under RLlib's ``TorchCategorical`` is
exactly 0 (``exp(-1e8)`` underflows) and it is never sampled, nor chosen greedily (while any
action is legal). The masking is part of the forward pass itself, for exploration, inference
and training alike, so the PPO loss sees the same distribution the env runners sampled from.

:class:`MaskedActorCriticModule` (model config: :func:`card_envs.rl.rllib.config.module_config`):

* input: ``symlog`` of every observation entry plus a one-hot code of the entries whose
  declared range has 3 to ``one_hot_max`` values (the trainer's ``ObsFeatures`` without its
  embedding option), plus the game's global features when its manifest names a feature
  module (``train.features``: Isflak, Slide);
* separate policy and value MLPs (``hiddens``, tanh);
* logits ``linear(h)`` plus, with game features, a score per legal action from one small
  network shared by all actions on ``[that action's features, tanh(W h)]`` (the trainer's
  ``ActionFeaturePolicy``, ``scorer_arch`` / ``context_dim``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule

from card_envs.rl.nets import mlp, one_hot_layout

__all__ = ["HUGE_NEG", "MaskedActorCriticModule", "MaskedRandomModule", "ObsEncoder",
           "masked_logits"]

HUGE_NEG = -1e8  # logit of a masked-out action (sb3-contrib's masking constant)


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``logits`` with every action whose ``mask`` entry is 0 set to :data:`HUGE_NEG`."""
    return torch.where(mask > 0, logits, torch.full_like(logits, HUGE_NEG))


def _split(batch: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
    """(observation as float, action mask) of a batch of observation dicts."""
    obs = batch[Columns.OBS]
    if not isinstance(obs, dict) or "action_mask" not in obs or "observation" not in obs:
        raise ValueError("the masking RLModules need observation dicts {'observation', "
                         "'action_mask'} (card_envs.rl.rllib.RLlibCardEnv)")
    return obs["observation"].float(), obs["action_mask"]


class ObsEncoder(torch.nn.Module):
    """``[symlog(x), one_hot(x)]`` of an integer observation with declared bounds ``low`` /
    ``high``: one-hot of the entries with 3 to ``one_hot_max`` values (the limit lowered
    until at most ``budget`` columns), no bit for a value out of range; no parameters."""

    def __init__(self, low: np.ndarray, high: np.ndarray, one_hot_max: int = 40,
                 budget: int = 1024) -> None:
        super().__init__()
        low = np.asarray(low, np.int64).ravel()
        cols, offsets, width, self.n_hot = one_hot_layout(low, high, one_hot_max, budget)
        self.dim = low.size + self.n_hot
        self.register_buffer("cols", torch.as_tensor(cols), persistent=False)
        self.register_buffer("low", torch.as_tensor(low[cols]), persistent=False)
        self.register_buffer("width", torch.as_tensor(width[cols]), persistent=False)
        self.register_buffer("offsets", torch.as_tensor(offsets), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        feats = torch.sign(x) * torch.log1p(torch.abs(x))
        if not self.n_hot:
            return feats
        v = x[:, self.cols].round().long() - self.low
        idx = torch.where((v >= 0) & (v < self.width), v + self.offsets, self.n_hot)
        hot = torch.zeros(x.shape[0], self.n_hot + 1, dtype=x.dtype, device=x.device)
        hot.scatter_(1, idx, 1.0)
        return torch.cat([feats, hot[:, :self.n_hot]], dim=1)


class MaskedActorCriticModule(TorchRLModule, ValueFunctionAPI):
    """PPO's masked policy and value for one game (module docstring)."""

    def setup(self) -> None:
        cfg = dict(self.model_config or {})
        space = self.observation_space
        if not hasattr(space, "spaces") or "observation" not in space.spaces:
            raise ValueError(f"{type(self).__name__} needs the Dict observation space of "
                             f"RLlibCardEnv, got {space}")
        box = space["observation"]
        A = int(self.action_space.n)
        self.num_actions = A
        self.encoder = ObsEncoder(box.low, box.high, int(cfg.get("one_hot_max", 40)))
        self.game = None
        spec = cfg.get("game_features")
        if spec:  # {"env_id", "options"}: the game's compiled features (card_envs.core.features)
            from card_envs.core.features import Features
            from card_envs.core.registry import env_class

            game = env_class(spec["env_id"]).game_class(**(spec.get("options") or {}))
            self.game = Features(game)
        in_dim = self.encoder.dim + (self.game.global_dim if self.game is not None else 0)
        hiddens = [int(h) for h in cfg.get("hiddens", (128, 128))]
        self.pi_net = mlp([in_dim, *hiddens], torch.nn.Tanh)
        self.vf_net = mlp([in_dim, *hiddens], torch.nn.Tanh)
        self.pi_act = torch.nn.Tanh()
        self.vf_act = torch.nn.Tanh()
        self.pi_out = torch.nn.Linear(hiddens[-1], A)
        self.vf_out = torch.nn.Linear(hiddens[-1], 1)
        torch.nn.init.orthogonal_(self.pi_out.weight, gain=0.01)
        torch.nn.init.zeros_(self.pi_out.bias)
        self.context = self.scorer = None
        if self.game is not None:
            ctx = int(cfg.get("context_dim", 8))
            self.context = torch.nn.Linear(hiddens[-1], ctx) if ctx else None
            self.scorer = mlp([self.game.action_dim + ctx,
                                *[int(h) for h in cfg.get("scorer_arch", (64,))], 1],
                               torch.nn.ReLU)
            torch.nn.init.orthogonal_(self.scorer[-1].weight, gain=0.01)

    # --- pieces ----------------------------------------------------------------------------
    def _inputs(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(global input of both MLPs, per-action features or None)."""
        base = self.encoder(x)
        if self.game is None:
            return base, None
        rows = torch.from_numpy(self.game.compute(x.detach().cpu().numpy()))
        _, glob, act = self.game.split(rows.numpy())
        glob = torch.from_numpy(glob).to(base.device, base.dtype)
        act = torch.from_numpy(act).to(base.device).transpose(1, 2)  # (B, A, F)
        return torch.cat([base, glob], dim=1), act

    def _logits(self, base: torch.Tensor, act: torch.Tensor | None,
                mask: torch.Tensor) -> torch.Tensor:
        h = self.pi_act(self.pi_net(base))
        logits = self.pi_out(h)
        if act is not None:
            bi, ai = (mask > 0).nonzero(as_tuple=True)  # score the legal actions only
            rows = act[bi, ai].to(h.dtype)
            if self.context is not None:
                rows = torch.cat([rows, torch.tanh(self.context(h))[bi]], dim=1)
            scores = torch.zeros_like(logits).index_put((bi, ai), self.scorer(rows).squeeze(-1))
            logits = logits + scores
        return masked_logits(logits, mask)

    # --- RLModule API ----------------------------------------------------------------------
    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        x, mask = _split(batch)
        base, act = self._inputs(x)
        return {Columns.ACTION_DIST_INPUTS: self._logits(base, act, mask)}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        x, mask = _split(batch)
        base, act = self._inputs(x)
        return {Columns.ACTION_DIST_INPUTS: self._logits(base, act, mask),
                Columns.EMBEDDINGS: base}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        if embeddings is None:
            embeddings, _ = self._inputs(_split(batch)[0])
        return self.vf_out(self.vf_act(self.vf_net(embeddings))).squeeze(-1)


class MaskedRandomModule(TorchRLModule):
    """Uniform play over the legal actions (logits 0, masked): the league's ``"random"``."""

    def setup(self) -> None:
        self._unused = torch.nn.Parameter(torch.zeros(1), requires_grad=False)

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        _, mask = _split(batch)
        zeros = torch.zeros(mask.shape, dtype=torch.float32, device=mask.device)
        return {Columns.ACTION_DIST_INPUTS: masked_logits(zeros, mask)}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return self._forward(batch)
