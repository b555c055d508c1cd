"""The learner's side of a self-play round (:func:`card_envs.rl.az.train_az`): the replay
window's samples, the network's update on them, the value head's correlation with the results,
the round's evaluations, and the records a run writes beside its networks."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from card_envs.rl.az.settings import AZSettings

__all__ = ["concat", "evaluate_round", "postfix", "run_info", "update", "value_corr",
           "weights_of"]


def weights_of(policy: Any) -> dict[str, np.ndarray]:
    """A NetPolicy's weights as arrays (what the workers load)."""
    return {k: v.detach().cpu().numpy().copy() for k, v in policy.net.state_dict().items()}


_KEYS = ("obs", "mask", "pi", "pi_len", "z", "seat", "value", "game")


def concat(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
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


def update(policy: Any, opt: Any, data: dict[str, np.ndarray], updates: int, minibatch: int,
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


def value_corr(policy: Any, data: dict[str, np.ndarray]) -> float:
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


def postfix(row: dict[str, Any]) -> str:
    """The progress bar's summary of a round."""
    parts = [f"{row['decisions_per_second']:.0f} dec/s", f"corr {row['value_corr']:.2f}"]
    if "vs_start" in row:
        parts.append(f"vs start {row['vs_start']:.2f}")
    if "net_vs_heuristic" in row:
        parts.append(f"net vs heur {row['net_vs_heuristic']:.2f}")
    return ", ".join(parts)


def evaluate_round(env_id: str, workers: Any, cfg: AZSettings, seed: int, r: int, n: int,
                   search_kw: dict[str, Any], stop: Any = None) -> dict[str, Any]:
    """The round's evaluations (the trainer's docstring), played by the workers on deals
    seeded apart from training (the workers hold the round's network: the last weights sent).
    ``stop`` (a callable) is passed on to :meth:`Workers.match`."""
    from card_envs.core.registry import manifest

    row: dict[str, Any] = {}
    eval_seed = 1_000_003 * (seed + 1) + r
    if cfg.eval_games:
        m = workers.match("search_match", max(1, cfg.eval_games // n), seed=eval_seed,
                          sims=cfg.search_sims, search=search_kw, stop=stop)
        row.update(vs_start=m["win_share"], vs_start_ci=m["ci95"], vs_start_games=m["games"])
    if cfg.heuristic_games and manifest(env_id).heuristic:
        m = workers.match("network_match", max(1, cfg.heuristic_games // n),
                          seed=eval_seed + 7, opponent="heuristic", stop=stop)
        row.update(net_vs_heuristic=m["win_share"], net_vs_heuristic_ci=m["ci95"],
                   net_vs_heuristic_games=m["games"])
    return row


def run_info(env_id: str, n: int, cfg: AZSettings, seed: int, rounds: int,
             command: str | None, init: str | Path) -> dict[str, Any]:
    """The training record saved beside the weights."""
    return {"trainer": "az", "env_id": env_id, "num_players": n, "rounds": rounds,
            "seed": seed, "init": str(init), "command": command, "settings": cfg.as_dict()}
