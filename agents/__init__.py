"""Baseline agents for the card-envs games: ``card_envs.agents`` (the folder ``agents/`` of the
repository, installed under that name).

>>> from card_envs.agents import make_agent
>>> a = make_agent("heuristic", "slide_v0", seed=0, num_players=3)
>>> action = a.act(obs["observation"], obs["action_mask"])  # doctest: +SKIP
"""

from __future__ import annotations

from card_envs.agents.base import Agent
from card_envs.agents.random_agent import RandomAgent
from card_envs.agents.registry import GENERIC, agent_class, agent_names, make_agent

__all__ = ["GENERIC", "Agent", "RandomAgent", "agent_class", "agent_names",
           "make_agent"]
