"""Three Cards' ``Game``: sizes, action names and the folder's contract modules."""

from __future__ import annotations

import numpy as np

from card_envs.core.game import Game
from toy_cards import observe as O
from toy_cards import rules as R
from toy_cards import statedict as S
from toy_cards import view as V
from toy_cards.layout import HAND, MAX_PLAYERS, NUM_ACTIONS, PHASES, STATE_SIZE, obs_size


class ToyGame(Game):
    name = "toy"
    env_id = "toy_v0"
    version = "0"
    rules, observe, statedict, view = R, O, S, V
    min_players, max_players, default_players = 2, MAX_PLAYERS, 2
    phases = PHASES

    def configure(self, cfg: np.ndarray) -> None:
        self.num_actions = NUM_ACTIONS
        self.obs_size = obs_size(self.num_players)
        self.state_size = STATE_SIZE

    def max_length(self) -> int:
        """Exact: every seat plays its three cards."""
        return HAND * self.num_players

    def action_to_str(self, action: int) -> str:
        return f"play {action + 1}"
