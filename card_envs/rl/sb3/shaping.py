"""Potential-based reward shaping for a VecEnv of the batched engine.

A game's manifest may name a potential (``train.potential``, ``"module:function"``, in the
game's own folder: numpy only): ``function(obs (B, L) numpy, num_players) -> (B,)`` from the
learner's observations alone, 0 at the start of a game. With ``shaping=c > 0`` the learner's
reward gets ``c (gamma phi(s') - phi(s))`` (``phi(s') = 0`` when the game ended): a dense
signal whose discounted sum over a game is ``-c phi(s_0) = 0``, so the objective is unchanged
(Ng et al. 1999) up to the discount.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import VecEnvWrapper

from card_envs.core.manifest import load
from card_envs.core.registry import manifest

__all__ = ["Potential", "PotentialShaping", "game_potential"]

Potential = Callable[[np.ndarray, int], np.ndarray]


def game_potential(env_id: str) -> Potential | None:
    """The shaping potential the game's manifest names (``train.potential``), or ``None``."""
    path = manifest(env_id).train.potential
    return None if path is None else load(path)


class PotentialShaping(VecEnvWrapper):
    """Potential-based reward shaping (module docstring): adds ``scale * (gamma *
    phi(obs') - phi(obs))`` to each reward, ``phi = 0`` after the end of a game (the next
    observation is then the new game's first, whose potential is kept for the next step).
    ``infos[i]["episode"]`` (the true return) is untouched."""

    def __init__(self, venv: Any, potential: Any, num_players: int, scale: float,
                 gamma: float, raw_size: int | None = None) -> None:
        super().__init__(venv)
        self.raw_size = raw_size  # observations with features: the potential reads obs[:, :L]
        self.potential, self.num_players = potential, num_players
        self.scale, self.gamma = float(scale), float(gamma)
        self.phi = np.zeros(venv.num_envs, np.float64)

    def reset(self) -> np.ndarray:
        obs = self.venv.reset()
        self.phi = self._phi(obs)
        return obs

    def _phi(self, obs: np.ndarray) -> np.ndarray:
        raw = obs if self.raw_size is None else obs[:, :self.raw_size]
        return np.asarray(self.potential(raw, self.num_players), np.float64)

    def step_wait(self) -> Any:
        obs, rew, done, infos = self.venv.step_wait()
        phi = self._phi(obs)
        nxt = np.where(done, 0.0, phi)
        rew = rew + (self.scale * (self.gamma * nxt - self.phi)).astype(rew.dtype)
        self.phi = phi
        return obs, rew, done, infos
