"""Random reachable positions for tests: deal, play uniformly random legal moves, keep the
positions that are not over."""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from card_envs import Engine


def random_states(env_id: str, num_players: int, count: int, seed: int, max_moves: int,
                  **options: Any) -> tuple[Engine, list[np.ndarray]]:
    """(engine, ``count`` states after 0..``max_moves - 1`` random moves from random deals)."""
    eng = Engine(env_id, num_players=num_players, **options)
    rng = random.Random(seed)
    out: list[np.ndarray] = []
    while len(out) < count:
        st = eng.new_state(rng.randrange(10**9))
        for _ in range(rng.randrange(0, max_moves)):
            if eng.is_terminal(st):
                break
            eng.step(st, rng.choice(eng.legal_actions(st)))
        if not eng.is_terminal(st):
            out.append(st)
    return eng, out
