"""Slide (``slide_v0``) final scoring, winner rule, rewards and infos (rules:
``docs/rules/slide.md``, "End and scoring").

The checks do not trust the engine: the rules are re-implemented in plain Python
(``ref_*`` / ``RefSlide`` in ``tests/games/slide/slide_ref.py``) and compared with the engine.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from card_envs import Engine
from card_envs.core import kernels as K
from card_envs.slide import layout as L
from card_envs.slide.layout import LEFT
from card_envs.slide.queries import seat_points as grid_points
from slide_ref import (
    CHECKER_7_10,
    CHECKER_9_10,
    ENV_ID,
    EXAMPLE_GRID,
    TWO_SINGLES_19,
    hyp,
    last_pick_env,
    pick_action,
    ref_rewards,
    ref_score,
    ref_winners,
)

# =============================================================================================
# 5. Final scoring, winner rule, rewards, infos
# =============================================================================================
grid_st = st.one_of(
    st.lists(st.integers(1, 10), min_size=16, max_size=16),
    st.lists(st.integers(1, 3), min_size=16, max_size=16),
    st.lists(st.sampled_from([1, 10]), min_size=16, max_size=16),
)


@hyp(300)
@given(flat=grid_st, seat=st.integers(0, L.MAX_PLAYERS - 1))
def test_grid_points_property(flat, seat):
    grid = [flat[4 * r:4 * r + 4] for r in range(4)]
    # direct definition of the rule: a card goes iff an orthogonal neighbour is equal
    keep = [grid[r][c] for r in range(4) for c in range(4)
            if not any(0 <= a < 4 and 0 <= b < 4 and grid[a][b] == grid[r][c]
                       for a, b in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)))]
    assert ref_score(grid) == (sum(keep), len(keep))
    state = np.zeros(L.STATE_SIZE, np.int32)
    state[L.GRID + L.SLOTS * seat:L.GRID + L.SLOTS * seat + L.SLOTS] = flat
    assert tuple(int(x) for x in grid_points(state, seat)) == ref_score(grid)


def _raw_last_pick(finals: list[list[int]]) -> tuple[np.ndarray, int]:
    """A raw state array one pick before the end (no count check: any grids)."""
    n = len(finals)
    state = np.zeros(L.STATE_SIZE, np.int32)
    for q, flat in enumerate(finals):
        state[L.GRID + L.SLOTS * q:L.GRID + L.SLOTS * q + L.SLOTS] = flat
        state[L.FACE + L.SLOTS * q:L.FACE + L.SLOTS * q + L.SLOTS] = 1
    last = finals[-1]
    g = L.GRID + L.SLOTS * (n - 1)
    state[g:g + 4] = [last[1], 0, last[2], last[3]]
    state[L.FACE + L.SLOTS * (n - 1) + 1] = 0
    state[L.MID + last[0] - 1] = 1
    state[K.PHASE] = L.P_PICK
    state[K.CUR] = n - 1
    state[L.ROUND] = 15
    state[L.FIRST] = 0
    state[L.REVEAL:L.REVEAL + L.MAX_PLAYERS] = -1
    state[L.REVEAL:L.REVEAL + n] = 1
    return state, pick_action(last[0], LEFT)


@hyp(150)
@given(data=st.data(), n=st.integers(2, 6))
def test_outcome_winners_and_rewards_property(data, n):
    pool = data.draw(st.lists(grid_st, min_size=1, max_size=3))
    finals = [data.draw(st.one_of(st.sampled_from(pool), grid_st)) for _ in range(n)]
    scores = [ref_score([f[4 * r:4 * r + 4] for r in range(4)]) for f in finals]
    for mode in ("win", "points"):
        eng = Engine(ENV_ID, num_players=n, reward_mode=mode)
        state, last = _raw_last_pick(finals)
        assert eng.legal_mask(state)[last]
        rewards = eng.step(state, last)
        assert eng.is_terminal(state)
        assert state[L.GRID:L.GRID + L.SLOTS * n].tolist() == [v for f in finals for v in f]
        points, winners = eng.outcome(state)
        assert points.tolist() == [float(p) for p, _ in scores]
        assert winners.astype(bool).tolist() == ref_winners(scores)
        assert rewards.tolist() == ref_rewards(mode, scores)


@pytest.mark.parametrize("finals, points, winner, win_rewards", [
    # lowest points wins
    ([EXAMPLE_GRID, CHECKER_9_10], [19, 152], [True, False], [1, -1]),
    ([CHECKER_9_10, EXAMPLE_GRID], [152, 19], [False, True], [-1, 1]),
    # equal points (19): fewer cards (2 < 4) wins
    ([EXAMPLE_GRID, TWO_SINGLES_19], [19, 19], [False, True], [-1, 1]),
    ([TWO_SINGLES_19, EXAMPLE_GRID], [19, 19], [True, False], [1, -1]),
    # equal points and cards: shared win; everyone tied -> all 0
    ([EXAMPLE_GRID, EXAMPLE_GRID], [19, 19], [True, True], [0, 0]),
    ([EXAMPLE_GRID, EXAMPLE_GRID, CHECKER_7_10], [19, 19, 136], [True, True, False],
     [1, 1, -1]),
    ([CHECKER_7_10, EXAMPLE_GRID, EXAMPLE_GRID], [136, 19, 19], [False, True, True],
     [-1, 1, 1]),
])
@pytest.mark.parametrize("mode", ["win", "points"])
def test_winner_rule_and_rewards_via_env(finals, points, winner, win_rewards, mode):
    env, last = last_pick_env(finals, reward_mode=mode)
    env.step(last)
    assert all(env.terminations.values())
    for i, a in enumerate(env.possible_agents):
        assert env.infos[a] == {"points": float(points[i]), "winner": winner[i]}
        want = float(win_rewards[i]) if mode == "win" else -float(points[i])
        assert env.rewards[a] == want
    assert [ref_score(g)[0] for g in finals] == points
