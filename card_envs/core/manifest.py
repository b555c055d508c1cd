"""A game's manifest: everything about a game that the layers above it need, declared once.

Each game folder has ``manifest.py`` with ``MANIFEST = GameManifest(...)``; the registry
(:mod:`card_envs.core.registry`), the agents, the trainer, the benchmarks and the test kit read
it instead of keeping tables of their own. Adding a game is its folder plus one line in
:data:`card_envs.core.registry.GAMES` (or ``card_envs.register(manifest)`` at run time, for a
game that lives outside the package).

References to other layers are *import paths*
(``"card_envs.agents.slide:SlideHeuristicAgent"``), loaded only by the layer that uses them, so
a game folder never imports agents, rl or arena code.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any


def load(path: str) -> Any:
    """``"package.module:attribute"`` -> the attribute (imported on first use)."""
    module, _, name = path.partition(":")
    if not name:
        raise ValueError(f"an import path is 'module:attribute', got {path!r}")
    return getattr(importlib.import_module(module), name)


def lazy_submodules(package: str) -> Any:
    """A module ``__getattr__`` for a game package: ``card_envs.slide.env`` (and
    ``help(card_envs.slide.env)``) works without importing ``card_envs.slide.env`` first."""
    def __getattr__(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return importlib.import_module(f"{package}.{name}")
        except ModuleNotFoundError as e:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from e
    return __getattr__


@dataclass(frozen=True)
class Playthrough:
    """One golden playthrough (``tests/playthroughs/<env_id>-<name>.txt``): options, seed and
    how moves are chosen (``agent``: ``""`` for uniform random, or an agent spec; ``noise``:
    the share of random moves mixed into it; ``parallel``: through the parallel env)."""

    name: str
    options: dict[str, Any] = field(default_factory=dict)
    seed: int = 1
    agent: str = ""
    noise: float = 0.0
    parallel: bool = False
    note: str = ""


@dataclass(frozen=True)
class TrainSpec:
    """Defaults of :func:`card_envs.rl.train` for this game.

    ``options``: game options used for training and its evaluations (``max_turned=200`` keeps
    Op Glad IJs games short); ``settings``: trainer settings (``shaping``, network sizes...);
    ``potential``: ``"module:function"`` of the shaping potential. (The game's features, if
    any, are its ``features.py``: :mod:`card_envs.core.features`.)"""

    options: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    potential: str | None = None


@dataclass(frozen=True)
class BenchSpec:
    """Benchmark targets: ``batch_ratio`` (the batched engine's steps/s at B=4096 over the
    anchor's, PettingZoo ``connect_four_v3``'s AEC loop, in the same run: what ``make bench``
    requires; a ratio, since absolute rates move by up to 2x between machines and runs),
    ``ladder_budget`` (the search spec the ladder plays against the heuristic) and
    ``ladder_target`` (``"win"``: win rate >= 0.60; ``"not worse"``: CI reaches 0.5)."""

    batch_ratio: float = 370.0
    ladder_budget: str = "mcts:iterations=12000"
    ladder_target: str = "win"


@dataclass(frozen=True)
class GameManifest:
    """Everything the layers need to know about one game (module docstring).

    ``name`` is the short name (``"slide"``, accepted wherever an env id is); ``env`` the
    ``"module:Class"`` of the AEC env; ``heuristic`` / ``search`` the agents (``search`` only if
    it customizes the generic MCTS); ``search_options`` the game options search tests use;
    ``test_cases`` option sets the shared test kit runs (the first is the default game);
    ``playthroughs`` the golden playthroughs; ``az`` defaults of the ``az`` agent measured
    for this game (``prior_temp`` for PPO networks, ``mix``: the share of a rollout in a
    leaf's value) and, under ``"train"``, of its self-play training
    (:data:`card_envs.rl.az.AZ_DEFAULTS` keys)."""

    env_id: str
    name: str
    env: str
    heuristic: str | None = None
    search: str | None = None
    search_options: dict[str, Any] = field(default_factory=dict)
    test_cases: tuple[dict[str, Any], ...] = ({},)
    playthroughs: tuple[Playthrough, ...] = ()
    train: TrainSpec = field(default_factory=TrainSpec)
    bench: BenchSpec = field(default_factory=BenchSpec)
    az: dict[str, Any] = field(default_factory=dict)

    def env_class(self) -> type:
        """The AEC env class (imports the game)."""
        return load(self.env)
