#!/usr/bin/env python
"""Rollout collection throughput: ``BatchedVecEnv(num_envs=B)`` vs
``DummyVecEnv([SingleAgentEnv] * B)``, same process, same B, same policy, random opponents in
both, three loops:

* ``collect_rollouts``: MaskablePPO's ``collect_rollouts`` (masks, policy and value forward
  passes, sampling, env steps, rollout buffer; no PPO update), what training does;
* ``policy``: a lean loop, the policy's forward pass (features, actor MLP, logits), masked
  Gumbel-max sampling and ``env.step``;
* ``env``: uniformly random legal learner actions (numpy), no policy: the environments alone.

Networks (``--nets``): ``train``, the :func:`card_envs.rl.train` network, and ``sb3``,
MlpPolicy's default (64x64 on the raw observation). Policy classes (``--policies``):
``masked``, :class:`card_envs.rl.sb3.policy.MaskedPolicy` (what training uses), and ``sb3``,
sb3-contrib's ``MaskableActorCriticPolicy``. Game options: the game's training options (its
manifest's ``train.options``, e.g. Op Glad IJs' ``max_turned``), as in training.

Counted: every move played (the learner's ``n_steps * B`` plus the opponents' moves:
``BatchedVecEnv.opponent_steps``, and for the single-agent envs the engine's own move counter)
over the wall time of the loop. Each pair is measured round-robin, ``--repeats`` times for at
least ``--seconds`` each, after a warm-up; reported: median env steps/s and the ratio
batched / dummy (target >= 5), and for the training network at B = 1024 the env steps/s
themselves (target >= 100k on a 2-core machine).

Usage::

    python benchmarks/rollout.py                         # slide_v0, B = 64, 256, 1024
    python benchmarks/rollout.py --games slide_v0,isflak_v0 --envs 256 --loops collect_rollouts
    python benchmarks/rollout.py --quick                 # smoke run
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any

try:
    import card_envs  # noqa: F401
except ImportError:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

sys.path.insert(0, str(Path(__file__).resolve().parent))
from throughput import LoadProbe, machine_info, pkg_version  # noqa: E402

from card_envs.core import kernels as K  # noqa: E402
from card_envs.core.registry import manifest  # noqa: E402
from card_envs.rl.single_agent import SingleAgentEnv  # noqa: E402

RESULTS_DIR = Path(__file__).resolve().parent / "results"
TARGET_RATIO = 5.0
#: env steps/s of collect_rollouts with the training network at B = 1024
TARGET_STEPS = 100_000
V_BATCHED, V_DUMMY = "BatchedVecEnv", "DummyVecEnv"


class CountingEnv(SingleAgentEnv):
    """``SingleAgentEnv`` that counts every move played (learner and opponents), read off the
    engine's move counter (``state[STEPS]``): no extra work per opponent move."""

    moves = 0

    def reset(self, **kw: Any) -> Any:
        out = super().reset(**kw)
        self.moves += int(self.state[K.STEPS])
        return out

    def step(self, action: Any) -> Any:
        before = int(self.state[K.STEPS])
        out = super().step(action)
        self.moves += int(self.state[K.STEPS]) - before
        return out


class FeatureObs:
    """A ``DummyVecEnv`` whose observations get the game's features (one compiled pass over
    the stacked observations, as :class:`~card_envs.rl.sb3.BatchedVecEnv` computes them)."""

    def __new__(cls, venv: Any, game: Any) -> Any:
        from stable_baselines3.common.vec_env import VecEnvWrapper

        from card_envs.core.features import Features
        from card_envs.rl.sb3 import feature_space

        fx = Features(game)

        class _Wrapped(VecEnvWrapper):
            def __init__(self) -> None:
                super().__init__(venv, observation_space=feature_space(game, fx))

            def reset(self) -> Any:
                return fx.compute(self.venv.reset())

            def step_wait(self) -> Any:
                obs, rew, done, infos = self.venv.step_wait()
                for i in done.nonzero()[0]:
                    infos[i]["terminal_observation"] = fx.compute(
                        infos[i]["terminal_observation"])
                return fx.compute(obs), rew, done, infos

            def action_masks(self) -> Any:
                import numpy as np

                return np.stack(self.venv.env_method("action_masks"))

        return _Wrapped()


def build(variant: str, env_id: str, B: int, n_steps: int, seed: int,
          options: dict[str, Any], net: str = "train", policy: str = "masked",
          copy_free: bool = True) -> tuple[Any, Any]:
    """(model ready to collect, moves counter); ``net``: "train" (exactly the network
    :func:`card_envs.rl.train` builds for this game: ``policy_spec``, with the game's
    action-aligned features if it has some) or "sb3" (MlpPolicy's default 64x64 on the raw
    observation); ``policy``: "masked" (:class:`card_envs.rl.sb3.policy.MaskedPolicy` and its
    subclasses, what training uses) or "sb3" (sb3-contrib's ``MaskableActorCriticPolicy``;
    not for a network with an action-aligned head); ``copy_free``: the rollout buffer the
    trainer uses (:class:`card_envs.rl.sb3.buffers.ZeroCopyRolloutBuffer`, the BatchedVecEnv
    writes into it) or SB3's own (``--copy-buffer``)."""
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from stable_baselines3.common.vec_env import DummyVecEnv

    from card_envs.core.registry import env_class
    from card_envs.rl.sb3 import BatchedVecEnv
    from card_envs.rl.sb3.buffers import ZeroCopyRolloutBuffer, link
    from card_envs.rl.sb3.policy import MaskedPolicy
    from card_envs.rl.sb3.train import policy_spec

    if net == "train":
        cls, kwargs = policy_spec(env_id, **options)
    else:
        cls, kwargs = MaskedPolicy, None
    features = bool(kwargs and "features" in kwargs["features_extractor_kwargs"])
    if policy == "sb3":
        if cls is not MaskedPolicy:
            raise ValueError(f"{env_id}: the training network has its own policy class "
                             f"({cls.__name__}); no sb3-contrib equivalent")
        cls = MaskableActorCriticPolicy
    if variant == V_BATCHED:
        with warnings.catch_warnings():  # BatchedVecEnv has no render_mode attribute
            warnings.filterwarnings("ignore", message=".*render_mode")
            venv = BatchedVecEnv(env_id, B, opponents="random", seed=seed,
                                 features=features, **options)
        moves = lambda: venv.opponent_steps  # noqa: E731  (+ the learner's, added below)
    else:
        n = options["num_players"]
        envs = [CountingEnv(env_id, opponents="random", seat=i % n, **options)
                for i in range(B)]
        venv = DummyVecEnv([lambda e=e: e for e in envs])
        venv.seed(seed)
        if features:
            venv = FeatureObs(venv, env_class(env_id).game_class(**options))
        moves = lambda: sum(e.moves for e in envs) - model.num_timesteps  # noqa: E731
    model = MaskablePPO(cls, venv, n_steps=n_steps, batch_size=n_steps * B, seed=seed,
                        device="cpu", policy_kwargs=kwargs,
                        rollout_buffer_class=ZeroCopyRolloutBuffer if copy_free else None)
    if copy_free:
        link(model)  # as card_envs.rl.train does
    model._setup_learn(total_timesteps=10**12)
    return model, moves


def collect(model: Any, n_steps: int) -> None:
    """One ``MaskablePPO.collect_rollouts`` of ``n_steps`` per game."""
    from stable_baselines3.common.callbacks import CallbackList

    cb = CallbackList([])
    cb.init_callback(model)
    model.collect_rollouts(model.env, cb, model.rollout_buffer, n_rollout_steps=n_steps)


def policy_steps(model: Any, n_steps: int, state: dict[str, Any]) -> None:
    """``n_steps`` steps of a lean loop: the policy's forward pass (features, actor MLP, action
    logits), masked sampling (Gumbel-max), ``env.step``; no value head, no rollout buffer."""
    import torch
    from sb3_contrib.common.maskable.utils import get_action_masks

    env, policy = model.env, model.policy
    obs = state.get("obs")
    if obs is None:
        obs = env.reset()
    with torch.no_grad():
        for _ in range(n_steps):
            masks = torch.as_tensor(get_action_masks(env))
            x = torch.as_tensor(obs).float()
            logits = policy.action_net(policy.mlp_extractor.forward_actor(
                policy.extract_features(x, policy.pi_features_extractor)))
            g = -torch.log(-torch.log(torch.rand_like(logits).clamp_(1e-20, 1.0)))
            actions = torch.where(masks, logits + g, -torch.inf).argmax(1).numpy()
            obs, _, _, _ = env.step(actions)
            model.num_timesteps += env.num_envs
    state["obs"] = obs


def env_steps(model: Any, n_steps: int, state: dict[str, Any]) -> None:
    """``n_steps`` steps with uniformly random legal learner actions (numpy, no policy): the
    environments alone."""
    import numpy as np
    from sb3_contrib.common.maskable.utils import get_action_masks

    env = model.env
    if "rng" not in state:
        state["rng"] = np.random.default_rng(0)
        env.reset()
    rng = state["rng"]
    for _ in range(n_steps):
        masks = get_action_masks(env)
        actions = np.argmax(masks * rng.random(masks.shape), axis=1)
        env.step(actions)
        model.num_timesteps += env.num_envs


LOOPS = {
    "collect_rollouts": lambda model, n, state: collect(model, n),
    "policy": policy_steps,
    "env": env_steps,
}


def measure(model: Any, moves: Any, loop: str, n_steps: int, seconds: float,
            state: dict[str, Any]) -> tuple[float, int, float]:
    """(env steps/s, env steps, other CPU load) over whole rounds of ``n_steps`` steps for at
    least ``seconds``."""
    steps0, moves0 = model.num_timesteps, moves()
    run = LOOPS[loop]
    t0 = time.perf_counter()
    with LoadProbe() as probe:
        while True:
            run(model, n_steps, state)
            dt = time.perf_counter() - t0
            if dt >= seconds:
                break
    n = model.num_timesteps - steps0 + moves() - moves0
    return n / dt, n, probe.other if probe.other is not None else float("nan")


def _measure_pair(env_id: str, B: int, net: str, policy: str, loop: str,
                  built: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """Both variants, round-robin ``repeats`` times; one result row."""
    rates: dict[str, list[float]] = {V_BATCHED: [], V_DUMMY: []}
    loads: dict[str, list[float]] = {V_BATCHED: [], V_DUMMY: []}
    counts: dict[str, int] = {V_BATCHED: 0, V_DUMMY: 0}
    states: dict[str, dict[str, Any]] = {V_BATCHED: {}, V_DUMMY: {}}
    for _ in range(args.repeats):
        for v, (model, moves) in built.items():
            r, n, load = measure(model, moves, loop, args.n_steps, args.seconds, states[v])
            rates[v].append(r)
            loads[v].append(load)
            counts[v] += n
    med = {v: statistics.median(x) for v, x in rates.items()}
    row: dict[str, Any] = {"game": env_id, "num_players": args.players, "num_envs": B,
                           "net": net, "policy": policy, "loop": loop, "n_steps": args.n_steps,
                           "ratio": med[V_BATCHED] / med[V_DUMMY] if med[V_DUMMY] else None}
    for v in (V_BATCHED, V_DUMMY):
        row[v] = {"median_env_steps_per_s": med[v], "min": min(rates[v]),
                  "max": max(rates[v]), "repeats": rates[v], "env_steps": counts[v],
                  "max_other_cpu_load": max(loads[v])}
    return row


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", default="slide_v0", help="comma-separated env ids")
    p.add_argument("--envs", default="64,256,1024", help="comma-separated B (games per VecEnv)")
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--n-steps", type=int, default=16, help="steps per game and round")
    p.add_argument("--loops", default=",".join(LOOPS), help=f"comma-separated, of {list(LOOPS)}")
    p.add_argument("--nets", default="train,sb3", help="policy network: 'train' (the "
                   "training defaults) and/or 'sb3' (MlpPolicy's default 64x64)")
    p.add_argument("--policies", default="masked", help="policy class: 'masked' "
                   "(card_envs.rl.sb3.policy.MaskedPolicy, what training uses) and/or 'sb3' "
                   "(sb3-contrib's MaskableActorCriticPolicy)")
    p.add_argument("--seconds", type=float, default=2.0, help="per measurement")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    p.add_argument("--numba-threads", type=int, default=None, help="numba.set_num_threads "
                   "(default: numba's, all cores; use 1 when another process is busy: a "
                   "parallel step waits for its slowest thread)")
    p.add_argument("--copy-buffer", action="store_true",
                   help="SB3's rollout buffer (copies each observation twice) instead of the "
                        "trainer's ZeroCopyRolloutBuffer")
    p.add_argument("--quick", action="store_true", help="smoke run: 0.2 s, 1 repeat")
    p.add_argument("--strict", action="store_true",
                   help="exit status 1 if a collect_rollouts ratio is below the target")
    p.add_argument("--json", default=None, help="output path (default: benchmarks/results/"
                   "rollout-<timestamp>.json)")
    args = p.parse_args(argv)
    if args.quick:
        args.seconds, args.repeats = 0.2, 1

    import numba
    import torch

    torch.set_num_threads(args.threads)
    if args.numba_threads:
        numba.set_num_threads(args.numba_threads)
    started = _dt.datetime.now(_dt.UTC)
    games = [g.strip() for g in args.games.split(",") if g.strip()]
    sizes = [int(b) for b in args.envs.split(",")]
    loops = [x.strip() for x in args.loops.split(",") if x.strip()]
    nets = [x.strip() for x in args.nets.split(",") if x.strip()]
    policies = [x.strip() for x in args.policies.split(",") if x.strip()]
    for x in policies:
        if x not in ("masked", "sb3"):
            p.error(f"unknown policy {x!r}: 'masked' or 'sb3'")
    for x in loops:
        if x not in LOOPS:
            p.error(f"unknown loop {x!r}; known: {list(LOOPS)}")
    for x in nets:
        if x not in ("train", "sb3"):
            p.error(f"unknown net {x!r}: 'train' or 'sb3'")
    rows = []
    for env_id in games:
        opts: dict[str, Any] = {**manifest(env_id).train.options, "num_players": args.players}
        for B in sizes:
            for net, pol in [(n, q) for n in nets for q in policies]:
                try:
                    built = {v: build(v, env_id, B, args.n_steps, 0, opts, net, pol,
                                           not args.copy_buffer)
                             for v in (V_BATCHED, V_DUMMY)}
                except ValueError as e:
                    log(f"  skipped: {e}")
                    continue
                # warm-up: compilation, caches, the rollout buffer's pages and the numba
                # thread tuner's trials (it settles within a few hundred steps)
                for model, _ in built.values():
                    for _ in range(2 if args.quick else 6):
                        collect(model, args.n_steps)
                for loop in loops:
                    if (net == "sb3" or pol == "sb3") and loop == "env":
                        continue  # no policy in that loop: same as with net "train"
                    rows.append(_measure_pair(env_id, B, net, pol, loop, built, args))
                    r = rows[-1]
                    log(f"  {env_id} B={B} {net} {pol} {loop}: batched "
                        f"{r[V_BATCHED]['median_env_steps_per_s']:,.0f}/s, dummy "
                        f"{r[V_DUMMY]['median_env_steps_per_s']:,.0f}/s")

    print(f"\nRollout throughput, env steps/s = learner + opponent moves per second; "
          f"{args.players} players, random opponents, {args.n_steps} steps per game and round, "
          f"torch threads {args.threads}, numba threads {numba.get_num_threads()}")
    print("loops: collect_rollouts = MaskablePPO.collect_rollouts; policy = policy forward + "
          "masked sampling + env.step; env = random legal learner actions, no policy")
    print("nets: train = card_envs.rl.sb3.train defaults; sb3 = MlpPolicy's default (64x64); "
          "policies: masked = card_envs.rl.sb3.policy.MaskedPolicy, sb3 = "
          "MaskableActorCriticPolicy")
    print(f"{'game':<14}{'B':>6}  {'net':<6}{'policy':<7}{'loop':<17}{'BatchedVecEnv':>14}"
          f"{'DummyVecEnv':>13}{'ratio':>8}{'load':>6}  targets")
    ok = True
    for r in rows:
        ratio = r["ratio"] or 0.0
        load = max(r[V_BATCHED]["max_other_cpu_load"], r[V_DUMMY]["max_other_cpu_load"])
        passed = ratio >= TARGET_RATIO
        rate = r[V_BATCHED]["median_env_steps_per_s"]
        steps_target = (r["loop"] == "collect_rollouts" and r["net"] == "train"
                        and r["num_envs"] == 1024)
        if r["loop"] == "collect_rollouts":
            ok &= passed
        print(f"{r['game']:<14}{r['num_envs']:>6}  {r['net']:<6}{r['policy']:<7}{r['loop']:<17}"
              f"{r[V_BATCHED]['median_env_steps_per_s']:>14,.0f}"
              f"{r[V_DUMMY]['median_env_steps_per_s']:>13,.0f}{ratio:>7.1f}x{load:>6.2f}  "
              f"{'PASS' if passed else 'FAIL'} (>= {TARGET_RATIO:.0f}x)"
              + (f", {'PASS' if rate >= TARGET_STEPS else 'FAIL'} (>= {TARGET_STEPS:,}/s)"
                 if steps_target else ""))
    print("load = most CPU used by other processes during a measurement (CPUs)")

    result = {
        "benchmark": "rollout",
        "started_utc": started.isoformat(),
        "machine": machine_info(),
        "versions": {n: pkg_version(n) for n in ("card-envs", "numpy", "numba", "torch",
                                                 "stable-baselines3", "sb3-contrib",
                                                 "gymnasium")},
        "numba_threads": numba.get_num_threads(),
        "torch_threads": torch.get_num_threads(),
        "options": vars(args),
        "target_ratio": TARGET_RATIO,
        "target_env_steps_per_s": TARGET_STEPS,
        "results": rows,
    }
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = Path(args.json) if args.json else (
        RESULTS_DIR / f"rollout-{started.strftime('%Y%m%d-%H%M%S')}.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {path}")
    return 0 if ok or not args.strict else 1


if __name__ == "__main__":
    sys.exit(main())
