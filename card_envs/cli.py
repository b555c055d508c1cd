"""Command line: ``card-envs arena ...`` (also ``python examples/arena.py ...``).

    card-envs arena --game slide --agents random,heuristic --games 200
    card-envs arena --game slide_v0 --agents heuristic,random,random --players 3 \\
        --games 300 --seed 1 --json out.json

With fewer agents than players the list is repeated to fill the seats; seats rotate every
game and each deal is replayed with every rotation (see ``card_envs.arena``).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from card_envs.arena import resolve_env_id, run_arena
from card_envs.registry import ENV_IDS

ARENA_HELP = "Play agents against each other; print win rates with 95% confidence intervals."


def _option(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"options are key=value, got {text!r}")
    python_words = {"True": True, "False": False, "None": None}
    if value in python_words:
        return key, python_words[value]
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def arena_main(argv: list[str] | None = None, prog: str | None = None) -> int:
    """``card-envs arena``: play agents against each other and print a results table."""
    ap = argparse.ArgumentParser(prog=prog, description=ARENA_HELP)
    ap.add_argument("--game", default="slide",
                    help="game name or env id (slide, slide_v0), or 'all' registered games")
    ap.add_argument("--agents", default="random,heuristic",
                    help="comma-separated agent names (random, heuristic)")
    ap.add_argument("--games", type=int, default=200, help="number of games (default 200)")
    ap.add_argument("--players", type=int, default=2, help="number of seats (default 2)")
    ap.add_argument("--seed", type=int, default=0, help="run seed (default 0)")
    ap.add_argument("--option", "-o", type=_option, action="append", default=[],
                    metavar="KEY=VALUE", help="extra game option, e.g. -o start_player=random")
    ap.add_argument("--json", metavar="PATH", help="also write the full results as JSON")
    ap.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    args = ap.parse_args(argv)

    names = [a.strip() for a in args.agents.split(",") if a.strip()]
    options = dict(args.option)
    results = []
    try:
        if "num_players" in options:
            raise ValueError("set the number of seats with --players, not -o num_players=...")
        env_ids = list(ENV_IDS) if args.game == "all" else [resolve_env_id(args.game)]
        for env_id in env_ids:
            print(f"arena: {env_id}, {args.players} players, {args.games} games, seed "
                  f"{args.seed}, agents {', '.join(names)}"
                  + (f", options {options}" if options else ""), flush=True)
            res = run_arena(env_id, names, args.games, num_players=args.players,
                            seed=args.seed, progress=not args.no_progress, **options)
            print(res.table(), flush=True)
            results.append(res)
    except (ValueError, TypeError) as e:  # bad game / agent / option names (OptionError too)
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.json:
        data = results[0].to_json() if len(results) == 1 else [r.to_json() for r in results]
        with open(args.json, "w") as f:
            json.dump(data, f, indent=1)
        print(f"wrote {args.json}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``card-envs`` command."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help") or argv[0] != "arena":
        print("usage: card-envs arena [--game G] [--agents A,B] [--games N] [--players N] "
              "[--seed S] [--json PATH]\n\ncommands:\n  arena  " + ARENA_HELP)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    return arena_main(argv[1:], prog="card-envs arena")
