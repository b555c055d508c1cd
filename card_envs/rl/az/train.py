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
is replaced last, atomically). Settings are validated before anything runs.
"""

from __future__ import annotations

import json
import math
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from card_envs.core.errors import OptionError
from card_envs.rl.az.run_folder import (
    load_npz,
    load_optimizer,
    plot_history,
    refuse_resume,
    run_identity,
    save_resume,
    write_json,
)
from card_envs.rl.az.settings import AZSettings

__all__ = ["EXPERT_DEFAULTS", "AZResult", "ExpertResult", "az_policy", "expert_iteration",
           "train_az"]



@dataclass
class AZResult:
    """What :func:`train_az` returns."""

    env_id: str
    num_players: int
    history: list[dict[str, Any]]
    final_path: Path
    out_dir: Path
    settings: dict[str, Any]

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


def _weights(policy: Any) -> dict[str, np.ndarray]:
    return {k: v.detach().cpu().numpy().copy() for k, v in policy.net.state_dict().items()}


# ------------------------------------------------------------------------------ samples
_KEYS = ("obs", "mask", "pi", "pi_len", "z", "seat", "value", "game")


def _concat(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    return {k: np.concatenate([p[k] for p in parts]) for k in _KEYS}


def _pi_offsets(pi_len: np.ndarray) -> np.ndarray:
    off = np.zeros(len(pi_len) + 1, np.int64)
    np.cumsum(pi_len, out=off[1:])
    return off


def _gather(pi: np.ndarray, off: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """The concatenated policy targets of samples ``idx``."""
    lens = off[idx + 1] - off[idx]
    total = int(lens.sum())
    starts = np.zeros(len(idx), np.int64)
    np.cumsum(lens[:-1], out=starts[1:])
    pos = np.repeat(off[idx] - starts, lens) + np.arange(total)
    return pi[pos]


def _update(policy: Any, opt: Any, data: dict[str, np.ndarray], updates: int, minibatch: int,
            rng: np.random.Generator, value_coef: float, max_grad_norm: float,
            policy_coef: float = 1.0) -> tuple[float, float, float]:
    """``updates`` minibatch steps on the window ``data``; mean policy loss, value loss and
    policy entropy."""
    import torch

    from card_envs.agents.net import segment_log_softmax

    net, pin = policy.net, policy.pinput
    N = len(data["seat"])
    off = _pi_offsets(data["pi_len"])
    net.train()
    pl = vl = ent = 0.0
    for _ in range(updates):
        idx = np.sort(rng.integers(0, N, min(minibatch, N)))
        x, rows, acts, offs = pin.compute(data["obs"][idx], data["mask"][idx], threads=1)
        B = len(idx)
        seg = torch.from_numpy(np.repeat(np.arange(B, dtype=np.int64), np.diff(offs)))
        logits, values = net(torch.from_numpy(x), torch.from_numpy(rows),
                             torch.from_numpy(acts), seg)
        logp = segment_log_softmax(logits, seg, B)
        target = torch.from_numpy(_gather(data["pi"], off, idx))
        ploss = -(target * logp).sum() / B
        z = torch.from_numpy(data["z"][idx])
        vloss = -(z * torch.log_softmax(values, 1)).sum() / B
        loss = policy_coef * ploss + value_coef * vloss
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), max_grad_norm)
        opt.step()
        with torch.no_grad():
            ent += float(-(logp.exp() * logp).sum()) / B
        pl += float(ploss.detach())
        vl += float(vloss.detach())
    net.eval()
    k = max(1, updates)
    return pl / k, vl / k, ent / k


def _value_corr(policy: Any, data: dict[str, np.ndarray]) -> float:
    """Correlation of the value head's share for the sample's seat with the share it got."""
    import torch

    if len(data["seat"]) < 3:
        return math.nan
    out = []
    with torch.inference_mode():
        for lo in range(0, len(data["seat"]), 4096):
            x, _, _, _ = policy.pinput.compute(data["obs"][lo:lo + 4096],
                                               data["mask"][lo:lo + 4096], threads=1)
            v = policy.net.value_of(torch.from_numpy(x))
            out.append(torch.softmax(v.double(), 1)[:, 0].numpy())
    pred, z = np.concatenate(out), data["z"][:, 0].astype(np.float64)
    if pred.std() == 0 or z.std() == 0:
        return math.nan
    return float(np.corrcoef(pred, z)[0, 1])


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
    options from its manifest by default, e.g. Op Glad IJs' ``max_turned``)."""
    import torch

    from card_envs.agents.net import load_policy, save_policy
    from card_envs.core.progress import tqdm_class
    from card_envs.core.registry import env_class, manifest, resolve_env_id
    from card_envs.rl.az.workers import Workers

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
    state_file = out / "state.json"
    ident = run_identity(env_id, n, options, seed, cfg)
    history: list[dict[str, Any]] = []
    if resume:
        if not state_file.is_file():
            raise FileNotFoundError(f"nothing to resume in {str(out)!r} (no state.json)")
        try:
            saved = json.loads(state_file.read_text())
        except ValueError as e:
            raise ValueError(f"cannot resume {out}: state.json is not JSON ({e})") from None
        refuse_resume(saved, ident, out)
        done = int(saved["round"])
        history = json.loads((out / "history.json").read_text())[:done]
        start = load_policy(out / "start.safetensors", env_id, n, options)
        policy = load_policy(out / saved["current"], env_id, n, options)
    else:
        if state_file.exists() and not overwrite:
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
    start_eval = _start_evaluator(start, env_id, out / "start.safetensors")
    threads = cfg.torch_threads
    old_threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    opt = torch.optim.AdamW(policy.net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    window: list[dict[str, np.ndarray]] = []
    elapsed = float(history[-1]["elapsed"]) if history else 0.0
    selfplay_init = {"seed": seed, "sims": cfg.sims, "considered": cfg.considered,
                     "determinizations": cfg.determinizations, "max_nodes": cfg.nodes,
                     "c_visit": cfg.c_visit, "c_scale": cfg.c_scale, "rescale": cfg.rescale,
                     "mix": cfg.mix, "horizon": cfg.horizon, "prior_temp": cfg.prior_temp}
    init_msg = {"env_id": env_id, "num_players": n, "options": options,
                "config": policy.config(), "selfplay": selfplay_init,
                "start": {"config": start.config(), "weights": _weights(start),
                          "shaping": start_eval.shaping,
                          "potential": manifest(env_id).train.potential
                          if start_eval.shaping else None}}
    search_kw = {"determinizations": cfg.determinizations, "considered": cfg.considered,
                 "max_nodes": cfg.nodes, "c_visit": cfg.c_visit, "c_scale": cfg.c_scale,
                 "rescale": cfg.rescale, "mix": cfg.mix, "horizon": cfg.horizon,
                 "prior_temp": cfg.prior_temp}
    tqdm = tqdm_class()
    bar = None
    try:
        with Workers(cfg.workers, cfg.games, init_msg) as workers:
            if resume:
                folder = out / "resume" / saved["resume"]
                load_optimizer(opt, folder / "optimizer.safetensors")
                window = [load_npz(p) for p in sorted(folder.glob("window_*.npz"))]
                workers.load([load_npz(p) for p in sorted(folder.glob("selfplay_*.npz"))])
            total = rounds if rounds is not None else None
            bar = tqdm(total=total, initial=done, desc=f"{env_id} {n}p self-play",
                       unit="round", disable=not progress)
            while (rounds is None or done < rounds) and \
                    (minutes is None or elapsed < 60.0 * minutes):
                r = done + 1
                t0 = time.perf_counter()
                workers.set_weights(_weights(policy))
                parts = workers.play(cfg.steps)
                t_play = time.perf_counter() - t0
                fresh = _concat(parts)
                decisions = int(sum(int(p["decisions"][0]) for p in parts))
                finished = np.concatenate([p["winners"] for p in parts])
                lengths = np.concatenate([p["lengths"] for p in parts])
                corr = _value_corr(policy, fresh)
                window = (window + [fresh])[-cfg.window:]
                data = _concat(window)
                new = len(fresh["seat"])
                updates = math.ceil(cfg.reuse * new / cfg.minibatch) if new else 0
                rng = np.random.default_rng([seed, r])
                pcoef = 0.0 if r <= cfg.warmup else cfg.policy_coef
                pl, vl, ent = _update(policy, opt, data, updates, cfg.minibatch, rng,
                                      cfg.value_coef, cfg.max_grad_norm, pcoef) if updates \
                    else (math.nan, math.nan, math.nan)
                t_train = time.perf_counter() - t0 - t_play
                elapsed += t_play + t_train
                ckpt = save_policy(policy, out / "checkpoints" / f"round_{r:04d}.safetensors",
                                   info=_info(env_id, n, cfg, seed, r, command, init))
                row: dict[str, Any] = {
                    "round": r, "num_players": n, "samples": new, "buffer": len(data["seat"]),
                    "decisions": decisions, "games": len(lengths),
                    "mean_length": float(lengths.mean()) if len(lengths) else math.nan,
                    "updates": updates, "policy_loss": pl, "value_loss": vl,
                    "policy_entropy": ent, "value_corr": corr,
                    "first_seat_share": float(finished[:, 0].mean()) if len(finished)
                    else math.nan,
                    "selfplay_seconds": t_play, "train_seconds": t_train,
                    "decisions_per_second": decisions / max(t_play, 1e-9),
                    "elapsed": elapsed}
                last = (rounds is not None and r >= rounds) or \
                    (minutes is not None and elapsed >= 60.0 * minutes)
                if r % cfg.eval_every == 0 or last:
                    t_ev = time.perf_counter()
                    workers.set_weights(_weights(policy))
                    row.update(_evaluate(env_id, workers, cfg, seed, r, n, search_kw))
                    row["eval_seconds"] = time.perf_counter() - t_ev
                history.append(row)
                name = save_resume(out, r, opt, window, workers.states())
                write_json(out / "history.json", history)
                write_json(state_file, {**ident, "round": r, "resume": name,
                                         "current": str(ckpt.relative_to(out)),
                                         "elapsed": elapsed, "command": command})
                for old in sorted((out / "resume").glob("round_*"))[:-1]:
                    shutil.rmtree(old, ignore_errors=True)
                done = r
                try:
                    plot_history(history, out / "learning_curve.png", f"{env_id}, {n} seats: "
                          "Gumbel AlphaZero self-play")
                except ImportError:  # matplotlib is the plot extra
                    pass
                bar.update(1)
                bar.set_postfix_str(_postfix(row))
    finally:
        if bar is not None:
            bar.close()
        torch.set_num_threads(old_threads)
    final = save_policy(policy, out / "final.safetensors",
                        info=_info(env_id, n, cfg, seed, done, command, init))
    return AZResult(env_id, n, history, final, out, cfg.as_dict())


def _postfix(row: dict[str, Any]) -> str:
    parts = [f"{row['decisions_per_second']:.0f} dec/s", f"corr {row['value_corr']:.2f}"]
    if "vs_start" in row:
        parts.append(f"vs start {row['vs_start']:.2f}")
    if "net_vs_heuristic" in row:
        parts.append(f"net vs heur {row['net_vs_heuristic']:.2f}")
    return ", ".join(parts)


def _evaluate(env_id: str, workers: Any, cfg: AZSettings, seed: int, r: int, n: int,
              search_kw: dict[str, Any]) -> dict[str, Any]:
    """The round's evaluations (module docstring), played by the workers on deals seeded
    apart from training (the workers hold the round's network: the last weights sent)."""
    from card_envs.core.registry import manifest

    row: dict[str, Any] = {}
    eval_seed = 1_000_003 * (seed + 1) + r
    if cfg.eval_games:
        m = workers.match("search_match", max(1, cfg.eval_games // n), seed=eval_seed,
                          sims=cfg.search_sims, search=search_kw)
        row.update(vs_start=m["win_share"], vs_start_ci=m["ci95"], vs_start_games=m["games"])
    if cfg.heuristic_games and manifest(env_id).heuristic:
        m = workers.match("network_match", max(1, cfg.heuristic_games // n),
                          seed=eval_seed + 7, opponent="heuristic")
        row.update(net_vs_heuristic=m["win_share"], net_vs_heuristic_ci=m["ci95"],
                   net_vs_heuristic_games=m["games"])
    return row


def _info(env_id: str, n: int, cfg: AZSettings, seed: int, rounds: int, command: str | None,
          init: str | Path) -> dict[str, Any]:
    """The training record saved beside the weights."""
    return {"trainer": "az", "env_id": env_id, "num_players": n, "rounds": rounds,
            "seed": seed, "init": str(init), "command": command, "settings": cfg.as_dict()}


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
