"""``ParallelCardEnv``: a PettingZoo ``ParallelEnv`` over a game whose decisions come in
simultaneous *windows* (every live seat chooses once, hidden from the others, then the window
resolves), e.g. Op Glad IJs's reaction windows.

One ``step(actions)`` is one window: every live agent's action, applied through the game's
``step`` kernel in the order the kernel asks for them (``state[CUR]``), exactly as the AEC env
applies them one per ``step``; then observations, rewards (summed over the window's kernel
steps), terminations, truncations and infos for every agent live at that step. A game joins by
exposing ``parallel_env`` on its env class (see ``OpGladIJsEnv.parallel_env``).

Requirement on the game: within a window each seat acts exactly once and its legal actions do
not depend on the choices of the others in the same window (they are hidden), so every seat's
mask is the one the kernel gives at the window start with ``CUR`` set to that seat.

Bad input (same rules as the AEC env): a non-dict, a missing or unknown agent, a non-integer or
out-of-range action, or a step after the end raises ``IllegalActionError`` and changes nothing.
A masked-out action raises too with ``illegal_action="raise"``; with ``"lose"`` (the default,
PettingZoo classic semantics, like ``env()``) the game ends, every offender gets -1 and the
others 0, and ``infos[agent]["illegal_action"]`` lists the offenders.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium
import numpy as np
from pettingzoo import ParallelEnv

from card_envs.core import kernels as K
from card_envs.core.env import RENDER_MODES, CardEnvBase, ResetNeededError, as_action
from card_envs.core.errors import IllegalActionError, StateDictError
from card_envs.core.game import Game


class ParallelCardEnv(CardEnvBase, ParallelEnv):
    """Parallel (one step per window) environment for one configuration of ``game_class``."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": RENDER_MODES,
        "is_parallelizable": True,
        "render_fps": 1,
    }

    def __init__(self, game_class: type[Game], render_mode: str | None = None,
                 illegal_action: str = "lose", render_observer: int | str | None = None,
                 render_theme: str = "light", **options: Any) -> None:
        self._init_common(game_class(**options), render_mode, illegal_action,
                          render_observer, render_theme)
        self.agents: list[str] = []
        self._A = self._num_actions
        self._rew = np.zeros(self.game.num_players, np.float32)
        self._masks = np.zeros((self.game.num_players, self._A), np.int8)

    # --- PettingZoo API --------------------------------------------------------------------
    def reset(self, seed: int | None = None,
              options: dict | None = None) -> tuple[dict[str, Any], dict[str, dict]]:
        """Deal a new game (same deal as the AEC env's ``reset(seed)``)."""
        state = self._new_state(seed, options)
        self._state = state
        self.agents = self.possible_agents[:]
        self._window_masks()
        self._record_start(seed, state)
        return self._observations(self.agents), {a: {} for a in self.agents}

    def _window_masks(self) -> None:
        """Every seat's mask at the start of the current window."""
        s = self._state.copy()
        for i in range(len(self.possible_agents)):
            s[K.CUR] = i
            self._k_mask(s, self._cfg, self._masks[i])

    def _observations(self, agents: list[str]) -> dict[str, dict[str, np.ndarray]]:
        out = {}
        for a in agents:
            obs = np.empty(self.game.obs_size, self.game.obs_dtype)
            i = self._seats[a]
            self._k_obs(self._state, self._cfg, i, obs)
            out[a] = {"observation": obs, "action_mask": self._masks[i].copy()}
        return out

    def _coerce(self, agent: str, action: Any) -> int:
        try:
            return as_action(action, self._A)
        except ValueError as e:
            raise self._illegal(agent, action, str(e)) from None

    def _illegal(self, agent: str | None, action: Any, why: str) -> IllegalActionError:
        phase = self.game.phase_name(self._state)
        legal = np.flatnonzero(self._masks[self._seats[agent]]).tolist() \
            if agent in self._seats else []
        return IllegalActionError(f"{self.game.env_id}: illegal action {action!r} by {agent} "
                                  f"in phase {phase!r}: {why}. Legal actions: {legal}",
                                  action, phase, legal)

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        if self._state is None:
            raise ResetNeededError("reset() must be called before step()")
        if not self.agents:
            raise self._illegal(None, actions, "the game is over; call reset()")
        if not isinstance(actions, dict):
            raise self._illegal(None, actions, "actions must be a dict agent -> action")
        missing = [a for a in self.agents if a not in actions]
        extra = [a for a in actions if a not in self.agents]
        if missing or extra:
            raise self._illegal(None, actions, f"every live agent acts in every window; "
                                               f"missing {missing}, unknown {extra}")
        acts = {self._seats[a]: self._coerce(a, actions[a]) for a in self.agents}
        bad = [s for s, a in acts.items() if not self._masks[s, a]]
        live = self.agents
        if bad:
            if self.illegal_action == "raise":
                s = bad[0]
                raise self._illegal(self.possible_agents[s], acts[s],
                                    f"{self.game.action_to_str(acts[s])} is not legal now")
            self._forfeit_rec = {"agents": [self.possible_agents[s] for s in bad],
                                 "actions": [acts[s] for s in bad]}
            return self._forfeit([self.possible_agents[s] for s in bad])
        state = self._state
        total = np.zeros(len(self.possible_agents), np.float64)
        acted: set[int] = set()
        status = 0
        while len(acted) < len(acts):
            seat = int(state[K.CUR])
            if seat in acted or seat not in acts:
                raise RuntimeError(f"{self.game.env_id}: the kernel asked seat {seat} twice in "
                                   f"one window; this game has no simultaneous windows")
            self._actions.append(acts[seat])  # the replay: kernel (AEC) order
            status = self._k_step(state, self._cfg, acts[seat], self._rew)
            acted.add(seat)
            if status & K.ST_REWARD:
                total += self._rew
            if status & K.ST_DONE:
                break
        rewards = {a: float(total[self._seats[a]]) for a in live}
        done = bool(status & K.ST_DONE)
        trunc = bool(status & K.ST_TRUNC)
        if done:
            self._masks[:] = 0
        else:
            self._window_masks()
        obs = self._observations(live)
        terms = {a: done and not trunc for a in live}
        truncs = {a: done and trunc for a in live}
        infos: dict[str, dict] = {a: {} for a in live}
        if done:
            points, winners = self.game.outcome(state)
            for a in live:
                i = self._seats[a]
                infos[a] = {"points": float(points[i]), "winner": bool(winners[i])}
            self.agents = []
        return obs, rewards, terms, truncs, infos

    def _forfeit(self, offenders: list[str]) -> tuple[dict, dict, dict, dict, dict]:
        gymnasium.logger.warn(f"illegal action by {offenders}: game over, they lose")
        live = self.agents
        self._masks[:] = 0
        obs = self._observations(live)
        rewards = {a: (-1.0 if a in offenders else 0.0) for a in live}
        terms = {a: True for a in live}
        truncs = {a: False for a in live}
        infos = {a: {"illegal_action": list(offenders)} for a in live}
        self.agents = []
        return obs, rewards, terms, truncs, infos

    # --- state I/O (as the AEC env) --------------------------------------------------------
    def load_state_dict(self, d: dict[str, Any]) -> None:
        """Restore a state saved at a window start (``current_player`` 0 or the end)."""
        state = self.game.load_state_dict(d)
        cur = int(state[K.CUR])
        if cur > 0:
            raise StateDictError("the parallel env can only load a state at a window start")
        self._state = state
        self._record_start(None, state)
        if state[K.DONE]:
            self.agents = []
            self._masks[:] = 0
        else:
            self.agents = self.possible_agents[:]
            self._window_masks()
