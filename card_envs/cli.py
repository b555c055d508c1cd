"""Command line: ``card-envs arena ...`` (also ``python examples/arena.py ...``).

    card-envs arena --game slide --agents random,heuristic --games 200
    card-envs arena --game slide_v0 --agents heuristic,random,random --players 3 \\
        --games 300 --seed 1 --json out.json
    card-envs arena --game isflak --agents random,heuristic,mcts:ms=50+c=0.7 --games 100 \\
        --workers 2 --plot plots/

``--agents`` is the pool, comma separated. Spec parameters are separated by ``+`` or ``;`` (or
by commas right after a spec that already has a ``:``): ``mcts:ms=50+c=0.7``,
``"mcts:ms=50;c=0.7"`` and ``mcts:ms=50,c=0.7`` are all the spec ``mcts:ms=50,c=0.7``.
With fewer agents than players the pool is repeated to fill the seats; with more, every
combination of ``--players`` agents (a lineup) plays ``--games`` games. Seats rotate every
game and each deal is replayed with every rotation (see ``card_envs.arena``, ``docs/arena.md``).
``--workers`` defaults to ``min(2, CPU cores)`` processes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import warnings
from pathlib import Path
from typing import Any

from card_envs.arena import plot_ratings, plot_winrate_matrix, run_arena
from card_envs.core.registry import env_ids, resolve_env_id

ARENA_HELP = ("Play agents against each other over duplicate deals; print win rates and mean "
              "points with 95% confidence intervals, ratings and a head-to-head matrix.")

_PARAM = re.compile(r"\s*[A-Za-z_]\w*\s*=")
_PARAM_SEP = re.compile(r"\s*[;+]\s*(?=[A-Za-z_]\w*\s*=)")


def default_workers() -> int:
    """The CLI's default ``--workers``: ``min(2, os.cpu_count())``."""
    return max(1, min(2, os.cpu_count() or 1))


def split_agents(text: str) -> list[str]:
    """``"random,heuristic,mcts:ms=50+c=0.7"`` -> ``["random", "heuristic",
    "mcts:ms=50,c=0.7"]``: commas separate agents; ``+`` or ``;`` before ``key=`` separate a
    spec's parameters, and so does a comma when the previous spec already has parameters."""
    specs: list[str] = []
    for item in (p.strip() for p in text.split(",")):
        if not item:
            continue
        if specs and ":" in specs[-1] and _PARAM.match(item) and \
                ":" not in item.partition("=")[0]:
            specs[-1] += f",{item}"
        else:
            specs.append(item)
    out = []
    for s in specs:
        name, colon, rest = s.partition(":")
        out.append(name + colon + _PARAM_SEP.sub(",", rest))
    return out


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


def add_arena_arguments(ap: argparse.ArgumentParser) -> None:
    """The options of ``card-envs arena``."""
    ap.add_argument("--game", default="slide",
                    help="game name or env id (slide, slide_v0), or 'all' registered games")
    ap.add_argument("--agents", default="random,heuristic",
                    help="comma-separated agent pool (random, heuristic, mcts:ms=50+c=0.7); "
                         "spec parameters joined by + or ;")
    ap.add_argument("--games", type=int, default=200,
                    help="games per lineup (default 200); a pool larger than the table plays "
                         "every lineup of --players agents")
    ap.add_argument("--players", type=int, default=2, help="number of seats (default 2)")
    ap.add_argument("--seed", type=int, default=0, help="run seed (default 0)")
    ap.add_argument("--workers", type=int, default=default_workers(),
                    help="worker processes (default min(2, CPU cores) = %(default)s; "
                         "0 = every core); results do not depend on it")
    ap.add_argument("--option", "-o", type=_option, action="append", default=[],
                    metavar="KEY=VALUE", help="extra game option, e.g. -o start_player=random")
    ap.add_argument("--json", metavar="PATH", help="also write the full results as JSON")
    ap.add_argument("--plot", metavar="DIR",
                    help="write <env_id>_winrate.png and <env_id>_ratings.png to DIR")
    ap.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def arena_main(argv: list[str] | None = None, prog: str | None = None) -> int:
    """``card-envs arena``: play agents against each other and print a results table."""
    ap = argparse.ArgumentParser(prog=prog, description=ARENA_HELP)
    add_arena_arguments(ap)
    return run_arena_command(ap.parse_args(argv))


def run_arena_command(args: argparse.Namespace) -> int:
    """Run ``card-envs arena`` with parsed arguments (exit code 2 and one ``error:`` line for
    any mistake in names, options, agent specs or model files)."""
    names = split_agents(args.agents)
    options = dict(args.option)
    results = []
    try:
        if "num_players" in options:
            raise ValueError("set the number of seats with --players, not -o num_players=...")
        if not names:
            raise ValueError("--agents is empty")
        games = list(env_ids()) if args.game == "all" else [resolve_env_id(args.game)]
        for env_id in games:
            print(f"arena: {env_id}, {args.players} players, {args.games} games per lineup, "
                  f"seed {args.seed}, agents {' | '.join(names)}"
                  + (f", options {options}" if options else ""), flush=True)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", UserWarning)
                res = run_arena(env_id, names, args.games, num_players=args.players,
                                seed=args.seed, progress=not args.no_progress,
                                workers=args.workers, **options)
            for w in caught:
                print(f"warning: {w.message}", file=sys.stderr, flush=True)
            print(res.table(), flush=True)
            results.append(res)
            if args.plot:
                out = Path(args.plot)
                paths = [plot_winrate_matrix(res, out / f"{env_id}_winrate.png"),
                         plot_ratings(res, out / f"{env_id}_ratings.png")]
                print("wrote " + ", ".join(map(str, paths)), flush=True)
    except (ValueError, TypeError, ImportError, OSError) as e:  # names, options, model files
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.json:
        data = results[0].to_json() if len(results) == 1 else [r.to_json() for r in results]
        with open(args.json, "w") as f:
            json.dump(data, f, indent=1)
        print(f"wrote {args.json}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """``card-envs`` with one subcommand per tool."""
    ap = argparse.ArgumentParser(prog="card-envs", description="card-envs command line tools.")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND", required=True)
    arena = sub.add_parser("arena", help=ARENA_HELP.replace("%", "%%"), description=ARENA_HELP)
    add_arena_arguments(arena)
    arena.set_defaults(run=run_arena_command)
    return ap


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``card-envs`` command."""
    ap = build_parser()
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:  # --help (0) or a usage error (2)
        return int(e.code or 0)
    return args.run(args)


if __name__ == "__main__":  # python -m card_envs.cli arena ...
    sys.exit(main())
