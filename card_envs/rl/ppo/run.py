"""One run of card-envs' own PPO: the learner (:class:`PPORun`: the network, the optimizer, the
merged rollouts of its samplers and the update). The samplers
(:class:`~card_envs.rl.ppo.sampler.Sampler`: the batched games, the league, the sample buffers)
run in this process or as Ray actors (:mod:`card_envs.rl.ppo.ray`). The user-facing trainer,
its settings and the design notes are :mod:`card_envs.rl.ppo.train`."""

from __future__ import annotations

import copy
import time
from typing import Any

import numpy as np
import torch

from card_envs.agents.net import NetPolicy, as_tensors, segment_log_softmax
from card_envs.rl.ppo.sampler import (
    OPPONENTS,
    Rollout,
    Sampler,
    critic_net,
    merge_rollouts,
    state_arrays,
    warm_learner_kernels,
)
from card_envs.rl.trajectories import gae, gather_rows

__all__ = ["OPPONENTS", "PPORun", "split_games"]


def split_games(num_envs: int, samplers: int) -> list[int]:
    """Games per sampler: ``num_envs`` split as evenly as possible."""
    if not 1 <= samplers <= num_envs:
        raise ValueError(f"samplers must be in 1..num_envs ({num_envs}), got {samplers}")
    q, r = divmod(num_envs, samplers)
    return [q + (k < r) for k in range(samplers)]


class PPORun:
    """State of one training run of :func:`card_envs.rl.ppo.train_ppo`: the learner, and its
    samplers (``samplers`` in this process, or ``remote``: a
    :class:`~card_envs.rl.ppo.ray.RaySamplers` that plays them on Ray actors)."""

    def __init__(self, env_id: str, players: int, cfg: dict[str, Any],
                 options: dict[str, Any], seed: int, samplers: int = 1,
                 remote: Any = None) -> None:
        self.env_id, self.n, self.cfg, self.options = env_id, players, cfg, options
        self.seed = seed
        self.rng = np.random.default_rng([seed, 0])
        torch.manual_seed(seed)
        self.policy = NetPolicy(env_id, players, options, hidden=tuple(cfg["hidden"]),
                                scorer=cfg["scorer"], one_hot_max=cfg["one_hot_max"],
                                one_hot_budget=cfg["one_hot_budget"])
        self.net = self.policy.net
        self.opt = torch.optim.Adam(self.net.parameters(), lr=cfg["learning_rate"], eps=1e-5)
        self.critic: torch.nn.Module | None = None
        if cfg["critic"] == "full":
            self.critic = critic_net(players * self.policy.pinput.in_dim, cfg["hidden"])
            self.opt.add_param_group({"params": list(self.critic.parameters())})
        self.params = [q for g in self.opt.param_groups for q in g["params"]]
        self.net.eval()
        if self.critic is not None:
            self.critic.eval()
        self.game = self.policy.game
        self.sizes = split_games(cfg["num_envs"], samplers)
        self.remote = remote
        self.samplers: list[Sampler] = []
        t0 = time.perf_counter()
        #: the next rollout is played while the learner updates on the previous one
        self.pipeline = bool(cfg["pipeline"])
        if remote is None:  # in this process: sharing the learner's network unless pipelined
            share = not self.pipeline
            self.samplers = [Sampler(env_id, players, cfg, options, seed, k, self.sizes,
                                     self.policy if share else None,
                                     self.critic if share else None,
                                     double_buffer=self.pipeline) for k in range(samplers)]
        else:
            remote.start(env_id, players, cfg, options, seed, self.sizes)
        warm_learner_kernels()
        self.setup_s = time.perf_counter() - t0
        self.pool: list[tuple[int, Any]] = []  # (id, weights) of the snapshots, oldest first
        self._next_snapshot = 0
        self.env_steps = 0
        self.learner_steps = 0
        self.updates = 0
        self.games = 0
        self.deals: list[np.ndarray] = []  # every finished game's deal fingerprint
        self.prof = dict.fromkeys(("engine", "features", "forward", "sampling", "buffer",
                                   "update", "opponents"), 0.0)
        self.rollout_s = self.update_s = 0.0
        self.wait_s = 0.0  # the learner waiting for a pipelined rollout
        #: a rollout played but not learned from yet (pipeline), and what it was played with:
        #: the samplers' state before it, the weights and the league (a checkpoint replays it)
        self.pending: Rollout | None = None
        self.pending_from: list[tuple[dict[str, np.ndarray], dict[str, Any]]] = []
        self.pending_weights: Any = None
        self.pending_pool: list[tuple[int, Any]] = []

    # --- the samplers' games, for tests and tools (in-process samplers only) --------------
    @property
    def vec(self) -> Any:
        """The first in-process sampler's batch of games."""
        return self.samplers[0].vec

    # --- league ---------------------------------------------------------------------------
    def snapshot(self) -> None:
        """Add a frozen copy of the learner to the opponents (the newest ``pool_size``)."""
        if self.cfg["pool_size"] == 0:
            return
        if self.remote is None:
            weights: Any = copy.deepcopy(self.net)
        else:
            weights = state_arrays(self.net)
        self.pool.append((self._next_snapshot, weights))
        self._next_snapshot += 1
        if len(self.pool) > self.cfg["pool_size"]:
            self.pool.pop(0)  # the oldest; games keep their slot number

    # --- rollout --------------------------------------------------------------------------
    def weights(self) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray] | None]:
        """Copies of the learner's weights (network, critic) for the samplers."""
        return (state_arrays(self.net),
                None if self.critic is None else state_arrays(self.critic))

    def play(self, weights: Any, pool: list[tuple[int, Any]]) -> Rollout:
        """Every sampler plays ``n_steps`` batched steps with ``weights`` (from
        :meth:`weights`; ``None``: the samplers share the learner's network) against the league
        ``pool``; returns their merged samples (owning its arrays when pipelined). Runs in the
        sampler thread when pipelined: it touches only the samplers. Records what a checkpoint
        needs to play it again (:attr:`pending_from`)."""
        t_start = time.perf_counter()
        if self.remote is None:
            if self.pipeline:  # a serial run's checkpoint reads the samplers after it
                self.pending_from = [s.get_state() for s in self.samplers]
            parts = []
            for s in self.samplers:
                if weights is not None:
                    s.set_weights(*weights)
                s.sync_pool(pool)
                parts.append(s.rollout())
            batch = merge_rollouts(parts)  # views of the samplers' buffers: pipelined,
            # they write the next rollout into their other set while the learner reads this
        else:
            if weights is None:
                weights = self.weights()
            batch = merge_rollouts(self.remote.rollout(weights[0], weights[1], pool))
        self.pending_weights, self.pending_pool = weights, list(pool)
        batch.seconds = time.perf_counter() - t_start
        return batch

    def account(self, batch: Rollout) -> None:
        """Count a played rollout (steps, games, deals, time)."""
        for k, v in batch.prof.items():
            self.prof[k] += v
        self.env_steps += batch.env_steps
        self.learner_steps += batch.n
        self.games += int(batch.deals.size)
        self.deals.append(batch.deals)
        self.rollout_s += batch.seconds

    def rollout(self) -> int:
        """Play one rollout with the current weights (in this thread) and make it the next
        update's batch. Returns the number of learner samples."""
        batch = self.play(self.weights() if self.pipeline else None, self.pool)
        self.account(batch)
        self._take(batch)
        return batch.n

    def step(self, executor: Any = None, overlap: bool = True) -> dict[str, float] | None:
        """One iteration. Serial: play a rollout, update on it. Pipelined (``executor``: one
        sampler thread): play the next rollout in that thread with the weights before this
        update while the learner updates on the pending one (the first call only plays);
        ``overlap=False`` waits for the rollout before updating (same results, one thread
        busy at a time). Returns the update's statistics (``None`` when nothing was
        learned)."""
        if not self.pipeline:
            self.rollout()
            return self.update()
        pool = list(self.pool)
        if self.pending is None:
            batch = executor.submit(self.play, self.weights(), pool).result()
            self.account(batch)
            self.pending = batch
            return None
        fut = executor.submit(self.play, self.weights(), pool)
        if not overlap:
            fut.result()
        self._take(self.pending)
        self.pending = None
        stats = self.update()
        t0 = time.perf_counter()
        batch = fut.result()
        self.wait_s += time.perf_counter() - t0
        self.account(batch)
        self.pending = batch
        return stats

    def drain(self) -> dict[str, float] | None:
        """Learn from the pending rollout, if any (the end of a pipelined run)."""
        if self.pending is None:
            return None
        self._take(self.pending)
        self.pending = None
        return self.update()

    def _take(self, b: Rollout) -> None:
        """Make rollout ``b`` the next update's batch."""
        self.n_samples = b.n
        self.buf_x, self.buf_rows, self.buf_racts, self.buf_roff = b.x, b.rows, b.racts, b.roff
        self.buf_cx, self.buf_act, self.buf_logp, self.buf_val = b.cx, b.act, b.logp, b.val
        self.buf_rew, self.buf_phi, self.buf_done, self.buf_next = b.rew, b.phi, b.done, b.next
        self.boot, self.boot_phi = b.boot, b.boot_phi

    def close(self) -> None:
        """Stop the remote samplers (nothing to do in this process)."""
        if self.remote is not None:
            self.remote.close()

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
