"""card-envs: fast PettingZoo environments for five modern card games.

>>> import card_envs
>>> env = card_envs.make("slide_v0", num_players=3)     # PettingZoo AEC env (wrapped)
>>> from card_envs import slide_v0; raw = slide_v0.raw_env()  # raises on illegal actions
>>> vec = card_envs.vector.make("slide_v0", num_envs=4096, seed=0)  # batched engine
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path


def _configure_numba_cache() -> None:
    """Key numba's on-disk cache on a hash of the card-envs sources that hold numba code.

    numba invalidates a cached kernel only when the kernel's *own* file changes, not when a
    kernel it calls (in another module) does, so an edit to a shared helper would silently
    keep running stale machine code. One cache directory per hash of the files that use numba
    (``njit`` appears in them) makes any kernel edit recompile, while edits elsewhere (arena,
    CLI, env adapters) keep the cache. ``NUMBA_CACHE_DIR`` (numba's own setting) or
    ``CARD_ENVS_CACHE_DIR`` (the parent folder) override the location."""
    import numba.core.config as nb_config

    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    here = Path(__file__).resolve().parent
    h = hashlib.sha1()
    for root in (here, here.parent / "agents"):
        for p in sorted(root.rglob("*.py")) if root.is_dir() else ():
            src = p.read_bytes()
            if b"njit" in src:
                h.update(p.relative_to(root.parent).as_posix().encode())
                h.update(src)
    base = os.environ.get("CARD_ENVS_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "card_envs")
    nb_config.CACHE_DIR = os.path.join(base, f"numba-{h.hexdigest()[:16]}")


_configure_numba_cache()

from card_envs.core.errors import (  # noqa: E402  (after the cache set-up)
    CardEnvError,
    IllegalActionError,
    OptionError,
    StateDictError,
)
from card_envs.registry import ENV_IDS, env_class, env_module, make, make_raw  # noqa: E402

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
