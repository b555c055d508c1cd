"""What a rollout of the native PPO is (:class:`Rollout`: plain arrays, the same whether a
sampler ran in this process or on a Ray actor), how several samplers' rollouts merge, and the
small pieces both halves share (the full-information critic, weights as arrays)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from card_envs.rl.trajectories import gae, gather_rows

__all__ = ["Rollout", "critic_net", "load_arrays", "merge_rollouts", "state_arrays",
           "warm_learner_kernels"]


def critic_net(in_dim: int, hidden: list[int]) -> torch.nn.Module:
    """The full-information value network (critic="full"): an MLP over every seat's view."""
    layers: list[torch.nn.Module] = []
    for h in hidden:
        layers += [torch.nn.Linear(in_dim, h), torch.nn.ReLU()]
        in_dim = h
    return torch.nn.Sequential(*layers, torch.nn.Linear(in_dim, 1))


def state_arrays(module: torch.nn.Module) -> dict[str, np.ndarray]:
    """A module's weights as numpy arrays (copies: what a sampler receives)."""
    return {k: v.detach().cpu().numpy().copy() for k, v in module.state_dict().items()}


def load_arrays(module: torch.nn.Module, arrays: dict[str, np.ndarray]) -> None:
    module.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in arrays.items()})


@dataclass
class Rollout:
    """One sampler's rollout: ``n`` learner samples (the network's input ``x``, the legal
    actions' rows ``rows``/``racts`` in CSR form by ``roff``, action, log-probability, value,
    reward, potential, end flag, the index of the same seat's next sample (or -1), the
    bootstrap value and potential of a cut trajectory), the other seats' views ``cx``
    (critic="full"), every move played (``env_steps``), the games finished and their deals'
    fingerprints (``deals``), the sampler's index and generation, and its time split."""

    x: np.ndarray
    rows: np.ndarray
    racts: np.ndarray
    roff: np.ndarray
    cx: np.ndarray
    act: np.ndarray
    logp: np.ndarray
    val: np.ndarray
    rew: np.ndarray
    phi: np.ndarray
    done: np.ndarray
    next: np.ndarray
    boot: np.ndarray
    boot_phi: np.ndarray
    env_steps: int
    deals: np.ndarray
    index: int = 0
    generation: int = 0
    seconds: float = 0.0
    prof: dict[str, float] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return int(self.act.shape[0])


def merge_rollouts(parts: list[Rollout]) -> Rollout:
    """One rollout of several samplers' (links and row offsets shifted; ``deals``, steps and
    time profile summed)."""
    if len(parts) == 1:
        return parts[0]
    offs = np.cumsum([0] + [p.n for p in parts])
    row_offs = np.cumsum([0] + [int(p.roff[p.n]) for p in parts])
    nxt = np.concatenate([np.where(p.next >= 0, p.next + o, -1)
                          for p, o in zip(parts, offs[:-1])])
    roff = np.concatenate([p.roff[:p.n] + r for p, r in zip(parts, row_offs[:-1])]
                          + [np.array([row_offs[-1]], np.int64)])
    cat = {k: np.concatenate([getattr(p, k) for p in parts])
           for k in ("x", "cx", "act", "logp", "val", "rew", "phi", "done", "boot", "boot_phi",
                     "deals")}
    rows = np.concatenate([p.rows[:int(p.roff[p.n])] for p in parts])
    racts = np.concatenate([p.racts[:int(p.roff[p.n])] for p in parts])
    prof: dict[str, float] = {}
    for p in parts:
        for k, v in p.prof.items():
            prof[k] = prof.get(k, 0.0) + v
    return Rollout(rows=rows, racts=racts, roff=roff, next=nxt,
                   env_steps=sum(p.env_steps for p in parts),
                   seconds=max(p.seconds for p in parts), prof=prof, **cat)


def warm_learner_kernels() -> None:
    """Compile the learner's kernels (GAE, minibatch gathering) on a tiny batch."""
    m = 2
    f32 = np.zeros(m, np.float32)
    nxt = np.full(m, -1, np.int64)
    gae(f32, f32, nxt, np.zeros(m, np.bool_), f32, f32, f32, 0.0, 0.99, 0.95, f32.copy(),
        f32.copy())
    idx = np.arange(m, dtype=np.int64)
    roff = np.arange(m + 1, dtype=np.int64)
    rows = np.zeros((m, 1), np.float32)
    acts = np.zeros(m, np.int64)
    gather_rows(idx, roff, rows, acts, acts, rows.copy(), acts.copy(), roff.copy(),
                acts.copy())
