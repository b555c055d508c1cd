"""Three Cards' rule queries: asked by the rules, the features and the picture alike."""

from __future__ import annotations

import numpy as np

from card_envs.core.jit import njit

__all__ = ["top_card"]


@njit(cache=True)
def top_card(in_trick: np.ndarray) -> int:
    """The card taking the trick so far: the highest value among the cards flagged in
    ``in_trick`` (one flag per card), or -1 when none is."""
    best = -1
    for v in range(in_trick.shape[0]):
        if in_trick[v]:
            best = v
    return best
