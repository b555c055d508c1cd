"""Validation helpers shared by the games' state-dict codecs, ``check_state`` and the loaders
of files (replays, results files): bounds on untrusted nested data, short error texts."""

from __future__ import annotations

import reprlib
from collections.abc import Callable, Collection, Mapping
from typing import Any

import numpy as np

from card_envs.core.errors import StateDictError

_CONTAINERS = (Mapping, list, tuple, set, frozenset)


def check_nesting(value: Any, max_depth: int, max_items: int, what: str,
                  error: type[Exception] = StateDictError) -> None:
    """Raise ``error`` if ``value`` nests containers (mappings, lists, tuples, sets; mapping
    keys too) more than ``max_depth`` levels deep, or holds more than ``max_items`` values in
    all (every container and every entry counts). Iterative, so any depth is safe to check;
    a self-containing list is refused as too deep. ``what`` names the value in the message."""
    items = 1
    stack: list[tuple[Any, int]] = [(value, 1)] if isinstance(value, _CONTAINERS) else []
    while stack:
        x, depth = stack.pop()
        if depth > max_depth:
            raise error(f"{what} nested deeper than {max_depth} levels")
        children = [*x.keys(), *x.values()] if isinstance(x, Mapping) else x
        items += len(children)
        if items > max_items:
            raise error(f"{what} too large: more than {max_items} values")
        stack.extend((c, depth + 1) for c in children if isinstance(c, _CONTAINERS))


class _ShortRepr(reprlib.Repr):
    """``reprlib`` with every limit set from one length, and huge ints described (their
    ``repr`` refuses more than 4300 digits)."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.maxlevel = 8
        self.maxtuple = self.maxlist = self.maxarray = self.maxdict = limit // 2
        self.maxset = self.maxfrozenset = self.maxdeque = limit // 2
        self.maxstring = self.maxlong = self.maxother = limit

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 4 * self.maxlong:
            return f"<int of {x.bit_length()} bits>"
        return super().repr_int(x, level)


def _small(x: Any, limit: int) -> bool:
    """Whether ``x`` is plain data whose full ``repr`` is cheap: at most ``limit`` values,
    strings and ints of at most ``limit`` characters, built-in types only."""
    stack, seen = [(x, 0)], 0
    while stack:
        v, depth = stack.pop()
        seen += 1
        if seen > limit or depth > 16:
            return False
        if v is None or isinstance(v, (bool, float)):
            continue
        if isinstance(v, (str, bytes)):
            if len(v) > limit:
                return False
        elif isinstance(v, int):
            if v.bit_length() > 4 * limit:
                return False
        elif type(v) in (dict, list, tuple, set, frozenset):
            children = [*v.keys(), *v.values()] if isinstance(v, dict) else v
            if len(children) > limit:
                return False
            stack.extend((c, depth + 1) for c in children)
        else:
            return False
    return True


def short_repr(x: Any, limit: int = 80) -> str:
    """``repr(x)`` for an error message, at most ``limit`` characters (cut with ``...``):
    safe on any input (deep or huge containers, ints of any size, a failing ``__repr__``)."""
    try:
        text = repr(x) if _small(x, limit) else _ShortRepr(limit).repr(x)
    except Exception:  # a broken or recursive __repr__: name the type only
        text = f"<{type(x).__name__} object>"
    return text if len(text) <= limit else text[:max(limit - 3, 0)] + "..."


def is_int(x: Any) -> bool:
    """An integer (Python or numpy), not a bool."""
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def int_in(x: Any, lo: int, hi: int, what: str) -> int:
    """``x`` as an int if it is an integer (not a bool) in ``lo..hi``, else StateDictError."""
    if not is_int(x) or not lo <= x <= hi:
        raise StateDictError(f"{what} must be an int in {lo}..{hi}, got {short_repr(x)}")
    return int(x)


def as_bool(x: Any, what: str) -> bool:
    """``x`` if it is a bool, else StateDictError."""
    if not isinstance(x, bool):
        raise StateDictError(f"{what} must be a bool, got {short_repr(x)}")
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
        raise StateDictError(f"{what} must be a list, got {short_repr(x)}")
    if length is not None and len(x) != length:
        raise StateDictError(f"{what} must have {length} entries, got {len(x)}")
    if max_len is not None and len(x) > max_len:
        raise StateDictError(f"{what} has at most {max_len} entries, got {len(x)}")
    return list(x)


def record(x: Any, keys: Collection[str], what: str) -> Mapping[str, Any]:
    """``x`` if it is a mapping with exactly the string keys ``keys``, else StateDictError."""
    if not isinstance(x, Mapping) or set(x) != set(keys):
        raise StateDictError(f"{what} must be a mapping with exactly the keys "
                             f"{sorted(keys)}, got {short_repr(x)}")
    return x


def one_of(x: Any, choices: Collection[str], what: str) -> str:
    """``x`` if it is one of the strings ``choices``, else StateDictError."""
    if not isinstance(x, str) or x not in choices:
        raise StateDictError(f"{what} must be one of {sorted(choices)}, got {short_repr(x)}")
    return x
