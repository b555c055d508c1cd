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

__all__ = ["Features", "PolicyInput", "feature_module", "has_features", "one_hot_layout"]


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
        :class:`~card_envs.threads.ThreadTuner`)."""
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


# ------------------------------------------------------------------------------------------
# compact policy inputs: the encoded observation and the features of the legal actions only
# ------------------------------------------------------------------------------------------
def one_hot_layout(low: np.ndarray, high: np.ndarray, one_hot_max: int = 40,
                   budget: int = 1024) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """``(cols, offsets, width, n_hot)`` of the one-hot code of an integer observation with
    declared bounds ``low`` / ``high``: the entries with 3 to ``one_hot_max`` values, the
    limit lowered until at most ``budget`` columns; ``width`` per entry, ``offsets`` per coded
    entry (the first column of its bits)."""
    low = np.asarray(low, np.int64).ravel()
    high = np.asarray(high, np.int64).ravel()
    width = high - low + 1
    limit = one_hot_max
    while limit >= 3 and width[(width >= 3) & (width <= limit)].sum() > budget:
        limit -= 1
    cols = np.flatnonzero((width >= 3) & (width <= limit))
    offsets = np.concatenate([[0], np.cumsum(width[cols])]).astype(np.int64)
    return cols, offsets[:-1], width, int(offsets[-1])


def _build_compact(fill: Any) -> tuple[Any, Any]:
    """The compiled pass of :class:`PolicyInput` for one game's ``fill`` (``None``: a game
    without features), parallel and serial builds."""

    def drive(nthreads, obs, masks, cfg, x, rows, acts, offsets, cols, lows, widths, hot_at,
              L, G, F, A):
        n_hot_base = L  # one-hot bits start after the L symlog entries
        for i in prange(obs.shape[0]):
            xi = x[i]
            for j in range(L):
                v = np.float32(obs[i, j])
                xi[j] = np.float32(np.log1p(abs(v))) * (np.float32(1.0) if v >= 0
                                                        else np.float32(-1.0))
            hot_end = n_hot_base + hot_at[-1]
            for j in range(n_hot_base, hot_end):
                xi[j] = 0.0
            for c in range(cols.shape[0]):
                v = np.int64(obs[i, cols[c]]) - lows[c]
                if 0 <= v < widths[c]:
                    xi[n_hot_base + hot_at[c] + v] = 1.0
            k = offsets[i]
            for a in range(A):
                if masks[i, a]:
                    acts[k] = a
                    k += 1
            if fill is not None:
                glob = xi[hot_end:hot_end + G]
                act = np.empty((F, A), np.float32)
                fill(obs[i], cfg, glob, act)
                for k in range(offsets[i], offsets[i + 1]):
                    a = acts[k]
                    for f in range(F):
                        rows[k, f] = act[f, a]

    from card_envs.core.vector import _with_threads

    return _with_threads(njit(parallel=True)(drive)), njit(drive)


_COMPACT: dict[Any, tuple[Any, Any]] = {}


class PolicyInput:
    """A network's input from observations and masks, written by one compiled pass:

    * ``x`` ``(B, D)`` float32: ``[symlog(obs), one_hot(obs), global features]``
      (``symlog(v) = sign(v) log(1 + |v|)``; the one-hot code of every observation entry with
      a small declared range, :func:`one_hot_layout`);
    * ``rows`` ``(K, F)`` float32: the game's per-action features of the **legal** actions only
      (``K`` = legal actions in the whole batch; Op Glad IJs has about 20 of 703), in the
      order of ``acts`` ``(K,)`` int64, the action of each row;
    * ``offsets`` ``(B + 1,)`` int64: rows ``offsets[i]:offsets[i+1]`` belong to game ``i``.

    A game without features gives ``G = F = 0`` (``rows`` has no columns). Every entry is a
    function of the observation and the mask alone, so a rollout stores the raw observations
    (int8/int16) and masks (int8), and the update recomputes this in a few microseconds per
    row instead of keeping ``F x A`` floats per sample."""

    def __init__(self, game: Game, one_hot_max: int = 40, one_hot_budget: int = 1024) -> None:
        mod = feature_module(game)
        self.game = game
        self.obs_size = L = int(game.obs_size)
        self.num_actions = int(game.num_actions)
        if mod is None:
            G, F = 0, 0
            fill = None
        else:
            G, F = (int(v) for v in mod.dims(game))
            fill = mod.fill
        self.global_dim, self.action_dim = G, F
        cols, offsets, width, n_hot = one_hot_layout(game.obs_low, game.obs_high, one_hot_max,
                                                     one_hot_budget)
        low = np.asarray(game.obs_low, np.int64)
        self._cols = cols.astype(np.int64)
        self._lows = low[cols].astype(np.int64)
        self._widths = width[cols].astype(np.int64)
        self._hot_at = np.concatenate([offsets, [n_hot]]).astype(np.int64)
        self.n_hot = n_hot
        self.in_dim = L + n_hot + G
        self.one_hot_max, self.one_hot_budget = int(one_hot_max), int(one_hot_budget)
        key = None if fill is None else mod.__name__
        if key not in _COMPACT:
            _COMPACT[key] = _build_compact(fill)
        self._parallel, self._serial = _COMPACT[key]

    def compute(self, obs: np.ndarray, masks: np.ndarray, threads: int | None = None,
                x: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(x, rows, acts, offsets)`` of observations ``obs`` ``(B, L)`` and masks ``(B, A)``
        (class docstring); ``x`` may be a preallocated ``(B, D)`` float32 array to write
        into."""
        o = np.ascontiguousarray(obs, self.game.obs_dtype)
        m = np.ascontiguousarray(masks, np.int8)
        B = o.shape[0]
        if o.shape != (B, self.obs_size) or m.shape != (B, self.num_actions):
            raise ValueError(f"observations ({B}, {self.obs_size}) and masks "
                             f"({B}, {self.num_actions}) expected, got {o.shape} and {m.shape}")
        offsets = np.zeros(B + 1, np.int64)
        np.cumsum(np.count_nonzero(m, axis=1), out=offsets[1:])
        K = int(offsets[-1])
        rows = np.empty((K, self.action_dim), np.float32)
        acts = np.empty(K, np.int64)
        if x is None:
            x = np.empty((B, self.in_dim), np.float32)
        n = get_num_threads() if threads is None else int(threads)
        drive = self._serial if B < SERIAL_BELOW or n <= 1 else self._parallel
        drive(n, o, m, self.game.cfg, x, rows, acts, offsets, self._cols, self._lows,
              self._widths, self._hot_at, self.obs_size, self.global_dim, self.action_dim,
              self.num_actions)
        return x, rows, acts, offsets
