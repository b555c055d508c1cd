"""Train a MaskablePPO agent by self-play on the batched engine and evaluate it in the arena.

    python examples/train_ppo.py --game slide --minutes 10
    python examples/train_ppo.py --game isflak --minutes 15 --players 3 --envs 64 --seed 1 \\
        --out runs/isflak3 -o reward_mode=points
    tensorboard --logdir runs/slide/tb

Writes ``final.zip``, ``checkpoints/``, ``history.csv``/``.json``, ``learning_curve.png``,
``config.json`` and TensorBoard logs (``tb/``) under ``--out``; prints the final evaluation,
the rollout throughput and the arena command for the trained model. The implementation is
:func:`card_envs.rl.train`; guide: ``docs/training.md``.
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

from card_envs.cli import _option
from card_envs.core.registry import resolve_env_id


def _ppo_setting(text: str) -> tuple[str, Any]:
    key, value = _option(text)
    if isinstance(value, list):
        value = tuple(value)
    return key, value


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--game", required=True, help="env id or short name (slide, isflak...)")
    ap.add_argument("--minutes", type=float, default=10.0,
                    help="wall-time budget (0: no limit, then give --steps)")
    ap.add_argument("--steps", type=int, default=None, help="learner env steps budget")
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--envs", type=int, default=None, help="games in the batch (default 64)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="output dir (default runs/<game>)")
    ap.add_argument("--eval-every", type=int, default=None,
                    help="learner steps between evaluations (default: 8 over the budget)")
    ap.add_argument("--eval-games", type=int, default=None, help="arena games per opponent")
    ap.add_argument("--pool-every", type=int, default=None,
                    help="PPO updates between self-play snapshots")
    ap.add_argument("--option", "-o", type=_option, action="append", default=[],
                    metavar="KEY=VALUE", help="game option, e.g. -o reward_mode=points")
    ap.add_argument("--ppo", "-p", type=_ppo_setting, action="append", default=[],
                    metavar="KEY=VALUE", help="PPO/self-play setting, e.g. -p ent_coef=0.02 "
                    "-p net_arch=[128,128] (see card_envs.rl.DEFAULTS)")
    ap.add_argument("--threads", type=int, default=None, help="torch threads")
    ap.add_argument("--device", default="cpu", help="torch device: cpu (default), cuda, auto")
    ap.add_argument("--overwrite", action="store_true",
                    help="replace the run already in --out (refused otherwise)")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)

    env_id = resolve_env_id(args.game)
    options = dict(args.option)
    if "num_players" in options:
        ap.error("set the number of seats with --players, not -o num_players=...")
    out = Path(args.out or f"runs/{env_id.removesuffix('_v0')}")
    minutes = args.minutes if args.minutes and args.minutes > 0 else None
    if minutes is None and args.steps is None:
        ap.error("give --minutes or --steps")

    from card_envs.rl import train

    try:
        res = train(env_id, minutes=minutes, steps=args.steps, num_envs=args.envs,
                    players=args.players, seed=args.seed, out_dir=out,
                    eval_every=args.eval_every, eval_games=args.eval_games,
                    pool_every=args.pool_every, progress=not args.no_progress,
                    torch_threads=args.threads, ppo=dict(args.ppo), device=args.device,
                    overwrite=args.overwrite, **options)
    except (FileExistsError, ValueError) as e:  # an existing run, bad settings or options
        ap.error(str(e))
    print(res.table())
    print(f"\nmodel: {res.final_path}   history: {out / 'history.csv'}   curve: "
          f"{out / 'learning_curve.png'}   tensorboard --logdir {out / 'tb'}")
    opts = "".join(f" -o {shlex.quote(f'{k}={v}')}" for k, v in res.config["options"].items())
    agents = f"ppo:{res.final_path}" + ",random" * (args.players - 1)
    print("evaluate in the arena:\n  card-envs arena --game "
          f"{env_id.removesuffix('_v0')} --agents {agents} --players {args.players}{opts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
