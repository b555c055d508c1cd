"""Three Cards' ``Game``: options, sizes and the wiring of the codec and the kernels."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from card_envs.core.game import Game
from toy_cards import render as _render
from toy_cards import rules as R
from toy_cards import statedict as S
from toy_cards.layout import CARDS, HAND, MAX_PLAYERS, NUM_ACTIONS, PHASES, STATE_SIZE, obs_size


class ToyGame(Game):
    name = "toy"
    env_id = "toy_v0"
    version = "0"
    rules = R
    min_players, max_players, default_players = 2, MAX_PLAYERS, 2
    phases = PHASES

    def configure(self, cfg: np.ndarray) -> None:
        self.num_actions = NUM_ACTIONS
        self.obs_size = obs_size(self.num_players)
        self.state_size = STATE_SIZE

    def obs_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        n = self.num_players
        low = np.concatenate([np.zeros(2 * CARDS + n + 2), [-1]])
        high = np.concatenate([np.ones(CARDS), np.full(CARDS, 2 * n), np.full(n + 1, HAND),
                               [n - 1, n - 1]])
        return low, high

    def fields_to_dict(self, state: np.ndarray, observer: int | None) -> dict[str, Any]:
        return S.fields_to_dict(state, self.num_players, observer)

    def fields_from_dict(self, state: np.ndarray, d: Mapping[str, Any]) -> None:
        S.fields_from_dict(state, self.num_players, d)

    def check_state(self, state: np.ndarray) -> None:
        S.check_state(state, self.num_players)

    def resample(self, state: np.ndarray, observer: int,
                 rng: np.random.Generator) -> np.ndarray:
        return S.resample(state, observer, rng)

    def max_length(self) -> int:
        """Exact: every seat plays its three cards."""
        return HAND * self.num_players

    def action_to_str(self, action: int) -> str:
        return f"play {action + 1}"

    def render(self, state: np.ndarray, observer: int | None = None) -> str:
        return _render.render(state, self.num_players, observer)
