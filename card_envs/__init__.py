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

from __future__ import annotations

import sys

from card_envs.core import vector
from card_envs.core.engine import Engine
from card_envs.core.errors import CardEnvError, IllegalActionError, OptionError, StateDictError
from card_envs.core.manifest import GameManifest
from card_envs.core.registry import (
    ENV_IDS,
    env_class,
    env_ids,
    env_module,
    make,
    make_raw,
    manifest,
    register,
    register_gymnasium,
    resolve_env_id,
)

__version__ = "0.1.0"

sys.modules["card_envs.vector"] = vector  # ``import card_envs.vector`` keeps working
register_gymnasium()  # gymnasium.make("card_envs/Slide-v0", opponents="heuristic")
for _id in ENV_IDS:
    _mod = env_module(_id)
    sys.modules[f"card_envs.{_id}"] = _mod
    globals()[_id] = _mod
del _id, _mod

__all__ = [
    "ENV_IDS", "CardEnvError", "Engine", "GameManifest", "IllegalActionError", "OptionError",
    "StateDictError", "env_class", "env_ids", "make", "make_raw", "manifest", "register",
    "resolve_env_id", "vector", *ENV_IDS,
]
