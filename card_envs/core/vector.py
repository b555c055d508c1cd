"""Batched engine: ``B`` independent games stepped by one compiled call (numba ``prange`` over
the same rule kernels the AEC env uses; there is no second implementation).

>>> vec = card_envs.vector.make("slide_v0", num_envs=4096, seed=0)
>>> cur, obs, mask = vec.reset()
>>> cur, obs, mask, rewards, terminated, truncated = vec.step(vec.sample_actions())

Arrays (preallocated, **overwritten in place by every call**: copy what you keep):

==================  ====================  ==========================================
name                shape, dtype          meaning
==================  ====================  ==========================================
``current_player``  (B,) int32            seat to act in each game
``observations``    (B, obs_size)         that seat's observation (AEC layout)
``action_masks``    (B, num_actions) int8 that seat's legal actions
``rewards``         (B, n) float32        every seat's reward for this step
``terminated``      (B,) bool             the game ended by its rules with this step
``truncated``       (B,) bool             the game was cut off by a limit this step
==================  ====================  ==========================================

**Auto-reset** (same step, as in Pgx): when ``terminated[i]`` or ``truncated[i]`` is true,
``rewards[i]`` are the final rewards of the finished game and
``current_player/observations/action_masks[i]`` already belong to the next game, dealt from
the RNG carried in that game's state. Game ``i`` of a batch seeded ``s`` is the game
``env.reset(seed=s + i)`` deals, and its later games are those that ``env.reset()`` (no seed)
deals after it: the AEC env and the batch agree step for step.

Actions are checked: if any is masked out or out of range, ``step`` raises
``IllegalActionError`` naming the game index and no game is stepped.

**Threads.** Batches of ``SERIAL_BELOW`` (128) games or more run on numba's thread pool,
smaller ones on one thread. A parallel loop waits for its slowest thread, and numba's OpenMP
workers spin while they wait, so one core kept busy by another process can make all threads
several times slower than one. Each batch therefore times its own calls and picks how many
threads to use (at most ``numba.get_num_threads()`` of the calling thread; see
:class:`ThreadTuner`), trying the others again now and then; ``vec.num_threads`` tells the
current choice, ``vec.fix_threads(n)`` turns the choice off. The count only changes timing:
the games are independent, so every count gives the same games. Nothing global is changed
(the count is set for the calling thread inside each compiled call and restored after it).
**Compiling.** The drivers are a game's kernels bound into a generated module in the kernel
cache folder (``card_envs.core.jit.load_generated``), so like the rule kernels they compile on
the first run only and load from disk after it. What every new process still compiles is the
small wrapper that runs the parallel build on a chosen number of threads (numba does not
cache code that sets the thread count): about a second at the first ``reset``/``step`` of a
batch of ``SERIAL_BELOW`` games or more. :func:`warm` does all this before a first timed
step, with a line on stderr saying so when asked (``progress=True``).
"""

from __future__ import annotations

import types
from time import perf_counter
from typing import Any

import numpy as np
from numba import get_num_threads, prange, set_num_threads

from card_envs.core import kernels as K
from card_envs.core.errors import IllegalActionError, OptionError
from card_envs.core.game import Game, seed_to_u64
from card_envs.core.jit import njit
from card_envs.core.registry import env_class, resolve_env_id
from card_envs.threads import ThreadTuner

SERIAL_BELOW = 128  # batches smaller than this run on one thread (no parallel start-up cost)


def _with_threads(kernel: Any) -> Any:
    """``kernel(nthreads, *args)`` (a parallel build) behind a compiled wrapper that runs it on
    at most ``nthreads`` numba threads and then restores the calling thread's count (numba's
    thread count is per calling thread; nothing global changes)."""

    def run(nthreads, *args):
        old = get_num_threads()
        set_num_threads(max(1, min(nthreads, old)))
        kernel(nthreads, *args)
        set_num_threads(old)

    return njit(run)


# Placeholders: in the generated per-game module these names are the game's kernels.
_init = _step = _legal_mask = _observe = None


def reset_template(nthreads, states, cfg, seeds, cur, obs, masks, A):
    """Deal game ``i`` from ``seeds[i]``, then its first turn's mask and observation."""
    for i in prange(states.shape[0]):
        s = states[i]
        s[:] = 0
        K.rng_seed(s, seeds[i])
        _init(s, cfg)
        c = s[K.CUR]
        cur[i] = c
        _legal_mask(s, cfg, masks[i, :A])
        _observe(s, cfg, c, obs[i])


def step_template(nthreads, states, cfg, actions, cur, obs, masks, A, rewards, terminated,
                  truncated, final_seat, final_obs, want_final):
    """Step the games whose action is >= 0 (the others keep their state and get zero
    rewards); a game that ends is dealt anew from its RNG, after writing seat
    ``final_seat[i]``'s view of its final position to ``final_obs[i]`` if ``want_final``."""
    for i in prange(states.shape[0]):
        terminated[i] = False
        truncated[i] = False
        if actions[i] < 0:
            rewards[i, :] = 0.0
            continue
        s = states[i]
        st = _step(s, cfg, actions[i], rewards[i])
        if not st & K.ST_REWARD:
            rewards[i, :] = 0.0
        if st & K.ST_DONE:
            trunc = (st & K.ST_TRUNC) != 0
            terminated[i] = not trunc
            truncated[i] = trunc
            if want_final:
                _observe(s, cfg, final_seat[i], final_obs[i])
            K.clear_keep_rng(s)
            _init(s, cfg)
        c = s[K.CUR]
        cur[i] = c
        _legal_mask(s, cfg, masks[i, :A])
        _observe(s, cfg, c, obs[i])


_DRIVER_MODULE = """# Generated by card_envs.core.vector for {env_id}; do not edit.
# The batched engine's reset and step over this game's kernels, in a parallel (prange) and a
# serial build, in a real file so that numba caches them on disk.
from numba import prange

from card_envs.core import kernels as K
from card_envs.core.jit import njit
from {init_module} import {init_name} as _init
from {step_module} import {step_name} as _step
from {mask_module} import {mask_name} as _legal_mask
from {obs_module} import {obs_name} as _observe


@njit(cache=True, parallel=True)
{reset_par}

@njit(cache=True, parallel=True)
{step_par}

@njit(cache=True)
{reset_serial}

@njit(cache=True)
{step_serial}
"""


def _build_drivers(game: Game) -> tuple[Any, ...]:
    """The batched reset/step for one game: the templates above bound to its kernels in a
    generated module (as in ``card_envs.agents.search.compiled_search``; numba caches only
    functions of a real file, and module globals are compile-time constants: passing kernels
    as arguments costs ~20 us of typing per call). Returns (reset, step) in a parallel and a
    serial build; all take a thread count first (the parallel build runs on at most that many
    threads, the serial one ignores it)."""
    from card_envs.core.jit import kernel_imports, load_generated, template_source

    imports, digest = kernel_imports(init=game.k_init, step=game.k_step,
                                     mask=game.k_legal_mask, obs=game.k_observe)
    sources = {f"{kind}_{build}": template_source(template, f"{kind}_{build}")
               for kind, template in (("reset", reset_template), ("step", step_template))
               for build in ("par", "serial")}
    text = _DRIVER_MODULE.format(env_id=game.env_id, **imports, **sources)
    module = load_generated(f"vector_{game.env_id}_{digest}", text)
    return (_with_threads(module.reset_par), _with_threads(module.step_par),
            module.reset_serial, module.step_serial)


_DRIVERS: dict[type, tuple[Any, ...]] = {}


def _drivers(game: Game, serial: bool) -> tuple[Any, Any]:
    key = type(game)
    if key not in _DRIVERS:
        _DRIVERS[key] = _build_drivers(game)
    d = _DRIVERS[key]
    return (d[2], d[3]) if serial else (d[0], d[1])


@njit(cache=True)
def _first_illegal(actions, masks) -> int:
    A = masks.shape[1]
    for i in range(actions.shape[0]):
        a = actions[i]
        if a < 0 or a >= A or masks[i, a] == 0:
            return i
    return -1


@njit(cache=True)
def _first_illegal_some(actions, masks) -> int:
    """``_first_illegal`` over the games with an action >= 0 (negative = does not move);
    ``-1 - moving`` (the number of such games) when all of them are legal."""
    A = masks.shape[1]
    moving = 0
    for i in range(actions.shape[0]):
        a = actions[i]
        if a >= 0:
            if a >= A or masks[i, a] == 0:
                return i
            moving += 1
    return -1 - moving


def _sample_py(nthreads, words, rng, out):
    """One uniformly random legal action per game, from a per-game splitmix64 stream.
    ``words`` is the int8 mask buffer (rows padded with zeros to a multiple of 8) viewed as
    uint64: every byte is 0 or 1, so a word's byte sum counts its legal actions. (``nthreads``
    is for the ``_sample`` wrapper; the loop ignores it.)"""
    W = words.shape[1]
    ones = np.uint64(0x0101010101010101)
    s56 = np.uint64(56)
    for i in prange(words.shape[0]):
        k = 0
        for w in range(W):
            k += np.int64((words[i, w] * ones) >> s56)
        z = rng[i] + np.uint64(0x9E3779B97F4A7C15)
        rng[i] = z
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
        j = np.int64((z >> np.uint64(11)) % np.uint64(max(k, 1)))
        for w in range(W):
            c = np.int64((words[i, w] * ones) >> s56)
            if j >= c:
                j -= c
                continue
            x = words[i, w]
            for b in range(8):  # little-endian: byte b is action 8w + b
                if (x >> np.uint64(8 * b)) & np.uint64(1):
                    if j == 0:
                        out[i] = 8 * w + b
                        break
                    j -= 1
            break


def _renamed(f: Any, name: str) -> Any:
    """A copy of function ``f`` called ``name``. numba's disk cache names its entries after the
    function and does not tell ``parallel=True`` from ``False``: two builds of one function
    would share an entry, and a serial batch could get the parallel sampler (or the reverse)."""
    g = types.FunctionType(f.__code__, f.__globals__, name, f.__defaults__, f.__closure__)
    g.__qualname__ = name
    g.__doc__ = f.__doc__
    return g


_sample_parallel = njit(cache=True, parallel=True)(_renamed(_sample_py, "_sample_parallel"))
_sample_serial = njit(cache=True)(_renamed(_sample_py, "_sample_serial"))


_sample = _with_threads(_sample_parallel)  # not cached (set_num_threads is a ctypes pointer)


class VectorEnv:
    """``num_envs`` games of one configuration, stepped together (see the module docstring)."""

    def __init__(self, game: Game, num_envs: int, seed: int = 0) -> None:
        if not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise OptionError(f"num_envs must be a positive integer, got {num_envs!r}")
        self.game = game
        self.num_envs = B = int(num_envs)
        self.num_players, self.num_actions = game.num_players, game.num_actions
        self.obs_size = game.obs_size
        self.cfg = game.cfg
        self.states = np.zeros((B, game.state_size), np.int32)
        self.current_player = np.zeros(B, np.int32)
        self.observations = np.zeros((B, game.obs_size), game.obs_dtype)
        width = -(-game.num_actions // 8) * 8  # padded so the sampler reads 8 actions a word
        self._mask_buf = np.zeros((B, width), np.int8)
        self._mask_words = self._mask_buf.view(np.uint64)
        self.action_masks = self._mask_buf[:, :game.num_actions]
        self.rewards = np.zeros((B, game.num_players), np.float32)
        self.terminated = np.zeros(B, np.bool_)
        self.truncated = np.zeros(B, np.bool_)
        self._actions = np.zeros(B, np.int64)
        self._policy_rng = np.zeros(B, np.uint64)
        serial = B < SERIAL_BELOW
        self._reset_k, self._step_k = _drivers(game, serial)
        self.final_seat = np.zeros(B, np.int32)
        self.final_observations = np.zeros((B, game.obs_size), game.obs_dtype)
        self._sample_k = _sample_serial if serial else _sample
        self._tuner = None if serial else ThreadTuner()
        self._fixed_threads: int | None = 1 if serial else None
        self.reset(seed)

    @property
    def num_threads(self) -> int:
        """numba threads the next call will use (1 for batches below ``SERIAL_BELOW``)."""
        if self._tuner is None:
            return 1
        return max(1, min(self._threads(), get_num_threads()))

    def fix_threads(self, n: int | None) -> None:
        """Run every call on ``n`` threads (at most ``numba.get_num_threads()`` of the calling
        thread), or with ``None`` let the batch choose by timing its calls (the default)."""
        if self._tuner is None:
            return  # serial build: always one thread
        if n is not None and (not isinstance(n, (int, np.integer)) or n < 1):
            raise OptionError(f"threads must be a positive integer or None, got {n!r}")
        self._fixed_threads = None if n is None else int(n)
        self._tuner = ThreadTuner()

    def _threads(self) -> int:
        if self._fixed_threads is not None:
            return self._fixed_threads
        assert self._tuner is not None
        return self._tuner.threads()

    def reset(self, seed: int | None = None, seeds: Any = None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Deal every game anew: game ``i`` from ``seed + i``, or from ``seeds[i]`` (one
        non-negative int per game: the game ``env.reset(seed=seeds[i])`` deals, e.g. the
        arena's duplicate deals)."""
        if seeds is not None:
            if seed is not None:
                raise OptionError("give seed or seeds, not both")
            if len(seeds) != self.num_envs:
                raise OptionError(f"seeds needs one seed per game ({self.num_envs}), got "
                                  f"{len(seeds)}")
            seeds = np.array([seed_to_u64(s) for s in seeds], np.uint64)
        else:
            if seed is None:
                seed = int(np.random.default_rng().integers(0, 2**62))
            seeds = np.array([seed_to_u64(seed + i) for i in range(self.num_envs)], np.uint64)
        self._policy_rng[:] = seeds ^ np.uint64(0x5DEECE66D)
        self._reset_k(self._threads(), self.states, self.cfg, seeds, self.current_player,
                      self.observations, self._mask_buf, self.num_actions)
        self.rewards[:] = 0
        self.terminated[:] = False
        self.truncated[:] = False
        return self.current_player, self.observations, self.action_masks

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, ...]:
        """Apply one action per game; returns ``(current_player, observations, action_masks,
        rewards, terminated, truncated)``."""
        return self._step(actions, some=False)

    def step_some(self, actions: np.ndarray) -> tuple[np.ndarray, ...]:
        """Like :meth:`step`, but only the games whose action is >= 0 move; the others keep
        their position (zero rewards, not terminated). A game that ends also writes
        ``final_observations[i]``, the final position seen by seat ``final_seat[i]`` (set it
        beforehand, e.g. to the learner's seat), before it is dealt anew."""
        return self._step(actions, some=True)

    def _step(self, actions: np.ndarray, some: bool) -> tuple[np.ndarray, ...]:
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,) or acts.dtype.kind not in "iu":
            raise IllegalActionError(f"actions must be an integer array of shape "
                                     f"({self.num_envs},), got {acts.dtype} {acts.shape}")
        self._actions[:] = acts
        if some:
            bad = _first_illegal_some(self._actions, self.action_masks)
            moving = -1 - bad
        else:
            bad = _first_illegal(self._actions, self.action_masks)
            moving = self.num_envs
        if bad >= 0:
            legal = np.flatnonzero(self.action_masks[bad]).tolist()
            phase = self.game.phase_name(self.states[bad])
            raise IllegalActionError(f"game {bad}: illegal action {int(acts[bad])} in phase "
                                     f"{phase!r}; legal: {legal}. No game was stepped.",
                                     int(acts[bad]), phase, legal)
        tuner = None if self._fixed_threads is not None else self._tuner
        n = self._threads()
        t0 = perf_counter()
        self._step_k(n, self.states, self.cfg, self._actions, self.current_player,
                     self.observations, self._mask_buf, self.num_actions, self.rewards,
                     self.terminated, self.truncated, self.final_seat,
                     self.final_observations, some)
        if tuner is not None:
            tuner.record(perf_counter() - t0, moving)
        return (self.current_player, self.observations, self.action_masks, self.rewards,
                self.terminated, self.truncated)

    def sample_actions(self, out: np.ndarray | None = None) -> np.ndarray:
        """A uniformly random legal action for every game (compiled; its own RNG stream, so
        sampling never changes the games' chance)."""
        out = self._actions if out is None else out
        self._sample_k(self._threads(), self._mask_words, self._policy_rng, out)
        return out


def make(env_id: str, num_envs: int, seed: int = 0, **options: Any) -> VectorEnv:
    """A batched engine of ``num_envs`` games of ``env_id`` with the given game options."""
    return VectorEnv(env_class(env_id).game_class(**options), num_envs, seed)


def warm(env_id: str, num_envs: int = 256, progress: bool = False, **options: Any) -> float:
    """Compile the batched engine of ``env_id`` for batches of ``num_envs`` games (the
    parallel build from ``SERIAL_BELOW`` games on, the serial one below) by building one and
    stepping it once; return the seconds it took. The drivers and the rule kernels compile only
    when they are not in the on-disk cache; the wrappers that run the parallel build on a
    chosen number of threads compile in every new process (see the module docstring).
    With ``progress`` a line on stderr says so while it compiles (``compiling the batched
    slide_v0 engine (once per process) ... 2 s``); a training script can call this before its
    first timed step."""
    from card_envs.core.progress import compile_notice

    env_id = resolve_env_id(env_id)
    t0 = perf_counter()
    with compile_notice(f"the batched {env_id} engine", enabled=progress,
                        note="once per process"):
        vec = make(env_id, num_envs, seed=0, **options)
        vec.step(vec.sample_actions())
    return perf_counter() - t0
