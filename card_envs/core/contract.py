"""The game-folder contract: the same modules, with the same public names, in every game.

A game is one package (``card_envs/<game>/``, or a folder of your own registered with
:func:`card_envs.register`) holding exactly these modules:

=============  ======================================================================
module         public names
=============  ======================================================================
``manifest``   ``MANIFEST``: what every layer knows of the game (:mod:`.manifest`)
``layout``     ``MAX_PLAYERS``, ``PHASES`` and the offsets of the int32 state array
``rules``      compiled kernels ``init``, ``step``, ``legal_mask``, ``outcome``
``observe``    compiled kernel ``observe``; ``obs_bounds(game) -> (low, high)``
``statedict``  ``fields_to_dict``, ``fields_from_dict``, ``check_state``, ``resample``
``features``   ``GLOBAL_FEATURES``, ``ACTION_FEATURES``, ``dims``, ``fill``
               (:mod:`card_envs.core.features`)
``queries``    ``__all__``: the game's public rule queries, each a documented function,
               called by the rules' helpers, the heuristic, the features and the view
``view``       ``render(game, state, observer) -> str`` (text),
               ``draw(view, theme) -> str`` (an SVG of a state dict),
               ``clicks(view, actions)`` (where each move is played on that picture)
               and ``result_text(view) -> str`` (how the game is won)
``game``       the :class:`~card_envs.core.game.Game` subclass naming ``rules``,
               ``observe``, ``statedict`` and ``view``
``env``        the env class (:class:`~card_envs.core.env.CardEnv`) whose docstring is
               the game's documentation page
=============  ======================================================================

plus, when the game needs more, one sub-package ``parts/`` for its own helpers (deck, board,
scoring, effects...) and a ``data/`` folder of JSON. Nothing else: a reader who knows one game
folder knows where everything is in the others. :func:`contract_problems` lists what a folder
breaks; the test kit (:func:`card_envs.testing.check_contract`) and the test suite run it over
every registered game.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from types import ModuleType

from card_envs.core.game import Game

__all__ = ["DATA", "GAME_MODULES", "HELPERS", "REQUIRED", "contract_problems", "package_of"]

#: module -> the public names it must define
REQUIRED: dict[str, tuple[str, ...]] = {
    "manifest": ("MANIFEST",),
    "layout": ("MAX_PLAYERS", "PHASES"),
    "rules": ("init", "step", "legal_mask", "outcome"),
    "observe": ("observe", "obs_bounds"),
    "statedict": ("fields_to_dict", "fields_from_dict", "check_state", "resample"),
    "features": ("GLOBAL_FEATURES", "ACTION_FEATURES", "dims", "fill"),
    "queries": ("__all__",),
    "view": ("render", "draw", "clicks", "result_text"),
    "game": (),
    "env": (),
}
#: the modules a ``Game`` subclass names as class attributes
GAME_MODULES = ("rules", "observe", "statedict", "view")
KERNELS = {"rules": ("init", "step", "legal_mask", "outcome"), "observe": ("observe",)}
HELPERS = "parts"
DATA = "data"


def package_of(env_class_path: str) -> str:
    """``"card_envs.slide.env:SlideEnv"`` -> ``"card_envs.slide"``."""
    return env_class_path.partition(":")[0].rpartition(".")[0]


def _folder_problems(package: ModuleType) -> list[str]:
    folder = Path(package.__file__).parent
    out = []
    for p in sorted(folder.iterdir()):
        if p.name.startswith((".", "__pycache__")) or p.name == "__init__.py":
            continue
        if p.is_dir():
            if p.name == DATA:
                continue
            if p.name != HELPERS:
                out.append(f"{p.name}/: the one sub-package of a game folder is {HELPERS}/ "
                           f"(and {DATA}/ for data files)")
            elif not (p / "__init__.py").exists():
                out.append(f"{HELPERS}/ has no __init__.py")
        elif p.suffix == ".py" and p.stem not in REQUIRED:
            out.append(f"{p.name}: not a contract module (a game's own helpers go in "
                       f"{HELPERS}/)")
    for name in REQUIRED:
        if not (folder / f"{name}.py").exists():
            out.append(f"{name}.py is missing")
    return out


def contract_problems(package_name: str) -> list[str]:
    """Everything the game package ``package_name`` breaks of the contract (empty: none)."""
    package = importlib.import_module(package_name)
    out = _folder_problems(package)
    if out:
        return out
    mods = {name: importlib.import_module(f"{package_name}.{name}") for name in REQUIRED}
    for name, names in REQUIRED.items():
        for attr in names:
            if not hasattr(mods[name], attr):
                out.append(f"{name}.py does not define {attr}")
    for name, kernels in KERNELS.items():
        for k in kernels:
            if hasattr(mods[name], k) and not hasattr(getattr(mods[name], k), "py_func"):
                out.append(f"{name}.{k} is not a compiled kernel (numba njit)")
    queries = getattr(mods["queries"], "__all__", ())
    if not queries:
        out.append("queries.__all__ names no query")
    for q in queries:
        fn = getattr(mods["queries"], q, None)
        if not callable(fn):
            out.append(f"queries.{q} is not a function")
        elif not (inspect.getdoc(getattr(fn, "py_func", fn)) or "").strip():
            out.append(f"queries.{q} has no docstring")
    manifest = mods["manifest"].MANIFEST
    if package_of(manifest.env) != package_name:
        out.append(f"MANIFEST.env {manifest.env!r} is not in {package_name}.env")
        return out
    env_class = manifest.env_class()
    if env_class.__module__ != f"{package_name}.env":
        out.append(f"the env class is defined in {env_class.__module__}, not in env.py")
    game_class = getattr(env_class, "game_class", None)
    if not (isinstance(game_class, type) and issubclass(game_class, Game)):
        out.append("the env class has no game_class (a Game subclass)")
        return out
    if game_class.__module__ != f"{package_name}.game":
        out.append(f"the Game subclass is defined in {game_class.__module__}, not in game.py")
    for name in GAME_MODULES:
        if getattr(game_class, name, None) is not mods[name]:
            out.append(f"{game_class.__name__}.{name} is not the folder's {name} module")
    if not (env_class.__doc__ or "").strip():
        out.append("the env class has no docstring (the game's documentation page)")
    return out
