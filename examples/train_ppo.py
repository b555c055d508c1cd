"""Train a PPO agent by self-play on the batched engine and evaluate it in the arena.

    python examples/train_ppo.py --game slide --minutes 15
    python examples/train_ppo.py --game isflak --minutes 15 --seed 1 -p hidden=[256,128]
    python examples/train_ppo.py --game slide --minutes 10 --trainer sb3   # stable-baselines3
    python examples/train_ppo.py --game slide --minutes 10 --ray auto --samplers 8  # on Ray

The default trainer is card-envs' own PPO (:func:`card_envs.rl.train_ppo`: every move a sample,
about 50k env steps/s on 2 CPU cores); it writes ``final.safetensors`` (+ ``.json``),
``checkpoints/``, ``history.json``, ``summary.json`` and ``learning_curve.png`` under
``--out``. ``--trainer sb3`` runs sb3-contrib's MaskablePPO (:func:`card_envs.rl.train`:
``final.zip``, ``history.csv``, TensorBoard logs in ``tb/``). Both print the final evaluation,
the env steps per second over the whole run and the arena command for the trained model.
``--ray ADDRESS`` (native trainer) plays the games on ``--samplers`` Ray actors spread over the
cluster at ADDRESS (``auto``: the one ``ray start`` runs on this machine; ``local``: a Ray
started for the run), the learner staying in this process; same files, same results as
``--samplers`` in one process. Guides: ``docs/training.md``, ``docs/distributed.md``.
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
except ValueError as e:  # a bad thread setting in the environment (NUMBA_NUM_THREADS)
    print(f"train_ppo.py: error: {e}", file=sys.stderr)
    sys.exit(2)

from card_envs.cli import OneLineParser, _option
from card_envs.core.registry import resolve_env_id


def _ppo_setting(text: str) -> tuple[str, Any]:
    key, value = _option(text)
    if isinstance(value, list):
        value = tuple(value)
    return key, value


def main(argv: list[str] | None = None) -> int:
    global argv_given
    argv_given = argv
    ap = OneLineParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--game", required=True, help="env id or short name (slide, isflak...)")
    ap.add_argument("--trainer", choices=("native", "sb3"), default="native",
                    help="card-envs' own PPO (default) or stable-baselines3's MaskablePPO")
    ap.add_argument("--minutes", type=float, default=10.0,
                    help="wall-time budget (0: no limit, then give --steps)")
    ap.add_argument("--steps", type=int, default=None,
                    help="steps budget (native: all moves; sb3: the learner's)")
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--envs", type=int, default=None,
                    help="games in the batch (default: native 1024, sb3 64)")
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
                    "-p hidden=[128,128] (see card_envs.rl.PPO_DEFAULTS; sb3: "
                    "card_envs.rl.DEFAULTS)")
    ap.add_argument("--threads", type=int, default=None,
                    help="native: the most threads the run keeps busy (default: the CPUs it "
                         "may use; numba's NUMBA_NUM_THREADS caps it too); sb3: torch threads")
    ap.add_argument("--resume", action="store_true",
                    help="continue the run in --out from its last checkpoint (same game, "
                         "seats, options, seed and settings)")
    ap.add_argument("--samplers", type=int, default=1,
                    help="native: split the games between this many samplers (default 1)")
    ap.add_argument("--ray", default=None, metavar="ADDRESS",
                    help="native: play the samplers as Ray actors on the cluster at ADDRESS "
                         "('auto': ray start on this machine; 'local': a Ray for this run)")
    ap.add_argument("--device", default="cpu", help="torch device: cpu (default), cuda, auto")
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
    out = Path(args.out or f"runs/{env_id.removesuffix('_v0')}")
    minutes = args.minutes if args.minutes and args.minutes > 0 else None
    if minutes is None and args.steps is None:
        ap.error("give --minutes or --steps")

    if args.resume and args.overwrite:
        ap.error("--resume continues the run in --out, --overwrite throws it away: give one")
    if args.trainer == "native":
        try:
            return _native(ap, args, env_id, options, out, minutes)
        except KeyboardInterrupt:  # a second Ctrl-C, or one before training started
            if (out / "resume" / "state.json").is_file():
                print(f"interrupted: the last checkpoint in {out / 'resume'} is kept (continue "
                      "with the same command and --resume)", file=sys.stderr)
            else:
                print("interrupted before the first checkpoint: nothing to resume",
                      file=sys.stderr)
            return 130

    if args.ray is not None or args.samplers != 1:
        ap.error("--ray and --samplers are options of the native trainer")
    from card_envs.rl import train

    try:
        res = train(env_id, minutes=minutes, steps=args.steps, num_envs=args.envs,
                    players=args.players, seed=args.seed, out_dir=out,
                    eval_every=args.eval_every, eval_games=args.eval_games,
                    pool_every=args.pool_every, progress=not args.no_progress,
                    torch_threads=args.threads, ppo=dict(args.ppo), device=args.device,
                    overwrite=args.overwrite, resume=args.resume,
                    command="python examples/train_ppo.py " + shlex.join(
                        sys.argv[1:] if argv_given is None else argv_given), **options)
    except (FileExistsError, FileNotFoundError, ValueError) as e:  # a run, settings, options
        ap.error(str(e))
    if res.stopped:
        print(res.stop_line(), file=sys.stderr)
        return 130 if res.stopped == "SIGINT" else 143
    print(res.table())
    print(f"\nmodel: {res.final_path}   history: {out / 'history.csv'}   curve: "
          f"{out / 'learning_curve.png'}   tensorboard --logdir {out / 'tb'}")
    opts = "".join(f" -o {shlex.quote(f'{k}={v}')}" for k, v in res.config["options"].items())
    agents = f"ppo:{res.final_path}" + ",random" * (args.players - 1)
    print("evaluate in the arena:\n  card-envs arena --game "
          f"{env_id.removesuffix('_v0')} --agents {agents} --players {args.players}{opts}")
    return 0


def _native(ap: argparse.ArgumentParser, args: argparse.Namespace, env_id: str,
            options: dict[str, Any], out: Path, minutes: float | None) -> int:
    from card_envs.core.errors import OptionError
    from card_envs.rl import train_ppo

    if args.device != "cpu" or args.eval_every is not None:
        ap.error("--device and --eval-every are options of --trainer sb3")
    if args.ray is not None and not args.ray.strip():
        ap.error("--ray needs an address: auto, local or HOST:PORT")
    if args.samplers < 1:  # before the engine compiles (the rest is checked by train_ppo)
        ap.error(f"samplers must be an integer in 1..num_envs, got {args.samplers}")
    settings = {k: list(v) if isinstance(v, tuple) else v for k, v in args.ppo}
    for key, value in (("num_envs", args.envs), ("eval_games", args.eval_games),
                       ("pool_every", args.pool_every)):
        if value is not None:
            settings[key] = value
    given = list(sys.argv[1:] if argv_given is None else argv_given)
    command = "python examples/train_ppo.py " + shlex.join(given)
    try:
        if not args.no_progress:  # say so while the batched engine compiles (not timed)
            from card_envs import vector

            vector.warm(env_id, int(settings.get("num_envs", 1024)), progress=True,
                        num_players=args.players, **options)
        res = train_ppo(env_id, minutes=minutes, steps=args.steps, players=args.players,
                        seed=args.seed, out_dir=out, settings=settings,
                        progress=not args.no_progress, threads=args.threads,
                        overwrite=args.overwrite, command=command, samplers=args.samplers,
                        ray=args.ray, resume=args.resume, **options)
    except (FileExistsError, FileNotFoundError, OptionError, ValueError, ConnectionError) as e:
        ap.error(str(e))
    if res.stopped:
        from card_envs.rl.runs import resume_command

        again = resume_command(command)
        print(f"stopped by {res.stopped} after {res.updates} updates ({res.env_steps:,} env "
              f"steps): saved {res.checkpoint}; continue with: {again}", file=sys.stderr)
        return 130 if res.stopped == "SIGINT" else 143
    print(res.table())
    prof = ", ".join(f"{k} {v:.0f} s" for k, v in res.profile.items())
    print(f"time: rollouts {res.rollout_seconds:.0f} s, updates {res.update_seconds:.0f} s "
          f"({prof})")
    print(f"\nmodel: {res.final_path}   history: {out / 'history.json'}   curve: "
          f"{out / 'learning_curve.png'}")
    opts = "".join(f" -o {shlex.quote(f'{k}={v}')}" for k, v in options.items())
    agents = f"ppo:{res.final_path},heuristic"
    print("evaluate in the arena (other deals than training's evaluations):\n  card-envs arena "
          f"--game {env_id.removesuffix('_v0')} --agents {agents} --players {args.players} "
          f"--games 400 --seed 11{opts}")
    return 0


argv_given: list[str] | None = None


if __name__ == "__main__":
    sys.exit(main())
