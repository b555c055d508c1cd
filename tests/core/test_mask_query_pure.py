"""A query never changes the state: ``legal_mask`` and ``observe`` (of every seat) leave the
state array byte-identical, for every registered game at every supported player count, along
random legal playouts from several seeds (the batched engine and ``step_observe`` call them on
the live state, so a write there would change the game)."""

from __future__ import annotations

import random

import numpy as np
import pytest

import card_envs
from card_envs import Engine

GAMES = [*card_envs.ENV_IDS, "toy_v0"]  # the toy: a game registered from outside the package
SEEDS = (0, 1, 2)
MAX_STEPS = 300  # per playout: long enough to reach the table-heavy middle of every game


def _player_counts(env_id: str) -> list[int]:
    cls = card_envs.env_class(env_id).game_class
    return list(range(cls.min_players, cls.max_players + 1))


CASES = [(env_id, n) for env_id in GAMES for n in _player_counts(env_id)]


def _check_queries(eng: Engine, state: np.ndarray, where: str) -> np.ndarray:
    """Run the mask and every seat's observation on ``state``; assert it did not change.
    Returns the mask."""
    before = state.copy()
    mask = eng.legal_mask(state)
    assert state.tobytes() == before.tobytes(), f"{where}: legal_mask wrote entries " \
        f"{np.flatnonzero(state != before).tolist()}"
    for seat in range(eng.num_players):
        eng.observe(state, seat)
        assert state.tobytes() == before.tobytes(), f"{where}: observe({seat}) wrote " \
            f"entries {np.flatnonzero(state != before).tolist()}"
    return mask


@pytest.mark.parametrize(("env_id", "n"), CASES, ids=[f"{e}-{n}p" for e, n in CASES])
def test_mask_and_observe_leave_the_state_unchanged(env_id: str, n: int) -> None:
    eng = Engine(env_id, num_players=n)
    positions = 0
    for seed in SEEDS:
        rnd = random.Random(seed)
        state = eng.new_state(seed)
        for t in range(MAX_STEPS + 1):
            mask = _check_queries(eng, state, f"{env_id} {n}p seed {seed} step {t}")
            positions += 1
            if eng.is_terminal(state) or t == MAX_STEPS:
                break
            eng.step(state, rnd.choice(np.flatnonzero(mask).tolist()))
    assert positions > len(SEEDS)
