"""The loop of one native PPO run (:class:`Trainer`, used by
:func:`card_envs.rl.ppo.train_ppo`): the budget, the learning-rate schedule, evaluations,
league snapshots, checkpoints, stopping on a signal, and the result (:class:`PPOResult`)."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from card_envs.agents.net import NetPolicy, save_policy
from card_envs.core.registry import manifest
from card_envs.rl.ppo.run import PPORun
from card_envs.rl.runs import SafeStop, write_json

__all__ = ["PPOResult", "Trainer"]


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
    stopped: str | None = None     # the signal that stopped the run (SIGINT, SIGTERM)
    checkpoint: Path | None = None  # the checkpoint a stopped run saved (resume=True)

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


class Trainer:
    """The loop of one :func:`train_ppo` run: budget, evaluations, snapshots, checkpoints."""

    def __init__(self, run: PPORun, out: Path, minutes: float | None, steps: int | None,
                 seed: int, progress: bool, command: str | None, plot_history: Any,
                 plan: Any, executor: Any, checkpoint_s: float) -> None:
        self.run, self.out, self.steps, self.seed = run, out, steps, seed
        self.progress, self.command, self.plot_history = progress, command, plot_history
        self.plan, self.executor, self.checkpoint_s = plan, executor, checkpoint_s
        self.budget = None if minutes is None else 60.0 * minutes
        cfg = run.cfg
        evals = cfg["evals"]
        self.eval_seed = 12345 + seed
        self.history: list[dict[str, Any]] = []
        self.eval_s = 0.0
        self.wall = 0.0  # seconds of the run, evaluations apart (resumed: from the start)
        self.next_eval = (self.budget or 0) / max(evals, 1) if self.budget is not None else None
        self.next_eval_steps = (steps or 0) // max(evals, 1) if self.budget is None else None
        self.next_snap = cfg["pool_every"]
        self.next_ckpt = checkpoint_s
        self.last_iter = 0.0
        self.stats: dict[str, float] = {}
        self.resumed = False

    # --- history rows and checkpoints ---------------------------------------------------
    def row(self, stats: dict[str, float]) -> None:
        """Evaluate, save the weights and a checkpoint, and add a history row."""
        run, out, cfg = self.run, self.out, self.run.cfg
        t0 = time.perf_counter()
        wall = self.wall
        r: dict[str, Any] = {"env_steps": run.env_steps, "learner_steps": run.learner_steps,
                             "games": run.games, "updates": run.updates,
                             "wall_seconds": round(wall, 3),
                             "rollout_seconds": round(run.rollout_s, 3),
                             "update_seconds": round(run.update_s, 3),
                             "env_steps_per_s": round(run.env_steps / wall, 1) if wall else 0.0}
        if cfg["eval_games"]:
            r.update(_evaluate(run, cfg["eval_games"], self.eval_seed))
        ckpt = out / "checkpoints" / f"step_{run.env_steps}.safetensors"
        save_policy(run.policy, ckpt)
        r["checkpoint"] = str(ckpt.relative_to(out))
        r.update({k: round(v, 5) for k, v in stats.items()})
        self.history.append(r)
        write_json(out / "history.json", self.history)
        if cfg["eval_games"]:
            self.plot_history(self.history, out / "learning_curve.png",
                              f"{run.env_id}, {run.n} players (card-envs PPO)")
        self.eval_s += time.perf_counter() - t0
        r["eval_seconds"] = round(self.eval_s, 3)
        write_json(out / "history.json", self.history)
        if run.remote is None:
            self.checkpoint()
        if self.bar is not None and cfg["eval_games"]:
            self.bar.set_postfix({o: f"{r[f'{o}_win_rate']:.2f}" for o in ("random", "heuristic")
                                  if f"{o}_win_rate" in r}, refresh=False)

    def checkpoint(self) -> Path:
        from card_envs.rl.ppo.checkpoint import save_checkpoint

        self.next_ckpt = self.wall + self.checkpoint_s
        loop = {"wall": self.wall, "eval_s": self.eval_s, "next_eval": self.next_eval,
                "next_eval_steps": self.next_eval_steps, "next_snap": self.next_snap,
                "last_iter": self.last_iter, "stats": self.stats,
                "history_rows": len(self.history)}
        return save_checkpoint(self.run, self.out, loop)

    def resume(self) -> None:
        """Continue from the checkpoint in ``out`` (identity checked by the caller)."""
        from card_envs.rl.ppo.checkpoint import load_checkpoint

        loop = load_checkpoint(self.run, self.out, self.executor)
        try:
            rows = json.loads((self.out / "history.json").read_text())
            n = int(loop["history_rows"])
            if not isinstance(rows, list) or len(rows) < n:
                raise ValueError(f"it has fewer rows than the checkpoint's {n}")
            self.history = rows[:n]
            self.wall, self.eval_s = float(loop["wall"]), float(loop["eval_s"])
            self.next_snap, self.last_iter = int(loop["next_snap"]), float(loop["last_iter"])
            self.stats = {k: float(v) for k, v in dict(loop["stats"]).items()}
            if self.budget is not None:  # the budget may have changed: evaluations follow it
                evals = max(self.run.cfg["evals"], 1)
                done = int(self.wall // (self.budget / evals))
                self.next_eval = (done + 1) * self.budget / evals
            elif loop["next_eval_steps"] is not None:
                self.next_eval_steps = int(loop["next_eval_steps"])
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ValueError(f"cannot resume {self.out}: history.json: {e}") from None
        self.next_ckpt = self.wall + self.checkpoint_s
        self.resumed = True

    # --- the loop ------------------------------------------------------------------------
    def train(self, stop: SafeStop) -> PPOResult:
        from card_envs.core.progress import tqdm_class

        run, cfg, budget, steps = self.run, self.run.cfg, self.budget, self.steps
        self.bar = None
        if self.progress:
            total = steps if budget is None else round(budget)
            self.bar = tqdm_class()(total=total, unit="step" if budget is None else "s",
                                    desc=f"train {run.env_id}", file=sys.stderr,
                                    dynamic_ncols=True, initial=0)
        if not self.resumed:
            self.row({})
        t_run, eval_before, wall_before = time.perf_counter(), self.eval_s, self.wall

        def run_wall() -> float:
            """The run's seconds so far, without the evaluations."""
            return wall_before + time.perf_counter() - t_run - (self.eval_s - eval_before)

        evals = cfg["evals"]
        stopped = None
        while True:
            self.wall = run_wall()
            if stop.requested:
                stopped = stop.requested
                break
            if steps is not None and run.env_steps >= steps:
                break
            if budget is not None and self.wall + self.last_iter > budget:
                break
            if cfg["anneal_lr"]:
                done = max(self.wall / budget if budget else 0.0,
                           run.env_steps / steps if steps else 0.0)
                for group in run.opt.param_groups:
                    group["lr"] = cfg["learning_rate"] * max(0.0, 1.0 - done)
            t0 = time.perf_counter()
            stats = run.step(self.executor, self.plan.overlap)
            if stats is not None:
                self.stats = stats
            self.last_iter = time.perf_counter() - t0
            if run.updates >= self.next_snap:
                run.snapshot()
                self.next_snap += cfg["pool_every"]
            self.wall = run_wall()
            if self.bar is not None:
                self.bar.n = min(run.env_steps, self.bar.total) if budget is None else min(
                    round(self.wall), self.bar.total)
                self.bar.set_description(f"train {run.env_id} "
                                         f"{run.env_steps / max(self.wall, 1e-9):,.0f} steps/s",
                                         refresh=False)
                self.bar.refresh()
            if evals and ((self.next_eval is not None and self.wall >= self.next_eval)
                          or (self.next_eval_steps and run.env_steps >= self.next_eval_steps)):
                self.row(self.stats)
                if self.next_eval is not None:
                    self.next_eval += budget / evals
                else:
                    self.next_eval_steps += steps // evals
            elif run.remote is None and self.wall >= self.next_ckpt:
                self.checkpoint()
        if stopped is not None:
            return self._stopped(stopped)
        stats = run.drain()
        if stats is not None:
            self.stats = stats
        self.wall = run_wall()
        if self.history[-1]["updates"] != run.updates:
            self.row(self.stats)
        if self.bar is not None:
            self.bar.n = self.bar.total
            self.bar.close()
        return self._finish()

    def _stopped(self, signal_name: str) -> PPOResult:
        """Save a checkpoint and the learner's weights; the result says the run stopped."""
        if self.bar is not None:
            self.bar.close()
        saved = self.checkpoint() if self.run.remote is None else None
        weights = self.out / "checkpoints" / f"step_{self.run.env_steps}.safetensors"
        save_policy(self.run.policy, weights)
        res = self._result(weights, self.run.prof)
        res.stopped, res.checkpoint = signal_name, saved
        return res

    def _finish(self) -> PPOResult:
        run, out, wall = self.run, self.out, self.wall
        final_info = {"command": self.command, "seed": self.seed, "settings": run.cfg,
                      "env_steps": run.env_steps, "learner_steps": run.learner_steps,
                      "wall_seconds": round(wall, 1),
                      "final_evaluation": {k: v for k, v in self.history[-1].items()
                                           if k.split("_")[0] in ("random", "heuristic")}}
        final = save_policy(run.policy, out / "final.safetensors", final_info)
        prof = {k: round(v, 3) for k, v in run.prof.items()}
        deals = np.concatenate(run.deals) if run.deals else np.zeros(0, np.uint64)
        dup = int(deals.size - np.unique(deals).size)
        summary = {"env_id": run.env_id, "players": run.n, "env_steps": run.env_steps,
                   "learner_steps": run.learner_steps, "updates": run.updates,
                   "wall_seconds": round(wall, 3), "rollout_seconds": round(run.rollout_s, 3),
                   "update_seconds": round(run.update_s, 3),
                   "wait_seconds": round(run.wait_s, 3),
                   "eval_seconds": round(self.eval_s, 3),
                   "setup_seconds": round(run.setup_s, 3),
                   "env_steps_per_s": round(run.env_steps / wall, 1) if wall else 0.0,
                   "profile": prof, "settings": run.cfg, "options": run.options,
                   "seed": self.seed, "threads": self.plan.as_dict(),
                   "resumed": self.resumed, "games": run.games, "duplicate_deals": dup,
                   "samplers": len(run.sizes), "games_per_sampler": run.sizes,
                   "ray": None if run.remote is None else {
                       "restarts": run.remote.restarts, "placement": run.remote.placement}}
        write_json(out / "summary.json", summary)
        res = self._result(final, prof)
        res.duplicate_deals = dup
        return res

    def _result(self, path: Path, prof: dict[str, float]) -> PPOResult:
        run = self.run
        return PPOResult(run.env_id, run.n, run.policy, self.out, path, self.history,
                         run.learner_steps, run.env_steps, run.updates, self.wall, run.rollout_s,
                         run.update_s, self.eval_s, prof, run.cfg, run.games, 0,
                         run.remote.restarts if run.remote is not None else 0)
