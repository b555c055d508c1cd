"""The files of a self-play run folder (:func:`card_envs.rl.az.train_az`): JSON and arrays
replaced atomically, the optimizer as safetensors, the resume state of a round, the learning
curve, and the run's identity that a resume must match."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np

from card_envs.rl.az.settings import AZSettings
from card_envs.rl.runs import (  # noqa: F401 (shared run-folder files, used by the trainer)
    load_npz,
    load_optimizer,
    save_npz,
    save_optimizer,
    write_json,
)

STATE_FORMAT = "card-envs-az-run"
STATE_VERSION = 1


def save_resume(out: Path, r: int, opt: Any, window: list[dict[str, np.ndarray]],
                 states: list[dict[str, np.ndarray]]) -> str:
    """The state of round ``r`` in ``resume/round_NNNN/`` (written before ``state.json``
    names it); returns its folder name."""
    name = f"round_{r:04d}"
    folder = out / "resume" / name
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    save_optimizer(opt, folder / "optimizer.safetensors")
    for k, part in enumerate(window):
        save_npz(folder / f"window_{k:03d}.npz", part)
    for k, st in enumerate(states):
        save_npz(folder / f"selfplay_{k:03d}.npz", st)
    return name


def plot_history(history: list[dict[str, Any]], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = [h["elapsed"] / 60 for h in history]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
    for key, label, style in (("vs_start", "az (new) vs az (start), equal simulations", "o-"),
                              ("net_vs_heuristic", "network alone vs heuristic", "s--")):
        hs = [h for h in history if key in h]
        if hs:
            a1.errorbar([h["elapsed"] / 60 for h in hs], [h[key] for h in hs],
                        yerr=[[max(0.0, h[key] - h[f"{key}_ci"][0]) for h in hs],
                              [max(0.0, h[f"{key}_ci"][1] - h[key]) for h in hs]],
                        fmt=style, capsize=3, label=label)
    n = history[0].get("num_players", 2) if history else 2
    a1.axhline(1.0 / n, color="0.6", lw=0.8)
    a1.set_ylim(0, 1)
    a1.set_xlabel("minutes of self-play and training")
    a1.set_ylabel("win share (95% CI)")
    if a1.get_legend_handles_labels()[0]:
        a1.legend(fontsize=8, loc="lower right")
    a2.plot(x, [h["value_corr"] for h in history], "o-", label="value vs result (corr)")
    a2.plot(x, [h["policy_loss"] for h in history], "^-", label="policy loss")
    a2.plot(x, [h["value_loss"] for h in history], "v-", label="value loss")
    a2.set_xlabel("minutes of self-play and training")
    a2.legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def run_identity(env_id: str, n: int, options: dict[str, Any], seed: int,
              cfg: AZSettings) -> dict[str, Any]:
    from card_envs.core.registry import env_class

    return {"format": STATE_FORMAT, "format_version": STATE_VERSION, "env_id": env_id,
            "game_version": env_class(env_id).game_class.version, "num_players": n,
            "options": options, "seed": seed, "settings": cfg.as_dict()}


def refuse_resume(saved: dict[str, Any], want: dict[str, Any], out: Path) -> None:
    """One line saying what differs between a saved run and the one asked for."""
    from card_envs.rl.runs import refuse_resume as refuse

    refuse(saved, want, out)
