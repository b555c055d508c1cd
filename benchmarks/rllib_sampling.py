#!/usr/bin/env python
"""RLlib sampling throughput against card-envs' own trainer, in one run: env steps per second
of RLlib env runners on the batched engine (:class:`~card_envs.rl.rllib.batched.BatchedEnvRunner`)
with 1 and 2 remote runners, in the driver, the own trainer's rollout
(:class:`~card_envs.rl.ppo.run.PPORun`) on the same game and batch size, and RLlib's per-game
multi-agent runner (:class:`~card_envs.rl.rllib.RLlibCardEnv`) for comparison.

Rows (all count every move played, the learner's and the opponents'; ``--selfplay shared``,
the default, makes every move a learner move in both trainers):

* ``own trainer rollout``: ``PPORun.rollout()`` (``--envs`` games, ``n_steps`` 32, its network,
  features, sampling and buffers), in this process; ``own trainer update``: its learner's
  PPO update of that rollout (samples per second: what one learner process can consume);
* ``rllib batched, in-process``: ``sample(num_timesteps=T)`` on the driver's own runner;
* ``rllib batched, N runners``: ``sample`` on every remote runner at once, the episodes shipped
  to the driver (what a training iteration does), all runners' moves over the wall time;
* ``rllib batched, N runners, kept``: the same, only counts shipped (what the runners sample,
  without the driver's ingest);
* ``rllib multi-agent, in-process``: RLlib's own runner over ``RLlibCardEnv`` games
  (``--multi-envs`` per runner), as before the batched runner.

Everything samples on one CPU (this process: torch and numba on one thread; a remote runner:
one CPU). Ratios printed: in-process and 1 runner over the own trainer (goal >= 0.5), 2
runners over 1 (goal >= 1.6 on 2 cores). Each row is measured ``--repeats`` times
round-robin for at least ``--seconds``; medians are reported with the load of other
processes. Writes JSON (machine,
versions, rows, ratios) to ``benchmarks/results/rllib_sampling.json`` (``--json``).

Usage::

    python benchmarks/rllib_sampling.py                      # slide_v0, B=1024, 1 and 2 runners
    python benchmarks/rllib_sampling.py --game isflak --selfplay league
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
from common import LoadProbe, machine_info, pkg_version  # noqa: E402

from card_envs.core.registry import manifest, resolve_env_id  # noqa: E402

RESULTS_DIR = Path(__file__).resolve().parent / "results"
SMALL = {"train_batch_size_per_learner": 1024, "minibatch_size": 256, "num_epochs": 1}
N_STEPS = 32  # moves per game per sample call / rollout


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _league(selfplay: str) -> dict[str, Any]:
    """The same opponents in both trainers: every seat the learner, or one seat against
    random."""
    if selfplay == "shared":
        return {"selfplay": "shared"}
    return {"selfplay": "league", "snapshots": 0, "random_weight": 1.0}


def _timed(call: Any) -> Any:
    def run(seconds: float) -> tuple[int, float]:
        n, t0 = 0, time.perf_counter()
        while True:
            n += call()
            dt = time.perf_counter() - t0
            if dt >= seconds:
                return n, dt
    return run


def own_trainer(env_id: str, B: int, selfplay: str, options: dict[str, Any]) -> Any:
    from card_envs.rl.ppo import PPO_DEFAULTS
    from card_envs.rl.ppo.run import PPORun

    cfg = dict(PPO_DEFAULTS)
    cfg.update({k: v for k, v in manifest(env_id).train.settings.items() if k in cfg})
    cfg.update(num_envs=B, n_steps=N_STEPS, hidden=list(cfg["hidden"]), pool_size=0,
               self_play=1.0 if selfplay == "shared" else 0.0,
               league={"random": 1.0})
    run = PPORun(env_id, 2, cfg, options, 0)

    def once() -> int:
        before = run.env_steps
        run.rollout()
        return run.env_steps - before

    def update() -> int:  # the learner's side: one PPO update of the last rollout
        run.update()
        return run.n_samples
    return _timed(once), _timed(update)


def batched_local(algo: Any, steps: int) -> Any:
    runner = algo.env_runner

    def once() -> int:
        runner.sample(num_timesteps=steps)
        runner.get_metrics()
        return runner.last_moves
    return _timed(once)


def batched_remote(algo: Any, steps: int, ship: bool) -> Any:
    group = algo.env_runner_group

    def sample(r: Any) -> Any:
        eps = r.sample(num_timesteps=steps)
        r.get_metrics()
        return (eps if ship else len(eps)), r.last_moves

    def once() -> int:
        out = group.foreach_env_runner(sample, local_env_runner=False)
        return sum(moves for _, moves in out)
    return _timed(once)


def multi_agent_local(algo: Any, steps: int) -> Any:
    runner = algo.env_runner

    def once() -> int:
        return int(sum(ep.env_steps() for ep in runner.sample(num_timesteps=steps)))
    return _timed(once)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--game", default="slide_v0")
    p.add_argument("--envs", type=int, default=1024, help="games per runner and in the own "
                   "trainer (default 1024)")
    p.add_argument("--runners", default="1,2", help="remote env runner counts")
    p.add_argument("--selfplay", choices=("shared", "league"), default="shared",
                   help="shared: the learner plays every seat; league: one seat vs random")
    p.add_argument("--multi-envs", type=int, default=32,
                   help="games per multi-agent runner (0: leave that row out)")
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--json", default=None, help="output (default: benchmarks/results/"
                   "rllib_sampling.json)")
    p.add_argument("--quick", action="store_true", help="smoke run: 1 s, 1 repeat, B=128")
    args = p.parse_args(argv)
    if args.quick:
        args.seconds, args.repeats, args.envs = 1.0, 1, min(args.envs, 128)
    import numba
    import ray
    import torch

    from card_envs.arena.ray_backend import keep_builtin_print
    from card_envs.rl.rllib import ppo_config

    torch.set_num_threads(1)  # one CPU for each sampler, as in each runner
    numba.set_num_threads(1)
    keep_builtin_print()
    env_id = resolve_env_id(args.game)
    options = dict(manifest(env_id).train.options)
    runners = [int(x) for x in args.runners.split(",") if x.strip()]
    B = args.envs
    steps = N_STEPS * B // (1 if args.selfplay == "shared" else 2)  # learner moves per call
    league = _league(args.selfplay)
    ray.init(num_cpus=max(2, sum(runners)), include_dashboard=False,  # logical CPUs
             address="local", _node_ip_address="127.0.0.1", log_to_driver=False)
    algos: list[Any] = []
    try:
        loops: dict[str, Any] = {}
        log(f"building: own trainer ({B} games)")
        loops["own trainer rollout"], learner = own_trainer(env_id, B, args.selfplay, options)
        loops["own trainer update (samples/s)"] = learner

        def build(**kw: Any) -> Any:
            algo = ppo_config(env_id, ppo=SMALL, **options, **kw).build_algo()
            algos.append(algo)
            return algo

        log("building: rllib batched, in-process")
        loops["rllib batched, in-process"] = batched_local(
            build(num_env_runners=0, envs_per_runner=B, **league), steps)
        for n in runners:
            log(f"building: rllib batched, {n} runner(s)")
            algo = build(num_env_runners=n, envs_per_runner=B, **league)
            name = f"rllib batched, {n} runner{'s' if n > 1 else ''}"
            loops[name] = batched_remote(algo, steps, ship=True)
            loops[name + ", kept"] = batched_remote(algo, steps, ship=False)
        if args.multi_envs:
            log("building: rllib multi-agent, in-process")
            ma = {"selfplay": "shared"} if args.selfplay == "shared" else {
                "selfplay": "league", "snapshots": 0, "random_weight": 1.0}
            loops["rllib multi-agent, in-process"] = multi_agent_local(
                build(num_env_runners=0, envs_per_runner=args.multi_envs, runner="multi_agent",
                      **ma), 4 * args.multi_envs)
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
    finally:
        for a in algos:
            a.stop()
        ray.shutdown()
    med = {k: statistics.median(v) for k, v in rates.items()}
    own = med["own trainer rollout"]
    ratios = {"in-process / own trainer": med["rllib batched, in-process"] / own}
    if 1 in runners:
        ratios["1 runner / own trainer"] = med["rllib batched, 1 runner"] / own
        for n in runners:
            if n > 1:
                ratios[f"{n} runners / 1 runner"] = (med[f"rllib batched, {n} runners"]
                                                     / med["rllib batched, 1 runner"])
                ratios[f"{n} runners / 1 runner, kept"] = (
                    med[f"rllib batched, {n} runners, kept"]
                    / med["rllib batched, 1 runner, kept"])
    if "rllib multi-agent, in-process" in med:
        ratios["multi-agent / own trainer"] = med["rllib multi-agent, in-process"] / own
    rows = [{"variant": k, "median_steps_per_s": med[k], "runs": v,
             "other_load": statistics.median(loads[k])} for k, v in rates.items()]
    out = {"benchmark": "rllib_sampling", "date": _dt.datetime.now().isoformat(timespec="seconds"),
           "game": env_id, "options": options, "envs": B, "selfplay": args.selfplay,
           "learner_moves_per_call": steps, "seconds": args.seconds, "repeats": args.repeats,
           "loadavg": os.getloadavg(), "machine": machine_info(),
           "versions": {m: pkg_version(m) for m in ("ray", "torch", "numpy", "numba")},
           "results": rows, "ratios": ratios}
    path = Path(args.json) if args.json else RESULTS_DIR / "rllib_sampling.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1))
    print(f"{env_id}, {B} games per runner, selfplay {args.selfplay}, median of "
          f"{args.repeats} x {args.seconds:g} s, load average {os.getloadavg()[0]:.1f}")
    print(f"| {'variant':<34} | {'env steps/s':>12} | {'other load':>10} |")
    print(f"|{'-' * 36}|{'-' * 14}|{'-' * 12}|")
    for r in rows:
        print(f"| {r['variant']:<34} | {r['median_steps_per_s']:>12,.0f} | "
              f"{r['other_load']:>10.2f} |")
    print()
    for k, v in ratios.items():
        print(f"  {k:<34} {v:6.2f}x")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
