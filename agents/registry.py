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
from collections.abc import Mapping
from typing import Any

from card_envs.agents.base import Agent
from card_envs.agents.params import check_params, class_params
from card_envs.core.checks import short_repr as _short
from card_envs.core.errors import OptionError
from card_envs.core.manifest import load
from card_envs.core.registry import env_ids, is_registered, manifest, manifests

# agents that play any game
GENERIC: dict[str, str] = {
    "random": "card_envs.agents.random_agent:RandomAgent",
}

# agents loaded from a trained model file, for any game ("ppo:path/to/model.zip"), or from an
# RLlib checkpoint ("rllib:path/to/checkpoint", the rllib extra: ray is imported only then);
# "az" searches the rules guided by a policy network (the baseline or "az:path=...")
TRAINED: dict[str, str] = {
    "ppo": "card_envs.agents.ppo:PPOAgent",
    "rllib": "card_envs.agents.rllib_agent:RLlibAgent",
    "az": "card_envs.agents.az:AZAgent",
}

SEARCH_DEFAULT = "card_envs.agents.search:SearchAgent"  # games whose manifest names no search agent
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


MAX_SPEC = 1000  # characters of an agent spec
_SCALARS = (bool, int, float, str, type(None))


def _literal(text: str, spec: str) -> Any:
    """A spec value: a Python literal number, bool, None or quoted text, else the text."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text  # plain text (a path, a name; 'nan' stays text and is refused as a number)
    if not isinstance(value, _SCALARS):
        raise OptionError(f"agent spec {_short(spec)}: parameter values are numbers, "
                          f"True/False/None or text, got {type(value).__name__} {_short(text)}")
    return value


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"mcts:ms=50,c=0.7"`` -> ``("mcts", {"ms": 50, "c": 0.7})``; a bare first value is
    a path (``"ppo:run/model.zip"`` -> ``("ppo", {"path": "run/model.zip"})``, likewise
    ``"rllib:runs/slide_rllib/final"``). :class:`OptionError` (a ``ValueError``) for a spec
    that is not a string of at most ``MAX_SPEC`` characters, a parameter that is not
    ``key=value`` with ``key`` a name, a repeated key, or a value that is not a number, bool,
    None or text. Values are not range-checked here: :func:`check_spec` does that."""
    if not isinstance(spec, str) or not spec.strip():
        raise OptionError(f"an agent spec is a non-empty string, got {_short(spec)}")
    if len(spec) > MAX_SPEC or "\x00" in spec:
        raise OptionError(f"an agent spec has at most {MAX_SPEC} characters and no NUL, got "
                          f"{len(spec)} characters")
    name, _, rest = spec.strip().partition(":")
    params: dict[str, Any] = {}
    for k, part in enumerate(filter(None, (p.strip() for p in rest.split(",")))):
        if k == 0 and "=" not in part:  # "ppo:runs/model.zip": a bare first value is a path
            params["path"] = part
            continue
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or not key.isidentifier():
            raise OptionError(f"agent spec {_short(spec)}: parameters are key=value with a "
                              f"name as key, got {_short(part)}")
        if key in params:
            raise OptionError(f"agent spec {_short(spec)}: parameter {key!r} given twice")
        params[key] = _literal(value.strip(), spec)
    return name.strip().lower(), params


def check_spec(spec: str, env_id: str, limits: Mapping[str, float] | None = None,
               allow_files: bool = True) -> tuple[type[Agent], str, dict[str, Any]]:
    """Parse and check an agent spec for ``env_id`` without building the agent (nothing is
    loaded, nothing is compiled): ``(class, name, parameters)`` with the parameters checked
    against the class's declared kinds and ranges (:mod:`card_envs.agents.params`). This is the one
    validator of the CLI, the arena, the play server and the results-file loader.

    ``limits``: tighter maxima for budget parameters (``{"ms": 2000, ...}``), as a server
    sets them; ``allow_files=False`` refuses parameters that name a file to load
    (``ppo:path``, ``rllib:path``) with one message whatever the path (it is never looked
    at). Raises :class:`OptionError` (a ``ValueError``) naming the problem."""
    name, params = parse_spec(spec)
    try:
        cls = agent_class(name, env_id)
    except ValueError as e:
        raise OptionError(str(e)) from None
    checked = check_params(cls, params, who=f"agent {name!r}", from_spec=True)
    declared = class_params(cls)
    if not allow_files:
        files = sorted(k for k in checked if declared[k].file and checked[k] is not None)
        if files:
            raise OptionError(f"agent {name!r}: {files} would name a file to load, which is "
                              "not allowed here")
    for key, cap in (limits or {}).items():
        value = checked.get(key)
        if key in declared and declared[key].budget and value is not None and value > cap:
            raise OptionError(f"agent {name!r}: {key} is capped at {cap:g} here, got {value:g}")
    return cls, name, checked


def agent_parameters(cls: type[Agent]) -> list[str]:
    """The parameters an agent class takes besides ``env_id``, ``seed`` and game options
    (its declared ``params``, :mod:`card_envs.agents.params`)."""
    return list(class_params(cls))


def init_parameters(cls: type[Agent]) -> list[str]:
    """The named parameters of every ``__init__`` along ``cls``'s hierarchy besides
    ``env_id`` and ``seed`` (each must be declared in ``params``: a test checks it)."""
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
    ``mcts:iteration=5`` never silently runs the default), and every value is checked
    against the parameter's kind and range (:func:`check_spec`) before anything is built."""
    if env_id not in env_ids():
        raise ValueError(f"unknown env id {env_id!r}; registered: {list(env_ids())}")
    cls, name, params = check_spec(spec, env_id)
    clash = set(params) & set(game_options)
    if clash:
        raise OptionError(f"agent spec {_short(spec)} repeats game option(s) {sorted(clash)}")
    return cls(env_id, seed=seed, **game_options, **params)
