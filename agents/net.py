"""The policy network of card-envs' own PPO trainer and of the ``ppo`` agent (torch only).

One network per game, reading :class:`~card_envs.core.features.PolicyInput` (the encoded
observation ``x`` and the features of the legal actions only):

* a trunk ``x -> hidden[0] -> ... -> hidden[-1]`` (ReLU), shared by the policy and the value;
* the value ``linear(h)``: one output (PPO's return estimate), or with ``value_dim = n`` one
  logit per seat whose softmax is each seat's expected share of the win, the observing seat
  first, then the seats after it in turn order (the ``az`` networks);
* the logit of each legal action ``a``: ``W[a] . h + b[a]`` (a per-action row, gathered for
  the legal actions only) plus a score of its features ``rows`` by a small network shared by
  all actions, ``w2 . relu(U rows + P h) + c`` (``P h`` is the state's context).

Only legal actions are ever scored: log-probabilities, sampling and entropy are computed per
game over its legal actions (the ``offsets`` of :class:`PolicyInput`), so a 703-action game
costs what its ~20 legal actions cost.

The configuration (:meth:`PolicyNet.config`) is a JSON dict; :func:`save_policy` /
:func:`load_policy` keep the weights in a ``safetensors`` file (read and written here by
:mod:`card_envs.agents.weights`, no pickle) and the configuration beside it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from card_envs.agents.weights import WeightsError, read_weights, write_weights
from card_envs.core.features import PolicyInput
from card_envs.core.jit import njit
from card_envs.core.registry import env_class, resolve_env_id

__all__ = ["FORMAT", "NetPolicy", "PolicyNet", "load_policy", "sample_segments",
           "save_policy", "segment_ids", "segment_log_softmax"]

#: the ``format`` of the configuration stored with the weights
FORMAT = "card-envs-policy"
FORMAT_VERSION = 1


def segment_ids(offsets: torch.Tensor) -> torch.Tensor:
    """The game of every legal-action row: ``i`` repeated ``offsets[i+1] - offsets[i]``
    times."""
    counts = offsets[1:] - offsets[:-1]
    return torch.repeat_interleave(torch.arange(counts.numel(), device=offsets.device), counts)


def segment_log_softmax(logits: torch.Tensor, seg: torch.Tensor, n: int) -> torch.Tensor:
    """``log softmax`` of ``logits`` within each game (``seg``: the game of each entry; ``n``
    games, each with at least one entry)."""
    mx = torch.full((n,), -torch.inf, dtype=logits.dtype, device=logits.device)
    mx = mx.scatter_reduce(0, seg, logits.detach(), "amax", include_self=True)
    z = logits - mx[seg]
    tot = torch.zeros(n, dtype=logits.dtype, device=logits.device).index_add_(0, seg, z.exp())
    return z - tot.log()[seg]


class PolicyNet(nn.Module):
    """Actor-critic over legal actions (module docstring). ``config`` keys: ``in_dim``,
    ``num_actions``, ``action_dim`` (per-action features, 0: none), ``hidden`` (trunk widths),
    ``scorer`` (hidden width of the per-action scorer), ``value_dim`` (1: a scalar value; ``n``:
    the logits of every seat's share of the win, observing seat first)."""

    def __init__(self, in_dim: int, num_actions: int, action_dim: int,
                 hidden: tuple[int, ...] | list[int] = (128, 128), scorer: int = 32,
                 value_dim: int = 1) -> None:
        super().__init__()
        self.in_dim, self.num_actions = int(in_dim), int(num_actions)
        self.action_dim, self.hidden, self.scorer_dim = int(action_dim), tuple(hidden), \
            int(scorer)
        self.value_dim = int(value_dim)
        layers: list[nn.Module] = []
        d = self.in_dim
        for h in self.hidden:
            layers += [nn.Linear(d, h), nn.ReLU()]
            d = h
        self.trunk = nn.Sequential(*layers)
        self.value = nn.Linear(d, self.value_dim)
        self.head_w = nn.Parameter(torch.zeros(self.num_actions, d))
        self.head_b = nn.Parameter(torch.zeros(self.num_actions))
        nn.init.normal_(self.head_w, 0.0, 0.01)
        if self.action_dim and self.scorer_dim:
            self.ctx = nn.Linear(d, self.scorer_dim)
            self.feat = nn.Linear(self.action_dim, self.scorer_dim, bias=False)
            self.out = nn.Linear(self.scorer_dim, 1)
            nn.init.normal_(self.out.weight, 0.0, 0.01)
        else:
            self.ctx = self.feat = self.out = None

    def config(self) -> dict[str, Any]:
        """The constructor's arguments (JSON)."""
        cfg: dict[str, Any] = {"in_dim": self.in_dim, "num_actions": self.num_actions,
                               "action_dim": self.action_dim, "hidden": list(self.hidden),
                               "scorer": self.scorer_dim}
        if self.value_dim != 1:
            cfg["value_dim"] = self.value_dim
        return cfg

    def forward(self, x: torch.Tensor, rows: torch.Tensor, acts: torch.Tensor,
                seg: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(logits of the legal actions (K,), values (B,) or (B, value_dim))`` (inputs:
        :class:`PolicyInput`, ``seg = segment_ids(offsets)``)."""
        h = self.trunk(x)
        hs = h.index_select(0, seg)
        logits = (hs * self.head_w.index_select(0, acts)).sum(1) + self.head_b.index_select(
            0, acts)
        if self.out is not None:
            z = torch.relu(self.feat(rows) + self.ctx(h).index_select(0, seg))
            logits = logits + self.out(z).squeeze(1)
        return logits, self._value(h)

    def _value(self, h: torch.Tensor) -> torch.Tensor:
        v = self.value(h)
        return v.squeeze(1) if self.value_dim == 1 else v

    def value_of(self, x: torch.Tensor) -> torch.Tensor:
        """The value of encoded observations ``x`` (no actions needed)."""
        return self._value(self.trunk(x))

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())


def as_tensors(x: np.ndarray, rows: np.ndarray, acts: np.ndarray, offsets: np.ndarray
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """:class:`PolicyInput`'s arrays as tensors (no copies) plus the segment ids."""
    off = torch.from_numpy(offsets)
    return (torch.from_numpy(x), torch.from_numpy(rows), torch.from_numpy(acts),
            segment_ids(off))


@njit(cache=True, nogil=True)
def sample_segments(logits, offsets, acts, uniforms, greedy, out_actions, out_logp):
    """For every game ``i``: an action drawn from ``softmax(logits[offsets[i]:offsets[i+1]])``
    by the Gumbel-max trick with ``uniforms`` (one per row, in (0, 1)), or the argmax if
    ``greedy``; writes the action (``acts`` of that row) and its log-probability."""
    for i in range(offsets.shape[0] - 1):
        lo, hi = offsets[i], offsets[i + 1]
        mx = -np.inf
        for k in range(lo, hi):
            if logits[k] > mx:
                mx = logits[k]
        tot = 0.0
        for k in range(lo, hi):
            tot += np.exp(logits[k] - mx)
        best, pick = -np.inf, lo
        for k in range(lo, hi):
            g = logits[k] if greedy else logits[k] - np.log(-np.log(uniforms[k]))
            if g > best:
                best, pick = g, k
        out_actions[i] = acts[pick]
        out_logp[i] = logits[pick] - mx - np.log(tot)


class NetPolicy:
    """A :class:`PolicyNet` with its game: batched ``(observations, masks) -> actions``.

    ``env_id``, ``num_players`` and the game ``options`` fix the game (and so the network's
    input); ``net`` defaults to a fresh network of ``hidden`` / ``scorer`` widths. Calling it
    plays greedily, or samples with ``rng`` (a ``numpy.random.Generator``) when given."""

    def __init__(self, env_id: str, num_players: int = 2, options: dict[str, Any] | None = None,
                 net: PolicyNet | None = None, hidden: tuple[int, ...] = (128, 128),
                 scorer: int = 32, one_hot_max: int = 40, one_hot_budget: int = 1024,
                 info: dict[str, Any] | None = None, value_dim: int = 1) -> None:
        self.env_id = resolve_env_id(env_id)
        self.num_players = int(num_players)
        self.options = dict(options or {})
        cls = env_class(self.env_id).game_class
        self.game = cls(num_players=self.num_players, **self.options)
        self.pinput = PolicyInput(self.game, one_hot_max, one_hot_budget)
        if net is None:
            net = PolicyNet(self.pinput.in_dim, self.game.num_actions, self.pinput.action_dim,
                            hidden, scorer, value_dim)
        want = (self.pinput.in_dim, self.game.num_actions, self.pinput.action_dim)
        have = (net.in_dim, net.num_actions, net.action_dim)
        if have != want:
            raise WeightsError(f"the network reads (input, actions, action features) {have}; "
                               f"{self.env_id} with these options gives {want}")
        self.net = net
        self.info = dict(info or {})

    def inputs(self, obs: np.ndarray, masks: np.ndarray, threads: int | None = None
               ) -> tuple[torch.Tensor, ...]:
        """The network's tensors for raw observations and masks."""
        return as_tensors(*self.pinput.compute(obs, masks, threads))

    @torch.no_grad()
    def __call__(self, obs: np.ndarray, masks: np.ndarray,
                 rng: np.random.Generator | None = None) -> np.ndarray:
        return self.act(obs, masks, rng)[0]

    @torch.no_grad()
    def act(self, obs: np.ndarray, masks: np.ndarray, rng: np.random.Generator | None = None,
            threads: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(actions, log-probabilities, values)`` for a batch (greedy without ``rng``)."""
        obs = np.asarray(obs)
        masks = np.asarray(masks)
        single = obs.ndim == 1
        if single:
            obs, masks = obs[None], masks[None]
        if not np.asarray(masks).any(axis=1).all():
            raise ValueError("every mask needs at least one legal action")
        x, rows, acts, offsets = self.pinput.compute(obs, masks, threads)
        logits, values = self.net(*as_tensors(x, rows, acts, offsets))
        lg = logits.numpy().astype(np.float64)
        u = rng.random(lg.shape[0]) if rng is not None else np.zeros(0)
        actions = np.empty(obs.shape[0], np.int64)
        logp = np.empty(obs.shape[0], np.float64)
        sample_segments(lg, offsets, acts, u if rng is not None else lg, rng is None,
                        actions, logp)
        return actions, logp, values.numpy()

    def config(self) -> dict[str, Any]:
        """What the weights file records about this policy (JSON)."""
        return {"format": FORMAT, "format_version": FORMAT_VERSION, "env_id": self.env_id,
                "game_version": self.game.version, "num_players": self.num_players,
                "options": self.options,
                "encoding": {"one_hot_max": self.pinput.one_hot_max,
                             "one_hot_budget": self.pinput.one_hot_budget},
                "net": self.net.config()}


def save_policy(policy: NetPolicy, path: str | Path, info: dict[str, Any] | None = None
                ) -> Path:
    """Write ``policy``'s weights (float32, no optimizer state) and configuration to
    ``path`` (a ``.safetensors`` file; the configuration and ``info`` are in its metadata)
    and a readable ``.json`` beside it. Returns the weights path."""
    path = Path(path)
    if path.suffix != ".safetensors":
        path = path.with_name(path.name + ".safetensors")
    cfg = policy.config()
    record = {**cfg, **({"info": info} if info else {})}
    tensors = {k: v.detach().cpu().float().numpy() for k, v in policy.net.state_dict().items()}
    write_weights(path, tensors, {"card_envs": json.dumps(cfg, sort_keys=True)})
    path.with_suffix(".json").write_text(json.dumps(record, indent=1, default=str) + "\n")
    return path


def _config_error(path: Path, msg: str) -> WeightsError:
    return WeightsError(f"{path}: {msg}")


def load_policy(path: str | Path, env_id: str | None = None, num_players: int | None = None,
                options: dict[str, Any] | None = None) -> NetPolicy:
    """The :class:`NetPolicy` saved at ``path`` by :func:`save_policy`. With ``env_id`` (and
    ``num_players``), a policy of another game, game version or player count is refused
    (:class:`~card_envs.agents.weights.WeightsError`); ``options`` the caller plays with must
    not change the network's input."""
    path = Path(path)
    tensors, meta = read_weights(path)
    try:
        cfg = json.loads(meta["card_envs"])
    except (KeyError, ValueError):
        raise _config_error(path, "not a card-envs policy (no configuration in its "
                            "metadata)") from None
    if not isinstance(cfg, dict) or cfg.get("format") != FORMAT \
            or cfg.get("format_version") != FORMAT_VERSION:
        raise _config_error(path, f"not a {FORMAT} file of version {FORMAT_VERSION}")
    try:
        saved_env = resolve_env_id(str(cfg["env_id"]))
        players = int(cfg["num_players"])
        saved_opts = dict(cfg.get("options") or {})
        enc = dict(cfg["encoding"])
        netc = dict(cfg["net"])
        net = PolicyNet(int(netc["in_dim"]), int(netc["num_actions"]),
                        int(netc["action_dim"]), [int(h) for h in netc["hidden"]],
                        int(netc["scorer"]), int(netc.get("value_dim", 1)))
    except (KeyError, TypeError, ValueError) as e:
        raise _config_error(path, f"bad configuration ({e})") from None
    if env_id is not None and resolve_env_id(env_id) != saved_env:
        raise _config_error(path, f"a policy for {saved_env}, not {resolve_env_id(env_id)}")
    version = env_class(saved_env).game_class.version
    if cfg.get("game_version") != version:
        raise _config_error(path, f"trained on {saved_env} version "
                            f"{cfg.get('game_version')!r}; this is version {version!r}")
    if num_players is not None and int(num_players) != players:
        raise _config_error(path, f"trained for {players} players, not {num_players}")
    want = {k: tuple(v.shape) for k, v in net.state_dict().items()}
    have = {k: tuple(v.shape) for k, v in tensors.items()}
    if want != have:
        raise _config_error(path, "its tensors do not match its network configuration")
    if not all(np.isfinite(v).all() for v in tensors.values() if v.dtype.kind == "f"):
        raise _config_error(path, "its weights are not all finite")
    net.load_state_dict({k: torch.from_numpy(np.asarray(v, np.float32))
                         for k, v in tensors.items()})
    net.eval()
    opts = {**saved_opts, **{k: v for k, v in (options or {}).items() if k in saved_opts}}
    return NetPolicy(saved_env, players, opts, net, one_hot_max=int(enc["one_hot_max"]),
                     one_hot_budget=int(enc["one_hot_budget"]), info=cfg)
