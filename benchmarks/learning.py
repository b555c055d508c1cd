#!/usr/bin/env python
"""Learning benchmark: ``examples/train_ppo.py`` on every game, with the game's features and
with the observation alone, then 400 duplicate arena games of each final model against random
and against the heuristic; a table, learning curves and JSON.

Each run is its own process (``examples/train_ppo.py --threads 1``: torch on one thread, the
batch of 64 games on numba's serial driver, so one run takes one core); ``--parallel 2`` runs
two at a time on a 2-core machine. Everything a run did is in its folder under ``--out``
(``history.json``, ``learning_curve.png``, ``config.json``, ``final.zip``); the arena results
and the machine's load during the runs go to ``benchmarks/results/learning-<time>.json``, a
markdown table to stdout, and one PNG per game with both curves to ``--plots``.

This benchmark runs the stable-baselines3 trainer (``--trainer sb3``); the baselines shipped in
the package come from card-envs' own trainer (``benchmarks/baselines.py``).

Usage::

    python benchmarks/learning.py --minutes 15 --parallel 2            # all five games
    python benchmarks/learning.py --games slide --minutes 1 --modes features --games-eval 40
    python benchmarks/learning.py --from benchmarks/results/learning-A.json,learning-B.json

``--from`` trains nothing: it merges the runs of earlier result JSONs (a later run of the same
game and mode replaces an earlier one), reads each run's ``history.json`` from its folder, and
prints the table and draws the curves again.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from throughput import LoadProbe, machine_info, pkg_version  # noqa: E402

from card_envs.core.registry import env_ids, resolve_env_id  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
SHIP = ROOT / "agents" / "data" / "ppo"
MODES = {"features": [], "obs": ["-p", "game_features=False"]}


def _git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def train_command(env_id: str, mode: str, minutes: float, seed: int, out: Path) -> list[str]:
    """The ``examples/train_ppo.py`` command of one run."""
    return [sys.executable, str(ROOT / "examples" / "train_ppo.py"), "--trainer", "sb3",
            "--game", env_id,
            "--minutes", f"{minutes:g}", "--seed", str(seed), "--threads", "1",
            "--out", str(out), "--overwrite", "--no-progress", *MODES[mode]]


def run_one(env_id: str, mode: str, args: argparse.Namespace) -> dict[str, Any]:
    """Train, then evaluate the final model in the arena (400 duplicate games per opponent)."""
    out = Path(args.out) / f"{mode}-{env_id}"
    cmd = train_command(env_id, mode, args.minutes, args.seed, out)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    t0 = time.perf_counter()
    with LoadProbe() as probe, open(Path(args.out) / f"{mode}-{env_id}.log", "w") as log:
        proc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
    train_s = time.perf_counter() - t0
    if proc.returncode != 0:
        return {"env_id": env_id, "mode": mode, "error": f"exit {proc.returncode}",
                "log": str(Path(args.out) / f"{mode}-{env_id}.log")}
    from card_envs.agents.ppo import PPOAgent
    from card_envs.arena import run_arena

    history = json.loads((out / "history.json").read_text())
    cfg = json.loads((out / "config.json").read_text())
    arena = {}
    for opp in ("random", "heuristic"):
        agent = PPOAgent(env_id, path=str(out / "final.zip"), **cfg["options"])
        res = run_arena(env_id, [agent, opp], games=args.games_eval, seed=args.eval_seed,
                        progress=False, **cfg["options"])
        st = res["ppo"]
        arena[opp] = {"win_rate": st.win_rate, "ci95": list(st.ci95), "games": st.games}
    return {"env_id": env_id, "mode": mode, "command": " ".join(cmd[1:]), "train_s": train_s,
            "other_cpu_load": probe.other, "out": str(out), "arena": arena,
            "learner_steps": history[-1]["learner_steps"] if history else None,
            "env_steps_per_s": history[-1]["env_steps_per_s"] if history else None,
            "history": history}


def plot(game_rows: list[dict[str, Any]], path: Path) -> None:
    """Both modes' evaluation curves (vs random, vs heuristic) of one game."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 3.6), dpi=110)
    styles = {"features": "-", "obs": "--"}
    for row in game_rows:
        h = row.get("history") or []
        if not h:
            continue
        t = [r["seconds"] / 60 for r in h]
        for opp, colour in (("random", "#1f6fb2"), ("heuristic", "#c0392b")):
            y = [r[f"{opp}_win_rate"] for r in h]
            lo = [r[f"{opp}_ci_low"] for r in h]
            hi = [r[f"{opp}_ci_high"] for r in h]
            ax.plot(t, y, styles[row["mode"]], color=colour, marker="o", ms=3,
                    label=f"{row['mode']} vs {opp}")
            ax.fill_between(t, lo, hi, color=colour, alpha=0.08)
    ax.axhline(0.5, color="grey", lw=0.8)
    ax.set_ylim(0, 1)
    ax.set_xlabel("training wall time (minutes, one core)")
    ax.set_ylabel("win rate (greedy, 95% CI)")
    ax.set_title(f"{game_rows[0]['env_id']}: PPO self-play, features vs observation only")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def table(games: list[str], rows: list[dict[str, Any]], plots: Path | None) -> None:
    """The markdown table of ``rows`` (and one PNG of curves per game into ``plots``)."""
    print("\n| game | mode | learner steps | env steps/s | vs random (95% CI) | "
          "vs heuristic (95% CI) | other load (CPUs) |")
    print("|---|---|---|---|---|---|---|")
    for g in games:
        mine = [r for r in rows if r["env_id"] == g and "error" not in r]
        if mine and plots is not None:
            plots.mkdir(parents=True, exist_ok=True)
            plot(mine, plots / f"{g}.png")
        for r in mine:
            a = r["arena"]
            cell = {k: f"{v['win_rate']:.3f} [{v['ci95'][0]:.3f}, {v['ci95'][1]:.3f}]"
                    for k, v in a.items()}
            load = r.get("other_cpu_load")
            print(f"| {g} | {r['mode']} | {r['learner_steps']:,} | "
                  f"{r['env_steps_per_s']:,.0f} | {cell['random']} | {cell['heuristic']} | "
                  f"{'n/a' if load is None else f'{load:.2f}'} |")


def replot(args: argparse.Namespace) -> int:
    """``--from``: the table and curves of earlier runs (module docstring)."""
    runs: dict[tuple[str, str], dict[str, Any]] = {}
    for name in args.from_json.split(","):
        path = Path(name.strip())
        if not path.exists():
            path = RESULTS / path.name
        for r in json.loads(path.read_text())["runs"]:
            if "error" in r:
                continue
            hist = Path(r["out"]) / "history.json"
            r = {**r, "history": json.loads(hist.read_text()) if hist.exists() else []}
            runs[(r["env_id"], r["mode"])] = r
    rows = list(runs.values())
    games = [g for g in env_ids() if any(r["env_id"] == g for r in rows)]
    table(games, rows, Path(args.plots))
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", default="all", help="comma-separated games, or all")
    p.add_argument("--modes", default="features,obs", help="features and/or obs")
    p.add_argument("--runs", default=None, help="comma-separated game:mode pairs to run "
                   "instead of every game in every mode (e.g. slide:obs,isflak:features)")
    p.add_argument("--minutes", type=float, default=15.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--parallel", type=int, default=2, help="runs at a time")
    p.add_argument("--games-eval", type=int, default=400, help="arena games per opponent")
    p.add_argument("--eval-seed", type=int, default=2026)
    p.add_argument("--out", default="runs/learning")
    p.add_argument("--plots", default="docs/images/learning")
    p.add_argument("--from", dest="from_json", default=None,
                   help="comma-separated result JSONs: table and plots of their runs, no "
                        "training")
    args = p.parse_args(argv)
    if args.from_json:
        return replot(args)
    games = list(env_ids())[:5] if args.games == "all" else [
        resolve_env_id(g.strip()) for g in args.games.split(",")]
    modes = [m.strip() for m in args.modes.split(",")]
    for m in modes:
        if m not in MODES:
            p.error(f"unknown mode {m!r}; known: {list(MODES)}")
    Path(args.out).mkdir(parents=True, exist_ok=True)
    jobs = [(g, m) for g in games for m in modes]
    if args.runs:
        jobs = []
        for item in args.runs.split(","):
            g, _, m = item.strip().partition(":")
            if m not in MODES:
                p.error(f"--runs {item!r}: mode must be one of {list(MODES)}")
            jobs.append((resolve_env_id(g), m))
        games = list(dict.fromkeys(g for g, _ in jobs))
    started = _dt.datetime.now(_dt.UTC)
    print(f"{len(jobs)} runs of {args.minutes:g} min, {args.parallel} at a time: about "
          f"{args.minutes * -(-len(jobs) // args.parallel) + 2 * len(jobs) // args.parallel:.0f}"
          " min", file=sys.stderr, flush=True)
    rows: list[dict[str, Any]] = []
    with ThreadPoolExecutor(args.parallel) as pool:
        for row in pool.map(lambda j: run_one(*j, args), jobs):
            rows.append(row)
            a = row.get("arena", {})
            print(f"  {row['env_id']} {row['mode']}: "
                  + (row.get("error") or ", ".join(f"vs {k} {v['win_rate']:.3f}"
                                                   for k, v in a.items())),
                  file=sys.stderr, flush=True)
    table(games, rows, Path(args.plots))
    result = {"benchmark": "learning", "started_utc": started.isoformat(),
              "machine": machine_info(), "commit": _git_commit(),
              "versions": {n: pkg_version(n) for n in ("card-envs", "torch",
                                                       "stable-baselines3", "sb3-contrib")},
              "options": vars(args),
              "runs": [{k: v for k, v in r.items() if k != "history"} for r in rows]}
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"learning-{started.strftime('%Y%m%dT%H%M%SZ')}.json"
    path.write_text(json.dumps(result, indent=1, default=str))
    print(f"\nJSON: {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
