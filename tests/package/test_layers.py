"""The layers you can see in the tree, with imports going one way:

``card_envs.draw`` / ``card_envs.threads`` (utilities that import nothing of ours) ->
``card_envs.core`` -> ``card_envs.<game>`` -> ``card_envs.agents`` -> ``card_envs.arena`` ->
``card_envs.rl`` / ``card_envs.benchmark`` -> ``card_envs.cli`` (``card_envs.testing`` sits on
the core and the games, beside the agents). ``card_envs.agents`` is the folder ``agents/`` of the
repository, installed under that name (``pyproject.toml``); the deprecated top-level alias
``agents`` counts as it.

Every import statement of the package is read from the source (also those deferred into
functions, which hide a loop at import time, and those under ``if TYPE_CHECKING:``, which hide
one from the reader), so a wrong-way import or an import cycle between modules fails here. A
second test imports every game with torch (and the other training and plotting libraries) made
unimportable."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

from card_envs.core.registry import GAMES
from source_tree import ROOT, import_base, modules

GAME_PACKAGES = {g.rpartition(".")[2] for g in GAMES}

ALLOWED: dict[str, set[str]] = {
    "util": set(),  # drawing primitives, the threading policy: nothing of ours
    "core": {"util", "core"},
    "game": {"util", "core"},  # and its own folder (checked below)
    "testing": {"util", "core", "testing"},
    "agents": {"util", "core", "game", "agents"},
    "arena": {"util", "core", "game", "agents", "arena"},
    "rl": {"util", "core", "game", "agents", "arena", "rl"},
    "ui": {"util", "core", "game", "agents", "arena", "ui"},
    "benchmark": {"util", "core", "game", "agents", "arena", "benchmark"},
    "cli": {"util", "core", "game", "agents", "arena", "rl", "ui", "benchmark", "cli",
            "testing"},
}
UTIL = ("draw", "threads")


def layer(module: str) -> tuple[str, str] | None:
    """``(layer, game)`` of a module of ours, or None for a third-party one."""
    parts = module.split(".")
    if parts[0] == "agents" or parts[:2] == ["card_envs", "agents"]:
        return "agents", ""
    if parts[0] != "card_envs":
        return None
    if len(parts) == 1 or parts[1] == "core":
        return "core", ""
    if parts[1] in GAME_PACKAGES:
        return "game", parts[1]
    if parts[1] in UTIL:
        return "util", ""
    if parts[1] in ("testing", "arena", "rl", "ui", "benchmark", "cli"):
        return parts[1], ""
    # a module alias registered by the package (card_envs.slide_v0, card_envs.vector)
    return "core", ""


def _imports(path: Path, module: str, is_package: bool) -> set[str]:
    """Every module imported by ``path``: at the top, deferred into functions, and under
    ``if TYPE_CHECKING:`` (a type-only import is a dependency too)."""
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = import_base(node, module, is_package)
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)  # submodule imports
    return found


def _graph() -> dict[str, set[str]]:
    mods = modules()
    graph = {}
    for m, p in mods.items():
        graph[m] = {x for x in _imports(p, m, p.name == "__init__.py") if x in mods and x != m}
    return graph


def test_imports_go_one_way() -> None:
    wrong = []
    for m, deps in _graph().items():
        lm = layer(m)
        for d in deps:
            ld = layer(d)
            if m == "card_envs" or ld is None:
                continue
            ok = ld[0] in ALLOWED[lm[0]] or (lm[0] == "game" and ld == lm)
            if not ok:
                wrong.append(f"{m} ({lm[0]}{':' + lm[1] if lm[1] else ''}) imports {d} "
                             f"({ld[0]}{':' + ld[1] if ld[1] else ''})")
    assert not wrong, "wrong-way imports:\n" + "\n".join(sorted(wrong))


def test_no_import_cycles() -> None:
    graph = _graph()
    # a package's __init__ re-exporting its modules is not a cycle with them
    edges = {m: {d for d in deps if not m.startswith(d + ".")} for m, deps in graph.items()}
    color: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(m: str, path: list[str]) -> None:
        color[m] = 1
        for d in sorted(edges[m]):
            if color.get(d) == 1:
                cycles.append(path[path.index(d):] + [d] if d in path else [m, d])
            elif not color.get(d):
                visit(d, [*path, d])
        color[m] = 2

    for m in sorted(edges):
        if not color.get(m):
            visit(m, [m])
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_the_package_imports_only_the_core() -> None:
    """``import card_envs`` loads no game kernels, agents, arena, rl or torch."""
    code = ("import sys, json, card_envs; print(json.dumps(sorted(m for m in sys.modules "
            "if m.split('.')[0] in ('card_envs', 'agents', 'torch', 'matplotlib'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=300, cwd=ROOT)
    loaded = json.loads(out.stdout)

    def allowed(m: str) -> bool:
        where = layer(m)
        if where is None or where[0] in ("core", "util"):
            return True  # the manifests are read by the registry; nothing else of a game
        return where[0] == "game" and m.rpartition(".")[2] in ("manifest", where[1])

    bad = [m for m in loaded if not allowed(m)]
    assert not bad, f"import card_envs loaded {bad}"


_BLOCK = """
import importlib, importlib.abc, sys
BLOCKED = ("torch", "stable_baselines3", "sb3_contrib", "matplotlib", "tensorboard", "ray")
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"{name} is blocked in this test")
sys.meta_path.insert(0, Block())
import card_envs
from card_envs.core.registry import GAMES
import pkgutil
for pkg in GAMES:
    mod = importlib.import_module(pkg)
    for info in pkgutil.walk_packages(mod.__path__, pkg + "."):  # parts/ too
        importlib.import_module(info.name)
    env = card_envs.make(pkg.rpartition(".")[2])
    env.reset(seed=0)
    env.step(int(env.observe(env.agent_selection)["action_mask"].argmax()))
import card_envs.agents, card_envs.testing
assert "agents" not in sys.modules  # the deprecated alias is loaded only when imported
print("ok")
"""


def test_games_need_only_numpy_and_numba() -> None:
    """Every module of every game folder (and the agents, the kit) imports and plays with
    torch, SB3, matplotlib and Ray unimportable."""
    out = subprocess.run([sys.executable, "-c", _BLOCK], capture_output=True, text=True,
                         timeout=600, cwd=ROOT)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-3000:]
