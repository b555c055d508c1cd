"""A stable-baselines3 ``VecEnv`` backed by the batched engine: ``num_envs`` games, one learning
seat in each, opponents' moves computed in batches, masks without per-env Python.

>>> from sb3_contrib import MaskablePPO
>>> from card_envs.rl import BatchedVecEnv
>>> venv = BatchedVecEnv("slide_v0", num_envs=64, opponents="random", seed=0)
>>> model = MaskablePPO("MlpPolicy", venv).learn(10_000)                  # doctest: +SKIP

**Seats.** Game ``i`` is learned from seat ``i % num_players`` (``seats="alternate"``, so every
seat is trained equally often) or from ``seats=k`` in every game.

**Opponents** (every other seat): ``"random"`` (uniform legal moves from the compiled sampler),
an agent spec (``"heuristic"``: an :class:`AgentOpponent`, one ``act`` per game), a *batched
policy* ``f(observations, masks) -> actions`` over the games where an opponent is to move
(e.g. :class:`PolicyOpponent` around a frozen MaskablePPO policy), or an
:class:`~card_envs.rl.single_agent.OpponentPool` of those: each game draws a member per
episode.

**Steps.** ``step(actions)`` plays the learner's action in every game, then the opponents'
moves, batch by batch, until the learner is to act again in every game. The reward of game
``i`` is the sum of the learner's rewards over all those moves, so a game ended by an
opponent's move pays the learner in that same step. A game that ends is dealt anew at once
(SB3 convention): ``dones[i]`` is true, the returned observation is the new game's, and
``infos[i]["terminal_observation"]`` is the learner's view of the final position
(``infos[i]["TimeLimit.truncated"]`` for a truncated game, and ``"winner"`` / ``"episode"``
with the return and length). Rewards that the new game pays before the learner's first move
are added to its next reward.

Masks: ``action_masks()`` (all games at once) is what sb3-contrib's ``MaskablePPO`` uses
(``env_method("action_masks")`` works too).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium
import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv

from card_envs.agents.registry import make_agent
from card_envs.core.errors import OptionError
from card_envs.core.registry import env_class
from card_envs.core.vector import VectorEnv
from card_envs.rl.single_agent import OpponentPool

__all__ = ["AgentOpponent", "BatchPolicy", "BatchedVecEnv", "PolicyOpponent", "feature_space"]

BatchPolicy = Callable[[np.ndarray, np.ndarray], np.ndarray]


def feature_space(game: Any, features: Any) -> gymnasium.spaces.Box:
    """The observation space of observations with features: ``[obs, global, per-action]``
    float32, the observation part bounded as the game declares it."""
    low = np.full(features.width, -np.inf, np.float32)
    high = np.full(features.width, np.inf, np.float32)
    low[:game.obs_size] = game.obs_low
    high[:game.obs_size] = game.obs_high
    return gymnasium.spaces.Box(low, high, dtype=np.float32)


class PolicyOpponent:
    """A (frozen) MaskablePPO policy as a batched opponent: ``(obs, masks) -> actions``.
    ``deterministic=False`` samples from the policy (keeps self-play diverse)."""

    def __init__(self, policy: Any, deterministic: bool = False) -> None:
        self.policy = getattr(policy, "policy", policy)  # a model or its policy
        self.deterministic = deterministic

    def __call__(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        act = getattr(self.policy, "act", None)  # MaskedPolicy's lean batched path
        if act is not None:
            return np.asarray(act(obs, masks.astype(bool), self.deterministic), np.int64)
        actions, _ = self.policy.predict(obs, action_masks=masks.astype(bool),
                                         deterministic=self.deterministic)
        return np.asarray(actions, np.int64)


class AgentOpponent:
    """An arena agent (``card_envs.agents.make_agent`` spec, e.g. ``"heuristic"``) as a batched
    opponent of a :class:`~card_envs.rl.sb3.BatchedVecEnv`: ``(obs, masks) -> actions``, one ``act``
    per game (the agents that read observations only)."""

    def __init__(self, spec: str, env_id: str, seed: int | None = None,
                 **options: Any) -> None:
        self.spec = spec
        self.agent = make_agent(spec, env_id, seed=seed, **options)
        if self.agent.needs_state:
            raise ValueError(f"{spec!r} reads the game state; a batched opponent only has "
                             "observations")

    def __call__(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.fromiter((self.agent.act(o, m) for o, m in zip(obs, masks)), np.int64,
                           count=len(obs))


class BatchedVecEnv(VecEnv):
    """``num_envs`` games of ``env_id`` as one SB3 VecEnv (module docstring)."""

    def __init__(self, env_id: str, num_envs: int, opponents: Any = "random",
                 seats: int | str = "alternate", seed: int = 0, features: bool = False,
                 **options: Any) -> None:
        game = env_class(env_id).game_class(**options)
        self.vec = vec = VectorEnv(game, num_envs, seed)
        self.env_id, self.game, self.options = env_id, game, dict(options)
        n = game.num_players
        B = vec.num_envs
        if seats == "alternate":
            self.learner = (np.arange(B) % n).astype(np.int32)
        elif isinstance(seats, (int, np.integer)) and 0 <= seats < n:
            self.learner = np.full(B, int(seats), np.int32)
        else:
            raise OptionError(f"seats must be 'alternate' or a seat in 0..{n - 1}, got "
                              f"{seats!r}")
        vec.final_seat[:] = self.learner
        # the pool given is the pool used (a SelfPlayPool adds and replaces snapshots in it
        # while training runs); agent specs other than "random" ("heuristic", "mcts:...")
        # become AgentOpponents in place, as SingleAgentEnv accepts them
        pool = opponents if isinstance(opponents, OpponentPool) else OpponentPool([opponents])
        for k, m in enumerate(pool.members):
            pool.members[k] = self._as_member(m, env_id, seed + k, options)
        self._pool = pool
        self.features = None
        if features:
            from card_envs.core.features import Features

            try:
                self.features = Features(game)
            except ValueError as e:
                raise OptionError(f"{env_id}: features=True, but {e}") from e
        self._rng = np.random.default_rng(seed)
        self._member = np.zeros(B, np.int64)
        self._acts = np.full(B, -1, np.int64)
        self._carry = np.zeros(B, np.float32)
        self._ret = np.zeros(B, np.float64)
        self._len = np.zeros(B, np.int64)
        self._actions: np.ndarray | None = None
        self._seed = seed
        if self.features is None:
            space = gymnasium.spaces.Box(game.obs_low, game.obs_high, dtype=game.obs_dtype)
        else:
            space = feature_space(game, self.features)
            # two output buffers, alternating: SB3 stores the previous step's observation
            # after the next step returns
            self._bufs = [np.zeros((B, self.features.width), np.float32) for _ in range(2)]
            self._buf_k = 0
        self.render_mode = None
        super().__init__(B, space, gymnasium.spaces.Discrete(game.num_actions))
        self.opponent_steps = 0  # opponent moves played (for throughput reports)
        # with features: where step() writes the next observations (None: the env's own
        # buffers); set by card_envs.rl.sb3.buffers.link to the rollout buffer's next rows
        self.obs_target: Callable[[], np.ndarray | None] | None = None

    @staticmethod
    def _as_member(m: Any, env_id: str, seed: int, options: dict[str, Any]) -> Any:
        """A pool member: ``"random"``, a batched policy, or an agent spec made an
        :class:`AgentOpponent`."""
        if isinstance(m, str) and m != "random":
            try:
                return AgentOpponent(m, env_id, seed=seed, **options)
            except ValueError as e:
                raise OptionError(f"batched opponent {m!r}: {e}") from e
        if not (m == "random" or callable(m)):
            raise OptionError(f"batched opponents are 'random', an agent spec ('heuristic', "
                              f"wrapped in AgentOpponent), or a callable (obs, masks) -> "
                              f"actions (PolicyOpponent, AgentOpponent); got {m!r}")
        return m

    def add_opponent(self, member: Any, weight: float = 1.0) -> None:
        """Add a member to the opponent pool (drawn from at the next episodes)."""
        self._pool.add(self._as_member(member, self.env_id, self._seed, self.options), weight)

    # --- opponents ------------------------------------------------------------------------
    def _draw_members(self, games: np.ndarray) -> None:
        pool = self._pool
        if len(pool.members) == 1:
            self._member[games] = 0
            return
        k = len(pool.members)
        p = None if pool.weights is None else np.asarray(pool.weights) / sum(pool.weights)
        self._member[games] = self._rng.choice(k, size=games.size, p=p)

    def _play_opponents(self, rewards_to: np.ndarray, done: np.ndarray,
                        infos: list[dict[str, Any]]) -> None:
        vec = self.vec
        B = vec.num_envs
        idx = np.arange(B)
        while True:
            need = vec.current_player != self.learner
            if not need.any():
                return
            acts = self._acts
            acts[:] = -1
            for j, m in enumerate(self._pool.members):
                sel = need & (self._member == j)
                if not sel.any():
                    continue
                if m == "random":
                    acts[sel] = vec.sample_actions()[sel]
                else:
                    rows = np.flatnonzero(sel)
                    acts[rows] = m(vec.observations[rows], vec.action_masks[rows])
            self.opponent_steps += int(need.sum())
            _, _, _, rew, term, trunc = vec.step_some(acts)
            r = rew[idx, self.learner]
            # a game already finished in this step pays its new episode's rewards later
            rewards_to += np.where(done, 0.0, r)
            self._carry += np.where(done, r, 0.0)
            self._finish(term | trunc, term, trunc, rewards_to, done, infos)

    def _finish(self, ended: np.ndarray, term: np.ndarray, trunc: np.ndarray,
                rewards: np.ndarray, done: np.ndarray, infos: list[dict[str, Any]]) -> None:
        """Book-keeping for games that just ended (and were dealt anew by the engine)."""
        if not ended.any():
            return
        rows = np.flatnonzero(ended & ~done)  # a second game that ended before the learner
        if rows.size:                          # moved reports nothing
            finals = self.vec.final_observations[rows]
            if self.features is not None:  # one compiled pass for all of them
                finals = self.features.compute(finals)
            for k, i in enumerate(rows):
                done[i] = True
                info = infos[i]
                info["terminal_observation"] = finals[k]
                info["TimeLimit.truncated"] = bool(trunc[i] and not term[i])
                ret = float(self._ret[i] + rewards[i])
                info["episode"] = {"r": ret, "l": int(self._len[i])}
                info["seat"] = int(self.learner[i])
        self._draw_members(np.flatnonzero(ended))

    # --- VecEnv API -----------------------------------------------------------------------
    def reset(self) -> np.ndarray:
        seed = self._seed if self._seed is not None else int(self._rng.integers(2**62))
        self._seed = None
        self.vec.reset(seed)
        self._rng = np.random.default_rng(seed)
        self._draw_members(np.arange(self.num_envs))
        self._carry[:] = 0
        self._ret[:] = 0
        self._len[:] = 0
        rewards = np.zeros(self.num_envs, np.float64)
        done = np.zeros(self.num_envs, bool)
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        self._play_opponents(rewards, done, infos)
        self._carry += rewards.astype(np.float32)
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return self._observations()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).astype(np.int64).reshape(self.num_envs)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        vec, B = self.vec, self.num_envs
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async()")
        acts, self._actions = self._actions, None
        rewards = self._carry.astype(np.float64)
        self._carry[:] = 0
        done = np.zeros(B, bool)
        infos: list[dict[str, Any]] = [{} for _ in range(B)]
        _, _, _, rew, term, trunc = vec.step_some(acts)
        rewards += rew[np.arange(B), self.learner]
        self._len += 1
        self._finish(term | trunc, term, trunc, rewards, done, infos)
        self._play_opponents(rewards, done, infos)
        self._ret += rewards
        self._ret[done] = 0.0
        self._len[done] = 0
        return self._observations(step=True), rewards.astype(np.float32), done, infos

    def _observations(self, step: bool = False) -> np.ndarray:
        """The learner's observations (with their features, computed in one compiled pass
        over the batch, when ``features``); a step's go where :attr:`obs_target` says (the
        rollout buffer's next rows), a reset's never (the buffer still needs its row)."""
        if self.features is None:
            return self.vec.observations.copy()
        out = None if self.obs_target is None or not step else self.obs_target()
        if out is None or out.shape != self._bufs[0].shape or out.dtype != np.float32 \
                or not out.flags.c_contiguous:
            self._buf_k ^= 1
            out = self._bufs[self._buf_k]
        return self.features.compute(self.vec.observations, out=out,
                                     threads=self.vec.num_threads)

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions in every game, ``(num_envs, num_actions)`` bool."""
        return self.vec.action_masks.astype(bool)

    def close(self) -> None:
        pass

    def seed(self, seed: int | None = None) -> Sequence[None | int]:
        self._seed = seed
        return [seed] * self.num_envs

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        n = len(self._indices(indices))
        if attr_name == "action_masks":
            return [self.action_masks] * n
        return [getattr(self, attr_name)] * n

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *args: Any, indices: Any = None,
                   **kwargs: Any) -> list[Any]:
        if method_name == "action_masks":  # sb3-contrib's get_action_masks: np.stack(...)
            masks = self.action_masks()
            return list(masks) if indices is None else [masks[i] for i in self._indices(indices)]
        raise AttributeError(f"BatchedVecEnv games have no method {method_name!r}")

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False] * len(self._indices(indices))

    def _indices(self, indices: Any) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, int):
            return [indices]
        return list(indices)

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [None] * self.num_envs
