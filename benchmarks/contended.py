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
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Self

import numba
from common import LOAD_WARN, Measurement, fmt_rate, measure, threading_layer, vector_runner

import card_envs

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
