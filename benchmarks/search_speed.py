#!/usr/bin/env python
"""Search speed: the ``az`` agent's simulations and network leaf evaluations per second beside
plain ``mcts`` iterations per second, per game, on the same positions, in one process.

    python benchmarks/search_speed.py                      # every game, batches 1 8 16 32 64
    python benchmarks/search_speed.py --games slide isflak --batches 16
    python benchmarks/search_speed.py --quick              # smoke run: Slide, tiny budgets

**Positions.** ``--positions`` per game (2 players): deal ``seed + i`` played ``i * 7 mod 40``
random moves in (a fresh deal when a game ends first), the same for every agent.
**Measured.** Each agent searches every position once untimed (compiling, loading caches) and
then ``--repeats`` times, timed per search with ``time.perf_counter``; a rate is the total
over the timed searches (simulations, or network-evaluated leaves for ``az``) divided by their
total time, and the table gives the median repeat. ``az`` runs with its default policy network
(the shipped PPO baseline) and ``--az-iterations`` simulations per search at each ``--batches``
size; ``mcts`` with ``--mcts-iterations``. A simulation of ``az`` is a leaf evaluated by the
network or a finished game reached; one of ``mcts`` is a random rollout to the end of the
game. ``other_cpu_load`` is the CPU other processes used meanwhile (a busy machine slows
both).

Writes ``benchmarks/results/search_speed-<time>.json`` (machine, versions, arguments, every
repeat) unless ``--json`` says where.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import LoadProbe, fmt_rate, log, machine_info, versions

import card_envs
from card_envs.agents import make_agent
from card_envs.core.registry import env_ids, resolve_env_id

RESULTS_DIR = Path(__file__).resolve().parent / "results"
#: game options that keep random play short where a game allows it (as the search tests)
OPTIONS: dict[str, dict[str, Any]] = {"op_glad_ijs_v0": {"max_turned": 40}}


def positions(env_id: str, count: int, seed: int) -> list[np.ndarray]:
    """``count`` unfinished positions of ``env_id`` (module docstring), as state arrays."""
    out = []
    for i in range(count):
        env = card_envs.make_raw(env_id, **OPTIONS.get(env_id, {}))
        env.reset(seed=seed + i)
        rnd = random.Random(seed + i)
        for _ in range(i * 7 % 40):
            legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
            env.step(int(legal[rnd.randrange(legal.size)]))
            if env.terminations[env.agent_selection] or env.truncations[env.agent_selection]:
                env.reset(seed=seed + 1000 + i)
                break
        out.append(env.state_array.copy())
    return out


def time_agent(agent: Any, states: list[np.ndarray], repeats: int) -> list[dict[str, Any]]:
    """Each repeat: one timed search of every state; simulations, leaves and seconds."""
    for s in states:  # untimed: compile, load, fill caches
        agent.search(s)
    rows = []
    for r in range(repeats):
        sims = leaves = forwards = 0
        secs = 0.0
        with LoadProbe() as probe:
            for s in states:
                t = time.perf_counter()
                agent.search(s)
                secs += time.perf_counter() - t
                sims += agent.last_iterations
                leaves += getattr(agent, "last_leaves", 0)
                forwards += getattr(agent, "last_forwards", 0)
        rows.append({"repeat": r, "searches": len(states), "simulations": sims,
                     "leaves": leaves, "forwards": forwards, "seconds": secs,
                     "sims_per_s": sims / secs, "leaves_per_s": leaves / secs,
                     "other_cpu_load": probe.other})
    return rows


def measure_game(env_id: str, args: argparse.Namespace) -> dict[str, Any]:
    """The ``mcts`` row and one ``az`` row per batch size of one game."""
    states = positions(env_id, args.positions, args.seed)
    opts = OPTIONS.get(env_id, {})
    out: dict[str, Any] = {"env_id": env_id, "positions": len(states), "az": []}
    mcts = make_agent(f"mcts:iterations={args.mcts_iterations}", env_id, seed=0, **opts)
    out["mcts"] = {"iterations": args.mcts_iterations,
                   "repeats": time_agent(mcts, states, args.repeats)}
    log(f"  {env_id} mcts: {fmt_rate(_median(out['mcts'], 'sims_per_s'))} iterations/s")
    for b in args.batches:
        az = make_agent(f"az:iterations={args.az_iterations},batch={b}", env_id, seed=0,
                        **opts)
        row = {"batch": b, "iterations": args.az_iterations,
               "repeats": time_agent(az, states, args.repeats)}
        out["az"].append(row)
        log(f"  {env_id} az batch {b}: {fmt_rate(_median(row, 'leaves_per_s'))} leaves/s")
    return out


def _median(row: dict[str, Any], key: str) -> float:
    return statistics.median(r[key] for r in row["repeats"])


def table(results: list[dict[str, Any]]) -> str:
    """One line per game and az batch size: az simulations/s, leaf evaluations/s, leaves per
    forward, mcts iterations/s, and az leaves/s over mcts iterations/s."""
    head = (f"{'game':<16}{'batch':>6}{'az sims/s':>12}{'az leaves/s':>13}{'leaves/fwd':>12}"
            f"{'mcts it/s':>12}{'az/mcts':>9}{'load':>7}")
    lines = [head, "-" * len(head)]
    for g in results:
        m = _median(g["mcts"], "sims_per_s")
        for row in g["az"]:
            leaves = _median(row, "leaves_per_s")
            fwd = sum(r["forwards"] for r in row["repeats"])
            per = sum(r["leaves"] for r in row["repeats"]) / fwd if fwd else float("nan")
            loads = [r["other_cpu_load"] for r in row["repeats"] + g["mcts"]["repeats"]
                     if r["other_cpu_load"] is not None]
            load = f"{max(loads):.2f}" if loads else "?"
            lines.append(f"{g['env_id']:<16}{row['batch']:>6}"
                         f"{fmt_rate(_median(row, 'sims_per_s')):>12}{fmt_rate(leaves):>13}"
                         f"{per:>12.1f}{fmt_rate(m):>12}{leaves / m:>9.2f}{load:>7}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", nargs="+", default=None, metavar="GAME",
                    help="games (default: all registered)")
    ap.add_argument("--batches", nargs="+", type=int, default=[1, 8, 16, 32, 64],
                    help="az leaves per network forward (default 1 8 16 32 64)")
    ap.add_argument("--positions", type=int, default=8, help="positions per game (8)")
    ap.add_argument("--az-iterations", type=int, default=800, help="az simulations (800)")
    ap.add_argument("--mcts-iterations", type=int, default=2000,
                    help="mcts iterations per search (2000)")
    ap.add_argument("--repeats", type=int, default=3, help="timed repeats (3)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: Slide, 2 positions, batches 1 and 16, tiny budgets")
    ap.add_argument("--json", type=Path, default=None, help="where to write the results")
    args = ap.parse_args(argv)
    if args.quick:
        args.games = args.games or ["slide_v0"]
        args.batches, args.positions, args.repeats = [1, 16], 2, 1
        args.az_iterations, args.mcts_iterations = 64, 200
    games = [resolve_env_id(g) for g in (args.games or env_ids())]
    started = time.strftime("%Y%m%d-%H%M%S")
    log(f"search speed: {', '.join(games)}; {args.positions} positions, az {args.az_iterations}"
        f" simulations (batches {args.batches}), mcts {args.mcts_iterations} iterations, "
        f"{args.repeats} repeat(s)")
    results = [measure_game(g, args) for g in games]
    print("\nSearch speed per game (median repeat; leaves: network evaluations):")
    print(table(results))
    path = args.json or RESULTS_DIR / f"search_speed-{started}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    import torch

    path.write_text(json.dumps({
        "benchmark": "search_speed", "machine": machine_info(),
        "versions": {**versions(), "torch": torch.__version__},
        "args": {k: (v if isinstance(v, (int, float, list, type(None))) else str(v))
                 for k, v in vars(args).items()},
        "results": results}, indent=1) + "\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
