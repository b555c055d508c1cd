"""A greedy Slide heuristic: minimise the expected final points of the own grid.

The observation (table: ``card_envs.slide.env``, offsets: ``card_envs.slide.layout``) is decoded
into the own grid (codes 0 empty, 1-10 face up, 11 face down) and the unseen counts. A grid is
scored as its expected points if the game ended now (``card_envs.slide.parts.estimate``): a
face-up card scores 0 if an orthogonal neighbour is a face-up card of the same value, else its
value times the chance that no face-down neighbour turns out equal; a face-down card scores the
expected value of an unseen card, again only for values that no neighbour already pairs. The
gap, the allowed sides and the grid after a pick are the rules' queries
(``card_envs.slide.queries``: ``gap``, ``side_ok``, ``push``).

* **Pick:** every legal (value, side) is simulated on a copy of the grid; the lowest score wins.
* **Reveal:** for every face-down slot, the gap is opened there and, for each value 1-10, the
  best side is found; the slot with the lowest expected score of the best pick among the ``m``
  middle cards left at the agent's turn (``m`` iid draws from the unseen cards) is chosen.

Ties are broken with the agent's seeded RNG. The scoring runs in numba (~15 us a pick,
~60 us a reveal).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from card_envs.agents.base import Agent, legal_actions
from card_envs.core.jit import njit
from card_envs.slide.layout import (
    FACE_DOWN_CODE,
    NUM_ACTIONS,
    NUM_VALUES,
    OBS_FIRST,
    OBS_UNSEEN,
    PICK0,
    SLOTS,
    obs_players,
    obs_tail,
)
from card_envs.slide.parts.estimate import grid_score, tables, value_shares
from card_envs.slide.queries import gap, push, side_ok

_TIE = 1e-9


@njit(cache=True)
def action_scores(grid: np.ndarray, unseen: np.ndarray, mask: np.ndarray,
                  draws: int) -> np.ndarray:
    """Expected final points after each legal action (``inf`` for illegal ones).

    ``grid``: own 16 observation codes; ``unseen``: counts of values 1-10 not visible;
    ``draws``: middle cards the agent may choose from at its next pick (reveal phase)."""
    scores = np.full(mask.shape[0], np.inf)
    p = np.empty(NUM_VALUES)
    value_shares(unseen, p)
    up, down, down_all = tables(p)
    tmp = np.empty(SLOTS, np.int64)
    empty = gap(grid)
    for a in range(PICK0, mask.shape[0]):  # pick: simulate each (value, side)
        if mask[a] and empty >= 0:
            push(grid, empty, (a - PICK0) % 4, (a - PICK0) // 4 + 1, tmp)
            scores[a] = grid_score(tmp, up, down, down_all)[0]
    opened = np.empty(SLOTS, np.int64)
    best = np.empty(NUM_VALUES)
    order = np.empty(NUM_VALUES, np.int64)
    for s in range(min(SLOTS, mask.shape[0])):  # reveal: open the gap at s
        if not mask[s]:
            continue
        for i in range(SLOTS):
            opened[i] = grid[i]
        opened[s] = 0
        for v in range(NUM_VALUES):
            b = np.inf
            for side in range(4):
                if side_ok(s, side):
                    push(opened, s, side, v + 1, tmp)
                    b = min(b, grid_score(tmp, up, down, down_all)[0])
            best[v] = b
        # E[min of best[v] over `draws` iid values v ~ p]: walk values from best to worst
        order[:] = np.argsort(best)
        tail = 1.0
        e = 0.0
        for j in range(NUM_VALUES):
            v = order[j]
            nxt = max(tail - p[v], 0.0)
            e += best[v] * (tail ** draws - nxt ** draws)
            tail = nxt
        scores[s] = e
    return scores


def _compile() -> None:
    """Compile (or load from numba's cache) the kernels now, not inside a timed game loop."""
    global _COMPILED
    if not _COMPILED:
        grid = np.full(SLOTS, FACE_DOWN_CODE, np.int64)
        mask = np.zeros(NUM_ACTIONS, np.int8)
        mask[5] = 1
        action_scores(grid, np.full(NUM_VALUES, 8.0), mask, 2)
        _COMPILED = True


_COMPILED = False


class SlideHeuristicAgent(Agent):
    """Greedy on expected final points (see the module docstring)."""

    name = "heuristic"

    def __init__(self, env_id: str = "slide_v0", seed: int | None = None,
                 **options: Any) -> None:
        super().__init__(env_id, seed, **options)
        _compile()

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = legal_actions(action_mask)
        if legal.size == 1:
            return int(legal[0])
        obs = observation
        n = obs_players(obs.shape[0])
        t = obs_tail(n)
        unseen = obs[t + OBS_UNSEEN:t + OBS_UNSEEN + NUM_VALUES].astype(np.float64)
        first = int(obs[t + OBS_FIRST])  # relative seat of the first player
        draws = n - (n - first) % n  # middle cards left when this seat picks
        scores = action_scores(obs[:SLOTS].astype(np.int64), unseen,
                               np.asarray(action_mask, np.int8), draws)
        s = scores[legal]
        lo = s.min()
        if not np.isfinite(lo):
            return int(legal[self.rng.randrange(legal.size)])
        best = legal[s <= lo + _TIE]
        return int(best[0] if best.size == 1 else best[self.rng.randrange(best.size)])
