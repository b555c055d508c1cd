"""Any game as an RLlib ``MultiAgentEnv`` for turn-based play (:class:`RLlibCardEnv`).

**Turns.** Only the seat to act is in the observation dict of ``reset`` and ``step`` (its
``"observation"`` and its ``"action_mask"``, int8, 1 = legal: the AEC env's ``observe``), and
``step`` takes exactly that seat's action. **Rewards reach every seat**: every ``step``
returns a reward for every seat (the engine's rewards of that move, 0.0 for the others), so
the reward that an opponent's game-ending move pays reaches each seat; RLlib's
``MultiAgentEpisode`` adds the rewards paid while a seat waits to its next step. When the game
ends, every seat gets its final observation (mask all 0), ``terminateds``/``truncateds`` for
every seat and ``"__all__"``, and ``infos[seat]`` with ``points``, ``winner``, ``seat`` and
``replay`` (``{"seed", "actions"}``: the deal's reset seed and every action, in order, which
replay the game in the AEC env).

**Illegal actions.** ``illegal_action="lose"`` (the default, PettingZoo classic semantics,
what RLlib's env check expects of an env that accepts any action of its space: it steps a
random one): the game ends, the offender gets -1 and the others 0, ``infos[seat]
["illegal_action"]`` names it. ``"raise"``: :class:`~card_envs.core.errors.IllegalActionError`
and nothing changes (what :func:`~card_envs.rl.rllib.config.ppo_config` trains with, so a
masking bug cannot go unseen; RLlib's env check is then skipped). Actions outside the action
space, or for a seat that is not to act, raise in both.

**Shaping** (``shaping=c``, off by default): the game's potential (manifest
``train.potential``, as :class:`~card_envs.rl.sb3.shaping.PotentialShaping`) from each seat's own
observations: at each of its observations a seat gets ``c (gamma phi(o') - phi(o))`` on top,
``phi = 0`` after the end.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np

from card_envs.core import kernels as K
from card_envs.core.engine import Engine
from card_envs.core.env import as_action
from card_envs.core.errors import IllegalActionError, OptionError
from card_envs.core.manifest import load
from card_envs.core.registry import manifest, resolve_env_id

try:
    from ray.rllib.env.multi_agent_env import MultiAgentEnv
except ImportError:  # the rllib extra is missing: the names below raise on use
    MultiAgentEnv = object  # type: ignore[assignment,misc]
    _RAY_ERROR: ImportError | None = ImportError(
        "card_envs.rl.rllib needs the rllib extra: pip install 'card-envs[rllib]' "
        "(ray[rllib] and torch)")
else:
    _RAY_ERROR = None

__all__ = ["RLlibCardEnv", "require_ray"]


def require_ray() -> None:
    """Raise a clear ImportError naming the ``rllib`` extra when ray[rllib] is missing."""
    if _RAY_ERROR is not None:
        raise ImportError(str(_RAY_ERROR))


class RLlibCardEnv(MultiAgentEnv):
    """One game of ``config["env_id"]`` as an RLlib ``MultiAgentEnv`` (module docstring).

    ``config``: ``env_id`` (required), ``options`` (the game's options, dict),
    ``illegal_action`` (``"lose"`` or ``"raise"``), ``shaping`` (float, 0 = off) and
    ``gamma`` (the shaping's discount, default 0.99). RLlib passes its ``env_config``."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        require_ray()
        config = dict(config or {})
        if "env_id" not in config:
            raise OptionError("RLlibCardEnv needs config['env_id'], e.g. {'env_id': 'slide_v0'}")
        self.env_id = resolve_env_id(config.pop("env_id"))
        options = dict(config.pop("options", None) or {})
        self.illegal_action = config.pop("illegal_action", "lose")
        if self.illegal_action not in ("lose", "raise"):
            raise OptionError(f"illegal_action must be 'lose' or 'raise', got "
                              f"{self.illegal_action!r}")
        self.shaping = float(config.pop("shaping", 0.0))
        self.gamma = float(config.pop("gamma", 0.99))
        config.pop("render_mode", None)
        if config:
            raise OptionError(f"unknown RLlibCardEnv config key(s) {sorted(config)}; keys are "
                              "env_id, options, illegal_action, shaping, gamma")
        self.engine = eng = Engine(self.env_id, **options)
        self.game = g = eng.game
        self.options = dict(g.options)
        n, A = self.num_players, self.num_actions = g.num_players, g.num_actions
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agents = list(self.possible_agents)
        self._agent_ids = set(self.possible_agents)
        obs_space = gymnasium.spaces.Dict({
            "observation": gymnasium.spaces.Box(g.obs_low, g.obs_high, (g.obs_size,),
                                                g.obs_dtype),
            "action_mask": gymnasium.spaces.Box(0, 1, (A,), np.int8),
        })
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: gymnasium.spaces.Discrete(A) for a in self.possible_agents}
        self.observation_space = obs_space  # every seat has the same spaces
        self.action_space = gymnasium.spaces.Discrete(A)
        super().__init__()
        self._potential = None
        if self.shaping:
            path = manifest(self.env_id).train.potential
            if path is None:
                raise OptionError(f"{self.env_id} has no shaping potential (manifest "
                                  "train.potential); use shaping=0")
            self._potential = load(path)
        self.state: np.ndarray | None = None
        self.deal_seed: int | None = None
        self.actions: list[int] = []
        self._phi: list[float | None] = [None] * n
        self._mask = np.zeros(A, np.int8)
        self._zero_mask = np.zeros(A, np.int8)
        self._over = True

    # --- observations ----------------------------------------------------------------------
    def _obs(self, seat: int, mask: np.ndarray) -> dict[str, np.ndarray]:
        return {"observation": self.engine.observe(self.state, seat), "action_mask": mask}

    def _shape(self, seat: int, obs: np.ndarray | None) -> float:
        """The shaping term of ``seat`` at its observation ``obs`` (``None``: the game ended)."""
        if self._potential is None:
            return 0.0
        phi = 0.0 if obs is None else float(self._potential(obs[None], self.num_players)[0])
        prev, self._phi[seat] = self._phi[seat], phi
        return 0.0 if prev is None else self.shaping * (self.gamma * phi - prev)

    # --- MultiAgentEnv API -----------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None
              ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Deal a new game. ``seed`` seeds the episode stream (``np_random``); each deal's
        reset seed is drawn from it (``infos[seat]["deal"]``)."""
        super().reset(seed=seed, options=options)
        for _ in range(100):
            self.deal_seed = int(self.np_random.integers(2**62))
            self.state = self.engine.new_state(self.deal_seed)
            if not self.state[K.DONE]:
                break
        else:  # pragma: no cover - no game ends at its deal
            raise RuntimeError("100 deals in a row ended at once")
        self.actions = []
        self._phi = [None] * self.num_players
        self._over = False
        seat = int(self.state[K.CUR])
        self.engine.legal_mask(self.state, self._mask)
        agent = self.possible_agents[seat]
        obs = self._obs(seat, self._mask.copy())
        self._shape(seat, obs["observation"])
        return {agent: obs}, {agent: {"deal": self.deal_seed, "seat": seat}}

    def step(self, action_dict: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        if self.state is None or self._over:
            raise IllegalActionError("the game is over (or never started): call reset()",
                                     None, "over", [])
        st = self.state
        seat = int(st[K.CUR])
        agent = self.possible_agents[seat]
        legal = np.flatnonzero(self._mask).tolist()
        phase = self.game.phase_name(st)
        if set(action_dict) != {agent}:
            raise IllegalActionError(f"{self.env_id}: {agent} is to act, got actions for "
                                     f"{sorted(action_dict)}", action_dict, phase, legal)
        try:
            a = as_action(action_dict[agent], self.num_actions)
        except ValueError as e:
            raise IllegalActionError(f"{self.env_id}: {e}; legal: {legal}",
                                     action_dict[agent], phase, legal) from None
        if not self._mask[a]:
            if self.illegal_action == "raise":
                raise IllegalActionError(f"{self.env_id}: illegal action {a} "
                                         f"({self.game.action_to_str(a)}) by {agent} in phase "
                                         f"{phase!r}; legal: {legal}", a, phase, legal)
            return self._forfeit(seat)
        rew = self.engine.step(st, a)
        self.actions.append(a)
        rewards = {ag: float(rew[i]) for i, ag in enumerate(self.possible_agents)}
        if st[K.DONE]:
            return self._final(rewards)
        nxt = int(st[K.CUR])
        self.engine.legal_mask(st, self._mask)
        nagent = self.possible_agents[nxt]
        obs = self._obs(nxt, self._mask.copy())
        rewards[nagent] += self._shape(nxt, obs["observation"])
        return ({nagent: obs}, rewards, {"__all__": False}, {"__all__": False}, {nagent: {}})

    def _final(self, rewards: dict[str, float]) -> tuple[dict, dict, dict, dict, dict]:
        """Every seat's final observation, flags and result of a game that just ended."""
        st = self.state
        self._over = True
        self._mask[:] = 0
        trunc = bool(st[K.DONE] == K.DONE_TRUNCATED)
        points, winners = self.engine.outcome(st)
        obs, infos = {}, {}
        replay = {"seed": self.deal_seed, "actions": list(self.actions)}
        for i, ag in enumerate(self.possible_agents):
            obs[ag] = self._obs(i, self._zero_mask.copy())
            rewards[ag] += self._shape(i, None)
            infos[ag] = {"points": float(points[i]), "winner": bool(winners[i]), "seat": i,
                         "replay": replay}
        terms = {ag: not trunc for ag in self.possible_agents}
        truncs = {ag: trunc for ag in self.possible_agents}
        terms["__all__"], truncs["__all__"] = not trunc, trunc
        return obs, rewards, terms, truncs, infos

    def _forfeit(self, seat: int) -> tuple[dict, dict, dict, dict, dict]:
        """PettingZoo classic: an illegal action ends the game, offender -1, others 0."""
        self._over = True
        self._mask[:] = 0
        offender = self.possible_agents[seat]
        obs, rewards, infos = {}, {}, {}
        for i, ag in enumerate(self.possible_agents):
            obs[ag] = self._obs(i, self._zero_mask.copy())
            rewards[ag] = -1.0 if i == seat else 0.0
            infos[ag] = {"illegal_action": offender, "seat": i}
        terms = {ag: True for ag in self.possible_agents}
        terms["__all__"] = True
        truncs = {ag: False for ag in self.possible_agents}
        truncs["__all__"] = False
        return obs, rewards, terms, truncs, infos

    def render(self) -> str | None:
        return None if self.state is None else self.game.render(self.state, None)
