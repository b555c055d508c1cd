"""Resumable checkpoints of the native PPO (``<out>/resume/``): everything the rest of a run
depends on, so that a run stopped and resumed ends as the run never stopped would (same
weights, same history; timings apart).

A checkpoint is taken between two iterations. It holds the learner (network, critic, Adam's
moments, learning rate, its random stream, the counters), the league (every snapshot's weights
and ids), each sampler's games (the batched engine's arrays, every game's owners and deal id,
its random streams) and, for a pipelined run, the rollout played but not yet learned from: not
its samples (tens of MB) but what replays it exactly (the samplers' state before it, the
weights and league it was played with). The trainer's own position (wall time, next
evaluation, next snapshot, history rows) goes into ``state.json``.

Written so that a kill at any moment leaves the previous checkpoint loadable: the files go into
a new folder, ``state.json`` (replaced atomically) names it with every file's sha256 once it is
complete, and older folders are removed only then. :func:`load_checkpoint` checks the run's
identity (game, game version, seat count, options, seed, settings, samplers) and every file's
checksum, and raises ``ValueError`` / ``FileNotFoundError`` with one line otherwise.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import torch

from card_envs.rl.ppo.rollout import load_arrays as _load
from card_envs.rl.ppo.rollout import state_arrays
from card_envs.rl.ppo.run import PPORun
from card_envs.rl.runs import (
    check_files,
    load_npz,
    load_optimizer,
    read_run_state,
    refuse_resume,
    save_npz,
    save_optimizer,
    sha256_file,
    write_json,
)

__all__ = ["FORMAT", "check_resume", "identity", "load_checkpoint", "read_state",
           "save_checkpoint"]

FORMAT, FORMAT_VERSION = "card-envs-ppo-run", 1
_KEYS = ("format", "format_version", "env_id", "game_version", "num_players", "options",
         "seed", "samplers")


def identity(env_id: str, players: int, options: dict[str, Any], seed: int,
             cfg: dict[str, Any], samplers: int) -> dict[str, Any]:
    """What a resume must match: the game and its version, seats, options, seed, settings,
    samplers."""
    from card_envs.core.registry import env_class

    return {"format": FORMAT, "format_version": FORMAT_VERSION, "env_id": env_id,
            "game_version": env_class(env_id).game_class.version, "num_players": players,
            "options": json.loads(json.dumps(options, default=str)), "seed": seed,
            "samplers": samplers, "settings": json.loads(json.dumps(cfg))}


def _identity(run: PPORun) -> dict[str, Any]:
    return identity(run.env_id, run.n, run.options, run.seed, run.cfg, len(run.sizes))


def check_resume(out: Path, ident: dict[str, Any]) -> dict[str, Any]:
    """``out``'s checkpoint state if it belongs to the run ``ident``; else a one-line
    ``ValueError`` saying what differs (``FileNotFoundError`` if there is none)."""
    state = read_state(out)
    refuse_resume(state, ident, out, _KEYS)
    return state


def _write_weights(path: Path, arrays: dict[str, np.ndarray]) -> None:
    from card_envs.agents.weights import write_weights

    write_weights(path, {k: np.asarray(v) for k, v in arrays.items()})


def _read_weights(path: Path) -> dict[str, np.ndarray]:
    from card_envs.agents.weights import read_weights

    return read_weights(path)[0]


def _net_arrays(weights: Any) -> dict[str, np.ndarray]:
    return state_arrays(weights) if isinstance(weights, torch.nn.Module) else weights


def save_checkpoint(run: PPORun, out: Path, loop: dict[str, Any]) -> Path:
    """Write the run's checkpoint (module docstring) with the trainer's position ``loop``
    (JSON-able); returns its folder."""
    if run.remote is not None:
        raise ValueError("checkpoints need the samplers in this process (not ray=...)")
    root = out / "resume"
    root.mkdir(parents=True, exist_ok=True)
    name = f"update_{run.updates:07d}"
    tmp = root / f".{name}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    learner = state_arrays(run.net)
    if run.critic is not None:
        learner.update({f"critic.{k}": v for k, v in state_arrays(run.critic).items()})
    _write_weights(tmp / "learner.safetensors", learner)
    save_optimizer(run.opt, tmp / "optimizer.safetensors")
    replay = run.pipeline and run.pending is not None
    pools = {sid: w for sid, w in run.pool}
    if replay:
        pools.update({sid: w for sid, w in run.pending_pool})
        net_w, critic_w = run.pending_weights
        behaviour = dict(net_w)
        if critic_w is not None:
            behaviour.update({f"critic.{k}": v for k, v in critic_w.items()})
        _write_weights(tmp / "behaviour.safetensors", behaviour)
    for sid, w in pools.items():
        _write_weights(tmp / f"snapshot_{sid}.safetensors", _net_arrays(w))
    samplers = run.pending_from if replay else [s.get_state() for s in run.samplers]
    for k, (arrays, _) in enumerate(samplers):
        save_npz(tmp / f"sampler_{k}.npz", arrays)
    deals = np.concatenate(run.deals) if run.deals else np.zeros(0, np.uint64)
    save_npz(tmp / "learner.npz", {"deals": deals,
                                   "torch_rng": torch.get_rng_state().numpy()})
    files = {p.name: sha256_file(p) for p in sorted(tmp.iterdir())}
    final = root / name
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    state = {**_identity(run), "folder": name, "files": files, "loop": loop,
             "learner": {"rng": run.rng.bit_generator.state, "updates": run.updates,
                         "env_steps": run.env_steps, "learner_steps": run.learner_steps,
                         "games": run.games, "next_snapshot": run._next_snapshot,
                         "pool": [sid for sid, _ in run.pool],
                         "pending_pool": [sid for sid, _ in run.pending_pool] if replay
                         else None,
                         "prof": run.prof, "rollout_s": run.rollout_s,
                         "update_s": run.update_s, "wait_s": run.wait_s},
             "sampler_states": [meta for _, meta in samplers]}
    write_json(root / "state.json", state)
    for old in root.iterdir():  # only now: the state names the new folder
        if old.name not in (name, "state.json"):
            shutil.rmtree(old, ignore_errors=True) if old.is_dir() else old.unlink()
    return final


def read_state(out: Path) -> dict[str, Any]:
    """``resume/state.json`` of ``out``, or a one-line error."""
    return read_run_state(out, "resume/state.json")


def load_checkpoint(run: PPORun, out: Path, executor: Any = None) -> dict[str, Any]:
    """Restore ``run`` (built with the same identity) from ``out``'s checkpoint and return the
    trainer's position (``loop``) and the number of history rows it had. A pipelined run's
    pending rollout is played again (in ``executor``, the sampler thread, when given)."""
    if run.remote is not None:
        raise ValueError("resume needs the samplers in this process (not ray=...)")
    state = check_resume(out, _identity(run))
    try:
        name = str(state["folder"])
        if not re.fullmatch(r"update_\d{7}", name):
            raise ValueError(f"resume/state.json names no checkpoint folder ({name!r})")
        folder = out / "resume" / name
        check_files(folder, state["files"])
        le = state["learner"]
        _restore(run, folder, le, state)
        if le["pending_pool"] is not None:
            _replay(run, folder, le, executor)
        return dict(state["loop"])
    except (KeyError, TypeError, ValueError, OSError) as e:
        raise ValueError(f"cannot resume {out}: {e}") from None


def _restore(run: PPORun, folder: Path, le: dict[str, Any], state: dict[str, Any]) -> None:
    learner = _read_weights(folder / "learner.safetensors")
    _load(run.net, {k: v for k, v in learner.items() if not k.startswith("critic.")})
    if run.critic is not None:
        _load(run.critic, {k[7:]: v for k, v in learner.items() if k.startswith("critic.")})
    load_optimizer(run.opt, folder / "optimizer.safetensors")
    run.rng.bit_generator.state = le["rng"]
    extra = load_npz(folder / "learner.npz")
    torch.set_rng_state(torch.from_numpy(extra["torch_rng"].astype(np.uint8)))
    run.deals = [extra["deals"].astype(np.uint64)]
    for key in ("updates", "env_steps", "learner_steps", "games"):
        setattr(run, key, int(le[key]))
    run._next_snapshot = int(le["next_snapshot"])
    run.prof.update({k: float(v) for k, v in le["prof"].items() if k in run.prof})
    run.rollout_s, run.update_s = float(le["rollout_s"]), float(le["update_s"])
    run.wait_s = float(le["wait_s"])
    run.pool = [(int(sid), _snapshot(run, folder, int(sid))) for sid in le["pool"]]
    metas = state["sampler_states"]
    if len(metas) != len(run.samplers):
        raise ValueError(f"{len(metas)} samplers saved, the run has {len(run.samplers)}")
    for k, s in enumerate(run.samplers):
        s.set_state(load_npz(folder / f"sampler_{k}.npz"), metas[k])


def _snapshot(run: PPORun, folder: Path, sid: int) -> Any:
    """A league snapshot as the learner keeps it (a frozen network)."""
    import copy

    net = copy.deepcopy(run.net)
    _load(net, _read_weights(folder / f"snapshot_{sid}.safetensors"))
    net.eval()
    return net


def _replay(run: PPORun, folder: Path, le: dict[str, Any], executor: Any) -> None:
    """Play the pending rollout again from the samplers' saved state."""
    w = _read_weights(folder / "behaviour.safetensors")
    net_w = {k: v for k, v in w.items() if not k.startswith("critic.")}
    critic_w = {k[7:]: v for k, v in w.items() if k.startswith("critic.")} or None
    have = dict(run.pool)
    pool = [(int(sid), have.get(int(sid)) or _snapshot(run, folder, int(sid)))
            for sid in le["pending_pool"]]
    if executor is None:
        run.pending = run.play((net_w, critic_w), pool)
    else:
        run.pending = executor.submit(run.play, (net_w, critic_w), pool).result()
