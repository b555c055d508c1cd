"""The contended table of ``benchmarks/throughput.py`` (``--contended`` adds it,
``--contended-only`` runs only it): the batched engine at B=4096 (``--contended-batch``) for
every game in six states, round-robin per repeat:

* ``quiet``            all numba threads, the batch choosing its thread count (the default);
* ``quiet fixed``      all numba threads, fixed (``vec.fix_threads(n)``: the behaviour before
                       the batch chose its thread count);
* ``single``           ``numba.set_num_threads(1)``;
* ``contended``        as ``quiet``, while a subprocess keeps one core busy (a tight Python
                       loop; started before, always stopped after: also on errors and Ctrl-C,
                       and it exits by itself if this process dies);
* ``contended fixed``  as ``quiet fixed``, with the busy core;
* ``contended single`` as ``single``, with the busy core.

Target: contended >= 0.9x single for every game (PASS/FAIL; ``--strict`` applies). On a
machine that other work keeps busy too, ``contended / contended single`` (same conditions,
seconds apart) tells whether the batch found the best thread count even where the target
cannot be judged. Each state is measured after a warm-up of 1.5 s (``--warmup`` overrides),
long enough for the batch to settle on a thread count (it retries the others about every
second). The ``load`` columns are the CPUs used by other processes, the busy process included
(~1.0 in the contended states). The table and all repeats go to the JSON under
``"contended"``. Background: docs/performance.md.

**Run on its own** (``python benchmarks/contended.py``), one run per game measures the batched
engine (the six states above; the table shows quiet, single, contended) **and a training run**
(``examples/train_ppo.py --game G --minutes M --no-progress --eval-games 200``, a subprocess;
``env_steps_per_s`` from its ``summary.json``, the final heuristic win rate from its
``history.json``) in three states: ``quiet`` (both cores), ``one core`` (``taskset -c 0``: the
other core idle) and ``contended`` (both cores, one other process spinning). Printed: rates and
ratios (contended / one core, quiet / one core; engine contended / single); JSON as the other
benchmarks (machine, versions, numbers)::

    python benchmarks/contended.py                              # 5 games, ~8 min each
    python benchmarks/contended.py --games slide_v0 --minutes 0.5 --training-only
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

try:
    import card_envs
except ImportError:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import card_envs

import numba
from common import (
    LOAD_WARN,
    LoadProbe,
    Measurement,
    fmt_rate,
    log,
    machine_info,
    measure,
    perf_counter,
    threading_layer,
    vector_runner,
    versions,
)

TARGET_CONTENDED_RATIO = 0.9  # contended (one core busy) / single-thread, at --contended-batch
CONTENDED_WARMUP = 1.5  # s before each contended-table measurement: the batch settles its threads
S_QUIET, S_QUIET_FIXED, S_SINGLE = "quiet", "quiet fixed", "single"
S_CONTENDED, S_CONTENDED_FIXED, S_CONTENDED_SINGLE = (
    "contended", "contended fixed", "contended single")
QUIET_STATES = (S_QUIET, S_QUIET_FIXED, S_SINGLE)
BUSY_STATES = (S_CONTENDED, S_CONTENDED_FIXED, S_CONTENDED_SINGLE)
CONTENDED_STATES = QUIET_STATES + BUSY_STATES


# Spins until its parent changes (the benchmark died without stopping it); checks every ~20 ms.
BUSY_LOOP = """import os, sys
parent = os.getppid()
sys.stdout.write("spinning\\n")
sys.stdout.flush()
while os.getppid() == parent:
    for _ in range(500_000):
        pass
"""


class BusyCore:
    """``count`` subprocesses that each keep a core busy (a tight Python loop) while the block
    runs. They are stopped on exit, also on errors and KeyboardInterrupt; ``returncodes``
    tells how each ended (None while running)."""

    def __init__(self, count: int = 1) -> None:
        self.count = count
        self.procs: list[subprocess.Popen[bytes]] = []
        self.returncodes: list[int | None] = []

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.procs]

    def __enter__(self) -> Self:
        try:
            for _ in range(self.count):
                self.procs.append(subprocess.Popen(
                    [sys.executable, "-c", BUSY_LOOP], stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE))
            for p in self.procs:  # wait until each one spins
                if p.stdout is None or not p.stdout.readline():
                    raise RuntimeError(f"busy process {p.pid} did not start")
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.kill()
        for p in self.procs:
            p.wait(timeout=30)
            if p.stdout is not None:
                p.stdout.close()
        self.returncodes = [p.returncode for p in self.procs]

    def __exit__(self, *exc: object) -> None:
        self.stop()


@dataclass
class Contended:
    """One game's batched engine in the six states of the contended table."""
    env_id: str
    batch_size: int
    tuned: Any = field(repr=False)  # a VectorEnv that chooses its thread count (the default)
    fixed: Any = field(repr=False)  # one fixed on all threads (the behaviour before)
    ms: dict[str, Measurement] = field(default_factory=dict)
    threads_in_use: dict[str, list[int]] = field(default_factory=dict)

    def ratio(self, a: str, b: str) -> float | None:
        if not (self.ms[a].repeats and self.ms[b].repeats):
            return None
        return self.ms[a].median / self.ms[b].median

    def status(self) -> str:
        r = self.ratio(S_CONTENDED, S_SINGLE)
        return "SKIP" if r is None else ("PASS" if r >= TARGET_CONTENDED_RATIO else "FAIL")

    def to_json(self) -> dict[str, Any]:
        return {
            "batch_size": self.batch_size,
            "states": {k: m.to_json(None) for k, m in self.ms.items()},
            "ratio_contended_to_single": self.ratio(S_CONTENDED, S_SINGLE),
            "ratio_contended_fixed_to_single": self.ratio(S_CONTENDED_FIXED, S_SINGLE),
            "ratio_quiet_to_quiet_fixed": self.ratio(S_QUIET, S_QUIET_FIXED),
            "ratio_contended_to_contended_single": self.ratio(S_CONTENDED, S_CONTENDED_SINGLE),
            "paired_contended_to_single": [  # per repeat, from runs seconds apart
                c["steps_per_s"] / s["steps_per_s"]
                for c, s in zip(self.ms[S_CONTENDED].repeats, self.ms[S_SINGLE].repeats)],
            "threads_in_use": self.threads_in_use,
            "target_ratio": TARGET_CONTENDED_RATIO,
            "status": self.status(),
        }


def with_threads(n: int, run: Callable[[float], tuple[int, float]]
                 ) -> Callable[[float], tuple[int, float]]:
    """``run`` with ``numba.set_num_threads(n)`` in force (then the previous count again)."""

    def wrapped(duration: float) -> tuple[int, float]:
        before = numba.get_num_threads()
        numba.set_num_threads(n)
        try:
            return run(duration)
        finally:
            numba.set_num_threads(before)

    return wrapped


def build_contended(env_id: str, args: argparse.Namespace) -> Contended:
    """Two batches of ``--contended-batch`` games, built and compiled: one choosing its thread
    count, one fixed on all numba threads (also used, capped at one thread, for ``single``)."""
    B = args.contended_batch
    opts = {"num_players": args.players}
    tuned = card_envs.vector.make(env_id, num_envs=B, seed=args.seed, **opts)
    fixed = card_envs.vector.make(env_id, num_envs=B, seed=args.seed, **opts)
    fixed.fix_threads(numba.get_num_threads())
    run_tuned = vector_runner(tuned, args.chunksize)
    run_fixed = vector_runner(fixed, args.chunksize)
    run_tuned(0.0)
    run_fixed(0.0)
    single = with_threads(1, run_fixed)
    runs = {S_QUIET: run_tuned, S_QUIET_FIXED: run_fixed, S_SINGLE: single,
            S_CONTENDED: run_tuned, S_CONTENDED_FIXED: run_fixed, S_CONTENDED_SINGLE: single}
    c = Contended(env_id, B, tuned, fixed)
    for state, run in runs.items():
        c.ms[state] = Measurement(env_id, f"vector {state}", B, run)
        c.threads_in_use[state] = []
    return c


def measure_contended(table: dict[str, Contended], args: argparse.Namespace, repeat: int,
                      t_start: float, busy_log: list[dict[str, Any]]) -> None:
    """One repeat of the contended table: per game the quiet states, then the contended ones
    while a ``BusyCore`` runs (stopped before the next game, whatever happens)."""
    w = args.contended_warmup
    for env_id, c in table.items():
        for states in (QUIET_STATES, BUSY_STATES):
            busy = BusyCore(1 if states is BUSY_STATES else 0)
            with busy:
                for state in states:
                    measure(c.ms[state], args, repeat, t_start, w)
                    c.threads_in_use[state].append(
                        1 if state in (S_SINGLE, S_CONTENDED_SINGLE) else
                        (c.tuned if state in (S_QUIET, S_CONTENDED) else c.fixed).num_threads)
        busy_log.append({"repeat": repeat, "game": env_id, "pids": busy.pids,
                         "returncodes": busy.returncodes})


def print_contended(table: dict[str, Contended], args: argparse.Namespace) -> None:
    """The table, its legend, and a warning if the quiet or single runs were not quiet."""
    B = args.contended_batch
    print(f"Contended table: batched engine B={B}, {args.players} players; median of "
          f"{args.repeats} x {args.seconds:g} s after {args.contended_warmup:g} s warm-up; "
          f"numba threads {numba.get_num_threads()} ({threading_layer()} layer), "
          f"{os.cpu_count()} CPUs; contended = one other process spinning a core")
    print()
    head = (f"{'game':<16} {'quiet':>8} {'q. fixed':>8} {'single':>8} {'contended':>9} "
            f"{'c. fixed':>8} {'c. single':>9} {'cont/single':>11} {'target':>6} "
            f"{'c/c.single':>10}  {'load q/s/c':>14} {'threads q/c':>11}")
    print(head)
    print("-" * len(head))
    for env_id, c in table.items():
        if not c.ms[S_QUIET].repeats:
            continue
        rates = {k: fmt_rate(m.median) for k, m in c.ms.items()}
        r = c.ratio(S_CONTENDED, S_SINGLE)
        rc = c.ratio(S_CONTENDED, S_CONTENDED_SINGLE)
        loads = "/".join("?" if c.ms[k].max_other_load is None
                         else f"{c.ms[k].max_other_load:.2f}"
                         for k in (S_QUIET, S_SINGLE, S_CONTENDED))
        threads = (f"{statistics.median(c.threads_in_use[S_QUIET]):g}/"
                   f"{statistics.median(c.threads_in_use[S_CONTENDED]):g}")
        print(f"{env_id:<16} {rates[S_QUIET]:>8} {rates[S_QUIET_FIXED]:>8} "
              f"{rates[S_SINGLE]:>8} {rates[S_CONTENDED]:>9} {rates[S_CONTENDED_FIXED]:>8} "
              f"{rates[S_CONTENDED_SINGLE]:>9} {'n/a' if r is None else f'{r:.2f}x':>11} "
              f"{c.status():>6} {'n/a' if rc is None else f'{rc:.2f}x':>10}  {loads:>14} "
              f"{threads:>11}")
    print(f"\nquiet / contended: the batch chooses its thread count (the default); fixed: "
          f"vec.fix_threads({numba.get_num_threads()}); single: numba.set_num_threads(1); "
          f"c. = contended.\nTarget: contended >= {TARGET_CONTENDED_RATIO:g}x single (quiet). "
          f"c/c.single: the same two under the same load.\nload = most CPU used "
          f"by other processes during any repeat (q quiet, s single, c contended: the busy "
          f"process counts ~1.0); threads = thread count in use at the end (median).")
    quiet_loaded = [c.env_id for c in table.values()
                    if (c.ms[S_QUIET].max_other_load or 0.0) > LOAD_WARN
                    or (c.ms[S_SINGLE].max_other_load or 0.0) > LOAD_WARN]
    if quiet_loaded:
        print(f"WARNING: other processes used > {LOAD_WARN} CPU during the quiet or single "
              f"runs of {', '.join(quiet_loaded)}: the machine was not quiet; re-run.")


def check_contended(table: dict[str, Contended]) -> list[dict[str, Any]]:
    """One target row per game: contended >= TARGET_CONTENDED_RATIO x single."""
    return [{
        "game": env_id,
        "target": f"contended B={c.batch_size} >= {TARGET_CONTENDED_RATIO:g}x single-thread",
        "unit": "x single", "measured": c.ratio(S_CONTENDED, S_SINGLE),
        "required": TARGET_CONTENDED_RATIO, "status": c.status(),
    } for env_id, c in table.items()]


def contended_json(table: dict[str, Contended], args: argparse.Namespace,
                   busy_log: list[dict[str, Any]]) -> dict[str, Any]:
    """The result JSON's ``"contended"`` entry: the table, every repeat, the busy processes."""
    return {
        "batch_size": args.contended_batch,
        "states": list(CONTENDED_STATES),
        "busy": "one subprocess per contended run: a tight Python loop (one core)",
        "warmup_s": args.contended_warmup,
        "target_ratio": TARGET_CONTENDED_RATIO,
        "games": {env_id: c.to_json() for env_id, c in table.items()},
        "busy_processes": busy_log,
    }


# --- run on its own: the engine and a training run per game ------------------------------------

ROOT = Path(__file__).resolve().parent.parent
TRAIN_SCRIPT = ROOT / "examples" / "train_ppo.py"
T_QUIET, T_ONE_CORE, T_CONTENDED = "quiet", "one core", "contended"
TRAINING_STATES = (T_QUIET, T_ONE_CORE, T_CONTENDED)
TRAINING_FLOOR = 0.5  # contended training / one-core (taskset) training: below it is a FAIL
ONE_CORE_CPU = "0"  # the core `taskset -c` pins the one-core training run to


def train_command(env_id: str, minutes: float, eval_games: int, out: Path,
                  pin: str | None = None) -> list[str]:
    """The training subprocess: ``examples/train_ppo.py`` (under ``taskset -c pin`` if given)."""
    cmd = [sys.executable, str(TRAIN_SCRIPT), "--game", env_id, "--minutes", f"{minutes:g}",
           "--no-progress", "--eval-games", str(eval_games), "--out", str(out), "--overwrite"]
    return ["taskset", "-c", pin, *cmd] if pin is not None else cmd


def run_training(env_id: str, state: str, minutes: float, eval_games: int,
                 timeout: float | None = None) -> dict[str, Any]:
    """One training run in ``state``: its env steps/s (``summary.json``), final heuristic win
    rate (last ``history.json`` row), wall time and the CPUs other processes used meanwhile
    (the busy process included). ``error`` says why a run gave no rate (None if it did)."""
    rec: dict[str, Any] = {"state": state, "env_steps_per_s": None, "heuristic_win_rate": None,
                           "wall_s": None, "other_cpu_load": None, "returncode": None,
                           "error": None, "command": None}
    if state == T_ONE_CORE and shutil.which("taskset") is None:
        rec["error"] = "taskset not found (util-linux): the one-core run needs it"
        return rec
    with tempfile.TemporaryDirectory(prefix="contended_train_") as tmp:
        out = Path(tmp) / "run"
        cmd = train_command(env_id, minutes, eval_games, out,
                            ONE_CORE_CPU if state == T_ONE_CORE else None)
        rec["command"] = cmd
        timeout = timeout or 60.0 * minutes * 3 + 600.0  # budget + compile + evaluations
        with BusyCore(1 if state == T_CONTENDED else 0) as busy, LoadProbe(children=True) as p:
            t0 = perf_counter()
            try:
                proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True,
                                      text=True, timeout=timeout, cwd=ROOT)
            except subprocess.TimeoutExpired:
                rec["error"] = f"timed out after {timeout:.0f} s"
                return rec
            rec["wall_s"] = round(perf_counter() - t0, 2)
        rec["other_cpu_load"], rec["busy_pids"] = p.other, busy.pids
        rec["returncode"] = proc.returncode
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
            rec["error"] = f"exit {proc.returncode}: {' | '.join(tail)}"
            return rec
        try:
            summary = json.loads((out / "summary.json").read_text())
            history = json.loads((out / "history.json").read_text())
        except (OSError, ValueError) as e:
            rec["error"] = f"no summary.json/history.json: {e}"
            return rec
        rec["env_steps_per_s"] = summary.get("env_steps_per_s")
        if history:
            rec["heuristic_win_rate"] = history[-1].get("heuristic_win_rate")
    return rec


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a and b else None


def _fx(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}x"


def game_ratios(c: Contended | None, training: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The ratios of one game: training contended / one core and quiet / one core (with
    PASS/FAIL against ``TRAINING_FLOOR``), engine contended / single and quiet / single."""
    rate = {s: (training.get(s) or {}).get("env_steps_per_s") for s in TRAINING_STATES}
    out: dict[str, Any] = {
        "training_contended_to_one_core": _ratio(rate[T_CONTENDED], rate[T_ONE_CORE]),
        "training_quiet_to_one_core": _ratio(rate[T_QUIET], rate[T_ONE_CORE]),
        "training_floor": TRAINING_FLOOR,
    }
    r = out["training_contended_to_one_core"]
    out["training_status"] = ("SKIP" if not training else "FAIL" if r is None or
                              r < TRAINING_FLOOR else "PASS")
    if c is not None and c.ms[S_QUIET].repeats:
        out["engine_contended_to_single"] = c.ratio(S_CONTENDED, S_SINGLE)
        out["engine_quiet_to_single"] = c.ratio(S_QUIET, S_SINGLE)
        out["engine_status"] = c.status()
    return out


def print_summary(results: dict[str, dict[str, Any]], args: argparse.Namespace) -> None:
    """One row per game: the engine's rates and ratios, then the training runs'."""
    print(f"\nEngine (B={args.contended_batch}, steps/s, median of {args.repeats} x "
          f"{args.seconds:g} s) and training (examples/train_ppo.py --minutes "
          f"{args.minutes:g}, env steps/s; win = final heuristic win rate), {args.players} "
          f"players; {os.cpu_count()} CPUs, {threading_layer()} layer")
    head = (f"{'game':<15} {'eng quiet':>9} {'single':>8} {'contended':>9} {'c/single':>8} "
            f"{'q/single':>8} | {'tr quiet':>8} {'one core':>8} {'contended':>9} "
            f"{'c/1core':>7} {'q/1core':>7} {'status':>6} {'win q/1/c':>14} {'load q/1/c':>14}")
    print(head)
    print("-" * len(head))
    for env_id, g in results.items():
        c, tr, r = g.get("engine_obj"), g["training"], g["ratios"]
        eng = ["n/a"] * 3
        if c is not None and c.ms[S_QUIET].repeats:
            eng = [fmt_rate(c.ms[s].median) for s in (S_QUIET, S_SINGLE, S_CONTENDED)]
        trs = [(tr.get(s) or {}) for s in TRAINING_STATES]
        rates = ["n/a" if not t.get("env_steps_per_s") else fmt_rate(t["env_steps_per_s"])
                 for t in trs]
        wins = "/".join("?" if t.get("heuristic_win_rate") is None
                        else f"{t['heuristic_win_rate']:.2f}" for t in trs)
        loads = "/".join("?" if t.get("other_cpu_load") is None
                         else f"{t['other_cpu_load']:.2f}" for t in trs)
        print(f"{env_id:<15} {eng[0]:>9} {eng[1]:>8} {eng[2]:>9} "
              f"{_fx(r.get('engine_contended_to_single')):>8} "
              f"{_fx(r.get('engine_quiet_to_single')):>8} | {rates[0]:>8} {rates[1]:>8} "
              f"{rates[2]:>9} {_fx(r['training_contended_to_one_core']):>7} "
              f"{_fx(r['training_quiet_to_one_core']):>7} {r['training_status']:>6} "
              f"{wins:>14} {loads:>14}")
        for t in trs:
            if t.get("error"):
                print(f"  {env_id} training {t['state']}: {t['error']}")
    print(f"\nengine: quiet = all threads (the batch choosing its count), single = "
          f"numba.set_num_threads(1), contended = quiet with one core busy. training: quiet ="
          f" both cores, one core = taskset -c {ONE_CORE_CPU} (the other core idle), contended"
          f" = both cores with one busy.\nstatus: training contended >= {TRAINING_FLOOR:g}x "
          f"one core. load = CPUs other processes used during the run (the busy one included).")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", nargs="+", default=None, help="env ids (default: all)")
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--seconds", type=float, default=3.0, help="engine: seconds per repeat")
    p.add_argument("--repeats", type=int, default=3, help="engine: repeats per state")
    p.add_argument("--warmup", type=float, default=CONTENDED_WARMUP,
                   help="engine: untimed seconds before each measurement")
    p.add_argument("--contended-batch", type=int, default=4096, metavar="B")
    p.add_argument("--chunksize", type=int, default=0, help="numba.parallel_chunksize")
    p.add_argument("--minutes", type=float, default=2.0,
                   help="training budget per state (default 2; e.g. 0.4 for a smoke run)")
    p.add_argument("--eval-games", type=int, default=200,
                   help="training: arena games per opponent at each evaluation")
    p.add_argument("--engine-only", action="store_true", help="no training runs")
    p.add_argument("--training-only", action="store_true", help="no engine measurements")
    p.add_argument("--json", default=None, help="result file (default: benchmarks/results/"
                                                "contended-<time>.json)")
    p.add_argument("--strict", action="store_true", help="exit 1 if any status is FAIL")
    args = p.parse_args(argv)
    if args.engine_only and args.training_only:
        p.error("--engine-only and --training-only exclude each other")
    if args.minutes <= 0 or args.seconds <= 0 or args.repeats < 1 or args.eval_games < 0:
        p.error("--minutes and --seconds must be > 0, --repeats >= 1, --eval-games >= 0")
    args.contended_warmup = args.warmup
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    games = [card_envs.resolve_env_id(g) for g in args.games] if args.games \
        else list(card_envs.ENV_IDS)
    started, t_start = _dt.datetime.now(), perf_counter()
    with LoadProbe() as idle:
        time.sleep(0.3)
    results: dict[str, dict[str, Any]] = {}
    busy_log: list[dict[str, Any]] = []
    for env_id in games:
        g: dict[str, Any] = {"engine_obj": None, "training": {}}
        if not args.training_only:
            log(f"{env_id}: batched engine, {len(CONTENDED_STATES)} states x {args.repeats}")
            c = g["engine_obj"] = build_contended(env_id, args)
            for r in range(args.repeats):
                measure_contended({env_id: c}, args, r, t_start, busy_log)
        if not args.engine_only:
            for state in TRAINING_STATES:
                log(f"{env_id}: training, {state}, {args.minutes:g} min")
                t = g["training"][state] = run_training(env_id, state, args.minutes,
                                                        args.eval_games)
                log(f"  {t['env_steps_per_s'] or t['error']} env steps/s, heuristic win "
                    f"{t['heuristic_win_rate']}, other load {t['other_cpu_load']}")
        g["ratios"] = game_ratios(g["engine_obj"], g["training"])
        results[env_id] = g
    print_summary(results, args)
    if any(g["engine_obj"] for g in results.values()):
        print()
        print_contended({k: g["engine_obj"] for k, g in results.items() if g["engine_obj"]},
                        args)
    out = {
        "schema": 1, "benchmark": "card_envs contended: batched engine and training",
        "started": started.isoformat(timespec="seconds"),
        "duration_s": round(perf_counter() - t_start, 2),
        "command": [sys.executable, *sys.argv],
        "machine": {**machine_info(), "other_cpu_load_at_start": idle.other},
        "versions": versions(),
        "numba": {"num_threads": numba.get_num_threads(), "threading_layer": threading_layer()},
        "options": {k: v for k, v in vars(args).items() if k != "json"},
        "training_command": train_command("GAME", args.minutes, args.eval_games, Path("OUT")),
        "games": {env_id: {"engine": g["engine_obj"].to_json() if g["engine_obj"] else None,
                           "training": g["training"], "ratios": g["ratios"]}
                  for env_id, g in results.items()},
        "busy_processes": busy_log,
    }
    path = Path(args.json) if args.json else (
        ROOT / "benchmarks" / "results" / f"contended-{started.strftime('%Y%m%d-%H%M%S')}.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"\nJSON: {path}")
    failed = any(g["ratios"].get(k) == "FAIL" for g in results.values()
                 for k in ("training_status", "engine_status"))
    return 1 if args.strict and failed else 0


if __name__ == "__main__":
    sys.exit(main())
