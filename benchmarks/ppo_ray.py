#!/usr/bin/env python
"""card-envs' own PPO end to end, in one process and with its samplers on Ray actors: env
steps per second over whole training runs (rollouts and updates, no evaluations) of the same
game, settings and seed with 1 and 2 samplers, in this process and as actors of a local Ray
(one CPU each; the learner in this process, torch on one thread). A short unreported run
comes first, so the first variant does not pay the process's one-time costs.

Usage::

    python benchmarks/ppo_ray.py                    # slide_v0, 400k env steps a run
    python benchmarks/ppo_ray.py --game isflak --steps 200000

Prints a table and writes JSON (machine, versions, rows) to
``benchmarks/results/ppo_ray.json`` (``--json``).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

try:
    import card_envs  # noqa: F401
except ImportError:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import LoadProbe, machine_info, pkg_version  # noqa: E402

from card_envs.core.registry import resolve_env_id  # noqa: E402

RESULTS_DIR = Path(__file__).resolve().parent / "results"
VARIANTS: list[tuple[str, dict[str, Any]]] = [
    ("one process, 1 sampler", {}),
    ("Ray, 1 sampler actor", {"ray": True}),
    ("one process, 2 samplers", {"samplers": 2}),
    ("Ray, 2 sampler actors", {"ray": True, "samplers": 2}),
]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--game", default="slide_v0")
    p.add_argument("--steps", type=int, default=400_000, help="env steps per run")
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    import ray

    from card_envs.arena.ray_backend import keep_builtin_print
    from card_envs.rl import train_ppo

    keep_builtin_print()
    env_id = resolve_env_id(args.game)
    rows = []
    ray.init(num_cpus=2, include_dashboard=False, address="local",
             _node_ip_address="127.0.0.1", log_to_driver=False)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            # one short run first: this process's one-time costs (numba, torch, allocator)
            train_ppo(env_id, minutes=None, steps=min(args.steps, 50_000),
                      out_dir=Path(tmp) / "warm", settings={"eval_games": 0, "evals": 0},
                      progress=False, torch_threads=1, seed=0)
            for k, (name, kw) in enumerate(VARIANTS):
                print(f"running: {name}", file=sys.stderr, flush=True)
                with LoadProbe() as probe:
                    r = train_ppo(env_id, minutes=None, steps=args.steps,
                                  out_dir=Path(tmp) / str(k), settings={"eval_games": 0,
                                                                        "evals": 0},
                                  progress=False, torch_threads=1, seed=0, **kw)
                rows.append({"variant": name, "env_steps": r.env_steps,
                             "wall_seconds": round(r.wall_seconds, 2),
                             "env_steps_per_s": round(r.env_steps_per_second),
                             "rollout_seconds": round(r.rollout_seconds, 2),
                             "update_seconds": round(r.update_seconds, 2),
                             "other_load": probe.other})
    finally:
        ray.shutdown()
    out = {"benchmark": "ppo_ray", "date": _dt.datetime.now().isoformat(timespec="seconds"),
           "game": env_id, "steps": args.steps, "loadavg": os.getloadavg(),
           "machine": machine_info(),
           "versions": {m: pkg_version(m) for m in ("ray", "torch", "numpy", "numba")},
           "results": rows}
    path = Path(args.json) if args.json else RESULTS_DIR / "ppo_ray.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1))
    base = rows[0]["env_steps_per_s"]
    print(f"{env_id}, {args.steps:,} env steps a run, load average {os.getloadavg()[0]:.1f}")
    print(f"| {'variant':<26} | {'env steps/s':>11} | {'vs 1 sampler':>12} | "
          f"{'rollout s':>9} | {'update s':>8} |")
    print(f"|{'-' * 28}|{'-' * 13}|{'-' * 14}|{'-' * 11}|{'-' * 10}|")
    for r in rows:
        print(f"| {r['variant']:<26} | {r['env_steps_per_s']:>11,} | "
              f"{r['env_steps_per_s'] / base:>11.2f}x | {r['rollout_seconds']:>9.1f} | "
              f"{r['update_seconds']:>8.1f} |")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
