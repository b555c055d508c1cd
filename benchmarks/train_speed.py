"""End-to-end training speed of card-envs' own PPO (``card_envs.rl.train_ppo``), per game.

    python benchmarks/train_speed.py                       # 2 minutes per game, all five
    python benchmarks/train_speed.py --games slide_v0 --minutes 0.5 --docs

For each game: a training run of ``--minutes`` wall time (defaults, 2 players, seed 0; one
evaluation of ``--eval-games`` at the end, timed apart), then the figures it records: env steps
(all moves, learner and opponents) per second over the whole wall time with the updates
included, the learner's share, the time in rollouts and updates, and the profile (engine,
features, forward, sampling, buffer, update, opponents). The anchor, in the same process right
before each run: the batched engine alone (random legal moves from its compiled sampler,
``num_envs`` games, ``--anchor-seconds``), so ``train / engine`` says how much of the engine's
speed training keeps whatever the machine. The load column is the CPUs other processes used
meanwhile (above 0.25 the row is flagged). Writes ``benchmarks/results/train_speed-<UTC>.json``
(machine, versions, every figure) and, with ``--docs``, the table and a bar chart into
``docs/training.md`` / ``docs/images/train_speed.png``.

``--players 2,3,4`` trains every game at each seat count in turn (one game's runs back to
back, so they share the machine's state) and adds the column ``vs 2 seats``: the seat count's
env steps/s over the same game's 2-seat run (goal >= 0.8); ``--docs`` then writes the table
between ``<!-- train_speed_seats:start/end -->``.

``--from-json PATH --docs`` writes the docs from a results file of an earlier run.
``--from DIR`` trains nothing: it tabulates finished runs ``DIR/<game>/`` (their
``summary.json`` and last ``history.json`` row: the figures a run measured over its own whole
wall time, e.g. the 15-minute runs that made the shipped baselines) and measures the engine
anchor now, in this process.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import LOAD_WARN, _system_cpu_seconds, machine_info, versions  # noqa: E402

import card_envs  # noqa: E402,F401
from card_envs.core.registry import ENV_IDS, resolve_env_id  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
GOAL = 50_000
PARTS = ("engine", "features", "forward", "sampling", "buffer", "update", "opponents")


def _load_probe() -> tuple[float, float] | None:
    return _system_cpu_seconds()


def _other_load(before: tuple[float, float] | None, own0: float, wall: float) -> float | None:
    after = _system_cpu_seconds()
    if before is None or after is None or wall <= 0:
        return None
    busy = after[0] - before[0]
    own = time.process_time() - own0
    return max(0.0, (busy - own) / wall)


def engine_rate(env_id: str, num_envs: int, seconds: float) -> float:
    """Random legal play on the batched engine alone (its compiled sampler), env steps/s."""
    from card_envs.core.vector import make

    vec = make(env_id, num_envs, seed=0)
    vec.reset(seed=0)
    for _ in range(3):
        vec.step(vec.sample_actions())
    steps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        vec.step(vec.sample_actions())
        steps += num_envs
    return steps / (time.perf_counter() - t0)


def run_game(env_id: str, minutes: float, eval_games: int, anchor_s: float,
             out: Path, players: int = 2) -> dict[str, Any]:
    from card_envs.rl import PPO_DEFAULTS, train_ppo

    anchor = engine_rate(env_id, PPO_DEFAULTS["num_envs"], anchor_s)
    probe, own0, t0 = _load_probe(), time.process_time(), time.perf_counter()
    res = train_ppo(env_id, minutes=minutes, out_dir=out / f"{env_id}_{players}p",
                    progress=True, players=players,
                    settings={"eval_games": eval_games, "evals": 1}, overwrite=True)
    load = _other_load(probe, own0, time.perf_counter() - t0)
    f = res.final
    return {"env_id": env_id, "players": players, "minutes": minutes,
            "env_steps": res.env_steps,
            "learner_steps": res.learner_steps, "updates": res.updates,
            "wall_seconds": round(res.wall_seconds, 2),
            "rollout_seconds": round(res.rollout_seconds, 2),
            "update_seconds": round(res.update_seconds, 2),
            "eval_seconds": round(res.eval_seconds, 2),
            "env_steps_per_s": round(res.env_steps_per_second, 1),
            "engine_steps_per_s": round(anchor, 1),
            "train_over_engine": round(res.env_steps_per_second / anchor, 4),
            "profile": res.profile, "other_load": None if load is None else round(load, 2),
            "random_win_rate": f.get("random_win_rate"),
            "heuristic_win_rate": f.get("heuristic_win_rate")}


def from_run(env_id: str, folder: Path, anchor_s: float) -> dict[str, Any]:
    """The row of a finished run in ``folder`` (module docstring)."""
    from card_envs.rl import PPO_DEFAULTS

    src = folder / env_id.removesuffix("_v0")
    summary = json.loads((src / "summary.json").read_text())
    last = json.loads((src / "history.json").read_text())[-1]
    anchor = engine_rate(env_id, int(summary["settings"].get("num_envs",
                                                             PPO_DEFAULTS["num_envs"])),
                         anchor_s)
    rate = summary["env_steps_per_s"]
    keys = ("env_steps", "learner_steps", "updates", "wall_seconds", "rollout_seconds",
            "update_seconds", "eval_seconds", "profile")
    return {"env_id": env_id, "minutes": round(summary["wall_seconds"] / 60, 2),
            **{k: summary[k] for k in keys}, "env_steps_per_s": rate,
            "engine_steps_per_s": round(anchor, 1),
            "train_over_engine": round(rate / anchor, 4), "other_load": None,
            "random_win_rate": last.get("random_win_rate"),
            "heuristic_win_rate": last.get("heuristic_win_rate"), "run": str(src)}


def table(rows: list[dict[str, Any]]) -> str:
    head = ("| game | env steps/s (all moves, whole run) | goal 50k | learner share | "
            "rollouts / updates (s) | engine alone (steps/s) | train / engine | "
            "profile: " + ", ".join(PARTS) + " (s) | other load |")
    lines = [head, "|" + "---|" * 9]
    for r in rows:
        prof = " / ".join(f"{r['profile'][k]:.0f}" for k in PARTS)
        load = "?" if r["other_load"] is None else f"{r['other_load']:.2f}"
        if r["other_load"] is not None and r["other_load"] > LOAD_WARN:
            load += " (busy)"
        lines.append(f"| {r['env_id']} | **{r['env_steps_per_s']:,.0f}** | "
                     f"{'met' if r['env_steps_per_s'] >= GOAL else 'not met'} | "
                     f"{r['learner_steps'] / max(r['env_steps'], 1):.2f} | "
                     f"{r['rollout_seconds']:.0f} / {r['update_seconds']:.0f} | "
                     f"{r['engine_steps_per_s']:,.0f} | {r['train_over_engine']:.3f} | {prof} | "
                     f"{load} |")
    return "\n".join(lines)


def table_seats(rows: list[dict[str, Any]]) -> str:
    """Env steps/s per game and seat count, and each over the same game's 2-seat run."""
    seats = sorted({r.get("players", 2) for r in rows})
    lines = ["| game | " + " | ".join(f"{n} seats (steps/s)" for n in seats) + " | "
             + " | ".join(f"{n} / 2 seats" for n in seats if n != 2) + " | other load |",
             "|" + "---|" * (2 * len(seats) + 1)]
    for env_id in dict.fromkeys(r["env_id"] for r in rows):
        by = {r.get("players", 2): r for r in rows if r["env_id"] == env_id}
        two = by.get(2, {}).get("env_steps_per_s")
        rates = [f"{by[n]['env_steps_per_s']:,.0f}" if n in by else "" for n in seats]
        ratios = [f"**{by[n]['env_steps_per_s'] / two:.2f}**" if n in by and two else ""
                  for n in seats if n != 2]
        loads = [r["other_load"] for r in by.values() if r["other_load"] is not None]
        lines.append(f"| {env_id} | " + " | ".join(rates + ratios)
                     + f" | {max(loads) if loads else '?'} |")
    return "\n".join(lines)


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.2))
    names = [r["env_id"].removesuffix("_v0") for r in rows]
    left = [0.0] * len(rows)
    for k in PARTS:
        share = [r["profile"][k] / max(r["wall_seconds"], 1e-9) * r["env_steps_per_s"]
                 for r in rows]
        ax.barh(names, share, left=left, label=k)
        left = [a + b for a, b in zip(left, share)]
    ax.axvline(GOAL, color="k", ls="--", lw=1, label="goal 50k")
    ax.set_xlabel("env steps/s end to end (bars split by where the time went)")
    ax.legend(fontsize=7, ncol=8, loc="upper center", bbox_to_anchor=(0.5, -0.18))
    ax.invert_yaxis()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_docs(rows: list[dict[str, Any]], meta: dict[str, Any], cmd: str) -> None:
    doc = ROOT / "docs" / "training.md"
    text = doc.read_text()
    block = (f"<!-- train_speed:start -->\n`{cmd}` on {meta['machine'].get('cpu_count')} CPU "
             f"cores ({meta['machine'].get('processor') or meta['machine'].get('machine')}):"
             f"\n\n{table(rows)}\n\n"
             "![training speed per game](images/train_speed.png)\n<!-- train_speed:end -->")
    new, n = re.subn(r"<!-- train_speed:start -->.*?<!-- train_speed:end -->", block, text,
                     flags=re.S)
    if not n:
        raise SystemExit("docs/training.md has no <!-- train_speed:start/end --> markers")
    doc.write_text(new)
    plot(rows, ROOT / "docs" / "images" / "train_speed.png")


def write_seats_docs(rows: list[dict[str, Any]], meta: dict[str, Any], players: str,
                     minutes: float) -> None:
    """The seat-count table into ``docs/training.md`` (``train_speed_seats`` markers)."""
    doc = ROOT / "docs" / "training.md"
    block = (f"<!-- train_speed_seats:start -->\n`python benchmarks/train_speed.py --players "
             f"{players} --minutes {minutes:g} --eval-games 0` on "
             f"{meta['machine'].get('cpu_count')} CPU cores:\n\n{table_seats(rows)}\n"
             "<!-- train_speed_seats:end -->")
    text, n = re.subn(r"<!-- train_speed_seats:start -->.*?<!-- train_speed_seats:end -->",
                      block, doc.read_text(), flags=re.S)
    if not n:
        raise SystemExit("docs/training.md has no <!-- train_speed_seats:start/end -->")
    doc.write_text(text)
    print("updated docs/training.md")


def _command(args: dict[str, Any]) -> str:
    """The command line that made a table (its arguments as saved in the JSON)."""
    return "python benchmarks/train_speed.py" + (
        f" --from {args['from_dir']}" if args.get("from_dir") else
        f" --minutes {args['minutes']:g}" if args.get("minutes", 2.0) != 2.0 else "")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", default=",".join(ENV_IDS))
    ap.add_argument("--minutes", type=float, default=2.0)
    ap.add_argument("--eval-games", type=int, default=100)
    ap.add_argument("--anchor-seconds", type=float, default=2.0)
    ap.add_argument("--players", default="2",
                    help="seat counts, comma separated (e.g. 2,3,4: each game at each)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    ap.add_argument("--docs", action="store_true", help="update docs/training.md and the chart")
    ap.add_argument("--from", dest="from_dir", default=None,
                    help="tabulate the finished runs DIR/<game>/ instead of training")
    ap.add_argument("--from-json", default=None, metavar="PATH",
                    help="with --docs: write the docs from a results file this script wrote "
                    "(no training)")
    args = ap.parse_args(argv)
    if args.from_json:
        saved = json.loads(Path(args.from_json).read_text())
        seats_run = len({r.get("players", 2) for r in saved["rows"]}) > 1
        print(table_seats(saved["rows"]) if seats_run else table(saved["rows"]))
        if args.docs and seats_run:
            a = saved.get("args", {})
            write_seats_docs(saved["rows"], saved, a.get("players", "2,3,4"), a.get("minutes", 2))
        elif args.docs:
            write_docs(saved["rows"], saved, _command(saved.get("args", {})))
            print("updated docs/training.md and docs/images/train_speed.png")
        return 0
    if not 0 < args.minutes <= 60 or not 0 <= args.eval_games <= 10_000:
        ap.error("--minutes in (0, 60], --eval-games in 0..10000")
    games = [resolve_env_id(g) for g in args.games.split(",") if g]
    seats = [int(x) for x in args.players.split(",") if x]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for g in games:
            if args.from_dir:
                rows.append(from_run(g, Path(args.from_dir), args.anchor_seconds))
                print(table(rows[-1:]).splitlines()[-1], flush=True)
                continue
            for n in seats:
                rows.append(run_game(g, args.minutes, args.eval_games, args.anchor_seconds,
                                     Path(tmp), n))
                print(f"{n} seats: " + table(rows[-1:]).splitlines()[-1], flush=True)
    utc = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    meta = {"utc": utc, "machine": machine_info(), "versions": versions()}
    print("\n" + (table(rows) if seats == [2] else table_seats(rows)))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"train_speed-{utc}.json"
    path.write_text(json.dumps({**meta, "args": vars(args), "rows": rows}, indent=1))
    print(f"\nwrote {path}")
    if args.docs and seats != [2]:
        write_seats_docs(rows, meta, args.players, args.minutes)
    elif args.docs:
        write_docs(rows, meta, _command(vars(args)))
        print("updated docs/training.md and docs/images/train_speed.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
