"""PPO self-play training on the batched engine (MaskablePPO from sb3-contrib).

>>> from card_envs.rl import train
>>> res = train("slide_v0", minutes=5, out_dir="runs/slide")                # doctest: +SKIP
>>> print(res.table())                                                     # doctest: +SKIP

User guide: ``docs/training.md``. Needs the ``train`` extra (torch, stable-baselines3,
sb3-contrib, tensorboard).

**Learner and opponents.** The learner plays one seat of each of ``num_envs`` games of a
:class:`~card_envs.rl.sb3.BatchedVecEnv` (seats alternate between games). The other seats
are drawn per episode from a self-play pool (:class:`~card_envs.rl.sb3.selfplay.SelfPlayPool`):
``"random"`` plus the newest ``pool_size`` frozen snapshots of the learner
(:class:`~card_envs.rl.sb3.PolicyOpponent`, sampling), a snapshot taken every ``pool_every``
PPO updates. ``random_weight`` is the share of episodes against random
(the rest is split evenly between the snapshots).

**Budget.** ``minutes`` bounds the wall time of the whole run (rollouts, updates and periodic
evaluations, not the final evaluation): an update (or a periodic evaluation) that would not end
in time is not started. ``steps`` bounds the learner's environment steps instead (the run is
then deterministic for a seed on CPU).

**Evaluation.** Every ``eval_every`` learner steps (default: ``evals`` evaluations spread over
the budget), at the start and at the end, the current policy plays ``eval_games`` arena games
(:func:`~card_envs.arena.run_arena`, duplicate deals, same deals every time) as
``PPOAgent(env_id, model=model)`` (greedy) against ``"random"`` and ``"heuristic"`` in every
other seat. Win rates and 95% Wilson intervals go to TensorBoard (``eval/*``), to
``history.csv`` / ``history.json`` and to ``learning_curve.png``; the model is saved to
``checkpoints/step_<learner steps>.zip`` at each evaluation and to ``final.zip``. The
evaluation saves and restores the global RNGs, so it never changes the training.

**Throughput.** ``env steps/s`` is measured while collecting rollouts: learner and opponent
moves played (``BatchedVecEnv.opponent_steps``) over the wall time of ``collect_rollouts``
(policy forward passes and opponent policies included, PPO updates excluded).

**Per-game defaults** come from the game's manifest, ``manifest(env_id).train``
(:class:`~card_envs.core.manifest.TrainSpec`): ``options`` (game options for training and its
evaluations, e.g. Op Glad IJs' ``max_turned=200``), ``settings`` (overrides of
:data:`DEFAULTS`), ``features`` and ``potential`` (import paths, below).

**Observations** go through :class:`~card_envs.rl.sb3.policy.ObsFeatures`: ``symlog(x) = sign(x)
log(1 + |x|)`` of every entry (the raw int observations range from 0/1 flags to scores in the
hundreds) plus a one-hot code of the entries with a small declared range (card codes, cells),
plus, for the games whose manifest names ``train.features`` (Isflak, Slide:
:mod:`card_envs.core.features`), the game's action-aligned features: a feature vector per action
computed from the observation alone (Isflak: the card a move lands on and what is in reach
from there; Slide: the grid after a push, scored).
:class:`~card_envs.rl.sb3.policy.ActionFeaturePolicy` scores them with one small network shared by
all actions, added to the MLP's logits.

**Reward shaping** (``shaping``, on for Isflak and Slide in their manifests' settings):
potential-based (:class:`~card_envs.rl.sb3.shaping.PotentialShaping` with the manifest's
``train.potential``), so a whole game's shaped return is its true return (the shaping
telescopes to ``-c phi(s_0) = 0``); it gives every move a signal instead of +-1 at the end.
``heuristic_weight`` adds the game's heuristic agent to the training opponents
(:class:`~card_envs.rl.sb3.AgentOpponent`; default 0).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.utils import set_random_seed
    from stable_baselines3.common.vec_env import VecNormalize
except ImportError as e:  # pragma: no cover - depends on the install
    raise ImportError("card_envs.rl.sb3.train needs the train extra: "
                      "pip install 'card-envs[train]'") from e

import numpy as np

from card_envs.core.features import has_features
from card_envs.core.manifest import TrainSpec
from card_envs.core.registry import env_class, manifest, resolve_env_id
from card_envs.rl.evaluation import EVAL_OPPONENTS, evaluate, plot_history, win_rate_lines
from card_envs.rl.runs import SafeStop, prepare_out_dir, resume_command, write_json
from card_envs.rl.sb3.buffers import ZeroCopyRolloutBuffer, link
from card_envs.rl.sb3.callback import SelfPlayCallback
from card_envs.rl.sb3.checkpoint import (
    load_checkpoint,
    read_checkpoint,
    run_identity,
    save_checkpoint,
)
from card_envs.rl.sb3.policy import ActionFeaturePolicy, MaskedPolicy, ObsFeatures
from card_envs.rl.sb3.selfplay import AgentOpponent, SelfPlayPool
from card_envs.rl.sb3.shaping import PotentialShaping, game_potential
from card_envs.rl.sb3.vec_env import BatchedVecEnv

__all__ = ["DEFAULTS", "EVAL_OPPONENTS", "TrainResult", "evaluate", "game_features",
           "plot_history", "policy_kwargs", "policy_spec", "train", "train_spec"]

#: PPO and self-play defaults (any of them can be passed to :func:`train`).
DEFAULTS: dict[str, Any] = {
    "num_envs": 64,
    "n_steps": 64,           # per game and update: 4096 samples per update at 64 games
    "batch_size": 1024,
    "n_epochs": 4,
    "learning_rate": 3e-4,
    "gamma": 0.995,
    "gae_lambda": 0.95,
    "clip_range": 0.2,
    "ent_coef": 0.01,
    "vf_coef": 0.5,
    "max_grad_norm": 0.5,
    "net_arch": (128, 128),
    "one_hot_max": 40,       # one-hot code observation entries with 3..40 values (0: none)
    "embed_dim": 0,          # > 0: a shared first layer of that width (ObsFeatures)
    "pool_every": 10,        # PPO updates between two snapshots of the learner
    "pool_size": 2,          # newest snapshots kept in the pool (plus "random")
    "random_weight": 0.5,    # share of episodes against "random"
    "heuristic_weight": 0.0,  # share of episodes against the game's "heuristic" agent
    "eval_games": 200,
    "evals": 8,
    "normalize_reward": None,  # VecNormalize the rewards (None: only with reward_mode="points")
    "game_features": True,   # observations carry the game's features (features.py), if any
    "action_head": True,     # per-action features scored by a shared net (ActionFeaturePolicy)
    "scorer_arch": (64,),    # that shared per-action scorer's hidden layers
    "context_dim": 8,        # state context fed to the scorer from the policy MLP (0: none)
    "shaping": 0.0,          # > 0: potential-based reward shaping (manifest train.potential)
}

def train_spec(env_id: str) -> TrainSpec:
    """The game's training defaults: its manifest's ``train`` (options, settings, features,
    potential)."""
    return manifest(env_id).train


def game_features(env_id: str, cfg: dict[str, Any] | None = None, **options: Any
                  ) -> dict[str, Any] | None:
    """``{"env_id", "options"}`` naming the game's features (``card_envs/<game>/features.py``,
    :class:`~card_envs.core.features.Features`) for these game options, or ``None`` (the game
    has none, or the setting ``game_features`` is off: the observation alone)."""
    cfg = {**DEFAULTS, **(cfg or {})}
    if not cfg["game_features"] or not has_features(env_class(env_id).game_class):
        return None
    return {"env_id": env_id, "options": dict(options)}


def policy_kwargs(cfg: dict[str, Any] | None = None,
                  features: dict[str, Any] | None = None) -> dict[str, Any]:
    """MaskablePPO ``policy_kwargs`` for the settings ``cfg`` (default :data:`DEFAULTS`) and
    the game features ``features`` (from :func:`game_features`; ``None``: none)."""
    cfg = {**DEFAULTS, **(cfg or {})}
    fx: dict[str, Any] = {"one_hot_max": int(cfg["one_hot_max"]),
                          "embed_dim": int(cfg["embed_dim"])}
    out: dict[str, Any] = {"net_arch": list(cfg["net_arch"]),
                           "features_extractor_class": ObsFeatures,
                           "features_extractor_kwargs": fx}
    if features is not None:
        fx["features"] = {"env_id": features["env_id"],
                          "options": dict(features.get("options") or {})}
        if cfg["action_head"]:
            out["scorer_arch"] = [int(h) for h in cfg["scorer_arch"]]
            out["context_dim"] = int(cfg["context_dim"])
    return out


def policy_spec(env_id: str, cfg: dict[str, Any] | None = None, **options: Any
                ) -> tuple[Any, dict[str, Any]]:
    """``(policy, policy_kwargs)`` for MaskablePPO on ``env_id`` with game ``options``:
    :class:`ActionFeaturePolicy` when the game has features (and ``game_features`` and
    ``action_head`` are on), else :class:`MaskedPolicy`. The environment must then carry the
    features (``BatchedVecEnv(features=True)``)."""
    cfg = {**DEFAULTS, **(cfg or {})}
    kw = policy_kwargs(cfg, game_features(env_id, cfg, **options))
    return (ActionFeaturePolicy if "scorer_arch" in kw else MaskedPolicy), kw


# ------------------------------------------------------------------------------------------
# the run
# ------------------------------------------------------------------------------------------
@dataclass
class TrainResult:
    """What :func:`train` returns."""

    env_id: str
    num_players: int
    model: Any
    out_dir: Path
    final_path: Path
    history: list[dict[str, Any]]
    learner_steps: int
    env_steps: int                 # learner + opponent moves
    updates: int
    seconds: float                 # wall time of the run (without the final evaluation)
    rollout_seconds: float         # of which collecting rollouts
    env_steps_per_second: float    # while collecting rollouts (measured)
    config: dict[str, Any] = field(default_factory=dict)
    stopped: str | None = None     # the signal that stopped the run (SIGINT, SIGTERM)
    checkpoint: Path | None = None  # the model of the last checkpoint (resume=True)
    resume_hint: str | None = None  # how to continue a stopped run

    def stop_line(self) -> str:
        """One line for a stopped run: what was saved and how to continue it."""
        return (f"stopped by {self.stopped} at {self.learner_steps:,} learner steps: saved "
                f"{self.out_dir} ({self.checkpoint.relative_to(self.out_dir).parent}); "
                f"continue with: {self.resume_hint}")

    @property
    def final(self) -> dict[str, Any]:
        """The last evaluation (a history row)."""
        return self.history[-1]

    def table(self) -> str:
        """The final evaluation and the throughput as text."""
        f = self.final
        lines = [f"{self.env_id}, {self.num_players} players: {self.learner_steps:,} learner "
                 f"steps, {self.env_steps:,} env steps, {self.updates} updates in "
                 f"{self.seconds:.0f} s", *win_rate_lines(f)]
        wall = f.get("wall_seconds") or 0.0
        if wall:
            lines.append(f"end to end: {f['env_steps'] / wall:,.0f} env steps/s (all moves over "
                         f"the run's wall time, updates included, evaluations apart)")
        lines.append(f"rollout throughput: {self.env_steps_per_second:,.0f} env steps/s "
                     f"(learner + opponent moves while collecting rollouts)")
        return "\n".join(lines)


def train(env_id: str, minutes: float | None = 10.0, steps: int | None = None,
          num_envs: int | None = None, players: int = 2, seed: int = 0,
          out_dir: str | Path = "runs/train", eval_every: int | None = None,
          eval_games: int | None = None, pool_every: int | None = None,
          progress: bool = True, torch_threads: int | None = None, verbose: int = 0,
          ppo: dict[str, Any] | None = None, device: str = "cpu", overwrite: bool = False,
          resume: bool = False, command: str | None = None, **options: Any) -> TrainResult:
    """Train MaskablePPO by self-play on ``env_id`` (module docstring) and return the result.

    ``minutes`` (wall time) or ``steps`` (learner env steps; set ``minutes=None``, or both:
    whichever ends first) bound the run. ``eval_every``: learner steps between evaluations
    (default: ``evals`` evaluations over the budget). ``pool_every``: PPO updates between
    snapshots. ``ppo``: overrides of :data:`DEFAULTS` (PPO hyper-parameters and ``net_arch``,
    ``pool_size``, ``random_weight``, ``evals``, ``eval_seed``; the manifest's
    ``train.settings`` are the game's defaults). ``options``: game options (``reward_mode``,
    ...; the manifest's ``train.options`` fill in per-game defaults). ``torch_threads``
    calls ``torch.set_num_threads`` (1 for bit-exact reproducibility across machines).
    ``device``: torch's device for the learner (``"cpu"``, ``"cuda"``, ``"auto"``). An
    ``out_dir`` that already holds a run is refused (its checkpoints and TensorBoard logs would
    mix with the new ones) unless ``overwrite=True``, which deletes that run first.

    **Stopping and resuming.** Each evaluation also saves a resumable checkpoint
    (:mod:`card_envs.rl.sb3.checkpoint`). SIGINT (Ctrl-C) and SIGTERM stop the run at the next
    environment step: the rollout under way is dropped, a checkpoint of the last update is
    saved and ``train`` returns with ``stopped`` (the signal's name), ``checkpoint`` and
    ``stop_line()`` (what was saved and how to continue: ``command``, the command line that
    started the run, with ``--resume``, if given). A second Ctrl-C raises
    ``KeyboardInterrupt`` at once. ``resume=True`` continues the run in ``out_dir`` from its
    last checkpoint: the weights, the optimizer's state, the learner's steps (the steps budget
    stays the original one, so SB3's schedules go on where they were), the PPO update count,
    the self-play snapshots, the reward normalisation, the global RNGs, the evaluations'
    schedule and the history (``minutes`` counts the run's time before the stop too, and may
    be raised to go on). It is not exact: the games under way are not saved (the resumed run
    deals new ones), nor is the rollout the stop cut short. A folder of another game, game
    version, seat count, option, seed or setting, or a missing or damaged checkpoint, is
    refused with one line (``ValueError``, ``FileNotFoundError``)."""
    if minutes is None and steps is None:
        raise ValueError("give minutes or steps")
    if resume and overwrite:
        raise ValueError("resume and overwrite exclude each other")
    env_id = resolve_env_id(env_id)
    spec = train_spec(env_id)
    cfg = {**DEFAULTS, **spec.settings}
    unknown = set(ppo or {}) - set(cfg) - {"eval_seed"}
    if unknown:
        raise ValueError(f"unknown ppo settings {sorted(unknown)}; known: {sorted(cfg)}")
    cfg.update(ppo or {})
    for k, v in (("num_envs", num_envs), ("eval_games", eval_games), ("pool_every", pool_every)):
        if v is not None:
            cfg[k] = v
    if "num_players" in options:
        raise ValueError("set the number of seats with players=..., not num_players")
    game_options = {**spec.options, **options}
    cfg.update(env_id=env_id, players=players, seed=seed, minutes=minutes, steps=steps,
               eval_every=eval_every, options=game_options)

    out = Path(out_dir)
    ident = run_identity(cfg)
    if resume:
        saved, history = read_checkpoint(out, ident)
    else:
        prepare_out_dir(out, overwrite)
    (out / "checkpoints").mkdir(parents=True, exist_ok=True)
    if torch_threads is not None:
        torch.set_num_threads(torch_threads)
    set_random_seed(seed)
    torch.manual_seed(seed)

    heuristic = None
    if cfg["heuristic_weight"] > 0:
        heuristic = AgentOpponent("heuristic", env_id, seed=seed + 7919, num_players=players,
                                  **game_options)
    pool = SelfPlayPool(cfg["pool_size"], cfg["random_weight"], heuristic,
                        cfg["heuristic_weight"])
    with warnings.catch_warnings():  # BatchedVecEnv has no render_mode attribute
        warnings.filterwarnings("ignore", message=".*render_mode")
        feats = game_features(env_id, cfg, num_players=players, **game_options)
        venv = BatchedVecEnv(env_id, cfg["num_envs"], opponents=pool.pool, seed=seed,
                             features=feats is not None, num_players=players, **game_options)
    env: Any = venv
    potential = game_potential(env_id) if cfg["shaping"] else None
    if potential is not None:
        env = PotentialShaping(env, potential, players, cfg["shaping"], cfg["gamma"],
                               raw_size=venv.game.obs_size)
    norm = cfg["normalize_reward"]
    if norm is None:
        norm = game_options.get("reward_mode") == "points"
    reward_norm = None
    if norm:  # rewards only: the policy still sees raw observations (and so do opponents)
        env = reward_norm = VecNormalize(venv, norm_obs=False, norm_reward=True,
                                         gamma=cfg["gamma"])
    policy, pkw = policy_spec(env_id, cfg, num_players=players, **game_options)
    model = MaskablePPO(
        policy, env, learning_rate=cfg["learning_rate"], n_steps=cfg["n_steps"],
        batch_size=cfg["batch_size"], n_epochs=cfg["n_epochs"], gamma=cfg["gamma"],
        gae_lambda=cfg["gae_lambda"], clip_range=cfg["clip_range"], ent_coef=cfg["ent_coef"],
        vf_coef=cfg["vf_coef"], max_grad_norm=cfg["max_grad_norm"],
        policy_kwargs=pkw, rollout_buffer_class=ZeroCopyRolloutBuffer,
        tensorboard_log=str(out / "tb"), seed=seed, device=device, verbose=verbose)
    link(model)  # the VecEnv writes observations straight into the rollout buffer

    budget_s = None if minutes is None else 60.0 * minutes
    eval_every_s = None
    if eval_every is None:
        if steps is not None and (budget_s is None):
            eval_every = max(1, steps // max(1, cfg["evals"]))
        else:
            eval_every_s = (budget_s or 0) / max(1, cfg["evals"])
    def checkpoint(c: SelfPlayCallback) -> Path:
        return save_checkpoint(out, model, pool, reward_norm, ident,
                               {**c.counters(), "command": command}, c.write_history)

    cb = SelfPlayCallback(venv, pool, env_id, players, game_options, out, budget_s, steps,
                          eval_every, eval_every_s, cfg["eval_games"],
                          cfg.get("eval_seed", 12345 + seed), cfg["pool_every"], progress,
                          checkpoint=checkpoint)
    if resume:
        load_checkpoint(out, saved, model, pool, reward_norm)
        cb.restore(saved["counters"], history)
        venv.seed(int(np.random.SeedSequence([seed, model.num_timesteps]).generate_state(1)[0]))
    cfg["net_arch"] = list(cfg["net_arch"])
    cfg["policy"] = policy if isinstance(policy, str) else policy.__name__
    cfg["features"] = feats is not None
    write_json(out / "config.json", cfg)
    total = steps if steps is not None else 10**12
    with SafeStop() as stop:
        cb.stop = stop
        model.learn(total_timesteps=total - model.num_timesteps, callback=cb,
                    tb_log_name="ppo", reset_num_timesteps=not resume, progress_bar=False)
        seconds = cb.elapsed()
        if cb.stopped is None and (not cb.history or cb.history[-1]["updates"] != cb.updates):
            cb.run_eval()  # else: the same parameters were evaluated last
        cb.logger.record("rollout/env_steps_per_s_mean", cb.steps_per_second())
        cb.logger.dump(model.num_timesteps)
        if cb.stopped is None:
            final_path = out / "final.zip"
            model.save(final_path)
        else:  # the weights of the last update, resumable
            final_path = cb.saved_path = checkpoint(cb)
    res = TrainResult(env_id, players, model, out, final_path, cb.history,
                      int(model.num_timesteps), cb.env_steps(), cb.updates, seconds,
                      cb.rollout_s, cb.steps_per_second(), cfg, stopped=cb.stopped,
                      checkpoint=cb.saved_path)
    if cb.stopped is not None:
        res.learner_steps, res.env_steps = cb.saved_counts[0], sum(cb.saved_counts)
        res.resume_hint = resume_command(command) or "the same train(...) call with resume=True"
    return res

