#!/usr/bin/env python
"""Did a change make the engines slower? ``throughput.py`` of two trees, interleaved in one run.

The older tree is a git revision checked out in a temporary worktree; the newer one is this
working tree (or a second revision). Each round runs ``benchmarks/throughput.py`` of the old
tree, then of the new one, each with its own tree first on ``PYTHONPATH``; every rate is a ratio
to PettingZoo's connect four measured in the same process, so drift between processes cancels.
Reported per game, variant and batch size: the mean ratio to the anchor of each tree over the
rounds and new/old (1.00 = unchanged; runs vary by a few percent). Writes JSON (machine,
versions, every round's rows).

The batched engine runs on all numba threads and is the most sensitive to other processes:
the ``load`` column is the most CPU other processes used during any of a row's measurements
(0 = quiet); rows above 0.3 are flagged ``busy``, their ratio says little. ``--threads 1``
compares the single-thread rates, which a busy machine disturbs much less (run it as well to
tell a change in the kernels from one in the threading).

``--same-harness`` times only the batched engine, and both trees with *this* tree's
``benchmarks/batched_probe.py`` (each tree's package first on ``PYTHONPATH``): the default mode
runs each tree's own ``throughput.py``, so a change of the timing loop itself (warm-up, chunk
size, what ran before in the process) shows as a change of the engine. One process per tree and
round; on a shared machine a process's rate varies by tens of percent with where its memory
lands, so use many short rounds (``--rounds 8 --seconds 0.5``) and read the median of the pairs
and their spread.

Usage::

    python benchmarks/compare_commits.py 19d70de                  # that commit vs this tree
    python benchmarks/compare_commits.py v0.1.0 HEAD --rounds 3 --games slide_v0
    python benchmarks/compare_commits.py 3fc96f8 --threads 1 --batch-sizes 4096
    python benchmarks/compare_commits.py 3fc96f8 --same-harness --rounds 8 --seconds 0.5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from common import log, machine_info, versions

ROOT = Path(__file__).resolve().parent.parent
BUSY = 0.3  # other processes' CPUs during a measurement above which a row is flagged


def _tree(rev: str | None, tmp: Path, name: str) -> Path:
    """This working tree for ``None``, else ``rev`` checked out in a temporary worktree."""
    if rev is None:
        return ROOT
    path = tmp / name
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f", str(path), rev],
                   check=True, capture_output=True, text=True)
    return path


def _run(tree: Path, out: Path, args: argparse.Namespace
         ) -> tuple[dict[tuple, float], dict[tuple, float]]:
    """One run of ``tree``'s ``throughput.py``: ratio to the anchor and other processes' load
    per (game, variant, batch size)."""
    cmd = [sys.executable, str(tree / "benchmarks" / "throughput.py"), "--seconds",
           str(args.seconds), "--repeats", str(args.repeats), "--json", str(out),
           "--batch-sizes", *map(str, args.batch_sizes)]
    if args.games:
        cmd += ["--games", *args.games]
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), os.environ.get(
        "PYTHONPATH", "")])}
    subprocess.run(cmd, check=True, env=env, cwd=tree, stdout=subprocess.DEVNULL)
    rows = [m for m in json.loads(out.read_text())["measurements"]
            if not m["game"].startswith("connect_four")]
    key = [(m["game"], m["variant"], m["batch_size"]) for m in rows]
    return ({k: m["ratio_to_anchor"] for k, m in zip(key, rows)},
            {k: m.get("max_other_cpu_load") or 0.0 for k, m in zip(key, rows)})


def _probe(tree: Path, args: argparse.Namespace) -> dict[tuple, dict[str, float]]:
    """One process of ``batched_probe.py`` (this tree's) on ``tree``'s package: per (game,
    "vector", batch size) its steps/s, ratio to the anchor and other processes' load."""
    cmd = [sys.executable, str(ROOT / "benchmarks" / "batched_probe.py"), "--seconds",
           str(args.seconds), "--repeats", str(args.repeats), "--batch-sizes",
           *map(str, args.batch_sizes), "--games", *(args.games or _all_games())]
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), os.environ.get(
        "PYTHONPATH", "")])}
    out = json.loads(subprocess.run(cmd, check=True, env=env, cwd=tree, text=True,
                                    capture_output=True).stdout)
    if not out["package"].startswith(str(tree)):
        raise SystemExit(f"the probe imported {out['package']}, not the tree {tree}")
    return {(r["game"], "vector", r["batch_size"]): r for r in out["rows"]}


def _all_games() -> list[str]:
    import card_envs

    return list(card_envs.ENV_IDS)


def _same_harness(trees: dict[str, Path], args: argparse.Namespace) -> dict[str, Any]:
    """Rounds of old/new probes; per row the medians of both trees' rates, the median and
    range of the per-round new/old rate ratios, and new/old of the ratios to the anchor."""
    runs: dict[str, list[dict[tuple, dict[str, float]]]] = {"old": [], "new": []}
    for r in range(args.rounds):
        for side in ("old", "new"):
            log(f"round {r + 1}/{args.rounds}: {side} tree ({trees[side]})")
            runs[side].append(_probe(trees[side], args))
    table = []
    print(f"{'game':16} {'B':>6} {'old steps/s':>12} {'new steps/s':>12}  new/old"
          f"  {'pairs min..max':>14}  vs-anchor new/old   load")
    for k in runs["old"][0]:
        o = [x[k]["steps_per_s"] for x in runs["old"]]
        n = [x[k]["steps_per_s"] for x in runs["new"]]
        pairs = [b / a for a, b in zip(o, n)]
        anc = (statistics.median(x[k]["ratio_to_anchor"] for x in runs["new"])
               / statistics.median(x[k]["ratio_to_anchor"] for x in runs["old"]))
        load = max(x[k]["other_cpu_load"] for side in runs.values() for x in side)
        row = {"game": k[0], "variant": k[1], "batch_size": k[2],
               "old_median_steps_per_s": statistics.median(o),
               "new_median_steps_per_s": statistics.median(n),
               "new_over_old": statistics.median(pairs), "pairs_min": min(pairs),
               "pairs_max": max(pairs), "anchor_ratio_new_over_old": anc,
               "max_other_cpu_load": load}
        table.append(row)
        print(f"{k[0]:16} {k[2]:>6} {row['old_median_steps_per_s'] / 1e6:11.2f}M "
              f"{row['new_median_steps_per_s'] / 1e6:11.2f}M  {row['new_over_old']:7.3f}"
              f"  {min(pairs):6.2f}..{max(pairs):<6.2f}  {anc:17.3f}  {load:5.2f}"
              f"{'  busy' if load > BUSY else ''}")
    return {"table": table, "runs": {s: [[{**v, "key": list(k)} for k, v in x.items()]
                                         for x in runs[s]] for s in runs}}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old", help="the older git revision")
    ap.add_argument("new", nargs="?", default=None,
                    help="the newer revision (default: this working tree)")
    ap.add_argument("--rounds", type=int, default=2, help="old/new pairs (default 2)")
    ap.add_argument("--seconds", type=float, default=1.5, help="per measurement (default 1.5)")
    ap.add_argument("--repeats", type=int, default=3, help="per round (default 3)")
    ap.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 4096])
    ap.add_argument("--games", nargs="+", default=None)
    ap.add_argument("--threads", type=int, default=None,
                    help="numba threads of both trees (default: numba's default)")
    ap.add_argument("--same-harness", action="store_true",
                    help="batched engine only, both trees timed by this tree's probe")
    ap.add_argument("--json", default=str(ROOT / "benchmarks" / "results" /
                                          "compare_commits.json"))
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        trees = {"old": _tree(args.old, tmp, "old"), "new": _tree(args.new, tmp, "new")}
        try:
            res = (_same_harness(trees, args) if args.same_harness
                   else _own_harness(trees, args, tmp))
        finally:
            for tree in trees.values():
                if tree != ROOT:
                    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                                    str(tree)], capture_output=True)
    geo = statistics.geometric_mean(t["new_over_old"] for t in res["table"])
    mode = "same-harness" if args.same_harness else "throughput.py"
    print(f"geometric mean new/old: {geo:.3f} ({args.rounds} rounds, {mode}, old {args.old}, "
          f"new {args.new or 'working tree'})")
    _write(args, {"mode": mode, **res, "geometric_mean_new_over_old": geo})


def _own_harness(trees: dict[str, Path], args: argparse.Namespace, tmp: Path
                 ) -> dict[str, Any]:
    """Rounds of each tree's own ``throughput.py``; per row the mean ratio to the anchor of
    each tree and new/old."""
    runs: dict[str, list[dict[tuple, float]]] = {"old": [], "new": []}
    loads: dict[str, list[dict[tuple, float]]] = {"old": [], "new": []}
    for r in range(args.rounds):
        for side in ("old", "new"):
            log(f"round {r + 1}/{args.rounds}: {side} tree ({trees[side]})")
            ratios, load = _run(trees[side], tmp / f"{side}{r}.json", args)
            runs[side].append(ratios)
            loads[side].append(load)
    keys = [k for k in runs["old"][0] if all(k in x for x in runs["old"] + runs["new"])]
    table: list[dict[str, Any]] = []
    print(f"{'game':16} {'variant':10} {'B':>5}  {'old vs anchor':>13}  {'new vs anchor':>13}"
          "  new/old   load")
    for k in keys:
        o = statistics.mean(x[k] for x in runs["old"])
        n = statistics.mean(x[k] for x in runs["new"])
        load = max(x.get(k, 0.0) for side in loads.values() for x in side)
        table.append({"game": k[0], "variant": k[1], "batch_size": k[2], "old": o, "new": n,
                      "new_over_old": n / o, "max_other_cpu_load": load})
        print(f"{k[0]:16} {k[1]:10} {str(k[2] or '-'):>5}  {o:12.1f}x  {n:12.1f}x  {n / o:7.3f}"
              f"  {load:5.2f}{'  busy' if load > BUSY else ''}")
    return {"table": table,
            "runs": {s: [[[*k, v] for k, v in x.items()] for x in runs[s]] for s in runs}}


def _write(args: argparse.Namespace, result: dict[str, Any]) -> None:
    """The result JSON: machine, versions, the two revisions and the mode's own records."""
    out = {"machine": machine_info(), "versions": versions(), "old": args.old,
           "new": args.new or "working tree", "rounds": args.rounds, "threads": args.threads,
           **result}
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(out, indent=1))
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
