#!/usr/bin/env python
"""Search speed: the ``az`` agent's simulations and network leaf evaluations per second beside
plain ``mcts`` iterations per second, per game, on the same positions, in one process; then the
batched search over many games (one thread, one process) and self-play decisions per second.

    python benchmarks/search_speed.py                      # every game, batches 1 8 16 32 64
    python benchmarks/search_speed.py --games slide isflak --batches 16
    python benchmarks/search_speed.py --quick              # smoke run: Slide, tiny budgets

**Positions.** ``--positions`` per game (``--players`` seats, 2 by default): deal ``seed + i``
played ``i * 7 mod 40`` random moves in (a fresh deal when a game ends first), the same for
every agent.
**Measured.** Each agent searches every position once untimed (compiling, loading caches) and
then ``--repeats`` times, timed per search with ``time.perf_counter``; a rate is the total
over the timed searches (simulations, or network-evaluated leaves for ``az``) divided by their
total time, and the table gives the median repeat. ``az`` runs with its default policy network
(the shipped PPO baseline) and ``--az-iterations`` simulations per search at each ``--batches``
size; ``mcts`` with ``--mcts-iterations``. A simulation of ``az`` is a leaf evaluated by the
network or a finished game reached; one of ``mcts`` is a random rollout to the end of the
game. ``other_cpu_load`` is the CPU other processes used meanwhile (a busy machine slows
both).

**Batched.** ``--batched`` sizes ``B``: the positions repeated to ``B`` games, searched
together by :class:`~card_envs.agents.az_search.BatchSearch` with ``--batched-sims``
simulations each (Gumbel root, one numba and one torch thread: what one self-play worker does),
``--repeats`` timed searches: network-evaluated leaves per second, beside ``mcts`` on one
thread. **Self-play**: decisions per second of ``--selfplay-games`` games in lockstep
(:class:`~card_envs.rl.az.selfplay.SelfPlay`, ``--batched-sims`` simulations a move, every move
counted, the searched ones and those with one legal action), in one process; the trainer runs
one such process per core.

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


def game_options(env_id: str, players: int) -> dict[str, Any]:
    """The options every agent and position of a game uses here."""
    return {**OPTIONS.get(env_id, {}), "num_players": players}


def positions(env_id: str, count: int, seed: int, players: int = 2) -> list[np.ndarray]:
    """``count`` unfinished positions of ``env_id`` (module docstring), as state arrays."""
    out = []
    for i in range(count):
        env = card_envs.make_raw(env_id, **game_options(env_id, players))
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
    states = positions(env_id, args.positions, args.seed, args.players)
    opts = game_options(env_id, args.players)
    out: dict[str, Any] = {"env_id": env_id, "players": args.players, "positions": len(states),
                           "az": []}
    mcts = make_agent(f"mcts:iterations={args.mcts_iterations}", env_id, seed=0, **opts)
    out["mcts"] = {"iterations": args.mcts_iterations,
                   "repeats": time_agent(mcts, states, args.repeats)}
    log(f"  {env_id} mcts: {fmt_rate(_median(out['mcts'], 'sims_per_s'))} iterations/s")
    if args.batched:
        out["batched"] = measure_batched(env_id, states, args)
    for b in args.batches:
        az = az_agent(f"az:iterations={args.az_iterations},batch={b}", env_id, args.players)
        row = {"batch": b, "iterations": args.az_iterations,
               "repeats": time_agent(az, states, args.repeats)}
        out["az"].append(row)
        log(f"  {env_id} az batch {b}: {fmt_rate(_median(row, 'leaves_per_s'))} leaves/s")
    return out


def az_agent(spec: str, env_id: str, players: int) -> Any:
    """An ``az`` agent with the game's shipped network for ``players`` seats, or a fresh
    network of that many seats where none is shipped (speed does not depend on the weights'
    values)."""
    opts = game_options(env_id, players)
    try:
        from card_envs.agents.az import default_network

        default_network(env_id, players)
    except ValueError:
        from card_envs.agents.az import AZAgent
        from card_envs.agents.net import NetPolicy
        from card_envs.agents.registry import parse_spec

        _, params = parse_spec(spec)
        return AZAgent(env_id, seed=0, model=NetPolicy(env_id, players, OPTIONS.get(
            env_id, {}), value_dim=players), **params, **opts)
    return make_agent(spec, env_id, seed=0, **opts)


def measure_batched(env_id: str, states: list[np.ndarray], args: argparse.Namespace
                    ) -> dict[str, Any]:
    """Batched-search rows (leaves/s per batch size) and the self-play row of one game."""
    import numba
    import torch

    from card_envs.agents.az_search import BatchSearch
    from card_envs.rl.az.selfplay import SelfPlay

    opts = game_options(env_id, args.players)
    sims = args.batched_sims
    ev = az_agent("az:iterations=2", env_id, args.players).evaluator
    old = (numba.get_num_threads(), torch.get_num_threads())
    numba.set_num_threads(1)
    torch.set_num_threads(1)
    out: dict[str, Any] = {"sims": sims, "rows": []}
    try:
        for B in args.batched:
            big = np.stack([states[i % len(states)] for i in range(B)])
            bs = BatchSearch(env_id, num_games=B, threads=1, max_nodes=64 + 64 * sims, **opts)
            seeds = np.arange(B, dtype=np.uint64)
            bs.run(big, ev, sims, seeds, noise=True)  # untimed: compile, warm up
            reps = []
            for r in range(args.repeats):
                with LoadProbe() as probe:
                    t = time.perf_counter()
                    res = bs.run(big, ev, sims, seeds + np.uint64(r + 1), noise=True)
                    secs = time.perf_counter() - t
                reps.append({"repeat": r, "games": B, "leaves": res.leaves,
                             "forwards": res.forwards, "seconds": secs,
                             "leaves_per_s": res.leaves / secs, "other_cpu_load": probe.other})
            out["rows"].append({"batch": B, "repeats": reps})
            log(f"  {env_id} batched B={B}: "
                f"{fmt_rate(statistics.median(x['leaves_per_s'] for x in reps))} leaves/s")
        sp = SelfPlay(env_id, opts, slots=args.selfplay_games, first=0, seed=args.seed,
                      sims=sims, considered=16, determinizations=4,
                      max_nodes=64 + 64 * sims, c_visit=50.0, c_scale=0.1, prior_temp=1.0)
        sp.play(ev, 2)  # untimed
        reps = []
        for r in range(args.repeats):
            with LoadProbe() as probe:
                t = time.perf_counter()
                d = sp.play(ev, args.selfplay_steps)
                secs = time.perf_counter() - t
            dec = int(d["decisions"][0])
            reps.append({"repeat": r, "decisions": dec, "searched": int(len(d["seat"])),
                         "seconds": secs, "decisions_per_s": dec / secs,
                         "other_cpu_load": probe.other})
        out["selfplay"] = {"games": args.selfplay_games, "steps": args.selfplay_steps,
                           "repeats": reps}
        log(f"  {env_id} self-play: "
            f"{fmt_rate(statistics.median(x['decisions_per_s'] for x in reps))} decisions/s")
    finally:
        numba.set_num_threads(old[0])
        torch.set_num_threads(old[1])
    return out


def batched_table(results: list[dict[str, Any]]) -> str:
    """One line per game and batch size: leaves/s of the batched search on one thread, mcts
    iterations/s on one thread, their ratio, and self-play decisions/s in one process."""
    head = (f"{'game':<16}{'games':>7}{'sims':>6}{'leaves/s':>11}{'mcts it/s':>11}"
            f"{'ratio':>7}{'self-play dec/s':>17}")
    lines = [head, "-" * len(head)]
    for g in results:
        m = _median(g["mcts"], "sims_per_s")
        b = g.get("batched")
        if not b:
            continue
        sp = statistics.median(r["decisions_per_s"] for r in b["selfplay"]["repeats"])
        for k, row in enumerate(b["rows"]):
            leaves = _median(row, "leaves_per_s")
            lines.append(f"{g['env_id']:<16}{row['batch']:>7}{b['sims']:>6}"
                         f"{fmt_rate(leaves):>11}{fmt_rate(m):>11}{leaves / m:>7.2f}"
                         f"{fmt_rate(sp) if k == 0 else '':>17}")
    return "\n".join(lines)


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
    ap.add_argument("--batched", nargs="+", type=int, default=[256, 1024],
                    help="games searched together by the batched search (256 1024; 0: none)")
    ap.add_argument("--batched-sims", type=int, default=32,
                    help="simulations per game of the batched search and self-play (32)")
    ap.add_argument("--selfplay-games", type=int, default=256,
                    help="games of the self-play measure (256)")
    ap.add_argument("--selfplay-steps", type=int, default=16,
                    help="moves per game per timed self-play repeat (16)")
    ap.add_argument("--players", type=int, default=2, help="seats (default 2)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: Slide, 2 positions, batches 1 and 16, tiny budgets")
    ap.add_argument("--json", type=Path, default=None, help="where to write the results")
    args = ap.parse_args(argv)
    if args.quick:
        args.games = args.games or ["slide_v0"]
        args.batches, args.positions, args.repeats = [1, 16], 2, 1
        args.az_iterations, args.mcts_iterations = 64, 200
        args.batched, args.batched_sims = [16], 8
        args.selfplay_games, args.selfplay_steps = 16, 4
    args.batched = [b for b in args.batched if b > 0]
    games = [resolve_env_id(g) for g in (args.games or env_ids())]
    started = time.strftime("%Y%m%d-%H%M%S")
    log(f"search speed: {', '.join(games)}; {args.positions} positions, az {args.az_iterations}"
        f" simulations (batches {args.batches}), mcts {args.mcts_iterations} iterations, "
        f"{args.repeats} repeat(s)")
    results = [measure_game(g, args) for g in games]
    print("\nSearch speed per game (median repeat; leaves: network evaluations):")
    print(table(results))
    if args.batched:
        print(f"\nBatched search and self-play ({args.batched_sims} simulations a move; one "
              "thread; leaves: network evaluations):")
        print(batched_table(results))
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
