"""Torch pieces shared by the SB3 policies (:mod:`card_envs.rl.sb3.policy`) and the RLlib modules
(:mod:`card_envs.rl.rllib.module`): torch only, so neither needs the other's library."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from card_envs.core.features import one_hot_layout

__all__ = ["mlp", "one_hot_layout"]


def mlp(sizes: Sequence[int], act: type[torch.nn.Module]) -> torch.nn.Sequential:
    """Linear layers of ``sizes`` with ``act`` between them (none after the last)."""
    layers: list[torch.nn.Module] = []
    for i in range(len(sizes) - 1):
        layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(act())
    return torch.nn.Sequential(*layers)
