#!/usr/bin/env python
"""Throughput benchmark: random masked play, every registered game, one process.

For each game in ``card_envs.ENV_IDS`` (filter with ``--games``), with ``--players`` seats:

* ``env()``       ``card_envs.make(env_id)``: the standard PettingZoo AEC loop (below), one
                  ``env.reset()`` per game. Every ``env.step`` call counts as a step (including
                  the ``step(None)`` calls that retire finished agents).
* ``raw_env()``   ``card_envs.make_raw(env_id)``: the same loop.
* ``Engine``      ``card_envs.Engine(env_id)``: ``new_state / legal_mask / step / is_terminal``
                  from Python, same random choice.
* ``vector``      ``card_envs.vector.make(env_id, num_envs=B, seed=0)``: ``vec.step(
                  vec.sample_actions())`` in a loop, B steps per call, B in ``--batch-sizes``.

The anchor is PettingZoo's ``connect_four_v3.env()`` with the identical AEC loop; every rate is
also reported as a ratio to it, so results from different machines can be compared. The AEC loop
(the random choice uses ``random.Random``, not numpy's ``Generator.choice``, which costs ~12 us
per call and would hide the env being measured)::

    for agent in env.agent_iter():
        obs, rew, term, trunc, info = env.last()
        action = None if term or trunc else rnd.choice(np.flatnonzero(obs["action_mask"]).tolist())
        env.step(action)

Method: everything is built and compiled first; then each measurement runs for a fixed wall-clock
time (``--seconds``, checked after each game / batched call) after a short warm-up, and the whole
set is repeated ``--repeats`` times round-robin (the anchor brackets the Python-level runs of each
repeat), so slow drift of the machine affects anchor and envs alike. Reported: median steps/s and
min..max over the repeats.

Targets (printed per game as PASS/FAIL; ``--strict`` makes a FAIL the exit status):
``env()`` >= 10x the anchor, and the batched engine at B=4096 >= 5,000,000 steps/s.

**Contended table** (``--contended`` adds it, ``--contended-only`` runs only it): the batched
engine at B=4096 (``--contended-batch``) for every game in six states, round-robin per repeat:

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
``"contended"``. ``--chunksize N`` runs every batched loop inside
``numba.parallel_chunksize(N)``. Background: docs/performance.md.

Usage::

    python benchmarks/throughput.py                      # full run (~3 s x 3 per measurement)
    python benchmarks/throughput.py --quick --repeats 1  # smoke run (~0.5 s per measurement)
    python benchmarks/throughput.py --games slide_v0 --players 3 --json /tmp/out.json
    python benchmarks/throughput.py --contended-only     # quiet / contended / single, all games
    python benchmarks/throughput.py --contended          # everything above plus that table
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

import numpy as np

try:
    import card_envs
except ImportError:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import card_envs

import numba

ANCHOR_ID = "connect_four_v3"
ANCHOR_GAME = "connect_four_v3 (anchor)"
DEFAULT_BATCH_SIZES = (1, 256, 4096, 65536)
TARGET_AEC_RATIO = 10.0
TARGET_BATCH = 4096
# per-game batched targets (B=4096): each manifest's ``bench.batch_rate``
LOAD_WARN = 0.25  # CPUs used by other processes above which a measurement is flagged
TARGET_CONTENDED_RATIO = 0.9  # contended (one core busy) / single-thread, at TARGET_BATCH
CONTENDED_WARMUP = 1.5  # s before each contended-table measurement: the batch settles its threads
S_QUIET, S_QUIET_FIXED, S_SINGLE = "quiet", "quiet fixed", "single"
S_CONTENDED, S_CONTENDED_FIXED, S_CONTENDED_SINGLE = (
    "contended", "contended fixed", "contended single")
QUIET_STATES = (S_QUIET, S_QUIET_FIXED, S_SINGLE)
BUSY_STATES = (S_CONTENDED, S_CONTENDED_FIXED, S_CONTENDED_SINGLE)
CONTENDED_STATES = QUIET_STATES + BUSY_STATES
RESULTS_DIR = Path(__file__).resolve().parent / "results"

V_ENV, V_RAW, V_ENGINE, V_VECTOR = "env()", "raw_env()", "Engine", "vector"

perf_counter = time.perf_counter


# --- the timed loops ---------------------------------------------------------------------------
# Each runner plays for at least ``duration`` seconds and returns (steps, elapsed seconds). The
# clock is read once per game (AEC / Engine) or per call (vector), never inside the step loop.

def aec_runner(env: Any, seed: int) -> Callable[[float], tuple[int, float]]:
    """The standard PettingZoo AEC loop with random masked actions, reset after each game."""
    rnd = random.Random(seed)
    env.reset(seed=seed)

    def run(duration: float) -> tuple[int, float]:
        steps = 0
        t0 = perf_counter()
        deadline = t0 + duration
        while True:
            env.reset()
            for _agent in env.agent_iter():
                obs, _rew, term, trunc, _info = env.last()
                action = (None if term or trunc
                          else rnd.choice(np.flatnonzero(obs["action_mask"]).tolist()))
                env.step(action)
                steps += 1
            t = perf_counter()
            if t >= deadline:
                return steps, t - t0

    return run


def engine_runner(engine: Any, seed: int) -> Callable[[float], tuple[int, float]]:
    """Raw single-state engine from Python: new_state / legal_mask / step / is_terminal."""
    rnd = random.Random(seed)
    mask = np.zeros(engine.num_actions, np.int8)
    next_seed = [seed]

    def run(duration: float) -> tuple[int, float]:
        steps = 0
        s = next_seed[0]
        t0 = perf_counter()
        deadline = t0 + duration
        while True:
            state = engine.new_state(s)
            s += 1
            while not engine.is_terminal(state):
                engine.legal_mask(state, mask)
                engine.step(state, rnd.choice(np.flatnonzero(mask).tolist()))
                steps += 1
            t = perf_counter()
            if t >= deadline:
                next_seed[0] = s
                return steps, t - t0

    return run


def vector_runner(vec: Any, chunksize: int = 0) -> Callable[[float], tuple[int, float]]:
    """Batched engine: ``vec.step(vec.sample_actions())``; B steps per call (inside
    ``numba.parallel_chunksize(chunksize)``: 0 is numba's default, one chunk per thread)."""
    B = vec.num_envs

    def run(duration: float) -> tuple[int, float]:
        calls = 0
        with numba.parallel_chunksize(chunksize):
            t0 = perf_counter()
            deadline = t0 + duration
            while True:
                vec.step(vec.sample_actions())
                calls += 1
                t = perf_counter()
                if t >= deadline:
                    return calls * B, t - t0

    return run


# --- bookkeeping -------------------------------------------------------------------------------

@dataclass
class Measurement:
    game: str
    variant: str
    batch_size: int | None
    run: Callable[[float], tuple[int, float]] = field(repr=False)
    repeats: list[dict[str, Any]] = field(default_factory=list)

    @property
    def rates(self) -> list[float]:
        return [r["steps_per_s"] for r in self.repeats]

    @property
    def median(self) -> float:
        return statistics.median(self.rates)

    @property
    def max_other_load(self) -> float | None:
        loads = [r["other_cpu_load"] for r in self.repeats if r["other_cpu_load"] is not None]
        return max(loads) if loads else None

    def label(self) -> str:
        b = f" B={self.batch_size}" if self.batch_size is not None else ""
        return f"{self.game} {self.variant}{b}"

    def to_json(self, anchor: float | None) -> dict[str, Any]:
        rates = self.rates
        return {
            "game": self.game,
            "variant": self.variant,
            "batch_size": self.batch_size,
            "median_steps_per_s": self.median,
            "min_steps_per_s": min(rates),
            "max_steps_per_s": max(rates),
            "ratio_to_anchor": self.median / anchor if anchor else None,
            "max_other_cpu_load": self.max_other_load,
            "repeats": self.repeats,
        }


def fmt_rate(x: float) -> str:
    if x >= 1e6:
        return f"{x / 1e6:.2f}M"
    if x >= 1e3:
        return f"{x / 1e3:.1f}k"
    return f"{x:.0f}"


def fmt_cost(rate: float) -> str:
    us = 1e6 / rate
    return f"{us:.2f} us" if us >= 1 else f"{us * 1e3:.1f} ns"


def _system_cpu_seconds() -> tuple[float, float] | None:
    """(busy, steal) CPU seconds of the whole machine since boot, from /proc/stat (Linux)."""
    try:
        with open("/proc/stat") as f:
            parts = f.readline().split()
    except OSError:
        return None
    if not parts or parts[0] != "cpu":
        return None
    v = [int(x) for x in parts[1:9]] + [0] * max(0, 9 - len(parts))
    user, nice, system, _idle, _iowait, irq, softirq, steal = v[:8]
    hz = os.sysconf("SC_CLK_TCK")
    return (user + nice + system + irq + softirq) / hz, steal / hz


class LoadProbe:
    """CPU used by *other* processes (and stolen by the hypervisor) during a measurement, in
    CPUs: 0.0 is a quiet machine; 1.0 means another process kept a whole core busy. The
    batched engine is very sensitive to this (its threads wait for each other each call)."""

    def __enter__(self) -> Self:
        self.sys0 = _system_cpu_seconds()
        t = os.times()
        self.own0 = t.user + t.system
        self.wall0 = perf_counter()
        self.other = self.steal = None
        return self

    def __exit__(self, *exc: object) -> None:
        sys1 = _system_cpu_seconds()
        t = os.times()
        own = t.user + t.system - self.own0
        wall = perf_counter() - self.wall0
        if self.sys0 is None or sys1 is None or wall <= 0:
            return
        self.other = max(0.0, (sys1[0] - self.sys0[0] - own) / wall)
        self.steal = max(0.0, (sys1[1] - self.sys0[1]) / wall)


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


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def pkg_version(name: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        mod = sys.modules.get(name.replace("-", "_"))
        return getattr(mod, "__version__", None)


def machine_info() -> dict[str, Any]:
    processor = platform.processor()
    try:  # platform.processor() is often empty or just the arch on Linux
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    processor = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": processor,
        "cpu_count": os.cpu_count(),
        "cpu_count_usable": usable,
        "python_version": sys.version,
        "python_implementation": platform.python_implementation(),
    }


def versions() -> dict[str, str | None]:
    out = {"card_envs": getattr(card_envs, "__version__", None) or pkg_version("card-envs")}
    for name in ("numpy", "numba", "pettingzoo", "gymnasium"):
        out[name] = pkg_version(name)
    return out


def resolve_games(requested: list[str] | None) -> list[str]:
    if not requested:
        return list(card_envs.ENV_IDS)
    names = [n for item in requested for n in item.split(",") if n.strip()]
    out = []
    for n in (x.strip() for x in names):
        try:  # "slide" or "slide_v0"
            match = card_envs.resolve_env_id(n)
        except card_envs.OptionError as e:
            raise SystemExit(str(e)) from None
        if match not in out:
            out.append(match)
    return out


# --- main --------------------------------------------------------------------------------------

def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="Steps/s of random masked play for every registered card_envs game, "
                    "relative to PettingZoo connect_four_v3 measured in the same run.")
    p.add_argument("--games", nargs="+", metavar="ENV_ID",
                   help=f"games to run (default: all registered: {', '.join(card_envs.ENV_IDS)})")
    p.add_argument("--players", type=int, default=2, help="seats per game (default 2)")
    p.add_argument("--seconds", type=float, default=3.0,
                   help="wall-clock seconds per measurement (default 3)")
    p.add_argument("--repeats", type=int, default=3,
                   help="repeats of every measurement; median and min/max reported (default 3)")
    p.add_argument("--quick", action="store_true",
                   help="smoke run: 0.5 s per measurement (overrides --seconds)")
    p.add_argument("--warmup", type=float, default=None,
                   help="untimed seconds before each measurement (default min(0.25, seconds/10))")
    p.add_argument("--batch-sizes", type=int, nargs="+", default=list(DEFAULT_BATCH_SIZES),
                   metavar="B", help="batched engine sizes (default 1 256 4096 65536)")
    p.add_argument("--threads", type=int, default=None,
                   help="numba threads for the batched engine (default: numba's default)")
    p.add_argument("--seed", type=int, default=0, help="seed of deals and random policies")
    p.add_argument("--chunksize", type=int, default=0,
                   help="numba.parallel_chunksize for the batched runs (default 0: numba's "
                        "static split, one chunk per thread)")
    p.add_argument("--json", metavar="PATH", default=None,
                   help="where to write results (default benchmarks/results/"
                        "throughput-<timestamp>.json)")
    p.add_argument("--strict", action="store_true",
                   help="exit with status 1 if a target is missed")
    p.add_argument("--contended", action="store_true",
                   help="also measure the contended table: B=4096 quiet, with one core kept "
                        "busy by another process, and on one thread (see the docstring)")
    p.add_argument("--contended-only", action="store_true",
                   help="measure only the contended table (no anchor, AEC or other sizes)")
    p.add_argument("--contended-batch", type=int, default=TARGET_BATCH, metavar="B",
                   help=f"batch size of the contended table (default {TARGET_BATCH})")
    args = p.parse_args(argv)
    if args.quick:
        args.seconds = 0.5
    args.contended_warmup = CONTENDED_WARMUP if args.warmup is None else args.warmup
    if args.warmup is None:
        args.warmup = min(0.25, args.seconds / 10)
    args.contended = args.contended or args.contended_only
    if args.seconds <= 0 or args.repeats < 1 or args.players < 1 or args.warmup < 0:
        p.error("--seconds and --warmup must be positive, --repeats and --players >= 1")
    if any(b < 1 for b in args.batch_sizes) or args.contended_batch < 1 or args.chunksize < 0:
        p.error("--batch-sizes and --contended-batch must be positive, --chunksize >= 0")
    return args


def build_anchor(seed: int) -> tuple[Measurement | None, str | None]:
    try:
        from pettingzoo.classic import connect_four_v3
    except ImportError as e:  # pettingzoo[classic] extra not installed
        return None, f"{type(e).__name__}: {e}"
    env = connect_four_v3.env()
    run = aec_runner(env, seed)
    run(0.05)  # first games: imports, lazy setup
    return Measurement(ANCHOR_GAME, V_ENV, None, run), None


def build_game(env_id: str, args: argparse.Namespace) -> list[Measurement]:
    """All measurements of one game, built and compiled (raises OptionError if the game does
    not support ``--players``)."""
    opts = {"num_players": args.players}
    ms = []
    for variant, factory in ((V_ENV, card_envs.make), (V_RAW, card_envs.make_raw)):
        run = aec_runner(factory(env_id, **opts), args.seed)
        run(0.0)  # compile / first game
        ms.append(Measurement(env_id, variant, None, run))
    run = engine_runner(card_envs.Engine(env_id, **opts), args.seed)
    run(0.0)
    ms.append(Measurement(env_id, V_ENGINE, None, run))
    for B in args.batch_sizes:
        vec = card_envs.vector.make(env_id, num_envs=B, seed=args.seed, **opts)
        run = vector_runner(vec, args.chunksize)
        run(0.0)  # compiles _vec_step for this game on the first size
        ms.append(Measurement(env_id, V_VECTOR, B, run))
    return ms


def measure(m: Measurement, args: argparse.Namespace, repeat: int, t_start: float,
            warmup: float | None = None) -> None:
    warmup = args.warmup if warmup is None else warmup
    if warmup > 0:
        m.run(warmup)
    started = perf_counter() - t_start
    with LoadProbe() as probe:
        steps, elapsed = m.run(args.seconds)
    rate = steps / elapsed
    m.repeats.append({"repeat": repeat, "steps": steps, "seconds": elapsed,
                      "steps_per_s": rate, "started_at_s": round(started, 3),
                      "other_cpu_load": probe.other, "steal_cpu": probe.steal})
    busy = "" if probe.other is None else f"   (other load {probe.other:.2f} CPU)"
    log(f"  [{repeat + 1}/{args.repeats}] {m.label():<40} {fmt_rate(rate):>9} steps/s{busy}")


# --- the contended table ----------------------------------------------------------------------

@dataclass
class Contended:
    """One game's batched engine in the five states of the contended table."""
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


def print_table(anchor: Measurement | None, games: dict[str, list[Measurement]]) -> None:
    a = anchor.median if anchor and anchor.repeats else None
    head = (f"{'game':<26} {'variant':<10} {'B':>6} {'steps/s':>10} "
            f"{'min..max':>19} {'spread':>7} {'per step':>10} {'vs anchor':>10} "
            f"{'load':>5}")
    print(head)
    print("-" * len(head))

    def row(m: Measurement) -> None:
        rates = m.rates
        med = m.median
        spread = (max(rates) - min(rates)) / med * 100
        rng = f"{fmt_rate(min(rates))}..{fmt_rate(max(rates))}"
        ratio = f"{med / a:.2f}x" if a else "n/a"
        b = "-" if m.batch_size is None else str(m.batch_size)
        load = m.max_other_load
        load_s = "?" if load is None else f"{load:.2f}"
        print(f"{m.game:<26} {m.variant:<10} {b:>6} {fmt_rate(med):>10} {rng:>19} "
              f"{spread:>6.1f}% {fmt_cost(med):>10} {ratio:>10} {load_s:>5}")

    if anchor and anchor.repeats:
        row(anchor)
    for ms in games.values():
        for m in ms:
            if m.repeats:
                row(m)


def check_targets(anchor: Measurement | None,
                  games: dict[str, list[Measurement]]) -> list[dict[str, Any]]:
    a = anchor.median if anchor and anchor.repeats else None
    out = []
    for env_id, ms in games.items():
        env = next(m for m in ms if m.variant == V_ENV)
        ratio = env.median / a if a else None
        out.append({
            "game": env_id, "target": f"AEC env() >= {TARGET_AEC_RATIO:g}x {ANCHOR_ID}",
            "unit": "x anchor", "measured": ratio, "required": TARGET_AEC_RATIO,
            "status": "SKIP" if ratio is None else
                      ("PASS" if ratio >= TARGET_AEC_RATIO else "FAIL"),
        })
        vec = next((m for m in ms if m.variant == V_VECTOR and m.batch_size == TARGET_BATCH),
                   None)
        rate = vec.median if vec else None
        required = card_envs.manifest(env_id).bench.batch_rate
        out.append({
            "game": env_id,
            "target": f"batched B={TARGET_BATCH} >= {required:,.0f} steps/s",
            "unit": "steps/s", "measured": rate, "required": required,
            "status": "SKIP" if rate is None else
                      ("PASS" if rate >= required else "FAIL"),
        })
    return out


def check_contended(table: dict[str, Contended]) -> list[dict[str, Any]]:
    return [{
        "game": env_id,
        "target": f"contended B={c.batch_size} >= {TARGET_CONTENDED_RATIO:g}x single-thread",
        "unit": "x single", "measured": c.ratio(S_CONTENDED, S_SINGLE),
        "required": TARGET_CONTENDED_RATIO, "status": c.status(),
    } for env_id, c in table.items()]


def threading_layer() -> str | None:
    """numba's threading layer, once a parallel function has run (else None)."""
    try:
        return numba.threading_layer()
    except ValueError:
        return None


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    game_ids = resolve_games(args.games)
    if args.threads is not None:
        numba.set_num_threads(args.threads)
    t_start = perf_counter()
    started = _dt.datetime.now()

    log(f"card_envs throughput: games={game_ids} players={args.players} "
        f"seconds={args.seconds} repeats={args.repeats} warmup={args.warmup} "
        f"numba threads={numba.get_num_threads()}")

    with LoadProbe() as idle:
        time.sleep(0.3)
    if idle.other is not None and idle.other > LOAD_WARN:
        log(f"WARNING: the machine is busy before the benchmark starts: other processes use "
            f"{idle.other:.2f} of {os.cpu_count()} CPUs. Results will be noisy (the batched "
            f"engine most); see the load column.")

    anchor, anchor_error = (None, "--contended-only") if args.contended_only else \
        build_anchor(args.seed)
    if anchor is None and not args.contended_only:
        log(f"\n*** anchor {ANCHOR_ID} unavailable ({anchor_error}).\n"
            f"*** Install PettingZoo's classic games to get the anchor and the ratios:\n"
            f'***     pip install -e ".[bench]"      (or: make bench)\n'
            f"*** Continuing without the anchor.\n")

    games: dict[str, list[Measurement]] = {}
    contended: dict[str, Contended] = {}
    skipped: dict[str, str] = {}
    for env_id in game_ids:
        t = perf_counter()
        try:
            if not args.contended_only:
                games[env_id] = build_game(env_id, args)
            if args.contended:
                contended[env_id] = build_contended(env_id, args)
        except card_envs.OptionError as e:
            skipped[env_id] = str(e)
            games.pop(env_id, None)
            log(f"skipping {env_id}: {e}")
            continue
        log(f"built and compiled {env_id} in {perf_counter() - t:.1f} s")

    # Round-robin: every repeat runs every measurement once. The anchor brackets the
    # Python-level runs (before and after), then the batched runs (all cores) follow, then
    # the contended table.
    python_level = [m for ms in games.values() for m in ms if m.variant != V_VECTOR]
    batched = [m for ms in games.values() for m in ms if m.variant == V_VECTOR]
    busy_log: list[dict[str, Any]] = []
    for r in range(args.repeats):
        log(f"repeat {r + 1}/{args.repeats}")
        order = ([anchor] if anchor else []) + python_level + ([anchor] if anchor else [])
        for m in order + batched:
            measure(m, args, r, t_start)
        if contended:
            measure_contended(contended, args, r, t_start, busy_log)

    a = anchor.median if anchor else None
    all_ms = ([anchor] if anchor else []) + [m for ms in games.values() for m in ms]
    if games:
        print()
        anchor_note = (f" (anchor: {2 * args.repeats} runs bracketing the Python-level runs)"
                       if anchor else " (no anchor)")
        print(f"card_envs throughput, {args.players} players, random masked play; median of "
              f"{args.repeats} x {args.seconds:g} s{anchor_note}; numba threads "
              f"{numba.get_num_threads()}, {os.cpu_count()} CPUs")
        print()
        print_table(anchor, games)
        print("\nload = most CPU used by other processes during any repeat, in CPUs (from "
              "/proc/stat; 0 = quiet machine).")
        loaded = [m for m in all_ms if (m.max_other_load or 0.0) > LOAD_WARN]
        if loaded:
            print(f"WARNING: other processes used > {LOAD_WARN} CPU during {len(loaded)} "
                  f"measurement(s) of {len(all_ms)}; those rates (the batched engine most) "
                  f"are not representative. Re-run on a quiet machine.")
        if anchor is None:
            print(f"\n(no anchor: {ANCHOR_ID} not importable; "
                  f'pip install -e ".[bench]" or make bench)')
    if contended:
        print()
        print_contended(contended, args)
        quiet_loaded = [c.env_id for c in contended.values()
                        if (c.ms[S_QUIET].max_other_load or 0.0) > LOAD_WARN
                        or (c.ms[S_SINGLE].max_other_load or 0.0) > LOAD_WARN]
        if quiet_loaded:
            print(f"WARNING: other processes used > {LOAD_WARN} CPU during the quiet or single "
                  f"runs of {', '.join(quiet_loaded)}: the machine was not quiet; re-run.")
    for env_id, why in skipped.items():
        print(f"\n(skipped {env_id}: {why})")

    targets = check_targets(anchor, games) + check_contended(contended)
    print("\nTargets:")
    for t in targets:
        if t["measured"] is None:
            got = "no anchor" if t["unit"] == "x anchor" else "not measured"
        elif t["unit"] == "steps/s":
            got = f"{t['measured']:,.0f} steps/s"
        else:
            got = f"{t['measured']:.2f}x"
        print(f"  {t['status']:<4}  {t['game']:<14} {t['target']:<42} measured {got}")

    layer = threading_layer()
    result = {
        "schema": 1,
        "benchmark": "card_envs throughput (random masked play)",
        "started": started.isoformat(timespec="seconds"),
        "duration_s": round(perf_counter() - t_start, 2),
        "command": [sys.executable, *sys.argv],
        "machine": {**machine_info(), "other_cpu_load_at_start": idle.other},
        "versions": versions(),
        "numba": {"num_threads": numba.get_num_threads(),
                  "config_num_threads": numba.config.NUMBA_NUM_THREADS,
                  "threading_layer": layer},
        "options": {**{k: v for k, v in vars(args).items() if k != "json"},
                    "games": game_ids},
        "anchor": {"env_id": ANCHOR_ID, "available": anchor is not None,
                   "error": anchor_error,
                   "median_steps_per_s": a},
        "skipped_games": skipped,
        "measurements": ([anchor.to_json(a)] if anchor else [])
        + [m.to_json(a) for ms in games.values() for m in ms],
        "paired_aec_ratios": {  # env() rate / mean of the two anchor runs of the same repeat
            env_id: [
                e["steps_per_s"] / statistics.mean(
                    x["steps_per_s"] for x in anchor.repeats if x["repeat"] == e["repeat"])
                for e in next(m for m in ms if m.variant == V_ENV).repeats
            ] for env_id, ms in games.items()
        } if anchor else {},
        "contended": {
            "batch_size": args.contended_batch,
            "states": list(CONTENDED_STATES),
            "busy": "one subprocess per contended run: a tight Python loop (one core)",
            "warmup_s": args.contended_warmup,
            "target_ratio": TARGET_CONTENDED_RATIO,
            "games": {env_id: c.to_json() for env_id, c in contended.items()},
            "busy_processes": busy_log,
        } if contended else None,
        "targets": targets,
    }
    path = Path(args.json) if args.json else (
        RESULTS_DIR / f"throughput-{started.strftime('%Y%m%d-%H%M%S')}.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nJSON: {path}")
    print(f"total time {perf_counter() - t_start:.1f} s")

    if args.strict and any(t["status"] == "FAIL" for t in targets):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
