"""Uniformly random legal play: the baseline every other agent must beat."""

from __future__ import annotations

import numpy as np

from card_envs.agents.base import Agent, legal_actions


class RandomAgent(Agent):
    """Uniform over the legal actions, for any game (``random.Random`` + ``np.flatnonzero``:
    ~1 us per call, where ``np.random.Generator.choice`` costs ~12 us)."""

    name = "random"

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = legal_actions(action_mask)
        return int(legal[self.rng.randrange(legal.size)])
