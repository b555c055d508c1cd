"""Agent parameters, declared once per class and checked before anything runs.

Every agent class lists the parameters it takes besides ``env_id``, ``seed`` and the game's
options in ``params`` (a dict of :class:`Param`, merged along the class hierarchy). The one
validator, :func:`check_params`, runs in the constructor and in the agent-spec parser
(:func:`card_envs.agents.registry.check_spec`, used by the CLI, the arena, the play server and the
results-file loader), so a value such as ``c=nan`` or ``iterations=10**12`` is refused with an
:class:`~card_envs.core.errors.OptionError` that names the parameter and its range before it
reaches compiled code (which does not check bounds).

Kinds: ``int`` (a Python or numpy integer, not a bool), ``float`` (an int or a finite float,
not a bool), ``bool``, ``str`` (of bounded length) and ``object`` (a Python object passed in
code, e.g. a loaded model; never from a spec string). ``None`` stands for the class default
where ``optional``. ``budget`` parameters bound how long a move or how much memory may take
(the play server caps them further); ``file`` parameters name a file to load.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from card_envs.core.checks import is_int
from card_envs.core.checks import short_repr as _short
from card_envs.core.errors import OptionError

__all__ = ["Param", "check_params", "class_params"]

MAX_TEXT = 4096  # characters of a str parameter (a path, a module name)


@dataclass(frozen=True)
class Param:
    """One agent parameter: its kind, its closed range ``[lo, hi]`` (numbers), and flags."""

    kind: str
    lo: float | None = None
    hi: float | None = None
    doc: str = ""
    optional: bool = True  # None allowed: the class default
    budget: bool = False  # time or memory per move (capped by the play server)
    file: bool = False  # the value is a path that gets loaded
    spec: bool = True  # may be written in an agent spec (False: Python objects only)

    def range_text(self) -> str:
        """The accepted values, in words (for errors and docs)."""
        if self.kind in ("int", "float"):
            word = "an integer" if self.kind == "int" else "a finite number"
            return f"{word} in [{_fmt(self.lo)}, {_fmt(self.hi)}]"
        if self.kind == "bool":
            return "True or False"
        if self.kind == "str":
            return f"a non-empty text of at most {MAX_TEXT} characters"
        return "a Python object (not available in a spec)"

    def check(self, name: str, value: Any, who: str) -> Any:
        """The normalized value, or :class:`OptionError` naming ``who``'s ``name``."""
        if value is None and self.optional:
            return None
        ok, out = False, value
        if self.kind == "int":
            ok = is_int(value) and self.lo <= value <= self.hi
            out = int(value) if ok else value
        elif self.kind == "float":
            num = is_int(value) or isinstance(value, (float, np.floating))
            ok = num and (not isinstance(value, (float, np.floating)) or math.isfinite(value))
            ok = ok and self.lo <= value <= self.hi
            out = float(value) if ok else value
        elif self.kind == "bool":
            ok = isinstance(value, (bool, np.bool_))
            out = bool(value) if ok else value
        elif self.kind == "str":
            ok = isinstance(value, str) and 0 < len(value) <= MAX_TEXT and "\x00" not in value
        else:
            ok = True
        if not ok:
            raise OptionError(f"{who}: {name} must be {self.range_text()}, got "
                              f"{_short(value)}")
        return out


def _fmt(x: float | None) -> str:
    if x is None:
        return "?"
    if float(x).is_integer() and abs(x) >= 10**5:
        e = int(math.log10(abs(x)))
        return f"{x:.0f}" if 10**e != abs(x) else f"{'-' if x < 0 else ''}1e{e}"
    return f"{x:g}"


def class_params(cls: type) -> dict[str, Param]:
    """The parameters of agent class ``cls``: its ``params`` merged along the hierarchy (a
    subclass may redeclare one)."""
    out: dict[str, Param] = {}
    for klass in reversed(cls.__mro__):
        out.update(klass.__dict__.get("params", {}))
    return out


def check_params(cls: type, params: Mapping[str, Any], who: str | None = None,
                 from_spec: bool = False) -> dict[str, Any]:
    """``params`` checked against ``cls``'s declared parameters and normalized (ints as
    ``int``, numbers as ``float``): :class:`OptionError` for an unknown name (listing the
    parameters), a value of the wrong kind or out of range, or (``from_spec``) a parameter
    that a spec cannot give."""
    who = who or cls.__name__
    declared = class_params(cls)
    unknown = sorted(k for k in params if k not in declared or
                     (from_spec and not declared[k].spec))
    if unknown:
        usable = [k for k, p in declared.items() if p.spec or not from_spec]
        raise OptionError(f"{who}: unknown parameter(s) {', '.join(map(_short, unknown))}; "
                          f"its parameters are {usable}")
    return {k: declared[k].check(k, v, who) for k, v in params.items()}

