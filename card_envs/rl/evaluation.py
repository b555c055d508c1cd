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

__all__ = ["EVAL_OPPONENTS", "evaluate", "plot_history"]

#: The opponents of every evaluation (in every other seat).
EVAL_OPPONENTS = ("random", "heuristic")


def evaluate(model: Any, env_id: str, games: int = 200, num_players: int = 2,
             seed: int = 12345, opponents: Sequence[str] = EVAL_OPPONENTS,
             **options: Any) -> dict[str, dict[str, float]]:
    """The model (greedy, as ``PPOAgent``) against each opponent spec in every other seat,
    ``games`` arena games each (duplicate deals): ``{opponent: {win_rate, ci_low, ci_high,
    games, seconds}}``. The global RNGs (python, numpy, torch) are restored afterwards."""
    from agents.ppo import PPOAgent
    from card_envs.arena import run_arena

    states = random.getstate(), np.random.get_state(), torch.get_rng_state()
    was_training = model.policy.training
    model.policy.set_training_mode(False)
    out: dict[str, dict[str, float]] = {}
    try:
        for opp in opponents:
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
