#!/usr/bin/env python
"""Where the batched engine's time goes: the step driver taken apart, per game and batch size.

The same games (the batch after ``--warmup`` random steps) replay the same recorded actions
through five compiled drivers built from the game's own kernels, as ``card_envs.vector``'s
driver is: the step alone (with the auto-reset deal), the step and the legal mask, the step
and the observation, all three (the engine's work per step), and all three with the mask and
observation rows written into 128 rows per thread only (``outputs in cache``: what the
output arrays' trips to memory cost at large ``B``). Then the loop users run,
``vec.step(vec.sample_actions())``, and ``sample_actions`` alone, against PettingZoo's
``connect_four_v3`` AEC loop (the anchor) in the same process. Each figure is the median of
``--rounds`` rounds, the drivers interleaved within a round; ns per step is wall time per game
step at the thread count numba uses (``--threads``).

    python benchmarks/profile_batched.py --games if_it_fits_v0 --batch-sizes 512 1024 4096

Prints one table (a row per game and batch size) and writes JSON (machine, versions, numbers)
to ``--json`` (default ``benchmarks/results/profile_batched-<time>.json``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numba
import numpy as np
from numba import prange

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import aec_runner, log, machine_info, vector_runner, versions  # noqa: E402

import card_envs.vector  # noqa: E402
from card_envs.core import kernels as K  # noqa: E402
from card_envs.core.jit import njit  # noqa: E402

#: (name, legal mask, observation, output rows kept in cache)
DRIVERS = (("step", False, False, False), ("step + mask", True, False, False),
           ("step + observe", False, True, False), ("step + mask + observe", True, True, False),
           ("outputs in cache", True, True, True))
CACHED_ROWS = 128  # rows per thread of the outputs the "outputs in cache" driver writes into


def build_driver(game: Any, with_mask: bool, with_obs: bool, cached: bool) -> Any:
    """A ``prange`` driver over ``game``'s kernels: the step and the auto-reset deal, then (if
    asked) the legal mask and the observation of the seat to act, into row ``i`` of the outputs
    (if ``cached``: row ``i % CACHED_ROWS`` of the block of ``CACHED_ROWS`` rows of the thread
    whose chunk holds ``i``, so threads never share a row)."""
    init, step, legal_mask, observe = game.k_init, game.k_step, game.k_legal_mask, game.k_observe
    A = game.num_actions

    def drive(states, cfg, actions, cur, obs, masks, rewards):
        n = states.shape[0]
        blocks = min(numba.get_num_threads(), n // CACHED_ROWS)
        for i in prange(n):
            s = states[i]
            if step(s, cfg, actions[i], rewards[i]) & K.ST_DONE:
                K.clear_keep_rng(s)
                init(s, cfg)
            c = s[K.CUR]
            cur[i] = c
            r = np.int64(i)
            if cached and blocks > 0:
                r = min(r * blocks // n, blocks - 1) * CACHED_ROWS + r % CACHED_ROWS
            if with_mask:
                legal_mask(s, cfg, masks[r, :A])
            if with_obs:
                observe(s, cfg, c, obs[r])

    return njit(parallel=True)(drive)


def profile_game(env_id: str, B: int, args: argparse.Namespace,
                 drivers: list[tuple[str, Any]], anchor_run: Any) -> dict[str, Any]:
    """One game at batch size ``B``: the drivers' ns per step (median of the rounds), the
    user loop's and the sampler's."""
    vec = card_envs.vector.make(env_id, num_envs=B, seed=args.seed)
    vec.reset(seed=args.seed)
    for _ in range(args.warmup):
        vec.step(vec.sample_actions())
    start = vec.states.copy()
    actions = []
    for _ in range(args.steps):
        a = vec.sample_actions().copy()
        actions.append(a)
        vec.step(a)
    end = vec.states.copy()
    cur = np.zeros(B, np.int32)
    obs = np.zeros_like(vec.observations)
    masks = np.zeros((B, vec.num_actions), np.int8)
    rewards = np.zeros_like(vec.rewards)
    cfg = vec.cfg
    times: dict[str, list[float]] = {name: [] for name, _ in drivers}
    for _name, drive in drivers:  # compile outside the timed rounds
        drive(start.copy(), cfg, actions[0], cur, obs, masks, rewards)
    for _ in range(args.rounds):
        for name, drive in drivers:
            states = start.copy()
            t0 = time.perf_counter()
            for a in actions:
                drive(states, cfg, a, cur, obs, masks, rewards)
            times[name].append((time.perf_counter() - t0) / (len(actions) * B) * 1e9)
            if not np.array_equal(states, end):  # the replay is the games the engine played
                raise RuntimeError(f"{env_id}: driver {name!r} did not replay the recorded games")
    run = vector_runner(vec)
    run(0.2)
    a0 = anchor_run(args.seconds)
    loop = [run(args.seconds) for _ in range(args.rounds)]
    a1 = anchor_run(args.seconds)
    anchor = (a0[0] / a0[1] + a1[0] / a1[1]) / 2
    loop_rate = statistics.median(n / t for n, t in loop)
    sample = []
    for _ in range(args.rounds):
        t0 = time.perf_counter()
        for _ in range(args.steps):
            vec.sample_actions()
        sample.append((time.perf_counter() - t0) / (args.steps * B) * 1e9)
    ns = {name: statistics.median(v) for name, v in times.items()}
    return {
        "game": env_id, "batch_size": B, "threads": numba.get_num_threads(),
        "bytes_per_game": {"state": vec.states.shape[1] * 4,
                           "observation": vec.observations[0].nbytes,
                           "mask": vec.num_actions},
        "ns_per_step": ns,
        "ns_per_step_sample_actions": statistics.median(sample),
        "ns_per_step_vec_loop": 1e9 / loop_rate,
        "vec_loop_steps_per_s": loop_rate,
        "anchor_steps_per_s": anchor,
        "vec_loop_ratio_to_anchor": loop_rate / anchor,
    }


def table(rows: list[dict[str, Any]]) -> str:
    """The parts of a step (ns per game step, wall time) per game and batch size."""
    head = (f"{'game':16s} {'B':>6s} {'kB/game':>7s} {'step':>6s} {'+mask':>6s} {'+obs':>6s} "
            f"{'driver':>7s} {'out-cached':>10s} {'sample':>7s} {'vec loop':>9s} "
            f"{'M st/s':>7s} {'x anchor':>8s}")
    lines = [head, "-" * len(head)]
    for r in rows:
        ns, b = r["ns_per_step"], r["bytes_per_game"]
        kb = sum(b.values()) / 1024
        lines.append(
            f"{r['game']:16s} {r['batch_size']:6d} {kb:7.1f} {ns['step']:6.0f} "
            f"{ns['step + mask'] - ns['step']:6.0f} {ns['step + observe'] - ns['step']:6.0f} "
            f"{ns['step + mask + observe']:7.0f} {ns['outputs in cache']:10.0f} "
            f"{r['ns_per_step_sample_actions']:7.0f} {r['ns_per_step_vec_loop']:9.0f} "
            f"{r['vec_loop_steps_per_s'] / 1e6:7.2f} {r['vec_loop_ratio_to_anchor']:8.0f}")
    lines.append("")
    lines.append("ns per game step (wall time): step = the rules' step with the auto-reset deal; "
                 "+mask / +obs = what the legal mask / the observation add to it; driver = all "
                 "three; out-cached = the driver writing masks and observations into "
                 f"{CACHED_ROWS} rows per thread only; sample = sample_actions; vec loop = "
                 "vec.step(vec.sample_actions()); x anchor = its rate over connect_four_v3's "
                 "AEC loop in this process.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", nargs="+", default=["if_it_fits_v0"])
    ap.add_argument("--batch-sizes", type=int, nargs="+", default=[512, 1024, 4096])
    ap.add_argument("--warmup", type=int, default=300, help="random steps before recording")
    ap.add_argument("--steps", type=int, default=60, help="recorded steps replayed per round")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--seconds", type=float, default=0.5, help="per timing of the user loop "
                    "and of the anchor")
    ap.add_argument("--threads", type=int, default=None, help="numba threads (default: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    for name, value, low in (("--warmup", args.warmup, 0), ("--steps", args.steps, 1),
                             ("--rounds", args.rounds, 1)):
        if value < low:
            ap.error(f"{name} must be >= {low}")
    if min(args.batch_sizes) < 1 or not 0 < args.seconds <= 60:
        ap.error("batch sizes must be >= 1 and --seconds in (0, 60]")
    if args.threads is not None:
        if not 1 <= args.threads <= numba.config.NUMBA_NUM_THREADS:
            ap.error(f"--threads must be in 1..{numba.config.NUMBA_NUM_THREADS}")
        numba.set_num_threads(args.threads)
    from pettingzoo.classic import connect_four_v3

    anchor_run = aec_runner(connect_four_v3.env(), args.seed)
    rows = []
    for env_id in args.games:
        game = card_envs.vector.make(env_id, num_envs=1, seed=0).game
        log(f"{env_id}: compiling {len(DRIVERS)} drivers")
        drivers = [(name, build_driver(game, *flags)) for name, *flags in DRIVERS]
        for B in args.batch_sizes:
            log(f"{env_id} B={B}: {args.rounds} rounds of {args.steps} steps")
            rows.append(profile_game(env_id, B, args, drivers, anchor_run))
    print(table(rows))
    out = args.json or (Path(__file__).resolve().parent / "results"
                        / f"profile_batched-{time.strftime('%Y%m%d-%H%M%S')}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"machine": machine_info(), "versions": versions(),
                               "args": {k: (str(v) if isinstance(v, Path) else v)
                                        for k, v in vars(args).items()},
                               "rows": rows}, indent=1))
    print(f"\nJSON: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
