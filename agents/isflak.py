"""A greedy Isflak heuristic: secure fish now, keep reachable fish for later, hem others in.

The observation (table: ``card_envs.isflak.env``; offsets: ``card_envs.isflak.layout``) gives
the card points per cell (-1 gap), the penguin owner per cell and the own penguins' cells. A
card under a penguin always ends up in its owner's pile (taken when the penguin moves on,
banked when the owner goes out), so a move to cell ``t`` secures ``points[t]``. Every legal
action is scored on the board after it:

* movement: ``points[t] + W_OWN * own_reach - W_OPP * other_reach`` where ``*_reach`` is the sum
  over penguins of the points of the cells they could reach in one move (every cell counted
  once per penguin), plus ``W_BEST`` times the best card the moved penguin could reach next,
  and a penalty ``W_STUCK`` if the moved penguin ends up unable to move;
* placement: the same evaluation with the penguin put on the cell.

The board, the moves and the reach are the game's rule queries (:mod:`card_envs.isflak.queries`:
``observed_cells``, ``occupy``, ``move_slot``, ``move_target``, ``reach``): the heuristic adds
only its weights. Ties are broken with the agent's seeded RNG. The scoring runs in numba (~20 us
per decision).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from card_envs.agents.base import Agent, legal_actions
from card_envs.core.jit import njit
from card_envs.isflak.layout import (
    CELLS,
    MOVE0,
    OBS_SEATS,
    OWN_CODE,
    num_actions,
    obs_size,
    peng_of_obs,
)
from card_envs.isflak.queries import (
    cell_owner,
    cell_points,
    move_slot,
    move_target,
    observed_cells,
    occupy,
    reach,
)

# tuned against random play (600 games each, 2-4 players)
W_OWN = 0.05
W_OPP = 0.05
W_BEST = 0.25
W_STUCK = 2.0
WEIGHTS = np.array([W_OWN, W_OPP, W_BEST, W_STUCK])
_TIE = 1e-9


@njit(cache=True)
def _evaluate(cells: np.ndarray, moved: int, w: np.ndarray) -> float:
    """Board value for the observer (occupant code ``OWN_CODE``) after a move that put a penguin on
    ``moved``; weights ``w`` = (own reach, others' reach, best next card, stuck penalty)."""
    own = 0.0
    opp = 0.0
    bonus = 0.0
    for c in range(CELLS):
        o = cell_owner(cells, c)
        if o == 0:
            continue
        tot, best = reach(cells, c)
        if o == OWN_CODE:
            own += tot
            if c == moved:
                bonus = w[2] * max(best, 0.0) - (w[3] if best < 0 else 0.0)
        else:
            opp += tot
    return w[0] * own - w[1] * opp + bonus


@njit(cache=True)
def action_scores(obs: np.ndarray, mask: np.ndarray, peng: int, w: np.ndarray) -> np.ndarray:
    """Score of every legal action (``-inf`` for illegal ones), on the observed board
    (:func:`~card_envs.isflak.queries.observed_cells`) after the action."""
    scores = np.full(mask.shape[0], -np.inf)
    cells = np.empty(CELLS + 1, np.int64)
    observed_cells(obs, cells)
    for a in range(CELLS):  # placement
        if mask[a]:
            x = cells[a]
            occupy(cells, a, OWN_CODE)
            scores[a] = cell_points(cells, a) + _evaluate(cells, a, w)
            cells[a] = x
    for a in range(MOVE0, mask.shape[0]):  # movement
        if not mask[a]:
            continue
        f = obs[OBS_SEATS + move_slot(a)]  # the observer's (relative seat 0) penguin
        t = move_target(f, a)
        xf = cells[f]
        xt = cells[t]
        cells[f] = 0  # its card goes to the pile: a gap
        occupy(cells, t, OWN_CODE)
        scores[a] = cell_points(cells, t) + _evaluate(cells, t, w)
        cells[t] = xt
        cells[f] = xf
    return scores


_COMPILED = False


def _compile() -> None:
    global _COMPILED
    if not _COMPILED:
        obs = np.zeros(obs_size(2, 4), np.int16)  # 2 players x 4 penguins, none placed
        obs[OBS_SEATS:OBS_SEATS + 4] = -1
        mask = np.zeros(num_actions(4), np.int8)
        mask[0] = 1
        action_scores(obs, mask, 4, WEIGHTS)
        _COMPILED = True


class IsflakHeuristicAgent(Agent):
    """Greedy on secured fish with a mobility term (see the module docstring)."""

    name = "heuristic"

    def __init__(self, env_id: str = "isflak_v0", seed: int | None = None,
                 **options: Any) -> None:
        super().__init__(env_id, seed, **options)
        self.n = int(options.get("num_players", 2))
        self.weights = WEIGHTS.copy()
        _compile()

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = legal_actions(action_mask)
        if legal.size == 1:
            return int(legal[0])
        peng = peng_of_obs(observation.shape[0], self.n)
        obs = np.asarray(observation).astype(np.int16, copy=False)  # int8 or int16 per config
        scores = action_scores(obs, np.asarray(action_mask, np.int8), peng,
                               self.weights)
        s = scores[legal]
        best = legal[s >= s.max() - _TIE]
        return int(best[0] if best.size == 1 else best[self.rng.randrange(best.size)])
