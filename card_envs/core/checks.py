"""Validation helpers shared by the games' state-dict codecs and ``check_state``."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any

import numpy as np

from card_envs.core.errors import StateDictError


def int_in(x: Any, lo: int, hi: int, what: str) -> int:
    """``x`` as an int if it is an integer (not a bool) in ``lo..hi``, else StateDictError."""
    if not isinstance(x, (int, np.integer)) or isinstance(x, bool) or not lo <= x <= hi:
        raise StateDictError(f"{what} must be an int in {lo}..{hi}, got {x!r}")
    return int(x)


def as_bool(x: Any, what: str) -> bool:
    """``x`` if it is a bool, else StateDictError."""
    if not isinstance(x, bool):
        raise StateDictError(f"{what} must be a bool, got {x!r}")
    return x


def requirer(game: str) -> Callable[[Any, str], None]:
    """A ``require(ok, what)`` that raises StateDictError naming ``game`` when ``ok`` fails."""
    def require(ok: Any, what: str) -> None:
        if not ok:
            raise StateDictError(f"inconsistent {game} state: {what}")
    return require


def seq(x: Any, what: str, length: int | None = None, max_len: int | None = None) -> list:
    """``x`` as a list if it is a list or tuple (of exactly ``length`` / at most ``max_len``
    items), else StateDictError."""
    if not isinstance(x, (list, tuple)):
        raise StateDictError(f"{what} must be a list, got {x!r}")
    if length is not None and len(x) != length:
        raise StateDictError(f"{what} must have {length} entries, got {len(x)}")
    if max_len is not None and len(x) > max_len:
        raise StateDictError(f"{what} has at most {max_len} entries, got {len(x)}")
    return list(x)


def record(x: Any, keys: Collection[str], what: str) -> Mapping[str, Any]:
    """``x`` if it is a mapping with exactly the string keys ``keys``, else StateDictError."""
    if not isinstance(x, Mapping) or set(x) != set(keys):
        raise StateDictError(f"{what} must be a mapping with exactly the keys "
                             f"{sorted(keys)}, got {x!r}")
    return x


def one_of(x: Any, choices: Collection[str], what: str) -> str:
    """``x`` if it is one of the strings ``choices``, else StateDictError."""
    if not isinstance(x, str) or x not in choices:
        raise StateDictError(f"{what} must be one of {sorted(choices)}, got {x!r}")
    return x
