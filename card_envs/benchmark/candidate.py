"""The candidate of a benchmark run: a built-in agent spec (``"heuristic"``,
``"mcts:iterations=800"``, ``"ppo:path=run/final.safetensors"``), ``"module:Name"`` (an
importable module's :class:`~card_envs.agents.Agent` subclass or factory; ``"file.py:Name"``
also works), or from Python an ``Agent`` subclass or a factory
``f(env_id, seed=..., num_players=...) -> Agent``."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from card_envs.agents.base import Agent
from card_envs.agents.registry import GENERIC, SEARCH_NAMES, TRAINED, check_spec, make_agent
from card_envs.core.errors import OptionError

BUILTIN = (*GENERIC, "heuristic", *SEARCH_NAMES, *TRAINED)


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@dataclass
class Candidate:
    """What the protocol seats: ``label`` in tables, ``spec`` rebuilds it in a worker process
    (``None``: this process only), ``build(env_id, num_players, seed)`` makes one agent,
    ``files``: sha256 of the files it is made from (module source, weights)."""

    label: str
    spec: str | None
    build: Callable[[str, int, int], Agent]
    files: dict[str, str] = field(default_factory=dict)

    def identity(self) -> dict[str, Any]:
        return {"label": self.label, "spec": self.spec, "files": dict(sorted(self.files.items()))}


def _checked(agent: Any, who: str) -> Agent:
    if not isinstance(agent, Agent):
        raise OptionError(f"{who} made a {type(agent).__name__}, not a card_envs Agent")
    return agent


def _from_object(obj: Any, label: str, spec: str | None) -> Candidate:
    if inspect.isclass(obj) and issubclass(obj, Agent):
        def build(env_id: str, n: int, seed: int) -> Agent:
            return _checked(obj(env_id, seed=seed, num_players=n), label)
    elif callable(obj) and not isinstance(obj, Agent):
        def build(env_id: str, n: int, seed: int) -> Agent:
            return _checked(obj(env_id, seed=seed, num_players=n), label)
    else:
        raise OptionError(f"the candidate is an agent spec, 'module:Name', an Agent subclass or a "
                          f"factory f(env_id, seed=, num_players=) -> Agent; got "
                          f"{type(obj).__name__} (an agent instance plays one game and seat "
                          "count: pass its class)")
    files = {}
    try:
        src = None if getattr(obj, "__module__", None) == "__main__" else \
            inspect.getsourcefile(obj)
    except TypeError:  # a built-in or a C extension: no source file to hash
        src = None
    if src and Path(src).is_file():
        files[Path(src).name] = sha256_file(src)
    return Candidate(label, spec, build, files)


def _import(target: str, name: str) -> Any:
    """``name`` from the module or ``.py`` file ``target`` (``OptionError`` saying why not)."""
    try:
        if target.endswith(".py"):
            path = Path(target)
            if not path.is_file():
                raise OptionError(f"no file {target!r}")
            digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:8]
            mod_name = f"card_envs_candidate_{digest}"
            module = sys.modules.get(mod_name)
            if module is None:
                spec = importlib.util.spec_from_file_location(mod_name, path)
                if spec is None or spec.loader is None:
                    raise OptionError(f"cannot import {target!r}")
                module = importlib.util.module_from_spec(spec)
                sys.modules[mod_name] = module
                spec.loader.exec_module(module)
        else:
            module = importlib.import_module(target)
    except OptionError:
        raise
    except Exception as e:  # noqa: BLE001  (the user's module failed to import: say so)
        raise OptionError(f"cannot import {target!r}: {type(e).__name__}: {e}") from None
    obj = module
    for part in name.split("."):
        if not hasattr(obj, part):
            raise OptionError(f"{target!r} has no {name!r}")
        obj = getattr(obj, part)
    return obj


def resolve(agent: Any, env_id: str = "slide_v0") -> Candidate:
    """The :class:`Candidate` of ``agent`` (module docstring); :class:`OptionError` naming the
    problem (an unknown agent, a bad parameter, a module that does not import). Built-in specs
    are checked against ``env_id`` here and against every game when a table is built."""
    if isinstance(agent, str):
        spec = agent.strip()
        name, colon, rest = spec.partition(":")
        if name.strip().lower() in BUILTIN:
            _, key, params = check_spec(spec, env_id)
            files = {}
            path = params.get("path")
            if path is not None:
                if not Path(path).is_file():
                    raise OptionError(f"agent {key!r}: no file {path!r}")
                files[Path(path).name] = sha256_file(path)
            return Candidate(spec, spec,
                             lambda e, n, s: make_agent(spec, e, seed=s, num_players=n), files)
        if colon and rest.strip() and all(p.isidentifier() for p in rest.strip().split(".")):
            return _from_object(_import(name.strip(), rest.strip()), spec, spec)
        raise OptionError(f"unknown agent {spec!r}: give a built-in agent "
                          f"({', '.join(BUILTIN)}), 'module:Name' or 'file.py:Name'")
    module = getattr(agent, "__module__", None)
    qual = getattr(agent, "__qualname__", "")
    spec = f"{module}:{qual}" if module and module != "__main__" and "<" not in qual else None
    label = getattr(agent, "name", None) if inspect.isclass(agent) else None
    label = label if isinstance(label, str) and label != "agent" else (qual or repr(agent))
    return _from_object(agent, label, spec)
