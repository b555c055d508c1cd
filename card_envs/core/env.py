"""``CardEnv``: PettingZoo's ``AECEnv`` implemented once for every game, as a thin adapter over
a :class:`~card_envs.core.game.Game` and its numba kernels.

Two behaviours for a masked-out action, chosen by ``illegal_action``:

* ``"raise"`` (the raw env, ``raw_env()``): :class:`IllegalActionError`, state unchanged.
* ``"lose"`` (``env()``): PettingZoo classic semantics, natively (no wrapper stack): the game
  ends, the offender gets -1 and everyone else 0; ``infos[agent]["illegal_action"]`` is set.

In both, actions outside ``0..N-1``, of a non-integer type, or sent after the game is over
raise :class:`IllegalActionError` (the PettingZoo wrappers assert the same), and calling
``step``/``observe``/``last`` before ``reset`` raises :class:`ResetNeededError`.

Rendering: ``render_mode`` ``"ansi"`` (text), ``"human"`` (the text, printed), ``"svg"`` (an SVG
string) or ``"rgb_array"`` (an ``(H, W, 3)`` uint8 array of the same picture, for video
recording), drawn by the game's picture (``draw`` in ``card_envs/<game>/view.py``, see
:mod:`card_envs.draw`) from ``render_observer``'s point of view (``None``: everything; a
seat or agent name: that seat's view, unknown cards face down; ``"current"``: the seat to act)
in ``render_theme`` (``"light"``, ``"dark"``). ``env.picture(observer, theme)`` draws any view,
and an env shows inline in Jupyter (``_repr_svg_``).

Replays: the env records the reset seed (or the start state) and every applied action;
``env.replay()`` is the game so far as a replay dict (:mod:`card_envs.core.replay`).
"""

from __future__ import annotations

import copy
from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from card_envs import draw
from card_envs.core import kernels as K
from card_envs.core import replay as R
from card_envs.core.errors import CardEnvError, IllegalActionError, NoViewerError, OptionError
from card_envs.core.game import Game, as_generator, seed_to_u64
from card_envs.core.pictures import _theme, theme, viewer

_INT_KINDS = ("i", "u")
_CUR = K.CUR
#: the render modes drawn by the game's viewer
PICTURE_MODES = ("svg", "rgb_array")
RENDER_MODES = ["ansi", "human", *PICTURE_MODES]


class ResetNeededError(CardEnvError, RuntimeError):
    """``step``/``observe``/``render`` was called before ``reset``."""


class GameOverError(CardEnvError, KeyError):
    """``last()`` after every agent has left a finished game (a ``KeyError``, as PettingZoo's
    own ``last()`` raises there, with a message that says to ``reset()``)."""

    def __str__(self) -> str:  # KeyError would print the message in quotes
        return str(self.args[0]) if self.args else ""


def as_action(action: Any, num_actions: int) -> int:
    """``action`` as a Python int in ``0..num_actions-1``; ``ValueError(reason)`` otherwise
    (Python and numpy integers and 0-d/1-element integer arrays are accepted, bools are not)."""
    t = type(action)
    if t is int:
        a = action
    elif isinstance(action, np.integer):
        a = int(action)
    elif (isinstance(action, np.ndarray) and action.shape in ((), (1,))
          and action.dtype.kind in _INT_KINDS):
        a = int(action.reshape(()))
    else:
        raise ValueError(f"actions are integers in 0..{num_actions - 1}, got {t.__name__} "
                         f"{action!r}")
    if not 0 <= a < num_actions:
        raise ValueError(f"action {a} is out of range 0..{num_actions - 1}")
    return a


class CardEnvBase:
    """What the AEC and the Parallel env share: the game, spaces, option checks, seeding,
    rendering and state I/O."""

    metadata: ClassVar[dict[str, Any]]
    _state: np.ndarray | None

    def _init_common(self, game: Game, render_mode: str | None, illegal_action: str,
                     render_observer: int | str | None = None,
                     render_theme: str = "light") -> None:
        self.game = game
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise OptionError(f"render_mode must be one of {self.metadata['render_modes']} "
                              f"or None, got {render_mode!r}")
        if illegal_action not in ("raise", "lose"):
            raise OptionError(f"illegal_action must be 'raise' or 'lose', got {illegal_action!r}")
        self.metadata = {**self.metadata, "name": game.env_id}
        try:  # this game's render modes: the pictures need a viewer
            viewer(type(game))
        except NoViewerError:
            if render_mode in PICTURE_MODES:
                raise
            self.metadata["render_modes"] = [m for m in self.metadata["render_modes"]
                                             if m not in PICTURE_MODES]
        self.render_mode = render_mode
        self.illegal_action = illegal_action
        n, A = game.num_players, game.num_actions
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self._seats = {a: i for i, a in enumerate(self.possible_agents)}
        if not isinstance(render_theme, str):
            raise OptionError(f"render_theme must be one of {sorted(draw.THEMES)}, got "
                              f"{render_theme!r}")
        theme(render_theme)  # OptionError for an unknown name
        self.render_theme = render_theme
        self.render_observer = self._render_observer(render_observer)
        self._replay_seed: int | None = None
        self._replay_start: np.ndarray | None = None
        self._actions: list[int] = []
        self._forfeit_rec: dict[str, list] | None = None
        obs_space = spaces.Dict({
            "observation": spaces.Box(game.obs_low, game.obs_high, (game.obs_size,),
                                      game.obs_dtype),
            "action_mask": spaces.Box(0, 1, (A,), np.int8),
        })
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(A) for a in self.possible_agents}
        self._cfg = game.cfg
        self._k_step, self._k_mask, self._k_obs = game.k_step, game.k_legal_mask, game.k_observe
        self._num_actions = A
        self._obs_size, self._obs_dtype = game.obs_size, game.obs_dtype
        self._state = None

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    @property
    def state_space(self) -> spaces.Box:
        """The space of :meth:`state`: ``Box(int32, (state_size - 2,))``."""
        i32 = np.iinfo(np.int32)
        return spaces.Box(i32.min, i32.max, (self.game.state_size - K.RNG_HI - 1,), np.int32)

    def state(self) -> np.ndarray:
        """The full-information global state, for centralized critics (MAPPO and friends):
        the engine's state array without its RNG words, i.e. ``CUR, PHASE, DONE, STEPS`` and
        every game field, hidden ones included (offsets in ``card_envs/<game>/layout.py``,
        shifted by 2). It is for training critics, never for acting: it shows every hand."""
        if self._state is None:
            raise ResetNeededError("reset() must be called before state()")
        return self._state[K.RNG_HI + 1:].copy()

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def _new_state(self, seed: int | None, options: dict | None) -> np.ndarray:
        """A new deal: from ``seed``, else continuing the RNG of the current state (fresh
        entropy the very first time). ``options`` may not change game options."""
        if options:
            changed = {k: v for k, v in options.items()
                       if k in self.game.options and self.game.options[k] != v}
            if changed:
                raise OptionError(f"game options are fixed when the env is created (e.g. "
                                  f"make({self.game.env_id!r}, num_players=3)); reset() got "
                                  f"options={changed!r}")
        state = np.zeros(self.game.state_size, np.int32)
        if seed is None and self._state is not None:
            state[K.RNG_LO:K.RNG_HI + 1] = self._state[K.RNG_LO:K.RNG_HI + 1]
        else:
            u = seed_to_u64(seed) if seed is not None else \
                np.uint64(np.random.default_rng().integers(0, 2**64, dtype=np.uint64))
            K.rng_seed(state, u)
        self.game.k_init(state, self._cfg)
        return state

    def render(self) -> str | np.ndarray | None:
        """The current state in ``render_mode``: text (``"ansi"``; ``"human"`` prints it), an
        SVG string (``"svg"``) or an ``(H, W, 3)`` uint8 array (``"rgb_array"``); the
        pictures show ``render_observer``'s view in ``render_theme``."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without render_mode; create the env with "
                                  "render_mode='ansi', 'human', 'svg' or 'rgb_array'")
            return None
        if self._state is None:
            raise ResetNeededError("reset() must be called before render()")
        if self.render_mode in PICTURE_MODES:
            svg = self._svg(self.render_observer, self.render_theme)
            return svg if self.render_mode == "svg" else draw.to_rgb_array(svg)
        text = self.game.render(self._state, None)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def _render_observer(self, who: Any) -> int | str | None:
        """``render_observer`` normalized: None, ``"current"`` or a seat; OptionError else."""
        if isinstance(who, str) and who == "current":
            return "current"
        if isinstance(who, (bool, np.bool_)):
            raise OptionError(f"render_observer must be None, 'current', a seat "
                              f"0..{len(self.possible_agents) - 1} or an agent name, got {who!r}")
        try:
            return self._seat_of(who)
        except OptionError as e:
            raise OptionError(f"render_observer: {e} (or None for everything, 'current' for "
                              "the seat to act)") from None

    def _svg(self, observer: int | str | None, theme_name: str | draw.Theme) -> str:
        """The viewer's SVG of the state as ``observer`` (normalized) sees it."""
        if observer == "current":
            cur = int(self.state_array[_CUR])
            observer = None if cur < 0 else cur
        view = self.state_dict(observer)
        return viewer(type(self.game))(view, theme(theme_name))

    def picture(self, observer: int | str | None = None, theme: str = "light"
                ) -> draw.Picture:
        """A :class:`~card_envs.draw.Picture` (SVG inline in Jupyter, ``.png()``,
        ``.rgb_array()``, ``.save(path)``) of the current state as ``observer`` sees it (None:
        everything; a seat or agent name; ``"current"``: the seat to act)."""
        if not isinstance(theme, (str, draw.Theme)):
            raise OptionError(f"theme must be one of {sorted(draw.THEMES)}, got {theme!r}")
        return draw.Picture(self._svg(self._render_observer(observer), _theme(theme)))

    def _repr_svg_(self) -> str | None:
        """Jupyter's inline picture: ``render_observer``'s view in ``render_theme`` (None,
        i.e. the text repr, before ``reset`` or for a game without a viewer)."""
        if self._state is None:
            return None
        try:
            return self._svg(self.render_observer, self.render_theme)
        except NoViewerError:
            return None

    # --- replay recording ----------------------------------------------------------------
    def _record_start(self, seed: int | None, state: np.ndarray) -> None:
        """Start recording a game: from ``seed`` (the deal is its function) or from ``state``."""
        self._replay_seed = None if seed is None else int(seed)
        self._replay_start = None if seed is not None else state.copy()
        self._actions = []
        self._forfeit_rec = None

    def replay(self, players: list[str] | None = None) -> dict[str, Any]:
        """The game since the last reset (or state load) as a replay dict: the seed or the
        start state and every applied action (format: :mod:`card_envs.core.replay`);
        ``players``: optional seat labels (agent specs). Works mid-game too."""
        if self._state is None:
            raise ResetNeededError("reset() must be called before replay()")
        return R.record(self.game, self._replay_seed, self._replay_start, self._actions,
                        self.state_array, self._forfeit_rec, players)

    def close(self) -> None:
        pass

    @property
    def state_array(self) -> np.ndarray:
        """The engine state (a view; copy it before changing it)."""
        if self._state is None:
            raise ResetNeededError("reset() must be called first")
        return self._state

    def state_dict(self, observer: int | str | None = None) -> dict[str, Any]:
        """The full state as a JSON-serializable dict, or only what ``observer`` (seat or agent
        name) knows. Schema: the game's module docstring."""
        return self.game.state_dict(self.state_array, self._seat_of(observer))

    def _seat_of(self, who: int | str | None) -> int | None:
        if who is None:
            return None
        if isinstance(who, str):
            if who not in self._seats:
                raise OptionError(f"unknown agent {who!r}; agents are {self.possible_agents}")
            return self._seats[who]
        if isinstance(who, (int, np.integer)) and 0 <= who < len(self.possible_agents):
            return int(who)
        raise OptionError(f"observer must be a seat 0..{len(self.possible_agents) - 1} or an "
                          f"agent name, got {who!r}")


class CardEnv(CardEnvBase, AECEnv):
    """AEC environment for one game (set ``game_class`` in the subclass)."""

    game_class: ClassVar[type[Game]]
    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": RENDER_MODES,
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(self, render_mode: str | None = None, illegal_action: str = "raise",
                 render_observer: int | str | None = None, render_theme: str = "light",
                 **options: Any) -> None:
        AECEnv.__init__(self)
        self._init_common(self.game_class(**options), render_mode, illegal_action,
                          render_observer, render_theme)
        n, A = self.game.num_players, self.game.num_actions
        self._mask = np.zeros(A, np.int8)
        self._mask_mv = memoryview(self._mask)  # Python-speed reads on the hot path
        self._zero_mask = np.zeros(A, np.int8)
        self._rew = np.zeros(n, np.float32)
        self._over = True
        self._dirty_rewards = False

    # --- PettingZoo API --------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Deal a new game. ``seed`` fixes it; without a seed the RNG carried in the state
        continues (fresh entropy on the very first reset). ``options`` is accepted for
        PettingZoo compatibility; asking it to change a game option raises OptionError."""
        state = self._new_state(seed, options)
        self._set_state(state)
        self._record_start(seed, state)

    def _set_state(self, state: np.ndarray) -> None:
        """Adopt ``state`` and rebuild the PettingZoo bookkeeping from it."""
        self._state = state
        self._state_mv = memoryview(state)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._dirty_rewards = False
        if state[K.DONE]:
            self._over = True
            trunc = state[K.DONE] == K.DONE_TRUNCATED
            self.terminations = {a: not trunc for a in self.agents}
            self.truncations = {a: trunc for a in self.agents}
            self._mask[:] = 0
            self._set_final_infos()
            self.agent_selection = self.agents[0]
        else:
            self._over = False
            self.terminations = {a: False for a in self.agents}
            self._k_mask(state, self._cfg, self._mask)
            self.agent_selection = self.possible_agents[state[K.CUR]]

    def _coerce(self, action: Any) -> int:
        """The action as a Python int in range, or IllegalActionError."""
        try:
            return as_action(action, self._num_actions)
        except ValueError as e:
            raise self._illegal(action, str(e)) from None

    def _illegal(self, action: Any, why: str) -> IllegalActionError:
        phase = self.game.phase_name(self._state)
        legal = np.flatnonzero(self._mask).tolist()
        return IllegalActionError(
            f"{self.game.env_id}: illegal action {action!r} by {self.agent_selection} in phase "
            f"{phase!r}: {why}. Legal actions: {legal}", action, phase, legal)

    def step(self, action: Any) -> None:
        state = self._state
        if state is None:
            raise ResetNeededError("reset() must be called before step()")
        agent = self.agent_selection
        if self._over:
            if not self.agents:
                raise self._illegal(action, "the game is over and every agent has left "
                                    "(env.agents is empty); call reset() to play again")
            if self.terminations.get(agent) or self.truncations.get(agent):
                if action is None:
                    self._was_dead_step(action)
                    return
            raise self._illegal(action, f"the game is over; step(None) for each of "
                                f"{self.agents} (PettingZoo's dead step), or reset()")
        if type(action) is int and 0 <= action < self._num_actions:
            a = action
        else:
            a = self._coerce(action)
        if not self._mask_mv[a]:
            if self.illegal_action == "lose":
                self._forfeit(agent, a)
                return
            raise self._illegal(action, f"{self.game.action_to_str(a)} is not legal now")
        self._cumulative_rewards[agent] = 0.0
        self._actions.append(a)
        status = self._k_step(state, self._cfg, a, self._rew)
        if status:
            if status & K.ST_REWARD:
                for i, ag in enumerate(self.possible_agents):
                    self.rewards[ag] = float(self._rew[i])
                self._dirty_rewards = True
            if status & K.ST_DONE:
                self._over = True
                self._mask[:] = 0
                if status & K.ST_TRUNC:
                    self.truncations = {a: True for a in self.agents}
                else:
                    self.terminations = {a: True for a in self.agents}
                self._set_final_infos()
                seat = self._seats[agent]
                self.agent_selection = self.possible_agents[(seat + 1) % len(self.possible_agents)]
            self._accumulate_rewards()
            if status & K.ST_DONE:
                return
        elif self._dirty_rewards:
            self._clear_rewards()
            self._dirty_rewards = False
        self._k_mask(state, self._cfg, self._mask)
        self.agent_selection = self.possible_agents[self._state_mv[_CUR]]

    def _clear_rewards(self) -> None:
        """PettingZoo's version resets rewards to int 0; keep them floats, as after reset."""
        self.rewards = {a: 0.0 for a in self.rewards}

    def _forfeit(self, agent: str, action: int, warn: bool = True) -> None:
        """PettingZoo classic illegal-move rule: the game ends, offender -1, others 0."""
        if warn:
            gymnasium.logger.warn(f"illegal action {action} by {agent}: game over, {agent} "
                                  "loses")
        self._forfeit_seats([agent])
        self._forfeit_rec = {"agents": [agent], "actions": [int(action)]}

    def _forfeit_seats(self, offenders: list[str]) -> None:
        """End the game by forfeit: every offender -1, the others 0 (one offender: the AEC
        env's own; several: a replayed parallel window, ``illegal_action`` lists them)."""
        self._over = True
        self._mask[:] = 0
        for agent in offenders:
            self._cumulative_rewards[agent] = 0.0
        self.rewards = {a: 0.0 for a in self.agents}
        for agent in offenders:
            self.rewards[agent] = -1.0
        self.terminations = {a: True for a in self.agents}
        who: str | list[str] = offenders[0] if len(offenders) == 1 else list(offenders)
        self.infos = {a: {"illegal_action": who} for a in self.agents}
        self._accumulate_rewards()

    def _set_final_infos(self) -> None:
        points, winners = self.game.outcome(self._state)
        for i, a in enumerate(self.possible_agents):
            if a in self.infos:
                self.infos[a] = {"points": float(points[i]), "winner": bool(winners[i])}

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """PettingZoo's ``last()``, with a clear error once every agent has left the game."""
        if self._state is not None and not self.agents:
            raise GameOverError("the game is over and every agent has left (env.agents is "
                                "empty, agent_iter() has stopped); call reset() to play again")
        return super().last(observe)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        if self._state is None:
            raise ResetNeededError("reset() must be called before observe()")
        obs = np.empty(self._obs_size, self._obs_dtype)
        self._k_obs(self._state, self._cfg, self._seats[agent], obs)
        mask = self._mask.copy() if agent == self.agent_selection else self._zero_mask.copy()
        return {"observation": obs, "action_mask": mask}

    # --- beyond PettingZoo: state I/O, cloning, determinization ----------------------------
    def load_state_dict(self, d: dict[str, Any]) -> None:
        """Restore a state from :meth:`state_dict`. A bad dict raises
        :class:`~card_envs.core.errors.StateDictError` and the current state is kept."""
        state = self.game.load_state_dict(d)
        self._set_state(state)
        self._record_start(None, state)

    def clone(self) -> CardEnv:
        """An independent copy (state, RNG and PettingZoo bookkeeping)."""
        new = copy.copy(self)
        new._state = None if self._state is None else self._state.copy()
        new._state_mv = None if new._state is None else memoryview(new._state)
        new._mask = self._mask.copy()
        new._mask_mv = memoryview(new._mask)
        new._rew = self._rew.copy()
        new._actions = list(self._actions)
        new._forfeit_rec = copy.deepcopy(self._forfeit_rec)
        for name in ("agents",):
            if hasattr(self, name):
                setattr(new, name, list(getattr(self, name)))
        for name in ("rewards", "_cumulative_rewards", "terminations", "truncations"):
            if hasattr(self, name):
                setattr(new, name, dict(getattr(self, name)))
        if hasattr(self, "infos"):
            new.infos = copy.deepcopy(self.infos)
        return new

    def resample(self, observer: int | str,
                 rng: Any = None) -> CardEnv:
        """A clone whose hidden information (everything ``observer`` cannot know, including
        the RNG of future chance) is redrawn at random, consistent with what it knows.
        ``rng``: a numpy Generator, a ``random.Random``, an int seed or None."""
        seat = self._seat_of(observer)
        rng = as_generator(rng)
        state = self.game.resample(self.state_array, seat, rng)
        K.rng_seed(state, np.uint64(rng.integers(0, 2**64, dtype=np.uint64)))
        new = self.clone()
        new._state = state
        new._state_mv = memoryview(state)
        new._record_start(None, state)
        return new

    def legal_actions(self) -> list[int]:
        return np.flatnonzero(self._mask).tolist()

    def action_to_str(self, action: int) -> str:
        return self.game.action_to_str(self._coerce(action))
