"""What the benchmarks share: the timed loops, one measurement and its repeats, the load probe,
formatting, and the machine / version records written into every result JSON.

``benchmarks/throughput.py`` (the main table and, with ``contended.py``, the contended table)
uses all of it; ``rollout.py`` and ``ladder.py`` import the machine record and the load probe
through ``throughput``.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Self

import numba
import numpy as np

import card_envs

LOAD_WARN = 0.25  # CPUs used by other processes above which a measurement is flagged

perf_counter = time.perf_counter
Clock = Callable[[], float]
Runner = Callable[[float], tuple[int, float]]  # duration -> (steps, elapsed seconds)


# --- the timed loops ---------------------------------------------------------------------------
# Each runner plays for at least ``duration`` seconds and returns (steps, elapsed seconds). The
# clock is read once per game (AEC / Engine) or per call (vector), never inside the step loop;
# the single-thread runners take the clock (default: wall time; ``time.thread_time``, this
# thread's CPU time, leaves out the time other processes hold the core).

def aec_runner(env: Any, seed: int,
               clock: Clock = perf_counter) -> Runner:
    """The standard PettingZoo AEC loop with random masked actions, reset after each game."""
    rnd = random.Random(seed)
    env.reset(seed=seed)

    def run(duration: float) -> tuple[int, float]:
        steps = 0
        t0 = clock()
        deadline = t0 + duration
        while True:
            env.reset()
            for _agent in env.agent_iter():
                obs, _rew, term, trunc, _info = env.last()
                action = (None if term or trunc
                          else rnd.choice(np.flatnonzero(obs["action_mask"]).tolist()))
                env.step(action)
                steps += 1
            t = clock()
            if t >= deadline:
                return steps, t - t0

    return run


def _games_runner(engine: Any, seed: int, clock: Clock,
                  play: Callable[[np.ndarray], int]) -> Runner:
    """Whole games dealt from ``seed``, ``seed + 1``, ... (continuing across calls), each
    played by ``play(state) -> steps``, until the duration is up."""
    next_seed = [seed]

    def run(duration: float) -> tuple[int, float]:
        steps = 0
        s = next_seed[0]
        t0 = clock()
        deadline = t0 + duration
        while True:
            steps += play(engine.new_state(s))
            s += 1
            t = clock()
            if t >= deadline:
                next_seed[0] = s
                return steps, t - t0

    return run


def engine_runner(engine: Any, seed: int,
                  clock: Clock = perf_counter) -> Runner:
    """The single-state loop a user writes with ``card_envs.Engine``: per step one
    ``step_observe`` (apply the action, then the legal mask, legal actions and observation of
    the seat to act, in ``engine.mask`` / ``engine.legal`` / ``engine.obs``; 0 legal actions
    = the game is over), a random legal action from ``random.Random``."""
    rnd = random.Random(seed)
    legal = engine.legal

    def play(state: np.ndarray) -> int:
        steps = 0
        n = engine.observe_turn(state)
        while n:
            n = engine.step_observe(state, legal.item(rnd.randrange(n)))
            steps += 1
        return steps

    return _games_runner(engine, seed, clock, play)


def engine_calls_runner(engine: Any, seed: int,
                        clock: Clock = perf_counter) -> Runner:
    """The same loop with the separate calls: ``legal_mask``, ``observe`` of the seat to act,
    ``step``, ``is_terminal`` (one crossing into numba each)."""
    rnd = random.Random(seed)
    mask = np.zeros(engine.num_actions, np.int8)
    obs = np.zeros(engine.game.obs_size, engine.game.obs_dtype)

    def play(state: np.ndarray) -> int:
        steps = 0
        while not engine.is_terminal(state):
            engine.legal_mask(state, mask)
            engine.observe(state, engine.current_player(state), obs)
            engine.step(state, rnd.choice(np.flatnonzero(mask).tolist()))
            steps += 1
        return steps

    return _games_runner(engine, seed, clock, play)


def openspiel_runner(game: Any, seed: int,
                     clock: Clock = perf_counter) -> Runner:
    """The same loop in OpenSpiel (``pyspiel``; connect four as the anchor): per step the
    legal actions, the observation tensor of the player to move, ``rnd.choice`` and
    ``apply_action``, until ``is_terminal()``."""
    rnd = random.Random(seed)

    def run(duration: float) -> tuple[int, float]:
        steps = 0
        t0 = clock()
        deadline = t0 + duration
        while True:
            state = game.new_initial_state()
            while not state.is_terminal():
                legal = state.legal_actions()
                state.observation_tensor()
                state.apply_action(rnd.choice(legal))
                steps += 1
            t = clock()
            if t >= deadline:
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
    """One timed loop (``run``) and the record of each of its repeats."""

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
    """Steps/s for a table: 1.23M, 45.6k, 789."""
    if x >= 1e6:
        return f"{x / 1e6:.2f}M"
    if x >= 1e3:
        return f"{x / 1e3:.1f}k"
    return f"{x:.0f}"


def fmt_cost(rate: float) -> str:
    """Time per step at ``rate`` steps/s: 1.23 us, 456.7 ns."""
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
    batched engine is very sensitive to this (its threads wait for each other each call).
    ``children``: the CPU of child processes waited for inside the block counts as ours too
    (a benchmarked subprocess)."""

    def __init__(self, children: bool = False) -> None:
        self.children = children

    def _own(self) -> float:
        t = os.times()
        return t.user + t.system + (t.children_user + t.children_system if self.children
                                    else 0.0)

    def __enter__(self) -> Self:
        self.sys0 = _system_cpu_seconds()
        self.own0 = self._own()
        self.wall0 = perf_counter()
        self.other = self.steal = None
        return self

    def __exit__(self, *exc: object) -> None:
        sys1 = _system_cpu_seconds()
        own = self._own() - self.own0
        wall = perf_counter() - self.wall0
        if self.sys0 is None or sys1 is None or wall <= 0:
            return
        self.other = max(0.0, (sys1[0] - self.sys0[0] - own) / wall)
        self.steal = max(0.0, (sys1[1] - self.sys0[1]) / wall)


def measure(m: Measurement, args: argparse.Namespace, repeat: int, t_start: float,
            warmup: float | None = None) -> None:
    """One repeat of ``m``: an untimed warm-up (``args.warmup`` unless ``warmup``), then
    ``args.seconds`` timed under a :class:`LoadProbe`, recorded in ``m.repeats`` and logged."""
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


# --- logging and the records of the result JSON ---------------------------------------------

def log(msg: str) -> None:
    """Progress to stderr (stdout holds the tables)."""
    print(msg, file=sys.stderr, flush=True)


def pkg_version(name: str) -> str | None:
    """An installed distribution's version (else the module's ``__version__``, else None)."""
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        mod = sys.modules.get(name.replace("-", "_"))
        return getattr(mod, "__version__", None)


def machine_info() -> dict[str, Any]:
    """Platform, processor, CPU counts and Python of this machine."""
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
    """Versions of card_envs and the libraries its speed depends on."""
    out = {"card_envs": getattr(card_envs, "__version__", None) or pkg_version("card-envs")}
    for name in ("numpy", "numba", "pettingzoo", "gymnasium", "open_spiel"):
        out[name] = pkg_version(name)
    return out


def threading_layer() -> str | None:
    """numba's threading layer, once a parallel function has run (else None)."""
    try:
        return numba.threading_layer()
    except ValueError:
        return None
