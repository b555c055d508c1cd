"""The deprecated import name ``agents``: the agents install as ``card_envs.agents``, and
``agents`` still works for one version, with a ``DeprecationWarning``.

``import agents`` runs :func:`alias`, from the small package the distribution installs under
that name (``compat/agents`` in the repository), or from ``agents/__init__.py`` itself when a
checkout's root on ``sys.path`` finds this folder by its old name. :func:`alias` makes
``sys.modules["agents"]`` the package :mod:`card_envs.agents` and puts a finder at the front of
``sys.meta_path`` that answers ``agents.<sub>`` with the module ``card_envs.agents.<sub>``
itself: both names give the same module objects (one registry, one class per agent), never a
second copy. Nothing here runs unless ``agents`` is imported; ``import card_envs`` and
``import card_envs.agents`` leave ``sys.modules`` and ``sys.meta_path`` alone."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

OLD = "agents"
NEW = "card_envs.agents"
MESSAGE = "agents is deprecated, import card_envs.agents"


class _AliasLoader(importlib.abc.Loader):
    """Loads ``agents.<sub>`` as the module ``card_envs.agents.<sub>`` (imported if need be)."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.spec: ModuleSpec | None = None

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.target)
        self.spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # the import system has just set the alias's spec on the module: give it its own back
        module.__spec__ = self.spec


class _AliasFinder(importlib.abc.MetaPathFinder):
    """``agents.<sub>`` -> ``card_envs.agents.<sub>``; any other name is not ours."""

    def find_spec(self, name: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if not name.startswith(OLD + "."):
            return None
        real = NEW + name[len(OLD):]
        if importlib.util.find_spec(real) is None:
            return None
        return ModuleSpec(name, _AliasLoader(real))


def alias(stacklevel: int = 3) -> ModuleType:
    """Warn, then make ``agents`` and ``agents.<sub>`` the modules of :mod:`card_envs.agents`.
    Called at the top level of the module being imported as ``agents``: ``stacklevel`` 3
    points the warning at the line that imported it (the import system's frames are skipped)."""
    warnings.warn(MESSAGE, DeprecationWarning, stacklevel=stacklevel)
    package = importlib.import_module(NEW)
    sys.modules[OLD] = package
    if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _AliasFinder())
    return package
