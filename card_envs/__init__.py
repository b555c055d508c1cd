"""card-envs: fast PettingZoo environments for five modern card games.

>>> import card_envs
>>> env = card_envs.make("slide_v0", num_players=3)     # PettingZoo AEC env (wrapped)
>>> from card_envs import slide_v0; raw = slide_v0.raw_env()  # raises on illegal actions
>>> vec = card_envs.vector.make("slide_v0", num_envs=4096, seed=0)  # batched engine

Layers (imports go one way, left to right): ``card_envs.core`` (protocol, base envs, batched
engine, registry) -> ``card_envs.<game>`` (one folder per game) -> ``agents`` -> ``card_envs.arena``
and ``card_envs.rl`` -> ``card_envs.cli``. Importing the package registers the games with
Gymnasium (``gymnasium.make("card_envs/Slide-v0")``, the single-agent view) and configures
nothing else: no numba, thread or logging settings.
"""

# ruff: noqa: E402  (the imports below numba come after the thread-count check)
from __future__ import annotations

import os
import sys

from card_envs.core.errors import OptionError


def _check_thread_env() -> None:
    """numba reads ``NUMBA_NUM_THREADS`` when it is imported and fails deep inside (or warns
    and ignores it): check it first and say what is wrong in one line."""
    value = os.environ.get("NUMBA_NUM_THREADS")
    if value is not None and value.strip():
        try:
            ok = int(value) >= 1
        except ValueError:
            ok = False
        if not ok:
            raise OptionError(f"NUMBA_NUM_THREADS must be a whole number >= 1 (the most numba "
                              f"threads to use), got {value!r}")


_check_thread_env()

from card_envs.core import vector  # after the check: this imports numba
from card_envs.core.engine import Engine
from card_envs.core.errors import CardEnvError, IllegalActionError, StateDictError
from card_envs.core.manifest import GameManifest
from card_envs.core.registry import (
    ENV_IDS,
    env_class,
    env_ids,
    env_module,
    make,
    make_raw,
    manifest,
    on_register,
    register,
    register_from_environment,
    resolve_env_id,
)

__version__ = "0.1.0"



def gymnasium_id(m: GameManifest) -> str:
    """The Gymnasium id of a game's single-agent view: ``card_envs/Slide-v0`` (the env class
    name without ``Env``, the env id's version)."""
    cls = m.env.rpartition(":")[2]
    name = cls[:-3] if cls.endswith("Env") else cls
    version = m.env_id.rpartition("_v")[2] if "_v" in m.env_id else "0"
    return f"card_envs/{name}-v{version}"


def _register_gymnasium(m: GameManifest) -> None:
    """``gymnasium.make("card_envs/Slide-v0", opponents=..., **options)``: the learner's seat
    of :class:`card_envs.rl.SingleAgentEnv` (an import path, loaded by Gymnasium on first
    ``make``). Only Gymnasium's registry is touched, as ``ale_py`` and ``minigrid`` do."""
    import gymnasium

    gid = gymnasium_id(m)
    if gid not in gymnasium.registry:
        gymnasium.register(gid, entry_point="card_envs.rl.single_agent:SingleAgentEnv",
                           kwargs={"env_id": m.env_id}, disable_env_checker=False)


sys.modules["card_envs.vector"] = vector  # ``import card_envs.vector`` keeps working
on_register(_register_gymnasium)  # every game now, and each one registered later
register_from_environment()  # CARD_ENVS_GAMES: game folders outside the package
for _id in ENV_IDS:
    _mod = env_module(_id)
    sys.modules[f"card_envs.{_id}"] = _mod
    globals()[_id] = _mod
del _id, _mod

__all__ = [
    "ENV_IDS", "CardEnvError", "Engine", "GameManifest", "IllegalActionError", "OptionError",
    "StateDictError", "env_class", "env_ids", "gymnasium_id", "make", "make_raw", "manifest",
    "register",
    "resolve_env_id", "vector", *ENV_IDS,
]
