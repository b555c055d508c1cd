"""Gumbel AlphaZero self-play: the az search teaches the network it searches with, for any seat
count.

    python examples/train_az.py --game isflak --minutes 60
    python examples/train_az.py --game slide --players 3 --init scratch --minutes 60
    python examples/train_az.py --game isflak --minutes 90 --resume   # continue the same run

Each round plays `games` self-play games in lockstep (`steps` moves each, every move searched
with `sims` simulations by the batched Gumbel search, over `workers` processes), trains the
network on the search's improved policies and the games' results (a replay window of
`window` rounds), then measures the search with the new network against the search with the
starting one, the network alone against the heuristic and the value head's correlation with
the results (card_envs.rl.az). The run folder (--out, default runs/az_<game>[_<n>p]) gets
checkpoints/, history.json, learning_curve.png, final.safetensors and what --resume needs.
The network starts from scratch (--init ppo: the game's PPO baseline, 2 seats; or a policy
.safetensors). Settings (-s sims=64 ...) are card_envs.rl.az.AZ_DEFAULTS. Guide:
docs/search.md.

Ctrl-C or SIGTERM stops the run at its next safe point (a round in its self-play is dropped,
one past it is saved) with one line saying what was saved and the command that continues it;
the exit code is then 130 (SIGINT) or 143 (SIGTERM). A second Ctrl-C stops at once (the last
saved round stands). Mistakes (a bad setting, a run that --resume refuses) exit with 2 and
one line.
"""

from __future__ import annotations

import argparse
import shlex
import signal
import sys
from pathlib import Path
from typing import Any

try:
    import card_envs  # noqa: F401
except ImportError:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from card_envs.cli import OneLineParser, _option
from card_envs.core.registry import resolve_env_id


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(description=__doc__.split("\n\n")[0],
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--game", required=True, help="env id or short name (slide, isflak...)")
    ap.add_argument("--players", type=int, default=2, help="seats (default 2)")
    ap.add_argument("--minutes", type=float, default=None,
                    help="stop after this much self-play and training (evaluations excluded)")
    ap.add_argument("--rounds", type=int, default=None, help="stop after this many rounds")
    ap.add_argument("--init", default="scratch", help="'scratch' (a fresh network, the "
                    "default), 'ppo' (the PPO baseline, 2 seats) or a policy .safetensors")
    ap.add_argument("--out", default=None, help="run folder (default runs/az_<game>)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--setting", "-s", type=_option, action="append", default=[],
                    metavar="KEY=VALUE", help="a setting of card_envs.rl.az.AZ_DEFAULTS, "
                    "e.g. -s sims=64 -s games=256")
    ap.add_argument("--option", "-o", type=_option, action="append", default=[],
                    metavar="KEY=VALUE", help="game option")
    ap.add_argument("--resume", action="store_true", help="continue the run in --out")
    ap.add_argument("--overwrite", action="store_true", help="replace the run in --out")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    try:
        env_id = resolve_env_id(args.game)
    except ValueError as e:
        ap.error(str(e))
    if args.minutes is None and args.rounds is None:
        ap.error("give --minutes or --rounds (or both)")
    if args.init not in ("ppo", "scratch") and not Path(args.init).is_file():
        ap.error(f"--init: no policy file {args.init!r} (or 'ppo', 'scratch')")
    name = env_id.removesuffix("_v0") + ("" if args.players == 2 else f"_{args.players}p")
    out = Path(args.out or f"runs/az_{name}")
    settings: dict[str, Any] = dict(args.setting)

    from card_envs.agents.weights import WeightsError
    from card_envs.core.errors import OptionError
    from card_envs.rl.az import train_az
    from card_envs.rl.az.run_folder import saved_round
    from card_envs.rl.runs import resume_command

    command = "python examples/train_az.py " + shlex.join(sys.argv[1:] if argv is None
                                                          else argv)
    try:
        res = train_az(env_id, minutes=args.minutes, rounds=args.rounds, out_dir=out,
                       init=args.init, settings=settings, seed=args.seed,
                       num_players=args.players, resume=args.resume,
                       overwrite=args.overwrite, progress=not args.no_progress,
                       command=command, **dict(args.option))
    except (FileExistsError, FileNotFoundError, OptionError, ValueError, WeightsError,
            TypeError) as e:
        ap.error(str(e))
    except KeyboardInterrupt:  # a second Ctrl-C: stopped at once
        r = saved_round(out)
        held = f"{out} holds round {r}; continue with" if r else \
            f"nothing saved in {out}; start again with"
        print(f"interrupted: stopped at once; {held}: "
              f"{resume_command(command, resumable=bool(r))}", file=sys.stderr)
        return 128 + signal.SIGINT
    if res.stopped is not None:
        print(res.stop_line(), file=sys.stderr)
        return 128 + signal.Signals[res.stopped]
    print(res.table())
    print(f"\nnetwork: {res.final_path}   history: {out / 'history.json'}   curve: "
          f"{out / 'learning_curve.png'}")
    game = env_id.removesuffix("_v0")
    print("play it in the arena:\n  card-envs arena --game "
          f"{game} --players {args.players} --agents az:ms=200+path={res.final_path},"
          "mcts:ms=200 --games 200 --seed 11")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # before the run started (imports, checks): nothing was written
        print("interrupted before the run started", file=sys.stderr)
        sys.exit(128 + signal.SIGINT)
