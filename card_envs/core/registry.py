"""The games: one line per built-in game in :data:`GAMES`, each read from its folder's manifest.

Every layer asks the registry (never a table of its own): ``manifest(env_id)`` for what a game
declares (:class:`~card_envs.core.manifest.GameManifest`), ``env_class`` / ``make`` /
``make_raw`` for its environments. ``register(manifest)`` adds a game defined outside the
package (a user's variant, the test suite's toy game) to the same registry.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from types import ModuleType
from typing import Any

from card_envs.core.errors import OptionError
from card_envs.core.manifest import GameManifest, load

#: The built-in games: the package of each, whose ``manifest.py`` declares ``MANIFEST``.
GAMES: tuple[str, ...] = (
    "card_envs.slide",
    "card_envs.isflak",
    "card_envs.op_glad_ijs",
    "card_envs.flipology",
    "card_envs.if_it_fits",
)

_MANIFESTS: dict[str, GameManifest] = {}
for _pkg in GAMES:
    _m = importlib.import_module(f"{_pkg}.manifest").MANIFEST
    _MANIFESTS[_m.env_id] = _m
del _pkg, _m

#: The env ids of the built-in games (``env_ids()`` includes games registered at run time).
ENV_IDS: tuple[str, ...] = tuple(_MANIFESTS)


_LISTENERS: list[Callable[[GameManifest], None]] = []


def register(manifest: GameManifest | str) -> None:
    """Add a game defined outside the package: its manifest, or the name of its package (a
    game folder keeping the contract, :mod:`card_envs.core.contract`; its ``manifest.py`` is
    read). Its env id must be new. In a fresh process (the CLI, the play server, the
    benchmarks, worker processes), ``CARD_ENVS_GAMES=pkg1,pkg2`` registers those packages
    when card_envs is imported."""
    if isinstance(manifest, str):
        try:
            manifest = importlib.import_module(f"{manifest}.manifest").MANIFEST
        except (ImportError, AttributeError) as e:
            raise OptionError(f"cannot register game package {manifest!r}: {e}") from e
    if not isinstance(manifest, GameManifest):
        raise TypeError(f"register() takes a GameManifest or a package name, got "
                        f"{type(manifest).__name__}")
    if manifest.env_id in _MANIFESTS and _MANIFESTS[manifest.env_id] != manifest:
        raise ValueError(f"env id {manifest.env_id!r} is already registered (differently)")
    _MANIFESTS[manifest.env_id] = manifest
    for listener in _LISTENERS:
        listener(manifest)


def register_from_environment() -> None:
    """Register the game packages named in ``CARD_ENVS_GAMES`` (comma-separated); the package
    does this once when imported."""
    for name in os.environ.get("CARD_ENVS_GAMES", "").split(","):
        if name.strip():
            register(name.strip())


def on_register(listener: Callable[[GameManifest], None]) -> None:
    """Call ``listener(manifest)`` for every registered game, now and whenever one is added
    (the package uses it to give each game its Gymnasium id)."""
    _LISTENERS.append(listener)
    for m in _MANIFESTS.values():
        listener(m)


def unregister(env_id: str) -> None:
    """Remove a game added with :func:`register` (built-in games stay)."""
    if env_id in ENV_IDS:
        raise ValueError(f"{env_id!r} is a built-in game")
    _MANIFESTS.pop(env_id, None)


def is_registered(env_id: str) -> bool:
    """Whether ``env_id`` is a registered env id (built-in or added by :func:`register`)."""
    return env_id in _MANIFESTS


def env_ids() -> tuple[str, ...]:
    """Every registered env id, built-in first."""
    return tuple(_MANIFESTS)


def manifests() -> tuple[GameManifest, ...]:
    """Every registered game's manifest, built-in first."""
    return tuple(_MANIFESTS.values())


def resolve_env_id(game: str) -> str:
    """``"slide"``, ``"slide_v0"`` or ``"Slide"`` -> ``"slide_v0"`` (the newest version when
    only the name is given); :class:`OptionError` listing the games otherwise."""
    if not isinstance(game, str):
        raise OptionError(f"a game is named by a string, got {type(game).__name__}")
    key = game.strip().lower()
    if key in _MANIFESTS:
        return key
    matches = sorted((m.env_id for m in _MANIFESTS.values() if m.name == key),
                     key=lambda e: int(e.rsplit("_v", 1)[1]) if "_v" in e else 0)
    if not matches:
        names = sorted({m.name for m in _MANIFESTS.values()})
        raise OptionError(f"unknown game {game!r}; games: {names} (env ids {list(env_ids())})")
    return matches[-1]


def manifest(game: str) -> GameManifest:
    """The manifest of ``game`` (an env id or a short name)."""
    return _MANIFESTS[resolve_env_id(game)]


def env_class(game: str) -> type:
    """The ``CardEnv`` subclass of ``game`` (an env id or a short name)."""
    return manifest(game).env_class()


def make(game: str, **options: Any) -> Any:
    """The wrapped env: PettingZoo classic semantics (an illegal action loses the game)."""
    return env_class(game)(illegal_action="lose", **options)


def make_raw(game: str, **options: Any) -> Any:
    """The raw env: an illegal action raises ``IllegalActionError`` and changes nothing."""
    return env_class(game)(illegal_action="raise", **options)


def loader(path: str | None) -> Any:
    """A manifest's ``"module:attribute"`` reference, loaded (``None`` stays ``None``)."""
    return None if path is None else load(path)


class _EnvModule(ModuleType):
    """``card_envs.slide_v0``: ``env()``, ``raw_env()`` and the env's documentation as its
    docstring (``help(card_envs.slide_v0)``), importing the game only when first used."""

    def __init__(self, env_id: str) -> None:
        super().__init__(f"card_envs.{env_id}")
        self._env_id = env_id

        def env(**options: Any) -> Any:
            return make(env_id, **options)

        def raw_env(**options: Any) -> Any:
            return make_raw(env_id, **options)

        env.__doc__ = make.__doc__
        raw_env.__doc__ = make_raw.__doc__
        self.env, self.raw_env = env, raw_env

    @property  # type: ignore[override]
    def __doc__(self) -> str | None:  # a data descriptor: wins over the instance dict
        return env_class(self.__dict__["_env_id"]).__doc__

    @__doc__.setter
    def __doc__(self, value: str | None) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        # everything else comes from the env class, e.g. ``op_glad_ijs_v0.parallel_env``
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(env_class(self.__dict__["_env_id"]), name)


def env_module(env_id: str) -> ModuleType:
    """A PettingZoo-style module for ``env_id`` with ``env()`` and ``raw_env()`` whose
    docstring is the env's documentation (the game is imported on first use)."""
    return _EnvModule(env_id)
