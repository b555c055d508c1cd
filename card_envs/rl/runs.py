"""Output folders of training runs (shared by both trainers)."""

from __future__ import annotations

import shutil
from pathlib import Path

__all__ = ["RUN_FILES", "prepare_out_dir"]

RUN_FILES = ("checkpoints", "tb", "history.json", "history.csv", "learning_curve.png",
             "final.zip", "final.safetensors", "final.json", "summary.json")


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
                              "choose another folder or pass overwrite=True (--overwrite)")
    for name in found:
        path = out / name
        shutil.rmtree(path) if path.is_dir() else path.unlink()
