"""The files of a self-play run folder (:func:`card_envs.rl.az.train_az`): JSON and arrays
replaced atomically, the optimizer as safetensors, the resume state of a round, the learning
curve, and the run's identity that a resume must match.

A round's checkpoint is written in an order that a kill at any moment cannot break: the
round's network and ``resume/round_NNNN/`` first (each file replaced atomically), then
``history.json``, then ``state.json`` (atomically) naming them with their sha256, and only then
are the other resume folders removed. ``state.json`` therefore always names a complete round;
a resume checks the checksums and refuses a missing or damaged file with one line."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from card_envs.rl.az.settings import AZSettings
from card_envs.rl.runs import (  # noqa: F401 (shared run-folder files, used by the trainer)
    check_files,
    load_npz,
    load_optimizer,
    read_run_state,
    resume_command,
    save_npz,
    save_optimizer,
    sha256_file,
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


def save_round(out: Path, r: int, opt: Any, window: list[dict[str, np.ndarray]],
               states: list[dict[str, np.ndarray]], history: list[dict[str, Any]],
               state: dict[str, Any]) -> None:
    """Checkpoint round ``r`` (the module docstring's order): ``state`` is the rest of
    ``state.json`` (the identity, ``round``, ``current``: the round's network, relative)."""
    name = save_resume(out, r, opt, window, states)
    write_json(out / "history.json", history)
    folder = out / "resume" / name
    files = {p.name: sha256_file(p) for p in sorted(folder.glob("[!.]*"))}
    networks = {rel: sha256_file(out / rel) for rel in ("start.safetensors", state["current"])}
    write_json(out / "state.json", {**state, "resume": name, "files": files,
                                    "networks": networks})
    for old in (out / "resume").glob("round_*"):
        if old.name != name:
            shutil.rmtree(old, ignore_errors=True)


def _damaged(out: Path, rel: str, e: BaseException) -> ValueError:
    return ValueError(f"cannot resume {out}: {rel} is damaged ({type(e).__name__}: "
                      f"{' '.join(str(e).split())})")


def read_run(out: Path, ident: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``state.json`` and the history of the run in ``out`` to resume, after checking that it
    is the run ``ident`` describes and that the files it names are whole (one line
    otherwise: ``FileNotFoundError`` or ``ValueError``)."""
    saved = read_run_state(out)
    refuse_resume(saved, ident, out)
    if not isinstance(saved.get("round"), int) or not isinstance(saved.get("resume"), str) \
            or not isinstance(saved.get("current"), str) \
            or not isinstance(saved.get("files", {}), dict):
        raise ValueError(f"cannot resume {out}: state.json lacks the round it saved")
    if "files" in saved:  # (runs saved before the checksums have none)
        where = Path("resume") / saved["resume"]
        try:
            check_files(out / where, saved["files"])
            for rel, digest in (saved.get("networks") or {}).items():
                where = Path(rel).parent
                check_files(out / where, {rel: digest})
        except ValueError as e:
            raise ValueError(f"cannot resume {out}: {(where / str(e)).as_posix()}") from None
    done = saved["round"]
    try:
        history = json.loads((out / "history.json").read_text())[:done]
    except FileNotFoundError:
        raise FileNotFoundError(f"cannot resume {out}: history.json is missing") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise _damaged(out, "history.json", e) from None
    if not isinstance(history, list) or len(history) != done:
        raise ValueError(f"cannot resume {out}: history.json has not the {done} rounds "
                         "state.json names")
    return saved, history


def load_resume(out: Path, saved: dict[str, Any], opt: Any
                ) -> tuple[list[dict[str, np.ndarray]], list[dict[str, np.ndarray]]]:
    """Load the optimizer's state of the resume folder ``saved`` names into ``opt``; the
    replay window and the self-play states (one line for a missing or damaged file)."""
    folder = out / "resume" / saved["resume"]
    if not (folder / "optimizer.safetensors").is_file():
        raise FileNotFoundError(f"cannot resume {out}: resume/{saved['resume']}/"
                                "optimizer.safetensors is missing")
    path = folder / "optimizer.safetensors"
    try:
        load_optimizer(opt, path)
        window = []
        for path in sorted(folder.glob("window_*.npz")):
            window.append(load_npz(path))
        states = []
        for path in sorted(folder.glob("selfplay_*.npz")):
            states.append(load_npz(path))
    except (OSError, ValueError, KeyError, EOFError, RuntimeError, zipfile.BadZipFile) as e:
        raise _damaged(out, path.relative_to(out).as_posix(), e) from None
    return window, states


def saved_round(out: Path) -> int | None:
    """The last round ``state.json`` in ``out`` names (``None``: none readable)."""
    try:
        r = json.loads((out / "state.json").read_text()).get("round")
    except (OSError, ValueError, AttributeError):
        return None
    return r if isinstance(r, int) else None


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
    """What a resume must match: the format, the game and its version, seats, options, seed
    and settings."""
    from card_envs.core.registry import env_class

    return {"format": STATE_FORMAT, "format_version": STATE_VERSION, "env_id": env_id,
            "game_version": env_class(env_id).game_class.version, "num_players": n,
            "options": options, "seed": seed, "settings": cfg.as_dict()}


def refuse_resume(saved: dict[str, Any], want: dict[str, Any], out: Path) -> None:
    """One line saying what differs between a saved run and the one asked for."""
    from card_envs.rl.runs import refuse_resume as refuse

    refuse(saved, want, out)
