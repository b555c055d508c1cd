"""The sampling half of card-envs' own PPO (:mod:`card_envs.rl.ppo`): a :class:`Sampler` plays
its share of the training games (a :class:`~card_envs.core.vector.VectorEnv`, the league's
opponents, the preallocated sample buffers) with a copy of the learner's network and returns
one rollout as plain arrays (:class:`Rollout`). The learner
(:class:`~card_envs.rl.ppo.run.PPORun`) merges the rollouts of its samplers and updates the
network; the samplers run in its process or as Ray actors (:mod:`card_envs.rl.ppo.ray`), with the
same code and the same results.

Sampler ``k`` of ``K`` plays ``sizes[k]`` games, dealt as games ``sum(sizes[:k])...`` of one
batch of ``sum(sizes)`` seeded ``seed``: K samplers deal the games one sampler of all the games
would. ``generation`` (a restart of the sampler's process) re-deals from another seed, so a
restarted sampler never replays a game it played before.
"""

from __future__ import annotations

import time
import zlib
from typing import Any

import numpy as np
import torch

from card_envs.agents.net import NetPolicy, PolicyNet, as_tensors, sample_segments
from card_envs.agents.registry import make_agent
from card_envs.core.features import feature_module
from card_envs.core.manifest import load
from card_envs.core.registry import manifest
from card_envs.core.vector import VectorEnv
from card_envs.rl.ppo.rollout import (
    Rollout,
    critic_net,
    load_arrays,
    merge_rollouts,
    state_arrays,
    warm_learner_kernels,
)
from card_envs.rl.trajectories import credit, link, observer

__all__ = ["OPPONENTS", "Rollout", "Sampler", "critic_net", "merge_rollouts", "state_arrays",
           "warm_learner_kernels"]

_SNAP = 3  # owner codes: 0 learner, 1 random, 2 heuristic, 3 + k snapshot k
OPPONENTS = ("snapshots", "heuristic", "random")  # the league's opponent kinds
_GENERATION_STRIDE = 1_000_000_007  # seed offset of a restarted sampler's deals
#: the sample buffers a rollout returns views of (two sets with ``double_buffer``)
_BUFFERS = ("buf_x", "buf_rows", "buf_racts", "buf_roff", "buf_cx", "buf_act", "buf_logp",
            "buf_val", "buf_rew", "buf_phi", "buf_done", "buf_next")
#: the arrays of a :class:`~card_envs.core.vector.VectorEnv` that make up its games
_VEC_ARRAYS = ("states", "current_player", "observations", "_mask_buf", "rewards",
               "terminated", "truncated", "_policy_rng", "final_seat", "final_observations")


class Sampler:
    """Plays ``sizes[index]`` of the training games with the learner's network (module
    docstring). ``policy`` / ``critic``: the learner's own objects (in its process: no copies),
    else fresh ones that :meth:`set_weights` fills. ``threads``: numba threads of the batch
    (``None``: the batch chooses)."""

    def __init__(self, env_id: str, players: int, cfg: dict[str, Any], options: dict[str, Any],
                 seed: int, index: int = 0, sizes: list[int] | None = None,
                 policy: NetPolicy | None = None, critic: torch.nn.Module | None = None,
                 threads: int | None = None, double_buffer: bool = False) -> None:
        self.env_id, self.n, self.cfg, self.options = env_id, players, cfg, options
        self.seed, self.index = int(seed), int(index)
        self.sizes = list(sizes or [cfg["num_envs"]])
        self.generation = 0
        self.double_buffer = bool(double_buffer)
        self._other: dict[str, np.ndarray] | None = None  # the other buffer set
        if policy is None:
            policy = NetPolicy(env_id, players, options, hidden=tuple(cfg["hidden"]),
                               scorer=cfg["scorer"], one_hot_max=cfg["one_hot_max"],
                               one_hot_budget=cfg["one_hot_budget"])
            policy.net.eval()
            if cfg["critic"] == "full":
                critic = critic_net(players * policy.pinput.in_dim, list(cfg["hidden"]))
                critic.eval()
        self.policy, self.critic = policy, critic
        self.net = policy.net
        game = policy.game
        self.game = game
        B = self.sizes[self.index]
        self.vec = VectorEnv(game, B, self._deal_seed())
        if threads is not None:
            self.vec.fix_threads(threads)
        A, L = game.num_actions, game.obs_size
        cap = B * cfg["n_steps"]
        pin = policy.pinput
        self.buf_x = np.zeros((cap, pin.in_dim), np.float32)
        self.row_cap = cap * 4
        self.buf_rows = np.zeros((self.row_cap, pin.action_dim), np.float32)
        self.buf_racts = np.zeros(self.row_cap, np.int64)
        self.buf_roff = np.zeros(cap + 1, np.int64)
        self._obs_tmp = np.zeros((B, L), game.obs_dtype)
        self._mask_tmp = np.zeros((B, A), np.int8)
        # the other seats' views of each sample's position (critic="full" only)
        self.buf_cx = np.zeros((cap if critic is not None else 0,
                                (players - 1) * pin.in_dim), np.float32)
        self._no_mask = np.zeros((B, A), np.int8)
        self._cobs = np.zeros((B, L), game.obs_dtype)
        self.buf_act = np.zeros(cap, np.int64)
        self.buf_logp = np.zeros(cap, np.float32)
        self.buf_val = np.zeros(cap, np.float32)
        self.buf_rew = np.zeros(cap, np.float32)
        self.buf_phi = np.zeros(cap, np.float32)
        self.buf_done = np.zeros(cap, np.bool_)
        self.buf_next = np.full(cap, -1, np.int64)
        self.buf_game = np.zeros(cap, np.int64)
        self.buf_seat = np.zeros(cap, np.int64)
        self.pending = np.full((B, players), -1, np.int64)
        self.owner = np.zeros((B, players), np.int64)
        self.actions = np.zeros(B, np.int64)
        self.deal_id = np.zeros(B, np.uint64)
        self.snapshots: list[NetPolicy] = []
        self.snapshot_ids: list[int] = []
        self.heuristic = None
        w = {k: float(cfg["league"].get(k, 0.0)) for k in OPPONENTS}
        if manifest(env_id).heuristic is None:
            w["heuristic"] = 0.0
        if w["heuristic"] > 0:
            self.heuristic = make_agent("heuristic", env_id, seed=seed + 7919 + self.index,
                                        num_players=players, **options)
        self.league_w = w
        self.potential = None
        self.phi_col = -1  # >= 0: the potential is this column of the network's input
        if cfg["shaping"] > 0 and manifest(env_id).train.potential:
            self.potential = load(manifest(env_id).train.potential)
            mod = feature_module(game)
            name = getattr(mod, "POTENTIAL_GLOBAL", None)
            if name is not None and self.potential is getattr(mod, "potential", None):
                self.phi_col = (pin.in_dim - pin.global_dim
                                + list(mod.GLOBAL_FEATURES).index(name))
        self.observe_seats = observer(game)
        self.prof = dict.fromkeys(("engine", "features", "forward", "sampling", "buffer",
                                   "opponents"), 0.0)
        self._reseed()
        t0 = time.perf_counter()
        self._warm_up()
        self.setup_s = time.perf_counter() - t0

    # --- seeds ----------------------------------------------------------------------------
    def _deal_seed(self) -> int:
        return (self.seed + sum(self.sizes[:self.index])
                + _GENERATION_STRIDE * self.generation)

    def _reseed(self) -> None:
        """Owners and league draws from (seed, index, generation); every game's deal id."""
        self.rng = np.random.default_rng([self.seed, 1, self.index, self.generation])
        self.pending[:] = -1
        for g in range(self.vec.num_envs):
            self._deal_owners(g)
            self._mark_deal(g)

    def restart(self, generation: int) -> None:
        """Start over as generation ``generation`` (after the process was restarted): new
        deals, so no game is played twice."""
        self.generation = int(generation)
        self.vec.reset(seed=self._deal_seed())
        self._reseed()

    def _mark_deal(self, g: int) -> None:
        """Fingerprint of game ``g``'s deal (its state as dealt): equal deals, equal ids."""
        b = self.vec.states[g].tobytes()
        self.deal_id[g] = np.uint64((zlib.crc32(b) << 32) | zlib.adler32(b))

    def _warm_up(self) -> None:
        """Compile every kernel the rollout calls on a throwaway batch, so that a measured run
        does not include numba's first-call compilation."""
        from card_envs.core.vector import SERIAL_BELOW

        vec = VectorEnv(self.game, max(SERIAL_BELOW, 2), 0)
        vec.reset(seed=0)
        for _ in range(2):
            vec.step(vec.sample_actions())
        pin = self.policy.pinput
        x, rows, acts, off = pin.compute(vec.observations, vec.action_masks, vec.num_threads)
        with torch.no_grad():
            logits, _ = self.net(*as_tensors(x, rows, acts, off))
        m = vec.num_envs
        a, lp = np.empty(m, np.int64), np.empty(m, np.float64)
        sample_segments(logits.numpy().astype(np.float64), off, acts,
                        np.full(len(acts), 0.5), False, a, lp)
        games = np.arange(m, dtype=np.int64)
        seats = vec.current_player.astype(np.int64)
        self.observe_seats(vec.states, vec.cfg, games, seats, np.zeros(
            (m, self.game.obs_size), self.game.obs_dtype))
        pend = np.full((m, self.n), -1, np.int64)
        nxt = np.full(m, -1, np.int64)
        link(0, games, seats, pend, nxt)
        rew, done = np.zeros(m, np.float32), np.zeros(m, np.bool_)
        credit(vec.rewards, vec.terminated, pend, rew, done)

    # --- state (a checkpoint's) -----------------------------------------------------------
    def get_state(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """What the next rollout depends on besides the weights and the league: the games
        (every array of the batch), each game's owners and deal id as arrays; the random
        streams and the generation as JSON-able values."""
        arrays = {f"vec.{k}": getattr(self.vec, k).copy() for k in _VEC_ARRAYS}
        arrays.update(owner=self.owner.copy(), deal_id=self.deal_id.copy())
        h = None if self.heuristic is None else self.heuristic.rng.getstate()
        meta = {"rng": self.rng.bit_generator.state, "generation": self.generation,
                "heuristic_rng": None if h is None else [h[0], list(h[1]), h[2]]}
        return arrays, meta

    def set_state(self, arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
        """Restore :meth:`get_state`'s output (checked: every array's shape and type, the
        random streams' form); raises ``ValueError`` naming what does not fit."""
        want = {f"vec.{k}": getattr(self.vec, k) for k in _VEC_ARRAYS}
        want.update(owner=self.owner, deal_id=self.deal_id)
        for k, a in want.items():
            got = arrays.get(k)
            if got is None or got.shape != a.shape or got.dtype != a.dtype:
                raise ValueError(f"sampler {self.index}: {k} is "
                                 f"{'missing' if got is None else f'{got.dtype} {got.shape}'}, "
                                 f"expected {a.dtype} {a.shape}")
        if self.owner.size and not (0 <= arrays["owner"].min()
                                    and arrays["owner"].max() < _SNAP + self.cfg["pool_size"]):
            raise ValueError(f"sampler {self.index}: owner codes out of range")
        rng = np.random.default_rng(0)
        try:
            rng.bit_generator.state = meta["rng"]
            h = meta["heuristic_rng"]
            if (h is None) != (self.heuristic is None):
                raise ValueError("heuristic stream present in one only")
            hstate = None if h is None else (int(h[0]), tuple(int(v) for v in h[1]), h[2])
            if hstate is not None:
                random_check = type(self.heuristic.rng)()
                random_check.setstate(hstate)
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"sampler {self.index}: random state unreadable ({e})") from None
        for k, a in want.items():
            a[...] = arrays[k]
        self.rng = rng
        if hstate is not None:
            self.heuristic.rng.setstate(hstate)
        self.generation = int(meta["generation"])

    # --- weights and league ---------------------------------------------------------------
    def set_weights(self, net: dict[str, np.ndarray], critic: dict[str, np.ndarray] | None
                    ) -> None:
        """Load the learner's weights (arrays from :func:`state_arrays`)."""
        load_arrays(self.net, net)
        if self.critic is not None and critic is not None:
            load_arrays(self.critic, critic)

    def sync_pool(self, pool: list[tuple[int, Any]]) -> None:
        """Make the snapshots those of ``pool`` (``(id, weights)``, oldest first; weights are
        a network or its arrays): new ids are loaded, the others dropped. A game keeps its
        slot number when older snapshots leave."""
        have = dict(zip(self.snapshot_ids, self.snapshots))
        snaps = []
        for sid, weights in pool:
            snap = have.get(sid)
            if snap is None:
                net = PolicyNet(self.net.in_dim, self.net.num_actions, self.net.action_dim,
                                tuple(self.cfg["hidden"]), self.cfg["scorer"])
                if isinstance(weights, torch.nn.Module):
                    net.load_state_dict(weights.state_dict())
                else:
                    load_arrays(net, weights)
                net.eval()
                snap = NetPolicy(self.env_id, self.n, self.options, net,
                                 one_hot_max=self.cfg["one_hot_max"],
                                 one_hot_budget=self.cfg["one_hot_budget"])
            snaps.append(snap)
        self.snapshots = snaps
        self.snapshot_ids = [sid for sid, _ in pool]

    def _deal_owners(self, g: int) -> None:
        row = self.owner[g]
        row[:] = 0
        if self.rng.random() < self.cfg["self_play"]:
            return
        w = dict(self.league_w)
        if not self.snapshots:
            w["snapshots"] = 0.0
        tot = sum(w.values())
        if tot <= 0:
            return
        kind = self.rng.choice(OPPONENTS, p=[w[k] / tot for k in OPPONENTS])
        code = {"random": 1, "heuristic": 2}.get(kind)
        if code is None:
            code = _SNAP + int(self.rng.integers(len(self.snapshots)))
        row[:] = code
        row[self.rng.integers(self.n)] = 0

    # --- rollout --------------------------------------------------------------------------
    def _swap_buffers(self) -> None:
        """Write the next rollout into the other set of sample buffers (``double_buffer``),
        so that the learner can read the last one meanwhile without a copy."""
        if not self.double_buffer:
            return
        mine = {k: getattr(self, k) for k in _BUFFERS}
        other = self._other or {k: np.zeros_like(v) for k, v in mine.items()}
        for k, v in other.items():
            setattr(self, k, v)
        self.row_cap = self.buf_rows.shape[0]
        self._other = mine

    def rollout(self) -> Rollout:
        """Play ``n_steps`` batched steps; the learner's samples as a :class:`Rollout` (views
        of this sampler's buffers: valid until the next rollout, or the one after it with
        ``double_buffer``)."""
        self._swap_buffers()
        vec, prof, cfg = self.vec, self.prof, self.cfg
        for k in prof:
            prof[k] = 0.0
        t_start = time.perf_counter()
        ptr = 0
        steps = 0
        deals: list[int] = []
        self.buf_roff[0] = 0
        self.buf_rew[:] = 0.0
        self.buf_done[:] = False
        self.buf_next[:] = -1
        self.pending[:] = -1
        ar = np.arange(vec.num_envs)
        threads = vec.num_threads
        for _ in range(cfg["n_steps"]):
            t0 = time.perf_counter()
            cur = vec.current_player
            who = self.owner[ar, cur]
            mine = np.flatnonzero(who == 0)
            m = mine.size
            actions = self.actions
            if m < vec.num_envs:
                vec.sample_actions(actions)  # random moves for the random opponents
            t1 = time.perf_counter()
            prof["opponents"] += t1 - t0
            if m:
                sl = slice(ptr, ptr + m)
                if m == vec.num_envs:
                    obs, masks = vec.observations, vec.action_masks
                else:
                    obs, masks = self._obs_tmp[:m], self._mask_tmp[:m]
                    np.take(vec.observations, mine, axis=0, out=obs)
                    np.take(vec.action_masks, mine, axis=0, out=masks)
                self.buf_game[sl] = mine
                self.buf_seat[sl] = cur[mine]
                link(ptr, self.buf_game[sl], self.buf_seat[sl], self.pending, self.buf_next)
                t2 = time.perf_counter()
                prof["buffer"] += t2 - t1
                x, rows, acts, off = self.policy.pinput.compute(obs, masks, threads,
                                                               x=self.buf_x[sl])
                if self.critic is not None:
                    self._other_views(mine, cur[mine], self.buf_cx[sl], threads)
                t3 = time.perf_counter()
                prof["features"] += t3 - t2
                r0 = self.buf_roff[ptr]
                K = rows.shape[0]
                if r0 + K > self.row_cap:
                    self.row_cap = 2 * (r0 + K)
                    self.buf_rows = np.resize(self.buf_rows, (self.row_cap, rows.shape[1]))
                    self.buf_racts = np.resize(self.buf_racts, self.row_cap)
                self.buf_rows[r0:r0 + K] = rows
                self.buf_racts[r0:r0 + K] = acts
                self.buf_roff[ptr + 1:ptr + m + 1] = off[1:] + r0
                t3b = time.perf_counter()
                prof["buffer"] += t3b - t3
                t3 = t3b
                with torch.no_grad():
                    logits, values = self.net(*as_tensors(x, rows, acts, off))
                    if self.critic is not None:
                        values = self._critic_values(x, self.buf_cx[sl])
                t4 = time.perf_counter()
                prof["forward"] += t4 - t3
                lg = logits.numpy().astype(np.float64)
                a = np.empty(m, np.int64)
                lp = np.empty(m, np.float64)
                sample_segments(lg, off, acts, self.rng.random(lg.shape[0]), False, a, lp)
                actions[mine] = a
                self.buf_act[sl] = a
                self.buf_logp[sl] = lp
                self.buf_val[sl] = values.numpy()
                if self.phi_col >= 0:
                    self.buf_phi[sl] = x[:, self.phi_col]
                elif self.potential is not None:
                    self.buf_phi[sl] = self.potential(obs, self.n)
                t5 = time.perf_counter()
                prof["sampling"] += t5 - t4
                ptr += m
            t5 = time.perf_counter()
            if m < vec.num_envs:
                for k, snap in enumerate(self.snapshots):
                    idx = np.flatnonzero(who == _SNAP + k)
                    if idx.size:
                        actions[idx] = snap.act(vec.observations[idx], vec.action_masks[idx],
                                                self.rng, threads)[0]
                if self.heuristic is not None:
                    for g in np.flatnonzero(who == 2):
                        actions[g] = self.heuristic.act(vec.observations[g],
                                                        vec.action_masks[g])
            t6 = time.perf_counter()
            prof["opponents"] += t6 - t5
            _, _, _, rewards, term, trunc = vec.step(actions)
            t7 = time.perf_counter()
            prof["engine"] += t7 - t6
            ended = term | trunc
            credit(rewards, ended, self.pending, self.buf_rew, self.buf_done)
            for g in np.flatnonzero(ended):
                g = int(g)
                deals.append(int(self.deal_id[g]))
                self._deal_owners(g)
                self._mark_deal(g)
            prof["buffer"] += time.perf_counter() - t7
            steps += vec.num_envs
        # bootstrap the trajectories the rollout cut: each seat's view of the position now
        t0 = time.perf_counter()
        gs = np.argwhere(self.pending >= 0)
        boot = np.zeros(ptr, np.float32)
        boot_phi = np.zeros(ptr, np.float32)
        if gs.size:
            games = np.ascontiguousarray(gs[:, 0])
            seats = np.ascontiguousarray(gs[:, 1])
            obs = np.zeros((games.size, self.game.obs_size), self.game.obs_dtype)
            self.observe_seats(vec.states, vec.cfg, games, seats, obs)
            masks = np.zeros((games.size, self.game.num_actions), np.int8)
            x = self.policy.pinput.compute(obs, masks, threads)[0]
            with torch.no_grad():
                if self.critic is not None:
                    cx = np.zeros((games.size, self.buf_cx.shape[1]), np.float32)
                    self._other_views(games, seats, cx, threads)
                    v = self._critic_values(x, cx).numpy()
                else:
                    v = self.net.value_of(torch.from_numpy(x)).numpy()
            boot[self.pending[games, seats]] = v
            if self.phi_col >= 0:
                boot_phi[self.pending[games, seats]] = x[:, self.phi_col]
            elif self.potential is not None:
                boot_phi[self.pending[games, seats]] = self.potential(obs, self.n)
        prof["forward"] += time.perf_counter() - t0
        return Rollout(
            x=self.buf_x[:ptr], rows=self.buf_rows, racts=self.buf_racts,
            roff=self.buf_roff[:ptr + 1], cx=self.buf_cx[:ptr], act=self.buf_act[:ptr],
            logp=self.buf_logp[:ptr], val=self.buf_val[:ptr], rew=self.buf_rew[:ptr],
            phi=self.buf_phi[:ptr], done=self.buf_done[:ptr], next=self.buf_next[:ptr],
            boot=boot, boot_phi=boot_phi, env_steps=steps,
            deals=np.array(deals, np.uint64), index=self.index, generation=self.generation,
            seconds=time.perf_counter() - t_start, prof=dict(prof))

    def _other_views(self, games: np.ndarray, seats: np.ndarray, out: np.ndarray,
                     threads: int) -> None:
        """Write the encoded views of the seats after ``seats`` (in turn order) of ``games``
        into ``out`` ``(m, (n - 1) * D)``: with the seat's own view, the whole deal."""
        D, m = self.policy.pinput.in_dim, games.size
        games = np.ascontiguousarray(games, np.int64)
        obs = self._cobs[:m] if m <= self._cobs.shape[0] else np.zeros(
            (m, self.game.obs_size), self.game.obs_dtype)
        for j in range(1, self.n):
            other = (np.asarray(seats, np.int64) + j) % self.n
            self.observe_seats(self.vec.states, self.vec.cfg, games, other, obs)
            out[:, (j - 1) * D:j * D] = self.policy.pinput.compute(
                obs, self._no_mask[:m] if m <= self._no_mask.shape[0] else np.zeros(
                    (m, self.game.num_actions), np.int8), threads)[0]

    def _critic_values(self, x: np.ndarray, cx: np.ndarray) -> torch.Tensor:
        assert self.critic is not None
        return self.critic(torch.cat([torch.from_numpy(x), torch.from_numpy(cx)], 1)).squeeze(1)
