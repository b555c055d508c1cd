"""Output folders of training runs, shared by the trainers: refusing to overwrite a run, files
replaced atomically (a kill at any moment leaves the previous version whole), the optimizer's
state as safetensors, the identity a resume must match, and :class:`SafeStop` (Ctrl-C and
SIGTERM end a run at its next safe point instead of in the middle of a write)."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import signal
import threading
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np

__all__ = ["RUN_FILES", "SafeStop", "check_files", "load_npz", "load_optimizer",
           "prepare_out_dir", "read_run_state", "refuse_resume", "resume_command", "save_npz",
           "save_optimizer", "sha256_file", "write_json"]

RUN_FILES = ("checkpoints", "tb", "history.json", "history.csv", "learning_curve.png",
             "final.zip", "final.safetensors", "final.json", "summary.json", "resume")


def prepare_out_dir(out: Path, overwrite: bool) -> None:
    """Refuse an ``out`` that holds a run (any of :data:`RUN_FILES`) unless ``overwrite``,
    which deletes those files (and nothing else in the folder)."""
    if out.exists() and not out.is_dir():
        raise FileExistsError(f"out_dir {str(out)!r} is a file")
    found = [name for name in RUN_FILES if (out / name).exists()]
    if not found:
        return
    if not overwrite:
        raise FileExistsError(f"out_dir {str(out)!r} already holds a run ({', '.join(found)}); "
                              "choose another folder, pass overwrite=True (--overwrite) or "
                              "continue it with resume=True (--resume)")
    for name in found:
        path = out / name
        shutil.rmtree(path) if path.is_dir() else path.unlink()


def _replace(tmp: Path, path: Path) -> None:
    """Flush ``tmp`` to disk, then put it in place of ``path`` in one step."""
    with open(tmp, "rb+") as f:
        os.fsync(f.fileno())
    os.replace(tmp, path)


def write_json(path: Path, obj: Any) -> None:
    """Write ``obj`` as JSON to ``path`` atomically."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(obj, indent=1, default=str) + "\n")
    _replace(tmp, path)


def save_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Write ``arrays`` to ``path`` (.npz, no pickles) atomically."""
    tmp = path.with_name(f".{path.stem}.tmp.npz")
    np.savez(tmp, **arrays)
    _replace(tmp, path)


def load_npz(path: Path) -> dict[str, np.ndarray]:
    """The arrays of an .npz written by :func:`save_npz` (object arrays refused)."""
    with np.load(path, allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


def save_optimizer(opt: Any, path: Path) -> None:
    """A torch optimizer's state (moments, step counts, param groups) as safetensors."""
    from card_envs.agents.weights import write_weights

    sd = opt.state_dict()
    tensors = {f"{i}.{k}": v.detach().cpu().numpy() if hasattr(v, "numpy") else np.asarray(v)
               for i, st in sd["state"].items() for k, v in st.items()}
    meta = {"param_groups": json.dumps(sd["param_groups"])}
    write_weights(path, {k: np.asarray(v, np.float32) if v.dtype.kind == "f" else v
                         for k, v in tensors.items()}, meta)


def load_optimizer(opt: Any, path: Path) -> None:
    """Load what :func:`save_optimizer` wrote into ``opt`` (same parameters)."""
    import torch

    from card_envs.agents.weights import read_weights

    tensors, meta = read_weights(path)
    state: dict[int, dict[str, Any]] = {}
    for name, v in tensors.items():
        i, _, k = name.partition(".")
        state.setdefault(int(i), {})[k] = torch.from_numpy(v.copy())
    opt.load_state_dict({"state": state, "param_groups": json.loads(meta["param_groups"])})


def resume_command(command: str | None, resumable: bool = True) -> str | None:
    """The command that continues a run started with ``command`` (``--resume`` added,
    ``--overwrite`` dropped), or that starts it again (``resumable`` false: ``--resume``
    dropped); ``None`` without a command."""
    if command is None:
        return None
    words = [w for w in shlex.split(command) if w not in ("--overwrite", "--resume")]
    return shlex.join(words + (["--resume"] if resumable else []))


def read_run_state(out: Path, name: str = "state.json") -> dict[str, Any]:
    """The JSON object ``out/name`` (a run's resume state), or one line:
    ``FileNotFoundError`` when there is none, ``ValueError`` when it is not a JSON object."""
    path = out / name
    if not path.is_file():
        raise FileNotFoundError(f"nothing to resume in {str(out)!r} (no {name})")
    try:
        state = json.loads(path.read_text())
    except (ValueError, UnicodeDecodeError) as e:
        raise ValueError(f"cannot resume {out}: {name} is damaged "
                         f"({' '.join(str(e).split())})") from None
    if not isinstance(state, dict):
        raise ValueError(f"cannot resume {out}: {name} is not a run's state")
    return state


def sha256_file(path: Path) -> str:
    """The file's sha256 (hex), to name in a state file and check on resume."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def check_files(folder: Path, files: Any) -> None:
    """Every file of ``files`` (name -> sha256) is in ``folder`` and whole; else
    ``ValueError`` naming the first that is missing or damaged."""
    if not isinstance(files, dict):
        raise ValueError("the state names no files")
    for name, digest in files.items():
        path = folder / Path(str(name)).name
        if not path.is_file():
            raise ValueError(f"{path.name} is missing")
        if sha256_file(path) != digest:
            raise ValueError(f"{path.name} is damaged (its checksum differs)")


def refuse_resume(saved: dict[str, Any], want: dict[str, Any], out: Path,
                  keys: tuple[str, ...] = ("format", "format_version", "env_id",
                                           "game_version", "num_players", "options", "seed")
                  ) -> None:
    """Raise ``ValueError`` with one line saying what differs between a saved run's identity
    and the one asked for (``keys`` first, then ``settings``, a dict)."""
    for key in keys:
        if saved.get(key) != want[key]:
            raise ValueError(f"cannot resume {out}: its {key} is {saved.get(key)!r}, this run "
                             f"asks for {want[key]!r}")
    s, w = saved.get("settings") or {}, want.get("settings") or {}
    diff = sorted(k for k in set(w) | set(s) if s.get(k) != w.get(k))
    if diff:
        k = diff[0]
        raise ValueError(f"cannot resume {out}: setting {k} was {s.get(k)!r}, now "
                         f"{w.get(k)!r} (settings must match; {len(diff)} differ)")


class SafeStop:
    """While active (``with SafeStop() as stop:``), SIGINT (Ctrl-C) and SIGTERM set
    ``stop.requested`` (the signal's name) instead of interrupting: the trainer looks at it at
    its safe points, saves and returns. A second Ctrl-C raises ``KeyboardInterrupt`` at once
    (the user insists). The previous handlers come back on exit. Outside the main thread (where
    Python cannot install handlers) it does nothing."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.requested: str | None = None
        self._old: dict[int, Any] = {}

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.requested is not None and signum == signal.SIGINT:
            raise KeyboardInterrupt
        self.requested = signal.Signals(signum).name

    def __enter__(self) -> SafeStop:
        if threading.current_thread() is threading.main_thread():
            for sig in self.SIGNALS:
                self._old[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)
        self._old.clear()
