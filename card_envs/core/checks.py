"""Validation helpers shared by the games' state-dict codecs and ``check_state``."""

from __future__ import annotations

from collections.abc import Callable
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
