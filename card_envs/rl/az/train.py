"""Gumbel AlphaZero self-play: the ``az`` search teaches the network it searches with, for any
number of seats.

>>> from card_envs.rl.az import train_az
>>> res = train_az("isflak_v0", minutes=60, out_dir="runs/az_isflak")      # doctest: +SKIP
>>> print(res.table())                                                     # doctest: +SKIP

Each **round**:

1. **Self-play** (:mod:`card_envs.rl.az.selfplay`): ``games`` games in lockstep, split over
   ``workers`` processes of one thread each, make ``steps`` moves each. Every move with a
   choice is searched by the batched search (``sims`` simulations, Gumbel root with noise,
   ``considered`` actions, ``determinizations`` states per move) and becomes a sample: the
   observation, the legal actions and the search's improved policy ``softmax(logits +
   sigma(completed Q))``. A finished game gives every one of its samples the win share of
   every seat. Games carry over between rounds.
2. **Update**: the samples of the last ``window`` rounds are the replay window; ``reuse x new
   samples / minibatch`` minibatches drawn from it train the network: cross-entropy of the
   policy (over the legal actions) against the improved policy, plus ``value_coef`` times the
   cross-entropy of the value head (softmax over the seats, the sample's seat first) against
   the result; AdamW, gradient-norm clipping.
3. **Evaluation** (every ``eval_every`` rounds, deals no training game uses,
   :mod:`card_envs.rl.az.evaluate`): the search with the new network against the search with
   the network the run started from (``eval_games`` games, equal simulations); the network
   alone against the heuristic (``heuristic_games``); the correlation of the value head's own
   share (before the update) with the results of the round's games.

**Networks.** ``init="scratch"`` (the default) starts from a fresh network, for any number of
seats; ``"ppo"`` from the game's shipped PPO network (2 seats), whose scalar value head becomes
a head of one output per seat (the PPO value as the first logit, so the first round searches as
the baseline's values said); or a path to a policy ``.safetensors``. The start network is
saved in the run folder as ``start.safetensors``; evaluations play against it.

**The run folder**: ``checkpoints/round_NNNN.safetensors`` (each round's network, a policy file
for ``az:path=...`` and ``ppo:path=...``), ``final.safetensors``, ``history.json`` (a row per
round), ``learning_curve.png``, ``state.json`` and ``resume/`` (the optimizer's moments, the
self-play games in progress and the replay window of the last round). ``resume=True``
continues from the last finished round exactly as if the run had not stopped: same games,
same samples, same updates (with ``torch_threads=1``; other thread counts may round
differently). A kill at any moment leaves the previous round's state loadable (``state.json``
is replaced last, atomically; :mod:`card_envs.rl.az.run_folder`). A resume refuses, with one
line, another game, game version, seat count, option, seed or setting, and a missing or
damaged file. Settings are validated before anything runs.

**Stopping.** SIGINT (Ctrl-C) and SIGTERM stop the run at its next safe point (the self-play
workers ignore both: the learner stops them). A stop during a round's self-play drops that
round at once (within a move; its games went on, so the previous round stays the saved one);
after the self-play, the round's update is finished and saved, and its evaluation is skipped
(or cut short: worker processes only). The result's ``stopped`` names the signal and
``stop_line()`` says what was saved and how to continue; ``final.safetensors`` is written only
by a run that ends its budget.
"""

from __future__ import annotations

import math
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from card_envs.core.errors import OptionError
from card_envs.rl.az.learner import (
    concat,
    evaluate_round,
    postfix,
    run_info,
    update,
    value_corr,
    weights_of,
)
from card_envs.rl.az.run_folder import (
    load_resume,
    plot_history,
    read_run,
    resume_command,
    run_identity,
    save_round,
    write_json,
)
from card_envs.rl.az.settings import AZSettings
from card_envs.rl.runs import SafeStop

__all__ = ["EXPERT_DEFAULTS", "AZResult", "ExpertResult", "az_policy", "expert_iteration",
           "train_az"]



@dataclass
class AZResult:
    """What :func:`train_az` returns."""

    env_id: str
    num_players: int
    history: list[dict[str, Any]]
    final_path: Path               # final.safetensors; a stopped run's last saved network
    out_dir: Path
    settings: dict[str, Any]
    stopped: str | None = None     # the signal that stopped the run (SIGINT, SIGTERM)
    rounds_saved: int = 0          # the last round saved (what resume=True continues from)
    dropped: bool = False          # a round under way when the stop came was not saved
    resume_hint: str | None = None  # how to continue a stopped run

    def stop_line(self) -> str:
        """One line for a stopped run: what was saved and how to continue it."""
        r, by = self.rounds_saved, f"stopped by {self.stopped}"
        if not r:
            return (f"{by} during round 1: nothing saved yet in {self.out_dir}; start again "
                    f"with: {self.resume_hint}")
        what = f"during round {r + 1} (not saved): {self.out_dir} holds round {r}" \
            if self.dropped else f"after round {r}: saved {self.out_dir} (round {r})"
        return f"{by} {what}; continue with: {self.resume_hint}"

    def table(self) -> str:
        """One line per round: samples, losses, value correlation, evaluations, time."""
        head = (f"{'round':>5}{'min':>6}{'samples':>9}{'dec/s':>7}{'pol':>7}{'val':>7}"
                f"{'v corr':>7}{'new vs start':>20}{'net vs heur':>20}")
        lines = [head, "-" * len(head)]

        def fmt(r: dict[str, Any], key: str) -> str:
            if key not in r:
                return "-"
            lo, hi = r[f"{key}_ci"]
            return f"{r[key]:.3f} [{lo:.2f},{hi:.2f}]"

        for r in self.history:
            lines.append(f"{r['round']:>5}{r['elapsed'] / 60:>6.1f}{r['samples']:>9}"
                         f"{r['decisions_per_second']:>7.0f}{r['policy_loss']:>7.3f}"
                         f"{r['value_loss']:>7.3f}{r['value_corr']:>7.3f}"
                         f"{fmt(r, 'vs_start'):>20}{fmt(r, 'net_vs_heuristic'):>20}")
        return "\n".join(lines)


# ------------------------------------------------------------------------------ networks
def az_policy(start: Any, num_players: int) -> Any:
    """A copy of ``start`` (a NetPolicy) with a value head of one output per seat. A scalar
    head (a PPO network) becomes the first seat's logit (times 2: a share of about
    ``0.5 + v / 2`` at two seats, as the ``az`` agent reads PPO values), the others' zero."""
    import torch

    from card_envs.agents.net import NetPolicy, PolicyNet

    n = int(num_players)
    old = start.net
    net = PolicyNet(old.in_dim, old.num_actions, old.action_dim, old.hidden, old.scorer_dim,
                    value_dim=n)
    state = {k: v.clone() for k, v in old.state_dict().items()}
    if old.value_dim != n:
        w = torch.zeros(n, old.value.weight.shape[1])
        b = torch.zeros(n)
        if old.value_dim == 1:
            w[0] = 2.0 * old.value.weight[0].detach()
            b[0] = 2.0 * old.value.bias[0].detach()
        state["value.weight"], state["value.bias"] = w, b
    net.load_state_dict(state)
    net.eval()
    return NetPolicy(start.env_id, n, start.options, net, one_hot_max=start.pinput.one_hot_max,
                     one_hot_budget=start.pinput.one_hot_budget)


def _start_policy(env_id: str, init: str | Path, n: int, options: dict[str, Any]
                  ) -> tuple[Any, float]:
    """The network a run starts from (module docstring) and the reward shaping its value head
    was trained with (0 but for PPO networks of shaped games)."""
    from card_envs.agents.az import _training_shaping
    from card_envs.agents.net import NetPolicy, load_policy
    from card_envs.agents.ppo import baseline_path

    if init == "scratch":
        return NetPolicy(env_id, n, options, value_dim=n), 0.0
    path = baseline_path(env_id, n) if init == "ppo" else Path(init)
    if not path.is_file():
        raise FileNotFoundError(f"init: no policy file {str(path)!r} (or 'ppo', 'scratch')")
    policy = load_policy(path, env_id, n, options)
    return policy, _training_shaping(policy, str(path))


def _start_evaluator(policy: Any, env_id: str, path: Path) -> Any:
    """The evaluator of the start network (a PPO network's shaping added back from the
    training record beside it, as ``az`` reads it)."""
    from card_envs.agents.az import _training_shaping
    from card_envs.agents.az_search import NetEvaluator
    from card_envs.core.manifest import load
    from card_envs.core.registry import manifest

    shaping = _training_shaping(policy, str(path))
    pot = manifest(env_id).train.potential if shaping else None
    return NetEvaluator(policy, shaping=shaping, potential=load(pot) if pot else None)


# ------------------------------------------------------------------------------ the run
def _check_run_args(rounds: int | None, minutes: float | None) -> None:
    if rounds is None and minutes is None:
        raise OptionError("give rounds or minutes (or both)")
    if rounds is not None and (isinstance(rounds, bool) or not isinstance(rounds, int)
                               or not 1 <= rounds <= 10**6):
        raise OptionError(f"rounds must be an integer in [1, 1000000], got {rounds!r}")
    if minutes is not None and (isinstance(minutes, bool)
                                or not isinstance(minutes, (int, float))
                                or not math.isfinite(minutes) or not 0 < minutes <= 10**6):
        raise OptionError(f"minutes must be a finite number in (0, 1000000], got {minutes!r}")


def train_az(env_id: str, minutes: float | None = None, rounds: int | None = None,
             out_dir: str | Path = "runs/az", init: str | Path = "scratch",
             settings: dict[str, Any] | None = None, seed: int = 0, num_players: int = 2,
             resume: bool = False, overwrite: bool = False, progress: bool = True,
             command: str | None = None, **options: Any) -> AZResult:
    """Self-play training (module docstring) until ``rounds`` rounds are done or ``minutes``
    of self-play and updates have passed (whichever comes first; a round is never cut),
    writing the run to ``out_dir``. ``settings`` override :data:`AZ_DEFAULTS` and the game's
    own (its manifest's ``az["train"]``); ``options`` are game options (the game's training
    options from its manifest by default, e.g. Op Glad IJs' ``max_turned``).

    SIGINT (Ctrl-C) and SIGTERM stop the run at its next safe point (module docstring) and
    the result says so (``stopped``, ``stop_line()``); a second Ctrl-C raises
    ``KeyboardInterrupt`` at once (the last saved round stands)."""
    import torch

    from card_envs.core.registry import env_class, manifest, resolve_env_id

    env_id = resolve_env_id(env_id)
    cls = env_class(env_id).game_class
    if isinstance(num_players, bool) or not isinstance(num_players, int) \
            or not cls.min_players <= num_players <= cls.max_players:
        raise OptionError(f"{env_id}: num_players must be an integer in "
                          f"{cls.min_players}..{cls.max_players}, got {num_players!r}")
    n = num_players
    options = {**manifest(env_id).train.options, **options}
    options.pop("num_players", None)
    cls(num_players=n, **options)  # validates the options
    tuned = dict(manifest(env_id).az.get("train", {}))  # this game's measured defaults
    cfg = AZSettings.from_dict({**tuned, **(settings or {})})
    _check_run_args(rounds, minutes)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**32:
        raise OptionError(f"seed must be an integer in [0, 2**32), got {seed!r}")
    if not isinstance(init, (str, Path)):
        raise OptionError(f"init must be 'ppo', 'scratch' or a policy path, got {init!r}")
    out = Path(out_dir)
    ident = run_identity(env_id, n, options, seed, cfg)
    old_threads = torch.get_num_threads()
    torch.set_num_threads(cfg.torch_threads)
    try:
        return _prepare(env_id, n, options, cfg, seed, init, command, out, ident, resume,
                        overwrite, rounds, minutes, progress)
    finally:
        torch.set_num_threads(old_threads)


def _prepare(env_id: str, n: int, options: dict[str, Any], cfg: AZSettings, seed: int,
             init: str | Path, command: str | None, out: Path, ident: dict[str, Any],
             resume: bool, overwrite: bool, rounds: int | None, minutes: float | None,
             progress: bool) -> AZResult:
    """A new run's folder and start, or a saved run loaded; then the run."""
    import torch

    from card_envs.agents.net import load_policy, save_policy

    history: list[dict[str, Any]] = []
    saved: dict[str, Any] = {}
    if resume:
        saved, history = read_run(out, ident)
        done = saved["round"]
        start = load_policy(out / "start.safetensors", env_id, n, options)
        policy = load_policy(out / saved["current"], env_id, n, options)
    else:
        if (out / "state.json").exists() and not overwrite:
            raise FileExistsError(f"{str(out)!r} already holds a run; pass overwrite=True "
                                  "(--overwrite) or resume=True (--resume)")
        start, shaping = _start_policy(env_id, init, n, options)
        policy = az_policy(start, n)
        if out.exists() and overwrite:
            for sub in ("checkpoints", "resume"):
                shutil.rmtree(out / sub, ignore_errors=True)
            for f in ("state.json", "history.json", "final.safetensors", "final.json"):
                (out / f).unlink(missing_ok=True)
        (out / "checkpoints").mkdir(parents=True, exist_ok=True)
        save_policy(start, out / "start.safetensors",
                    info={"init": str(init), "settings": {"shaping": shaping}})
        done = 0
    opt = torch.optim.AdamW(policy.net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    window, states = load_resume(out, saved, opt) if resume else ([], [])
    run = _Run(env_id, n, options, cfg, seed, init, command, out, ident, start, policy, opt)
    with SafeStop() as stop:
        return run.train(done, history, window, states, rounds, minutes, progress, stop)


class _Run:
    """A run's loop (:func:`train_az`), from its validated arguments and loaded state."""

    def __init__(self, env_id: str, n: int, options: dict[str, Any], cfg: AZSettings,
                 seed: int, init: str | Path, command: str | None, out: Path,
                 ident: dict[str, Any], start: Any, policy: Any, opt: Any) -> None:
        self.env_id, self.n, self.options, self.cfg, self.seed = env_id, n, options, cfg, seed
        self.init, self.command, self.out, self.ident = init, command, out, ident
        self.start, self.policy, self.opt = start, policy, opt

    def _init_msg(self) -> dict[str, Any]:
        """What each worker is started with."""
        from card_envs.core.registry import manifest

        cfg, start = self.cfg, self.start
        ev = _start_evaluator(start, self.env_id, self.out / "start.safetensors")
        selfplay = {"seed": self.seed, "sims": cfg.sims, "considered": cfg.considered,
                    "determinizations": cfg.determinizations, "max_nodes": cfg.nodes,
                    "c_visit": cfg.c_visit, "c_scale": cfg.c_scale, "rescale": cfg.rescale,
                    "mix": cfg.mix, "horizon": cfg.horizon, "prior_temp": cfg.prior_temp}
        return {"env_id": self.env_id, "num_players": self.n, "options": self.options,
                "config": self.policy.config(), "selfplay": selfplay,
                "start": {"config": start.config(), "weights": weights_of(start),
                          "shaping": ev.shaping,
                          "potential": manifest(self.env_id).train.potential
                          if ev.shaping else None}}

    def train(self, done: int, history: list[dict[str, Any]],
              window: list[dict[str, np.ndarray]], states: list[dict[str, np.ndarray]],
              rounds: int | None, minutes: float | None, progress: bool,
              stop: SafeStop) -> AZResult:
        """Rounds until the budget is spent or ``stop`` is requested (module docstring)."""
        from card_envs.agents.net import save_policy
        from card_envs.core.progress import tqdm_class
        from card_envs.rl.az.workers import StopRequested, Workers

        cfg, out, env_id, n, seed, policy = (self.cfg, self.out, self.env_id, self.n,
                                             self.seed, self.policy)
        search_kw = {"determinizations": cfg.determinizations, "considered": cfg.considered,
                     "max_nodes": cfg.nodes, "c_visit": cfg.c_visit, "c_scale": cfg.c_scale,
                     "rescale": cfg.rescale, "mix": cfg.mix, "horizon": cfg.horizon,
                     "prior_temp": cfg.prior_temp}
        elapsed = float(history[-1]["elapsed"]) if history else 0.0
        stopped: str | None = None
        dropped = False  # a round was under way when the stop came, and is not saved

        def asked() -> str | None:
            return stop.requested

        bar = tqdm_class()(total=rounds, initial=done, desc=f"{env_id} {n}p self-play",
                           unit="round", disable=not progress)
        try:
            with Workers(cfg.workers, cfg.games, self._init_msg()) as workers:
                if states:
                    workers.load(states)
                while (rounds is None or done < rounds) and \
                        (minutes is None or elapsed < 60.0 * minutes):
                    if stop.requested:
                        break
                    r = done + 1
                    t0 = time.perf_counter()
                    workers.set_weights(weights_of(policy))
                    try:  # a stop during self-play drops the round: its games went on
                        parts = workers.play(cfg.steps, stop=asked)
                    except StopRequested:
                        dropped = True
                        break
                    t_play = time.perf_counter() - t0
                    fresh = concat(parts)
                    decisions = int(sum(int(p["decisions"][0]) for p in parts))
                    finished = np.concatenate([p["winners"] for p in parts])
                    lengths = np.concatenate([p["lengths"] for p in parts])
                    corr = value_corr(policy, fresh)
                    window = (window + [fresh])[-cfg.window:]
                    data = concat(window)
                    new = len(fresh["seat"])
                    updates = math.ceil(cfg.reuse * new / cfg.minibatch) if new else 0
                    rng = np.random.default_rng([seed, r])
                    pcoef = 0.0 if r <= cfg.warmup else cfg.policy_coef
                    pl, vl, ent = update(policy, self.opt, data, updates, cfg.minibatch, rng,
                                         cfg.value_coef, cfg.max_grad_norm, pcoef) \
                        if updates else (math.nan, math.nan, math.nan)
                    t_train = time.perf_counter() - t0 - t_play
                    elapsed += t_play + t_train
                    ckpt = save_policy(policy, out / "checkpoints" / f"round_{r:04d}.safetensors",
                                       info=run_info(env_id, n, cfg, seed, r, self.command,
                                                     self.init))
                    row: dict[str, Any] = {
                        "round": r, "num_players": n, "samples": new,
                        "buffer": len(data["seat"]), "decisions": decisions,
                        "games": len(lengths),
                        "mean_length": float(lengths.mean()) if len(lengths) else math.nan,
                        "updates": updates, "policy_loss": pl, "value_loss": vl,
                        "policy_entropy": ent, "value_corr": corr,
                        "first_seat_share": float(finished[:, 0].mean()) if len(finished)
                        else math.nan,
                        "selfplay_seconds": t_play, "train_seconds": t_train,
                        "decisions_per_second": decisions / max(t_play, 1e-9),
                        "elapsed": elapsed}
                    history.append(row)
                    # the round is saved before its evaluation, which a stop may cut short
                    save_round(out, r, self.opt, window, workers.states(), history,
                               {**self.ident, "round": r, "current": ckpt.relative_to(out)
                                .as_posix(), "elapsed": elapsed, "command": self.command})
                    done = r
                    last = (rounds is not None and r >= rounds) or \
                        (minutes is not None and elapsed >= 60.0 * minutes)
                    if (r % cfg.eval_every == 0 or last) and not stop.requested:
                        t_ev = time.perf_counter()
                        workers.set_weights(weights_of(policy))
                        try:
                            row.update(evaluate_round(env_id, workers, cfg, seed, r, n,
                                                      search_kw, stop=asked))
                            row["eval_seconds"] = time.perf_counter() - t_ev
                            write_json(out / "history.json", history)
                        except StopRequested:
                            pass  # the round stays saved, without its evaluation
                    try:
                        plot_history(history, out / "learning_curve.png", f"{env_id}, {n} "
                                     "seats: Gumbel AlphaZero self-play")
                    except ImportError:  # matplotlib is the plot extra
                        pass
                    bar.update(1)
                    bar.set_postfix_str(postfix(row))
                left = (rounds is None or done < rounds) and \
                    (minutes is None or elapsed < 60.0 * minutes)
                stopped = stop.requested if left else None  # else: the run is complete
        finally:
            bar.close()
        if stopped is None:
            final = save_policy(policy, out / "final.safetensors",
                                info=run_info(env_id, n, cfg, seed, done, self.command,
                                              self.init))
        else:  # the last saved round's network
            final = (out / "checkpoints" / f"round_{done:04d}.safetensors") if done \
                else out / "start.safetensors"
        res = AZResult(env_id, n, history, final, out, cfg.as_dict(), stopped=stopped,
                       rounds_saved=done, dropped=dropped)
        if stopped is not None:
            hint = resume_command(self.command, resumable=done > 0)
            res.resume_hint = hint or ("the same train_az(...) call" +
                                       (" with resume=True" if done else ""))
        return res


# ------------------------------------------------------------------------------ earlier names
#: expert iteration's names: this trainer (its settings are :data:`AZ_DEFAULTS`)
EXPERT_DEFAULTS = AZSettings().as_dict()
ExpertResult = AZResult


def expert_iteration(env_id: str, rounds: int = 5, minutes: float | None = None,
                     out_dir: str | Path = "runs/az", init: str | Path | None = None,
                     settings: dict[str, Any] | None = None, seed: int = 0,
                     workers: int | None = None, resume: bool = False,
                     overwrite: bool = False, progress: bool = True,
                     command: str | None = None, **options: Any) -> AZResult:
    """Deprecated spelling of :func:`train_az` (expert iteration was superseded by Gumbel
    AlphaZero self-play; ``settings`` are :data:`AZ_DEFAULTS`, ``workers`` one of them)."""
    import warnings

    warnings.warn("expert_iteration is train_az now (card_envs.rl.az); its settings are "
                  "AZ_DEFAULTS", DeprecationWarning, stacklevel=2)
    s = dict(settings or {})
    if workers is not None:
        s["workers"] = workers
    return train_az(env_id, minutes=minutes, rounds=rounds, out_dir=out_dir,
                    init=init or "ppo", settings=s, seed=seed, resume=resume,
                    overwrite=overwrite, progress=progress, command=command, **options)
