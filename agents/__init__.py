"""Baseline agents for the card-envs games: ``card_envs.agents`` (the folder ``agents/`` of the
repository, installed under that name). The old top-level name ``agents`` still imports, with a
``DeprecationWarning``, for one version (``card_envs.agents._legacy``).

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

if __name__ == "agents":  # this folder found by its old name (a checkout's root on sys.path):
    # hand over to card_envs.agents, as the installed package ``agents`` does
    from card_envs.agents._legacy import alias

    alias()
