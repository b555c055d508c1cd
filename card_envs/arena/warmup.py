"""Compiling before a run: a short warm-up game of a run's agents, so that every numba kernel
the run uses is compiled (or loaded from the on-disk cache, ``card_envs.core.jit``) before the
first timed move. :func:`card_envs.arena.run_arena` plays it itself, inside
``card_envs.core.progress.compile_notice`` (one line when something had to be compiled);
:func:`card_envs.arena.warm` does the same ahead of your own loop or timing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from card_envs.agents.base import Agent

__all__ = ["notice_label", "warm_up_games"]

#: moves each search agent makes in a warm-up game (its first move runs the whole compiled
#: search; the rest of its seat's moves are random, so warming stays cheap at any budget)
SEARCH_MOVES = 1
#: (env class, game options, agent classes) warmed in this process: numba compiles per
#: function and argument types, so another run of the same kinds of agents needs no warm-up
_WARMED: set[tuple[Any, ...]] = set()


def warm_up_games(env: Any, agents: Sequence[Agent]) -> int:
    """Play one game per table of agents (seats filled in order, the last table from the start
    of the list again) on a fixed deal, each agent in one seat to the end of the game
    (search agents make :data:`SEARCH_MOVES` moves, then their seat plays random legal moves),
    so that every kernel the agents and the env use at any phase of a game is compiled.
    Returns the number of moves made (0 when the same env class, game options and agent
    classes were warmed in this process before). The agents are reset (seed 0) before each
    game: a run resets them again before its own games, so warming never changes its
    results."""
    n = len(env.possible_agents)
    key = (type(env), repr(sorted(env.game.options.items())),
           frozenset(type(a) for a in agents))
    if key in _WARMED:  # the same game and kinds of agents: compiled in this process already
        return 0
    order = list(agents)
    groups = [[order[(g + s) % len(order)] for s in range(n)]
              for g in range(0, len(order), n)] if order else [[]]
    rnd = np.random.default_rng(0)
    moves = 0
    for group in groups:
        env.reset(seed=0)
        for a in group:
            a.reset(seed=0)
        searched = [0] * n
        seat_of = {ag: s for s, ag in enumerate(env.possible_agents)}
        while True:
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                break
            s = seat_of[env.agent_selection]
            a = group[s] if s < len(group) else None
            if a is not None and a.needs_state and searched[s] < SEARCH_MOVES:
                searched[s] += 1
                act = a.act_state(env.state_array.copy(), obs["observation"],
                                  obs["action_mask"])
            elif a is not None and not a.needs_state:
                act = a.act(obs["observation"], obs["action_mask"])
            else:
                act = int(rnd.choice(np.flatnonzero(obs["action_mask"])))
            env.step(act)
            moves += 1
    _WARMED.add(key)
    return moves


def notice_label(env_id: str, agents: Sequence[str | Agent]) -> str:
    """``slide_v0: random, heuristic, mcts:ms=50`` (the pool's specs or agent names)."""
    names = [a if isinstance(a, str) else getattr(a, "name", type(a).__name__)
             for a in agents]
    return f"{env_id}: {', '.join(dict.fromkeys(n.strip() for n in names))}"
