"""Batched evaluation of a candidate against a field, on duplicate deals with every seat
rotation: all the games of a match advance together, every searched move of every game goes
through one batched search per side.

* :func:`search_match`: the candidate network and the field's network, both under the same
  search (:class:`~card_envs.agents.az_search.BatchSearch`, Gumbel root without noise: the
  deterministic move of the search), e.g. a new network against the one a run started from;
* :func:`network_match`: the candidate network alone (its greedy move, as the ``ppo`` agent
  plays it) against copies of an arena agent (the heuristic).

Each deal is played ``n`` times, the candidate in each seat once and the other seats taken by
the field. The candidate's result is its mean win share (1 for a sole win, ``1/k`` for a win
tied by ``k`` seats, an even share when nobody won), with the Wilson 95% interval the arena
reports. Deals come from ``seed`` (use seeds no training game used).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["Match", "deal_seeds", "network_match", "search_match", "summarize"]


class Match(dict):
    """A match's result: ``win_share``, ``ci95``, ``games``, ``seat_shares`` (the
    candidate's mean share by seat) and ``lengths`` (mean moves a game)."""


def deal_seeds(seed: int, deals: int) -> list[int]:
    """The deal seeds of a match seeded ``seed`` (deal ``d`` is the ``d``-th)."""
    return [int(v >> np.uint64(2)) for v in
            np.random.SeedSequence([seed, 0xE7A1]).generate_state(deals, np.uint64)]


def summarize(parts: list[dict[str, np.ndarray]], n: int) -> Match:
    """One :class:`Match` from the games of one or more parts of a match (the arrays
    ``shares``, ``seats`` and ``lengths`` of each)."""
    from card_envs.arena.stats import wilson_interval

    shares = np.concatenate([p["shares"] for p in parts])
    seats = np.concatenate([p["seats"] for p in parts])
    lengths = np.concatenate([p["lengths"] for p in parts])
    g = len(shares)
    return Match(win_share=float(shares.mean()), ci95=list(wilson_interval(shares.sum(), g)),
                 games=g, seat_shares=[float(shares[seats == s].mean()) for s in range(n)],
                 lengths=float(lengths.mean()))


def _play(env_id: str, options: dict[str, Any], deals: range, seed: int,
          move: Callable[[Any, np.ndarray, np.ndarray, int], np.ndarray]
          ) -> dict[str, np.ndarray]:
    """Play deals ``deals`` (of the match seeded ``seed``) with the candidate in each seat;
    ``move(vec, alive, is_cand, step)`` returns the actions of the alive games (the caller's
    agents). The candidate's share, seat and the length of every game."""
    from card_envs.core.registry import env_class
    from card_envs.core.vector import VectorEnv

    game = env_class(env_id).game_class(**options)
    n = game.num_players
    seeds = deal_seeds(seed, deals.stop)
    G = len(deals) * n
    vec = VectorEnv(game, G, seed=0)
    vec.fix_threads(1)
    vec.reset(seeds=[seeds[deals.start + k // n] for k in range(G)])
    cand = np.arange(G) % n  # the candidate's seat in each game
    alive = np.ones(G, np.bool_)
    shares = np.zeros(G)
    lengths = np.zeros(G)
    step = 0
    while alive.any():
        is_cand = vec.current_player == cand
        actions = move(vec, alive, is_cand, step)
        actions = np.where(alive, actions, -1).astype(np.int64)
        _, _, _, rewards, term, trunc = vec.step_some(actions)
        lengths += alive
        for k in np.flatnonzero((term | trunc) & alive):
            won = rewards[k] > 0
            sh = won / won.sum() if won.any() else np.full(n, 1.0 / n)
            shares[k] = sh[cand[k]]
            alive[k] = False
        step += 1
    return {"shares": shares, "seats": cand, "lengths": lengths}


def search_match(env_id: str, candidate: Any, field: Any, deals: int | range, seed: int,
                 sims: int, options: dict[str, Any] | None = None, threads: int = 1,
                 **search: Any) -> Match | dict[str, np.ndarray]:
    """The candidate evaluator against the field's, both searching ``sims`` simulations a
    move (``search``: :meth:`BatchSearch.run` settings, and ``determinizations``,
    ``considered``, ``max_nodes`` for the search itself). ``deals`` an int: the whole match
    (a :class:`Match`); a range: those deals only, as the arrays :func:`summarize` joins."""
    from card_envs.agents.az_search import BatchSearch
    from card_envs.rl.az.selfplay import mix_seeds

    options = dict(options or {})
    build = {k: search.pop(k) for k in ("determinizations", "considered", "max_nodes")
             if k in search}
    holder: dict[str, Any] = {}

    def move(vec: Any, alive: np.ndarray, is_cand: np.ndarray, step: int) -> np.ndarray:
        if "search" not in holder:
            holder["search"] = BatchSearch(vec.game, num_games=vec.num_envs, threads=threads,
                                           **build)
        bs = holder["search"]
        masks = vec.action_masks
        actions = np.argmax(masks, axis=1).astype(np.int64)
        many = alive & (masks.sum(axis=1) > 1)
        seeds = mix_seeds(seed, np.arange(vec.num_envs), step)
        for ev, side in ((candidate, is_cand), (field, ~is_cand)):
            act = many & side
            if act.any():
                res = bs.run(vec.states, ev, sims, seeds, act, **search)
                actions[act] = res.action[act]
        return actions

    return _run(env_id, options, deals, seed, move)


def _run(env_id: str, options: dict[str, Any], deals: int | range, seed: int,
         move: Callable[..., np.ndarray]) -> Match | dict[str, np.ndarray]:
    part = _play(env_id, options, range(deals) if isinstance(deals, int) else deals, seed,
                 move)
    if isinstance(deals, int):
        return summarize([part], int(options.get("num_players", 2)))
    return part


def network_match(env_id: str, policy: Any, opponent: str, deals: int | range, seed: int,
                  options: dict[str, Any] | None = None) -> Match | dict[str, np.ndarray]:
    """The network ``policy`` alone (greedy, a :class:`~card_envs.agents.net.NetPolicy`)
    against copies of the arena agent ``opponent`` (a spec, e.g. ``"heuristic"``), one per
    other seat; ``deals`` as for :func:`search_match`."""
    from card_envs.agents.registry import make_agent

    options = dict(options or {})
    n = int(options.get("num_players", 2))
    field = [make_agent(opponent, env_id, seed=seed + s, **options) for s in range(n)]

    def move(vec: Any, alive: np.ndarray, is_cand: np.ndarray, step: int) -> np.ndarray:
        obs, masks = vec.observations, vec.action_masks
        actions = np.argmax(masks, axis=1).astype(np.int64)
        mine = np.flatnonzero(alive & is_cand)
        if mine.size:
            actions[mine] = policy.act(obs[mine], masks[mine], threads=1)[0]
        for k in np.flatnonzero(alive & ~is_cand):
            agent = field[int(vec.current_player[k])]
            if agent.needs_state:
                actions[k] = agent.act_state(vec.states[k], obs[k], masks[k])
            else:
                actions[k] = agent.act(obs[k], masks[k])
        return actions

    for a in field:
        a.reset(seed=seed)
    return _run(env_id, options, deals, seed, move)

