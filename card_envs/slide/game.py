"""Slide's game specification: options, sizes, observation bounds, action names and the wiring
of the kernels (``rules``), the state-dict codec (``statedict``) and the text (``render``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from card_envs.core.game import Game
from card_envs.slide import layout as L
from card_envs.slide import render as _render
from card_envs.slide import rules as R
from card_envs.slide import statedict as SD

SIDES = L.SIDES  # importable from here as before


class SlideGame(Game):
    name = "slide"
    env_id = "slide_v0"
    version = "0"
    rules = R
    min_players, max_players, default_players = 2, L.MAX_PLAYERS, 2
    phases = L.PHASES
    points_order = "lower is better (the grid total)"
    winner_points = (-1,)

    def configure(self, cfg: np.ndarray) -> None:
        self.num_actions = L.NUM_ACTIONS
        self.obs_size = L.obs_size(self.num_players)
        self.state_size = L.STATE_SIZE

    def obs_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        n = self.num_players
        low = np.concatenate([np.zeros(L.SLOTS * n + 2 * L.NUM_VALUES), [0, 0, 0, -1, -1]])
        high = np.concatenate([np.full(L.SLOTS * n, L.FACE_DOWN_CODE),
                               np.full(2 * L.NUM_VALUES, L.COPIES),
                               [L.P_END, L.ROUNDS - 1, n - 1, n - 1, L.SLOTS - 1]])
        return low, high

    # --- views of the state ----------------------------------------------------------------
    def grids(self, state: np.ndarray) -> np.ndarray:
        """The ``(n, 4, 4)`` view of the grid values."""
        return SD.grids(self, state)

    def faces(self, state: np.ndarray) -> np.ndarray:
        """The ``(n, 4, 4)`` view of the face-up flags."""
        return SD.faces(self, state)

    def pending_hidden(self, state: np.ndarray, observer: int) -> list[int]:
        """Seats whose reveal choice ``observer`` cannot see yet (chosen, not resolved)."""
        return SD.pending_hidden(self, state, observer)

    # --- state dict / checks / resample: card_envs.slide.statedict -------------------------
    def fields_to_dict(self, state: np.ndarray, observer: int | None) -> dict[str, Any]:
        return SD.fields_to_dict(self, state, observer)

    def fields_from_dict(self, state: np.ndarray, d: Mapping[str, Any]) -> None:
        SD.fields_from_dict(self, state, d)

    def check_state(self, state: np.ndarray) -> None:
        SD.check_state(self, state)

    def resample(self, state: np.ndarray, observer: int,
                 rng: np.random.Generator) -> np.ndarray:
        """Redraw every face-down value from the cards nobody has seen, and other seats'
        unresolved reveal choices among their face-down slots."""
        return SD.resample(self, state, observer, rng)

    # --- text ------------------------------------------------------------------------------
    def max_length(self) -> int:
        """Exact: 16 rounds of one reveal and one pick per seat."""
        return 2 * L.ROUNDS * self.num_players

    def action_to_str(self, action: int) -> str:
        if action < L.PICK0:
            return f"reveal r{action // 4}c{action % 4}"
        a = action - L.PICK0
        return f"pick {a // 4 + 1} from {L.SIDES[a % 4]}"

    def render(self, state: np.ndarray, observer: int | None = None) -> str:
        return _render.render(self, state)
