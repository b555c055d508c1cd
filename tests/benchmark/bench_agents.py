"""Candidates for the benchmark tests, importable as ``bench_agents:Name`` by worker
processes (the tests put this folder on ``PYTHONPATH``)."""

from __future__ import annotations

import time

import numpy as np

from card_envs.agents.base import Agent


class FirstLegal(Agent):
    """Plays the lowest legal action (deterministic, no state)."""

    name = "first_legal"

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(np.flatnonzero(action_mask)[0])


class Faulty(Agent):
    """Fails in one of four ways depending on its game's seed, plays legally otherwise."""

    name = "faulty"

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        kind = (self.seed or 0) % 10  # the protocol's seeds give every kind in isflak 2p
        if kind == 1:
            raise RuntimeError("boom")
        if kind == 2:
            return -1
        if kind == 3:
            return 0.5  # type: ignore[return-value]
        if kind == 4:
            time.sleep(0.3)
        if kind == 5:
            while True:  # never returns: the alarm stops it
                pass
        return int(np.flatnonzero(action_mask)[-1])


def make_first_legal(env_id: str, seed: int | None = None, num_players: int = 2) -> Agent:
    """A factory (module:callable form)."""
    return FirstLegal(env_id, seed=seed, num_players=num_players)
