#!/usr/bin/env python
"""RLlib sampling throughput: env steps per second of RLlib env runners (Ray actors, the
masking module of :mod:`card_envs.rl.rllib`, the learner against masked-random opponents)
with 1 and 2 runners, against SB3's :class:`~card_envs.rl.sb3.BatchedVecEnv` (MaskablePPO's
``collect_rollouts``, the training network, random opponents) in this process, and where an
RLlib env step's time goes.

Rows (all count every move played, the learner's and the opponents'):

* ``rllib, N runners``: ``sample(num_timesteps=T)`` on every remote runner at once (each
  ``--envs-per-runner`` games, one forward pass for all of them), steps of all runners over
  the wall time;
* ``rllib, in-process runner``: the same on the driver's local runner (no episodes shipped
  between processes), and where its time goes: the shares of a profiled ``sample``
  (:data:`PARTS`: the game, the vector-env wrapper, the module forward, the two connector
  pipelines, the episodes, the rest) scaled to an unprofiled one's time per step;
* ``RLlibCardEnv alone``: the env with random legal actions, no RLlib (its ceiling);
* ``BatchedVecEnv``: MaskablePPO's ``collect_rollouts`` with ``--sb3-envs`` games
  (``benchmarks/rollout.py``'s measurement).

Each row is measured ``--repeats`` times round-robin for at least ``--seconds``; the median
is reported with the load seen (other processes' CPU use; for the remote-runner rows that
includes the runners themselves, which are other processes) and ``os.getloadavg``. Writes JSON to
``benchmarks/results/rllib_sampling.json`` (``--json``) and prints a table.

Usage::

    python benchmarks/rllib_sampling.py                      # slide_v0, 1 and 2 runners
    python benchmarks/rllib_sampling.py --quick              # smoke run
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

try:
    import card_envs  # noqa: F401
except ImportError:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

sys.path.insert(0, str(Path(__file__).resolve().parent))
from throughput import LoadProbe, machine_info, pkg_version  # noqa: E402

from card_envs.core.registry import manifest, resolve_env_id  # noqa: E402

RESULTS_DIR = Path(__file__).resolve().parent / "results"
SMALL = {"train_batch_size_per_learner": 1024, "minibatch_size": 256, "num_epochs": 1}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _config(env_id: str, runners: int, envs: int, options: dict[str, Any]) -> Any:
    from card_envs.rl.rllib import ppo_config

    return ppo_config(env_id, num_env_runners=runners, envs_per_runner=envs, selfplay="league",
                      snapshots=0, random_weight=1.0, ppo=SMALL, **options)


def _episode_steps(episodes: list[Any]) -> int:
    return int(sum(ep.env_steps() for ep in episodes))


def remote_runner(algo: Any, steps: int) -> Any:
    """One timed round: every remote runner samples ``steps`` env steps at once."""
    group = algo.env_runner_group

    def run(seconds: float) -> tuple[int, float]:
        n, t0 = 0, time.perf_counter()
        while True:
            out = group.foreach_env_runner(lambda r: r.sample(num_timesteps=steps),
                                           local_env_runner=False)
            n += sum(_episode_steps(eps) for eps in out)
            dt = time.perf_counter() - t0
            if dt >= seconds:
                return n, dt
    return run


def local_runner(algo: Any, steps: int) -> Any:
    runner = algo.env_runner

    def run(seconds: float) -> tuple[int, float]:
        n, t0 = 0, time.perf_counter()
        while True:
            n += _episode_steps(runner.sample(num_timesteps=steps))
            dt = time.perf_counter() - t0
            if dt >= seconds:
                return n, dt
    return run


#: parts of a local runner's ``sample`` (profiled cumulative time of the outermost calls):
#: label -> (part of the file path, function name(s))
PARTS = {
    "game (RLlibCardEnv.step)": ("card_envs/rl/rllib.py", "step"),
    "vector env wrapper": ("sync_vector_multi_agent_env.py", "step"),
    "module forward (features, MLPs)": ("core/rl_module/rl_module.py", "forward_exploration"),
    "env-to-module connectors": ("env_to_module_pipeline.py", "__call__"),
    "module-to-env connectors": ("connectors/module_to_env/", "__call__"),
    "episodes (add_env_step, to_numpy)": ("env/multi_agent_episode.py", ("add_env_step",
                                                                        "to_numpy")),
}


def breakdown(algo: Any, steps: int) -> dict[str, float]:
    """Microseconds per env step of the local runner's parts: shares of one profiled
    ``sample`` (cProfile), scaled to the per-step time of an unprofiled one."""
    import cProfile
    import pstats

    runner = algo.env_runner
    t0 = time.perf_counter()
    n = _episode_steps(runner.sample(num_timesteps=steps))
    per_step = 1e6 * (time.perf_counter() - t0) / n
    prof = cProfile.Profile()
    prof.enable()
    runner.sample(num_timesteps=steps)
    prof.disable()
    stats = pstats.Stats(prof).stats  # (file, line, function) -> (cc, nc, tt, ct, callers)

    def cum(file_part: str, funcs: Any) -> float:
        names = (funcs,) if isinstance(funcs, str) else funcs
        return sum(v[3] for k, v in stats.items() if file_part in k[0] and k[2] in names)

    total = cum("multi_agent_env_runner.py", "_sample")
    times = {label: cum(f, fn) for label, (f, fn) in PARTS.items()}
    times["vector env wrapper"] -= times["game (RLlibCardEnv.step)"]
    times["rest (metrics, env runner loop)"] = total - sum(times.values())
    out = {k: per_step * v / total for k, v in times.items()}
    out["total"] = per_step
    return out


def env_alone(env_id: str, options: dict[str, Any], shaping: float) -> Any:
    import numpy as np

    from card_envs.rl.rllib import RLlibCardEnv

    env = RLlibCardEnv({"env_id": env_id, "options": options, "shaping": shaping})
    rng = np.random.default_rng(0)
    state = {"obs": env.reset(seed=0)[0]}

    def run(seconds: float) -> tuple[int, float]:
        n, t0, obs = 0, time.perf_counter(), state["obs"]
        while True:
            for _ in range(256):
                ((ag, o),) = obs.items()
                legal = np.flatnonzero(o["action_mask"])
                obs, _, term, trunc, _ = env.step({ag: int(legal[rng.integers(legal.size)])})
                if term["__all__"] or trunc["__all__"]:
                    obs, _ = env.reset()
            n += 256
            dt = time.perf_counter() - t0
            if dt >= seconds:
                state["obs"] = obs
                return n, dt
    return run


def sb3_batched(env_id: str, B: int, options: dict[str, Any]) -> Any:
    from rollout import V_BATCHED, build, measure

    model, moves = build(V_BATCHED, env_id, B, 64, 0, {"num_players": 2, **options})
    state: dict[str, Any] = {}

    def run(seconds: float) -> tuple[int, float]:
        rate, n, _ = measure(model, moves, "collect_rollouts", 64, seconds, state)
        return n, n / rate
    return run


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--game", default="slide_v0")
    p.add_argument("--runners", default="1,2", help="remote env runner counts")
    p.add_argument("--envs-per-runner", type=int, default=32)
    p.add_argument("--sb3-envs", type=int, default=64)
    p.add_argument("--seconds", type=float, default=15.0)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=1, help="torch threads in this process")
    p.add_argument("--json", default=None, help="output (default: benchmarks/results/"
                   "rllib_sampling.json)")
    p.add_argument("--quick", action="store_true", help="smoke run: 1 s, 1 repeat")
    args = p.parse_args(argv)
    if args.quick:
        args.seconds, args.repeats = 1.0, 1
    import ray
    import torch

    torch.set_num_threads(args.threads)
    env_id = resolve_env_id(args.game)
    options = dict(manifest(env_id).train.options)
    shaping = float(manifest(env_id).train.settings.get("shaping", 0.0))
    runners = [int(x) for x in args.runners.split(",") if x.strip()]
    E = args.envs_per_runner
    steps = 4 * E  # per sample() call and runner
    ray.init(num_cpus=max(2, sum(runners)), include_dashboard=False, address="local",
             _node_ip_address="127.0.0.1", log_to_driver=False)
    algos: list[Any] = []
    try:
        loops: dict[str, Any] = {}
        log("building: in-process runner")
        local = _config(env_id, 0, E, options).build_algo()
        algos.append(local)
        loops["rllib, in-process runner"] = local_runner(local, steps)
        for n in runners:
            log(f"building: {n} remote runner(s)")
            algo = _config(env_id, n, E, options).build_algo()
            algos.append(algo)
            loops[f"rllib, {n} runner{'s' if n > 1 else ''}"] = remote_runner(algo, steps)
        loops["RLlibCardEnv alone"] = env_alone(env_id, options, shaping)
        loops[f"BatchedVecEnv (B={args.sb3_envs})"] = sb3_batched(env_id, args.sb3_envs,
                                                                  options)
        for name, run in loops.items():  # warm-up (numba, torch, first episodes)
            log(f"warm-up: {name}")
            run(min(1.0, args.seconds))
        rates: dict[str, list[float]] = {k: [] for k in loops}
        loads: dict[str, list[float]] = {k: [] for k in loops}
        for rep in range(args.repeats):
            for name, run in loops.items():
                with LoadProbe() as probe:
                    n, dt = run(args.seconds)
                rates[name].append(n / dt)
                loads[name].append(probe.other if probe.other is not None else float("nan"))
                log(f"[{rep + 1}/{args.repeats}] {name}: {n / dt:,.0f} env steps/s "
                    f"(other load {loads[name][-1]:.2f} CPUs)")
        parts = breakdown(local, 16 * E)
    finally:
        for a in algos:
            a.stop()
        ray.shutdown()
    rows = [{"variant": k, "median_steps_per_s": statistics.median(v), "runs": v,
             "other_load": statistics.median(loads[k])} for k, v in rates.items()]
    out = {"benchmark": "rllib_sampling", "date": _dt.datetime.now().isoformat(timespec="seconds"),
           "game": env_id, "options": options, "shaping": shaping, "envs_per_runner": E,
           "sb3_envs": args.sb3_envs, "seconds": args.seconds, "repeats": args.repeats,
           "loadavg": os.getloadavg(), "machine": machine_info(),
           "versions": {m: pkg_version(m) for m in ("ray", "torch", "numpy", "gymnasium",
                                                   "stable-baselines3")},
           "results": rows, "local_runner_us_per_step": parts}
    path = Path(args.json) if args.json else RESULTS_DIR / "rllib_sampling.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1))
    print(f"{env_id}, {E} games per runner, median of {args.repeats} x {args.seconds:g} s, "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"| {'variant':<30} | {'env steps/s':>12} | {'other load':>10} |")
    print(f"|{'-' * 32}|{'-' * 14}|{'-' * 12}|")
    for r in rows:
        print(f"| {r['variant']:<30} | {r['median_steps_per_s']:>12,.0f} | "
              f"{r['other_load']:>10.2f} |")
    print("\nin-process runner, microseconds per env step:")
    for k, v in parts.items():
        print(f"  {k:<28} {v:>8.1f}")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
