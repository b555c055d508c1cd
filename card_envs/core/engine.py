"""``Engine``: one game's rules on bare state arrays, at Python speed, for search and custom
loops. A state is a 1-D int32 array; cloning it is ``state.copy()``.

A loop that wants the observation and the legal mask of every turn gets both from the step
itself, in one compiled call (:meth:`Engine.step_observe`, :meth:`Engine.observe_turn`)::

    eng = card_envs.Engine("slide_v0")
    state = eng.new_state(seed)
    n = eng.observe_turn(state)  # eng.obs, eng.mask, eng.legal[:n]: the seat to act's turn
    while n:                     # 0 once the game is over
        n = eng.step_observe(state, policy(eng.obs, eng.mask))  # eng.rewards: this step's
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from card_envs.core import kernels as K
from card_envs.core.errors import CardEnvError, IllegalActionError
from card_envs.core.game import Game, as_generator
from card_envs.core.registry import env_class

# status codes of the turn kernels (a count of legal actions is >= 0)
_BAD_STATE, _OUT_OF_RANGE, _GAME_OVER, _MASKED = -1, -2, -3, -4
# the turn buffers' layout in one int64 array: a header (sizes, then where each buffer starts,
# in words), then cfg, obs, mask, legal and rewards, each from a word boundary
(_H_STATE, _H_OBS, _H_ACTIONS, _H_PLAYERS, _H_CFG, _H_OFF_CFG, _H_OFF_OBS, _H_OFF_MASK,
 _H_OFF_LEGAL, _H_OFF_REW) = range(10)
_HEADER_WORDS = 16
#: written into the generated modules as literals (the kernels compile them in)
_TURN_CONSTANTS = ("_BAD_STATE", "_OUT_OF_RANGE", "_GAME_OVER", "_MASKED", "_H_STATE", "_H_OBS",
                   "_H_ACTIONS", "_H_PLAYERS", "_H_CFG", "_H_OFF_CFG", "_H_OFF_OBS",
                   "_H_OFF_MASK", "_H_OFF_LEGAL", "_H_OFF_REW", "_HEADER_WORDS")
_I64 = np.int64
_NEW_STATE = Game.new_state  # games that deal in Python (an override) keep their own


def _jit_disabled() -> bool:
    import numba

    return bool(numba.config.DISABLE_JIT)


class Engine:
    """Rules of one configuration of a game (``Engine("slide_v0", num_players=3)``).

    ``step`` trusts its caller (no legality check, for speed); ``apply`` and ``step_observe``
    check.

    The turn buffers, written by :meth:`observe_turn` and :meth:`step_observe` and
    overwritten by the next of those calls (copy what you keep; one loop per Engine at a
    time): ``obs`` (the seat to act's observation, ``game.obs_dtype``), ``mask`` (its legal
    mask, int8), ``legal`` (its legal actions, ascending, in ``legal[:n]``; int64) and
    ``rewards`` (the last step's rewards per seat, float32)."""

    def __init__(self, env_id: str | Game, **options: Any) -> None:
        if isinstance(env_id, Game):
            self.game = env_id
        else:
            self.game = env_class(env_id).game_class(**options)
        g = self.game
        self.num_players, self.num_actions = g.num_players, g.num_actions
        self.cfg = g.cfg
        self._step, self._mask, self._obs = g.k_step, g.k_legal_mask, g.k_observe
        self._init_turn()

    def _init_turn(self) -> None:
        """New turn buffers, and the turn kernels to be built on the first call."""
        self._ws, self.obs, self.mask, self.legal, self.rewards = _turn_buffers(self.game)
        # what the compiled kernels take for ws: its address (an int crosses into numba
        # faster than an array; ws lives as long as this Engine), the array itself when
        # numba's JIT is off
        self._ws_arg: Any = self._ws if _jit_disabled() else self._ws.ctypes.data
        self._turn_step: Callable[..., int] = self._build_then_step
        self._turn_observe: Callable[..., int] = self._build_then_observe
        self._turn_new: Callable[..., int] = self._build_then_new
        self._fast_new = False  # new_state deals in one compiled call once the turn loop runs

    def __getstate__(self) -> dict[str, Any]:
        """Pickled and copied without the turn buffers (views into one array) and kernels
        (of a generated module): the copy makes its own."""
        skip = ("_ws", "_ws_arg", "obs", "mask", "legal", "rewards", "_turn_step",
                "_turn_observe", "_turn_new", "_fast_new")
        return {k: v for k, v in self.__dict__.items() if k not in skip}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._init_turn()

    def new_state(self, seed: int) -> np.ndarray:
        """A new game dealt from ``seed`` (same deal as ``env.reset(seed=seed)``)."""
        if self._fast_new and type(seed) is int and 0 <= seed < 2**63:
            state = np.zeros(self.game.state_size, np.int32)  # one compiled call deals it
            self._turn_new(state, seed, self._ws_arg)
            return state
        return self.game.new_state(seed)

    def step(self, state: np.ndarray, action: int) -> np.ndarray:
        """Apply a legal ``action`` in place; returns this step's rewards per seat."""
        rewards = np.zeros(self.num_players, np.float32)
        if not self._step(state, self.cfg, action, rewards) & K.ST_REWARD:
            rewards[:] = 0
        return rewards

    def apply(self, state: np.ndarray, action: int) -> np.ndarray:
        """``step`` after checking legality (IllegalActionError, state unchanged)."""
        mask = self.legal_mask(state)
        if not (0 <= int(action) < self.num_actions and mask[int(action)]):
            phase = self.game.phase_name(state)
            legal = np.flatnonzero(mask).tolist()
            raise IllegalActionError(f"illegal action {action!r} in phase {phase!r}; legal: "
                                     f"{legal}", action, phase, legal)
        return self.step(state, int(action))

    # --- the turn loop: step, legal mask and observation in one compiled call ---------------
    def step_observe(self, state: np.ndarray, action: int) -> int:
        """Apply ``action`` in place, then the next turn as :meth:`observe_turn` does: returns
        ``n``, the number of legal actions of the seat to act (0 once the game is over), and
        fills ``self.obs``, ``self.mask``, ``self.legal[:n]`` and ``self.rewards`` (this
        step's rewards per seat). The same as ``apply``, ``legal_mask`` and ``observe`` of
        ``current_player(state)``, in one compiled call.

        The input is checked before anything changes: an action that is not legal now (out
        of range, not an integer, masked out, the game over) raises
        :class:`IllegalActionError`, a state that is not a writable contiguous int32 array of
        this game's size :class:`CardEnvError`; ``state`` is then unchanged (``mask`` may
        hold the legal mask of the turn).

        The first call of the turn loop compiles its kernels for this game (cached on disk,
        like the rules: a first run only). The fastest action to pass is a Python int:
        ``self.legal.item(k)`` gives one."""
        if type(action) is not int:  # a Python int crosses into numba fastest
            action = int(action) if type(action) is _I64 else self._coerce(state, action)
        try:
            n = self._turn_step(state, action, self._ws_arg)
        except (TypeError, OverflowError):  # numba could not take the state or the action
            raise self._refused(state, action, None) from None
        if n < 0:
            raise self._refused(state, action, n)
        return n

    def observe_turn(self, state: np.ndarray) -> int:
        """The turn of the seat to act: its observation into ``self.obs``, its legal mask
        into ``self.mask`` and its legal actions into ``self.legal[:n]``; returns ``n``, the
        number of legal actions (0 once the game is over: ``obs`` untouched, ``mask`` all
        zeros). The start of a :meth:`step_observe` loop; ``state`` is not changed."""
        try:
            n = self._turn_observe(state, self._ws_arg)
        except TypeError:
            raise self._refused(state, None, None) from None
        if n < 0:
            raise self._refused(state, None, n)
        return n

    def _coerce(self, state: np.ndarray, action: Any) -> int:
        """A non-``int`` action as a Python int (numpy integers, 0-d integer arrays), else
        IllegalActionError."""
        from card_envs.core.env import as_action

        try:
            return as_action(action, self.num_actions)
        except ValueError as e:
            raise self._illegal(state, action, str(e)) from None

    def _illegal(self, state: np.ndarray, action: Any, why: str) -> IllegalActionError:
        phase = self.game.phase_name(state)
        legal = [] if state[K.DONE] else self.legal_actions(state)
        return IllegalActionError(f"{self.game.env_id}: illegal action {action!r} in phase "
                                  f"{phase!r}: {why}; legal: {legal}", action, phase, legal)

    def _refused(self, state: Any, action: Any, code: int | None) -> CardEnvError:
        """The error for a turn kernel's refusal (``code``) or a call numba could not type."""
        g = self.game
        if not (isinstance(state, np.ndarray) and state.dtype == np.int32 and state.ndim == 1
                and state.flags.c_contiguous and state.flags.writeable
                and state.shape[0] == g.state_size):
            got = (f"{state.dtype} array of shape {state.shape}"
                   f"{'' if state.flags.c_contiguous else ', not contiguous'}"
                   f"{'' if state.flags.writeable else ', read-only'}"
                   if isinstance(state, np.ndarray) else type(state).__name__)
            return CardEnvError(f"{g.env_id}: state must be a writable contiguous 1-D int32 "
                                f"array of {g.state_size} entries (new_state() makes one), "
                                f"got {got}")
        if code == _GAME_OVER:
            return self._illegal(state, action, "the game is over")
        if code == _MASKED:
            return self._illegal(state, action, "masked out")
        return self._illegal(state, action, f"out of range 0..{self.num_actions - 1}")

    def _build(self) -> None:
        self._turn_step, self._turn_observe, self._turn_new = _turn_kernels(self.game)
        # (a game whose new_state is its own, not Game's, keeps it)
        self._fast_new = type(self.game).new_state is _NEW_STATE

    def _build_then_step(self, *args: Any) -> int:
        self._build()
        return self._turn_step(*args)

    def _build_then_observe(self, *args: Any) -> int:
        self._build()
        return self._turn_observe(*args)

    def _build_then_new(self, *args: Any) -> int:  # (new_state calls it only once built)
        self._build()
        return self._turn_new(*args)

    # --- the separate calls -------------------------------------------------------------
    def legal_mask(self, state: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        out = np.zeros(self.num_actions, np.int8) if out is None else out
        self._mask(state, self.cfg, out)
        return out

    def legal_actions(self, state: np.ndarray) -> list[int]:
        return np.flatnonzero(self.legal_mask(state)).tolist()

    def observe(self, state: np.ndarray, seat: int, out: np.ndarray | None = None) -> np.ndarray:
        g = self.game
        out = np.empty(g.obs_size, g.obs_dtype) if out is None else out
        self._obs(state, self.cfg, seat, out)
        return out

    @staticmethod
    def current_player(state: np.ndarray) -> int:
        """Seat to act, -1 when the game is over."""
        return int(state[K.CUR])

    @staticmethod
    def is_terminal(state: np.ndarray) -> bool:
        return bool(state[K.DONE])

    @staticmethod
    def clone(state: np.ndarray) -> np.ndarray:
        return state.copy()

    def outcome(self, state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(points, winners) of a finished game."""
        return self.game.outcome(state)

    def resample(self, state: np.ndarray, observer: int, rng: Any = None) -> np.ndarray:
        """Determinization: a full state consistent with what ``observer`` knows (``rng``: a
        numpy Generator, a ``random.Random``, an int seed or None)."""
        rng = as_generator(rng)
        out = self.game.resample(state, observer, rng)
        K.rng_seed(out, np.uint64(rng.integers(0, 2**64, dtype=np.uint64)))
        return out


# --- the turn kernels ------------------------------------------------------------------------
def _turn_buffers(g: Game) -> tuple[np.ndarray, ...]:
    """``(ws, obs, mask, legal, rewards)``: one int64 array ``ws``, what the turn kernels
    reach by its address (an array crossing from Python into numba costs about as much as a
    small kernel), holding a header (sizes, offsets), a copy of the config and the four
    buffers, which are views into it. The mask is padded with zeros to whole 8-byte words
    (the kernels scan it a word at a time), ``legal`` with 8 spare entries (the scan writes
    one entry ahead of its count, up to the end of the mask's last word)."""
    dtype = np.dtype(g.obs_dtype)
    A = g.num_actions
    shown = [(len(g.cfg), np.int32), (g.obs_size, dtype), (A, np.int8), (A, np.int64),
             (g.num_players, np.float32)]
    words = [-(-n * np.dtype(t).itemsize // 8) for n, t in shown]
    words[3] += 8  # legal's spare entries
    offsets = [_HEADER_WORDS]
    for w in words:
        offsets.append(offsets[-1] + w)
    ws = np.zeros(offsets[-1], np.int64)
    ws[:_H_OFF_CFG] = [g.state_size, g.obs_size, A, g.num_players, len(g.cfg)]
    ws[_H_OFF_CFG:_H_OFF_REW + 1] = offsets[:5]
    cfg, obs, mask, legal, rewards = (ws[o:o + w].view(t)[:n]
                                      for o, w, (n, t) in zip(offsets, words, shown))
    cfg[:] = g.cfg
    return ws, obs, mask, legal, rewards


# Placeholders: in the generated per-game modules these names are the game's kernels, the
# observation dtype, uint64 constants, the buffer accessors and the turn kernel the others call.
_step = _legal_mask = _observe = _init = _OBS_DTYPE = None
_U0 = _UFF = _SHIFT = _SEED_MUL = _SEED_ADD = _M1 = _M2 = _S27 = _S30 = _S31 = None
_header = _view = _turn_fill = None


def turn_fill_template(state, ws, cfg, mask):
    """The turn of the seat to act: its legal mask (``mask``), observation and legal actions
    into ``ws``; returns how many legal actions there are (0 at the end, the mask zeroed)."""
    if state[K.DONE] != 0:
        mask[:] = 0
        return 0
    _legal_mask(state, cfg, mask)
    h = _header(ws)
    _observe(state, cfg, state[K.CUR], _view(ws, h[_H_OFF_OBS], h[_H_OBS], _OBS_DTYPE))
    A = h[_H_ACTIONS]
    legal = _view(ws, h[_H_OFF_LEGAL], A + 8, np.int64)  # 8 spare: see _turn_buffers
    bits = _view(ws, h[_H_OFF_MASK], (A + 7) // 8, np.uint64)  # 8 actions a word, 0-padded
    n = 0
    for w in range(bits.shape[0]):
        x = bits[w]
        if x != _U0:  # branch-free over the word's 8 actions
            a = 8 * w
            for b in range(8):
                legal[n] = a + b
                n += (x >> _SHIFT[b]) & _UFF != _U0
    return n


def turn_observe_template(state, ws):
    """:func:`turn_fill_template` after checking the state's size (``_BAD_STATE``)."""
    h = _header(ws)
    if state.shape[0] != h[_H_STATE]:
        return _BAD_STATE
    return _turn_fill(state, ws, _view(ws, h[_H_OFF_CFG], h[_H_CFG], np.int32),
                      _view(ws, h[_H_OFF_MASK], h[_H_ACTIONS], np.int8))


def turn_step_template(state, action, ws):
    """Check ``action`` (nothing is touched if it is refused: a negative status), apply it,
    zero ``rewards`` unless the step gave some, then the next turn (:func:`turn_fill_template`)."""
    h = _header(ws)
    if state.shape[0] != h[_H_STATE]:
        return _BAD_STATE
    if action < 0 or action >= h[_H_ACTIONS]:
        return _OUT_OF_RANGE
    if state[K.DONE] != 0:
        return _GAME_OVER
    cfg = _view(ws, h[_H_OFF_CFG], h[_H_CFG], np.int32)
    mask = _view(ws, h[_H_OFF_MASK], h[_H_ACTIONS], np.int8)
    _legal_mask(state, cfg, mask)
    if mask[action] == 0:
        return _MASKED
    rewards = _view(ws, h[_H_OFF_REW], h[_H_PLAYERS], np.float32)
    if _step(state, cfg, action, rewards) & K.ST_REWARD == 0:
        rewards[:] = 0.0
    return _turn_fill(state, ws, cfg, mask)


def turn_new_template(state, seed, ws):
    """Deal a new game into the zeroed ``state`` from ``seed`` (0 <= seed < 2**63): the same
    as ``Game.new_state`` (``seed_to_u64``, ``rng_seed``, the game's ``init``)."""
    h = _header(ws)
    if state.shape[0] != h[_H_STATE]:
        return _BAD_STATE
    z = np.uint64(seed) * _SEED_MUL + _SEED_ADD  # seed_to_u64, wrapping at 2**64
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    K.rng_seed(state, z ^ (z >> _S31))
    _init(state, _view(ws, h[_H_OFF_CFG], h[_H_CFG], np.int32))
    return 0


_TURN_MODULE = """# Generated by card_envs.core.engine for {env_id}; do not edit.
# Engine.step_observe / observe_turn / new_state: check, step, legal mask and observation in
# one compiled call.
import numpy as np
from numba import carray as _carray
from numba import config as _config
from numba import types as _types
from numba.core import cgutils as _cgutils
from numba.extending import intrinsic as _intrinsic

from card_envs.core import kernels as K
from card_envs.core.jit import njit
from {step_module} import {step_name} as _step
from {mask_module} import {mask_name} as _legal_mask
from {obs_module} import {obs_name} as _observe
from {init_module} import {init_name} as _init

_OBS_DTYPE = np.{dtype}
_U0, _UFF = np.uint64(0), np.uint64(0xFF)
_SHIFT = np.arange(0, 64, 8).astype(np.uint64)
_SEED_MUL, _SEED_ADD = np.uint64(0x9E3779B97F4A7C15), np.uint64(0x632BE59BD9B4E019)
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_S27, _S30, _S31 = np.uint64(27), np.uint64(30), np.uint64(31)
{constants}

if _config.DISABLE_JIT:  # plain Python: ws is the array itself
    def _header(ws):
        return ws[:_HEADER_WORDS]

    def _view(ws, word, n, dtype):
        return ws[word:].view(dtype)[:n]
else:  # ws is the address of the Engine's array: views without a reference count of their
    # own (a slice of an array passed in would count, atomically, each time one is made)
    @_intrinsic
    def _void_ptr(typingctx, address):
        def codegen(context, builder, signature, args):
            return builder.inttoptr(args[0], _cgutils.voidptr_t)
        return _types.voidptr(address), codegen

    @njit(cache=True, inline="always")
    def _header(ws):
        return _carray(_void_ptr(ws), _HEADER_WORDS, np.int64)

    @njit(cache=True, inline="always")
    def _view(ws, word, n, dtype):
        return _carray(_void_ptr(ws + 8 * word), n, dtype)


@njit(cache=True, inline="always")
{fill_source}

@njit(cache=True)
{observe_source}

@njit(cache=True)
{step_source}

@njit(cache=True)
{new_source}"""

_Kernels = tuple[Callable[..., int], Callable[..., int], Callable[..., int]]
_TURN: dict[tuple[Any, ...], _Kernels] = {}


def _turn_kernels(game: Game) -> _Kernels:
    """``(turn_step, turn_observe, turn_new)`` for ``game``'s kernels and observation dtype,
    compiled for exactly the types the Engine passes (a state of another type is a
    TypeError, not a new compilation) and cached on disk like the search loop
    (:func:`card_envs.agents.search.compiled_search`): numba caches only functions of a real
    file, so the templates above go, with imports of the game's kernels, to a module in
    card-envs' kernel cache folder."""
    from card_envs.core.jit import kernel_imports, load_generated, template_source

    kernels = [getattr(k, "py_func", k) for k in (game.k_step, game.k_legal_mask,
                                                 game.k_observe, game.k_init)]
    dtype = np.dtype(game.obs_dtype)
    key = (*kernels, dtype)
    if key in _TURN:
        return _TURN[key]
    imports, digest = kernel_imports(step=game.k_step, mask=game.k_legal_mask,
                                     obs=game.k_observe, init=game.k_init)
    constants = "\n".join(f"{name} = {globals()[name]!r}" for name in _TURN_CONSTANTS)
    text = _TURN_MODULE.format(
        env_id=game.env_id, dtype=dtype.name, constants=constants, **imports,
        fill_source=template_source(turn_fill_template, "_turn_fill"),
        observe_source=template_source(turn_observe_template, "turn_observe"),
        step_source=template_source(turn_step_template, "turn_step"),
        new_source=template_source(turn_new_template, "turn_new"))
    module = load_generated(f"turn_{game.env_id}_{dtype.name}_{digest}", text)
    out = module.turn_step, module.turn_observe, module.turn_new
    if not _jit_disabled():
        from numba import types as T

        state = T.Array(T.int32, 1, "C")
        for kernel, sig in zip(out, ((state, T.int64, T.int64), (state, T.int64),
                                     (state, T.int64, T.int64))):
            kernel.compile(sig)
            kernel.disable_compile()
    _TURN[key] = out
    return out
