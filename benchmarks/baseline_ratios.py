#!/usr/bin/env python
"""Did the batched engine get slower? Each game's batched rate as a ratio to the anchor,
against a recorded baseline.

``throughput.py`` measures PettingZoo's ``connect_four_v3`` loop (the anchor) in the same run
as the games. Absolute rates move by +-40% between runs on a shared machine; the ratio of a
game's batched rate to the anchor moves much less, so it can be compared with a ratio recorded
earlier. The baseline is ``benchmarks/results/baseline_ratios.json``: for every game and batch
size, the ratio of its batched rate to the anchor, with the machine, the numba threads and the
date it was recorded on.

Usage::

    python benchmarks/throughput.py --json /tmp/t.json
    python benchmarks/baseline_ratios.py check /tmp/t.json     # now vs recorded, SLOWER flags
    python benchmarks/baseline_ratios.py record /tmp/t.json    # make these the baseline

``check`` prints one line per game and batch size: the recorded ratio, the current one and
current / recorded, flagged ``SLOWER`` when that falls below ``1 - tolerance`` (``--tolerance``,
default 0.20) and ``faster`` above ``1 + tolerance``. It exits with status 0 unless ``--strict``
is given and something is SLOWER. ``record`` takes one or more throughput JSON files (several
runs: the median ratio of each row) and refuses runs without the anchor or measured on a busy
machine (``--max-load``). ``make bench`` runs the benchmark and then ``check``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / "benchmarks" / "results" / "baseline_ratios.json"
TOLERANCE = 0.20
MAX_LOAD = 0.3  # CPUs used by other processes during a measurement we still record
VARIANT = "vector"  # throughput.py's name for the batched engine rows

Key = tuple[str, int]  # (env_id, batch size)


def batched_ratios(result: dict[str, Any]) -> dict[Key, dict[str, Any]]:
    """The batched rows of one ``throughput.py`` JSON result: ``(game, B) -> {"ratio",
    "steps_per_s", "load"}`` (rows without an anchor ratio are left out)."""
    out: dict[Key, dict[str, Any]] = {}
    for m in result.get("measurements", []):
        if m.get("variant") != VARIANT or m.get("batch_size") is None:
            continue
        ratio = m.get("ratio_to_anchor")
        if not isinstance(ratio, (int, float)) or ratio <= 0:
            continue
        out[(str(m["game"]), int(m["batch_size"]))] = {
            "ratio": float(ratio), "steps_per_s": m.get("median_steps_per_s"),
            "load": m.get("max_other_cpu_load")}
    return out


def _threads(result: dict[str, Any]) -> int | None:
    return (result.get("numba") or {}).get("num_threads")


def make_baseline(results: list[dict[str, Any]], max_load: float = MAX_LOAD,
                  today: str | None = None) -> dict[str, Any]:
    """The baseline record from one or more throughput results: per game and batch size, the
    median ratio over the results. Raises ``ValueError`` if a result has no anchor, no batched
    rows or a row measured while other processes used more than ``max_load`` CPUs."""
    if not results:
        raise ValueError("no throughput results given")
    per: dict[Key, list[dict[str, Any]]] = {}
    for i, res in enumerate(results):
        if not (res.get("anchor") or {}).get("median_steps_per_s"):
            raise ValueError(f"result {i + 1}: no anchor measurement (install the bench extra: "
                             f'pip install -e ".[bench]")')
        rows = batched_ratios(res)
        if not rows:
            raise ValueError(f"result {i + 1}: no batched ({VARIANT}) measurements")
        for key, row in rows.items():
            if row["load"] is not None and row["load"] > max_load:
                raise ValueError(f"result {i + 1}: {key[0]} B={key[1]} measured with other "
                                 f"processes using {row['load']:.2f} CPUs (more than "
                                 f"{max_load}); record on a quiet machine")
            per.setdefault(key, []).append(row)
    first = results[0]
    return {
        "schema": 1,
        "what": f"batched rate ({VARIANT}) / anchor rate, median over the runs",
        "anchor": (first.get("anchor") or {}).get("env_id"),
        "recorded": today or _dt.date.today().isoformat(),
        "runs": len(results),
        "machine": first.get("machine"),
        "versions": first.get("versions"),
        "numba_threads": _threads(first),
        "threading_layer": (first.get("numba") or {}).get("threading_layer"),
        "players": (first.get("options") or {}).get("players"),
        "ratios": [
            {"game": g, "batch_size": b,
             "ratio": round(statistics.median(r["ratio"] for r in rows), 4),
             "steps_per_s": round(statistics.median(r["steps_per_s"] for r in rows))
             if all(r["steps_per_s"] for r in rows) else None}
            for (g, b), rows in sorted(per.items())],
    }


def compare(baseline: dict[str, Any], result: dict[str, Any], tolerance: float = TOLERANCE
            ) -> list[dict[str, Any]]:
    """One row per game and batch size in both: recorded and current ratio, current /
    recorded, and a status: ``ok``, ``SLOWER`` (below ``1 - tolerance``) or ``faster`` (above
    ``1 + tolerance``). Rows only in one of them get status ``new`` / ``missing``."""
    if not 0 < tolerance < 1:
        raise ValueError(f"tolerance must be between 0 and 1, got {tolerance}")
    rec = {(r["game"], int(r["batch_size"])): float(r["ratio"]) for r in baseline["ratios"]}
    now = batched_ratios(result)
    rows = []
    for key in sorted(set(rec) | set(now)):
        r, n = rec.get(key), now.get(key)
        row: dict[str, Any] = {"game": key[0], "batch_size": key[1], "recorded": r,
                               "current": n["ratio"] if n else None,
                               "load": n["load"] if n else None, "change": None}
        if r is None:
            row["status"] = "new"
        elif n is None:
            row["status"] = "missing"
        else:
            row["change"] = n["ratio"] / r
            row["status"] = ("SLOWER" if row["change"] < 1 - tolerance else
                             "faster" if row["change"] > 1 + tolerance else "ok")
        rows.append(row)
    return rows


def _notes(baseline: dict[str, Any], result: dict[str, Any]) -> list[str]:
    """Why the comparison may be off: another machine, thread count or player count."""
    notes = []
    bm, rm = baseline.get("machine") or {}, result.get("machine") or {}
    for field in ("processor", "cpu_count"):
        if bm.get(field) != rm.get(field):
            notes.append(f"{field} differs: recorded {bm.get(field)!r}, now {rm.get(field)!r}")
    if baseline.get("numba_threads") != _threads(result):
        notes.append(f"numba threads differ: recorded {baseline.get('numba_threads')}, now "
                     f"{_threads(result)}")
    players = (result.get("options") or {}).get("players")
    if baseline.get("players") is not None and players != baseline.get("players"):
        notes.append(f"players differ: recorded {baseline.get('players')}, now {players}")
    return notes


def print_check(baseline: dict[str, Any], result: dict[str, Any], rows: list[dict[str, Any]],
                tolerance: float, path: Path, max_load: float = MAX_LOAD) -> None:
    m = baseline.get("machine") or {}
    print(f"\nBatched rate / anchor against the baseline ({path.name}: recorded "
          f"{baseline.get('recorded')} on {m.get('processor', '?')}, {m.get('cpu_count', '?')} "
          f"CPUs, {baseline.get('numba_threads')} numba threads); SLOWER below "
          f"{1 - tolerance:.2f}x the recorded ratio")
    print(f"  {'game':<16} {'B':>6} {'recorded':>10} {'now':>10} {'now/rec':>8}  status")
    for r in rows:
        rec = f"{r['recorded']:.1f}x" if r["recorded"] is not None else "-"
        cur = f"{r['current']:.1f}x" if r["current"] is not None else "-"
        chg = f"{r['change']:.2f}" if r["change"] is not None else "-"
        busy = (f" (busy machine: load {r['load']:.2f})"
                if r["load"] is not None and r["load"] > max_load else "")
        print(f"  {r['game']:<16} {r['batch_size']:>6} {rec:>10} {cur:>10} {chg:>8}  "
              f"{r['status']}{busy}")
    for note in _notes(baseline, result):
        print(f"  note: {note}")
    slower = [r for r in rows if r["status"] == "SLOWER"]
    if slower:
        print(f"  {len(slower)} SLOWER: " + ", ".join(f"{r['game']} B={r['batch_size']}"
                                                      for r in slower)
              + " (re-run on a quiet machine before believing it; then "
                "benchmarks/compare_commits.py finds the change)")
    elif any(r["status"] == "ok" for r in rows):
        print(f"  all within {tolerance:.0%} of the baseline")


def _load(path: str) -> dict[str, Any]:
    try:
        return json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise SystemExit(f"{path}: {e}") from None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check", help="compare a throughput.py JSON with the baseline")
    c.add_argument("result", help="JSON written by throughput.py --json")
    c.add_argument("--tolerance", type=float, default=TOLERANCE,
                   help=f"flag SLOWER below (1 - tolerance) x the recorded ratio "
                        f"(default {TOLERANCE})")
    c.add_argument("--strict", action="store_true", help="exit with status 1 if SLOWER")
    r = sub.add_parser("record", help="make one or more throughput.py JSONs the baseline")
    r.add_argument("results", nargs="+", help="JSON files written by throughput.py --json")
    r.add_argument("--max-load", type=float, default=MAX_LOAD,
                   help=f"refuse rows measured with more other CPU load (default {MAX_LOAD})")
    for p in (c, r):
        p.add_argument("--baseline", default=str(BASELINE),
                       help="the baseline file (default benchmarks/results/baseline_ratios.json)")
    args = ap.parse_args(argv)
    path = Path(args.baseline)
    if args.cmd == "record":
        try:
            base = make_baseline([_load(p) for p in args.results], args.max_load)
        except ValueError as e:
            raise SystemExit(f"not recorded: {e}") from None
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(base, indent=1) + "\n")
        print(f"recorded {len(base['ratios'])} ratios from {base['runs']} run(s) in {path}")
        return 0
    if not path.is_file():
        print(f"\n(no baseline at {path}: `python benchmarks/baseline_ratios.py record "
              f"{args.result}` makes this run the baseline)")
        return 0
    baseline, result = _load(str(path)), _load(args.result)
    if not (result.get("anchor") or {}).get("median_steps_per_s"):
        print("\n(no anchor in this run: no ratios to compare with the baseline)")
        return 0
    try:
        rows = compare(baseline, result, args.tolerance)
    except (KeyError, TypeError, ValueError) as e:
        raise SystemExit(f"cannot compare with {path}: {e}") from None
    print_check(baseline, result, rows, args.tolerance, path)
    return 1 if args.strict and any(r["status"] == "SLOWER" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
