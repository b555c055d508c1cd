"""Evaluation arena: play agents against each other over duplicate deals and report win rates,
mean points, head-to-head rates and openskill ratings.

>>> from card_envs.arena import run_arena
>>> res = run_arena("slide_v0", ["random", "heuristic"], games=200, seed=0)  # doctest: +SKIP
>>> print(res.table())                                                     # doctest: +SKIP

User guide: ``docs/arena.md``. Modules: :mod:`~card_envs.arena.runner` (playing runs,
worker processes, :func:`run_arena`, :func:`rerun`), :mod:`~card_envs.arena.stats` (intervals,
finishing ranks, per-agent stats, head-to-head matrix, ratings), :mod:`~card_envs.arena.results`
(:class:`ArenaResult` and its JSON), :mod:`~card_envs.arena.plots` (PNG plots).

**Pool, lineups and seats.** ``agents`` is the pool: agent specs for
:func:`card_envs.agents.make_agent` (``"random"``, ``"heuristic"``, ``"mcts:ms=50,c=0.7"``) or
:class:`card_envs.agents.Agent` instances.
With at most as many pool members as seats there is one lineup: the pool repeated to fill the
seats (``random,heuristic`` at 3 players is ``random#0, heuristic, random#1``). With more pool
members ``k`` than seats ``n`` the arena is a round-robin: every combination of ``n`` distinct
members (``itertools.combinations`` order) is a lineup. **``games`` counts games per lineup**;
the run plays ``games * len(lineups)`` games in total.

**Duplicate deals.** In every lineup, game ``g`` deals board ``g // n`` and seats lineup member
``j`` at seat ``(j + g) % n``: each deal is replayed with every rotation, so over a multiple of
``n`` games every member sits in every seat equally often, on the same deals. Every lineup plays
the same deals (deal ``b`` is ``reset(seed=deal_seed(seed, b))``); member ``j`` of game ``g`` of
lineup ``l`` is reset with ``agent_seed(seed, g, j, l)``, which is how other evaluators (the
trainers' batched evaluation) play the arena's exact games.

**Finishing order.** Winners (``env.infos[agent]["winner"]``) come first, sharing rank 0; the
others follow by their points (``env.infos[agent]["points"]``) in the game's direction, read off
the winners: if the winners hold the highest points higher is better in that game, if they hold
the lowest (Slide, Flipology under the Moon) lower is better. Equal keys share a rank.

**Scoring.** A sole winner gets 1 win, a shared winner among ``k`` winners gets ``1/k`` and is
also counted in ``ties``, so every game hands out exactly one win. Win rates come with a 95%
Wilson score interval, mean points with a 95% normal interval (``1.96 sd / sqrt(games)``).
The head-to-head matrix ``M[a][b]`` is the share of the games with both ``a`` and ``b`` in which
``a`` finished ahead of ``b`` (a tie counts 1/2). Ratings: openskill's Plackett-Luce model, one
match per game (each seat a team of one, ranks = finishing order), games rated in log order.

**Agents.** Agents with ``needs_state`` (search agents) are called as
``act_state(state, observation, action_mask)`` with a copy of the true engine state, the
others as ``act(observation, action_mask)``.

**Reproducibility.** Agents are re-seeded every game from ``(seed, game, participant, lineup)``
and every game's deal is fixed, so the same arguments give the same games whatever ``workers``
is (agents that search on a time budget, ``ms=...``, are not reproducible).
``ArenaResult.to_json()`` records seeds, options, versions and the per-game log (with a digest of
each initial state); :func:`rerun` plays a recorded run again.

**Parallel games.** ``workers > 1`` plays chunks of deals in a ``ProcessPoolExecutor`` (spawn
context; call it under ``if __name__ == "__main__":`` in scripts). Workers rebuild the agents
from their specs, so agent *instances* can only run in-process (``ValueError`` otherwise).
``workers="auto"`` (the default) starts workers only when the games left after each lineup's
first deal would take more than ``AUTO_SECONDS`` in-process (:func:`runner.auto_workers`).

**Compiling.** Before its first game a run builds the env and the agents and plays a short
warm-up game (:func:`warm`), so every numba kernel it needs is compiled, or loaded from the
on-disk cache, up front (and worker processes only load them). When something had to be
compiled, ``progress=True`` prints one line per game saying what and how long
(``compiling if_it_fits_v0: random, heuristic (first run only) ... 41 s``). Before several
games (``card-envs arena --game all``), :func:`card_envs.arena.precompile.precompile` compiles
them side by side, one game per worker process, so each run then only loads.
"""

from __future__ import annotations

from card_envs.arena.plots import plot_ratings, plot_winrate_matrix
from card_envs.arena.results import JSON_FORMAT, ArenaResult
from card_envs.arena.runner import (
    AUTO_SECONDS,
    agent_seed,
    auto_workers,
    deal_seed,
    rerun,
    run_arena,
    warm,
)
from card_envs.arena.stats import (
    Z95,
    AgentStats,
    HeadToHead,
    Rating,
    finish_ranks,
    mean_interval,
    wilson_interval,
)
from card_envs.core.registry import resolve_env_id

__all__ = ["AUTO_SECONDS", "JSON_FORMAT", "Z95", "AgentStats", "ArenaResult", "HeadToHead",
           "Rating", "agent_seed", "auto_workers", "deal_seed", "finish_ranks", "mean_interval",
           "plot_ratings", "plot_winrate_matrix", "rerun", "resolve_env_id", "run_arena", "warm",
           "wilson_interval"]
