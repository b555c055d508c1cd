"""Slide's game specification: options, sizes, action names and the folder's contract modules:
the kernels (``rules``), the observation (``observe``), the state-dict codec (``statedict``)
and the text and picture (``view``)."""

from __future__ import annotations

import numpy as np

from card_envs.core.game import Game
from card_envs.slide import layout as L
from card_envs.slide import observe as O
from card_envs.slide import rules as R
from card_envs.slide import statedict as SD
from card_envs.slide import view as V


class SlideGame(Game):
    name = "slide"
    env_id = "slide_v0"
    version = "0"
    rules, observe, statedict, view = R, O, SD, V
    min_players, max_players, default_players = 2, L.MAX_PLAYERS, 2
    phases = L.PHASES
    points_order = "lower is better (the grid total)"
    winner_points = (-1,)

    def configure(self, cfg: np.ndarray) -> None:
        self.num_actions = L.NUM_ACTIONS
        self.obs_size = L.obs_size(self.num_players)
        self.state_size = L.STATE_SIZE

    def max_length(self) -> int:
        """Exact: 16 rounds of one reveal and one pick per seat."""
        return 2 * L.ROUNDS * self.num_players

    def action_to_str(self, action: int) -> str:
        if action < L.PICK0:
            return f"reveal r{action // 4}c{action % 4}"
        a = action - L.PICK0
        return f"pick {a // 4 + 1} from {L.SIDES[a % 4]}"
