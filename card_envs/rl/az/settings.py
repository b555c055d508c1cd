"""The settings of a self-play run (:func:`card_envs.rl.az.train_az`): every value checked, with
one line naming the setting and its range, before anything runs."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any

from card_envs.core.errors import OptionError

__all__ = ["AZ_DEFAULTS", "AZSettings"]

#: setting -> (kind, low, high); kind "int", "float" or "bool"
RANGES: dict[str, tuple[str, float, float]] = {
    "games": ("int", 1, 1 << 15),
    "workers": ("int", 1, 64),
    "sims": ("int", 2, 4096),
    "considered": ("int", 1, 4096),
    "determinizations": ("int", 1, 4096),
    "steps": ("int", 1, 1 << 16),
    "window": ("int", 1, 1000),
    "minibatch": ("int", 1, 1 << 16),
    "reuse": ("float", 0.0, 1000.0),
    "lr": ("float", 1e-8, 1.0),
    "weight_decay": ("float", 0.0, 1.0),
    "value_coef": ("float", 0.0, 100.0),
    "policy_coef": ("float", 0.0, 100.0),
    "warmup": ("int", 0, 100000),
    "max_grad_norm": ("float", 1e-6, 1e6),
    "c_visit": ("float", 0.0, 1e6),
    "c_scale": ("float", 0.0, 1e6),
    "rescale": ("bool", 0, 1),
    "mix": ("float", 0.0, 1.0),
    "horizon": ("int", -1, 1 << 20),
    "prior_temp": ("float", 0.01, 100.0),
    "max_nodes": ("int", 64, 1 << 22),
    "eval_games": ("int", 0, 1 << 16),
    "eval_sims": ("int", 0, 4096),
    "heuristic_games": ("int", 0, 1 << 16),
    "eval_every": ("int", 1, 1000),
    "torch_threads": ("int", 1, 256),
}


@dataclass
class AZSettings:
    """A run's settings (the self-play trainer's docstring says what each does).

    ``games`` slots of self-play play in lockstep (split over ``workers`` processes), each
    move searched with ``sims`` simulations (Gumbel root, ``considered`` actions,
    ``determinizations`` states drawn per move); a round is ``steps`` moves of every slot
    (games carry over between rounds). The replay window holds the last ``window`` rounds'
    samples; each round makes ``reuse * new samples / minibatch`` updates. ``eval_sims`` 0:
    the evaluations search with ``sims``. ``torch_threads``: threads of the update (the
    workers and the learner otherwise run one thread each, so that no thread waits for a
    straggler on a busy machine)."""

    games: int = 512
    workers: int = 2
    sims: int = 64
    considered: int = 16
    determinizations: int = 4
    steps: int = 48
    window: int = 4
    minibatch: int = 1024
    reuse: float = 4.0
    lr: float = 1e-3
    weight_decay: float = 1e-4
    value_coef: float = 1.0
    policy_coef: float = 1.0
    warmup: int = 0
    max_grad_norm: float = 1.0
    c_visit: float = 50.0
    c_scale: float = 0.1
    rescale: bool = True
    mix: float = 0.0
    horizon: int = -1
    prior_temp: float = 1.0
    max_nodes: int = 0
    eval_games: int = 200
    eval_sims: int = 0
    heuristic_games: int = 200
    eval_every: int = 3
    torch_threads: int = 1

    def check(self) -> AZSettings:
        """``self`` if every value is in range (NaN and infinities refused), else
        :class:`OptionError` naming the first bad one. ``max_nodes`` 0 means a size from
        ``sims``."""
        for f in fields(self):
            v = getattr(self, f.name)
            kind, lo, hi = RANGES.get(f.name, ("int", 0, 0))
            if f.name == "max_nodes" and v == 0:
                continue
            if kind == "bool":
                ok = isinstance(v, bool)
            elif kind == "int":
                ok = isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi
            else:
                ok = (isinstance(v, (int, float)) and not isinstance(v, bool)
                      and math.isfinite(v) and lo <= v <= hi)
            if not ok and kind == "bool":
                raise OptionError(f"az setting {f.name} must be true or false, got {v!r}")
            if not ok:
                what = "an integer" if kind == "int" else "a finite number"
                raise OptionError(f"az setting {f.name} must be {what} in [{lo:g}, {hi:g}], "
                                  f"got {v!r}")
        if self.games < self.workers:
            raise OptionError(f"az setting games ({self.games}) must be at least workers "
                              f"({self.workers}): every worker plays some games")
        return self

    @property
    def nodes(self) -> int:
        """Tree capacity per game: ``max_nodes``, or room for every simulation to expand
        64 children."""
        return self.max_nodes or 64 + 64 * self.sims

    @property
    def search_sims(self) -> int:
        """Simulations of the evaluations' searches."""
        return self.eval_sims or self.sims

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None, base: dict[str, Any] | None = None
                  ) -> AZSettings:
        """Settings from ``base`` (default: the defaults) updated by ``d``; unknown keys are
        an :class:`OptionError` listing the known ones."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d or {}) - known)
        if unknown:
            raise OptionError(f"unknown az setting(s) {unknown}; known: {sorted(known)}")
        return cls(**{**(base or {}), **(d or {})}).check()


AZ_DEFAULTS = AZSettings().as_dict()
