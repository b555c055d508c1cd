"""The pretrained PPO baselines: ship trained runs, measure them in the arena, write the docs.

    python benchmarks/baselines.py --ship runs/base       # copy runs/base/<game>/final.*
    python benchmarks/baselines.py --games 400 --mcts-games 100 --docs
    python benchmarks/baselines.py --players 3 --ship runs/nseat --games 200 --mcts-games 48 --docs

At 3 or 4 seats (``--players``) the runs are ``DIR/<game>_<n>p``, the files
``<env_id>_<n>p.*``, and the tables put ppo against ``n - 1`` heuristics and, beside it,
``mcts:ms=200`` in ppo's seat against the same field (``--mcts-games``).

``--ship DIR`` copies ``DIR/<game>/final.safetensors`` (weights only) and its ``final.json``
(configuration, the training command, seed, settings, final evaluation) into the package as
``agents/data/ppo/<env_id>.safetensors`` / ``.json``, and the run's learning curve to
``docs/images/training/<env_id>.png``. Then every shipped baseline plays ``--games`` duplicate
arena games (seed ``--seed``, 11 by default, deals not used in training) against the game's
heuristic and ``--mcts-games`` against ``mcts:ms=200`` (0: skip), exactly as
``card-envs arena --game G --agents ppo,heuristic --games 400 --seed 11`` does; the results go
into each baseline's JSON (``arena``), to ``benchmarks/results/baselines-<UTC>.json`` and,
with ``--docs``, into ``docs/training.md`` (between ``<!-- baselines:start/end -->``).
``--arena-from DIR`` takes those results from ``DIR/<game>.arena.json`` (heuristic) and
``DIR/<game>.mcts.json`` (``mcts:ms=200``), files ``card-envs arena --json`` wrote for the same
games, instead of playing them again.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine_info, versions  # noqa: E402

import card_envs  # noqa: E402,F401
from card_envs.core.registry import ENV_IDS, resolve_env_id  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "agents" / "data" / "ppo"
CURVES = ROOT / "docs" / "images" / "training"
MAX_BYTES = 2 << 20


def stem(env_id: str, players: int) -> str:
    """The baseline's file stem: ``slide_v0`` at 2 seats, ``slide_v0_3p`` at 3."""
    return env_id if players == 2 else f"{env_id}_{players}p"


def ship(run_dir: Path, env_id: str, players: int = 2) -> None:
    """Copy one run's final policy, its record and its curve into the package and docs (the
    run in ``run_dir/<game>`` at 2 seats, ``run_dir/<game>_<n>p`` at ``n``)."""
    name = env_id.removesuffix("_v0") + ("" if players == 2 else f"_{players}p")
    src = run_dir / name
    if not (src / "final.safetensors").is_file():
        src = run_dir / stem(env_id, players)
    weights, record = src / "final.safetensors", src / "final.json"
    if not weights.is_file() or not record.is_file():
        raise SystemExit(f"no final.safetensors / final.json in {src}")
    if weights.stat().st_size > MAX_BYTES:
        raise SystemExit(f"{weights}: {weights.stat().st_size} bytes, more than 2 MB")
    DATA.mkdir(parents=True, exist_ok=True)
    meta = json.loads(record.read_text())
    if meta.get("num_players") != players or meta.get("env_id") != env_id:
        raise SystemExit(f"{record}: a network for {meta.get('env_id')} with "
                         f"{meta.get('num_players')} players, not {env_id} with {players}")
    shutil.copyfile(weights, DATA / f"{stem(env_id, players)}.safetensors")
    history = json.loads((src / "history.json").read_text())
    meta["history"] = [{k: v for k, v in h.items() if k in (
        "env_steps", "learner_steps", "wall_seconds", "random_win_rate", "heuristic_win_rate")}
        for h in history]
    (DATA / f"{stem(env_id, players)}.json").write_text(json.dumps(meta, indent=1) + "\n")
    CURVES.mkdir(parents=True, exist_ok=True)
    if (src / "learning_curve.png").is_file():
        shutil.copyfile(src / "learning_curve.png", CURVES / f"{stem(env_id, players)}.png")


def measure(env_id: str, opponent: str, games: int, seed: int, workers: int = 1,
            players: int = 2, candidate: str = "ppo") -> dict[str, Any]:
    """``candidate`` against ``players - 1`` copies of ``opponent`` (games rounded up to whole
    deals: every seat rotation of each)."""
    from card_envs.arena import run_arena

    t0 = time.perf_counter()
    games = -(-games // players) * players
    res = run_arena(env_id, [candidate] + [opponent] * (players - 1), games=games,
                    num_players=players, seed=seed, progress=True, workers=workers)
    st = res[candidate]
    lo, hi = st.ci95
    return {"opponent": opponent, "games": st.games, "win_rate": round(st.win_rate, 4),
            "ci_low": round(lo, 4), "ci_high": round(hi, 4), "seed": seed,
            "seconds": round(time.perf_counter() - t0, 1)}


def from_arena_file(path: Path) -> dict[str, Any]:
    """The ppo row of a results file written by ``card-envs arena --agents ppo...,OPP --json``
    (the same games :func:`measure` plays)."""
    from card_envs.arena import ArenaResult

    res = ArenaResult.load(path)
    (st,) = [s for s in res.stats if s.agent.startswith("ppo")]
    (opp,) = [s.agent for s in res.stats if not s.agent.startswith("ppo")]
    lo, hi = st.ci95
    return {"opponent": opp, "games": st.games, "win_rate": round(st.win_rate, 4),
            "ci_low": round(lo, 4), "ci_high": round(hi, 4), "seed": res.seed,
            "seconds": round(res.elapsed, 1), "file": path.name}


MCTS_FIELD = "mcts:ms=200 vs heuristic"  # n-seat records: mcts:ms=200 in ppo's seat


def table_n(rows: dict[str, dict[str, Any]], players: int) -> str:
    """The n-seat table: ppo's share against n-1 heuristics, the goals (1.5/n on three games,
    1.2/n on all) and mcts:ms=200's share at the same tables."""
    lines = [f"| game | trained (env steps, minutes) | ppo vs {players - 1} heuristics (95% CI) | "
             f">= {1.5 / players:.3f} | >= {1.2 / players:.3f} | mcts:ms=200 vs "
             f"{players - 1} heuristics (95% CI) | command |", "|" + "---|" * 7]
    for env_id, r in rows.items():
        info = r["meta"].get("info") or {}
        cells = []
        for key in ("heuristic", MCTS_FIELD):
            a = r["arena"].get(key)
            cells.append("-" if a is None else
                         f"**{a['win_rate']:.3f}** [{a['ci_low']:.3f}, {a['ci_high']:.3f}] "
                         f"({a['games']} games)")
        h = r["arena"].get("heuristic")
        marks = ["-" if h is None else ("yes" if h["win_rate"] >= f / players else "no")
                 for f in (1.5, 1.2)]
        lines.append(f"| {env_id} | {info.get('env_steps', 0) / 1e6:.1f} M, "
                     f"{info.get('wall_seconds', 0) / 60:.0f} | {cells[0]} | {marks[0]} | "
                     f"{marks[1]} | {cells[1]} | `{info.get('command')}` |")
    return "\n".join(lines)


def table(rows: dict[str, dict[str, Any]]) -> str:
    lines = ["| game | trained (env steps, minutes) | vs heuristic (95% CI) | goal 0.70 | "
             "vs mcts:ms=200 (95% CI) | size | command |", "|" + "---|" * 7]
    for env_id, r in rows.items():
        meta = r["meta"]
        info = meta.get("info") or {}
        cells = []
        for opp in ("heuristic", "mcts:ms=200"):
            a = r["arena"].get(opp)
            cells.append("-" if a is None else
                         f"**{a['win_rate']:.3f}** [{a['ci_low']:.3f}, {a['ci_high']:.3f}] "
                         f"({a['games']} games)")
        h = r["arena"].get("heuristic")
        goal = "-" if h is None else ("met" if h["win_rate"] >= 0.7 else "not met")
        size = (DATA / f"{env_id}.safetensors").stat().st_size / 1e6
        lines.append(f"| {env_id} | {info.get('env_steps', 0) / 1e6:.1f} M, "
                     f"{info.get('wall_seconds', 0) / 60:.0f} | {cells[0]} | {goal} | "
                     f"{cells[1]} | {size:.2f} MB | `{info.get('command')}` |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ship", default=None, help="copy DIR/<game>/final.* into the package")
    ap.add_argument("--envs", default=",".join(ENV_IDS), help="games (default all five)")
    ap.add_argument("--games", type=int, default=400, help="arena games vs the heuristic")
    ap.add_argument("--mcts-games", type=int, default=0, help="arena games vs mcts:ms=200")
    ap.add_argument("--players", type=int, default=2,
                    help="seat count of the baselines (3, 4: vs players-1 heuristics; "
                         "--mcts-games then measures mcts:ms=200 in ppo's seat)")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--workers", type=int, default=1, help="arena worker processes (results "
                    "do not depend on it)")
    ap.add_argument("--docs", action="store_true", help="update docs/training.md")
    ap.add_argument("--arena-from", default=None, help="take the results against the "
                    "heuristic from DIR/<game>.arena.json (written by `card-envs arena --json` "
                    "with the same games) instead of playing them again, and the results "
                    "against mcts:ms=200 from DIR/<game>.mcts.json where it exists")
    args = ap.parse_args(argv)
    envs = [resolve_env_id(g) for g in args.envs.split(",") if g]
    n = args.players
    if args.ship:
        for env_id in envs:
            ship(Path(args.ship), env_id, n)
    show = table if n == 2 else (lambda r: table_n(r, n))
    rows: dict[str, dict[str, Any]] = {}
    for env_id in envs:
        meta = json.loads((DATA / f"{stem(env_id, n)}.json").read_text())
        arena = dict(meta.get("arena") or {})
        plan = (("heuristic", "arena", args.games, "heuristic", "ppo"),
                ("mcts:ms=200", "mcts", args.mcts_games, "mcts:ms=200", "ppo"))
        if n != 2:
            plan = (plan[0], (MCTS_FIELD, "mcts", args.mcts_games, "heuristic", "mcts:ms=200"))
        for key, suffix, games, opp, cand in plan:
            saved = None if args.arena_from is None else \
                Path(args.arena_from) / f"{stem(env_id, n).removesuffix('_v0')}.{suffix}.json"
            saved = saved if n == 2 or saved is None else \
                saved.with_name(f"{env_id.removesuffix('_v0')}_{n}p.{suffix}.json")
            if saved is not None and saved.is_file():
                arena[key] = from_arena_file(saved)
            elif games:
                arena[key] = measure(env_id, opp, games, args.seed, args.workers, n, cand)
        meta["arena"] = arena
        (DATA / f"{stem(env_id, n)}.json").write_text(json.dumps(meta, indent=1) + "\n")
        rows[env_id] = {"meta": meta, "arena": arena}
        print(show({env_id: rows[env_id]}).splitlines()[-1], flush=True)
    print("\n" + show(rows))
    utc = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    out = ROOT / "benchmarks" / "results" / f"baselines-{n}p-{utc}.json"
    out.write_text(json.dumps({"utc": utc, "machine": machine_info(), "versions": versions(),
                               "args": vars(args),
                               "rows": {k: v["arena"] for k, v in rows.items()}}, indent=1))
    print(f"wrote {out}")
    if args.docs:
        doc = ROOT / "docs" / "training.md"
        curves = "\n".join(f"![{e}](images/training/{stem(e, n)}.png)" for e in rows
                           if (CURVES / f"{stem(e, n)}.png").is_file())
        cmd = " ".join(sys.argv[1:] if argv is None else argv)
        mark = "baselines" if n == 2 else f"baselines-{n}p"
        block = (f"<!-- {mark}:start -->\n`python benchmarks/baselines.py {cmd}` ("
                 f"{machine_info()['cpu_count']} CPU cores):\n\n{show(rows)}\n\n"
                 f"{curves}\n<!-- {mark}:end -->")
        text, found = re.subn(rf"<!-- {mark}:start -->.*?<!-- {mark}:end -->", block,
                              doc.read_text(), flags=re.S)
        if not found:
            raise SystemExit(f"docs/training.md has no <!-- {mark}:start/end --> markers")
        doc.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
