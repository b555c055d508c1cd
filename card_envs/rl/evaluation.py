"""Evaluation of a training run: the model in arena games against fixed opponents, and the
learning-curve plot of the evaluations.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

__all__ = ["EVAL_OPPONENTS", "evaluate", "evaluate_batched", "model_policy", "plot_history",
           "win_rate_lines"]

#: The opponents of every evaluation (in every other seat).
EVAL_OPPONENTS = ("random", "heuristic")


def evaluate(model: Any, env_id: str, games: int = 200, num_players: int = 2,
             seed: int = 12345, opponents: Sequence[str] = EVAL_OPPONENTS,
             batched: bool = True, **options: Any) -> dict[str, dict[str, float]]:
    """The model (greedy, as ``PPOAgent``) against each opponent spec in every other seat,
    ``games`` arena games each (duplicate deals): ``{opponent: {win_rate, ci_low, ci_high,
    games, seconds}}``. ``batched`` (default): all games advance together on the batched
    engine (:func:`evaluate_batched`: the arena's games, one policy forward per move for all
    of them); otherwise one arena game after the other. The global RNGs (python, numpy,
    torch) are restored afterwards."""
    from card_envs.agents.ppo import PPOAgent
    from card_envs.arena import run_arena

    states = random.getstate(), np.random.get_state(), torch.get_rng_state()
    was_training = model.policy.training
    model.policy.set_training_mode(False)
    out: dict[str, dict[str, float]] = {}
    try:
        for opp in opponents:
            if batched:
                out[opp] = evaluate_batched(model_policy(model), env_id, opp, games,
                                            num_players=num_players, seed=seed, **options)
                continue
            t0 = time.perf_counter()
            agent = PPOAgent(env_id, model=model, num_players=num_players, **options)
            res = run_arena(env_id, [agent] + [opp] * (num_players - 1), games=games,
                            num_players=num_players, seed=seed, progress=False, workers=1,
                            **options)
            st = res["ppo"]
            lo, hi = st.ci95
            out[opp] = {"win_rate": st.win_rate, "ci_low": lo, "ci_high": hi,
                        "games": st.games, "seconds": time.perf_counter() - t0}
    finally:
        random.setstate(states[0])
        np.random.set_state(states[1])
        torch.set_rng_state(states[2])
        model.policy.set_training_mode(was_training)
    return out


def win_rate_lines(row: dict[str, Any]) -> list[str]:
    """A history row's win rates as text lines: a header, then one line per evaluation
    opponent (games, win rate, 95% interval)."""
    lines = [f"{'opponent':<12}{'games':>7}{'win rate':>10}   95% CI"]
    for opp in EVAL_OPPONENTS:
        if f"{opp}_win_rate" in row:
            lines.append(f"{opp:<12}{row[f'{opp}_games']:>7}{row[f'{opp}_win_rate']:>10.3f}   "
                         f"[{row[f'{opp}_ci_low']:.3f}, {row[f'{opp}_ci_high']:.3f}]")
    return lines


def plot_history(history: Sequence[dict[str, Any]], path: str | Path, title: str = "") -> None:
    """Learning curve: win rate vs env steps (learner + opponent moves) with 95% CI bands,
    one line per evaluation opponent."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    x = np.array([h["env_steps"] for h in history], float)
    for opp, color in zip(EVAL_OPPONENTS, ("tab:blue", "tab:red")):
        if not history or f"{opp}_win_rate" not in history[0]:
            continue
        y = np.array([h[f"{opp}_win_rate"] for h in history])
        lo = np.array([h[f"{opp}_ci_low"] for h in history])
        hi = np.array([h[f"{opp}_ci_high"] for h in history])
        ax.plot(x, y, "o-", color=color, label=f"vs {opp}")
        ax.fill_between(x, lo, hi, color=color, alpha=0.2)
    ax.axhline(0.5, color="grey", lw=0.8, ls=":")
    ax.set_ylim(0, 1)
    ax.set_xlabel("env steps (learner + opponent moves)")
    ax.set_ylabel("win rate (95% CI)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(loc="center left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


class _SeatAgents:
    """One arena agent per game (``spec``), reset with the arena's seed for that game, so a
    batched evaluation plays exactly the games :func:`~card_envs.arena.run_arena` plays."""

    def __init__(self, spec: str, env_id: str, seeds: Sequence[int], **options: Any) -> None:
        from card_envs.agents.registry import make_agent

        self.agents = [make_agent(spec, env_id, **options) for _ in seeds]
        if self.agents and self.agents[0].needs_state:
            raise ValueError(f"{spec!r} reads the game state: use the arena")
        for a, s in zip(self.agents, seeds):
            a.reset(seed=int(s))

    def act(self, games: np.ndarray, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.fromiter((self.agents[g].act(obs[g], masks[g]) for g in games), np.int64,
                           count=len(games))


def model_policy(model: Any, deterministic: bool = True) -> Any:
    """A batched ``(obs, masks) -> actions`` of a MaskablePPO model (greedy by default)."""
    def act(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        actions, _ = model.predict(obs, action_masks=masks.astype(bool),
                                   deterministic=deterministic)
        return np.asarray(actions, np.int64)
    return act


def evaluate_batched(policy: Any, env_id: str, opponent: str, games: int = 200,
                     num_players: int = 2, seed: int = 12345, **options: Any
                     ) -> dict[str, float]:
    """``policy`` (a batched ``(obs, masks) -> actions``, e.g. :func:`model_policy`, or an
    agent spec such as ``"heuristic"``) against
    the agent spec ``opponent`` in every other seat, all ``games`` games advancing together on
    the batched engine: one policy forward per move for every game where it is to act.

    The games are the arena's (:func:`~card_envs.arena.run_arena` with ``[policy, opponent,
    ...]``): the same duplicate deals (``deal_seed``), seat rotations (game ``g`` is deal
    ``g // n`` with the policy at seat ``g % n``) and agent seeds, and the same accounting (a
    win shared by ``k`` seats counts ``1/k``, Wilson 95% interval). Returns ``{win_rate,
    ci_low, ci_high, games, seconds}``."""
    from card_envs.arena import agent_seed, deal_seed
    from card_envs.arena.stats import wilson_interval
    from card_envs.core.registry import env_class, resolve_env_id
    from card_envs.core.vector import VectorEnv

    t0 = time.perf_counter()
    env_id = resolve_env_id(env_id)
    n = num_players
    if games < 1:
        raise ValueError(f"games must be >= 1, got {games}")
    # win rewards (+1 per winner, all 0 for a complete tie) tell the winners apart whatever
    # reward mode the options name; the agents still get the options as given
    game = env_class(env_id).game_class(num_players=n, **{**options, "reward_mode": "win"})
    vec = VectorEnv(game, games, seed=0)
    vec.reset(seeds=[deal_seed(seed, g // n) for g in range(games)])
    learner = np.arange(games) % n  # rotation r: participant 0 at seat r
    seats = {j: _SeatAgents(spec, env_id, [agent_seed(seed, g, j) for g in range(games)],
                            num_players=n, **options)
             for j, spec in enumerate([policy] + [opponent] * (n - 1)) if isinstance(spec, str)}
    running = np.ones(games, bool)
    wins = np.zeros(games)
    actions = np.full(games, -1, np.int64)
    while running.any():
        actions[:] = -1
        cur = vec.current_player
        mine = np.flatnonzero(running & (cur == learner))
        if mine.size and 0 not in seats:
            actions[mine] = policy(vec.observations[mine], vec.action_masks[mine])
        for j, agents in seats.items():  # participant j sits at seat (j + r) % n
            theirs = np.flatnonzero(running & (cur == (learner + j) % n))
            if theirs.size:
                actions[theirs] = agents.act(theirs, vec.observations, vec.action_masks)
        _, _, _, rewards, term, trunc = vec.step_some(actions)
        ended = np.flatnonzero(running & (term | trunc))
        for g in ended:  # win mode: +1 per winner (all 0: every seat shares the win)
            r = rewards[g, :n]
            won = r > 0 if (r != 0).any() else np.ones(n, bool)
            wins[g] = 1.0 / won.sum() if won[learner[g]] else 0.0
        running[ended] = False
    rate = float(wins.sum() / games)
    lo, hi = wilson_interval(float(wins.sum()), games)
    return {"win_rate": rate, "ci_low": lo, "ci_high": hi, "games": games,
            "seconds": time.perf_counter() - t0}
