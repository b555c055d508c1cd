"""Baseline agents for the card-envs games.

>>> from agents import make_agent
>>> a = make_agent("heuristic", "slide_v0", seed=0, num_players=3)
>>> action = a.act(obs["observation"], obs["action_mask"])  # doctest: +SKIP
"""

from __future__ import annotations

from agents.base import Agent
from agents.random_agent import RandomAgent
from agents.registry import GENERIC, agent_class, agent_names, make_agent

__all__ = ["GENERIC", "Agent", "RandomAgent", "agent_class", "agent_names",
           "make_agent"]
