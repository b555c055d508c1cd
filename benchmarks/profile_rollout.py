#!/usr/bin/env python
"""Where a rollout's time goes: cProfile of MaskablePPO's ``collect_rollouts`` on a
``BatchedVecEnv`` with the training network (and the game's features), plus the wall time
spent in ``step_wait`` (engine, opponents, features) and in ``Features.compute`` alone.

    python benchmarks/profile_rollout.py isflak_v0 --envs 1024 --threads 1 --seconds 5
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rollout import build, collect  # noqa: E402

from card_envs.core.registry import manifest, resolve_env_id  # noqa: E402


def _timed(fn: Any, totals: dict[str, float], key: str) -> Any:
    def run(*a: Any, **k: Any) -> Any:
        t = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            totals[key] += time.perf_counter() - t
    return run


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("game")
    p.add_argument("--envs", type=int, default=1024)
    p.add_argument("--threads", type=int, default=1, help="torch threads")
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--top", type=int, default=14, help="profile rows to print")
    args = p.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    env_id = resolve_env_id(args.game)
    opts = {**manifest(env_id).train.options, "num_players": 2}
    model, moves = build("BatchedVecEnv", env_id, args.envs, 16, 0, opts, "train", "masked")
    for _ in range(3):  # warm-up: compilation, caches, buffers
        collect(model, 16)
    venv = model.env
    totals = {"step_wait": 0.0, "features": 0.0}
    venv.step_wait = _timed(venv.step_wait, totals, "step_wait")
    if venv.features is not None:
        venv.features.compute = _timed(venv.features.compute, totals, "features")
    m0 = moves() + model.num_timesteps
    t0, c0, n = time.perf_counter(), time.process_time(), 0
    prof = cProfile.Profile()
    prof.enable()
    while time.perf_counter() - t0 < args.seconds:
        collect(model, 16)
        n += 16
    prof.disable()
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    mv = moves() + model.num_timesteps - m0
    print(f"{env_id} B={args.envs}: {mv / dt:,.0f} env steps/s ({mv / cpu:,.0f} per CPU "
          f"second), {1000 * dt / n:.1f} ms per batched step; step_wait "
          f"{1000 * totals['step_wait'] / n:.1f} ms (features {1000 * totals['features'] / n:.1f}"
          " ms)")
    pstats.Stats(prof).sort_stats("tottime").print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
