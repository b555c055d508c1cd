"""Training with RLlib PPO on a wall-time budget (:func:`train_rllib`, behind
``examples/train_rllib.py``): local Ray by default or a cluster (``address``), checkpoints,
periodic arena evaluations and a learning curve. Needs the ``rllib`` extra.

>>> from card_envs.rl.rllib.train import train_rllib
>>> res = train_rllib("slide_v0", minutes=5, num_env_runners=2, out_dir="runs/slide_rllib")
...                                                                    # doctest: +SKIP
>>> res.final_path                      # an Algorithm checkpoint: "rllib:<path>" in the arena

**Evaluation.** At the start, every ``minutes / evals`` and at the end, the policy saved in the
checkpoint just written is loaded back (as the ``rllib:`` arena agent loads it) and plays
``eval_games`` games, greedy, against ``"random"`` and ``"heuristic"`` in every other seat:
the arena's duplicate deals, all games advancing together on the batched engine
(:func:`~card_envs.rl.evaluation.evaluate_batched`, one module forward per move). The final
evaluation plays ``final_games``. Rows go to ``history.csv`` / ``history.json`` and
``learning_curve.png``, each with the trainers' common end-to-end fields: ``env_steps`` (all
moves), ``wall_seconds`` (the run without evaluations), ``rollout_seconds``,
``update_seconds``, ``eval_seconds`` and ``env_steps_per_s``; every training iteration (env
steps, wall time, the learner updates' time and the rest: sampling, weight sync) to
``iterations.json``.

**Budget.** ``minutes`` bounds the run (building the algorithm, training iterations and periodic
evaluations; the final evaluation comes on top): an iteration is not started when one as long
as the previous would not fit (but at least one is played).
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from card_envs.core.registry import resolve_env_id
from card_envs.rl.rllib.config import MAIN, ppo_config
from card_envs.rl.rllib.env import require_ray

__all__ = ["RLlibTrainResult", "module_policy", "train_rllib"]

RUN_FILES = ("checkpoints", "final", "history.json", "history.csv", "iterations.json",
             "learning_curve.png", "config.json")


def module_policy(rl_module: Any) -> Any:
    """A batched greedy ``(obs, masks) -> actions`` of a masking RLModule."""
    import torch
    from ray.rllib.core.columns import Columns

    def act(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        batch = {Columns.OBS: {"observation": torch.as_tensor(obs),
                               "action_mask": torch.as_tensor(masks.astype(np.int8))}}
        with torch.no_grad():
            logits = rl_module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
        logits = torch.where(torch.as_tensor(masks) > 0, logits, -torch.inf)
        return logits.argmax(-1).numpy().astype(np.int64)
    return act


@dataclass
class RLlibTrainResult:
    """What :func:`train_rllib` returns."""

    env_id: str
    out_dir: Path
    final_path: Path
    history: list[dict[str, Any]]
    iterations: list[dict[str, Any]]
    config: dict[str, Any]
    seconds: float
    env_steps: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def env_steps_per_second(self) -> float:
        """Env steps per second of training iterations (sampling and learning)."""
        t = sum(it["seconds"] for it in self.iterations)
        return self.env_steps / t if t > 0 else 0.0

    @property
    def sampling_steps_per_second(self) -> float:
        """Env steps per second of the iterations' time outside the learner updates."""
        t = sum(it["sample_s"] for it in self.iterations)
        return self.env_steps / t if t > 0 else 0.0

    def table(self) -> str:
        rows = ["minutes  env steps  vs random              vs heuristic"]
        for h in self.history:
            rows.append(f"{h['minutes']:>7.2f}  {h['env_steps']:>9}  "
                        f"{h['random_win_rate']:.3f} [{h['random_ci_low']:.3f}, "
                        f"{h['random_ci_high']:.3f}]  {h['heuristic_win_rate']:.3f} "
                        f"[{h['heuristic_ci_low']:.3f}, {h['heuristic_ci_high']:.3f}]")
        learn = sum(it["learn_s"] for it in self.iterations)
        rows.append(f"{len(self.iterations)} iterations, {self.env_steps} env steps in "
                    f"{self.seconds / 60:.1f} min: {self.env_steps_per_second:.0f} env steps/s "
                    f"of training ({self.sampling_steps_per_second:.0f}/s while sampling; "
                    f"learner updates {learn:.0f} s)")
        return "\n".join(rows)


def _ray_init(address: str | None, num_env_runners: int) -> bool:
    """Connect to (``address``) or start a local Ray unless already connected; True when this
    call started or joined it (then the caller shuts it down)."""
    import ray

    from card_envs.arena.ray_backend import keep_builtin_print, local_runtime_env

    keep_builtin_print()
    if ray.is_initialized():
        return False
    kwargs: dict[str, Any] = {"include_dashboard": False}
    if address is None:  # local: enough CPUs for the runners, even on a small machine
        kwargs["num_cpus"] = max(os.cpu_count() or 1, num_env_runners)
        kwargs["runtime_env"] = local_runtime_env()
    ray.init(address=address, **kwargs)
    return True


def _evaluate(path: Path, env_id: str, games: int, n: int, seed: int,
              options: dict[str, Any]) -> dict[str, float]:
    from card_envs.agents.rllib_agent import load_module
    from card_envs.arena.ray_backend import keep_builtin_print
    from card_envs.rl.evaluation import EVAL_OPPONENTS, evaluate_batched

    keep_builtin_print()  # Ray may have replaced print, which numba cannot compile

    policy = module_policy(load_module(path, MAIN))
    out: dict[str, float] = {}
    for opp in EVAL_OPPONENTS:
        r = evaluate_batched(policy, env_id, opp, games, num_players=n, seed=seed, **options)
        for k in ("win_rate", "ci_low", "ci_high"):
            out[f"{opp}_{k}"] = float(r[k])
    return out


def _time_learner(algo: Any) -> dict[str, float]:
    """Accumulate the wall time of the algorithm's learner updates (RLlib's own timers are
    smoothed over iterations, not per iteration)."""
    clock = {"learn": 0.0}
    group = algo.learner_group
    update = group.update

    def timed(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return update(*args, **kwargs)
        finally:
            clock["learn"] += time.perf_counter() - t0

    group.update = timed
    return clock


def _iteration_row(r: dict[str, Any], seconds: float, learn: float) -> dict[str, Any]:
    er = r.get("env_runners", {})
    # every move played: the batched runner counts the opponents' moves apart
    moves = er.get("num_env_steps_all_seats", er.get("num_env_steps_sampled", 0))
    row = {"iteration": int(r["training_iteration"]), "seconds": round(seconds, 3),
           "env_steps": int(moves), "learner_steps": int(er.get("num_env_steps_sampled", 0)),
           "sample_s": round(seconds - learn, 3),  # sampling, weight sync, bookkeeping
           "learn_s": round(learn, 3),
           "episode_return_mean": float(er.get("episode_return_mean", float("nan"))),
           "main_win_rate": float(er.get("main_win_rate", float("nan"))),
           "masked_actions_checked": int(er.get("masked_actions_checked", 0)),
           "masked_action_violations": int(er.get("masked_action_violations", 0))}
    return row


def train_rllib(env_id: str, minutes: float = 5.0, num_env_runners: int = 2,
                address: str | None = None, out_dir: str | Path | None = None, seed: int = 0,
                players: int = 2, evals: int = 4, eval_games: int = 200,
                final_games: int = 400, selfplay: str = "shared",
                envs_per_runner: int | None = None, runner: str = "batched",
                torch_threads: int | None = 1, overwrite: bool = False, progress: bool = True,
                ppo: dict[str, Any] | None = None, model: dict[str, Any] | None = None,
                **options: Any) -> RLlibTrainResult:
    """Train ``env_id`` with RLlib PPO for ``minutes`` (module docstring) and return the run;
    ``options`` are game options. ``address``: a Ray cluster (``"auto"``), else a local Ray
    is started (and stopped) for the run unless this process is already connected.
    ``runner``: ``"batched"`` (each env runner steps its games as one batch, default) or
    ``"multi_agent"`` (:func:`~card_envs.rl.rllib.config.ppo_config`)."""
    require_ray()
    import torch

    env_id = resolve_env_id(env_id)
    out = Path(out_dir or f"runs/{env_id.removesuffix('_v0')}_rllib")
    if out.exists() and any((out / f).exists() for f in RUN_FILES):
        if not overwrite:
            raise FileExistsError(f"{out} already holds a run; choose another out_dir or pass "
                                  "overwrite=True")
        for f in RUN_FILES:
            p = out / f
            shutil.rmtree(p) if p.is_dir() else p.unlink(missing_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    if torch_threads:
        torch.set_num_threads(int(torch_threads))
    options = {"num_players": players, **options}
    budget = 60.0 * float(minutes)
    t0 = time.perf_counter()
    started = _ray_init(address, num_env_runners)
    try:
        cfg = ppo_config(env_id, num_env_runners=num_env_runners,
                         envs_per_runner=envs_per_runner, selfplay=selfplay, seed=seed,
                         ppo=ppo, model=model, runner=runner, **options)
        spec = cfg.rl_module_spec
        module_cfg = (spec.rl_module_specs[MAIN].model_config if runner == "multi_agent"
                      else spec.model_config)
        config = {"env_id": env_id, "minutes": minutes, "num_env_runners": num_env_runners,
                  "address": address, "seed": seed, "selfplay": selfplay,
                  "envs_per_runner": cfg.num_envs_per_env_runner, "runner": runner,
                  "eval_games": eval_games,
                  "final_games": final_games, "evals": evals, "options": options,
                  "ppo": {k: v for k, v in cfg.to_dict().items() if k in
                          ("lr", "gamma", "lambda", "clip_param", "entropy_coeff", "num_epochs",
                           "minibatch_size", "train_batch_size_per_learner", "vf_loss_coeff",
                           "grad_clip")},
                  "env_config": cfg.env_config,
                  "model": module_cfg}
        (out / "config.json").write_text(json.dumps(config, indent=1, default=str))
        algo = cfg.build_algo()
        clock = _time_learner(algo)
        history: list[dict[str, Any]] = []
        iterations: list[dict[str, Any]] = []
        steps = 0
        eval_s = 0.0

        def evaluation(tag: str, games: int) -> Path:
            nonlocal eval_s
            t_eval = time.perf_counter()
            wall = t_eval - t0 - eval_s
            path = algo.save(str((out / tag).resolve())).checkpoint.path
            row = {"iteration": algo.iteration, "env_steps": steps,
                   "minutes": round((time.perf_counter() - t0) / 60, 3), "checkpoint": path,
                   "games": games, **_evaluate(Path(path), env_id, games, players, 12345,
                                               {k: v for k, v in options.items()
                                                if k != "num_players"})}
            eval_s += time.perf_counter() - t_eval
            # the same end-to-end fields as the other trainers (env steps = all moves)
            row.update({"wall_seconds": round(wall, 3),
                        "rollout_seconds": round(sum(i["sample_s"] for i in iterations), 3),
                        "update_seconds": round(sum(i["learn_s"] for i in iterations), 3),
                        "eval_seconds": round(eval_s, 3),
                        "env_steps_per_s": round(steps / wall, 1) if steps and wall else 0.0})
            history.append(row)
            if progress:
                print(f"[{row['minutes']:.1f} min] {steps} env steps: vs random "
                      f"{row['random_win_rate']:.3f}, vs heuristic "
                      f"{row['heuristic_win_rate']:.3f}", flush=True)
            _write(out, history, iterations, env_id)
            return Path(path)

        evaluation("checkpoints/iter_0", eval_games)
        every = budget / max(1, evals)
        next_eval = every
        last = 0.0
        while True:
            now = time.perf_counter() - t0
            if iterations and now + last > budget:  # at least one iteration
                break
            t1, learn0 = time.perf_counter(), clock["learn"]
            r = algo.train()
            last = time.perf_counter() - t1
            row = _iteration_row(r, last, clock["learn"] - learn0)
            steps += row["env_steps"]
            row["env_steps_total"] = steps
            iterations.append(row)
            if progress:
                print(f"iter {row['iteration']}: {steps} env steps, {last:.1f} s (sample "
                      f"{row['sample_s']:.1f} s, learn {row['learn_s']:.1f} s), self-play win "
                      f"{row['main_win_rate']:.2f}", flush=True)
            if time.perf_counter() - t0 >= next_eval and \
                    time.perf_counter() - t0 + last < budget:
                evaluation(f"checkpoints/iter_{algo.iteration}", eval_games)
                next_eval += every
        final = evaluation("final", final_games)
        algo.stop()
    finally:
        if started:
            import ray

            ray.shutdown()
    _write(out, history, iterations, env_id)
    return RLlibTrainResult(env_id, out, final, history, iterations, config,
                            time.perf_counter() - t0, steps)


def _write(out: Path, history: list[dict[str, Any]], iterations: list[dict[str, Any]],
           env_id: str) -> None:
    (out / "history.json").write_text(json.dumps(history, indent=1))
    (out / "iterations.json").write_text(json.dumps(iterations, indent=1))
    if history:
        keys = list(history[0])
        with open(out / "history.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys)
            w.writeheader()
            w.writerows(history)
        try:
            from card_envs.rl.evaluation import plot_history

            plot_history(history, out / "learning_curve.png", title=f"{env_id}, RLlib PPO")
        except ImportError:  # matplotlib missing: the CSV has the curve
            pass
