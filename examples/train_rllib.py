"""Train a masked PPO policy by self-play with Ray RLlib, evaluate it, save checkpoints.

    python examples/train_rllib.py --game slide --minutes 5 --num-env-runners 2
    ray start --head && python examples/train_rllib.py --game slide --minutes 30 \\
        --num-env-runners 16 --address auto
    card-envs arena --game slide --agents rllib:runs/slide_rllib/final,random --games 400

Local by default (starts Ray itself, no dashboard, and stops it); ``--address auto`` joins the
cluster of ``ray start --head`` (``docs/distributed.md``). Writes under ``--out`` (default
``runs/<game>_rllib``): ``final/`` and ``checkpoints/iter_<n>/`` (RLlib Algorithm
checkpoints; ``rllib:<folder>`` is the arena agent), ``history.csv``/``.json`` (evaluations
against random and the heuristic), ``learning_curve.png``, ``iterations.json`` (per training
iteration: env steps, wall time, learner-update time) and ``config.json``. The
implementation is :func:`card_envs.rl.rllib.train.train_rllib`; the env and the masking
module are in :mod:`card_envs.rl.rllib.env` and :mod:`card_envs.rl.rllib.module`.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

try:
    import card_envs  # noqa: F401
except ImportError:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from card_envs.cli import OneLineParser
from card_envs.core.registry import resolve_env_id


def _setting(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"settings are key=value, got {text!r}")
    words = {"True": True, "False": False, "None": None}
    if value in words:
        return key, words[value]
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def main(argv: list[str] | None = None) -> int:
    ap = OneLineParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--game", required=True, help="env id or short name (slide, isflak...)")
    ap.add_argument("--minutes", type=float, default=5.0, help="wall-time budget")
    ap.add_argument("--num-env-runners", type=int, default=2,
                    help="RLlib env runners (Ray actors, one CPU each; 0: sample in this "
                         "process)")
    ap.add_argument("--runner", choices=("batched", "multi_agent"), default="batched",
                    help="batched: each env runner steps its games as one batch (default); "
                         "multi_agent: RLlib's runner over one MultiAgentEnv game at a time")
    ap.add_argument("--envs-per-runner", type=int, default=None,
                    help="games per env runner, one forward pass for all of them (default: "
                         "256 batched, 32 multi_agent)")
    ap.add_argument("--address", default=None,
                    help="Ray cluster to join ('auto': `ray start --head` on this machine); "
                         "default: start a local Ray")
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--selfplay", choices=("shared", "league"), default="shared",
                    help="shared: one module plays every seat; league: 'main' against "
                         "'random' and frozen snapshots of itself")
    ap.add_argument("--evals", type=int, default=4, help="evaluations over the budget")
    ap.add_argument("--eval-games", type=int, default=200, help="games per opponent")
    ap.add_argument("--final-games", type=int, default=400,
                    help="games per opponent of the final evaluation")
    ap.add_argument("--out", default=None, help="output dir (default runs/<game>_rllib)")
    ap.add_argument("--option", "-o", type=_setting, action="append", default=[],
                    metavar="KEY=VALUE", help="game option, e.g. -o reward_mode=points")
    ap.add_argument("--ppo", "-p", type=_setting, action="append", default=[],
                    metavar="KEY=VALUE", help="RLlib PPO setting, e.g. -p lr=1e-4 "
                    "(card_envs.rl.rllib.PPO_DEFAULTS)")
    ap.add_argument("--model", "-m", type=_setting, action="append", default=[],
                    metavar="KEY=VALUE", help="module setting, e.g. -m hiddens=[256,256]")
    ap.add_argument("--threads", type=int, default=1, help="torch threads of the learner")
    ap.add_argument("--overwrite", action="store_true",
                    help="replace the run already in --out (refused otherwise)")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)

    try:
        env_id = resolve_env_id(args.game)
    except ValueError as e:  # an unknown game: one error line, as for the other mistakes
        ap.error(str(e))
    options = dict(args.option)
    if "num_players" in options:
        ap.error("set the number of seats with --players, not -o num_players=...")
    out = Path(args.out or f"runs/{env_id.removesuffix('_v0')}_rllib")

    from card_envs.rl.rllib.train import train_rllib

    try:
        res = train_rllib(env_id, minutes=args.minutes, num_env_runners=args.num_env_runners,
                          address=args.address, out_dir=out, seed=args.seed,
                          players=args.players, evals=args.evals, eval_games=args.eval_games,
                          final_games=args.final_games, selfplay=args.selfplay,
                          envs_per_runner=args.envs_per_runner, runner=args.runner,
                          torch_threads=args.threads,
                          overwrite=args.overwrite, progress=not args.no_progress,
                          ppo=dict(args.ppo), model=dict(args.model), **options)
    except (FileExistsError, ValueError, ImportError) as e:
        ap.error(str(e))
    print(res.table())
    print(f"\ncheckpoint: {res.final_path}   history: {out / 'history.csv'}   curve: "
          f"{out / 'learning_curve.png'}")
    opts = "".join(f" -o {shlex.quote(f'{k}={v}')}" for k, v in options.items())
    agents = f"rllib:{res.final_path}" + ",random" * (args.players - 1)
    print("evaluate in the arena:\n  card-envs arena --game "
          f"{env_id.removesuffix('_v0')} --agents {agents} --players {args.players}{opts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
