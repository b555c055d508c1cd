#!/usr/bin/env python
"""The batched engine's rate in one process, for ``compare_commits.py --same-harness``.

Runs ``vec.step(vec.sample_actions())`` (``common.vector_runner``) for every game and batch
size, and PettingZoo's ``connect_four_v3`` AEC loop (the anchor) before and after, with
whatever ``card_envs`` is first on ``PYTHONPATH``: one script, so two trees are timed by the
same loop and differ only in the package. Uses nothing newer than
``card_envs.vector.make`` / ``step`` / ``sample_actions``. Prints one JSON object to stdout.

Usage::

    PYTHONPATH=<tree> python benchmarks/batched_probe.py --games slide_v0 --batch-sizes 4096
"""

from __future__ import annotations

import argparse
import json
import statistics

import numba
from common import LoadProbe, aec_runner, vector_runner

import card_envs
import card_envs.vector


def _rates(run, seconds: float, repeats: int) -> tuple[float, float]:
    """Median steps/s of ``repeats`` windows of ``seconds`` (after a short warm-up) and the
    most CPU other processes used during any of them."""
    run(min(0.25, seconds / 4))
    rates, load = [], 0.0
    for _ in range(repeats):
        with LoadProbe() as probe:
            steps, elapsed = run(seconds)
        rates.append(steps / elapsed)
        load = max(load, probe.other or 0.0)
    return statistics.median(rates), load


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", nargs="+", required=True)
    ap.add_argument("--batch-sizes", type=int, nargs="+", default=[4096])
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.threads:
        numba.set_num_threads(args.threads)
    from pettingzoo.classic import connect_four_v3

    anchor_run = aec_runner(connect_four_v3.env(), args.seed)
    runs = {(g, b): vector_runner(card_envs.vector.make(g, num_envs=b, seed=args.seed))
            for g in args.games for b in args.batch_sizes}
    a0, _ = _rates(anchor_run, args.seconds, 1)
    rows = []
    for (g, b), run in runs.items():
        rate, load = _rates(run, args.seconds, args.repeats)
        rows.append({"game": g, "batch_size": b, "steps_per_s": rate, "other_cpu_load": load})
    a1, _ = _rates(anchor_run, args.seconds, 1)
    anchor = (a0 + a1) / 2
    for r in rows:
        r["ratio_to_anchor"] = r["steps_per_s"] / anchor
    print(json.dumps({"package": card_envs.__file__, "anchor_steps_per_s": anchor,
                      "rows": rows}))


if __name__ == "__main__":
    main()
