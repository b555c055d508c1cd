"""Game features of observations, computed once per observation by compiled code.

A game with features has ``card_envs/<game>/features.py`` (numba and numpy only) declaring:

* ``GLOBAL_FEATURES`` / ``ACTION_FEATURES``: the feature names (``ACTION_FEATURES[0]`` is
  ``"legal"``: for the seat to act it equals the action mask);
* ``dims(game) -> (G, F)``: the global width and the features per action for that game's
  options (``A = game.num_actions``);
* ``fill(obs, cfg, glob, act)``: a ``@njit`` kernel writing every entry of ``glob`` (``(G,)``
  float32) and ``act`` (``(F, A)`` float32, feature-major) from one observation row ``obs``
  (the engine's dtype) and the game's ``cfg`` array. The features describe what the observing
  seat knows and what each action does (cards, cells, counts, legal consequences): a pure
  function of the observation, so they are unchanged when :meth:`CardEnv.resample` redraws
  what that seat cannot see.

:class:`Features` runs ``fill`` over a batch on numba's thread pool and writes the whole policy
input in one pass: ``[observation, global, per-action (F rows of A)]`` as one float32 row per
game (:meth:`Features.compute`); :meth:`Features.split` takes such rows apart.

>>> fx = Features(card_envs.make_raw("slide_v0").game)
>>> x = fx.compute(vec.observations)          # (B, fx.width) float32
>>> obs, glob, act = fx.split(x)               # act: (B, F, A)
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
from numba import get_num_threads, prange

from card_envs.core.game import Game
from card_envs.core.jit import njit

__all__ = ["Features", "feature_module", "has_features"]


def feature_module(game: Game | type[Game]) -> Any | None:
    """The game's ``features`` module (``card_envs.<game>.features`` beside its rules), or
    ``None`` if the game has none."""
    cls = game if isinstance(game, type) else type(game)
    package = cls.__module__.rpartition(".")[0]
    try:
        mod = importlib.import_module(f"{package}.features")
    except ModuleNotFoundError as e:
        if e.name != f"{package}.features":
            raise
        return None
    return mod if hasattr(mod, "fill") and hasattr(mod, "dims") else None


def has_features(game: Game | type[Game]) -> bool:
    """Whether the game declares features (:func:`feature_module`)."""
    return feature_module(game) is not None


def _build_driver(fill: Any) -> tuple[Any, Any]:
    """The batched driver of one game's ``fill`` (bound at compile time), parallel and serial:
    ``drive(obs, cfg, out, L, G, F, A)`` writes ``out[i] = [obs[i], glob, act]``."""

    def drive(nthreads, obs, cfg, out, L, G, F, A):
        for i in prange(obs.shape[0]):
            row = out[i]
            for j in range(L):
                row[j] = obs[i, j]
            glob = row[L:L + G]
            act = row[L + G:L + G + F * A].reshape((F, A))
            fill(obs[i], cfg, glob, act)

    from card_envs.core.vector import _with_threads

    return _with_threads(njit(parallel=True)(drive)), njit(drive)


_DRIVERS: dict[Any, tuple[Any, Any]] = {}

#: batches smaller than this are computed on one thread
SERIAL_BELOW = 64


class Features:
    """The features of ``game`` (its ``features`` module) as policy inputs (module docstring).

    ``width = L + G + F * A``; :meth:`compute` maps ``(B, L)`` observations to ``(B, width)``
    float32 rows. Raises ``ValueError`` if the game has no features."""

    def __init__(self, game: Game) -> None:
        mod = feature_module(game)
        if mod is None:
            raise ValueError(f"{type(game).__name__} declares no features "
                             "(no card_envs/<game>/features.py with dims and fill)")
        self.game, self.module = game, mod
        self.global_names = tuple(mod.GLOBAL_FEATURES)
        self.action_names = tuple(mod.ACTION_FEATURES)
        if not self.action_names or self.action_names[0] != "legal":
            raise ValueError(f"{mod.__name__}: ACTION_FEATURES[0] must be 'legal'")
        G, F = (int(v) for v in mod.dims(game))
        self.obs_size, self.global_dim, self.action_dim = int(game.obs_size), G, F
        self.num_actions = int(game.num_actions)
        self.width = self.obs_size + G + F * self.num_actions
        key = mod.__name__
        if key not in _DRIVERS:
            _DRIVERS[key] = _build_driver(mod.fill)
        self._parallel, self._serial = _DRIVERS[key]

    def compute(self, obs: np.ndarray, out: np.ndarray | None = None,
                threads: int | None = None) -> np.ndarray:
        """``[obs, global, per-action]`` rows (float32, ``(B, width)``) of observations
        ``obs`` (``(B, L)`` or one ``(L,)`` row, which gives one ``(width,)`` row), written
        into ``out`` if given. ``threads``: at most that many numba threads (default: numba's
        count; a batched VecEnv passes the count its engine's tuner chose, see
        :class:`~card_envs.core.vector.ThreadTuner`)."""
        a = np.asarray(obs)
        single = a.ndim == 1
        a = a.reshape(1, -1) if single else a
        if a.ndim != 2 or a.shape[1] != self.obs_size:
            raise ValueError(f"observations of length {self.obs_size} expected, got shape "
                             f"{np.shape(obs)}")
        if a.dtype != self.game.obs_dtype:
            a = a.astype(self.game.obs_dtype)
        a = np.ascontiguousarray(a)
        B = a.shape[0]
        if out is None:
            out = np.empty((B, self.width), np.float32)
        elif out.shape != (B, self.width) or out.dtype != np.float32 \
                or not out.flags.c_contiguous:
            raise ValueError(f"out must be a C-contiguous float32 array of shape "
                             f"{(B, self.width)}")
        n = get_num_threads() if threads is None else int(threads)
        drive = self._serial if B < SERIAL_BELOW or n <= 1 else self._parallel
        drive(n, a, self.game.cfg, out, self.obs_size, self.global_dim, self.action_dim,
              self.num_actions)
        return out[0] if single else out

    def split(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(obs (B, L), global (B, G), per_action (B, F, A))`` views of rows ``x``."""
        x = np.asarray(x).reshape(-1, self.width)
        L, G = self.obs_size, self.global_dim
        return (x[:, :L], x[:, L:L + G],
                x[:, L + G:].reshape(-1, self.action_dim, self.num_actions))

    def __repr__(self) -> str:
        return (f"Features({type(self.game).__name__}: obs {self.obs_size}, global "
                f"{self.global_dim}, {self.action_dim} per action x {self.num_actions})")
