"""Expert iteration: improve the network of the ``az`` search agent with the search's own games.

    python examples/train_az.py --game isflak --rounds 6
    python examples/train_az.py --game slide --minutes 20 --out runs/az_slide -s sims=400
    python examples/train_az.py --game slide --rounds 10 --out runs/az_slide --resume

Each round plays ``games`` self-play games of ``az`` (``sims`` simulations a move), trains the
network on the root visit distributions (policy target) and the results mixed with the root
values (value target), then measures ``az`` with the new network against ``az`` with the
starting one and the network alone against the heuristic (:mod:`card_envs.rl.expert`). The run
folder (``--out``, default ``runs/az_<game>``) gets ``checkpoints/``, ``history.json``,
``learning_curve.png``, ``buffer.npz`` and ``final.safetensors``; ``--resume`` continues a run
from its last round. The network starts from the game's PPO baseline unless ``--init`` names
a policy ``.safetensors``. Guide: ``docs/search.md``.
"""

from __future__ import annotations

import argparse
import shlex
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
    ap.add_argument("--rounds", type=int, default=5, help="rounds (default 5)")
    ap.add_argument("--minutes", type=float, default=None,
                    help="stop starting rounds after this wall time")
    ap.add_argument("--init", default=None, help="starting policy .safetensors (default: "
                    "the PPO baseline)")
    ap.add_argument("--out", default=None, help="run folder (default runs/az_<game>)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2, help="self-play processes")
    ap.add_argument("--setting", "-s", type=_option, action="append", default=[],
                    metavar="KEY=VALUE", help="a setting of card_envs.rl.expert."
                    "EXPERT_DEFAULTS, e.g. -s sims=400 -s games=300")
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
    if args.init is not None and not Path(args.init).is_file():
        ap.error(f"--init: no policy file {args.init!r}")
    out = Path(args.out or f"runs/az_{env_id.removesuffix('_v0')}")
    settings: dict[str, Any] = dict(args.setting)

    from card_envs.agents.weights import WeightsError
    from card_envs.core.errors import OptionError
    from card_envs.rl.expert import expert_iteration

    command = "python examples/train_az.py " + shlex.join(sys.argv[1:] if argv is None
                                                          else argv)
    try:
        res = expert_iteration(env_id, rounds=args.rounds, minutes=args.minutes, out_dir=out,
                               init=args.init, settings=settings, seed=args.seed,
                               workers=args.workers, resume=args.resume,
                               overwrite=args.overwrite, progress=not args.no_progress,
                               command=command, **dict(args.option))
    except (FileExistsError, FileNotFoundError, OptionError, ValueError, WeightsError,
            TypeError) as e:
        ap.error(str(e))
    print(res.table())
    print(f"\nnetwork: {res.final_path}   history: {out / 'history.json'}   curve: "
          f"{out / 'learning_curve.png'}")
    print("play it in the arena:\n  card-envs arena --game "
          f"{env_id.removesuffix('_v0')} --agents az:ms=200+path={res.final_path},"
          "mcts:ms=200 --games 400 --seed 11")
    return 0


if __name__ == "__main__":
    sys.exit(main())
