"""card-envs' own PPO: self-play on the batched engine at the engine's speed (torch only, no
stable-baselines3).

>>> from card_envs.rl import train_ppo
>>> res = train_ppo("slide_v0", minutes=5, out_dir="runs/slide")           # doctest: +SKIP
>>> print(res.table())                                                     # doctest: +SKIP

User guide: ``docs/training.md``. The same network plays as the ``ppo`` agent
(:class:`card_envs.agents.net.NetPolicy`); the run saves it as ``final.safetensors`` (weights
only, no pickle) with a ``final.json`` beside it.

**Every move is a sample.** ``num_envs`` games of a :class:`~card_envs.core.vector.VectorEnv`
advance together. Per episode each game is either *self-play* (share ``self_play``: the
learner plays every seat, each seat its own trajectory) or *league* (one learner seat, every
other seat played by one opponent drawn by ``league`` weights: ``"snapshots"`` (a frozen copy
of the learner, ``pool_size`` newest, one taken every ``pool_every`` updates),
``"heuristic"`` (the game's heuristic agent), ``"random"``). At each step the learner's rows
(whatever seat is to move) go through one forward pass, each snapshot's rows through one forward
of that snapshot; random moves come from the engine's compiled sampler.

**Compact storage.** A sample keeps the raw observation (int8/int16), the int8 mask, the action,
its log-probability, the value and the game and seat it came from: the network's input
(:class:`~card_envs.core.features.PolicyInput`: the encoded observation and the features of the
legal actions only) is recomputed by compiled code for each minibatch. Trajectories are linked
per (game, seat) by compiled code: a seat's reward between two of its moves is credited to the
first; a trajectory cut by the end of a rollout is bootstrapped with the value of that seat's
view of the position at the cut.

**Update.** GAE(``gamma``, ``gae_lambda``), then ``epochs`` passes over shuffled minibatches of
``minibatch`` samples: clipped policy loss, value loss, entropy bonus, Adam, gradient-norm
clipping. ``shaping > 0`` adds the game's potential-based shaping (its manifest's
``train.potential``) to each seat's rewards, ``shaping * (gamma phi(s') - phi(s))`` with
``phi = 0`` at the end of a game, which telescopes over a game.
``critic="full"`` takes the values for GAE from a separate network over every seat's view of the
position (the learner's own view plus the others', in turn order; trained on the same returns,
kept out of the saved weights); the policy's own value head is still trained.

**Measured.** ``history.json`` rows and the result carry ``env_steps`` (all moves: learner and
opponents), ``learner_steps``, ``wall_seconds`` (the run without evaluations),
``rollout_seconds``, ``update_seconds``, ``eval_seconds`` (reported apart) and ``profile``
(seconds in engine, features, forward, sampling, buffer, update, opponents).

glibc returns large freed blocks to the system, so every big temporary of a forward pass
page-faults again (Slide's forward of 1024 rows: 17.0 ms instead of 3.4 ms here);
:func:`train_ppo` raises the
process's ``M_MMAP_THRESHOLD`` / ``M_TRIM_THRESHOLD`` (``mallopt``) while it runs
(``tune_malloc=False`` leaves them alone). The settings stay for the rest of the process.
"""

from __future__ import annotations

import copy
import ctypes
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from card_envs.agents.net import (
    NetPolicy,
    as_tensors,
    sample_segments,
    save_policy,
    segment_log_softmax,
)
from card_envs.agents.registry import make_agent
from card_envs.core.errors import OptionError
from card_envs.core.features import feature_module
from card_envs.core.manifest import load
from card_envs.core.registry import manifest, resolve_env_id
from card_envs.core.vector import VectorEnv
from card_envs.rl.trajectories import credit, gae, gather_rows, link, observer

__all__ = ["PPO_DEFAULTS", "PPOResult", "train_ppo"]

#: settings of :func:`train_ppo` (any can be overridden with ``settings={...}``)
PPO_DEFAULTS: dict[str, Any] = {
    "num_envs": 1024,
    "n_steps": 32,            # batched steps per rollout: about num_envs * n_steps moves
    "minibatch": 4096,
    "epochs": 1,
    "learning_rate": 3e-3,
    "anneal_lr": True,        # learning rate falls linearly to 0 over the budget
    "gamma": 0.995,
    "gae_lambda": 0.95,
    "clip_range": 0.2,
    "ent_coef": 0.01,
    "vf_coef": 0.5,
    "max_grad_norm": 0.5,
    "hidden": (128, 128),
    "scorer": 32,
    "one_hot_max": 40,
    "one_hot_budget": 1024,
    "self_play": 0.75,        # share of games where the learner plays every seat
    "league": {"snapshots": 0.7, "heuristic": 0.15, "random": 0.15},
    "pool_every": 10,
    "pool_size": 2,
    "shaping": 0.0,
    "critic": "own",          # "full": the value reads every seat's view (training only)
    "eval_games": 200,
    "evals": 6,
}

_SNAP = 3  # owner codes: 0 learner, 1 random, 2 heuristic, 3 + k snapshot k
_OPPONENTS = ("snapshots", "heuristic", "random")


def _set_malloc() -> None:
    """Keep freed large blocks in the heap (module docstring); glibc only."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 1 << 30)  # M_MMAP_THRESHOLD
        libc.mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        pass


# ------------------------------------------------------------------------------------------
# the run
# ------------------------------------------------------------------------------------------
@dataclass
class PPOResult:
    """What :func:`train_ppo` returns."""

    env_id: str
    num_players: int
    policy: NetPolicy
    out_dir: Path
    final_path: Path
    history: list[dict[str, Any]]
    learner_steps: int
    env_steps: int
    updates: int
    wall_seconds: float
    rollout_seconds: float
    update_seconds: float
    eval_seconds: float
    profile: dict[str, float]
    config: dict[str, Any] = field(default_factory=dict)

    @property
    def env_steps_per_second(self) -> float:
        """All moves (learner and opponents) over the whole wall time, updates included."""
        return self.env_steps / self.wall_seconds if self.wall_seconds else 0.0

    @property
    def final(self) -> dict[str, Any]:
        """The last evaluation (a history row)."""
        return self.history[-1]

    def table(self) -> str:
        """The speed and the final evaluation as text."""
        from card_envs.rl.evaluation import win_rate_lines

        f = self.final
        lines = [f"{self.env_id}, {self.num_players} players: {self.env_steps:,} env steps "
                 f"({self.learner_steps:,} learner), {self.updates} updates in "
                 f"{self.wall_seconds:.0f} s: {self.env_steps_per_second:,.0f} env steps/s "
                 f"end to end (evaluations apart: {self.eval_seconds:.0f} s)"]
        return "\n".join(lines + win_rate_lines(f))


def _check_settings(cfg: dict[str, Any]) -> None:
    ints = {"num_envs": (2, 1 << 16), "n_steps": (1, 1 << 14), "minibatch": (16, 1 << 22),
            "epochs": (1, 100), "scorer": (0, 4096), "one_hot_max": (0, 1 << 16),
            "one_hot_budget": (0, 1 << 20), "pool_every": (1, 1 << 20),
            "pool_size": (0, 64), "eval_games": (0, 1 << 20), "evals": (0, 1000)}
    for k, (lo, hi) in ints.items():
        v = cfg[k]
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not lo <= v <= hi:
            raise OptionError(f"setting {k} must be an integer in {lo}..{hi}, got {v!r}")
    floats = {"learning_rate": (0, 1), "gamma": (0, 1), "gae_lambda": (0, 1),
              "clip_range": (0, 10), "ent_coef": (0, 10), "vf_coef": (0, 100),
              "max_grad_norm": (0, 1e6), "self_play": (0, 1), "shaping": (0, 100)}
    for k, (lo, hi) in floats.items():
        v = cfg[k]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v) \
                or not lo <= v <= hi:
            raise OptionError(f"setting {k} must be a number in [{lo}, {hi}], got {v!r}")
    if cfg["critic"] not in ("own", "full"):
        raise OptionError(f"setting critic must be 'own' or 'full', got {cfg['critic']!r}")
    if not isinstance(cfg["anneal_lr"], bool):
        raise OptionError(f"setting anneal_lr must be true or false, got {cfg['anneal_lr']!r}")
    h = cfg["hidden"]
    if not isinstance(h, (list, tuple)) or not h or not all(
            isinstance(w, int) and 1 <= w <= 8192 for w in h):
        raise OptionError(f"setting hidden must be a list of widths in 1..8192, got {h!r}")
    lg = cfg["league"]
    if not isinstance(lg, dict) or set(lg) - set(_OPPONENTS) or not all(
            isinstance(v, (int, float)) and np.isfinite(v) and v >= 0 for v in lg.values()) \
            or sum(lg.values()) <= 0:
        raise OptionError(f"setting league must map some of {list(_OPPONENTS)} to weights "
                          f">= 0 (not all 0), got {lg!r}")


class _Run:
    """State of one training run (:func:`train_ppo`)."""

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
        w = {k: float(cfg["league"].get(k, 0.0)) for k in _OPPONENTS}
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
        kind = self.rng.choice(_OPPONENTS, p=[w[k] / tot for k in _OPPONENTS])
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


def _evaluate(run: _Run, games: int, seed: int) -> dict[str, Any]:
    from card_envs.rl.evaluation import evaluate_batched

    out: dict[str, Any] = {}
    opps = ["random"] + (["heuristic"] if manifest(run.env_id).heuristic else [])
    for opp in opps:
        r = evaluate_batched(run.policy, run.env_id, opp, games,
                             num_players=run.n, seed=seed, **run.options)
        for k in ("win_rate", "ci_low", "ci_high", "games"):
            out[f"{opp}_{k}"] = r[k]
    return out


def train_ppo(env_id: str, minutes: float | None = 10.0, steps: int | None = None,
              players: int = 2, seed: int = 0, out_dir: str | Path = "runs/ppo",
              settings: dict[str, Any] | None = None, progress: bool = True,
              torch_threads: int | None = None, overwrite: bool = False,
              tune_malloc: bool = True, command: str | None = None,
              **options: Any) -> PPOResult:
    """Train the project's PPO by self-play on ``env_id`` (module docstring).

    ``minutes`` bounds the wall time (evaluations not counted), ``steps`` the env steps (all
    moves; whichever ends first). ``settings`` override :data:`PPO_DEFAULTS` (and the game
    manifest's ``train.settings`` where they name the same keys); ``options`` are game options
    (the manifest's ``train.options`` fill in defaults). Writes ``history.json``,
    ``learning_curve.png``, ``checkpoints/step_<env steps>.safetensors`` and
    ``final.safetensors`` (+ ``.json``) to ``out_dir`` (refused if it holds a run, unless
    ``overwrite``). ``command``: the command line recorded with the weights."""
    from card_envs.rl.evaluation import plot_history
    from card_envs.rl.runs import prepare_out_dir

    if minutes is None and steps is None:
        raise OptionError("give minutes or steps")
    env_id = resolve_env_id(env_id)
    spec = manifest(env_id).train
    cfg = dict(PPO_DEFAULTS)
    cfg.update({k: v for k, v in spec.settings.items() if k in PPO_DEFAULTS})
    unknown = set(settings or {}) - set(PPO_DEFAULTS)
    if unknown:
        raise OptionError(f"unknown settings {sorted(unknown)}; known: {sorted(PPO_DEFAULTS)}")
    cfg.update(settings or {})
    if isinstance(cfg["hidden"], tuple):
        cfg["hidden"] = list(cfg["hidden"])
    _check_settings(cfg)
    if "num_players" in options:
        raise OptionError("set the number of seats with players=..., not num_players")
    game_options = {**spec.options, **options}
    out = Path(out_dir)
    prepare_out_dir(out, overwrite)
    (out / "checkpoints").mkdir(parents=True, exist_ok=True)
    if tune_malloc:
        _set_malloc()
    old_threads = torch.get_num_threads()
    if torch_threads is not None:
        torch.set_num_threads(int(torch_threads))
    try:
        run = _Run(env_id, players, cfg, game_options, seed)
        return _train(run, out, minutes, steps, seed, progress, command, plot_history)
    finally:
        torch.set_num_threads(old_threads)


def _train(run: _Run, out: Path, minutes: float | None, steps: int | None, seed: int,
           progress: bool, command: str | None, plot_history: Any) -> PPOResult:
    from card_envs.core.progress import tqdm_class

    cfg = run.cfg
    budget = None if minutes is None else 60.0 * minutes
    evals = cfg["evals"]
    eval_seed = 12345 + seed
    history: list[dict[str, Any]] = []
    eval_s = 0.0
    wall = 0.0
    bar = None
    if progress:
        total = steps if budget is None else round(budget)
        bar = tqdm_class()(total=total, unit="step" if budget is None else "s",
                           desc=f"train {run.env_id}", file=sys.stderr, dynamic_ncols=True)

    def row(stats: dict[str, float]) -> dict[str, Any]:
        nonlocal eval_s
        t0 = time.perf_counter()
        r: dict[str, Any] = {"env_steps": run.env_steps, "learner_steps": run.learner_steps,
                             "updates": run.updates, "wall_seconds": round(wall, 3),
                             "rollout_seconds": round(run.rollout_s, 3),
                             "update_seconds": round(run.update_s, 3),
                             "env_steps_per_s": round(run.env_steps / wall, 1) if wall else 0.0}
        if cfg["eval_games"]:
            r.update(_evaluate(run, cfg["eval_games"], eval_seed))
        ckpt = out / "checkpoints" / f"step_{run.env_steps}.safetensors"
        save_policy(run.policy, ckpt)
        r["checkpoint"] = str(ckpt.relative_to(out))
        r.update({k: round(v, 5) for k, v in stats.items()})
        dt = time.perf_counter() - t0
        eval_s += dt
        r["eval_seconds"] = round(eval_s, 3)
        history.append(r)
        (out / "history.json").write_text(json.dumps(history, indent=1))
        if cfg["eval_games"]:
            plot_history(history, out / "learning_curve.png",
                         f"{run.env_id}, {run.n} players (card-envs PPO)")
        if bar is not None and cfg["eval_games"]:
            bar.set_postfix({o: f"{r[f'{o}_win_rate']:.2f}" for o in ("random", "heuristic")
                             if f"{o}_win_rate" in r}, refresh=False)
        return r

    row({})
    t_run, eval_before = time.perf_counter(), eval_s

    def run_wall() -> float:
        """Seconds since the first evaluation, without the evaluations since."""
        return time.perf_counter() - t_run - (eval_s - eval_before)

    next_eval = (budget or 0) / max(evals, 1) if budget is not None else None
    next_eval_steps = (steps or 0) // max(evals, 1) if budget is None else None
    next_snap = cfg["pool_every"]
    stats: dict[str, float] = {}
    last_iter = 0.0
    while True:
        wall = run_wall()
        if steps is not None and run.env_steps >= steps:
            break
        if budget is not None and wall + last_iter > budget:
            break
        if cfg["anneal_lr"]:
            done = max(wall / budget if budget else 0.0,
                       run.env_steps / steps if steps else 0.0)
            for group in run.opt.param_groups:
                group["lr"] = cfg["learning_rate"] * max(0.0, 1.0 - done)
        t0 = time.perf_counter()
        run.rollout()
        stats = run.update()
        last_iter = time.perf_counter() - t0
        if run.updates >= next_snap:
            run.snapshot()
            next_snap += cfg["pool_every"]
        wall = run_wall()
        if bar is not None:
            bar.n = min(run.env_steps, bar.total) if budget is None else min(round(wall),
                                                                              bar.total)
            bar.set_description(f"train {run.env_id} {run.env_steps / max(wall, 1e-9):,.0f} "
                                "steps/s", refresh=False)
            bar.refresh()
        if evals and ((next_eval is not None and wall >= next_eval)
                      or (next_eval_steps and run.env_steps >= next_eval_steps)):
            row(stats)
            if next_eval is not None:
                next_eval += budget / evals
            else:
                next_eval_steps += steps // evals
    wall = run_wall()
    if history[-1]["updates"] != run.updates:
        row(stats)
    if bar is not None:
        bar.n = bar.total
        bar.close()
    final_info = {"command": command, "seed": seed, "settings": cfg,
                  "env_steps": run.env_steps, "learner_steps": run.learner_steps,
                  "wall_seconds": round(wall, 1),
                  "final_evaluation": {k: v for k, v in history[-1].items()
                                       if k.split("_")[0] in ("random", "heuristic")}}
    final = save_policy(run.policy, out / "final.safetensors", final_info)
    prof = {k: round(v, 3) for k, v in run.prof.items()}
    summary = {"env_id": run.env_id, "players": run.n, "env_steps": run.env_steps,
               "learner_steps": run.learner_steps, "updates": run.updates,
               "wall_seconds": round(wall, 3), "rollout_seconds": round(run.rollout_s, 3),
               "update_seconds": round(run.update_s, 3), "eval_seconds": round(eval_s, 3),
               "setup_seconds": round(run.setup_s, 3),
               "env_steps_per_s": round(run.env_steps / wall, 1) if wall else 0.0,
               "profile": prof, "settings": cfg, "options": run.options, "seed": seed}
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=str))
    return PPOResult(run.env_id, run.n, run.policy, out, final, history, run.learner_steps,
                     run.env_steps, run.updates, wall, run.rollout_s, run.update_s, eval_s,
                     prof, cfg)
