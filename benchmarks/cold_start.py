"""First-run costs: ``make demo`` itself on a fresh clone, the demo's arena from an empty kernel
cache and again from a warm one, per game; the batched engine's first step; and arena worker
processes against one process.

    python benchmarks/cold_start.py --make-demo      # `make demo` on a fresh clone: cold, warm
    python benchmarks/cold_start.py                  # cold + warm, twice, every game
    python benchmarks/cold_start.py --workers-table  # also: arena workers 1 / 2 / auto
    python benchmarks/cold_start.py --workers-only   # only that
    python benchmarks/cold_start.py --quick          # smoke run: Slide, random + heuristic

**make demo** (``--make-demo``): ``git clone`` of this checkout's HEAD (committed files only)
into a temporary folder, then ``make demo`` there twice: cold (no ``.venv``, pip's cache off
with ``PIP_NO_CACHE_DIR=1``, an empty kernel cache in ``CARD_ENVS_CACHE_DIR``) and warm (the
same clone again). Wall time of each, split at the lines the demo prints (install until make
starts the arena, compiling until the ``compiled N games`` line, the rest playing and
plotting), the CPUs other processes used meanwhile and the load average before it.

**Cold and warm.** Each repeat runs the core of ``make demo`` (``examples/arena.py --game all
--agents random,heuristic,mcts --games 10``, workers ``auto``; ``--agents``, ``--arena-games``
and ``--workers`` change it) in a fresh Python process whose kernel cache (``NUMBA_CACHE_DIR``,
which card-envs honours) is a new empty folder, then the same in a second fresh process with
the cache the first one filled. First the games' kernels are compiled side by side in worker
processes (``card_envs.arena.precompile``, ``--compile-workers``, as the arena command does
with several games; its wall time and each game's seconds in its worker), then per game: the
compile phase in this process (env and agents built and a warm-up game played,
``card_envs.arena.warm``: loading from the cache after the workers, compiling without them),
the arena games themselves, and the batched engine's first step (``card_envs.vector.warm``,
256 games: its drivers and the rule kernels come from the cache when warm; the wrappers that
pick its thread count compile in every process). The process total includes Python's start
and the imports. Cold and warm alternate, so both see the same load; the ``load`` figures are
the CPUs other processes used meanwhile (not the measured process and its workers).

**Workers** (``--workers-table``): ``run_arena`` of a few game / agent mixes (2 players, warm
cache) with ``workers=1``, ``2`` and ``"auto"``, interleaved, ``--repeats`` rounds; the
wall time includes starting the workers (each imports card-envs, loads the kernels from the
cache and builds its agents).

Writes ``benchmarks/results/cold_start-<time>.json`` (machine, versions, arguments, every
measurement) unless ``--json`` says where.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).resolve().parent / "results"
DEMO_AGENTS = "random,heuristic,mcts"
ROOT = Path(__file__).resolve().parents[1]
#: (env id, pool, games per lineup) of the workers table: cheap agents, then costlier ones
WORKER_MIXES = [("slide_v0", ["random", "heuristic"], 200),
                ("if_it_fits_v0", ["random", "heuristic"], 40),
                ("isflak_v0", ["mcts:iterations=1000", "heuristic"], 40),
                ("slide_v0", ["mcts:ms=20", "heuristic"], 20)]


def child(args: argparse.Namespace) -> dict[str, Any]:
    """One process of a repeat: the demo's arena per game, then the batched engine's first
    step per game; timings of each phase (this runs in the measured subprocess)."""
    t0 = time.perf_counter()
    import card_envs
    from card_envs.arena import run_arena, warm
    from card_envs.arena.precompile import precompile
    from card_envs.core.jit import cache_dir

    imported = time.perf_counter() - t0
    agents = args.agents.split(",")
    games = [card_envs.resolve_env_id(g) for g in args.games]
    pre = precompile(games, agents, processes=_count(args.compile_workers), progress=False)
    in_worker = {r["env_id"]: r["seconds"] for r in pre["games"]}
    rows = []
    for env_id in games:
        w = warm(env_id, agents, progress=False)
        t = time.perf_counter()
        res = run_arena(env_id, agents, args.arena_games, progress=False,
                        workers=_count(args.workers))
        rows.append({"env_id": env_id, "compile_s": w["seconds"], "compiles": w["compiles"],
                     "worker_compile_s": in_worker.get(env_id),
                     "play_s": time.perf_counter() - t, "workers": res.workers})
    for row in rows if args.vector else ():
        row["vector_first_step_s"] = card_envs.vector.warm(row["env_id"], num_envs=256)
    return {"import_s": imported, "cache_dir": str(cache_dir()), "games": rows,
            "precompile_s": pre["seconds"], "compile_processes": pre["processes"],
            "compile_failed": pre["failed"], "total_s": time.perf_counter() - t0}


def _count(text: str) -> int | str:
    """A ``--workers`` / ``--compile-workers`` value: ``auto`` or a number."""
    return text if text == "auto" else int(text)


def run_child(args: argparse.Namespace, cache: str) -> dict[str, Any]:
    """The child in a fresh interpreter with ``cache`` as its kernel cache; adds its wall
    time (interpreter start included) and the other processes' load."""
    from common import LoadProbe  # (not in the measured child: it imports card_envs)

    # numba's own cache setting, which card-envs honours: one flat folder, so that a source
    # edit elsewhere in the tree meanwhile (a new source hash) cannot turn a warm run cold
    env = {k: v for k, v in os.environ.items() if k != "CARD_ENVS_CACHE_DIR"}
    env["NUMBA_CACHE_DIR"] = cache
    cmd = [sys.executable, __file__, "--child", "--games", *args.games, "--agents",
           args.agents, "--arena-games", str(args.arena_games), "--workers", args.workers,
           "--compile-workers", args.compile_workers]
    if not args.vector:
        cmd.append("--no-vector")
    t, kids = time.perf_counter(), _children_cpu()
    with LoadProbe() as probe:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if p.returncode != 0:
        raise RuntimeError(f"the measured process failed:\n{p.stderr[-3000:]}")
    out = json.loads(p.stdout.strip().splitlines()[-1])
    out["process_s"] = time.perf_counter() - t
    kids = _children_cpu() - kids  # the measured process and its workers: not "other"
    out["other_cpu_load"] = None if probe.other is None else \
        max(0.0, probe.other - kids / out["process_s"])
    return out


def cold_and_warm(args: argparse.Namespace) -> list[dict[str, Any]]:
    """``--repeats`` pairs of (cold, warm) processes, each pair on a new empty cache."""
    runs = []
    for r in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="card_envs_cold_") as cache:
            for kind in ("cold", "warm"):
                res = run_child(args, cache)
                res.update(repeat=r, kind=kind)
                runs.append(res)
                load = res["other_cpu_load"]
                print(f"  [{r + 1}/{args.repeats}] {kind}: {res['process_s']:.1f} s"
                      + ("" if load is None else f" (other load {load:.2f} CPU)"),
                      file=sys.stderr, flush=True)
    return runs


def cold_table(runs: list[dict[str, Any]], vector: bool) -> str:
    """Per game and phase, cold / warm, every repeat (``a | b``)."""
    def cell(kind: str, env_id: str | None, key: str) -> str:
        vals = []
        for run in (x for x in runs if x["kind"] == kind):
            if env_id is None:
                vals.append(run[key])
            else:
                vals += [g[key] for g in run["games"] if g["env_id"] == env_id and key in g]
        return " | ".join("-" if v is None else f"{v:.1f}" for v in vals)

    cols = [("worker_compile_s", "worker compile s"), ("compile_s", "compile s"),
            ("play_s", "arena s")]
    if vector:
        cols.append(("vector_first_step_s", "vector 1st step s"))
    head = f"{'game':<16}" + "".join(f"{k + ' ' + lab:>24}" for _, lab in cols
                                      for k in ("cold", "warm"))
    lines = [head, "-" * len(head)]
    for env_id in [g["env_id"] for g in runs[0]["games"]]:
        lines.append(f"{env_id:<16}" + "".join(f"{cell(k, env_id, key):>24}" for key, _ in cols
                                               for k in ("cold", "warm")))
    lines.append(f"{'compile workers':<16}{cell('cold', None, 'precompile_s'):>24}"
                 f"{cell('warm', None, 'precompile_s'):>24}   (wall time of the parallel "
                 "compile, cold | warm)")
    lines.append(f"{'process total':<16}{cell('cold', None, 'process_s'):>24}"
                 f"{cell('warm', None, 'process_s'):>24}   (imports: cold "
                 f"{cell('cold', None, 'import_s')} s, warm {cell('warm', None, 'import_s')} s;"
                 f" other load {cell('cold', None, 'other_cpu_load')} / "
                 f"{cell('warm', None, 'other_cpu_load')} CPU)")
    return "\n".join(lines)


#: lines of ``make demo``'s output that end a phase: make starting the arena (the install is
#: over), the parallel compile's last line
_ARENA_START = "examples/arena.py --game all"
_COMPILED = "compiled "


def make_demo(args: argparse.Namespace) -> list[dict[str, Any]]:
    """``make demo`` on a fresh clone of HEAD, cold then warm, ``--repeats`` clones."""
    from common import LoadProbe

    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.strip()
    if dirty:
        print("note: uncommitted changes are not measured (a clone holds HEAD only)",
              file=sys.stderr, flush=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout.strip()
    runs = []
    for r in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="card_envs_demo_") as tmp:
            clone = Path(tmp) / "clone"
            subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
            env = {k: v for k, v in os.environ.items()
                   if k not in ("NUMBA_CACHE_DIR", "PIP_CACHE_DIR", "VIRTUAL_ENV")}
            env.update(PIP_NO_CACHE_DIR="1", CARD_ENVS_CACHE_DIR=str(Path(tmp) / "kernels"),
                       MPLCONFIGDIR=str(Path(tmp) / "matplotlib"))
            for kind in ("cold", "warm"):
                run = _timed_make(clone, env, LoadProbe)
                run.update(repeat=r, kind=kind, commit=head)
                runs.append(run)
                print(f"  [{r + 1}/{args.repeats}] {kind}: {run['seconds']:.1f} s (install "
                      f"{run['install_s']:.1f}, compile {run['compile_s']:.1f}, play "
                      f"{run['play_s']:.1f}; other load {run['other_cpu_load']:.2f} CPU, "
                      f"load average {run['loadavg_before'][0]:.2f} before)",
                      file=sys.stderr, flush=True)
                if run["returncode"] != 0:
                    raise RuntimeError(f"make demo failed:\n{run['output'][-3000:]}")
    return runs


def _timed_make(clone: Path, env: dict[str, str], probe_class: Any) -> dict[str, Any]:
    """One ``make demo`` in ``clone``: wall time, phases (from its output lines), load."""
    before = os.getloadavg()
    marks: dict[str, float] = {}
    lines: list[str] = []
    t0, kids = time.perf_counter(), _children_cpu()
    with probe_class() as probe:
        p = subprocess.Popen(["make", "demo"], cwd=clone, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
        for line in p.stdout:
            now = time.perf_counter() - t0
            if _ARENA_START in line:
                marks.setdefault("arena", now)
            for part in line.split("\r"):
                if part.startswith(_COMPILED) and " games in " in part:
                    marks["compiled"] = now
            lines.append(line)
        p.wait()
    total = time.perf_counter() - t0
    kids = _children_cpu() - kids  # make and everything it ran: not "other"
    other = None if probe.other is None else max(0.0, probe.other - kids / total)
    start = marks.get("arena", 0.0)
    compiled = marks.get("compiled", start)
    return {"seconds": total, "install_s": start, "compile_s": compiled - start,
            "play_s": total - compiled, "other_cpu_load": other or 0.0,
            "loadavg_before": list(before), "loadavg_after": list(os.getloadavg()),
            "returncode": p.returncode, "output": _without_bars(lines)}


def _without_bars(lines: list[str]) -> str:
    """The output without the progress bars' redrawn segments (what is left on screen)."""
    kept = []
    for line in lines:
        kept += [x for x in line.rstrip("\n").split("\r") if x.strip() and "%|" not in x]
    return "\n".join(kept)


def format_make_demo(runs: list[dict[str, Any]]) -> str:
    """The make-demo table: one row per run."""
    head = (f"{'run':<8}{'total s':>9}{'install s':>11}{'compile s':>11}{'play s':>9}"
            f"{'other load':>12}{'load avg before':>17}")
    lines = [head, "-" * len(head)]
    for run in runs:
        lines.append(f"{run['kind']:<8}{run['seconds']:>9.1f}{run['install_s']:>11.1f}"
                     f"{run['compile_s']:>11.1f}{run['play_s']:>9.1f}"
                     f"{run['other_cpu_load']:>12.2f}{run['loadavg_before'][0]:>17.2f}")
    return "\n".join(lines)


def _children_cpu() -> float:
    """CPU seconds of this process's finished children (the arena's worker processes)."""
    t = os.times()
    return t.children_user + t.children_system


def workers_table(args: argparse.Namespace) -> list[dict[str, Any]]:
    """``run_arena`` wall time (setup included) per mix with workers 1, 2 and auto."""
    from common import LoadProbe

    from card_envs.arena import run_arena

    mixes = WORKER_MIXES[:1] if args.quick else WORKER_MIXES
    rows = []
    for env_id, pool, games in mixes:
        games = 4 if args.quick else games
        run_arena(env_id, pool, 2, progress=False, workers=1)  # compiled before timing
        row: dict[str, Any] = {"env_id": env_id, "agents": pool, "games": games}
        for r in range(args.repeats):
            for w in ((1, 2, "auto") if r % 2 == 0 else ("auto", 2, 1)):
                t, kids = time.perf_counter(), _children_cpu()
                with LoadProbe() as probe:
                    res = run_arena(env_id, pool, games, progress=False, workers=w)
                wall = time.perf_counter() - t
                kids = _children_cpu() - kids  # the workers (ended with the run): not "other"
                other = None if probe.other is None else max(0.0, probe.other - kids / wall)
                row.setdefault(str(w), []).append(
                    {"seconds": wall, "workers_used": res.workers, "other_cpu_load": other})
        rows.append(row)
        med = {w: statistics.median(x["seconds"] for x in row[w]) for w in ("1", "2", "auto")}
        print(f"  {env_id} {'+'.join(pool)} x{games}: 1 worker {med['1']:.2f} s, 2 workers "
              f"{med['2']:.2f} s, auto {med['auto']:.2f} s", file=sys.stderr, flush=True)
    return rows


def format_workers(rows: list[dict[str, Any]]) -> str:
    """The workers table: seconds per repeat, the 2 / 1 ratio of medians, auto's choice."""
    head = (f"{'game':<15}{'agents':<32}{'games':>6}{'1 worker s':>16}{'2 workers s':>16}"
            f"{'2 / 1':>7}{'auto s (used)':>22}{'load':>11}")
    lines = [head, "-" * len(head)]
    def secs(r: dict[str, Any], w: str) -> str:
        return " | ".join(f"{x['seconds']:.2f}" for x in r[w])

    for r in rows:
        ratio = statistics.median(x["seconds"] for x in r["2"]) / \
            statistics.median(x["seconds"] for x in r["1"])
        used = sorted({x["workers_used"] for x in r["auto"]})
        loads = [x["other_cpu_load"] for w in ("1", "2", "auto") for x in r[w]
                 if x["other_cpu_load"] is not None]
        load = f"{max(loads):.2f}" if loads else "?"
        lines.append(f"{r['env_id']:<15}{'+'.join(r['agents']):<32}{r['games']:>6}"
                     f"{secs(r, '1'):>16}{secs(r, '2'):>16}{ratio:>7.2f}"
                     f"{secs(r, 'auto') + ' (' + ','.join(map(str, used)) + ')':>22}{load:>11}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", nargs="+", default=None, metavar="GAME",
                    help="games (default: all registered)")
    ap.add_argument("--agents", default=DEMO_AGENTS, help=f"the pool (default {DEMO_AGENTS})")
    ap.add_argument("--arena-games", type=int, default=10, help="games per lineup (10)")
    ap.add_argument("--workers", default="auto",
                    help="the arena's workers in the measured runs (default auto, as the demo)")
    ap.add_argument("--compile-workers", default="auto",
                    help="processes compiling the games before the arenas (default auto, as "
                         "the demo; 1: each game compiles in the measured process)")
    ap.add_argument("--make-demo", action="store_true",
                    help="only time `make demo` on a fresh clone of HEAD, cold then warm")
    ap.add_argument("--repeats", type=int, default=None,
                    help="cold/warm pairs and workers rounds (default 2; --make-demo: 1)")
    ap.add_argument("--no-vector", dest="vector", action="store_false",
                    help="skip the batched engine's first step")
    ap.add_argument("--workers-table", action="store_true",
                    help="also time run_arena with workers 1, 2 and auto")
    ap.add_argument("--workers-only", action="store_true",
                    help="only the workers table (no cold and warm processes)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: Slide, random + heuristic, 2 games, 1 repeat")
    ap.add_argument("--json", type=Path, default=None, help="where to write the results")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.repeats = args.repeats or (1 if args.make_demo else 2)
    if args.quick:
        args.games = args.games or ["slide_v0"]
        args.agents, args.arena_games, args.repeats = "random,heuristic", 2, 1
    pinned = None
    if (args.workers_table or args.workers_only) and not args.child:
        # the workers table's kernel cache: one folder for this process and its workers, set
        # before card_envs is imported (an edit to the sources meanwhile must not make the
        # workers compile again, as a new source hash would)
        pinned = tempfile.mkdtemp(prefix="card_envs_workers_")
        os.environ["NUMBA_CACHE_DIR"] = pinned
    if args.games is None:
        from card_envs.core.registry import env_ids

        args.games = list(env_ids())
    if args.child:
        print(json.dumps(child(args)))
        return 0

    started = time.strftime("%Y%m%d-%H%M%S")
    if args.make_demo:
        print(f"make demo on a fresh clone of {ROOT}: cold, then warm; {args.repeats} "
              "clone(s)", file=sys.stderr, flush=True)
        demo = make_demo(args)
        print("\nmake demo, seconds (cold: fresh clone, no pip cache, empty kernel cache):")
        print(format_make_demo(demo))
        return _write(args, started, {"make_demo": demo})
    if not args.workers_only:
        print(f"cold start: {', '.join(args.games)}; agents {args.agents}; {args.arena_games} "
              f"games per lineup; {args.repeats} cold/warm pair(s)", file=sys.stderr,
              flush=True)
    runs = [] if args.workers_only else cold_and_warm(args)
    if runs:
        print("\nSeconds per phase, cold (empty kernel cache) | warm, one figure per repeat:")
        print(cold_table(runs, args.vector))
    workers = None
    if args.workers_table or args.workers_only:
        print("\nworkers: run_arena, 2 players, warm cache", file=sys.stderr, flush=True)
        workers = workers_table(args)
        print("\nrun_arena seconds (setup included) by workers, one figure per repeat:")
        print(format_workers(workers))
    if pinned:
        shutil.rmtree(pinned, ignore_errors=True)
    return _write(args, started, {"runs": runs, "workers": workers})


def _write(args: argparse.Namespace, started: str, data: dict[str, Any]) -> int:
    """Write the result JSON (machine, versions, arguments and ``data``); returns 0."""
    from common import machine_info, versions

    path = args.json or RESULTS_DIR / f"cold_start-{started}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"benchmark": "cold_start", "machine": machine_info(),
                                "versions": versions(), "args": {k: str(v) for k, v in
                                                                 vars(args).items()},
                                **data}, indent=1) + "\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
