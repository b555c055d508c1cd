"""card-envs: fast PettingZoo environments for five modern card games.

>>> import card_envs
>>> env = card_envs.make("slide_v0", num_players=3)     # PettingZoo AEC env (wrapped)
>>> from card_envs import slide_v0; raw = slide_v0.raw_env()  # raises on illegal actions
>>> vec = card_envs.vector.make("slide_v0", num_envs=4096, seed=0)  # batched engine
"""

from __future__ import annotations

import sys

from card_envs.core.errors import (
    CardEnvError,
    IllegalActionError,
    OptionError,
    StateDictError,
)
from card_envs.registry import ENV_IDS, env_class, env_module, make, make_raw

__version__ = "0.1.0"

for _id in ENV_IDS:
    _mod = env_module(_id)
    sys.modules[f"card_envs.{_id}"] = _mod
    globals()[_id] = _mod
del _id, _mod

from card_envs import vector  # noqa: E402  (after the registry it uses)
from card_envs.core.engine import Engine  # noqa: E402

__all__ = [
    "ENV_IDS", "CardEnvError", "Engine", "IllegalActionError", "OptionError",
    "StateDictError", "env_class", "make", "make_raw", "vector", *ENV_IDS,
]
