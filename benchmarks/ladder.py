#!/usr/bin/env python
"""Strength ladder: each game's search agent against its heuristic, 2 players, in the arena.

For every game (``--games``) the arena plays ``--deals`` duplicate deals, each with both
seatings (so ``2 x deals`` games), search vs heuristic, over ``--workers`` processes. Budgets
are iterations per move (reproducible: same seed, same games); the arena measures the wall time
each agent takes per move on this machine, and the table reports it next to the win rate and
its 95% Wilson interval. Each game's budget and target are in its manifest
(``card_envs/<game>/manifest.py``, ``bench.ladder_budget`` and ``bench.ladder_target``); the
targets: search wins >= 60% against the heuristic (``"win"``: Slide, Isflak, Flipology
and If It Fits), or is not worse than it (``"not worse"``, the interval reaches 50% or more: Op
Glad IJs), with <= 200 ms per move.

Usage::

    python benchmarks/ladder.py                       # full ladder (~30-40 min on 2 cores)
    python benchmarks/ladder.py --games isflak_v0 --deals 20
    python benchmarks/ladder.py --quick               # smoke run (tiny budgets, few deals)

Writes ``benchmarks/results/ladder-<time>.json`` (machine, versions, every arena result) and,
with ``--plots``, the arena's PNG plots per game.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from throughput import machine_info

from card_envs.arena import run_arena
from card_envs.core.registry import manifest, manifests, resolve_env_id

MAX_MS = 200.0  # the time target per search move
WIN_RATE = 0.60  # target "win": the search agent's win rate against the heuristic


def verdict(env_id: str, rate: float, ci: tuple[float, float], ms: float) -> str:
    """PASS/FAIL of one game's row against its manifest's ``bench.ladder_target``
    (``"win"``: win rate >= 0.60; ``"not worse"``: the 95% interval reaches 0.5)."""
    if ms > MAX_MS:
        return "FAIL (time)"
    if manifest(env_id).bench.ladder_target == "not worse":
        return "PASS" if ci[1] >= 0.5 else "FAIL"
    return "PASS" if rate >= WIN_RATE else "FAIL"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", nargs="*",
                    default=[m.env_id for m in manifests() if m.heuristic is not None],
                    help="env ids or game names (default: every game with a heuristic)")
    ap.add_argument("--deals", type=int, default=100, help="deals per game (2 games each)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--quick", action="store_true", help="tiny budgets and 3 deals (smoke)")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--plots", type=Path, default=None, help="directory for PNG plots")
    args = ap.parse_args(argv)

    rows: list[dict[str, Any]] = []
    results = []
    for env_id in map(resolve_env_id, args.games):
        spec = "mcts:iterations=50" if args.quick else manifest(env_id).bench.ladder_budget
        deals = 3 if args.quick else args.deals
        t0 = time.perf_counter()
        res = run_arena(env_id, [spec, "heuristic"], 2 * deals, num_players=2, seed=args.seed,
                        workers=args.workers)
        s = res[spec]
        rate, ci, ms = s.win_rate, s.ci95, s.ms_per_move
        row = {"env_id": env_id, "search": spec, "games": s.games, "win_rate": rate,
               "ci95": list(ci), "ms_per_move": ms,
               "heuristic_ms_per_move": res["heuristic"].ms_per_move,
               "wall_s": time.perf_counter() - t0,
               "verdict": "n/a (quick)" if args.quick else verdict(env_id, rate, ci, ms)}
        rows.append(row)
        results.append(res.to_json())
        print(f"{env_id:<16}{spec:<24}{s.games:>6}{rate:>8.3f}  [{ci[0]:.3f}, {ci[1]:.3f}]"
              f"{ms:>9.1f} ms/move  {row['wall_s']:>6.0f} s  {row['verdict']}", flush=True)
        if args.plots:
            from card_envs.arena.plots import plot_ratings, plot_winrate_matrix

            args.plots.mkdir(parents=True, exist_ok=True)
            plot_winrate_matrix(res, args.plots / f"{env_id}_winrate.png")
            plot_ratings(res, args.plots / f"{env_id}_ratings.png")

    print()
    print(f"{'game':<16}{'search':<24}{'games':>6}{'win':>8}{'95% CI':>18}{'ms/move':>10}"
          f"  verdict")
    for r in rows:
        lo, hi = r["ci95"]
        print(f"{r['env_id']:<16}{r['search']:<24}{r['games']:>6}{r['win_rate']:>8.3f}"
              f"{f'[{lo:.3f}, {hi:.3f}]':>18}{r['ms_per_move']:>10.1f}  {r['verdict']}")
    out = {"benchmark": "ladder", "time": time.strftime("%Y-%m-%d %H:%M:%S"),
           "machine": machine_info(), "args": {k: str(v) for k, v in vars(args).items()},
           "rows": rows, "arena": results}
    path = args.json or Path(__file__).parent / "results" / \
        f"ladder-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
