"""Expert iteration for the ``az`` agent: the search teaches the network it searches with.

>>> from card_envs.rl.expert import expert_iteration
>>> res = expert_iteration("isflak_v0", rounds=6, out_dir="runs/az_isflak")   # doctest: +SKIP

Each **round**:

1. **Self-play**: ``games`` games of the ``az`` agent against itself with the current network
   (``sims`` simulations and ``determinizations`` per move, spread over ``workers``
   processes). At every decision with more than one legal move the seat to act records its
   observation, its legal moves, the search's root visit distribution and root value. The
   first ``explore`` decisions of each game sample their move from the visits (temperature 1),
   the rest play the most visited move. Each game's deal and the searchers' RNG come from
   ``seed``, the round and the game's index: the games do not depend on ``workers``.
2. **Targets**: the policy target is the visit distribution; the value target is
   ``(1 - value_mix) z + value_mix (2 q - 1)``, ``z = 2 share - 1`` the game's result for that
   seat (share: 1 for a sole winner, ``1/k`` for ``k`` tied winners, 0 otherwise) and ``q`` the
   search's root value (a share). The value head then predicts the return of the ``win`` reward
   mode directly, which is what ``az`` reads (``share = 0.5 + value_scale v``); a network that
   started from a PPO baseline trained with reward shaping stops needing the shaping term.
3. **Update**: ``epochs`` passes over the samples of the last ``window`` rounds in minibatches
   of ``minibatch``: cross-entropy of the network's policy over the legal moves against the
   visit distribution, plus ``value_coef`` times the squared value error; Adam (``lr``),
   gradient-norm clipping at 1.
4. **Evaluation** (the learning curve): ``az`` with the new network against ``az`` with the
   network the run started from, both at ``eval_sims`` simulations, over ``eval_games``
   duplicate arena games; the network alone (``ppo:path=...``) against the heuristic; the
   correlation between the value head's prediction (before the update) and the results of the
   round's own games.

The run folder holds ``checkpoints/round_NNNN.safetensors``, ``history.json`` (a row per
round), ``buffer.npz`` (the samples of the window, plain arrays, no pickle), ``state.json`` and
``learning_curve.png``; ``final.safetensors`` (+ ``.json``) is the last round's network, a
policy file for ``az:path=...`` and ``ppo:path=...``. ``resume=True`` continues a run from its
last checkpoint and buffer (the optimizer's moments start afresh).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from card_envs.core.errors import OptionError

__all__ = ["EXPERT_DEFAULTS", "ExpertResult", "ExpertSettings", "expert_iteration",
           "self_play_games"]


@dataclass
class ExpertSettings:
    """The settings of a run (module docstring)."""

    games: int = 200
    sims: int = 200
    determinizations: int = 8
    explore: int = 8
    c_puct: float = 0.5
    value_mix: float = 0.5
    window: int = 3
    epochs: int = 2
    minibatch: int = 256
    lr: float = 3e-4
    value_coef: float = 1.0
    eval_games: int = 40
    eval_sims: int = 200
    heuristic_games: int = 100

    def check(self) -> None:
        """``OptionError`` for a value out of range (NaN and infinities included)."""
        ints = {"games": (1, 10**6), "sims": (1, 10**5), "determinizations": (1, 4096),
                "explore": (0, 10**4), "window": (1, 1000), "epochs": (1, 100),
                "minibatch": (1, 10**5), "eval_games": (0, 10**5), "eval_sims": (1, 10**5),
                "heuristic_games": (0, 10**5)}
        floats = {"c_puct": (0.0, 100.0), "value_mix": (0.0, 1.0), "lr": (1e-8, 1.0),
                  "value_coef": (0.0, 100.0)}
        for key, (lo, hi) in ints.items():
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not lo <= v <= hi:
                raise OptionError(f"expert iteration: {key} must be an integer in "
                                  f"[{lo}, {hi}], got {v!r}")
        for key, (lo, hi) in floats.items():
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, (int, float, np.floating)) \
                    or not math.isfinite(v) or not lo <= v <= hi:
                raise OptionError(f"expert iteration: {key} must be a number in [{lo}, {hi}], "
                                  f"got {v!r}")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


EXPERT_DEFAULTS = ExpertSettings().as_dict()


@dataclass
class ExpertResult:
    """What :func:`expert_iteration` returns: the history rows, the final policy file and the
    run folder."""

    env_id: str
    history: list[dict[str, Any]]
    final_path: Path
    out_dir: Path
    settings: dict[str, Any]

    def table(self) -> str:
        """One line per round: samples, losses, value correlation, evaluations."""
        head = (f"{'round':>5}{'samples':>9}{'pol loss':>9}{'val loss':>9}{'v corr':>8}"
                f"{'az new vs start':>24}{'net vs heur':>13}{'s':>7}")
        lines = [head, "-" * len(head)]
        for r in self.history:
            ev = (f"{r['vs_start_win_rate']:.3f} [{r['vs_start_ci'][0]:.2f}, "
                  f"{r['vs_start_ci'][1]:.2f}]" if "vs_start_win_rate" in r else "-")
            hv = f"{r['net_vs_heuristic']:.3f}" if "net_vs_heuristic" in r else "-"
            lines.append(f"{r['round']:>5}{r['samples']:>9}{r['policy_loss']:>9.3f}"
                         f"{r['value_loss']:>9.3f}{r['value_corr']:>8.3f}{ev:>24}{hv:>13}"
                         f"{r['seconds']:>7.0f}")
        return "\n".join(lines)


# ---------------------------------------------------------------- self-play (worker side)

_AGENTS: dict[tuple[Any, ...], Any] = {}


def _agent(env_id: str, path: str, sims: int, dets: int, c_puct: float,
           options: dict[str, Any]) -> Any:
    """An ``az`` agent for this process (one per network file and settings)."""
    from card_envs.agents.az import AZAgent

    key = (env_id, path, sims, dets, c_puct, tuple(sorted(options.items())))
    if key not in _AGENTS:
        _AGENTS.clear()
        _AGENTS[key] = AZAgent(env_id, seed=0, iterations=sims, determinizations=dets,
                               c_puct=c_puct, path=path, **options)
    return _AGENTS[key]


def game_seed(seed: int, round_: int, game: int) -> int:
    """The deal (and searchers' RNG) of one self-play game."""
    return int(np.random.SeedSequence([seed, round_, game]).generate_state(1, np.uint64)[0]
               >> np.uint64(1))


def self_play_games(task: dict[str, Any]) -> dict[str, np.ndarray]:
    """Play the games ``task["games"]`` (indices) of one round; the samples as arrays
    (``obs``, ``mask``, ``pi`` (float16 visit shares), ``q``, ``z`` (the result, -1..1),
    ``seat``, ``game``) plus ``decisions`` (all moves played)."""
    from card_envs.core import kernels as K

    env_id, options = task["env_id"], dict(task.get("options") or {})
    agent = _agent(env_id, task["path"], task["sims"], task["dets"], task["c_puct"], options)
    eng = agent.engine
    na = eng.num_actions
    obs, masks, pis, qs, seats, games, zs = [], [], [], [], [], [], []
    decisions = 0
    for gi in task["games"]:
        s = game_seed(task["seed"], task["round"], gi)
        agent.reset(seed=s)
        state = eng.new_state(s)
        first = len(seats)
        moves = 0
        while int(state[K.CUR]) >= 0:
            seat = int(state[K.CUR])
            mask = eng.legal_mask(state)
            legal = np.flatnonzero(mask)
            decisions += 1
            if legal.size == 1:
                eng.step(state, int(legal[0]))
                continue
            visits, value = agent.search(state)
            v = visits[legal].astype(np.float64)
            pi = np.zeros(na, np.float16)
            pi[legal] = v / v.sum()
            obs.append(eng.observe(state, seat))
            masks.append(mask)
            pis.append(pi)
            qs.append(value)
            seats.append(seat)
            games.append(gi)
            if moves < task["explore"]:
                a = int(agent.rng.choices(legal.tolist(), weights=v.tolist())[0])
            else:
                q = np.nan_to_num(agent.last_values[legal], nan=-1.0)
                a = int(legal[np.lexsort((q, v))[-1]])
            moves += 1
            eng.step(state, a)
        _, winners = eng.outcome(state)  # 0/1 per seat
        won = np.asarray(winners, np.float64)
        share = won / max(1.0, won.sum())
        zs.extend(2.0 * share[seats[k]] - 1.0 for k in range(first, len(seats)))
    return {"obs": np.asarray(obs), "mask": np.asarray(masks, np.int8),
            "pi": np.asarray(pis, np.float16), "q": np.asarray(qs, np.float32),
            "z": np.asarray(zs, np.float32), "seat": np.asarray(seats, np.int8),
            "game": np.asarray(games, np.int32), "decisions": np.asarray([decisions])}


def _concat(parts: Sequence[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    keys = [k for k in parts[0] if k != "decisions"]
    return {k: np.concatenate([p[k] for p in parts]) for k in keys}


# ------------------------------------------------------------------- learner side


def _train(policy: Any, data: dict[str, np.ndarray], cfg: ExpertSettings,
           rng: np.random.Generator, opt: Any) -> tuple[float, float]:
    """``epochs`` passes of the policy/value losses over ``data``; mean losses."""
    import torch

    from card_envs.agents.net import segment_log_softmax

    net, pin = policy.net, policy.pinput
    net.train()
    target = (1.0 - cfg.value_mix) * data["z"] + cfg.value_mix * (2.0 * data["q"] - 1.0)
    n = len(target)
    pl = vl = 0.0
    batches = 0
    for _ in range(cfg.epochs):
        order = rng.permutation(n)
        for lo in range(0, n, cfg.minibatch):
            idx = np.sort(order[lo:lo + cfg.minibatch])
            x, rows, acts, off = pin.compute(data["obs"][idx], data["mask"][idx])
            seg = np.repeat(np.arange(len(idx), dtype=np.int64), np.diff(off))
            logits, values = net(torch.from_numpy(x), torch.from_numpy(rows),
                                 torch.from_numpy(acts), torch.from_numpy(seg))
            logp = segment_log_softmax(logits, torch.from_numpy(seg), len(idx))
            pi = torch.from_numpy(data["pi"][idx][seg, acts].astype(np.float32))
            ploss = -(pi * logp).sum() / len(idx)
            vloss = ((values - torch.from_numpy(target[idx].astype(np.float32))) ** 2).mean()
            loss = ploss + cfg.value_coef * vloss
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
            pl += float(ploss.detach())
            vl += float(vloss.detach())
            batches += 1
    net.eval()
    return pl / max(1, batches), vl / max(1, batches)


def _value_corr(policy: Any, data: dict[str, np.ndarray], shaping: float,
                potential: Any) -> float:
    """Correlation of the value head's prediction (in the ``az`` reading, shaping added back)
    with the games' results."""
    import torch

    if len(data["z"]) < 3:
        return math.nan
    with torch.inference_mode():
        vals = []
        for lo in range(0, len(data["z"]), 2048):
            o, m = data["obs"][lo:lo + 2048], data["mask"][lo:lo + 2048]
            _, _, v = policy.act(o, m)
            v = np.asarray(v, np.float64)
            if shaping and potential is not None:
                v = v + shaping * np.asarray(potential(o, policy.num_players), np.float64)
            vals.append(v)
    v = np.concatenate(vals)
    if v.std() == 0 or data["z"].std() == 0:
        return math.nan
    return float(np.corrcoef(v, data["z"])[0, 1])


def _plot(history: list[dict[str, Any]], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = [h["round"] for h in history]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))
    if any("vs_start_win_rate" in h for h in history):
        hs = [h for h in history if "vs_start_win_rate" in h]
        a1.errorbar([h["round"] for h in hs], [h["vs_start_win_rate"] for h in hs],
                    yerr=[[h["vs_start_win_rate"] - h["vs_start_ci"][0] for h in hs],
                          [h["vs_start_ci"][1] - h["vs_start_win_rate"] for h in hs]],
                    marker="o", capsize=3, label="az (this round) vs az (start)")
    if any("net_vs_heuristic" in h for h in history):
        hs = [h for h in history if "net_vs_heuristic" in h]
        a1.plot([h["round"] for h in hs], [h["net_vs_heuristic"] for h in hs], "s--",
                label="network alone vs heuristic")
    a1.axhline(0.5, color="0.6", lw=0.8)
    a1.set_ylim(0, 1)
    a1.set_xlabel("round")
    a1.set_ylabel("win rate (95% CI)")
    a1.legend(fontsize=8)
    a2.plot(x, [h["value_corr"] for h in history], "o-", label="value vs result (corr)")
    a2.plot(x, [h["policy_loss"] for h in history], "^-", label="policy loss")
    a2.plot(x, [h["value_loss"] for h in history], "v-", label="value loss")
    a2.set_xlabel("round")
    a2.legend(fontsize=8)
    from matplotlib.ticker import MaxNLocator

    for ax in (a1, a2):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _evaluate(env_id: str, new: Path, start: Path, cfg: ExpertSettings, seed: int,
              workers: int, options: dict[str, Any]) -> dict[str, Any]:
    from card_envs.arena import run_arena

    row: dict[str, Any] = {}
    if cfg.eval_games:
        a = f"az:iterations={cfg.eval_sims},path={new}"
        b = f"az:iterations={cfg.eval_sims},path={start}"
        res = run_arena(env_id, [a, b], cfg.eval_games, seed=seed, workers=workers,
                        progress=False, **options)
        row.update(vs_start_win_rate=res[a].win_rate, vs_start_ci=list(res[a].ci95),
                   vs_start_games=res[a].games)
    if cfg.heuristic_games:
        a = f"ppo:path={new}"
        res = run_arena(env_id, [a, "heuristic"], cfg.heuristic_games, seed=seed,
                        workers=1, progress=False, **options)
        row.update(net_vs_heuristic=res[a].win_rate, net_vs_heuristic_ci=list(res[a].ci95))
    return row


def expert_iteration(env_id: str, rounds: int = 5, minutes: float | None = None,
                     out_dir: str | Path = "runs/az", init: str | Path | None = None,
                     settings: dict[str, Any] | None = None, seed: int = 0,
                     workers: int = 2, resume: bool = False, overwrite: bool = False,
                     progress: bool = True, command: str | None = None,
                     **options: Any) -> ExpertResult:
    """Run expert iteration (module docstring) for ``rounds`` rounds (or until ``minutes``
    of wall time have passed, whichever comes first) from the network ``init`` (default: the
    game's PPO baseline), writing the run to ``out_dir``."""
    import torch

    from card_envs.agents.az import _training_shaping
    from card_envs.agents.net import load_policy, save_policy
    from card_envs.agents.ppo import baseline_path
    from card_envs.core.manifest import load
    from card_envs.core.progress import tqdm_class
    from card_envs.core.registry import manifest, resolve_env_id

    env_id = resolve_env_id(env_id)
    unknown = set(settings or {}) - set(EXPERT_DEFAULTS)
    if unknown:
        raise OptionError(f"expert iteration: unknown settings {sorted(unknown)}; known: "
                          f"{sorted(EXPERT_DEFAULTS)}")
    cfg = ExpertSettings(**{**EXPERT_DEFAULTS, **(settings or {})})
    cfg.check()
    if not 1 <= int(rounds) <= 10**5:
        raise OptionError(f"expert iteration: rounds must be in [1, 100000], got {rounds!r}")
    if minutes is not None and not (math.isfinite(minutes) and minutes > 0):
        raise OptionError(f"expert iteration: minutes must be a positive number, got "
                          f"{minutes!r}")
    if not 1 <= int(workers) <= 256:
        raise OptionError(f"expert iteration: workers must be in [1, 256], got {workers!r}")
    out = Path(out_dir)
    ckpts = out / "checkpoints"
    state_file = out / "state.json"
    history: list[dict[str, Any]] = []
    if resume:
        if not state_file.is_file():
            raise FileNotFoundError(f"nothing to resume in {str(out)!r} (no state.json)")
        st = json.loads(state_file.read_text())
        if st.get("env_id") != env_id:
            raise ValueError(f"{out} holds a run of {st.get('env_id')}, not {env_id}")
        start_path = Path(st["start"])
        current = Path(st["current"])
        done, seed = int(st["round"]), int(st["seed"])
        cfg = ExpertSettings(**{**EXPERT_DEFAULTS, **st["settings"], **(settings or {})})
        cfg.check()
        history = json.loads((out / "history.json").read_text())
    else:
        if state_file.exists() and not overwrite:
            raise FileExistsError(f"out_dir {str(out)!r} already holds a run; pass "
                                  "overwrite=True (--overwrite) or resume=True (--resume)")
        ckpts.mkdir(parents=True, exist_ok=True)
        for old in ckpts.glob("round_*"):
            old.unlink()
        for name in ("buffer.npz", "history.json", "state.json"):
            (out / name).unlink(missing_ok=True)
        start_path = Path(init) if init else baseline_path(env_id, 2)
        current = start_path
        done = 0
    policy = load_policy(current, env_id, 2, options)
    shaping = _training_shaping(policy, str(current))
    pot_path = manifest(env_id).train.potential if shaping else None
    potential = load(pot_path) if pot_path else None
    buffer: list[dict[str, np.ndarray]] = []
    if resume and (out / "buffer.npz").is_file():
        with np.load(out / "buffer.npz", allow_pickle=False) as f:
            rnd = f["round"]
            for r in np.unique(rnd):
                sel = rnd == r
                buffer.append({k: f[k][sel] for k in f.files if k != "round"})
    opt = torch.optim.Adam(policy.net.parameters(), lr=cfg.lr)
    torch.manual_seed(seed)
    rng = np.random.default_rng([seed, done])
    tqdm = tqdm_class()
    t_start = time.perf_counter()
    base = {"env_id": env_id, "sims": cfg.sims, "dets": cfg.determinizations,
            "c_puct": cfg.c_puct, "explore": cfg.explore, "seed": seed, "options": options}
    chunks = max(1, min(cfg.games, 4 * workers))
    pool = ProcessPoolExecutor(workers, _mp_context()) if workers > 1 else None
    try:
        bar = tqdm(total=rounds, initial=min(done, rounds), desc=f"{env_id} rounds",
                   disable=not progress, unit="round")
        while done < rounds:
            if minutes is not None and time.perf_counter() - t_start > 60 * minutes:
                break
            t0 = time.perf_counter()
            r = done + 1
            ids = np.array_split(np.arange(cfg.games), chunks)
            tasks = [{**base, "path": str(current), "round": r, "games": c.tolist()}
                     for c in ids if len(c)]
            games_bar = tqdm(total=cfg.games, desc=f"round {r} self-play", leave=False,
                             disable=not progress, unit="game")
            parts = []
            runner = pool.map(self_play_games, tasks) if pool else map(self_play_games, tasks)
            for task, part in zip(tasks, runner):
                parts.append(part)
                games_bar.update(len(task["games"]))
            games_bar.close()
            t_play = time.perf_counter() - t0
            fresh = _concat(parts)
            decisions = int(sum(int(p["decisions"][0]) for p in parts))
            corr = _value_corr(policy, fresh, shaping, potential)
            buffer = (buffer + [fresh])[-cfg.window:]
            data = _concat(buffer)
            pl, vl = _train(policy, data, cfg, rng, opt)
            shaping, potential = 0.0, None  # the value head now predicts the plain result
            path = save_policy(policy, ckpts / f"round_{r:04d}.safetensors",
                               info=_info(env_id, cfg, seed, r, command, start_path))
            current = path
            t_train = time.perf_counter() - t0 - t_play
            row = {"round": r, "games": cfg.games, "decisions": decisions,
                   "samples": int(len(fresh["z"])), "buffer": int(len(data["z"])),
                   "policy_loss": pl, "value_loss": vl, "value_corr": corr,
                   "self_play_seconds": t_play, "train_seconds": t_train}
            row.update(_evaluate(env_id, path, start_path, cfg, seed + 1000 + r, workers,
                                 options))
            row["seconds"] = time.perf_counter() - t0
            row["eval_seconds"] = row["seconds"] - t_play - t_train
            history.append(row)
            done = r
            _save_round(out, buffer, history, env_id, start_path, current, done, seed, cfg)
            _plot(history, out / "learning_curve.png", f"{env_id}: expert iteration")
            bar.update(1)
            bar.set_postfix(corr=f"{corr:.2f}", vs_start=f"{row.get('vs_start_win_rate', 0):.2f}")
        bar.close()
    finally:
        if pool is not None:
            pool.shutdown()
    final = out / "final.safetensors"
    info = _info(env_id, cfg, seed, done, command, start_path)
    save_policy(policy if done else load_policy(current, env_id, 2, options), final, info)
    (out / "summary.json").write_text(json.dumps({"env_id": env_id, "rounds": done,
                                                  "final": str(final), "history": history,
                                                  "settings": cfg.as_dict()}, indent=1,
                                                 default=str) + "\n")
    return ExpertResult(env_id, history, final, out, cfg.as_dict())


def _mp_context() -> Any:
    import multiprocessing

    return multiprocessing.get_context("spawn")


def _info(env_id: str, cfg: ExpertSettings, seed: int, rounds: int, command: str | None,
          start: Path) -> dict[str, Any]:
    """The training record saved beside the weights (``settings.shaping`` 0: the value head
    predicts the plain result)."""
    return {"trainer": "expert_iteration", "env_id": env_id, "rounds": rounds, "seed": seed,
            "start": str(start), "command": command,
            "settings": {**cfg.as_dict(), "shaping": 0.0}}


def _save_round(out: Path, buffer: list[dict[str, np.ndarray]], history: list[dict[str, Any]],
                env_id: str, start: Path, current: Path, done: int, seed: int,
                cfg: ExpertSettings) -> None:
    """What ``resume`` needs, written after every round (the state file last)."""
    data = _concat(buffer)
    rounds = np.concatenate([np.full(len(b["z"]), i, np.int32) for i, b in enumerate(buffer)])
    tmp = out / "buffer.tmp.npz"
    np.savez(tmp, round=rounds, **data)
    tmp.replace(out / "buffer.npz")
    (out / "history.json").write_text(json.dumps(history, indent=1, default=str) + "\n")
    (out / "state.json").write_text(json.dumps({
        "env_id": env_id, "start": str(start), "current": str(current), "round": done,
        "seed": seed, "settings": cfg.as_dict()}, indent=1) + "\n")
