"""The one place games are registered: one line per game (env id -> env class path)."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from card_envs.core.errors import OptionError

_ENVS: dict[str, str] = {
    "slide_v0": "card_envs.slide.env:SlideEnv",
    "isflak_v0": "card_envs.isflak.env:IsflakEnv",
    "op_glad_ijs_v0": "card_envs.op_glad_ijs.env:OpGladIJsEnv",
    "flipology_v0": "card_envs.flipology.env:FlipologyEnv",
    "if_it_fits_v0": "card_envs.if_it_fits.env:IfItFitsEnv",
}

ENV_IDS: tuple[str, ...] = tuple(_ENVS)


def env_class(env_id: str) -> type:
    """The ``CardEnv`` subclass registered as ``env_id``."""
    if env_id not in _ENVS:
        raise OptionError(f"unknown env id {env_id!r}; registered: {list(ENV_IDS)}")
    module, name = _ENVS[env_id].split(":")
    return getattr(importlib.import_module(module), name)


def make(env_id: str, **options: Any) -> Any:
    """The wrapped env: PettingZoo classic semantics (an illegal action loses the game)."""
    return env_class(env_id)(illegal_action="lose", **options)


def make_raw(env_id: str, **options: Any) -> Any:
    """The raw env: an illegal action raises ``IllegalActionError`` and changes nothing."""
    return env_class(env_id)(illegal_action="raise", **options)


def env_module(env_id: str) -> ModuleType:
    """A PettingZoo-style module for ``env_id`` with ``env()`` and ``raw_env()``."""
    mod = ModuleType(f"card_envs.{env_id}", f"PettingZoo-style entry points of {env_id}.")

    def env(**options: Any) -> Any:
        return make(env_id, **options)

    def raw_env(**options: Any) -> Any:
        return make_raw(env_id, **options)

    env.__doc__ = make.__doc__
    raw_env.__doc__ = make_raw.__doc__
    mod.env, mod.raw_env = env, raw_env
    # everything else comes from the env class, e.g. ``op_glad_ijs_v0.parallel_env`` (a
    # classmethod of games with simultaneous moves)
    mod.__getattr__ = lambda name: getattr(env_class(env_id), name)
    return mod
