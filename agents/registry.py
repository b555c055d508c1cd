"""Agent names -> classes, and agent *specs* (``"mcts:ms=50,c=1.0"``) -> agents.

A spec is ``name`` or ``name:key=value,key=value``; values are Python literals (``50``, ``0.7``,
``True``, ``'text'``) or else plain strings. The arena passes specs (not objects) to its worker
processes, so every agent that can be written as a spec can be evaluated in parallel.

A new game's heuristic is one line in ``HEURISTICS``; its search agent needs no line unless it
customizes the generic one (``SEARCH``).
"""

from __future__ import annotations

import ast
import importlib
from typing import Any

from agents.base import Agent

# agents that play any game
GENERIC: dict[str, str] = {
    "random": "agents.random_agent:RandomAgent",
}

# agents loaded from a trained model file, for any game ("ppo:path/to/model.zip")
TRAINED: dict[str, str] = {
    "ppo": "agents.ppo:PPOAgent",
}

# env id -> that game's heuristic agent (the name "heuristic" resolves through this table)
HEURISTICS: dict[str, str] = {
    "slide_v0": "agents.slide:SlideHeuristicAgent",
    "isflak_v0": "agents.isflak:IsflakHeuristicAgent",
    "op_glad_ijs_v0": "agents.op_glad_ijs:OpGladIJsHeuristicAgent",
    "flipology_v0": "agents.flipology:FlipologyHeuristicAgent",
    "if_it_fits_v0": "agents.if_it_fits:IfItFitsHeuristicAgent",
}

# env id -> a game-specific search agent; games not listed use the generic one
SEARCH_DEFAULT = "agents.search:SearchAgent"
SEARCH: dict[str, str] = {
    "op_glad_ijs_v0": "agents.op_glad_ijs:OpGladIJsSearchAgent",
}
SEARCH_NAMES = ("mcts", "ismcts", "search")


def _load(path: str) -> type[Agent]:
    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)


def agent_names(env_id: str) -> list[str]:
    """The agent names ``make_agent`` accepts for ``env_id``."""
    return [*GENERIC, *(["heuristic"] if env_id in HEURISTICS else []), *SEARCH_NAMES,
            *TRAINED]


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
    if key in SEARCH_NAMES:
        return _load(SEARCH.get(env_id, SEARCH_DEFAULT))
    if key in TRAINED:
        return _load(TRAINED[key])
    raise ValueError(f"unknown agent {name!r} for {env_id!r}; available: "
                     f"{agent_names(env_id)}")


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"mcts:ms=50,c=0.7"`` -> ``("mcts", {"ms": 50, "c": 0.7})``; a bare first value is
    a path (``"ppo:run/model.zip"`` -> ``("ppo", {"path": "run/model.zip"})``); ``ValueError``
    if a later parameter is not ``key=value``."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"an agent spec is a non-empty string, got {spec!r}")
    name, _, rest = spec.strip().partition(":")
    params: dict[str, Any] = {}
    for k, part in enumerate(filter(None, (p.strip() for p in rest.split(",")))):
        if k == 0 and "=" not in part:  # "ppo:runs/model.zip": a bare first value is a path
            params["path"] = part
            continue
        key, eq, value = part.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"agent spec {spec!r}: parameters are key=value, got {part!r}")
        params[key.strip()] = _literal(value.strip())
    return name.strip().lower(), params


def make_agent(spec: str, env_id: str, seed: int | None = None, **game_options: Any) -> Agent:
    """Build the agent of ``spec`` (``"random"``, ``"heuristic"``, ``"mcts:ms=50"``...) for
    ``env_id`` with the game's options. Spec parameters go to the agent's constructor;
    an unknown parameter is a ``TypeError`` from that constructor."""
    from card_envs.registry import ENV_IDS

    if env_id not in ENV_IDS:
        raise ValueError(f"unknown env id {env_id!r}; registered: {list(ENV_IDS)}")
    name, params = parse_spec(spec)
    clash = set(params) & set(game_options)
    if clash:
        raise ValueError(f"agent spec {spec!r} repeats game option(s) {sorted(clash)}")
    return agent_class(name, env_id)(env_id, seed=seed, **game_options, **params)
