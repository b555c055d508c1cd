"""Agent names -> classes, and agent *specs* (``"mcts:ms=50,c=1.0"``) -> agents.

A spec is ``name`` or ``name:key=value,key=value``; values are Python literals (``50``, ``0.7``,
``True``, ``'text'``) or else plain strings. The arena passes specs (not objects) to its worker
processes, so every agent that can be written as a spec can be evaluated in parallel.

A game's heuristic and (custom) search agent are named in its manifest
(``card_envs/<game>/manifest.py``); this module keeps only the agents that play any game.
"""

from __future__ import annotations

import ast
import inspect
from typing import Any

from agents.base import Agent
from card_envs.core.manifest import load
from card_envs.core.registry import env_ids, is_registered, manifest, manifests

# agents that play any game
GENERIC: dict[str, str] = {
    "random": "agents.random_agent:RandomAgent",
}

# agents loaded from a trained model file, for any game ("ppo:path/to/model.zip"), or from an
# RLlib checkpoint ("rllib:path/to/checkpoint", the rllib extra: ray is imported only then)
TRAINED: dict[str, str] = {
    "ppo": "agents.ppo:PPOAgent",
    "rllib": "agents.rllib_agent:RLlibAgent",
}

SEARCH_DEFAULT = "agents.search:SearchAgent"  # games whose manifest names no search agent
SEARCH_NAMES = ("mcts", "ismcts", "search")


def _load(path: str) -> type[Agent]:
    return load(path)


def agent_names(env_id: str) -> list[str]:
    """The agent names ``make_agent`` accepts for ``env_id``."""
    has_heuristic = is_registered(env_id) and manifest(env_id).heuristic is not None
    return [*GENERIC, *(["heuristic"] if has_heuristic else []), *SEARCH_NAMES, *TRAINED]


def agent_class(name: str, env_id: str) -> type[Agent]:
    """The class registered as ``name`` for ``env_id`` (``ValueError`` listing what exists)."""
    key = name.strip().lower()
    if key in GENERIC:
        return _load(GENERIC[key])
    game = manifest(env_id) if is_registered(env_id) else None
    if key == "heuristic":
        if game is None or game.heuristic is None:
            have = sorted(m.env_id for m in manifests() if m.heuristic)
            raise ValueError(f"no heuristic agent for {env_id!r}; heuristics exist for {have}")
        return _load(game.heuristic)
    if key in SEARCH_NAMES:
        return _load(game.search if game and game.search else SEARCH_DEFAULT)
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
    a path (``"ppo:run/model.zip"`` -> ``("ppo", {"path": "run/model.zip"})``, likewise
    ``"rllib:runs/slide_rllib/final"``); ``ValueError``
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


def agent_parameters(cls: type[Agent]) -> list[str]:
    """The parameters an agent class takes besides ``env_id``, ``seed`` and game options
    (the named parameters of every ``__init__`` along its class hierarchy)."""
    names: list[str] = []
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None or klass is object:
            continue
        for p in inspect.signature(init).parameters.values():
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and \
                    p.name not in ("self", "env_id", "seed") and p.name not in names:
                names.append(p.name)
    return names


def make_agent(spec: str, env_id: str, seed: int | None = None, **game_options: Any) -> Agent:
    """Build the agent of ``spec`` (``"random"``, ``"heuristic"``, ``"mcts:ms=50"``...) for
    ``env_id`` with the game's options. Spec parameters go to the agent's constructor; an
    unknown one is a ``ValueError`` naming the parameters the agent takes (a typo such as
    ``mcts:iteration=5`` never silently runs the default)."""
    if env_id not in env_ids():
        raise ValueError(f"unknown env id {env_id!r}; registered: {list(env_ids())}")
    name, params = parse_spec(spec)
    clash = set(params) & set(game_options)
    if clash:
        raise ValueError(f"agent spec {spec!r} repeats game option(s) {sorted(clash)}")
    cls = agent_class(name, env_id)
    valid = agent_parameters(cls)
    unknown = sorted(set(params) - set(valid))
    if unknown:
        raise ValueError(f"agent spec {spec!r}: unknown parameter(s) {unknown} for {name!r}; "
                         f"its parameters are {valid}")
    return cls(env_id, seed=seed, **game_options, **params)
