"""``card-envs benchmark``: the protocol for one candidate from the command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

HELP = ("Benchmark one agent over every game and seat count (2-4) against a fixed ladder "
        "(random, heuristic, mcts:iterations=200, ppo): win shares with 95%% intervals, a "
        "normalised score per game, one rating, a JSON report that --check replays.")


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--agent", default=None,
                    help="the candidate: a built-in spec (heuristic, mcts:iterations=800, "
                         "ppo:path=run/final.safetensors), module:Name or file.py:Name")
    ap.add_argument("--quick", action="store_true",
                    help="a few deals per table (a few minutes on 2 cores)")
    ap.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    ap.add_argument("--json", default=None, metavar="PATH", help="write the report here")
    ap.add_argument("--check", default=None, metavar="REPORT",
                    help="replay REPORT and say which rows differ (exit 1 if any)")
    ap.add_argument("--games", default=None,
                    help="only these games, comma separated (a partial report)")
    ap.add_argument("--players", default=None,
                    help="only these seat counts, comma separated (a partial report)")
    ap.add_argument("--move-limit", type=float, default=None, metavar="S",
                    help="seconds a move may take before the candidate forfeits (default 10)")
    ap.add_argument("--no-resume", action="store_true",
                    help="play every table again instead of reusing the ones saved")
    ap.add_argument("--no-progress", action="store_true")


def _ints(text: str | None, what: str) -> list[int] | None:
    if text is None:
        return None
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"--{what} is a comma-separated list of integers, got {text!r}") \
            from None


def run_command(args: argparse.Namespace, fail: Callable[..., int], prog: str) -> int:
    """Run ``card-envs benchmark``: mistakes are one line (``fail(prog, message)``, the
    command line's reporter) and exit 2."""
    from card_envs.benchmark import check, run
    from card_envs.benchmark.protocol import MOVE_LIMIT_S

    if (args.agent is None) == (args.check is None):
        return fail(prog, "give --agent SPEC (run the protocol) or --check REPORT (replay one)",
                    hint=f"{prog} benchmark --help")
    try:
        if args.check is not None:
            if not Path(args.check).is_file():
                raise ValueError(f"--check: no file {args.check!r}")
            diffs = check(args.check, workers=args.workers, progress=not args.no_progress)
            if diffs:
                print(f"{args.check}: {len(diffs)} row(s) differ from the replay:")
                print("\n".join(f"  {d}" for d in diffs))
                return 1
            print(f"{args.check}: every row reproduces")
            return 0
        games = None if args.games is None else [g for g in args.games.split(",") if g.strip()]
        res = run(args.agent, "quick" if args.quick else "full", games=games,
                  seats=_ints(args.players, "players"), workers=args.workers,
                  json_path=args.json, progress=not args.no_progress,
                  resume=not args.no_resume,
                  move_limit=MOVE_LIMIT_S if args.move_limit is None else args.move_limit)
    except (ValueError, TypeError, OSError) as e:
        return fail(prog, e)
    print(res.table())
    resumed = sum(r["games"] for r in res.rows) - res.played
    print(f"\n{res.played} games played in {res.elapsed:.0f} s with {args.workers} worker(s)"
          + (f", {resumed} resumed from saved tables" if resumed else ""))
    if args.json:
        print(f"\nreport: {args.json}   replay it: card-envs benchmark --check {args.json}",
              file=sys.stdout)
    return 0
