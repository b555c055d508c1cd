"""Torch pieces shared by the SB3 policies (:mod:`card_envs.rl.policy`) and the RLlib modules
(:mod:`card_envs.rl.rllib_module`): torch only, so neither needs the other's library."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

__all__ = ["mlp", "one_hot_layout"]


def one_hot_layout(low: np.ndarray, high: np.ndarray, one_hot_max: int = 40,
                   budget: int = 1024) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """``(cols, offsets, width, n_hot)`` of the one-hot code of an integer observation with
    declared bounds ``low`` / ``high``: the entries with 3 to ``one_hot_max`` values, the
    limit lowered until at most ``budget`` columns; ``width`` per entry, ``offsets`` per coded
    entry (the first column of its bits)."""
    low = np.asarray(low, np.int64).ravel()
    high = np.asarray(high, np.int64).ravel()
    width = high - low + 1
    limit = one_hot_max
    while limit >= 3 and width[(width >= 3) & (width <= limit)].sum() > budget:
        limit -= 1
    cols = np.flatnonzero((width >= 3) & (width <= limit))
    offsets = np.concatenate([[0], np.cumsum(width[cols])]).astype(np.int64)
    return cols, offsets[:-1], width, int(offsets[-1])


def mlp(sizes: Sequence[int], act: type[torch.nn.Module]) -> torch.nn.Sequential:
    """Linear layers of ``sizes`` with ``act`` between them (none after the last)."""
    layers: list[torch.nn.Module] = []
    for i in range(len(sizes) - 1):
        layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(act())
    return torch.nn.Sequential(*layers)
