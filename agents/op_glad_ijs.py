"""Op Glad IJs heuristic: slap the best correct target, never fault.

The agent reads the middle's per-type counts from the observation (at ``OBS_MIDDLE``, offsets
in ``card_envs.op_glad_ijs.layout``, the table in ``card_envs.op_glad_ijs.env``) and the
card-type tables of the configured deck (from the game options it is given), and asks the
rules for the correct slaps of the best class (``card_envs.op_glad_ijs.queries.best_slaps``).
In priority order it slaps: a right-habitat card (one hand, wins the whole middle); a
2-animals card whose two habitats are visible on normal cards; a 2-habitats card whose two
animals are visible on normal cards; a matching pair (an animal on one card belongs in a
habitat on the other). Ties within a class are broken with the seeded RNG. With nothing
correct it passes, so it never faults.

``miss_rate`` (default 0) is the curriculum knob: with that probability the agent passes even
though a correct target exists (a slower player), e.g.
``OpGladIJsHeuristicAgent("op_glad_ijs_v0", seed=0, miss_rate=0.3)``; the registry's
``"heuristic"`` is ``miss_rate=0``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from card_envs.agents.base import Agent, legal_actions
from card_envs.agents.params import Param, check_params
from card_envs.agents.search import SearchAgent, rand_below
from card_envs.core import kernels as K
from card_envs.core.jit import njit
from card_envs.op_glad_ijs import rules as R
from card_envs.op_glad_ijs import statedict as S
from card_envs.op_glad_ijs.game import OpGladIJsGame
from card_envs.op_glad_ijs.layout import A_PASS, CHOICE, MAX_ACTIONS, OBS_MIDDLE, REWARD_CARDS
from card_envs.op_glad_ijs.queries import best_slaps, middle_from_counts, pending_hidden


class OpGladIJsHeuristicAgent(Agent):
    """Best correct slap by the spec's priority classes; passes otherwise (never faults)."""

    name = "heuristic"
    params: ClassVar[dict[str, Param]] = {
        "miss_rate": Param("float", 0, 1, "share of windows in which it does not slap",
                           optional=False)}

    def __init__(self, env_id: str = "op_glad_ijs_v0", seed: int | None = None,
                 miss_rate: float = 0.0, **options: Any) -> None:
        miss_rate = check_params(type(self), {"miss_rate": miss_rate})["miss_rate"]
        super().__init__(env_id, seed, **options)
        self.miss_rate = miss_rate
        known = OpGladIJsGame.option_specs()
        game = OpGladIJsGame(**{k: v for k, v in options.items() if k in known})
        self.T = game.T
        self.cfg = game.cfg

    def targets(self, counts: np.ndarray) -> list[int]:
        """The correct actions of the best priority class for a middle (per-type counts):
        ``queries.best_slaps`` of that middle."""
        return best_slaps(middle_from_counts(counts, self.cfg), self.cfg)[0].tolist()

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = legal_actions(action_mask)
        good = self.targets(np.asarray(observation[OBS_MIDDLE:OBS_MIDDLE + self.T]))
        if not good or (self.miss_rate and self.rng.random() < self.miss_rate):
            return A_PASS if action_mask[A_PASS] else int(legal[0])
        return good[0] if len(good) == 1 else good[self.rng.randrange(len(good))]


@njit(cache=True)
def _pick(rng: np.ndarray, best: int, k: int, a: int) -> tuple[int, int]:
    """Reservoir step: the k-th candidate ``a`` replaces ``best`` with probability 1/k."""
    k += 1
    return (a if rand_below(rng, k) == 0 else best), k


@njit(cache=True)
def heuristic_policy(state: np.ndarray, cfg: np.ndarray, seat: int, mask: np.ndarray,
                     obs: np.ndarray, rng: np.ndarray) -> int:
    """:class:`OpGladIJsHeuristicAgent` (``miss_rate=0``) compiled for search: the best
    correct slap of the middle (``queries.best_slaps``), ties broken at random; pass (0) when
    there is none."""
    best, k = -1, 0
    for a in best_slaps(state, cfg)[0]:
        best, k = _pick(rng, best, k, a)
    if best >= 0 and mask[best]:
        return best
    if mask[A_PASS]:
        return A_PASS
    for a in range(mask.shape[0]):
        if mask[a]:
            return a
    return -1


@njit(cache=True)
def determinize_kernel(state: np.ndarray, cfg: np.ndarray, observer: int, out: np.ndarray,
                       rng: np.ndarray) -> None:
    """The compiled :func:`determinize_choices`: the game's ``determinize`` kernel, then the
    other seats' hidden choices of the current window redrawn from :func:`heuristic_policy`
    (what the search models them with), all from ``rng``."""
    S.determinize(state, cfg, observer, out, rng)
    if out[K.DONE] != 0:
        return
    mask = np.zeros(MAX_ACTIONS, np.int8)
    obs = np.zeros(1, np.int8)
    R.legal_mask(out, cfg, mask)
    for q in range(out[K.CUR]):  # queries.pending_hidden: the seats before the one to act
        if q != observer:
            out[CHOICE + q] = heuristic_policy(out, cfg, q, mask, obs, rng)


def determinize_choices(engine: Any, state: np.ndarray, seat: int,
                        rng: np.random.Generator) -> np.ndarray:
    """A determinization for ``seat``: the game's ``resample``, then the other seats' hidden
    choices of the current window drawn from :func:`heuristic_policy` (what the search models
    them with)."""
    g = engine.game
    out = engine.resample(state, seat, rng)
    hidden = pending_hidden(out, seat)
    if hidden:
        mask = engine.legal_mask(out)
        r = np.array([rng.integers(0, 2**63)], np.uint64)
        obs = np.zeros(g.obs_size, g.obs_dtype)
        for q in hidden:
            out[CHOICE + q] = heuristic_policy(out, g.cfg, q, mask, obs, r)
    return out


class OpGladIJsSearchAgent(SearchAgent):
    """IS-MCTS for Op Glad IJs with the other seats modelled by the heuristic.

    A window is simultaneous: every seat chooses without seeing the others. The search branches
    only on its own seat's choices; the other seats' choices, in the tree and in rollouts, and
    their already-made hidden choices of the current window (redrawn per determinization), come
    from :func:`heuristic_policy` (the heuristic agent, which never faults). Rollouts play every
    seat, the searcher included, with that policy to the end of the game, and a rollout's value
    adds the won-pile margin (``points_weight`` 1.0) to the win share, so the search tells apart
    moves that win cards from moves that merely do not lose."""

    model_others = True
    rollout_policy = heuristic_policy
    default_points_weight = 1.0
    default_widening = 1.0  # over 700 slaps: widen slowly, the heuristic's choice first
    default_horizon = 24  # rollout steps: a few windows, valued by the cards won meanwhile
    search_reward_mode = REWARD_CARDS
    default_anchor = 3.0  # play the heuristic's slap unless the search is clearly better

    determinizer = staticmethod(determinize_choices)
    determinizer_kernel = determinize_kernel
