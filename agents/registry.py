"""Agent names -> classes. A new game's heuristic is one line in ``HEURISTICS``."""

from __future__ import annotations

import importlib
from typing import Any

from agents.base import Agent

# agents that play any game
GENERIC: dict[str, str] = {
    "random": "agents.random_agent:RandomAgent",
}

# env id -> that game's heuristic agent (the name "heuristic" resolves through this table)
HEURISTICS: dict[str, str] = {
    "slide_v0": "agents.slide:SlideHeuristicAgent",
    "isflak_v0": "agents.isflak:IsflakHeuristicAgent",
    "op_glad_ijs_v0": "agents.op_glad_ijs:OpGladIJsHeuristicAgent",
    "flipology_v0": "agents.flipology:FlipologyHeuristicAgent",
    "if_it_fits_v0": "agents.if_it_fits:IfItFitsHeuristicAgent",
}


def _load(path: str) -> type[Agent]:
    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)


def agent_names(env_id: str) -> list[str]:
    """The agent names ``make_agent`` accepts for ``env_id``."""
    return [*GENERIC, *(["heuristic"] if env_id in HEURISTICS else [])]


def agent_class(name: str, env_id: str) -> type[Agent]:
    """The class registered as ``name`` for ``env_id`` (``ValueError`` listing what exists)."""
    key = name.strip().lower()
    if key in GENERIC:
        return _load(GENERIC[key])
    if key == "heuristic":
        if env_id not in HEURISTICS:
            raise ValueError(f"no heuristic agent for {env_id!r}; heuristics exist for "
                             f"{sorted(HEURISTICS)}; agents for {env_id!r}: "
                             f"{agent_names(env_id)}")
        return _load(HEURISTICS[env_id])
    raise ValueError(f"unknown agent {name!r} for {env_id!r}; available: "
                     f"{agent_names(env_id)}")


def make_agent(name: str, env_id: str, seed: int | None = None, **game_options: Any) -> Agent:
    """Build agent ``name`` ("random", "heuristic") for ``env_id`` with the game's options."""
    from card_envs.registry import ENV_IDS

    if env_id not in ENV_IDS:
        raise ValueError(f"unknown env id {env_id!r}; registered: {list(ENV_IDS)}")
    return agent_class(name, env_id)(env_id, seed=seed, **game_options)
