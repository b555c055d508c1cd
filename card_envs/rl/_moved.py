"""The earlier module names of :mod:`card_envs.rl`, from when the trainers' modules stood side by
side in one folder: ``card_envs.rl.ppo_run`` is :mod:`card_envs.rl.ppo.run`,
``card_envs.rl.trainer`` is :mod:`card_envs.rl.sb3.train`, and so on (:data:`MOVED`).

:func:`install` (run by ``card_envs.rl``) puts a finder at the front of ``sys.meta_path`` that
answers ``card_envs.rl.<old>`` with the module ``card_envs.rl.<new>`` itself: both names give
the same module object, so the same classes (a model pickled under an old name loads), never a
second copy. The old names import quietly; the new ones are the documented paths.
"""

from __future__ import annotations

import importlib
import importlib.abc
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

__all__ = ["MOVED", "install"]

PACKAGE = "card_envs.rl"

#: old module of ``card_envs.rl`` -> its module now (both relative to ``card_envs.rl``)
MOVED: dict[str, str] = {
    "ppo_run": "ppo.run",
    "ppo_sampler": "ppo.sampler",
    "ppo_ray": "ppo.ray",
    "trainer": "sb3.train",
    "policy": "sb3.policy",
    "buffers": "sb3.buffers",
    "selfplay": "sb3.selfplay",
    "shaping": "sb3.shaping",
    "expert": "az.train",  # expert iteration, superseded by Gumbel AlphaZero self-play
}


class _MovedFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds and loads ``card_envs.rl.<old>`` as the module ``card_envs.rl.<MOVED[old]>``."""

    def find_spec(self, name: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        package, _, old = name.rpartition(".")
        if package != PACKAGE or old not in MOVED:
            return None
        return ModuleSpec(name, self, loader_state=f"{PACKAGE}.{MOVED[old]}")

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        module = importlib.import_module(spec.loader_state)
        spec.loader_state = module.__spec__  # the module's own spec, given back by exec_module
        return module

    def exec_module(self, module: ModuleType) -> None:
        # the import system has just set the old name's spec on the module: give it its own back
        module.__spec__ = module.__spec__.loader_state


def install() -> None:
    """Put the finder of the old names at the front of ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _MovedFinder())
