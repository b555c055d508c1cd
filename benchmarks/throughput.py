#!/usr/bin/env python
"""Throughput benchmark: random masked play, every registered game, one process.

For each game in ``card_envs.ENV_IDS`` (filter with ``--games``), with ``--players`` seats:

* ``env()``       ``card_envs.make(env_id)``: the standard PettingZoo AEC loop (below), one
                  ``env.reset()`` per game. Every ``env.step`` call counts as a step (including
                  the ``step(None)`` calls that retire finished agents).
* ``raw_env()``   ``card_envs.make_raw(env_id)``: the same loop.
* ``Engine``      ``card_envs.Engine(env_id)``, the single-state loop a user writes: per step one
                  ``step_observe`` (apply the action; the legal mask, legal actions and
                  observation of the seat to act; 0 legal actions once the game is over), a
                  random legal action from ``random.Random``.
* ``Engine calls`` the same loop with the separate calls ``legal_mask / observe / step /
                  is_terminal``.
* ``vector``      ``card_envs.vector.make(env_id, num_envs=B, seed=0)``: ``vec.step(
                  vec.sample_actions())`` in a loop, B steps per call, B in ``--batch-sizes``.

The anchor is PettingZoo's ``connect_four_v3.env()`` with the identical AEC loop; every rate is
also reported as a ratio to it, so results from different machines can be compared. The
single-state loops have their own anchor, OpenSpiel's connect four (``pyspiel``, the
``open_spiel`` wheel of the ``bench`` extra) in the same loop (``legal_actions()``,
``observation_tensor()``, ``rnd.choice``, ``apply_action``, ``is_terminal()``); the ``Engine``
rows are also reported as a ratio to it (a table of their own). The AEC loop
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
``env()`` >= 10x the anchor, the batched engine at B=4096 >= the game's manifest ratio to the
anchor (``bench.batch_ratio``), and the ``Engine`` loop >= 2x OpenSpiel's connect four.

**Contended table** (``--contended`` adds it, ``--contended-only`` runs only it): the batched
engine at B=4096 (``--contended-batch``) for every game quiet, with one core kept busy by
another process, and on one thread; target: contended >= 0.9x single. The states, the target
and the busy process are described in ``benchmarks/contended.py``. ``--chunksize N`` runs every
batched loop inside ``numba.parallel_chunksize(N)``. Background: docs/performance.md.

Shared machinery (timed loops, measurements, load probe, machine record): ``common.py``.

Usage::

    python benchmarks/throughput.py                      # full run (~3 s x 3 per measurement)
    python benchmarks/throughput.py --quick --repeats 1  # smoke run (~0.5 s per measurement)
    python benchmarks/throughput.py --games slide_v0 --players 3 --json /tmp/out.json
    python benchmarks/throughput.py --engine-only        # the Engine loops and OpenSpiel only
    python benchmarks/throughput.py --engine-only --cpu-time  # the same, steadier when busy
    python benchmarks/throughput.py --contended-only     # quiet / contended / single, all games
    python benchmarks/throughput.py --contended          # everything above plus that table
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

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
    aec_runner,
    engine_calls_runner,
    engine_runner,
    fmt_cost,
    fmt_rate,
    log,
    machine_info,
    measure,
    openspiel_runner,
    perf_counter,
    threading_layer,
    vector_runner,
    versions,
)
from common import pkg_version as pkg_version  # rollout.py imports it from here
from contended import (
    CONTENDED_STATES,
    CONTENDED_WARMUP,
    Contended,
    build_contended,
    check_contended,
    contended_json,
    measure_contended,
    print_contended,
)

ANCHOR_ID = "connect_four_v3"
ANCHOR_GAME = "connect_four_v3 (anchor)"
OPENSPIEL_ID = "connect_four"  # pyspiel.load_game name
OPENSPIEL_GAME = "connect_four (OpenSpiel)"
TARGET_OPENSPIEL_RATIO = 2.0
DEFAULT_BATCH_SIZES = (1, 256, 4096, 65536)
TARGET_AEC_RATIO = 10.0
TARGET_BATCH = 4096
# per-game batched targets (B=4096, x the anchor): each manifest's ``bench.batch_ratio``
RESULTS_DIR = Path(__file__).resolve().parent / "results"

V_ENV, V_RAW, V_ENGINE, V_VECTOR = "env()", "raw_env()", "Engine", "vector"
V_CALLS, V_PYSPIEL = "Engine calls", "pyspiel"


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
    p.add_argument("--cpu-time", action="store_true",
                   help="time the single-thread loops (AEC, Engine, OpenSpiel) by this "
                        "thread's CPU time instead of wall time: steadier on a busy machine "
                        "(the time other processes hold the core is left out); the batched "
                        "runs keep wall time")
    p.add_argument("--engine-only", action="store_true",
                   help="measure only the single-state Engine loops and OpenSpiel's connect "
                        "four (no PettingZoo anchor, AEC or batched runs)")
    p.add_argument("--contended-batch", type=int, default=TARGET_BATCH, metavar="B",
                   help=f"batch size of the contended table (default {TARGET_BATCH})")
    args = p.parse_args(argv)
    if args.quick:
        args.seconds = 0.5
    args.contended_warmup = CONTENDED_WARMUP if args.warmup is None else args.warmup
    if args.warmup is None:
        args.warmup = min(0.25, args.seconds / 10)
    args.contended = args.contended or args.contended_only
    if args.engine_only and args.contended:
        p.error("--engine-only does not go with --contended / --contended-only")
    if args.seconds <= 0 or args.repeats < 1 or args.players < 1 or args.warmup < 0:
        p.error("--seconds and --warmup must be positive, --repeats and --players >= 1")
    if any(b < 1 for b in args.batch_sizes) or args.contended_batch < 1 or args.chunksize < 0:
        p.error("--batch-sizes and --contended-batch must be positive, --chunksize >= 0")
    return args


def loop_clock(args: argparse.Namespace) -> Any:
    """The clock of the single-thread loops (``--cpu-time``: this thread's CPU time)."""
    return time.thread_time if args.cpu_time else perf_counter


def build_anchor(seed: int, clock: Any = perf_counter) -> tuple[Measurement | None, str | None]:
    try:
        from pettingzoo.classic import connect_four_v3
    except ImportError as e:  # pettingzoo[classic] extra not installed
        return None, f"{type(e).__name__}: {e}"
    env = connect_four_v3.env()
    run = aec_runner(env, seed, clock)
    run(0.05)  # first games: imports, lazy setup
    return Measurement(ANCHOR_GAME, V_ENV, None, run), None


def build_openspiel(seed: int,
                    clock: Any = perf_counter) -> tuple[Measurement | None, str | None]:
    """OpenSpiel's connect four in the single-state loop, or why it is unavailable."""
    try:
        import pyspiel
    except ImportError as e:  # the bench extra (open_spiel wheel) not installed
        return None, f"{type(e).__name__}: {e}"
    run = openspiel_runner(pyspiel.load_game(OPENSPIEL_ID), seed, clock)
    run(0.05)
    return Measurement(OPENSPIEL_GAME, V_PYSPIEL, None, run), None


def build_game(env_id: str, args: argparse.Namespace) -> list[Measurement]:
    """All measurements of one game, built and compiled (raises OptionError if the game does
    not support ``--players``)."""
    opts = {"num_players": args.players}
    ms = []
    for variant, factory in ((V_ENV, card_envs.make), (V_RAW, card_envs.make_raw)):
        if args.engine_only:
            break
        run = aec_runner(factory(env_id, **opts), args.seed, loop_clock(args))
        run(0.0)  # compile / first game
        ms.append(Measurement(env_id, variant, None, run))
    for variant, runner in ((V_ENGINE, engine_runner), (V_CALLS, engine_calls_runner)):
        run = runner(card_envs.Engine(env_id, **opts), args.seed, loop_clock(args))
        run(0.0)  # compiles the turn kernels on a first run
        ms.append(Measurement(env_id, variant, None, run))
    for B in [] if args.engine_only else args.batch_sizes:
        vec = card_envs.vector.make(env_id, num_envs=B, seed=args.seed, **opts)
        run = vector_runner(vec, args.chunksize)
        run(0.0)  # compiles _vec_step for this game on the first size
        ms.append(Measurement(env_id, V_VECTOR, B, run))
    return ms


def print_table(anchor: Measurement | None, games: dict[str, list[Measurement]],
                openspiel: Measurement | None = None) -> None:
    a = anchor.median if anchor and anchor.repeats else None
    head = (f"{'game':<26} {'variant':<12} {'B':>6} {'steps/s':>10} "
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
        print(f"{m.game:<26} {m.variant:<12} {b:>6} {fmt_rate(med):>10} {rng:>19} "
              f"{spread:>6.1f}% {fmt_cost(med):>10} {ratio:>10} {load_s:>5}")

    for m in (anchor, openspiel):
        if m and m.repeats:
            row(m)
    for ms in games.values():
        for m in ms:
            if m.repeats:
                row(m)


def find(ms: list[Measurement], variant: str) -> Measurement | None:
    return next((m for m in ms if m.variant == variant and m.repeats), None)


def paired_ratios(m: Measurement, anchor: Measurement) -> list[float]:
    """``m``'s rate in each repeat over the mean of the anchor's runs of that repeat (the
    anchor brackets the Python-level runs)."""
    return [r["steps_per_s"] / statistics.mean(
        x["steps_per_s"] for x in anchor.repeats if x["repeat"] == r["repeat"])
        for r in m.repeats]


def openspiel_ratios(openspiel: Measurement | None,
                     games: dict[str, list[Measurement]]) -> dict[str, dict[str, Any]]:
    """Per game: the Engine loops' rates and their ratios to OpenSpiel's connect four."""
    if not openspiel or not openspiel.repeats:
        return {}
    o = openspiel.median
    out = {}
    for env_id, ms in games.items():
        row: dict[str, Any] = {}
        for key, variant in (("engine", V_ENGINE), ("engine_calls", V_CALLS)):
            m = find(ms, variant)
            if m:
                row[f"{key}_steps_per_s"] = m.median
                row[f"{key}_ratio"] = m.median / o
                row[f"{key}_paired_ratios"] = paired_ratios(m, openspiel)
        out[env_id] = row
    return out


def print_openspiel(openspiel: Measurement, ratios: dict[str, dict[str, Any]]) -> None:
    print(f"Single-state loop vs OpenSpiel's connect four ({fmt_rate(openspiel.median)} "
          f"steps/s): step + legal mask + observation + terminal per step, random legal "
          f"action")
    head = (f"{'game':<16} {'Engine':>10} {'vs OpenSpiel':>13} {'Engine calls':>13} "
            f"{'vs OpenSpiel':>13}")
    print(head)
    print("-" * len(head))
    for env_id, r in ratios.items():
        cells = []
        for key in ("engine", "engine_calls"):
            rate = r.get(f"{key}_steps_per_s")
            cells.append("-" if rate is None else fmt_rate(rate))
            cells.append("-" if rate is None else f"{r[f'{key}_ratio']:.2f}x")
        print(f"{env_id:<16} {cells[0]:>10} {cells[1]:>13} {cells[2]:>13} {cells[3]:>13}")


def _target(game: str, target: str, unit: str, measured: float | None,
            required: float) -> dict[str, Any]:
    """One row of the targets table: PASS / FAIL, or SKIP when nothing was measured."""
    status = ("SKIP" if measured is None else "PASS" if measured >= required else "FAIL")
    return {"game": game, "target": target, "unit": unit, "measured": measured,
            "required": required, "status": status}


def check_targets(anchor: Measurement | None, games: dict[str, list[Measurement]],
                  openspiel: Measurement | None = None) -> list[dict[str, Any]]:
    a = anchor.median if anchor and anchor.repeats else None
    o = openspiel.median if openspiel and openspiel.repeats else None
    out = []
    for env_id, ms in games.items():
        env = find(ms, V_ENV)
        if env:
            ratio = env.median / a if a else None
            out.append(_target(env_id, f"AEC env() >= {TARGET_AEC_RATIO:g}x {ANCHOR_ID}",
                               "x anchor", ratio, TARGET_AEC_RATIO))
        vec = next((m for m in ms if m.variant == V_VECTOR and m.batch_size == TARGET_BATCH),
                   None)
        if vec or env:  # not with --engine-only
            ratio = vec.median / a if vec and a else None
            required = card_envs.manifest(env_id).bench.batch_ratio
            out.append(_target(env_id, f"batched B={TARGET_BATCH} >= {required:g}x {ANCHOR_ID}",
                               "x anchor", ratio, required))
        eng = find(ms, V_ENGINE)
        if eng:
            ratio = eng.median / o if o else None
            out.append(_target(env_id,
                               f"Engine >= {TARGET_OPENSPIEL_RATIO:g}x OpenSpiel {OPENSPIEL_ID}",
                               "x OpenSpiel", ratio, TARGET_OPENSPIEL_RATIO))
    return out


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

    skip_anchor = "--contended-only" if args.contended_only else \
        ("--engine-only" if args.engine_only else None)
    anchor, anchor_error = (None, skip_anchor) if skip_anchor else \
        build_anchor(args.seed, loop_clock(args))
    if anchor is None and not skip_anchor:
        log(f"\n*** anchor {ANCHOR_ID} unavailable ({anchor_error}).\n"
            f"*** Install PettingZoo's classic games to get the anchor and the ratios:\n"
            f'***     pip install -e ".[bench]"      (or: make bench)\n'
            f"*** Continuing without the anchor.\n")
    openspiel, openspiel_error = (None, "--contended-only") if args.contended_only else \
        build_openspiel(args.seed, loop_clock(args))
    if openspiel is None and not args.contended_only:
        log(f"\n*** OpenSpiel (pyspiel) unavailable ({openspiel_error}).\n"
            f"*** Install the open_spiel wheel to compare the Engine loop with OpenSpiel's "
            f"{OPENSPIEL_ID}:\n"
            f'***     pip install -e ".[bench]"      (or: make bench)\n'
            f"*** Continuing without the OpenSpiel row.\n")

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
    anchors = [m for m in (anchor, openspiel) if m]
    per_repeat = (len(python_level) + len(batched) + 2 * len(anchors)) * \
        (args.seconds + args.warmup)
    if contended:
        per_repeat += len(contended) * len(CONTENDED_STATES) * \
            (args.seconds + args.contended_warmup)
    log(f"measuring: about {per_repeat * args.repeats:.0f} s ({args.repeats} repeats of "
        f"{per_repeat:.0f} s; --quick for a 0.5 s smoke run of every measurement)")
    t_loop = perf_counter()
    for r in range(args.repeats):
        left = per_repeat * (args.repeats - r)
        log(f"repeat {r + 1}/{args.repeats} ({perf_counter() - t_loop:.0f} s done, about "
            f"{left:.0f} s left)")
        order = anchors + python_level + anchors[::-1]
        for m in order + batched:
            measure(m, args, r, t_start)
        if contended:
            measure_contended(contended, args, r, t_start, busy_log)

    a = anchor.median if anchor else None
    all_ms = anchors + [m for ms in games.values() for m in ms]
    if games:
        print()
        anchor_note = (f" (anchor: {2 * args.repeats} runs bracketing the Python-level runs)"
                       if anchor else " (no anchor)")
        clock_note = "; single-thread loops timed by CPU time" if args.cpu_time else ""
        print(f"card_envs throughput, {args.players} players, random masked play; median of "
              f"{args.repeats} x {args.seconds:g} s{anchor_note}{clock_note}; numba threads "
              f"{numba.get_num_threads()}, {os.cpu_count()} CPUs")
        print()
        print_table(anchor, games, openspiel)
        print("\nload = most CPU used by other processes during any repeat, in CPUs (from "
              "/proc/stat; 0 = quiet machine).")
        loaded = [m for m in all_ms if (m.max_other_load or 0.0) > LOAD_WARN]
        if loaded:
            print(f"WARNING: other processes used > {LOAD_WARN} CPU during {len(loaded)} "
                  f"measurement(s) of {len(all_ms)}; those rates (the batched engine most) "
                  f"are not representative. Re-run on a quiet machine.")
        if anchor is None and not args.engine_only:
            print(f"\n(no anchor: {ANCHOR_ID} not importable; "
                  f'pip install -e ".[bench]" or make bench)')
    os_ratios = openspiel_ratios(openspiel, games)
    if os_ratios:
        print()
        print_openspiel(openspiel, os_ratios)
    elif games:
        print(f"\n(no OpenSpiel row: pyspiel not importable ({openspiel_error}); "
              f'pip install -e ".[bench]" or make bench)')
    if contended:
        print()
        print_contended(contended, args)
    for env_id, why in skipped.items():
        print(f"\n(skipped {env_id}: {why})")

    targets = check_targets(anchor, games, openspiel) + check_contended(contended)
    print("\nTargets:")
    for t in targets:
        if t["measured"] is None:
            got = {"x anchor": "no anchor", "x OpenSpiel": "no OpenSpiel"}.get(
                t["unit"], "not measured")
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
        "openspiel": {"game": OPENSPIEL_ID, "available": openspiel is not None,
                      "error": openspiel_error,
                      "median_steps_per_s": openspiel.median if openspiel else None},
        "engine_vs_openspiel": os_ratios,
        "skipped_games": skipped,
        "measurements": [m.to_json(a) for m in all_ms],
        # env() rate / mean of the two anchor runs of the same repeat
        "paired_aec_ratios": {env_id: paired_ratios(find(ms, V_ENV), anchor)
                              for env_id, ms in games.items() if find(ms, V_ENV)}
        if anchor else {},
        "contended": contended_json(contended, args, busy_log) if contended else None,
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
