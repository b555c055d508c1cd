"""Gymnasium single-agent view of any game: one learning seat, the other seats played by
given policies (fixed agents, or a pool sampled per episode).

>>> from card_envs.rl import SingleAgentEnv
>>> env = SingleAgentEnv("slide_v0", opponents="heuristic", seat="random")
>>> obs, info = env.reset(seed=0)
>>> obs, reward, terminated, truncated, info = env.step(int(env.action_masks().argmax()))

**Rewards reach the learner whoever ends the game.** ``step`` applies the learner's action,
then lets the opponents move until it is the learner's turn again or the game is over, and
returns the *sum* of the learner's rewards over all those moves. So when an opponent's move
ends the game, the final reward is in the return value of the learner's last ``step`` (the
failure of PettingZoo's SB3 tutorial, PettingZoo issue #1147, cannot happen).

Spaces: ``observation_space`` is the game's observation ``Box`` (the AEC env's
``"observation"``), ``action_space`` its ``Discrete``; ``action_masks()`` returns the legal
actions as a bool array (sb3-contrib's MaskablePPO calls it) and ``info["action_mask"]`` holds
them too. ``info`` at the end of an episode has ``points`` and ``winner`` of every seat and
``seat``, the learner's seat.

**Opponents.** ``opponents`` is one policy for every other seat or a list with one per other
seat (in seat order, skipping the learner), or an :class:`OpponentPool` drawn from per
episode. A policy is an agent spec (``"random"``, ``"heuristic"``, ``"mcts:iterations=200"``),
an :class:`card_envs.agents.Agent` (search agents get the true state through ``act_state``), or any
callable ``(observation, action_mask) -> action``.

**Seeds.** ``reset(seed=s)`` seeds the episode stream: deals, seat draws and opponent seeds
all come from ``self.np_random``, so the same seed and actions give the same episodes.
An illegal action raises :class:`~card_envs.core.errors.IllegalActionError` and changes
nothing; stepping a finished episode raises :class:`~card_envs.core.env.ResetNeededError`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium
import numpy as np

from card_envs.core import kernels as K
from card_envs.core.engine import Engine
from card_envs.core.env import ResetNeededError
from card_envs.core.errors import IllegalActionError, OptionError

Policy = Callable[[np.ndarray, np.ndarray], int]


class OpponentPool:
    """Opponent policies to draw from once per episode (``weights`` default uniform). Every
    member is a policy as accepted by :class:`SingleAgentEnv`; ``add`` appends one (e.g. a
    frozen snapshot of the learner, for self-play)."""

    def __init__(self, members: Sequence[Any], weights: Sequence[float] | None = None) -> None:
        if not members:
            raise ValueError("an opponent pool needs at least one member")
        self.members = list(members)
        self.weights = None if weights is None else [float(w) for w in weights]
        if self.weights is not None and len(self.weights) != len(self.members):
            raise ValueError("weights must have one entry per member")

    def add(self, member: Any, weight: float = 1.0) -> None:
        self.members.append(member)
        if self.weights is not None:
            self.weights.append(float(weight))

    def sample(self, rng: np.random.Generator) -> Any:
        if self.weights is None:
            return self.members[int(rng.integers(len(self.members)))]
        p = np.asarray(self.weights, np.float64)
        return self.members[int(rng.choice(len(self.members), p=p / p.sum()))]


def _as_mover(policy: Any, env_id: str, options: dict[str, Any]) -> tuple[Any, Any]:
    """(object to reset per episode or None, mover(state, obs, mask) -> action)."""
    from card_envs.agents.base import Agent
    from card_envs.agents.registry import make_agent

    if isinstance(policy, str):
        policy = make_agent(policy, env_id, **options)
    if isinstance(policy, Agent):
        if policy.needs_state:
            return policy, lambda st, o, m, a=policy: a.act_state(st.copy(), o, m)
        return policy, lambda st, o, m, a=policy: a.act(o, m)
    if callable(policy):
        return None, lambda st, o, m, f=policy: int(f(o, m))
    raise TypeError(f"an opponent is an agent spec, an Agent or a callable (obs, mask) -> "
                    f"action; got {policy!r}")


class SingleAgentEnv(gymnasium.Env):
    """One seat of ``env_id`` as a Gymnasium env (module docstring). ``seat``: an int, or
    ``"random"`` (drawn per episode); ``options``: the game's options.

    ``illegal_action``: what a masked-out action of the learner does. ``"lose"`` (default,
    PettingZoo classic semantics, what Gymnasium's and SB3's ``check_env`` expect of an env
    that accepts any action of its space): the episode ends (``terminated``) with reward -1
    and ``info["illegal_action"] = True``. ``"raise"``: :class:`IllegalActionError`, nothing
    changes. Actions outside the action space raise in both."""

    metadata = {"render_modes": ["ansi", "svg", "rgb_array"], "render_fps": 2}

    def __init__(self, env_id: str, opponents: Any = "random", seat: int | str = 0,
                 render_mode: str | None = None, illegal_action: str = "lose",
                 render_observer: int | str | None = "learner", render_theme: str = "light",
                 **options: Any) -> None:
        if illegal_action not in ("lose", "raise"):
            raise OptionError(f"illegal_action must be 'lose' or 'raise', got {illegal_action!r}")
        self.illegal_action = illegal_action
        self.engine = eng = Engine(env_id, **options)
        self.env_id = env_id
        self.game = g = eng.game
        self.options = dict(options)
        n = self.num_players = g.num_players
        if seat != "random" and not (isinstance(seat, (int, np.integer)) and 0 <= seat < n):
            raise OptionError(f"seat must be a seat in 0..{n - 1} or 'random', got {seat!r}")
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise OptionError(f"render_mode must be None or one of "
                              f"{self.metadata['render_modes']}, got {render_mode!r}")
        if not (render_observer in (None, "learner")
                or isinstance(render_observer, (int, np.integer))
                and 0 <= render_observer < n):
            raise OptionError(f"render_observer must be 'learner' (the learner's view), None "
                              f"(everything) or a seat in 0..{n - 1}, got {render_observer!r}")
        from card_envs.core.pictures import theme

        self.render_observer, self.render_theme = render_observer, theme(render_theme).name
        self.seat_option = seat
        self.render_mode = render_mode
        self.observation_space = gymnasium.spaces.Box(g.obs_low, g.obs_high, dtype=g.obs_dtype)
        self.action_space = gymnasium.spaces.Discrete(g.num_actions)
        self._opponents = opponents
        if isinstance(opponents, (list, tuple)) and len(opponents) != n - 1:
            raise OptionError(f"give one opponent per other seat ({n - 1}), got "
                              f"{len(opponents)}")
        self._built: dict[int, tuple[Any, Any]] = {}
        self.state: np.ndarray | None = None
        self.seat = 0 if seat == "random" else int(seat)
        self._movers: list[Any] = [None] * n
        self._mask = np.zeros(g.num_actions, np.int8)
        self._obs = np.zeros(g.obs_size, g.obs_dtype)
        self._done = True

    # --- opponents ------------------------------------------------------------------------
    def _mover(self, policy: Any) -> tuple[Any, Any]:
        key = id(policy)
        if key not in self._built or self._built[key][0] is not policy:
            self._built[key] = (policy, _as_mover(policy, self.env_id, self.options))
        return self._built[key][1]

    def _choose_opponents(self) -> None:
        n, rng = self.num_players, self.np_random
        spec = self._opponents
        if isinstance(spec, OpponentPool):
            spec = spec.sample(rng)
        per_seat = list(spec) if isinstance(spec, (list, tuple)) else [spec] * (n - 1)
        others = [q for q in range(n) if q != self.seat]
        used = set()
        for q, pol in zip(others, per_seat):
            obj, mover = self._mover(pol)
            if obj is not None and id(obj) not in used:
                obj.reset(seed=int(rng.integers(2**31)))
                used.add(id(obj))
            self._movers[q] = mover
        self._movers[self.seat] = None

    # --- gymnasium API --------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        rng = self.np_random
        for _ in range(100):
            if self.seat_option == "random":
                self.seat = int(rng.integers(self.num_players))
            self._choose_opponents()
            self.state = self.engine.new_state(int(rng.integers(2**62)))
            self._done = False
            reward, info = self._play_opponents()
            if not self._done:
                return self._observe(), info
        raise RuntimeError("100 deals in a row ended before the learner's first move")

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self.state is None or self._done:
            raise ResetNeededError("the episode is over (or never started): call reset()")
        from card_envs.core.env import as_action

        self.engine.legal_mask(self.state, self._mask)
        phase = self.game.phase_name(self.state)
        try:
            a = as_action(action, self.game.num_actions)
        except ValueError as e:
            raise IllegalActionError(f"{e}; legal: {np.flatnonzero(self._mask).tolist()}",
                                     action, phase, np.flatnonzero(self._mask).tolist()) from None
        if not self._mask[a]:
            legal = np.flatnonzero(self._mask).tolist()
            if self.illegal_action == "lose":  # PettingZoo classic: the offender loses
                self._done = True
                self._mask[:] = 0
                info = {"seat": self.seat, "illegal_action": True, "legal": legal,
                        "action_mask": self._mask.copy()}
                return self._observe(), -1.0, True, False, info
            raise IllegalActionError(f"illegal action {action!r} in phase {phase!r}; legal: "
                                     f"{legal}", action, phase, legal)
        reward = float(self.engine.step(self.state, a)[self.seat])
        more, info = self._play_opponents()
        obs = self._observe()
        if self.render_mode == "ansi":
            info["render"] = self.render()
        terminated = bool(self.state[K.DONE] == K.DONE_TERMINATED)
        truncated = bool(self.state[K.DONE] == K.DONE_TRUNCATED)
        return obs, reward + more, terminated, truncated, info

    def _play_opponents(self) -> tuple[float, dict[str, Any]]:
        """Opponents move until the learner is to act or the game is over; returns the
        learner's rewards meanwhile and the step's info."""
        st, eng, seat = self.state, self.engine, self.seat
        total = 0.0
        while not st[K.DONE] and st[K.CUR] != seat:
            q = int(st[K.CUR])
            eng.legal_mask(st, self._mask)
            obs = eng.observe(st, q)
            a = self._movers[q](st, obs, self._mask)
            if not (0 <= a < self.game.num_actions and self._mask[a]):
                raise IllegalActionError(f"opponent at seat {q} chose illegal action {a}", a,
                                         self.game.phase_name(st),
                                         np.flatnonzero(self._mask).tolist())
            total += float(eng.step(st, a)[seat])
        info: dict[str, Any] = {"seat": seat}
        if st[K.DONE]:
            self._done = True
            points, winners = eng.outcome(st)
            info["points"] = points.tolist()
            info["winner"] = [bool(w) for w in winners]
            self._mask[:] = 0
        else:
            eng.legal_mask(st, self._mask)
        info["action_mask"] = self._mask.copy()
        return total, info

    def _observe(self) -> np.ndarray:
        return self.engine.observe(self.state, self.seat, self._obs).copy()

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions (bool; all False once the episode is over)."""
        if self.state is None:
            raise ResetNeededError("reset() must be called first")
        return self._mask.astype(bool)

    def render(self) -> str | np.ndarray | None:
        """``"ansi"``: the full-view text; ``"svg"``: the picture of ``render_observer``'s view
        (default the learner's: cards it cannot see face down); ``"rgb_array"``: that picture
        as an ``(H, W, 3)`` uint8 array (Gymnasium's ``RecordVideo``)."""
        if self.state is None:
            raise ResetNeededError("reset() must be called first")
        if self.render_mode in ("svg", "rgb_array"):
            from card_envs import draw
            from card_envs.core.pictures import theme, viewer

            who = self.seat if self.render_observer == "learner" else self.render_observer
            view = self.game.state_dict(self.state, None if who is None else int(who))
            svg = viewer(type(self.game))(view, theme(self.render_theme))
            return svg if self.render_mode == "svg" else draw.to_rgb_array(svg)
        return self.game.render(self.state, None)

    def close(self) -> None:
        self.state = None
