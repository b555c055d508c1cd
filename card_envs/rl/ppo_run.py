"""One run of card-envs' own PPO: the batched games, the league, the preallocated buffers, the
rollout and the update (:class:`PPORun`). The user-facing trainer, its settings and the design
notes are :mod:`card_envs.rl.ppo`."""

from __future__ import annotations

import copy
import time
from typing import Any

import numpy as np
import torch

from card_envs.agents.net import (
    NetPolicy,
    as_tensors,
    sample_segments,
    segment_log_softmax,
)
from card_envs.agents.registry import make_agent
from card_envs.core.features import feature_module
from card_envs.core.manifest import load
from card_envs.core.registry import manifest
from card_envs.core.vector import VectorEnv
from card_envs.rl.trajectories import credit, gae, gather_rows, link, observer

__all__ = ["OPPONENTS", "PPORun"]

_SNAP = 3  # owner codes: 0 learner, 1 random, 2 heuristic, 3 + k snapshot k
OPPONENTS = ("snapshots", "heuristic", "random")  # the league's opponent kinds


class PPORun:
    """State of one training run of :func:`card_envs.rl.ppo.train_ppo`."""

    def __init__(self, env_id: str, players: int, cfg: dict[str, Any],
                 options: dict[str, Any], seed: int) -> None:
        self.env_id, self.n, self.cfg, self.options = env_id, players, cfg, options
        self.rng = np.random.default_rng(seed)
        torch.manual_seed(seed)
        self.policy = NetPolicy(env_id, players, options, hidden=tuple(cfg["hidden"]),
                                scorer=cfg["scorer"], one_hot_max=cfg["one_hot_max"],
                                one_hot_budget=cfg["one_hot_budget"])
        self.net = self.policy.net
        self.opt = torch.optim.Adam(self.net.parameters(), lr=cfg["learning_rate"], eps=1e-5)
        self.critic: torch.nn.Module | None = None
        if cfg["critic"] == "full":
            self.critic = _critic(players * self.policy.pinput.in_dim, cfg["hidden"])
            self.opt.add_param_group({"params": list(self.critic.parameters())})
        self.params = [q for g in self.opt.param_groups for q in g["params"]]
        game = self.policy.game
        self.game = game
        self.vec = VectorEnv(game, cfg["num_envs"], seed)
        self.vec.reset(seed=seed)
        B, A, L = self.vec.num_envs, game.num_actions, game.obs_size
        cap = B * cfg["n_steps"]
        pin = self.policy.pinput
        self.buf_x = np.zeros((cap, pin.in_dim), np.float32)
        self.row_cap = cap * 4
        self.buf_rows = np.zeros((self.row_cap, pin.action_dim), np.float32)
        self.buf_racts = np.zeros(self.row_cap, np.int64)
        self.buf_roff = np.zeros(cap + 1, np.int64)
        self._obs_tmp = np.zeros((B, L), game.obs_dtype)
        self._mask_tmp = np.zeros((B, A), np.int8)
        # the other seats' views of each sample's position (critic="full" only)
        self.buf_cx = np.zeros((cap if self.critic is not None else 0,
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
        self.snapshots: list[NetPolicy] = []
        self.heuristic = None
        w = {k: float(cfg["league"].get(k, 0.0)) for k in OPPONENTS}
        if manifest(env_id).heuristic is None:
            w["heuristic"] = 0.0
        if w["heuristic"] > 0:
            self.heuristic = make_agent("heuristic", env_id, seed=seed + 7919,
                                        num_players=players, **options)
        self.league_w = w
        self.potential = None
        self.phi_col = -1  # >= 0: the potential is this column of the network's input
        if cfg["shaping"] > 0 and manifest(env_id).train.potential:
            self.potential = load(manifest(env_id).train.potential)
            name = getattr(feature_module(game), "POTENTIAL_GLOBAL", None)
            mod = feature_module(game)
            if name is not None and self.potential is getattr(mod, "potential", None):
                pin = self.policy.pinput
                self.phi_col = (pin.in_dim - pin.global_dim
                                + list(mod.GLOBAL_FEATURES).index(name))
        self.observe_seats = observer(game)
        self.env_steps = 0
        self.learner_steps = 0
        self.updates = 0
        self.prof = dict.fromkeys(("engine", "features", "forward", "sampling", "buffer",
                                   "update", "opponents"), 0.0)
        self.rollout_s = self.update_s = 0.0
        for g in range(B):
            self._deal_owners(g)
        t0 = time.perf_counter()
        self._warm_up()
        self.setup_s = time.perf_counter() - t0

    def _warm_up(self) -> None:
        """Compile every kernel the run calls (engine, features, bookkeeping) on a throwaway
        batch, so that the measured run does not include numba's first-call compilation."""
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
        f32 = np.zeros(m, np.float32)
        gae(rew, f32, nxt, done, f32, f32, f32, 0.0, 0.99, 0.95, f32.copy(), f32.copy())
        out_off, pos = np.zeros(m + 1, np.int64), np.zeros(m, np.int64)
        gather_rows(games, off, rows, acts, a, rows.copy(), acts.copy(), out_off, pos)

    # --- league ---------------------------------------------------------------------------
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

    def snapshot(self) -> None:
        if self.cfg["pool_size"] == 0:
            return
        snap = NetPolicy(self.env_id, self.n, self.options, copy.deepcopy(self.net),
                         one_hot_max=self.cfg["one_hot_max"],
                         one_hot_budget=self.cfg["one_hot_budget"])
        snap.net.eval()
        if len(self.snapshots) >= self.cfg["pool_size"]:
            self.snapshots.pop(0)  # the oldest; games keep their slot number
        self.snapshots.append(snap)

    # --- rollout --------------------------------------------------------------------------
    def rollout(self) -> int:
        """Play ``n_steps`` batched steps; returns the number of learner samples."""
        vec, prof, cfg = self.vec, self.prof, self.cfg
        t_start = time.perf_counter()
        ptr = 0
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
                self._deal_owners(int(g))
            prof["buffer"] += time.perf_counter() - t7
            self.env_steps += vec.num_envs
        self.learner_steps += ptr
        self.n_samples = ptr
        # bootstrap the trajectories the rollout cut: each seat's view of the position now
        t0 = time.perf_counter()
        gs = np.argwhere(self.pending >= 0)
        self.boot = np.zeros(ptr, np.float32)
        self.boot_phi = np.zeros(ptr, np.float32)
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
            self.boot[self.pending[games, seats]] = v
            if self.phi_col >= 0:
                self.boot_phi[self.pending[games, seats]] = x[:, self.phi_col]
            elif self.potential is not None:
                self.boot_phi[self.pending[games, seats]] = self.potential(obs, self.n)
        prof["forward"] += time.perf_counter() - t0
        self.rollout_s += time.perf_counter() - t_start
        return ptr

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

    # --- update ---------------------------------------------------------------------------
    def update(self) -> dict[str, float]:
        cfg = self.cfg
        t_start = time.perf_counter()
        N = self.n_samples
        adv = np.zeros(N, np.float32)
        ret = np.zeros(N, np.float32)
        gae(self.buf_rew[:N], self.buf_val[:N], self.buf_next[:N], self.buf_done[:N],
             self.boot, self.buf_phi[:N], self.boot_phi, float(cfg["shaping"]),
             float(cfg["gamma"]), float(cfg["gae_lambda"]), adv, ret)
        M = min(cfg["minibatch"], N)
        stats = {"policy_loss": 0.0, "value_loss": 0.0, "entropy": 0.0, "clip_frac": 0.0,
                 "approx_kl": 0.0}
        k = 0
        gather_s = 0.0  # assembling minibatches
        self.net.train()
        if self.critic is not None:
            self.critic.train()
        for _ in range(cfg["epochs"]):
            perm = self.rng.permutation(N)
            for s in range(0, N - M + 1, M):
                idx = np.sort(perm[s:s + M])
                t0 = time.perf_counter()
                x = self.buf_x[idx]
                K = int((self.buf_roff[idx + 1] - self.buf_roff[idx]).sum())
                rows = np.empty((K, self.buf_rows.shape[1]), np.float32)
                acts = np.empty(K, np.int64)
                off = np.empty(M + 1, np.int64)
                pos = np.empty(M, np.int64)
                gather_rows(idx, self.buf_roff, self.buf_rows, self.buf_racts, self.buf_act,
                             rows, acts, off, pos)
                gather_s += time.perf_counter() - t0
                xt, rt, at, seg = as_tensors(x, rows, acts, off)
                logits, values = self.net(xt, rt, at, seg)
                logp_all = segment_log_softmax(logits, seg, M)
                logp = logp_all[torch.from_numpy(pos)]
                ent = -torch.zeros(M).index_add_(0, seg, logp_all.exp() * logp_all)
                a = torch.from_numpy(adv[idx])
                a = (a - a.mean()) / (a.std() + 1e-8)
                old = torch.from_numpy(self.buf_logp[idx])
                ratio = (logp - old).exp()
                clip = cfg["clip_range"]
                pg = -torch.min(ratio * a, ratio.clamp(1 - clip, 1 + clip) * a).mean()
                target = torch.from_numpy(ret[idx])
                vl = 0.5 * (values - target).pow(2).mean()
                if self.critic is not None:  # the policy's own value head stays trained too
                    cv = self.critic(torch.cat([xt, torch.from_numpy(self.buf_cx[idx])], 1))
                    vl = vl + 0.5 * (cv.squeeze(1) - target).pow(2).mean()
                loss = pg + cfg["vf_coef"] * vl - cfg["ent_coef"] * ent.mean()
                self.opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.params, cfg["max_grad_norm"])
                self.opt.step()
                with torch.no_grad():
                    stats["policy_loss"] += float(pg)
                    stats["value_loss"] += float(vl)
                    stats["entropy"] += float(ent.mean())
                    stats["clip_frac"] += float(((ratio - 1).abs() > clip).float().mean())
                    stats["approx_kl"] += float(((ratio - 1) - (logp - old)).mean())
                k += 1
        self.net.eval()
        if self.critic is not None:
            self.critic.eval()
        self.updates += 1
        dt = time.perf_counter() - t_start
        self.update_s += dt
        self.prof["buffer"] += gather_s
        self.prof["update"] += dt - gather_s
        return {key: v / max(k, 1) for key, v in stats.items()}


def _critic(in_dim: int, hidden: list[int]) -> torch.nn.Module:
    """The full-information value network (critic="full"): an MLP over every seat's view."""
    layers: list[torch.nn.Module] = []
    for h in hidden:
        layers += [torch.nn.Linear(in_dim, h), torch.nn.ReLU()]
        in_dim = h
    return torch.nn.Sequential(*layers, torch.nn.Linear(in_dim, 1))
