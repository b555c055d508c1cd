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

**Pipeline** (``pipeline=True``, the default). The samplers play the next rollout in their own
thread, with a copy of the weights from before the current update, while the learner updates
on the rollout before it: sampling and learning overlap, each on its share of the cores
(:mod:`card_envs.rl.threads`), and a rollout's samples are one update older than the network
that learns from them (their log-probabilities are the ones they were played with, as PPO's
ratio needs). The schedule is fixed, so results do not depend on timing or on the number of
cores: with fewer than two threads allowed the halves take turns and give the same run.
``pipeline=False`` plays and learns in turn with the same weights (the runs before this
setting existed).

**Stop and resume.** Ctrl-C or SIGTERM end the run after the current iteration with a
checkpoint (``resume/``, :mod:`card_envs.rl.ppo.checkpoint`); ``resume=True``
(``--resume``) continues it, and a run stopped and resumed ends with the same weights and
history as one never stopped (same torch threads). Checkpoints are also written at every
evaluation and every ``checkpoint_minutes``; a kill at any moment leaves the last one whole.

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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numba
import numpy as np
import torch

from card_envs.core.errors import OptionError
from card_envs.core.registry import manifest, resolve_env_id
from card_envs.rl.ppo.loop import PPOResult, Trainer
from card_envs.rl.ppo.run import OPPONENTS, PPORun
from card_envs.rl.runs import SafeStop

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
    "pipeline": True,         # the next rollout is played while the learner updates
}



def _set_malloc() -> None:
    """Keep freed large blocks in the heap (module docstring); glibc only."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 1 << 30)  # M_MMAP_THRESHOLD
        libc.mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        pass


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
    for key in ("anneal_lr", "pipeline"):
        if not isinstance(cfg[key], bool):
            raise OptionError(f"setting {key} must be true or false, got {cfg[key]!r}")
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


def train_ppo(env_id: str, minutes: float | None = 10.0, steps: int | None = None,
              players: int = 2, seed: int = 0, out_dir: str | Path = "runs/ppo",
              settings: dict[str, Any] | None = None, progress: bool = True,
              torch_threads: int | None = None, overwrite: bool = False,
              tune_malloc: bool = True, command: str | None = None, samplers: int = 1,
              ray: str | bool | None = None, threads: int | None = None,
              resume: bool = False, checkpoint_minutes: float = 5.0,
              **options: Any) -> PPOResult:
    """Train the project's PPO by self-play on ``env_id`` (module docstring).

    ``minutes`` bounds the wall time (evaluations not counted), ``steps`` the env steps (all
    moves; whichever ends first). ``settings`` override :data:`PPO_DEFAULTS` (and the game
    manifest's ``train.settings`` where they name the same keys); ``options`` are game options
    (the manifest's ``train.options`` fill in defaults). Writes ``history.json``,
    ``learning_curve.png``, ``checkpoints/step_<env steps>.safetensors``, ``resume/`` and
    ``final.safetensors`` (+ ``.json``) to ``out_dir`` (refused if it holds a run, unless
    ``overwrite`` or ``resume``). ``command``: the command line recorded with the weights.

    ``threads`` caps the threads the run keeps busy and ``torch_threads`` the learner's torch
    threads (:func:`card_envs.rl.threads.plan_threads`; numba's and the process's CPU limits
    are caps too). ``resume=True`` continues the run in ``out_dir`` from its last checkpoint
    (:mod:`card_envs.rl.ppo.checkpoint`: written at every evaluation, every
    ``checkpoint_minutes`` and when the run is stopped); the same game, options, seed, settings
    and samplers are required, the budget may differ. Ctrl-C or SIGTERM stop the run at the
    end of the current iteration with a checkpoint: the result's ``stopped`` names the signal.

    ``samplers``: the games are split between that many samplers (one rollout each per
    update). ``ray``: play the samplers as Ray actors (:mod:`card_envs.rl.ppo.ray`) on the Ray
    at this address (``"auto"``: the cluster of ``ray start`` on this machine; ``True`` or
    ``"local"``: the Ray this process is connected to, else a local one for the run); the
    learner stays in this process (no resume). Same seed, samplers and torch threads: same run,
    local or on Ray, pipelined or not, stopped and resumed or not."""
    from card_envs.rl.evaluation import plot_history
    from card_envs.rl.ppo.checkpoint import check_resume, identity
    from card_envs.rl.runs import prepare_out_dir
    from card_envs.rl.threads import plan_threads

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
    if isinstance(checkpoint_minutes, bool) or not isinstance(checkpoint_minutes, (int, float)) \
            or not 0 < checkpoint_minutes <= 1e6:
        raise OptionError(f"checkpoint_minutes must be a number in (0, 1e6], got "
                          f"{checkpoint_minutes!r}")
    plan = plan_threads(cfg["pipeline"], threads, torch_threads)
    game_options = {**spec.options, **options}
    out = Path(out_dir)
    if resume:
        if ray:
            raise OptionError("resume needs the samplers in this process (not ray=...)")
        check_resume(out, identity(env_id, players, game_options, seed, cfg, samplers))
    else:
        prepare_out_dir(out, overwrite)
    (out / "checkpoints").mkdir(parents=True, exist_ok=True)
    if tune_malloc:
        _set_malloc()
    old_threads = torch.get_num_threads()
    old_numba = numba.get_num_threads()
    torch.set_num_threads(plan.learner)
    remote = None
    run = None
    executor = None
    try:
        if ray:
            from card_envs.rl.ppo.ray import RaySamplers

            remote = RaySamplers(None if ray is True or ray == "local" else str(ray))
        run = PPORun(env_id, players, cfg, game_options, seed, samplers, remote)
        if cfg["pipeline"]:
            executor = ThreadPoolExecutor(1, thread_name_prefix="ppo-sampler",
                                          initializer=numba.set_num_threads,
                                          initargs=(plan.sampler,))
        else:
            numba.set_num_threads(plan.sampler)
        trainer = Trainer(run, out, minutes, steps, seed, progress, command, plot_history,
                           plan, executor, 60.0 * checkpoint_minutes)
        if resume:
            trainer.resume()
        with SafeStop() as stop:
            return trainer.train(stop)
    finally:
        if executor is not None:
            executor.shutdown()
        torch.set_num_threads(old_threads)
        numba.set_num_threads(old_numba)
        if run is not None:
            run.close()
        elif remote is not None:
            remote.close()
