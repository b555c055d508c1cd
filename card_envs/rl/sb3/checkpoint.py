"""The resumable checkpoint of a stable-baselines3 self-play run
(:func:`card_envs.rl.sb3.train.train` with ``resume=True``).

``resume/step_<learner steps>/`` holds ``model.zip`` (SB3's own file: the policy's weights and
its optimizer's state; only those are read back, by ``set_parameters``, so no pickle is
loaded), ``pool_<k>.npz`` (the self-play snapshots' weights, slot by slot), ``rng.npz`` (the
global torch, numpy and Python RNGs) and, for a run that normalises rewards,
``reward_norm.npz`` (the return statistics). ``state.json`` names the folder with its files'
sha256 and the counters: learner and opponent steps, PPO updates, SB3's gradient steps, seconds,
the evaluations' schedule and the history's rows. The folder is written first,
then ``history.json`` / ``history.csv``, then ``state.json`` (atomically), and only then are
older folders removed: a kill at any moment leaves the last checkpoint whole.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from card_envs.rl.runs import (
    check_files,
    load_npz,
    read_run_state,
    refuse_resume,
    save_npz,
    sha256_file,
    write_json,
)

__all__ = ["FORMAT", "load_checkpoint", "read_checkpoint", "run_identity", "save_checkpoint"]

FORMAT = "card-envs-sb3-run"
FORMAT_VERSION = 1
#: what a resume may change: the wall-time budget (the run's seconds so far count)
FREE = ("env_id", "players", "seed", "minutes", "options")


def _plain(obj: Any) -> Any:
    """``obj`` as JSON gives it back (tuples become lists)."""
    return json.loads(json.dumps(obj, default=str))


def run_identity(cfg: dict[str, Any]) -> dict[str, Any]:
    """What a resume must match: the format, the game and its version, seats, options, seed
    and every setting (the steps budget too: SB3's schedules follow it) but ``minutes``."""
    from card_envs.core.registry import env_class

    env_id = cfg["env_id"]
    return _plain({"format": FORMAT, "format_version": FORMAT_VERSION, "env_id": env_id,
                   "game_version": env_class(env_id).game_class.version,
                   "num_players": cfg["players"], "options": cfg["options"],
                   "seed": cfg["seed"],
                   "settings": {k: v for k, v in cfg.items() if k not in FREE}})


# ------------------------------------------------------------------------------ RNGs
def _rng_arrays() -> dict[str, np.ndarray]:
    import torch

    kind, keys, pos, has_gauss, gauss = np.random.get_state()
    version, py_state, py_gauss = random.getstate()
    return {"torch": torch.get_rng_state().numpy().copy(), "np_keys": np.asarray(keys),
            "np_rest": np.array([pos, has_gauss, gauss], np.float64),
            "py_state": np.array(py_state, np.int64),
            "py_rest": np.array([version, np.nan if py_gauss is None else py_gauss])}


def _set_rngs(d: dict[str, np.ndarray]) -> None:
    import torch

    torch.set_rng_state(torch.from_numpy(d["torch"].astype(np.uint8)))
    pos, has_gauss, gauss = d["np_rest"]
    np.random.set_state(("MT19937", d["np_keys"].astype(np.uint32), int(pos), int(has_gauss),
                         float(gauss)))
    version, py_gauss = d["py_rest"]
    random.setstate((int(version), tuple(int(x) for x in d["py_state"]),
                     None if np.isnan(py_gauss) else float(py_gauss)))


# ------------------------------------------------------------------------------ save
def save_checkpoint(out: Path, model: Any, pool: Any, reward_norm: Any,
                    ident: dict[str, Any], counters: dict[str, Any],
                    write_history: Any) -> Path:
    """Checkpoint the run (module docstring's order); ``counters`` go to ``state.json``
    (``learner_steps`` names the folder), ``write_history()`` writes the history files.
    Returns the model's path."""
    name = f"step_{int(counters['learner_steps'])}"
    folder = out / "resume" / name
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    model.save(folder / "model.zip")
    for k, sd in enumerate(pool.snapshot_weights()):
        save_npz(folder / f"pool_{k:02d}.npz", sd)
    save_npz(folder / "rng.npz", _rng_arrays())
    if reward_norm is not None:
        rms = reward_norm.ret_rms
        save_npz(folder / "reward_norm.npz", {"mean": np.asarray(rms.mean, np.float64),
                                              "var": np.asarray(rms.var, np.float64),
                                              "count": np.asarray(rms.count, np.float64)})
    write_history()
    files = {p.name: sha256_file(p) for p in sorted(folder.glob("[!.]*"))}
    write_json(out / "state.json", {**ident, "resume": name, "counters": counters,
                                    "files": files})
    for old in (out / "resume").glob("step_*"):
        if old.name != name:
            shutil.rmtree(old, ignore_errors=True)
    return folder / "model.zip"


# ------------------------------------------------------------------------------ resume
def read_checkpoint(out: Path, ident: dict[str, Any]
                    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``state.json`` and the history rows of the run in ``out``, after checking that it is
    the run ``ident`` describes and that its checkpoint's files are whole (one line
    otherwise: ``FileNotFoundError`` or ``ValueError``)."""
    saved = read_run_state(out)
    refuse_resume(saved, ident, out)
    counters, files = saved.get("counters"), saved.get("files")
    if not isinstance(counters, dict) or not isinstance(files, dict) \
            or not isinstance(saved.get("resume"), str) or "model.zip" not in files:
        raise ValueError(f"cannot resume {out}: state.json lacks the checkpoint it saved")
    try:
        check_files(out / "resume" / saved["resume"], files)
    except ValueError as e:
        raise ValueError(f"cannot resume {out}: resume/{saved['resume']}/{e}") from None
    rows = int(counters.get("history_rows", 0))
    try:
        history = json.loads((out / "history.json").read_text())[:rows] if rows else []
    except FileNotFoundError:
        raise FileNotFoundError(f"cannot resume {out}: history.json is missing") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise ValueError(f"cannot resume {out}: history.json is damaged ({e})") from None
    if not isinstance(history, list) or len(history) != rows:
        raise ValueError(f"cannot resume {out}: history.json has not the {rows} rows "
                         "state.json names")
    return saved, history


def load_checkpoint(out: Path, saved: dict[str, Any], model: Any, pool: Any,
                    reward_norm: Any) -> None:
    """Load the checkpoint ``saved`` names into a freshly built ``model`` (weights and
    optimizer; ``num_timesteps`` and SB3's update count), ``pool`` (its snapshots),
    ``reward_norm`` (a ``VecNormalize`` or ``None``) and the global RNGs."""
    folder = out / "resume" / saved["resume"]
    path = folder / "model.zip"
    try:
        model.set_parameters(str(path), exact_match=True, device=model.device)
        pools = sorted(folder.glob("pool_*.npz"))
        weights = []
        for path in pools:
            weights.append(load_npz(path))
        path = folder / "rng.npz"
        rngs = load_npz(path)
        norm = None
        if reward_norm is not None:
            path = folder / "reward_norm.npz"
            norm = load_npz(path)
    except FileNotFoundError:
        raise FileNotFoundError(f"cannot resume {out}: {path.relative_to(out).as_posix()} "
                                "is missing") from None
    except Exception as e:  # noqa: BLE001 - torch, zipfile and numpy raise many kinds
        raise ValueError(f"cannot resume {out}: {path.relative_to(out).as_posix()} is "
                         f"damaged ({type(e).__name__}: {' '.join(str(e).split())})") from None
    c = saved["counters"]
    model.num_timesteps = int(c["learner_steps"])
    model._n_updates = int(c.get("sb3_updates", 0))
    pool.load_snapshots(model, weights, int(c.get("snapshots", len(weights))))
    if norm is not None:
        reward_norm.ret_rms.mean = norm["mean"]
        reward_norm.ret_rms.var = norm["var"]
        reward_norm.ret_rms.count = float(norm["count"])
    _set_rngs(rngs)
