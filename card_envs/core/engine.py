"""``Engine``: one game's rules on bare state arrays, at Python speed, for search and custom
loops. A state is a 1-D int32 array; cloning it is ``state.copy()``."""

from __future__ import annotations

from typing import Any

import numpy as np

from card_envs.core import kernels as K
from card_envs.core.errors import IllegalActionError
from card_envs.core.game import Game, as_generator
from card_envs.core.registry import env_class


class Engine:
    """Rules of one configuration of a game (``Engine("slide_v0", num_players=3)``).

    ``step`` trusts its caller (no legality check, for speed); ``apply`` checks."""

    def __init__(self, env_id: str | Game, **options: Any) -> None:
        if isinstance(env_id, Game):
            self.game = env_id
        else:
            self.game = env_class(env_id).game_class(**options)
        g = self.game
        self.num_players, self.num_actions = g.num_players, g.num_actions
        self.cfg = g.cfg
        self._step, self._mask, self._obs = g.k_step, g.k_legal_mask, g.k_observe

    def new_state(self, seed: int) -> np.ndarray:
        """A new game dealt from ``seed`` (same deal as ``env.reset(seed=seed)``)."""
        return self.game.new_state(seed)

    def step(self, state: np.ndarray, action: int) -> np.ndarray:
        """Apply a legal ``action`` in place; returns this step's rewards per seat."""
        rewards = np.zeros(self.num_players, np.float32)
        if not self._step(state, self.cfg, action, rewards) & K.ST_REWARD:
            rewards[:] = 0
        return rewards

    def apply(self, state: np.ndarray, action: int) -> np.ndarray:
        """``step`` after checking legality (IllegalActionError, state unchanged)."""
        mask = self.legal_mask(state)
        if not (0 <= int(action) < self.num_actions and mask[int(action)]):
            phase = self.game.phase_name(state)
            legal = np.flatnonzero(mask).tolist()
            raise IllegalActionError(f"illegal action {action!r} in phase {phase!r}; legal: "
                                     f"{legal}", action, phase, legal)
        return self.step(state, int(action))

    def legal_mask(self, state: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        out = np.zeros(self.num_actions, np.int8) if out is None else out
        self._mask(state, self.cfg, out)
        return out

    def legal_actions(self, state: np.ndarray) -> list[int]:
        return np.flatnonzero(self.legal_mask(state)).tolist()

    def observe(self, state: np.ndarray, seat: int, out: np.ndarray | None = None) -> np.ndarray:
        g = self.game
        out = np.empty(g.obs_size, g.obs_dtype) if out is None else out
        self._obs(state, self.cfg, seat, out)
        return out

    @staticmethod
    def current_player(state: np.ndarray) -> int:
        """Seat to act, -1 when the game is over."""
        return int(state[K.CUR])

    @staticmethod
    def is_terminal(state: np.ndarray) -> bool:
        return bool(state[K.DONE])

    @staticmethod
    def clone(state: np.ndarray) -> np.ndarray:
        return state.copy()

    def outcome(self, state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(points, winners) of a finished game."""
        return self.game.outcome(state)

    def resample(self, state: np.ndarray, observer: int, rng: Any = None) -> np.ndarray:
        """Determinization: a full state consistent with what ``observer`` knows (``rng``: a
        numpy Generator, a ``random.Random``, an int seed or None)."""
        rng = as_generator(rng)
        out = self.game.resample(state, observer, rng)
        K.rng_seed(out, np.uint64(rng.integers(0, 2**64, dtype=np.uint64)))
        return out
