"""How the native PPO's structure holds up when the machine is busy: the trainer's structures
against three machine states, in one run, round-robin, so the ratios compare like with like.

    python benchmarks/train_threads.py                              # isflak, op_glad_ijs; 40 s runs
    python benchmarks/train_threads.py --games all --seconds 60

Structures (``examples/train_ppo.py`` settings):

* ``pipelined``        the default: the next rollout is played in the sampler thread while the
                       learner updates (``-p pipeline=true``, threads from the plan);
* ``serial``           play, then learn, every parallel loop on all threads (``-p
                       pipeline=false``: the trainer before the pipeline);
* ``serial 1 thread`` the same on one thread (``-p pipeline=false --threads 1``).

States: ``quiet`` (both cores free), ``one core`` (pinned with ``taskset -c 0``, the other core
idle) and ``busy`` (both cores, another process spinning on one: ``python -c "while True:
pass"``). Each run is a fresh process (``--eval-games 0``); the rate is its summary's env steps
per second end to end (updates included). Ratios per structure: busy / one core and quiet / one
core; and every structure's busy rate against the pipelined one-core run. Writes
``benchmarks/results/train_threads-<time>.json`` (machine, versions, every run).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import LoadProbe, log, machine_info, versions
from contended import BusyCore

ROOT = Path(__file__).resolve().parents[1]
STRUCTURES = {"pipelined": ["-p", "pipeline=true"],
              "serial": ["-p", "pipeline=false"],
              "serial 1 thread": ["-p", "pipeline=false", "--threads", "1"]}
STATES = ("quiet", "one core", "busy")
GAMES = ("slide", "isflak", "op_glad_ijs", "flipology", "if_it_fits")


def train_once(game: str, structure: str, state: str, seconds: float, players: int
               ) -> dict[str, Any]:
    """One training run in a fresh process; its summary's figures and the other load."""
    out = Path(tempfile.mkdtemp(prefix="train_threads-"))
    cmd = [sys.executable, str(ROOT / "examples" / "train_ppo.py"), "--game", game,
           "--minutes", str(seconds / 60), "--eval-games", "0", "--no-progress",
           "--players", str(players), "--out", str(out / "run"), *STRUCTURES[structure]]
    if state == "one core":
        if shutil.which("taskset") is None:
            raise SystemExit("taskset is needed for the one-core state (util-linux)")
        cmd = ["taskset", "-c", "0", *cmd]
    try:
        with LoadProbe(children=True) as probe:
            if state == "busy":
                with BusyCore(1):
                    subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
            else:
                subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
        load = probe.other if probe.other is not None else float("nan")
        s = json.loads((out / "run" / "summary.json").read_text())
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return {"game": game, "structure": structure, "state": state,
            "env_steps_per_s": s["env_steps_per_s"], "wall_seconds": s["wall_seconds"],
            "rollout_seconds": s["rollout_seconds"], "update_seconds": s["update_seconds"],
            "wait_seconds": s.get("wait_seconds"), "threads": s.get("threads"),
            "other_load": load}


def table(runs: list[dict[str, Any]], games: list[str]) -> str:
    """The markdown table: rates per state and the ratios."""
    def rate(g: str, st: str, state: str) -> float:
        xs = [r["env_steps_per_s"] for r in runs
              if (r["game"], r["structure"], r["state"]) == (g, st, state)]
        return sum(xs) / len(xs) if xs else float("nan")

    lines = ["| game | structure | quiet | one core | busy | busy / one core | "
             "quiet / one core | busy / pipelined one core |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for g in games:
        anchor = rate(g, "pipelined", "one core")
        for st in STRUCTURES:
            q, o, b = (rate(g, st, s) for s in STATES)
            lines.append(f"| {g} | {st} | {q:,.0f} | {o:,.0f} | {b:,.0f} | {b / o:.2f} | "
                         f"{q / o:.2f} | {b / anchor:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", default="isflak,op_glad_ijs",
                    help="comma-separated short names, or all")
    ap.add_argument("--seconds", type=float, default=40.0, help="training seconds per run")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--structures", default=",".join(STRUCTURES))
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    games = list(GAMES) if args.games == "all" else args.games.split(",")
    structures = args.structures.split(",")
    if not 5 <= args.seconds <= 3600 or args.repeats < 1 or set(structures) - set(STRUCTURES):
        ap.error("--seconds in 5..3600, --repeats >= 1, structures among "
                 + ", ".join(STRUCTURES))
    runs = []
    t0 = time.time()
    for rep in range(args.repeats):
        for g in games:
            for st in structures:
                for state in STATES:
                    r = train_once(g, st, state, args.seconds, args.players)
                    r["repeat"] = rep
                    runs.append(r)
                    log(f"{g:12s} {st:17s} {state:9s} {r['env_steps_per_s']:>9,.0f} steps/s "
                        f"(other load {r['other_load']:.2f})")
    text = table(runs, games)
    print(text)
    path = Path(args.json) if args.json else (
        ROOT / "benchmarks" / "results"
        / f"train_threads-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"machine": machine_info(), "versions": versions(),
                                "args": vars(args), "seconds": round(time.time() - t0, 1),
                                "runs": runs, "table": text}, indent=1))
    print(f"JSON: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
