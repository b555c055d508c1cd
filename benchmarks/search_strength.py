#!/usr/bin/env python
"""Strength of the learned search (``az``) against plain search and the heuristic, of every
searcher against time per move, and of a self-play run's network against the one it started
from, at 2 or more seats, in the arena (duplicate deals, every seat rotation).

Parts, each a list of arena matches (cells):

* ``table``: ``az:ms=200`` against ``mcts:ms=200`` and against ``heuristic`` (equal time per
  move for the two searchers);
* ``curve``: ``az``, ``mcts`` at 50, 200 and 1000 ms per move, and the PPO policy alone
  (``ppo``, which takes no time budget), each against ``heuristic``;
* ``loop``: ``az`` with a run's network (``--new``) against ``az`` with the network it started
  from (``--start``), both at ``--iterations`` simulations a move, and the new network alone
  (``ppo:path=...``) against ``heuristic``.

``--az`` adds parameters to every ``az`` spec (e.g. ``path=runs/az_isflak/final.safetensors``).
With ``--players`` n > 2 the first agent plays against n - 1 copies of the opponent (the arena
fills the seats from the pool ``[opponent, agent]``).

Every cell is one :func:`card_envs.arena.run_arena` run (seed ``--seed``, ``--deals`` deals
played in both seatings, ``--workers`` processes) saved as ``<out>/<cell>.json`` as soon as it
ends; a cell whose file exists is read back, not played again, so an interrupted run resumes
where it stopped (``--fresh`` replays everything). The script prints a table (win rate of the
first agent, 95% Wilson interval, measured ms per move of both), writes
``<out>/summary_<part>.json`` (machine, versions, rows; rows of earlier runs into the same
folder are kept, so a table can be built by several runs) and, with ``--plot``, the curve of
all those rows as a PNG.

Usage::

    python benchmarks/search_strength.py --part table --deals 200          # 400 games a cell
    python benchmarks/search_strength.py --part curve --deals 20 --plot docs/images/search_curve.png
    python benchmarks/search_strength.py --part table --games slide isflak --deals 50
    python benchmarks/search_strength.py --part table --deals 50 --deals-for op_glad_ijs=10

Time per cell is about ``2 x deals x decisions x ms``: at 200 ms per move a 400-game cell
against ``mcts`` takes 40 min (Isflak) to 4 h (Op Glad IJs, ~190 decisions a game) on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from throughput import machine_info

from card_envs.arena import run_arena
from card_envs.arena.results import ArenaResult
from card_envs.core.registry import manifests, resolve_env_id

RESULTS = Path(__file__).parent / "results" / "search_strength"
CURVE_MS = (50, 200, 1000)


def cells(part: str, env_ids: list[str], ms: tuple[int, ...], az: str = "",
          loop: tuple[str, str, int] | None = None) -> list[tuple[str, str, str]]:
    """``(env_id, first agent, opponent)`` of every match of ``part`` (``az``: parameters
    added to every az spec; ``loop``: the new and start networks and the simulations)."""
    extra = f",{az}" if az else ""
    out: list[tuple[str, str, str]] = []
    for env_id in env_ids:
        if part == "table":
            out += [(env_id, f"az:ms=200{extra}", "mcts:ms=200"),
                    (env_id, f"az:ms=200{extra}", "heuristic")]
        elif part == "loop":
            assert loop is not None
            new, start, sims = loop
            out += [(env_id, f"az:iterations={sims},path={new}{extra}",
                     f"az:iterations={sims},path={start}{extra}"),
                    (env_id, f"ppo:path={new}", "heuristic")]
        else:
            out += [(env_id, f"{a}:ms={t}{extra if a == 'az' else ''}", "heuristic")
                    for t in ms for a in ("az", "mcts")]
            out.append((env_id, "ppo", "heuristic"))
    return out


def cell_name(env_id: str, first: str, other: str, deals: int, seed: int,
              players: int = 2) -> str:
    clean = {ord(c): "_" for c in ":=+;,/."}
    seats = "" if players == 2 else f"_{players}p"
    name = f"{env_id}{seats}__{first.translate(clean)}__vs__{other.translate(clean)}"
    if len(name) > 180:  # long paths: a digest keeps the name short and unique
        import hashlib

        name = f"{env_id}{seats}__{hashlib.sha1(name.encode()).hexdigest()[:16]}"
    return f"{name}__d{deals}_s{seed}"


def play(env_id: str, first: str, other: str, deals: int, seed: int, workers: int | str,
         folder: Path, fresh: bool, players: int = 2) -> dict[str, Any]:
    """One cell: played, or read back from its file. ``deals`` deals, each in every seat
    rotation (``players`` games a deal)."""
    path = folder / f"{cell_name(env_id, first, other, deals, seed, players)}.json"
    if path.is_file() and not fresh:
        saved = json.loads(path.read_text())
        wall = saved.pop("wall_s", None)  # the run's wall time, beside the arena's result
        res = ArenaResult.from_json(saved)
    else:
        t0 = time.perf_counter()
        pool = [first, other] if players == 2 else [other, first]
        res = run_arena(env_id, pool, players * deals, num_players=players, seed=seed,
                        workers=workers)
        wall = time.perf_counter() - t0
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({**res.to_json(), "wall_s": wall}) + "\n")
    s = res[first]
    # at 3+ seats the opponent fills the other seats as copies labelled ``#0``, ``#1``...
    o = res[other] if other in res.labels else res[f"{other}#0"]
    return {"env_id": env_id, "players": players, "agent": first, "opponent": other,
            "games": s.games,
            "win_rate": s.win_rate, "ci95": list(s.ci95), "ms_per_move": s.ms_per_move,
            "opponent_ms_per_move": o.ms_per_move, "wall_s": wall, "file": path.name}


def plot_curve(rows: list[dict[str, Any]], path: Path) -> Path:
    """Win rate against the heuristic vs ms per move, one panel per game."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    games = list(dict.fromkeys(r["env_id"] for r in rows))
    fig, axes = plt.subplots(1, len(games), figsize=(3.2 * len(games), 3.0), squeeze=False,
                             sharey=True)
    for ax, env_id in zip(axes[0], games):
        mine = [r for r in rows if r["env_id"] == env_id]
        for name, colour in (("az", "tab:blue"), ("mcts", "tab:orange")):
            pts = sorted((float(r["agent"].split("ms=")[1]), r) for r in mine
                         if r["agent"].startswith(name + ":"))
            if pts:
                xs = [t for t, _ in pts]
                ax.errorbar(xs, [r["win_rate"] for _, r in pts],
                            yerr=[[r["win_rate"] - r["ci95"][0] for _, r in pts],
                                  [r["ci95"][1] - r["win_rate"] for _, r in pts]],
                            marker="o", capsize=3, label=name, color=colour)
        for r in mine:
            if r["agent"] == "ppo":
                ax.axhline(r["win_rate"], color="tab:green", ls="--", label="ppo (no search)")
        ax.axhline(0.5, color="0.7", lw=0.8)
        ax.set_xscale("log")
        ax.set_title(env_id.replace("_v0", ""))
        ax.set_xlabel("ms per move")
        ax.set_ylim(0, 1)
    axes[0][0].set_ylabel("win rate vs heuristic")
    axes[0][-1].legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--part", choices=("table", "curve", "loop"), default="table")
    ap.add_argument("--players", type=int, default=2, help="seats (default 2)")
    ap.add_argument("--az", default="", help="parameters added to every az spec, "
                    "e.g. path=runs/az_isflak/final.safetensors")
    ap.add_argument("--new", default=None, help="loop: the run's network")
    ap.add_argument("--start", default=None, help="loop: the network it started from")
    ap.add_argument("--iterations", type=int, default=128, help="loop: simulations a move")
    ap.add_argument("--games", nargs="*", default=[m.env_id for m in manifests()],
                    help="env ids or game names (default: all)")
    ap.add_argument("--deals", type=int, default=200,
                    help="deals per cell (one game per seat rotation each)")
    ap.add_argument("--deals-for", nargs="*", default=[], metavar="GAME=DEALS",
                    help="other deals for some games, e.g. op_glad_ijs=10")
    ap.add_argument("--ms", type=int, nargs="*", default=list(CURVE_MS),
                    help="curve: ms per move")
    ap.add_argument("--agents", nargs="*", default=None,
                    help="only the cells whose first agent is one of these (az, mcts, ppo)")
    ap.add_argument("--vs", nargs="*", default=None,
                    help="only the cells whose opponent is one of these (mcts:ms=200, "
                    "heuristic)")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--workers", default="2")
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--fresh", action="store_true", help="replay cells already saved")
    ap.add_argument("--plot", type=Path, default=None, help="curve: PNG path")
    args = ap.parse_args(argv)
    workers: int | str = args.workers if args.workers == "auto" else int(args.workers)
    deals_for = {}
    for item in args.deals_for:
        game, eq, num = item.partition("=")
        if not eq or not num.isdigit() or int(num) < 1:
            ap.error(f"--deals-for: GAME=DEALS, got {item!r}")
        deals_for[resolve_env_id(game)] = int(num)

    loop = None
    if args.part == "loop":
        if not args.new or not args.start:
            ap.error("--part loop needs --new and --start (policy .safetensors files)")
        loop = (args.new, args.start, args.iterations)
    rows = []
    head = (f"{'game':<16}{'agent':<14}{'opponent':<14}{'games':>6}{'win':>7}{'95% CI':>16}"
            f"{'ms/move':>9}{'opp ms':>8}{'wall s':>8}")
    print(head)
    for env_id, first, other in cells(args.part, [resolve_env_id(g) for g in args.games],
                                      tuple(args.ms), args.az, loop):
        if args.agents and first.split(":")[0] not in args.agents:
            continue
        if args.vs and other not in args.vs:
            continue
        r = play(env_id, first, other, deals_for.get(env_id, args.deals), args.seed, workers,
                 args.out, args.fresh, args.players)
        rows.append(r)
        lo, hi = r["ci95"]
        print(f"{env_id:<16}{first:<14}{other:<14}{r['games']:>6}{r['win_rate']:>7.3f}"
              f"{f'[{lo:.2f}, {hi:.2f}]':>16}{r['ms_per_move']:>9.1f}"
              f"{r['opponent_ms_per_move']:>8.1f}{r['wall_s'] or 0:>8.0f}", flush=True)
    path = args.out / f"summary_{args.part}.json"
    if path.is_file():  # earlier runs into this folder: their rows stay unless replayed here
        mine = {r["file"] for r in rows}
        rows = [r for r in json.loads(path.read_text()).get("rows", [])
                if r["file"] not in mine] + rows
    summary = {"benchmark": "search_strength", "part": args.part,
               "time": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": machine_info(),
               "args": {k: str(v) for k, v in vars(args).items()}, "rows": rows}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summary, indent=1) + "\n")
    print(f"wrote {path}")
    if args.plot and args.part == "curve":
        print(f"wrote {plot_curve(rows, args.plot)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
