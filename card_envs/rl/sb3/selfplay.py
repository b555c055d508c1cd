"""The self-play opponents of training: a pool of ``"random"``, an optional scripted agent and
frozen snapshots of the learner, drawn per episode by a :class:`~card_envs.rl.sb3.BatchedVecEnv`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from card_envs.rl.sb3.vec_env import AgentOpponent, PolicyOpponent
from card_envs.rl.single_agent import OpponentPool

__all__ = ["AgentOpponent", "SelfPlayPool"]


class SelfPlayPool:
    """The opponents of a :class:`~card_envs.rl.sb3.BatchedVecEnv`: ``"random"``, optionally a
    scripted agent (``heuristic``: an :class:`AgentOpponent`, ``heuristic_weight`` of the
    episodes) and up to ``size`` frozen snapshots of the learner, drawn per episode
    (``random_weight`` of the episodes against random, the rest split evenly between the
    snapshots; before the first snapshot random and the heuristic share the episodes in
    proportion to their weights). A new snapshot replaces the oldest one in its slot (games
    already playing that slot continue against the newer snapshot)."""

    def __init__(self, size: int, random_weight: float, heuristic: Any = None,
                 heuristic_weight: float = 0.0) -> None:
        if size < 0 or not 0.0 <= random_weight <= 1.0:
            raise ValueError("pool size must be >= 0 and random_weight in [0, 1]")
        if not 0.0 <= heuristic_weight <= 1.0 - random_weight:
            raise ValueError("heuristic_weight must be in [0, 1 - random_weight]")
        if heuristic_weight > 0 and heuristic is None:
            raise ValueError("heuristic_weight > 0 needs a heuristic opponent")
        self.size, self.random_weight = int(size), float(random_weight)
        self.heuristic_weight = float(heuristic_weight) if heuristic is not None else 0.0
        self.fixed = 2 if self.heuristic_weight > 0 else 1  # members before the snapshots
        if self.fixed == 2:
            self.pool = OpponentPool(["random", heuristic],
                                     [self.random_weight, self.heuristic_weight])
        else:
            self.pool = OpponentPool(["random"], [1.0])
        self.snapshots = 0  # snapshots taken so far

    def add_snapshot(self, model: Any) -> None:
        """Freeze a copy of the learner's policy (a MaskablePPO ``model``) and add it
        (replacing the oldest one)."""
        if self.size == 0:
            return
        member = _frozen(model, model.policy.state_dict())
        slot = self.fixed + self.snapshots % self.size
        if slot < len(self.pool.members):
            self.pool.members[slot] = member
        else:
            self.pool.add(member, 1.0)
        self.snapshots += 1
        self._reweigh()

    def snapshot_weights(self) -> list[dict[str, np.ndarray]]:
        """The snapshots' weights, slot by slot (for a checkpoint)."""
        return [{k: v.detach().cpu().numpy() for k, v in m.policy.state_dict().items()}
                for m in self.pool.members[self.fixed:]]

    def load_snapshots(self, model: Any, weights: list[dict[str, np.ndarray]],
                       snapshots: int) -> None:
        """Put back the snapshots :meth:`snapshot_weights` gave (``snapshots`` taken so
        far), as policies of ``model``'s class."""
        import torch

        if len(weights) != min(self.size, snapshots):
            raise ValueError(f"{len(weights)} saved snapshots for a pool of {self.size} "
                             f"after {snapshots}")
        del self.pool.members[self.fixed:]
        del self.pool.weights[self.fixed:]
        for sd in weights:
            self.pool.add(_frozen(model, {k: torch.from_numpy(v) for k, v in sd.items()}), 1.0)
        self.snapshots = int(snapshots)
        if weights:
            self._reweigh()

    def _reweigh(self) -> None:
        k = len(self.pool.members) - self.fixed
        rest = 1.0 - self.random_weight - self.heuristic_weight
        fixed = [self.random_weight, self.heuristic_weight][:self.fixed]
        self.pool.weights = fixed + [rest / k] * k

    @property
    def members(self) -> int:
        return len(self.pool.members)


def _frozen(model: Any, state_dict: dict[str, Any]) -> PolicyOpponent:
    """An opponent playing a frozen copy of ``model``'s policy with these weights."""
    policy = model.policy_class(model.observation_space, model.action_space,
                                model.lr_schedule, **model.policy_kwargs)
    policy.load_state_dict(state_dict)
    policy.set_training_mode(False)
    for p in policy.parameters():
        p.requires_grad_(False)
    return PolicyOpponent(policy, deterministic=False)
