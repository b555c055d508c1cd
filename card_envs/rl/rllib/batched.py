"""RLlib sampling on the batched engine: :class:`BatchedEnvRunner`, an RLlib env runner (new API
stack) that steps a whole :class:`~card_envs.core.vector.VectorEnv` per call instead of one
``MultiAgentEnv`` game at a time. Imports ray and torch (the ``rllib`` extra).

:func:`~card_envs.rl.rllib.config.ppo_config` uses it with ``runner="batched"`` (the default):
the learner is one single-agent RLModule (the masking
:class:`~card_envs.rl.rllib.module.MaskedActorCriticModule`), and the runner plays the other
seats itself.

**A call to** ``sample(num_timesteps=T)`` advances ``num_envs_per_env_runner`` games together
(auto-reset) until the learner has made at least ``T`` moves: at each step the learner's
positions (whatever seat is to move) go through one forward pass of the module, random
opponents through the engine's compiled sampler, each snapshot's positions through one forward
of that snapshot. Every action is checked against its mask by the engine (an illegal one raises
:class:`~card_envs.core.errors.IllegalActionError`, nothing is stepped).

**Self-play** (``env_config["selfplay"]``): ``"shared"``: the learner plays every seat of every
game; ``"league"``: per game, the learner plays one seat (drawn at random) and one opponent
plays the others: ``"random"`` with probability ``random_weight``, else one of ``snapshots``
frozen copies of the learner. A runner refreshes its next snapshot (in turn) from the learner's
weights every ``snapshot_every`` weight updates it receives, so every runner holds the same
snapshots.

**Episodes.** Each learner seat's moves in a game form one trajectory: the observations at
which it chose (``{"observation", "action_mask"}``), its actions, log-probabilities and masked
logits, and as reward everything that seat was paid from its move up to its next move (the
opponents' moves included). A trajectory cut by the end of a ``sample`` call is returned as an
unfinished ``SingleAgentEpisode`` whose last observation is that seat's view of the position at
the cut (the value bootstrap); the seat's next move starts a new one. A game's end terminates
the trajectories of its learner seats. ``shaping=c`` adds ``c (gamma phi(o') - phi(o))`` per
move (the game's potential, ``phi = 0`` at the end and the cut's view at a cut).

**Threads.** A remote runner uses ``num_cpus_per_env_runner`` threads (torch, numba, the
batch); a runner in the driver's process leaves the process's settings alone.

**Counts.** ``num_env_steps_sampled`` (RLlib's batch counter) counts the learner's moves; the
metric ``num_env_steps_all_seats`` counts every move played (learner and opponents), and
``num_games`` the games finished. Episode returns and lengths are those of the learner's seats
in finished games; ``main_win_rate`` is the learner's share of league games it won outright.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numba
import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner
from ray.rllib.env.single_agent_episode import SingleAgentEpisode
from ray.rllib.env.utils.infinite_lookback_buffer import InfiniteLookbackBuffer
from ray.rllib.utils.metrics import (
    EPISODE_LEN_MEAN,
    EPISODE_RETURN_MAX,
    EPISODE_RETURN_MEAN,
    EPISODE_RETURN_MIN,
    SAMPLE_TIMER,
    WEIGHTS_SEQ_NO,
)

from card_envs.core.errors import OptionError
from card_envs.core.manifest import load
from card_envs.core.registry import env_class, manifest, resolve_env_id
from card_envs.core.vector import VectorEnv
from card_envs.rl.trajectories import credit, link, observer

__all__ = ["BatchedEnvRunner", "BatchedGames", "EpisodeBatch", "batched_spaces"]

_RANDOM, _SNAP = 1, 2  # owner codes: 0 learner, 1 random, 2 + k snapshot k
ENV_CONFIG_KEYS = ("env_id", "options", "shaping", "gamma", "selfplay", "snapshots",
                   "snapshot_every", "random_weight", "seed")


def batched_spaces(game: Any) -> tuple[gymnasium.spaces.Dict, gymnasium.spaces.Discrete]:
    """(observation space, action space) of one game's position: the AEC env's."""
    obs = gymnasium.spaces.Dict({
        "observation": gymnasium.spaces.Box(game.obs_low, game.obs_high, (game.obs_size,),
                                            game.obs_dtype),
        "action_mask": gymnasium.spaces.Box(0, 1, (game.num_actions,), np.int8),
    })
    return obs, gymnasium.spaces.Discrete(game.num_actions)


class BatchedGames:
    """The runner's env: ``num_envs`` games of ``config["env_id"]`` in one
    :class:`~card_envs.core.vector.VectorEnv`, with the spaces RLlib reads (``single_*``: one
    position; the batched ones: ``num_envs`` of them)."""

    def __init__(self, config: dict[str, Any], num_envs: int, seed: int) -> None:
        cfg = dict(config)
        unknown = set(cfg) - set(ENV_CONFIG_KEYS)
        if unknown:
            raise OptionError(f"unknown env_config key(s) {sorted(unknown)} for the batched "
                              f"runner; keys are {list(ENV_CONFIG_KEYS)}")
        self.env_id = resolve_env_id(cfg["env_id"])
        self.options = dict(cfg.get("options") or {})
        self.game = env_class(self.env_id).game_class(**self.options)
        self.vec = VectorEnv(self.game, num_envs, seed)
        self.num_envs = self.vec.num_envs
        self.single_observation_space, self.single_action_space = batched_spaces(self.game)
        self.observation_space = gymnasium.vector.utils.batch_space(
            self.single_observation_space, self.num_envs)
        self.action_space = gymnasium.vector.utils.batch_space(self.single_action_space,
                                                               self.num_envs)

    @property
    def unwrapped(self) -> BatchedGames:
        return self

    def close(self) -> None:
        """Nothing to release (the games are arrays)."""


class EpisodeBatch(list):
    """The episodes of one ``sample`` call (a list of ``SingleAgentEpisode``) that travels
    between processes as a few arrays: the trajectories' rows back to back (observations and
    masks with one row more per trajectory), the trajectory bounds and end flags. Pickling
    the episodes one by one cost about 170 us each (2048 of them per call of 1024 games), so a
    remote runner shipped its samples at a third of the rate it played them."""

    def __init__(self, arrays: tuple[np.ndarray, ...], starts: np.ndarray, ends: np.ndarray,
                 terminated: np.ndarray) -> None:
        obs, mask, act, logp, logits, rew = arrays
        eps = []
        for j in range(starts.size):
            a, b = int(starts[j]), int(ends[j])
            o0, o1 = a + j, b + j + 1
            eps.append(SingleAgentEpisode(
                observations=InfiniteLookbackBuffer({"observation": obs[o0:o1],
                                                     "action_mask": mask[o0:o1]}),
                infos=[{}] * (o1 - o0), actions=act[a:b], rewards=rew[a:b],
                extra_model_outputs={Columns.ACTION_LOGP: logp[a:b],
                                     Columns.ACTION_DIST_INPUTS: logits[a:b]},
                terminated=bool(terminated[j]), len_lookback_buffer=0))
        super().__init__(eps)
        self._packed = (arrays, starts, ends, terminated)

    def __reduce__(self) -> tuple[Any, ...]:
        return (EpisodeBatch, self._packed)


class BatchedEnvRunner(SingleAgentEnvRunner):
    """An RLlib env runner that samples whole batches of games (module docstring). Everything
    but :meth:`make_env`, :meth:`sample` and the snapshots is RLlib's
    ``SingleAgentEnvRunner`` (module, weights, metrics, checkpoints)."""

    def __init__(self, *, config: Any, **kwargs: Any) -> None:
        from card_envs.arena.ray_backend import keep_builtin_print

        keep_builtin_print()  # Ray may have replaced print, which numba cannot compile
        self._setting = self._settings(config.env_config)
        self.snapshots: list[Any] = []
        self.last_moves = self.last_games = 0  # every move / games finished, last sample()
        self._have = 0
        self._updates_seen = 0
        self._next_slot = 0
        super().__init__(config=config, **kwargs)
        if self.env is not None:
            self._setup_sampling()

    # --- set-up ---------------------------------------------------------------------------
    @staticmethod
    def _settings(env_config: Any) -> dict[str, Any]:
        c = dict(env_config or {})
        if "env_id" not in c:
            raise OptionError("the batched runner needs env_config['env_id']")
        s = {"selfplay": c.get("selfplay", "shared"), "snapshots": int(c.get("snapshots", 0)),
             "snapshot_every": int(c.get("snapshot_every", 5)),
             "random_weight": float(c.get("random_weight", 0.5)),
             "shaping": float(c.get("shaping", 0.0)), "gamma": float(c.get("gamma", 0.99))}
        if s["selfplay"] not in ("shared", "league"):
            raise OptionError(f"selfplay must be 'shared' or 'league', got {s['selfplay']!r}")
        if not 0.0 <= s["random_weight"] <= 1.0 or not np.isfinite(s["random_weight"]):
            raise OptionError(f"random_weight must be in [0, 1], got {s['random_weight']!r}")
        if not 0 <= s["snapshots"] <= 64 or s["snapshot_every"] < 1:
            raise OptionError("snapshots must be in 0..64 and snapshot_every >= 1")
        if not np.isfinite(s["shaping"]) or not 0 <= s["shaping"] <= 100:
            raise OptionError(f"shaping must be in [0, 100], got {s['shaping']!r}")
        return s

    def _seed_value(self) -> int:
        base = self.config.seed if self.config.seed is not None else 0
        return int(base) * 1_000_003 + 7919 * int(self.worker_index or 0)

    def make_env(self) -> None:
        """The batched games (no gymnasium vector env)."""
        self.env = BatchedGames(self.config.env_config, self.config.num_envs_per_env_runner,
                                self._seed_value())
        self.num_envs = self.env.num_envs
        self._needs_initial_reset = False

    def _setup_sampling(self) -> None:
        env, s = self.env, self._setting
        vec, game = env.vec, env.game
        self._cpus = int(max(1, round(self.config.num_cpus_per_env_runner or 1)))
        vec.fix_threads(self._cpus)
        B, n = vec.num_envs, game.num_players
        self.n = n
        self.rng = np.random.default_rng(self._seed_value() + 1)
        self.gen = torch.Generator().manual_seed(self._seed_value() + 2)
        self.owner = np.zeros((B, n), np.int64)
        self.pending = np.full((B, n), -1, np.int64)
        self.returns = np.zeros((B, n), np.float64)   # unshaped, per game so far
        self.lengths = np.zeros(B, np.int64)          # moves per game so far
        self.actions = np.zeros(B, np.int64)
        self.observe_seats = observer(game)
        self.potential = None
        if s["shaping"] > 0:
            path = manifest(env.env_id).train.potential
            if path is None:
                raise OptionError(f"{env.env_id} has no shaping potential (manifest "
                                  "train.potential); use shaping=0")
            self.potential = load(path)
        self._have = 0  # snapshots refreshed so far (a snapshot plays once it has weights)
        if s["selfplay"] == "league" and s["snapshots"]:
            spec = self.config.get_rl_module_spec(spaces=self.get_spaces(), inference_only=True)
            self.snapshots = [spec.build() for _ in range(s["snapshots"])]
            for snap in self.snapshots:
                snap.eval()
        for g in range(B):
            self._deal_owners(g)
        self._cap = 0
        self._grow(4 * B)

    def _grow(self, cap: int) -> None:
        game = self.env.game
        old = self._cap
        self._cap = cap
        def keep(a: Any, shape: tuple[int, ...], dt: Any) -> np.ndarray:
            new = np.zeros((cap, *shape), dt)
            if old:
                new[:old] = a[:old]
            return new

        L, A = game.obs_size, game.num_actions
        self.b_obs = keep(getattr(self, "b_obs", None), (L,), game.obs_dtype)
        self.b_mask = keep(getattr(self, "b_mask", None), (A,), np.int8)
        self.b_logits = keep(getattr(self, "b_logits", None), (A,), np.float32)
        self.b_act = keep(getattr(self, "b_act", None), (), np.int64)
        self.b_logp = keep(getattr(self, "b_logp", None), (), np.float32)
        self.b_rew = keep(getattr(self, "b_rew", None), (), np.float32)
        self.b_done = keep(getattr(self, "b_done", None), (), np.bool_)
        self.b_next = keep(getattr(self, "b_next", None), (), np.int64)
        self.b_game = keep(getattr(self, "b_game", None), (), np.int64)
        self.b_seat = keep(getattr(self, "b_seat", None), (), np.int64)

    def _deal_owners(self, g: int) -> None:
        row = self.owner[g]
        row[:] = 0
        s = self._setting
        if s["selfplay"] == "shared":
            return
        have = self._have
        if have == 0 or self.rng.random() < s["random_weight"]:
            row[:] = _RANDOM
        else:
            row[:] = _SNAP + int(self.rng.integers(min(have, len(self.snapshots))))
        row[self.rng.integers(self.n)] = 0

    # --- snapshots ------------------------------------------------------------------------
    def set_state(self, state: dict[str, Any]) -> None:
        seq = state.get(WEIGHTS_SEQ_NO, 0) if isinstance(state, dict) else 0
        before = self._weights_seq_no
        super().set_state(state)
        if self.snapshots and seq and seq > before:
            self._updates_seen += 1
            if self._updates_seen % self._setting["snapshot_every"] == 0:
                slot = self.snapshots[self._next_slot % len(self.snapshots)]
                slot.load_state_dict(self.module.state_dict())
                self._next_slot += 1
                self._have = min(len(self.snapshots), self._have + 1)

    # --- sampling -------------------------------------------------------------------------
    def _policy(self, module: Any, obs: np.ndarray, mask: np.ndarray, explore: bool
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(actions, log-probabilities, masked logits) of ``module`` at these positions."""
        batch = {Columns.OBS: {"observation": torch.from_numpy(obs),
                               "action_mask": torch.from_numpy(mask)}}
        with torch.no_grad():
            out = (module.forward_exploration(batch) if explore
                   else module.forward_inference(batch))
            logits = out[Columns.ACTION_DIST_INPUTS].float()
            logp_all = torch.log_softmax(logits, dim=1)
            if explore:  # Gumbel-max: a sample of softmax(logits); masked logits never win
                u = torch.rand(logits.shape, generator=self.gen).clamp_(1e-20, 1.0)
                a = torch.argmax(logits - torch.log(-torch.log(u)), dim=1)
            else:
                a = torch.argmax(logits, dim=1)
            lp = logp_all.gather(1, a[:, None])[:, 0]
        return a.numpy(), lp.numpy(), logits.numpy()

    def sample(self, *, num_timesteps: int | None = None, num_episodes: int | None = None,
               explore: bool | None = None, random_actions: bool = False,
               force_reset: bool = False) -> list[SingleAgentEpisode]:
        """Play until the learner made ``num_timesteps`` moves (default: the rollout fragment
        length times the number of games); returns the learner's trajectories as episodes
        (module docstring). ``num_episodes`` and ``random_actions`` are not supported."""
        if self.env is None:
            raise ValueError(f"{self} has no env: it cannot sample")
        if num_episodes is not None or random_actions:
            raise ValueError("the batched runner samples num_timesteps of the module's moves")
        if explore is None:
            explore = self.config.explore
        if self.worker_index:  # a runner process of its own: its CPUs, no more
            torch.set_num_threads(self._cpus)
            numba.set_num_threads(min(self._cpus, numba.config.NUMBA_NUM_THREADS))
        if num_timesteps is None:
            num_timesteps = self.config.get_rollout_fragment_length(
                self.worker_index) * self.num_envs
        self.metrics.log_value(WEIGHTS_SEQ_NO, self._weights_seq_no, window=1)
        with self.metrics.log_time(SAMPLE_TIMER):
            episodes = self._sample_steps(int(num_timesteps), bool(explore))
        return episodes

    def _sample_steps(self, target: int, explore: bool) -> list[SingleAgentEpisode]:
        vec, B = self.env.vec, self.env.num_envs
        ar = np.arange(B)
        ptr = 0
        all_moves = games_done = 0
        self.pending[:] = -1
        self.b_rew[:] = 0.0
        self.b_done[:] = False
        self.b_next[:] = -1
        ep_lens: list[int] = []
        ep_rets: list[float] = []
        wins: list[float] = []
        while ptr < target:
            if ptr + B > self._cap:
                self._grow(2 * (ptr + B))
            cur = vec.current_player
            who = self.owner[ar, cur]
            mine = np.flatnonzero(who == 0)
            m = mine.size
            actions = self.actions
            if m < B:
                vec.sample_actions(actions)  # the random opponents' moves
            if m:
                sl = slice(ptr, ptr + m)
                obs, mask = self.b_obs[sl], self.b_mask[sl]
                np.take(vec.observations, mine, axis=0, out=obs)
                np.take(vec.action_masks, mine, axis=0, out=mask)
                self.b_game[sl] = mine
                self.b_seat[sl] = cur[mine]
                link(ptr, self.b_game[sl], self.b_seat[sl], self.pending, self.b_next)
                a, lp, lg = self._policy(self.module, obs, mask, explore)
                actions[mine] = a
                self.b_act[sl] = a
                self.b_logp[sl] = lp
                self.b_logits[sl] = lg
                ptr += m
            if m < B:
                for k, snap in enumerate(self.snapshots):
                    idx = np.flatnonzero(who == _SNAP + k)
                    if idx.size:
                        actions[idx] = self._policy(snap, vec.observations[idx],
                                                    vec.action_masks[idx], explore)[0]
            _, _, _, rewards, term, trunc = vec.step(actions)
            all_moves += B
            self.returns += rewards
            self.lengths += 1
            ended = term | trunc
            credit(rewards, ended, self.pending, self.b_rew, self.b_done)
            for g in np.flatnonzero(ended):
                g = int(g)
                games_done += 1
                seats = np.flatnonzero(self.owner[g] == 0)
                for s in seats:
                    ep_lens.append(int(self.lengths[g]))
                    ep_rets.append(float(self.returns[g, s]))
                if seats.size == 1:  # a league game: did the learner win outright?
                    r = self.returns[g]
                    s = int(seats[0])
                    wins.append(float(r[s] > np.delete(r, s).max()))
                self.returns[g] = 0.0
                self.lengths[g] = 0
                self._deal_owners(g)
        episodes = self._episodes(ptr)
        self.last_moves, self.last_games = all_moves, games_done
        self._log(ptr, all_moves, games_done, ep_lens, ep_rets, wins)
        return episodes

    def _episodes(self, N: int) -> EpisodeBatch:
        """The trajectories of samples ``0..N`` as episodes (module docstring)."""
        vec, game = self.env.vec, self.env.game
        cut = np.argwhere(self.pending >= 0)  # (game, seat) whose trajectory the call cut
        last_cut = self.pending[cut[:, 0], cut[:, 1]] if cut.size else np.zeros(0, np.int64)
        L, A = game.obs_size, game.num_actions
        cut_obs = np.zeros((len(last_cut), L), game.obs_dtype)
        if cut.size:
            self.observe_seats(vec.states, vec.cfg, np.ascontiguousarray(cut[:, 0]),
                               np.ascontiguousarray(cut[:, 1]), cut_obs)
        rew = self.b_rew[:N].copy()
        if self.potential is not None:  # potential-based shaping, phi = 0 at the end
            s, gamma = self._setting["shaping"], self._setting["gamma"]
            phi = self.potential(self.b_obs[:N], self.n).astype(np.float64)
            nxt = self.b_next[:N]
            phi_next = np.where(nxt >= 0, phi[np.maximum(nxt, 0)], 0.0)
            if len(last_cut):
                phi_next[last_cut] = self.potential(cut_obs, self.n)
            phi_next[self.b_done[:N]] = 0.0
            rew += (s * (gamma * phi_next - phi)).astype(np.float32)
        # trajectories: samples of one (game, seat) in time order, split after a game's end
        order = np.lexsort((np.arange(N), self.b_seat[:N], self.b_game[:N]))
        g, st, done = self.b_game[order], self.b_seat[order], self.b_done[order]
        new = np.ones(N, np.bool_)
        if N > 1:
            new[1:] = (g[1:] != g[:-1]) | (st[1:] != st[:-1]) | done[:-1]
        starts = np.flatnonzero(new)
        ends = np.append(starts[1:], N)
        T = starts.size
        # one gather for all observations: each trajectory's rows, then one extra row (its
        # last observation again, mask 0, for a finished one; the cut's view for a cut one)
        cut_row = np.full(N, -1, np.int64)
        cut_row[last_cut] = np.arange(len(last_cut))
        last = order[ends - 1]
        extra_src = np.where(cut_row[last] >= 0, N + cut_row[last], last)
        pos = np.arange(N) + np.repeat(np.arange(T), ends - starts)  # row of sample i in out
        src = np.empty(N + T, np.int64)
        src[pos] = order
        src[ends + np.arange(T)] = extra_src
        all_obs = np.concatenate([self.b_obs[:N], cut_obs]) if len(last_cut) else self.b_obs[:N]
        obs = all_obs[src]
        mask = np.zeros((N + T, A), np.int8)
        mask[pos] = self.b_mask[order]
        act, logp = self.b_act[order], self.b_logp[order]
        logits, rew = self.b_logits[order], rew[order]
        terminated = self.b_done[last]
        return EpisodeBatch((obs, mask, act, logp, logits, rew), starts, ends, terminated)

    def _log(self, steps: int, all_moves: int, games: int, lens: list[int], rets: list[float],
             wins: list[float]) -> None:
        m = self.metrics
        self._increase_sampled_metrics(steps, len(lens))
        m.log_value("num_env_steps_all_seats", all_moves, reduce="sum")
        m.log_value("num_env_steps_all_seats_lifetime", all_moves, reduce="lifetime_sum")
        m.log_value("num_games", games, reduce="sum")
        m.log_value("num_games_lifetime", games, reduce="lifetime_sum")
        if lens:  # one value per call (the mean of its finished games), not one per game
            m.log_value(EPISODE_LEN_MEAN, float(np.mean(lens)), window=20)
            m.log_value(EPISODE_RETURN_MEAN, float(np.mean(rets)), window=20)
            m.log_value(EPISODE_RETURN_MIN, float(np.min(rets)), reduce="min", window=20)
            m.log_value(EPISODE_RETURN_MAX, float(np.max(rets)), reduce="max", window=20)
        if wins:
            m.log_value("main_win_rate", float(np.mean(wins)), window=20)

    def get_metrics(self) -> Any:
        return self.metrics.reduce()
