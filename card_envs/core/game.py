"""The engine protocol: what a game declares up front, once, for every layer above it.

A game is a subclass of :class:`Game` plus a ``rules`` module of numba kernels over one 1-D
``int32`` state array (shared header in :mod:`card_envs.core.kernels`, game fields after it):

==========================================  ================================================
kernel                                      contract
==========================================  ================================================
``init(state, cfg)``                        deal a new game from the RNG in the header
``step(state, cfg, action, rewards) -> int`` apply a *legal* action; returns ``ST_*`` bits and
                                            writes ``rewards[:n]`` when ``ST_REWARD`` is set;
                                            at the end it sets ``state[DONE]`` (terminated or
                                            truncated) and ``state[CUR] = -1``
``legal_mask(state, cfg, mask)``            int8 mask of the seat to act (zeros at the end)
``observe(state, cfg, seat, obs)``          ``seat``'s observation, only what it knows
``outcome(state, cfg, points, winners)``    final points per seat and the winners
==========================================  ================================================

``cfg`` is the int32 config array built from the options (shared header
``C_PLAYERS, C_REWARD, C_START``, then game-specific entries). Everything above the kernels
(AEC env, batched driver, raw engine, search) is written once, against this protocol.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any, ClassVar

import numpy as np

from card_envs.core import kernels as K
from card_envs.core.checks import check_nesting, int_in, is_int, short_repr
from card_envs.core.errors import OptionError, StateDictError

HEADER_KEYS = ("game", "version", "options", "phase", "current_player", "steps", "truncated",
               "rng")

#: bounds on a state dict, checked before anything else reads it. The largest real state
#: dicts (random play of every game and variant at the most players; If It Fits with a
#: 21 x 21 table and a 125-card custom deck in its options) nest 6 levels deep and hold about
#: 3,100 values (containers, keys and entries; a full 21 x 21 table would add about 2,200).
STATE_MAX_DEPTH = 32
STATE_MAX_ITEMS = 100_000


@dataclass(frozen=True)
class Option:
    """One environment option: its default and a checker that returns the normalized value
    or raises :class:`OptionError`."""

    default: Any
    doc: str
    check: Callable[[Any, Mapping[str, Any]], Any] | None = None
    #: the option may name a file to read (If It Fits' ``deck``): from an untrusted source
    #: (a replay file, a browser) it must be given as data, see :func:`check_untrusted_options`
    reads_files: bool = False


def seed_to_u64(seed: int) -> np.uint64:
    """Map a non-negative integer seed to the 64-bit state of the in-state RNG (a splitmix64
    finalizer of the seed, so nearby seeds give unrelated games)."""
    if not is_int(seed) or seed < 0:
        raise OptionError(f"seed must be a non-negative integer, got {short_repr(seed)}")
    z = (int(seed) * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) % 2**64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % 2**64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % 2**64
    return np.uint64(z ^ (z >> 31))


def as_generator(rng: Any) -> np.random.Generator:
    """A numpy Generator from the usual seed forms: a Generator (used as is), ``None`` (fresh
    entropy), a non-negative int, a numpy ``SeedSequence`` / ``BitGenerator``, or a
    :class:`random.Random` (one draw from it seeds the Generator); ``OptionError`` otherwise."""
    import random

    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, random.Random):
        return np.random.default_rng(rng.getrandbits(128))
    if rng is None or (is_int(rng) and rng >= 0) or \
            isinstance(rng, (np.random.SeedSequence, np.random.BitGenerator)):
        return np.random.default_rng(rng)
    raise OptionError("rng must be a numpy Generator, a random.Random, a non-negative int seed, "
                      f"a SeedSequence or None, got {type(rng).__name__} {short_repr(rng)}")


def bool_option(env_id: str, name: str) -> Callable[[Any, Mapping[str, Any]], bool]:
    """An ``Option`` checker accepting only bools (numpy bools too)."""
    def check(v: Any, _: Mapping[str, Any]) -> bool:
        if not isinstance(v, (bool, np.bool_)):
            raise OptionError(f"{env_id}: {name} must be a bool, got {short_repr(v)}")
        return bool(v)
    return check


class Game:
    """Specification of one game configuration: validated options, sizes, kernels and the
    Python-side codecs (state dict, action names, rendering, determinization).

    A game folder's ``game.py`` subclasses it, sets the class attributes, names the folder's
    contract modules (:mod:`card_envs.core.contract`) and implements ``configure`` and
    ``action_to_str``. Everything else is dispatched here, once for every game:

    ================  ============================================================
    ``rules``         kernels ``init``, ``step``, ``legal_mask``, ``outcome``
    ``observe``       kernel ``observe``; ``obs_bounds(game) -> (low, high)``
    ``statedict``     ``fields_to_dict(game, state, observer)``,
                      ``fields_from_dict(game, state, d)``, ``check_state(game, state)``,
                      ``resample(game, state, observer, rng)``; optionally the kernel
                      ``determinize(state, cfg, observer, out, rng)`` (its compiled twin)
    ``view``          ``render(game, state, observer) -> str`` (text),
                      ``draw(view, theme) -> str`` (SVG of a state dict)
    ================  ============================================================
    """

    name: ClassVar[str]
    env_id: ClassVar[str]
    version: ClassVar[str] = "0"
    rules: ClassVar[ModuleType]
    observe: ClassVar[ModuleType | None] = None
    statedict: ClassVar[ModuleType | None] = None
    view: ClassVar[ModuleType | None] = None
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 2
    default_players: ClassVar[int] = 2
    phases: ClassVar[tuple[str, ...]]
    reward_modes: ClassVar[tuple[str, ...]] = ("win", "points")
    obs_dtype: ClassVar[type] = np.int8
    extra_options: ClassVar[dict[str, Option]] = {}
    perfect_information: ClassVar[bool] = False
    #: which way ``outcome``'s points go, in words (the arena prints it with mean points)
    points_order: ClassVar[str] = "higher is better"
    #: where the winners' points lie: +1 the highest, -1 the lowest; both where it depends on
    #: the game (Flipology's Moon); checked by the stress tests
    winner_points: ClassVar[tuple[int, ...]] = (1,)

    num_actions: int
    obs_size: int
    state_size: int

    def __init__(self, **options: Any) -> None:
        self.options = self._validate(options)
        self._state_keys: frozenset[str] | None = None
        self.num_players = int(self.options["num_players"])
        cfg = np.zeros(K.C_HEADER + 8, np.int32)
        cfg[K.C_PLAYERS] = self.num_players
        cfg[K.C_REWARD] = self.reward_modes.index(self.options["reward_mode"])
        start = self.options["start_player"]
        cfg[K.C_START] = -1 if start == "random" else int(start)
        extended = self.configure(cfg)
        self.cfg = cfg if extended is None else np.ascontiguousarray(extended, np.int32)
        r = self.rules
        self.k_init, self.k_step = r.init, r.step
        self.k_legal_mask, self.k_outcome = r.legal_mask, r.outcome
        self.k_observe = (self.observe or r).observe
        #: the compiled twin of ``resample``, ``determinize(state, cfg, observer, out, rng)``,
        #: where the game has one (``statedict.determinize``), else None
        self.k_determinize = getattr(self.statedict, "determinize", None)
        low, high = self.obs_bounds()
        self.obs_low = np.asarray(low, self.obs_dtype)
        self.obs_high = np.asarray(high, self.obs_dtype)
        assert self.obs_low.shape == (self.obs_size,) == self.obs_high.shape

    # --- options -------------------------------------------------------------------------
    @classmethod
    def option_specs(cls) -> dict[str, Option]:
        """All options of this game: the shared ones, then the game's own."""
        def players(v: Any, _: Mapping[str, Any]) -> int:
            if not is_int(v) or not cls.min_players <= v <= cls.max_players:
                raise OptionError(f"{cls.env_id}: num_players must be an integer in "
                                  f"{cls.min_players}..{cls.max_players}, "
                                  f"got {short_repr(v)}")
            return int(v)

        def start(v: Any, opts: Mapping[str, Any]) -> int | str:
            if isinstance(v, str) and v == "random":
                return "random"
            n = opts["num_players"]
            if not is_int(v) or not 0 <= v < n:
                raise OptionError(f"{cls.env_id}: start_player must be a seat in 0..{n - 1} "
                                  f"or 'random', got {short_repr(v)}")
            return int(v)

        def reward(v: Any, _: Mapping[str, Any]) -> str:
            if not isinstance(v, str) or v not in cls.reward_modes:
                raise OptionError(f"{cls.env_id}: reward_mode must be one of "
                                  f"{list(cls.reward_modes)}, got {short_repr(v)}")
            return str(v)

        specs = {
            "num_players": Option(cls.default_players,
                                  f"number of seats, {cls.min_players}-{cls.max_players}",
                                  players),
            "start_player": Option(0, "seat holding the start, or 'random' (seeded)", start),
            "reward_mode": Option("win", f"one of {list(cls.reward_modes)}", reward),
        }
        specs.update(cls.extra_options)
        return specs

    @classmethod
    def _validate(cls, options: Mapping[str, Any]) -> dict[str, Any]:
        specs = cls.option_specs()
        unknown = sorted(set(options) - set(specs), key=repr)
        if unknown:
            raise OptionError(f"{cls.env_id}: unknown option(s) {unknown}; "
                              f"valid options are {sorted(specs)}")
        out: dict[str, Any] = {}
        for name, spec in specs.items():
            value = options.get(name, spec.default)
            out[name] = spec.check(value, out) if spec.check else value
        return out

    def configure(self, cfg: np.ndarray) -> np.ndarray | None:
        """Set sizes (``num_actions``, ``obs_size``, ``state_size``) and game-specific config
        entries (``cfg[C_HEADER:C_HEADER + 8]``). To carry more (e.g. a deck table for the
        kernels), return a longer int32 array that starts with ``cfg``."""
        raise NotImplementedError

    def obs_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-entry lower and upper bounds of the observation vector."""
        return self._module("observe").obs_bounds(self)

    def _module(self, name: str) -> ModuleType:
        module = getattr(type(self), name)
        if module is None:
            raise NotImplementedError(f"{type(self).__name__} names no {name!r} module "
                                      "(see card_envs.core.contract)")
        return module

    # --- state ---------------------------------------------------------------------------
    def new_state(self, seed: int | np.uint64) -> np.ndarray:
        """A freshly dealt state whose chance comes from ``seed``."""
        state = np.zeros(self.state_size, np.int32)
        u = seed if isinstance(seed, np.uint64) else seed_to_u64(seed)
        K.rng_seed(state, u)
        self.k_init(state, self.cfg)
        return state

    def phase_name(self, state: np.ndarray) -> str:
        return self.phases[int(state[K.PHASE])]

    def state_dict(self, state: np.ndarray, observer: int | None = None) -> dict[str, Any]:
        """JSON-serializable dict of the state (``observer``: only what that seat knows)."""
        cur = int(state[K.CUR])
        d: dict[str, Any] = {
            "game": self.name,
            "version": self.version,
            "options": dict(self.options),
            "phase": self.phase_name(state),
            "current_player": None if cur < 0 else cur,
            "steps": int(state[K.STEPS]),
            "truncated": bool(state[K.DONE] == K.DONE_TRUNCATED),
        }
        if observer is None:
            d["rng"] = [int(state[K.RNG_LO]), int(state[K.RNG_HI])]
        else:
            d["observer"] = int(observer)
        fields = self.fields_to_dict(state, observer)
        clash = set(fields) & set(d)
        if clash:
            raise AssertionError(f"{self.name}: game fields {sorted(clash)} clash with the "
                                 "shared state-dict header")
        d.update(fields)
        return d

    def state_keys(self) -> frozenset[str]:
        """The keys of this game's full state dict (shared header and game fields)."""
        if self._state_keys is None:
            fields = self.fields_to_dict(self.new_state(0), None)
            self._state_keys = frozenset(HEADER_KEYS) | frozenset(fields)
        return self._state_keys

    def load_state_dict(self, d: Mapping[str, Any]) -> np.ndarray:
        """Build and validate a state from :meth:`state_dict` output; raises
        :class:`StateDictError` (never returns a half-loaded state).

        Every value is type- and range-checked before it is converted or reaches a kernel;
        missing keys and unknown keys (typos) are named."""
        if not isinstance(d, Mapping):
            raise StateDictError(f"state dict must be a mapping, got {type(d).__name__}")
        check_nesting(d, STATE_MAX_DEPTH, STATE_MAX_ITEMS, "state dict")
        try:
            game = d.get("game")
            if not isinstance(game, str) or game != self.name:
                raise StateDictError(f"state dict is for game {short_repr(game)}, not "
                                     f"{self.name!r}")
            version = d.get("version")
            if not isinstance(version, str) or version != self.version:
                raise StateDictError(f"state dict version {short_repr(version)} != "
                                     f"{self.version!r}")
            if "observer" in d:
                raise StateDictError("an observer's state dict hides information and cannot "
                                     "be loaded; use state_dict() without observer")
            keys = self.state_keys()
            missing = sorted(keys - {"truncated"} - set(d))
            unknown = sorted(map(short_repr, set(d) - keys))
            if len(unknown) > 10:
                unknown = unknown[:10] + [f"... ({len(unknown) - 10} more)"]
            if missing or unknown:
                raise StateDictError(
                    f"{self.name} state dict: " +
                    (f"missing key(s) {missing}" if missing else "") +
                    ("; " if missing and unknown else "") +
                    (f"unknown key(s) {', '.join(unknown)}" if unknown else "") +
                    f"; the keys are {sorted(keys)}")
            try:
                check_untrusted_options(type(self), d["options"])
                opts = self._validate(d["options"])
            except OptionError as e:
                raise StateDictError(f"state dict options: {e}") from e
            if opts != self.options:
                diff = "; ".join(f"{k}: {short_repr(opts[k])} (the env has "
                                 f"{short_repr(self.options[k])})"
                                 for k in opts if opts[k] != self.options[k])
                raise StateDictError(f"state dict options differ from this env's: {diff}; "
                                     "create the env with those options")
            state = np.zeros(self.state_size, np.int32)
            rng = d["rng"]
            if not isinstance(rng, (list, tuple)) or len(rng) != 2:
                raise StateDictError(f"rng must be a list of two int32 words, got "
                                     f"{short_repr(rng)}")
            state[K.RNG_LO] = int_in(rng[0], -2**31, 2**31 - 1, "rng word")
            state[K.RNG_HI] = int_in(rng[1], -2**31, 2**31 - 1, "rng word")
            phase = d["phase"]
            if not isinstance(phase, str) or phase not in self.phases:
                raise StateDictError(f"unknown phase {short_repr(phase)}; phases are "
                                     f"{list(self.phases)}")
            state[K.PHASE] = self.phases.index(phase)
            cur = d["current_player"]
            state[K.CUR] = -1 if cur is None else \
                int_in(cur, 0, self.num_players - 1, "current_player (null at the end)")
            truncated = d.get("truncated", False)
            if not isinstance(truncated, bool) or (truncated and cur is not None):
                raise StateDictError("truncated must be a bool, true only for a finished game")
            if cur is not None:
                state[K.DONE] = 0
            else:
                state[K.DONE] = K.DONE_TRUNCATED if truncated else K.DONE_TERMINATED
            # any int32: the kernels' action counter wraps around like one, and every state
            # they reach from a loaded one must load again
            state[K.STEPS] = int_in(d["steps"], -2**31, 2**31 - 1, "steps")
            self.fields_from_dict(state, d)
            self.check_state(state)
            if not state[K.DONE] and not self.legal_actions(state):
                raise StateDictError(f"{self.name} state dict: {self.phase_name(state)!r} "
                                     f"position where seat {int(state[K.CUR])} has no legal "
                                     "action")
        except StateDictError:
            raise
        except (KeyError, TypeError, ValueError, IndexError, AssertionError, OverflowError,
                AttributeError) as e:  # a safety net: the codecs check before they convert
            raise StateDictError(f"invalid {self.name} state dict: {type(e).__name__}: {e}") \
                from e
        return state

    def legal_actions(self, state: np.ndarray) -> list[int]:
        mask = np.zeros(self.num_actions, np.int8)
        self.k_legal_mask(state, self.cfg, mask)
        return np.flatnonzero(mask).tolist()

    def outcome(self, state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Final (points, winners) arrays of a finished state."""
        n = self.num_players
        points = np.zeros(n, np.float64)
        winners = np.zeros(n, np.int64)
        self.k_outcome(state, self.cfg, points, winners)
        return points, winners

    # --- hooks ---------------------------------------------------------------------------
    def max_length(self) -> int | None:
        """An upper bound on the number of actions in one game of this configuration (a
        whole series where the game is a series), from the rules; None if unknown."""
        return None

    def fields_to_dict(self, state: np.ndarray, observer: int | None) -> dict[str, Any]:
        """The game's own state-dict fields (``observer``: only what that seat knows)."""
        return self._module("statedict").fields_to_dict(self, state, observer)

    def fields_from_dict(self, state: np.ndarray, d: Mapping[str, Any]) -> None:
        """Write the game's fields of a checked state dict into ``state``."""
        self._module("statedict").fields_from_dict(self, state, d)

    def check_state(self, state: np.ndarray) -> None:
        """Raise :class:`StateDictError` if ``state`` is not a reachable-looking position
        (cards conserved, phase fields consistent). Also the fuzz tests' invariant check."""
        self._module("statedict").check_state(self, state)

    def action_to_str(self, action: int) -> str:
        raise NotImplementedError

    def render(self, state: np.ndarray, observer: int | None = None) -> str:
        """ANSI text of the state (``observer``: that seat's view, hidden cards ``?``)."""
        return self._module("view").render(self, state, observer)

    def resample(self, state: np.ndarray, observer: int,
                 rng: np.random.Generator) -> np.ndarray:
        """A full state consistent with everything ``observer`` knows, drawn at random."""
        if self.perfect_information:
            return state.copy()
        return self._module("statedict").resample(self, state, observer, rng)


def check_untrusted_options(env_id_or_game_class: str | type[Game],
                            options: Mapping[str, Any]) -> None:
    """Raise :class:`OptionError` unless ``options`` may be taken from an untrusted source (a
    file, a browser): a mapping with string keys, each an option of the game (an env id, a
    game name or a :class:`Game` subclass), and every option that can read a file
    (``Option.reads_files``, e.g. If It Fits' ``deck``) given as data, not as a path. The
    values are checked when the env is made; this never touches the file system."""
    if isinstance(env_id_or_game_class, type) and issubclass(env_id_or_game_class, Game):
        cls = env_id_or_game_class
    else:
        from card_envs.core import registry  # registry imports the games, which import this

        cls = registry.env_class(env_id_or_game_class).game_class
    if not isinstance(options, Mapping):
        raise OptionError(f"{cls.env_id}: options must be a mapping of option names to values, "
                          f"got {type(options).__name__}")
    specs = cls.option_specs()
    for name in options:
        if not isinstance(name, str):
            raise OptionError(f"{cls.env_id}: option names are strings, got "
                              f"{short_repr(name)}")
    unknown = sorted(set(options) - set(specs))
    if unknown:
        shown = [short_repr(u, 40) for u in unknown[:10]]
        more = f" and {len(unknown) - 10} more" if len(unknown) > 10 else ""
        raise OptionError(f"{cls.env_id}: unknown option(s) [{', '.join(shown)}]{more}; "
                          f"valid options are {sorted(specs)}")
    for name, spec in specs.items():
        if spec.reads_files and isinstance(options.get(name), (str, bytes, os.PathLike)):
            raise OptionError(f"{cls.env_id}: the {name} option must be given as data here, "
                              "not as a file path")
