"""The self-play trainer's SB3 callback (:func:`card_envs.rl.sb3.train.train`): the budget,
throughput, self-play snapshots, evaluations and checkpoints, the progress bar, and the safe
point where a requested stop (:class:`~card_envs.rl.runs.SafeStop`) ends the run."""

from __future__ import annotations

import csv
import os
import sys
import time
from pathlib import Path
from typing import Any

from stable_baselines3.common.callbacks import BaseCallback

from card_envs.rl.evaluation import evaluate, plot_history
from card_envs.rl.runs import write_json
from card_envs.rl.sb3.selfplay import SelfPlayPool
from card_envs.rl.sb3.vec_env import BatchedVecEnv

__all__ = ["SelfPlayCallback"]


class SelfPlayCallback(BaseCallback):
    """Budget, throughput, self-play snapshots, evaluations, checkpoints, progress bar."""

    def __init__(self, venv: BatchedVecEnv, pool: SelfPlayPool, env_id: str, players: int,
                 options: dict[str, Any], out_dir: Path, budget_s: float | None,
                 steps: int | None, eval_every: int | None, eval_every_s: float | None,
                 eval_games: int, eval_seed: int, pool_every: int, progress: bool,
                 stop: Any = None, checkpoint: Any = None) -> None:
        """``stop``: a :class:`~card_envs.rl.runs.SafeStop` (its request ends the run at the
        next step); ``checkpoint(callback)``: saves a resumable checkpoint (at each
        evaluation)."""
        super().__init__()
        self.stop, self.checkpoint = stop, checkpoint
        self.stopped: str | None = None  # the signal that ended learn()
        self.saved_counts = (0, 0)  # learner and opponent steps the weights have seen
        self.saved_path: Path | None = None  # the last checkpoint's model
        self.venv, self.pool, self.env_id, self.players = venv, pool, env_id, players
        self.options, self.out_dir = options, out_dir
        self.budget_s, self.steps = budget_s, steps
        self.eval_every, self.eval_every_s = eval_every, eval_every_s
        self.eval_games, self.eval_seed, self.pool_every = eval_games, eval_seed, pool_every
        self.progress = progress
        self.history: list[dict[str, Any]] = []
        self.t_start = time.perf_counter()
        self.rollout_s = 0.0
        self.rollout_env_steps = 0
        self.updates = 0
        self.iter_s = 0.0  # last update's duration (rollout + train)
        self._iter_t0: float | None = None
        self._next_eval_step = 0
        self._next_eval_t = 0.0
        self._stop = False
        self._eval_s = 0.0  # duration of the last evaluation
        self.eval_total_s = 0.0  # all evaluations so far
        self._bar: Any = None
        self._bar_t = 0.0
        self._roll_t0 = 0.0
        self._roll_counts = (0, 0)

    # --- helpers --------------------------------------------------------------------------
    def elapsed(self) -> float:
        return time.perf_counter() - self.t_start

    def env_steps(self) -> int:
        return int(self.model.num_timesteps + self.venv.opponent_steps)

    def steps_per_second(self) -> float:
        return self.rollout_env_steps / self.rollout_s if self.rollout_s else 0.0

    def wall_seconds(self) -> float:
        """The run's wall time without its evaluations."""
        return self.elapsed() - self.eval_total_s

    def run_eval(self) -> dict[str, Any]:
        """Evaluate, checkpoint, log; returns the history row."""
        t_eval = time.perf_counter()
        wall = self.wall_seconds()
        ev = evaluate(self.model, self.env_id, self.eval_games, self.players, self.eval_seed,
                      **self.options)
        step = int(self.model.num_timesteps)
        ckpt = self.out_dir / "checkpoints" / f"step_{step}.zip"
        self.model.save(ckpt)
        row: dict[str, Any] = {"learner_steps": step, "env_steps": self.env_steps(),
                               "updates": self.updates, "seconds": round(self.elapsed(), 3),
                               "wall_seconds": round(wall, 3),
                               "rollout_seconds": round(self.rollout_s, 3),
                               "update_seconds": round(max(0.0, wall - self.rollout_s), 3),
                               "env_steps_per_s": round(self.env_steps() / wall, 1)
                               if wall > 0 else 0.0,
                               "rollout_env_steps_per_s": round(self.steps_per_second(), 1),
                               "pool_members": self.pool.members}
        for opp, r in ev.items():
            for k in ("win_rate", "ci_low", "ci_high"):
                row[f"{opp}_{k}"] = r[k]
                self.logger.record(f"eval/{opp}_{k}", r[k])
            row[f"{opp}_games"] = r["games"]
        row["checkpoint"] = str(ckpt.relative_to(self.out_dir))
        self.eval_total_s += time.perf_counter() - t_eval
        row["eval_seconds"] = round(self.eval_total_s, 3)
        self.history.append(row)
        if self.checkpoint is not None:
            self.saved_path = self.checkpoint(self)  # writes the history too
        else:
            self.write_history()
        if self._bar is not None:
            self._bar.set_postfix({f"vs {o}": f"{r['win_rate']:.2f}" for o, r in ev.items()},
                                  refresh=False)
        return row

    def write_history(self) -> None:
        """``history.json`` and ``history.csv`` (each replaced atomically), the curve."""
        write_json(self.out_dir / "history.json", self.history)
        keys = list(dict.fromkeys(k for row in self.history for k in row))
        tmp = self.out_dir / ".history.csv.tmp"
        with open(tmp, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys)
            w.writeheader()
            w.writerows(self.history)
        os.replace(tmp, self.out_dir / "history.csv")
        plot_history(self.history, self.out_dir / "learning_curve.png",
                     f"{self.env_id}, {self.players} players")

    def _eval_due(self) -> bool:
        if self.eval_every is not None:
            return self.model.num_timesteps >= self._next_eval_step
        return self.eval_every_s is not None and self.elapsed() >= self._next_eval_t

    def _schedule_next_eval(self) -> None:
        if self.eval_every is not None:
            while self._next_eval_step <= self.model.num_timesteps:
                self._next_eval_step += self.eval_every
        elif self.eval_every_s is not None:
            self._next_eval_t = self.elapsed() + self.eval_every_s

    # --- callback hooks -------------------------------------------------------------------
    def counters(self) -> dict[str, Any]:
        """The counters a checkpoint saves (at a rollout's start: the weights have seen
        ``saved_counts`` steps; a rollout cut by a stop is not counted)."""
        return {"learner_steps": self.saved_counts[0], "opponent_steps": self.saved_counts[1],
                "updates": self.updates, "sb3_updates": int(self.model._n_updates),
                "snapshots": self.pool.snapshots, "seconds": self.elapsed(),
                "rollout_seconds": self.rollout_s, "rollout_env_steps": self.rollout_env_steps,
                "eval_seconds": self.eval_total_s, "next_eval_step": self._next_eval_step,
                "next_eval_seconds": self._next_eval_t, "history_rows": len(self.history)}

    def restore(self, c: dict[str, Any], history: list[dict[str, Any]]) -> None:
        """Continue from a checkpoint's :meth:`counters` and history rows (the run's clock
        goes on from its seconds)."""
        self.history = list(history)
        self.t_start = time.perf_counter() - float(c["seconds"])
        self.updates = int(c["updates"])
        self.rollout_s, self.rollout_env_steps = float(c["rollout_seconds"]), \
            int(c["rollout_env_steps"])
        self.eval_total_s = float(c["eval_seconds"])
        self._next_eval_step, self._next_eval_t = int(c["next_eval_step"]), \
            float(c["next_eval_seconds"])
        self.saved_counts = (int(c["learner_steps"]), int(c["opponent_steps"]))
        self.venv.opponent_steps = int(c["opponent_steps"])

    def _on_training_start(self) -> None:
        from card_envs.core.progress import tqdm_class

        tqdm = tqdm_class()

        if self.progress:
            total = self.steps if self.steps is not None else round(self.budget_s or 0)
            unit = "step" if self.steps is not None else "s"
            self._bar = tqdm(total=total, unit=unit, desc=f"train {self.env_id}",
                             file=sys.stderr, dynamic_ncols=True)

    def _on_rollout_start(self) -> None:
        now = time.perf_counter()
        if self._iter_t0 is not None:  # the previous update is done
            self.iter_s = now - self._iter_t0
            if self.pool_every > 0 and self.updates % self.pool_every == 0:
                self.pool.add_snapshot(self.model)
        left = None if self.budget_s is None else self.budget_s - self.elapsed()
        if left is not None and self.iter_s and self.iter_s > left:
            self._stop = True  # the next update cannot end in time (the final eval follows)
            return
        if self._eval_due() and not (self.stop is not None and self.stop.requested):
            if left is None or self._eval_s + self.iter_s < left:  # else: the final eval
                t0 = time.perf_counter()
                self.run_eval()
                self._eval_s = time.perf_counter() - t0
            self._schedule_next_eval()
        self.logger.record("selfplay/pool_members", self.pool.members)
        self._iter_t0 = self._roll_t0 = time.perf_counter()
        self._roll_counts = (int(self.model.num_timesteps), int(self.venv.opponent_steps))

    def _on_rollout_end(self) -> None:
        dt = time.perf_counter() - self._roll_t0
        n0, o0 = self._roll_counts
        steps = int(self.model.num_timesteps) - n0 + int(self.venv.opponent_steps) - o0
        self.rollout_s += dt
        self.rollout_env_steps += steps
        self.updates += 1  # a complete rollout is always followed by an update
        self.saved_counts = (int(self.model.num_timesteps), int(self.venv.opponent_steps))
        self.logger.record("rollout/env_steps_per_s", steps / dt if dt else 0.0)
        self.logger.record("rollout/env_steps", self.env_steps())

    def _on_step(self) -> bool:
        if self.stop is not None and self.stop.requested:  # the safe point: the weights are
            self.stopped = self.stop.requested  # the last update's, the rollout is dropped
            return False
        now = time.perf_counter()
        if self._bar is not None and now - self._bar_t > 0.5:
            self._bar_t = now
            self._bar.n = (self.model.num_timesteps if self.steps is not None
                           else min(round(self.elapsed()), self._bar.total))
            self._bar.refresh()
        return not self._stop

    def _on_training_end(self) -> None:
        if self._bar is not None:
            self._bar.n = (self.model.num_timesteps if self.steps is not None
                           else self._bar.total)
            self._bar.refresh()
            self._bar.close()
            self._bar = None
