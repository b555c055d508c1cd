"""The policy networks of :mod:`card_envs.rl.sb3.train`: a leaner MaskablePPO policy, the
observation features and the action-aligned head.

* :class:`MaskedPolicy`: sb3-contrib's ``MaskableActorCriticPolicy`` for ``Discrete`` actions
  with the same masked categorical distribution computed in one pass (below);
* :class:`ObsFeatures`: symlog and one-hot features of the integer observation, plus the game's
  own (action-aligned) features when it has some (its manifest's ``train.features``);
* :class:`ActionFeaturePolicy`: a :class:`MaskedPolicy` whose logits add a score per action
  computed from that action's features by one small network shared by all actions.

>>> from sb3_contrib import MaskablePPO
>>> from card_envs.rl import MaskedPolicy
>>> model = MaskablePPO(MaskedPolicy, venv)                                # doctest: +SKIP

sb3-contrib builds a ``MaskableCategorical`` per call: ``torch.distributions.Categorical`` with
argument validation, normalized twice (before and after masking), sampled with
``torch.multinomial``. With a small network on a batch of a thousand games, that costs about
as much as the network itself. :class:`MaskedPolicy` computes the same quantities directly:

* ``log p = log_softmax(where(mask, logits, -1e8))`` (the same ``-1e8`` masking constant);
* sampling by the Gumbel-max trick ``argmax(log p - log E)``, ``E = -log U ~ Exp(1)``
  (exactly a draw from ``p``; an illegal action has ``log p ~ -1e8`` and is never drawn),
  greedy ``argmax``;
* the entropy ``-sum p log p`` over legal actions only (as ``MaskableCategorical.entropy``);
* the default activation ``nn.Tanh`` is replaced by :class:`FastTanh`, the same function
  computed as ``2 sigmoid(2x) - 1`` (torch's CPU ``tanh`` is about 4x slower than ``sigmoid``:
  0.48 vs 0.12 ms on a 1024 x 128 batch here).

``forward`` (rollouts), ``evaluate_actions`` (PPO updates) and ``_predict`` (``predict``, the
arena's ``PPOAgent``, self-play opponents) use it; everything else (``get_distribution``,
saving, loading) is inherited. The values and log-probabilities equal the parent's (tested);
the sampled actions follow the same distribution but use the torch RNG differently.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

from card_envs.rl.nets import mlp, one_hot_layout

__all__ = ["ActionFeaturePolicy", "FastTanh", "MaskedPolicy", "ObsFeatures", "game_features",
           "masked_log_softmax"]

HUGE_NEG = -1e8  # sb3-contrib's masking constant


def masked_log_softmax(logits: torch.Tensor, masks: Any) -> torch.Tensor:
    """``log_softmax`` over the legal actions (``masks`` true; ``None``: all legal); illegal
    actions get about ``-1e8``."""
    if masks is not None:
        m = torch.as_tensor(masks, dtype=torch.bool, device=logits.device)
        logits = torch.where(m.reshape(logits.shape), logits,
                             torch.tensor(HUGE_NEG, dtype=logits.dtype, device=logits.device))
    return torch.log_softmax(logits, dim=-1)


class FastTanh(torch.nn.Module):
    """``tanh(x)`` computed as ``2 sigmoid(2x) - 1`` (faster on CPU, same function)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = torch.sigmoid(2.0 * x)
        if torch.is_grad_enabled() and s.requires_grad:  # backward needs the sigmoid output
            return 2.0 * s - 1.0
        return s.mul_(2.0).sub_(1.0)


def _sample(logp: torch.Tensor, deterministic: bool) -> torch.Tensor:
    if deterministic:
        return logp.argmax(dim=-1)
    g = torch.rand_like(logp).clamp_(min=1e-20).log_().neg_().log_()  # log E, E ~ Exp(1)
    return (logp - g).argmax(dim=-1)


#: masks with at most this share of legal entries use the sparse path (:class:`_LegalLogits`)
SPARSE_DENSITY = 0.125


class _LegalLogits:
    """The masked categorical distribution over the legal entries ``(bi, ai)`` only:
    log-probabilities by a per-row log-sum-exp, Gumbel-max sampling and the entropy over
    those entries instead of over all ``A`` actions. The same distribution as
    ``log_softmax(where(mask, logits, -1e8))`` (an illegal action's probability is 0 either
    way) at a fraction of the cost when few actions are legal (Op Glad IJs: ~22 of 703)."""

    def __init__(self, logits: torch.Tensor, bi: torch.Tensor, ai: torch.Tensor) -> None:
        self.logits, self.bi, self.ai = logits, bi, ai
        B = logits.shape[0]
        legal = logits[bi, ai]
        peak = torch.full((B,), -torch.inf, dtype=logits.dtype, device=logits.device)
        peak = peak.scatter_reduce(0, bi, legal.detach(), "amax")
        total = torch.zeros(B, dtype=logits.dtype, device=logits.device)
        total = total.index_add(0, bi, torch.exp(legal - peak[bi]))
        self.lse = torch.log(total) + peak           # per row
        self.logp = legal - self.lse[bi]             # per legal entry

    def sample(self, deterministic: bool) -> torch.Tensor:
        """One action per row: the most likely (``deterministic``) or a draw (Gumbel-max)."""
        key = self.logp.detach()
        if not deterministic:
            key = key - torch.rand_like(key).clamp_(min=1e-20).log_().neg_().log_()
        B = self.logits.shape[0]
        best = torch.full((B,), -torch.inf, dtype=key.dtype, device=key.device)
        best = best.scatter_reduce(0, self.bi, key, "amax")
        win = key == best[self.bi]
        actions = torch.zeros(B, dtype=torch.long, device=key.device)
        return actions.index_put_((self.bi[win],), self.ai[win])

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        """Log-probabilities of one (legal) action per row."""
        return self.logits.gather(1, actions.reshape(-1, 1)).squeeze(1) - self.lse

    def entropy(self) -> torch.Tensor:
        """``-sum p log p`` over each row's legal actions."""
        p_log_p = torch.exp(self.logp) * self.logp
        out = torch.zeros(self.logits.shape[0], dtype=p_log_p.dtype, device=p_log_p.device)
        return -out.index_add(0, self.bi, p_log_p)


class MaskedPolicy(MaskableActorCriticPolicy):
    """``MaskableActorCriticPolicy`` with the masked distribution computed in one pass (module
    docstring). Same constructor, networks, saving and loading."""

    def __init__(self, observation_space: spaces.Space, action_space: spaces.Space,
                 *args: Any, **kwargs: Any) -> None:
        if not isinstance(action_space, spaces.Discrete):
            raise TypeError(f"MaskedPolicy needs a Discrete action space, got {action_space}")
        if kwargs.get("activation_fn", torch.nn.Tanh) is torch.nn.Tanh:
            kwargs["activation_fn"] = FastTanh
        super().__init__(observation_space, action_space, *args, **kwargs)

    def _latents(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        features = self.extract_features(obs)
        if self.share_features_extractor:
            return self.mlp_extractor(features)
        pi_features, vf_features = features
        return (self.mlp_extractor.forward_actor(pi_features),
                self.mlp_extractor.forward_critic(vf_features))

    def forward(self, obs: torch.Tensor, deterministic: bool = False,
                action_masks: np.ndarray | None = None
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(actions, values, log-probabilities of the actions)."""
        latent_pi, latent_vf = self._latents(obs)
        values = self.value_net(latent_vf)
        legal = self._legal(latent_pi, action_masks)
        if legal is not None:
            actions = legal.sample(deterministic)
            return actions, values, legal.log_prob(actions)
        logp = masked_log_softmax(self.action_net(latent_pi), action_masks)
        actions = _sample(logp, deterministic)
        return actions, values, logp.gather(-1, actions.unsqueeze(-1)).squeeze(-1)

    def evaluate_actions(self, obs: torch.Tensor, actions: torch.Tensor,
                         action_masks: torch.Tensor | None = None
                         ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(values, log-probabilities of ``actions``, entropies) for the PPO loss."""
        latent_pi, latent_vf = self._latents(obs)
        legal = self._legal(latent_pi, action_masks)
        if legal is not None:
            return self.value_net(latent_vf), legal.log_prob(actions.long().reshape(-1)), \
                legal.entropy()
        logp = masked_log_softmax(self.action_net(latent_pi), action_masks)
        log_prob = logp.gather(-1, actions.long().reshape(-1, 1)).squeeze(-1)
        p_log_p = logp.exp() * logp
        if action_masks is not None:
            m = torch.as_tensor(action_masks, dtype=torch.bool, device=logp.device)
            p_log_p = torch.where(m.reshape(logp.shape), p_log_p, 0.0)
        return self.value_net(latent_vf), log_prob, -p_log_p.sum(-1)

    def _legal(self, latent_pi: torch.Tensor, masks: Any) -> _LegalLogits | None:
        """The distribution over the legal actions only (:class:`_LegalLogits`), when the
        mask leaves few of them (density below ``SPARSE_DENSITY``) and every row has one;
        else None (the dense path)."""
        if masks is None:
            return None
        m = torch.as_tensor(masks, device=latent_pi.device).reshape(latent_pi.shape[0], -1)
        m = m if m.dtype == torch.bool else m > 0.5
        bi, ai = m.nonzero(as_tuple=True)
        if bi.numel() > SPARSE_DENSITY * m.numel() or bi.numel() == 0:
            return None
        if bool((torch.bincount(bi, minlength=m.shape[0]) == 0).any()):
            return None  # a row without a legal action: the dense path's convention
        return _LegalLogits(self.action_net(latent_pi), bi, ai)

    def prepare(self, observation: Any) -> Any:
        """Raw observations as the policy's input (their features computed when the
        features extractor expects them: :meth:`ObsFeatures.prepare`)."""
        prep = getattr(self.features_extractor, "prepare", None)
        return observation if prep is None else prep(observation)

    def predict(self, observation: Any, state: Any = None, episode_start: Any = None,
                deterministic: bool = False, action_masks: np.ndarray | None = None
                ) -> tuple[np.ndarray, Any]:
        """SB3's ``predict``, also on raw observations of a policy with features."""
        return super().predict(self.prepare(observation), state, episode_start,
                               deterministic, action_masks)

    def act(self, observation: np.ndarray, action_masks: np.ndarray | None = None,
            deterministic: bool = False) -> np.ndarray:
        """Actions for a batch of raw observations (``(B, L)`` or ``(L,)``): ``predict``
        without its per-call checks and mode switches (these networks have no dropout or
        batch norm), for self-play opponents that are called many times per step."""
        x = self.prepare(np.asarray(observation))
        single = x.ndim == 1
        with torch.no_grad():
            t = torch.as_tensor(x[None] if single else x, device=self.device).float()
            a = self._predict(t, deterministic, action_masks).cpu().numpy()
        return a[0] if single else a

    def _predict(self, observation: torch.Tensor, deterministic: bool = False,
                 action_masks: np.ndarray | None = None) -> torch.Tensor:
        features = super(MaskableActorCriticPolicy, self).extract_features(
            observation, self.pi_features_extractor)
        return self._act_from(self.mlp_extractor.forward_actor(features), action_masks,
                              deterministic)

    def _act_from(self, latent_pi: torch.Tensor, action_masks: Any,
                  deterministic: bool) -> torch.Tensor:
        legal = self._legal(latent_pi, action_masks)
        if legal is not None:
            return legal.sample(deterministic)
        return _sample(masked_log_softmax(self.action_net(latent_pi), action_masks),
                       deterministic)


class ObsFeatures(BaseFeaturesExtractor):
    """Features of an integer observation vector: ``symlog(x) = sign(x) log(1 + |x|)`` of every
    entry, and a one-hot code of every entry whose declared range ``low..high`` has 3 to
    ``one_hot_max`` values (card codes, cells, small counts: an MLP reads them far more easily
    than one scaled number), the limit lowered until the one-hot part has at most
    ``one_hot_budget`` columns; ``one_hot_max=0``: symlog only. Values outside the declared
    range get no one-hot bit.

    ``embed_dim=0``: the features are ``[symlog(x), one_hot(x)]`` (no parameters).
    ``embed_dim=d``: a first layer shared by policy and value, ``tanh(W symlog(x) +
    sum of the one-hot entries' embeddings)``, ``d`` features: the same function as a linear
    layer on the concatenation, at the cost of a lookup per entry instead of a dense product.

    ``features={"env_id": ..., "options": {...}}``: the observations carry the game's
    features (:class:`card_envs.core.features.Features`: ``[obs, global, per-action]`` rows,
    computed once per observation by the environment, e.g. ``BatchedVecEnv(features=True)``);
    the output is ``[base(obs), global, per_action]`` with the per-action block feature-major
    (``F`` rows of ``A`` values), ``global_dim`` the width of ``[base, global]`` and
    ``action_shape`` ``(A, F)`` (:class:`ActionFeaturePolicy` scores it per action; a plain
    ``MlpPolicy`` reads it as more inputs). :meth:`prepare` turns raw observations into such
    rows (``predict`` on a raw observation does it: see :class:`MaskedPolicy`). Without
    features ``global_dim == features_dim`` and ``action_shape is None``."""

    def __init__(self, observation_space: gymnasium.spaces.Box, one_hot_max: int = 40,
                 one_hot_budget: int = 1024, embed_dim: int = 0,
                 features: dict[str, Any] | None = None) -> None:
        fx = game_features(features) if features else None
        raw = observation_space.shape[0] if fx is None else fx.obs_size
        if fx is not None and observation_space.shape != (fx.width,):
            raise ValueError(f"observation space {observation_space.shape} does not hold "
                             f"{fx} ({fx.width} values)")
        low = np.asarray(observation_space.low[:raw], np.int64).ravel()
        cols, offsets, width, n_hot = one_hot_layout(low, observation_space.high[:raw],
                                                     one_hot_max, one_hot_budget)
        base = embed_dim or low.size + n_hot
        extra = 0 if fx is None else fx.global_dim
        action_shape = None if fx is None else (fx.num_actions, fx.action_dim)
        per_action = 0 if fx is None else fx.num_actions * fx.action_dim
        super().__init__(observation_space, base + extra + per_action)
        self.features = fx
        self.raw_size = int(raw)
        self.global_dim = base + extra
        self.action_shape = action_shape
        self.register_buffer("cols", torch.as_tensor(cols), persistent=False)
        self.register_buffer("low", torch.as_tensor(low[cols]), persistent=False)
        self.register_buffer("width", torch.as_tensor(width[cols]), persistent=False)
        self.register_buffer("offsets", torch.as_tensor(offsets), persistent=False)
        self.n_hot = n_hot
        self.embed_dim = embed_dim
        if embed_dim:
            self.dense = torch.nn.Linear(low.size, embed_dim)
            self.embed = torch.nn.EmbeddingBag(n_hot + 1, embed_dim, mode="sum",
                                               padding_idx=n_hot)
            torch.nn.init.normal_(self.embed.weight, 0.0, 1.0 / math.sqrt(max(1, cols.size)))
            with torch.no_grad():
                self.embed.weight[n_hot].zero_()

    def _hot_index(self, x: torch.Tensor) -> torch.Tensor:
        """Column of every one-hot entry's bit (``n_hot`` for a value out of range)."""
        v = x[:, self.cols].round().long() - self.low
        ok = (v >= 0) & (v < self.width)
        return torch.where(ok, v + self.offsets, self.n_hot)

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        x = observations.flatten(1)
        if self.features is None:
            return self._base(x)
        return self._base(x[:, :self.raw_size], x[:, self.raw_size:])

    def split(self, observations: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """``(global features, per-action block)``: ``forward``'s output in two parts, the
        per-action block (``(B, F, A)``) a view of the observations, never copied (it is
        most of a row: Isflak 3,859 of 4,331 values); ``None`` without features."""
        x = observations.flatten(1)
        if self.action_shape is None:
            return self.forward(x), None
        g = self.raw_size + self.features.global_dim
        A, F = self.action_shape
        return self._base(x[:, :self.raw_size], x[:, self.raw_size:g]), \
            x[:, g:].reshape(-1, F, A)

    def prepare(self, obs: np.ndarray) -> np.ndarray:
        """Raw observations (``(L,)`` or ``(B, L)``) as this extractor's input: with their
        features computed (unchanged without features, or if they already have them)."""
        a = np.asarray(obs)
        if self.features is None or a.shape[-1] != self.raw_size \
                or a.shape[-1] == self.features.width:
            return a
        return self.features.compute(a)

    def _base(self, x: torch.Tensor, tail: torch.Tensor | None = None) -> torch.Tensor:
        """``[symlog(x), one_hot(x), tail]`` (or the embedding), written into one tensor."""
        if self.embed_dim:
            out = self.dense(torch.log1p(x.abs()).copysign_(x))
            if self.n_hot:
                out = out + self.embed(self._hot_index(x))
            out = torch.tanh(out)
            return out if tail is None else torch.cat([out, tail], dim=1)
        n, k = x.shape
        extra = 0 if tail is None else tail.shape[1]
        out = torch.empty(n, k + self.n_hot + extra, dtype=x.dtype, device=x.device)
        torch.log1p(x.abs(), out=out[:, :k]).copysign_(x)  # symlog(x) = sign(x) log(1 + |x|)
        if self.n_hot:
            hot = torch.zeros(n, self.n_hot + 1, dtype=x.dtype, device=x.device)
            hot.scatter_(1, self._hot_index(x), 1.0)
            out[:, k:k + self.n_hot] = hot[:, :self.n_hot]
        if extra:
            out[:, k + self.n_hot:] = tail
        return out


def game_features(spec: dict[str, Any]) -> Any:
    """The :class:`~card_envs.core.features.Features` of ``spec`` ``{"env_id", "options"}``
    (``ValueError`` if that game has none)."""
    from card_envs.core.features import Features
    from card_envs.core.registry import env_class

    return Features(env_class(spec["env_id"]).game_class(**(spec.get("options") or {})))


# ------------------------------------------------------------------------------------------
# policy with an action-aligned head
# ------------------------------------------------------------------------------------------
class _ActionMlpExtractor(torch.nn.Module):
    """SB3's policy/value MLPs on the global features, plus a per-action score: a net shared by
    all actions on ``[per-action features, context]`` (``context``: ``tanh`` of a linear map of
    the policy MLP's output). ``latent_pi = [policy MLP output, one score per action]``.

    Convention: per-action feature 0 is the game's "legal" flag, 1 for (at least) every action
    the mask allows; only those rows are scored (the others get 0, and are masked)."""

    def __init__(self, global_dim: int, action_shape: tuple[int, int], net_arch: Any,
                 activation_fn: type[torch.nn.Module], scorer_arch: Sequence[int],
                 context_dim: int) -> None:
        from stable_baselines3.common.torch_layers import MlpExtractor

        super().__init__()
        self.global_dim = global_dim
        self.num_actions, self.action_dim = action_shape
        self.mlp = MlpExtractor(global_dim, net_arch=net_arch, activation_fn=activation_fn)
        self.hidden_pi = self.mlp.latent_dim_pi
        self.context = torch.nn.Linear(self.hidden_pi, context_dim) if context_dim else None
        self.scorer = mlp([self.action_dim + context_dim, *scorer_arch, 1], torch.nn.ReLU)
        self.latent_dim_pi = self.hidden_pi + self.num_actions
        self.latent_dim_vf = self.mlp.latent_dim_vf

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        a = features[:, self.global_dim:].reshape(-1, self.action_dim, self.num_actions)
        return self.actor(features[:, :self.global_dim], a)

    def actor(self, g: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        """``latent_pi`` from the global features ``g`` and the per-action block ``a``
        (``(B, F, A)``, :meth:`ObsFeatures.split`)."""
        h = self.mlp.forward_actor(g)
        # score only the actions whose first feature (the game's "legal" flag, a superset of
        # the action mask) is set: illegal actions are masked anyway
        bi, ai = (a[:, 0] > 0).nonzero(as_tuple=True)
        rows = a[bi, :, ai]
        if self.context is not None:
            rows = torch.cat([rows, torch.tanh(self.context(h))[bi]], dim=1)
        scores = torch.zeros(a.shape[0], self.num_actions, dtype=h.dtype, device=h.device)
        scores = scores.index_put((bi, ai), self.scorer(rows).squeeze(-1))
        return torch.cat([h, scores], dim=1)

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.mlp.forward_critic(features[:, :self.global_dim])

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)


class _AlignedHead(torch.nn.Module):
    """Action logits ``linear(h) + score``: ``latent_pi = [h, one score per action]``."""

    def __init__(self, hidden: int, num_actions: int) -> None:
        super().__init__()
        self.hidden = hidden
        self.linear = torch.nn.Linear(hidden, num_actions)

    def forward(self, latent: torch.Tensor) -> torch.Tensor:
        return self.linear(latent[:, :self.hidden]) + latent[:, self.hidden:]


class ActionFeaturePolicy(MaskedPolicy):
    """The MLP policy (:class:`MaskedPolicy`: sb3-contrib's masked policy with
    the distribution computed in one pass) with an action-aligned head for games with
    per-action features
    (:class:`ObsFeatures` with ``game_features``): the logit of action ``a`` is ``linear(h)[a]
    + scorer([features of a, context(h)])``, ``h`` the policy MLP's output on the global
    features, the scorer (``scorer_arch`` hidden layers, ReLU) shared by all actions, so what
    is learned about one action (say "a move onto a 3-point card") holds for every penguin,
    direction and distance at once. The value MLP reads the global features. Without
    per-action features it is the plain MLP policy. Saved models refer to this class
    (``card_envs.rl.sb3.policy.ActionFeaturePolicy``)."""

    def __init__(self, *args: Any, scorer_arch: Sequence[int] = (64,), context_dim: int = 8,
                 **kwargs: Any) -> None:
        self.scorer_arch = [int(h) for h in scorer_arch]
        self.context_dim = int(context_dim)
        super().__init__(*args, **kwargs)

    def _aligned(self) -> bool:
        return getattr(self.features_extractor, "action_shape", None) is not None

    def _build_mlp_extractor(self) -> None:
        if not self._aligned():
            super()._build_mlp_extractor()
            return
        fx = self.features_extractor
        self.mlp_extractor = _ActionMlpExtractor(fx.global_dim, fx.action_shape, self.net_arch,
                                                 self.activation_fn, self.scorer_arch,
                                                 self.context_dim)

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        if not self._aligned():
            return
        ext = self.mlp_extractor
        self.action_net = _AlignedHead(ext.hidden_pi, ext.num_actions)
        self.init_weights(self.action_net.linear, gain=0.01)
        self.init_weights(ext.scorer[-1], gain=0.01)
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1),
                                              **self.optimizer_kwargs)

    def _latents(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if not self._aligned() or not self.share_features_extractor:
            return super()._latents(obs)
        g, a = self.features_extractor.split(obs)  # the per-action block is not copied
        return self.mlp_extractor.actor(g, a), self.mlp_extractor.mlp.forward_critic(g)

    def _predict(self, observation: torch.Tensor, deterministic: bool = False,
                 action_masks: np.ndarray | None = None) -> torch.Tensor:
        if not self._aligned():
            return super()._predict(observation, deterministic, action_masks)
        g, a = self.pi_features_extractor.split(observation.float())
        return self._act_from(self.mlp_extractor.actor(g, a), action_masks, deterministic)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data.update(scorer_arch=self.scorer_arch, context_dim=self.context_dim)
        return data
