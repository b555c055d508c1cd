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

import ctypes
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from card_envs.agents.net import NetPolicy, save_policy
from card_envs.core.errors import OptionError
from card_envs.core.registry import manifest, resolve_env_id
from card_envs.rl.ppo.run import OPPONENTS, PPORun

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
    games: int = 0                 # games finished in the returned rollouts
    duplicate_deals: int = 0       # of those, games whose deal an earlier one had (0)
    restarts: int = 0              # sampler processes Ray restarted (ray=...)

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
    if not isinstance(lg, dict) or set(lg) - set(OPPONENTS) or not all(
            isinstance(v, (int, float)) and np.isfinite(v) and v >= 0 for v in lg.values()) \
            or sum(lg.values()) <= 0:
        raise OptionError(f"setting league must map some of {list(OPPONENTS)} to weights "
                          f">= 0 (not all 0), got {lg!r}")


def _evaluate(run: PPORun, games: int, seed: int) -> dict[str, Any]:
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
              tune_malloc: bool = True, command: str | None = None, samplers: int = 1,
              ray: str | bool | None = None, **options: Any) -> PPOResult:
    """Train the project's PPO by self-play on ``env_id`` (module docstring).

    ``minutes`` bounds the wall time (evaluations not counted), ``steps`` the env steps (all
    moves; whichever ends first). ``settings`` override :data:`PPO_DEFAULTS` (and the game
    manifest's ``train.settings`` where they name the same keys); ``options`` are game options
    (the manifest's ``train.options`` fill in defaults). Writes ``history.json``,
    ``learning_curve.png``, ``checkpoints/step_<env steps>.safetensors`` and
    ``final.safetensors`` (+ ``.json``) to ``out_dir`` (refused if it holds a run, unless
    ``overwrite``). ``command``: the command line recorded with the weights.

    ``samplers``: the games are split between that many samplers (one rollout each per
    update). ``ray``: play the samplers as Ray actors (:mod:`card_envs.rl.ppo.ray`) on the Ray
    at this address (``"auto"``: the cluster of ``ray start`` on this machine; ``True`` or
    ``"local"``: the Ray this process is connected to, else a local one for the run); the
    learner stays in this process. Same seed, samplers and torch threads: same run, local or
    on Ray."""
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
    if isinstance(samplers, bool) or not isinstance(samplers, int) or \
            not 1 <= samplers <= cfg["num_envs"]:
        raise OptionError(f"samplers must be an integer in 1..num_envs ({cfg['num_envs']}), "
                          f"got {samplers!r}")
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
    remote = None
    run = None
    try:
        if ray:
            from card_envs.rl.ppo.ray import RaySamplers

            remote = RaySamplers(None if ray is True or ray == "local" else str(ray))
        run = PPORun(env_id, players, cfg, game_options, seed, samplers, remote)
        return _train(run, out, minutes, steps, seed, progress, command, plot_history)
    finally:
        torch.set_num_threads(old_threads)
        if run is not None:
            run.close()
        elif remote is not None:
            remote.close()


def _train(run: PPORun, out: Path, minutes: float | None, steps: int | None, seed: int,
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
                             "games": run.games, "updates": run.updates,
                             "wall_seconds": round(wall, 3),
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
    deals = np.concatenate(run.deals) if run.deals else np.zeros(0, np.uint64)
    dup = int(deals.size - np.unique(deals).size)
    summary = {"env_id": run.env_id, "players": run.n, "env_steps": run.env_steps,
               "learner_steps": run.learner_steps, "updates": run.updates,
               "wall_seconds": round(wall, 3), "rollout_seconds": round(run.rollout_s, 3),
               "update_seconds": round(run.update_s, 3), "eval_seconds": round(eval_s, 3),
               "setup_seconds": round(run.setup_s, 3),
               "env_steps_per_s": round(run.env_steps / wall, 1) if wall else 0.0,
               "profile": prof, "settings": cfg, "options": run.options, "seed": seed,
               "games": run.games, "duplicate_deals": dup, "samplers": len(run.sizes),
               "games_per_sampler": run.sizes,
               "ray": None if run.remote is None else {
                   "restarts": run.remote.restarts, "placement": run.remote.placement}}
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=str))
    return PPOResult(run.env_id, run.n, run.policy, out, final, history, run.learner_steps,
                     run.env_steps, run.updates, wall, run.rollout_s, run.update_s, eval_s,
                     prof, cfg, run.games, dup, summary["ray"]["restarts"] if summary["ray"]
                     else 0)
